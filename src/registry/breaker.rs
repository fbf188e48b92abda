//! A circuit breaker per agent: after `threshold` consecutive failed calls the agent is
//! not selected for `cooldown`; then one call is let through as a probe, whose outcome
//! closes the circuit again or reopens it.
//!
//! Pure state: every method takes the current instant, so it is tested without clocks.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls flow; `failures` consecutive ones failed so far.
    Closed { failures: u32 },
    /// No calls until `until`.
    Open { until: Instant, failures: u32 },
    /// One probe call is allowed (`probing` once it is under way).
    HalfOpen { probing: bool },
}

#[derive(Debug, Clone)]
pub struct Breaker {
    pub state: BreakerState,
    threshold: u32,
    cooldown: Duration,
}

impl Breaker {
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        Self {
            state: BreakerState::Closed { failures: 0 },
            threshold: threshold.max(1),
            cooldown,
        }
    }

    /// Whether a call could be admitted now (without admitting it).
    pub fn available(&self, now: Instant) -> bool {
        match self.state {
            BreakerState::Closed { .. } => true,
            BreakerState::Open { until, .. } => now >= until,
            BreakerState::HalfOpen { probing } => !probing,
        }
    }

    /// Admits a call if possible; returns whether it is the half-open probe.
    pub fn admit(&mut self, now: Instant) -> Option<bool> {
        if let BreakerState::Open { until, .. } = self.state
            && now >= until
        {
            self.state = BreakerState::HalfOpen { probing: false };
        }
        match self.state {
            BreakerState::Closed { .. } => Some(false),
            BreakerState::HalfOpen { probing: false } => {
                self.state = BreakerState::HalfOpen { probing: true };
                Some(true)
            }
            _ => None,
        }
    }

    pub fn success(&mut self) {
        self.state = BreakerState::Closed { failures: 0 };
    }

    pub fn failure(&mut self, now: Instant) {
        self.state = match self.state {
            BreakerState::Closed { failures } if failures + 1 < self.threshold => {
                BreakerState::Closed {
                    failures: failures + 1,
                }
            }
            BreakerState::Closed { failures } => BreakerState::Open {
                until: now + self.cooldown,
                failures: failures + 1,
            },
            BreakerState::HalfOpen { .. } => BreakerState::Open {
                until: now + self.cooldown,
                failures: self.threshold,
            },
            open @ BreakerState::Open { .. } => open,
        };
    }

    /// A probe ended without an outcome (the call was abandoned): let another one try.
    pub fn probe_abandoned(&mut self) {
        if self.state == (BreakerState::HalfOpen { probing: true }) {
            self.state = BreakerState::HalfOpen { probing: false };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_then_probes() {
        let t0 = Instant::now();
        let mut b = Breaker::new(3, Duration::from_secs(10));
        for _ in 0..2 {
            assert_eq!(b.admit(t0), Some(false));
            b.failure(t0);
        }
        assert!(b.available(t0), "two failures: still closed");
        b.failure(t0);
        assert!(!b.available(t0), "third failure opens the circuit");
        assert_eq!(b.admit(t0 + Duration::from_secs(5)), None);
        let later = t0 + Duration::from_secs(10);
        assert!(b.available(later));
        assert_eq!(
            b.admit(later),
            Some(true),
            "the first call after the cooldown is the probe"
        );
        assert_eq!(b.admit(later), None, "only one probe at a time");
        b.failure(later);
        assert!(
            !b.available(later + Duration::from_secs(1)),
            "a failed probe reopens"
        );
        let again = later + Duration::from_secs(10);
        assert_eq!(b.admit(again), Some(true));
        b.success();
        assert_eq!(b.state, BreakerState::Closed { failures: 0 });
    }

    #[test]
    fn an_abandoned_probe_lets_another_try() {
        let t0 = Instant::now();
        let mut b = Breaker::new(1, Duration::ZERO);
        b.failure(t0);
        assert_eq!(b.admit(t0), Some(true));
        b.probe_abandoned();
        assert_eq!(b.admit(t0), Some(true));
    }
}

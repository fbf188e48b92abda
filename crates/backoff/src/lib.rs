//! One retry schedule for every loop that waits before trying again: webhook delivery,
//! the connector's stream resumes and task polling, the registry's card refreshes and
//! the engine's step retries. Each used to grow its own wait and jitter; they now share
//! this.
//!
//! A leaf module: it imports nothing of this crate, so every layer — the protocol layer
//! included, which must stay usable alone — may use it.

use std::time::Duration;

/// How work waits for a store that failed for a reason that may pass (the database
/// down, restarting, full or locked) before it writes again: a run stalls on it and
/// never ends for it.
pub const STORE: Backoff = Backoff::exponential(Duration::from_millis(100), Duration::from_secs(5))
    .with_jitter(Jitter::Around(0.2));

/// How waits are spread at random, so that many loops started together do not retry
/// in step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    /// Exactly the schedule.
    None,
    /// Up to this fraction longer, never shorter: for waits a user configured.
    Up(f64),
    /// This fraction shorter or longer.
    Around(f64),
}

/// A schedule of waits: `initial`, then each one `factor` times the one before, never
/// more than `max`, each spread by `jitter`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The wait before the first retry.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    /// Each wait is the one before times this (1: a fixed wait).
    pub factor: u32,
    pub jitter: Jitter,
}

impl Backoff {
    /// Doubling waits from `initial` up to `max`, without jitter.
    pub const fn exponential(initial: Duration, max: Duration) -> Backoff {
        Backoff {
            initial,
            max,
            factor: 2,
            jitter: Jitter::None,
        }
    }

    /// The same wait every time, without jitter.
    pub const fn fixed(wait: Duration) -> Backoff {
        Backoff {
            initial: wait,
            max: wait,
            factor: 1,
            jitter: Jitter::None,
        }
    }

    /// The same schedule, spread by `jitter`.
    pub const fn with_jitter(self, jitter: Jitter) -> Backoff {
        Backoff { jitter, ..self }
    }

    /// The wait before retry `retry` (1 for the first retry), without jitter.
    pub fn base(&self, retry: u32) -> Duration {
        let growth = self.factor.saturating_pow(retry.saturating_sub(1).min(63));
        self.initial.saturating_mul(growth).min(self.max)
    }

    /// The wait before retry `retry` (1 for the first retry), with jitter.
    pub fn delay(&self, retry: u32) -> Duration {
        jitter(self.base(retry), self.jitter)
    }

    /// The jittered waits one after the other, for loops that keep no count of their
    /// own.
    pub fn waits(self) -> impl Iterator<Item = Duration> {
        (1..).map(move |retry| self.delay(retry))
    }
}

/// `wait` spread at random as `how` says.
pub fn jitter(wait: Duration, how: Jitter) -> Duration {
    let (low, width) = match how {
        Jitter::None => return wait,
        Jitter::Up(f) => (1.0, f),
        Jitter::Around(f) => (1.0 - f, 2.0 * f),
    };
    wait.mul_f64(low + width * unit_random())
}

/// A random number in [0, 1). From the operating system's generator: a retry is rare
/// enough for a system call, and no generator state is kept anywhere.
fn unit_random() -> f64 {
    // With no random source at all the schedule is simply not spread.
    let bits = getrandom::u64().unwrap_or(0);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn exponential_doubles_up_to_the_cap() {
        let b = Backoff::exponential(100 * MS, 1000 * MS);
        let waits: Vec<u128> = (1..=6).map(|r| b.base(r).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(b.base(u32::MAX), 1000 * MS, "no overflow far out");
    }

    #[test]
    fn fixed_never_grows() {
        let b = Backoff::fixed(250 * MS);
        assert!((1..=10).all(|r| b.delay(r) == 250 * MS));
    }

    #[test]
    fn jitter_stays_in_its_band_and_varies() {
        let up = Backoff::fixed(1000 * MS).with_jitter(Jitter::Up(0.2));
        let around = Backoff::fixed(1000 * MS).with_jitter(Jitter::Around(0.1));
        let ups: Vec<Duration> = up.waits().take(200).collect();
        let arounds: Vec<Duration> = around.waits().take(200).collect();
        assert!(ups.iter().all(|w| (1000 * MS..1200 * MS).contains(w)));
        assert!(arounds.iter().all(|w| (900 * MS..1100 * MS).contains(w)));
        // 200 draws that are all equal would mean no randomness at all.
        assert!(ups.iter().any(|w| *w != ups[0]));
        assert!(arounds.iter().any(|w| *w < 1000 * MS) && arounds.iter().any(|w| *w > 1000 * MS));
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

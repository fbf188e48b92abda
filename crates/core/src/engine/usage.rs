//! What a run's agents used — tokens, calls, cost — counted as it arrives, and the
//! workflow's budget checked against it. The connector reports each downstream task's
//! usage so far ([`Update::Usage`](super::Update::Usage)); the unit counts what is new
//! and each call it makes; the run's [`Spend`] adds it up for every unit and says,
//! once, when the budget is passed, and the run then fails and cancels what runs.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::workflow::Budget;

/// Tokens in and out, calls, and what they cost (in the currency of the agents'
/// prices), of an attempt, a step or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    /// Messages sent to agents: each attempt, each answer sent back.
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub cost: f64,
}

impl Usage {
    /// One call, and nothing else.
    pub const CALL: Usage = Usage {
        input_tokens: 0,
        output_tokens: 0,
        calls: 1,
        cost: 0.0,
    };

    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds `other` (saturating; a cost that is not a finite number adds nothing).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.calls = self.calls.saturating_add(other.calls);
        if other.cost.is_finite() {
            self.cost += other.cost;
        }
    }

    /// What `now` (a total so far) adds to `self` (the total reported before): never
    /// less than nothing, so a report that goes down counts for nothing.
    pub fn since(&self, now: &Usage) -> Usage {
        Usage {
            input_tokens: now.input_tokens.saturating_sub(self.input_tokens),
            output_tokens: now.output_tokens.saturating_sub(self.output_tokens),
            calls: now.calls.saturating_sub(self.calls),
            cost: (now.cost - self.cost).max(0.0),
        }
    }
}

/// A run's spending so far, and its budget. Shared by its units.
#[derive(Debug, Default)]
pub struct Spend {
    /// Raised when an approval extends it (`on_budget = "ask"`).
    budget: Mutex<Option<Budget>>,
    spent: Mutex<Usage>,
    /// Per step (and fan-out item): what it used, for its record.
    units: Mutex<HashMap<(String, Option<usize>), Usage>>,
    /// Why the budget was passed, until it is extended past what was spent.
    over: Mutex<Option<String>>,
    /// Told when the budget is passed: the run waits on it.
    passed: Notify,
    /// The currency costs are counted in, if the prices name one.
    pub(super) currency: Option<std::sync::Arc<str>>,
}

impl Spend {
    pub fn new(budget: Option<Budget>) -> Spend {
        Spend {
            budget: Mutex::new(budget),
            ..Spend::default()
        }
    }

    /// Adds what `step` (its fan-out `item`) used; passing the budget (first time)
    /// records why.
    pub fn add(&self, step: &str, item: Option<usize>, usage: &Usage) {
        (self.units.lock().unwrap_or_else(|p| p.into_inner()))
            .entry((step.to_owned(), item))
            .or_default()
            .add(usage);
        {
            let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
            spent.add(usage);
        }
        self.check(step);
    }

    /// Whether what was spent is past the budget; if it is (and was not), records why,
    /// naming `step`, and tells the run.
    fn check(&self, step: &str) -> bool {
        let Some(b) = *self.budget.lock().unwrap_or_else(|p| p.into_inner()) else {
            return false;
        };
        let total = self.spent();
        let why = if let Some(max) = b.cost.filter(|max| total.cost > *max) {
            Some(match &self.currency {
                Some(c) => format!("cost {:.4} {c} > {max}", total.cost),
                None => format!("cost {:.4} > {max}", total.cost),
            })
        } else if let Some(max) = b.tokens.filter(|max| total.tokens() > *max) {
            Some(format!("tokens {} > {max}", total.tokens()))
        } else {
            b.calls
                .filter(|max| total.calls > *max)
                .map(|max| format!("calls {} > {max}", total.calls))
        };
        let Some(why) = why else { return false };
        let mut over = self.over.lock().unwrap_or_else(|p| p.into_inner());
        if over.is_none() {
            *over = Some(format!("budget exceeded: {why} at step `{step}`"));
            self.passed.notify_one();
        }
        true
    }

    /// Adds `by` to each bound the budget has (an approval extending it). Whether the
    /// run is still past it, what it spent counted against the new one (at `step`, the
    /// step it was passed at).
    pub fn extend(&self, by: &Budget) -> bool {
        {
            let mut budget = self.budget.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(b) = budget.as_mut() {
                b.cost = b.cost.map(|c| c + by.cost.unwrap_or(0.0));
                b.tokens = b.tokens.map(|t| t.saturating_add(by.tokens.unwrap_or(0)));
                b.calls = b.calls.map(|c| c.saturating_add(by.calls.unwrap_or(0)));
            }
        }
        let was = self.over.lock().unwrap_or_else(|p| p.into_inner()).take();
        let at = was
            .as_deref()
            .and_then(|w| w.rsplit_once("at step `"))
            .map_or("", |(_, s)| s.trim_end_matches('`'))
            .to_owned();
        self.check(&at)
    }

    /// The budget, as it stands (extended, if it was).
    pub fn budget(&self) -> Option<Budget> {
        *self.budget.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What `step` (its `item`) used so far.
    pub fn of_unit(&self, step: &str, item: Option<usize>) -> Usage {
        let units = self.units.lock().unwrap_or_else(|p| p.into_inner());
        units
            .get(&(step.to_owned(), item))
            .copied()
            .unwrap_or_default()
    }

    /// What is left of the budget (none without one; nothing below zero).
    pub fn remaining(&self) -> Option<Budget> {
        let b = self.budget()?;
        let spent = self.spent();
        Some(Budget {
            cost: b.cost.map(|max| (max - spent.cost).max(0.0)),
            tokens: b.tokens.map(|max| max.saturating_sub(spent.tokens())),
            calls: b.calls.map(|max| max.saturating_sub(spent.calls)),
        })
    }

    /// What the run used so far.
    pub fn spent(&self) -> Usage {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the budget was passed, while it is.
    pub fn over(&self) -> Option<String> {
        self.over.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Resolves once the budget is passed (at once while it is).
    pub async fn passed(&self) {
        loop {
            let told = self.passed.notified();
            if self.is_over() {
                return;
            }
            told.await;
        }
    }

    /// Whether it is passed.
    pub fn is_over(&self) -> bool {
        self.over
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bound_passed_is_named_once_with_its_step() {
        let spend = Spend::new(Some(Budget {
            cost: Some(1.0),
            tokens: Some(100),
            calls: None,
        }));
        let used = |i, o, cost| Usage {
            input_tokens: i,
            output_tokens: o,
            calls: 1,
            cost,
        };
        spend.add("a", None, &used(40, 40, 0.5));
        assert!(!spend.is_over());
        spend.add("b", None, &used(10, 20, 0.1));
        assert_eq!(
            spend.over().as_deref(),
            Some("budget exceeded: tokens 110 > 100 at step `b`")
        );
        spend.add("c", None, &used(0, 0, 5.0));
        assert!(
            spend.over().unwrap().contains("at step `b`"),
            "the first stays"
        );
        assert_eq!(spend.spent().calls, 3);
    }

    #[test]
    fn a_report_counts_only_what_is_new_and_never_less_than_nothing() {
        let before = Usage {
            input_tokens: 10,
            output_tokens: 5,
            calls: 0,
            cost: 0.2,
        };
        let now = Usage {
            input_tokens: 30,
            output_tokens: 1,
            calls: 0,
            cost: 0.1,
        };
        assert_eq!(
            before.since(&now),
            Usage {
                input_tokens: 20,
                ..Usage::default()
            }
        );
        let mut total = Usage::default();
        total.add(&Usage {
            cost: f64::NAN,
            input_tokens: u64::MAX,
            ..Usage::default()
        });
        total.add(&Usage {
            input_tokens: 1,
            ..Usage::default()
        });
        assert_eq!((total.cost, total.input_tokens), (0.0, u64::MAX));
    }
}

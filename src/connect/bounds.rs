//! What a run has left — of its budget, and of time — sent down with each message to an
//! agent, in the message's metadata under our extension; and read from a message that
//! starts a run here, whose workflow's budget and deadline it can lower, never raise.
//! So a cancel or an overspend at the top of a chain of orchestrators reaches its
//! bottom: each level holds its own run within what the level above has left.

use std::time::Duration;

use serde_json::{Map, Value, json};

use orchestrator_core::engine::Bounds;
use orchestrator_core::workflow::{Budget, Workflow};

/// The extension's URI, declared on the orchestrator's card.
pub const EXTENSION: &str = "https://github.com/a2a-orchestrator/a2a-orchestrator/blob/main/docs/budgets.md#what-a-caller-sends-down";
/// `{ "cost": …, "tokens": …, "calls": … }`: what the caller's run has left of its
/// budget (each bound optional).
pub const BUDGET: &str = "a2a_orchestrator.budget";
/// Milliseconds the caller's run has left for this message.
pub const TIMEOUT_MS: &str = "a2a_orchestrator.timeout_ms";

/// Writes `bounds` into a message's metadata.
pub fn write(bounds: &Bounds, meta: &mut Map<String, Value>) {
    if let Some(b) = &bounds.budget {
        let mut o = Map::new();
        if let Some(c) = b.cost {
            o.insert("cost".into(), json!(c));
        }
        if let Some(t) = b.tokens {
            o.insert("tokens".into(), json!(t));
        }
        if let Some(c) = b.calls {
            o.insert("calls".into(), json!(c));
        }
        meta.insert(BUDGET.into(), Value::Object(o));
    }
    if let Some(w) = bounds.within {
        let ms = u64::try_from(w.as_millis()).unwrap_or(u64::MAX);
        meta.insert(TIMEOUT_MS.into(), json!(ms));
    }
}

/// The bounds a message's metadata gives, read defensively: numbers from 0 up only
/// (anything else is not a bound).
pub fn read(meta: &Map<String, Value>) -> Bounds {
    let whole = |v: Option<&Value>| v.and_then(Value::as_u64);
    let budget = meta.get(BUDGET).and_then(Value::as_object).map(|b| Budget {
        cost: b
            .get("cost")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0),
        tokens: whole(b.get("tokens")),
        calls: whole(b.get("calls")),
    });
    Bounds {
        budget,
        within: whole(meta.get(TIMEOUT_MS)).map(Duration::from_millis),
    }
}

/// `workflow` held within `bounds`: each bound the lower of the workflow's and the
/// caller's; the same workflow when the caller gives none lower.
pub fn within(workflow: &std::sync::Arc<Workflow>, bounds: &Bounds) -> std::sync::Arc<Workflow> {
    let lower_f = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let lower = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let own = workflow.budget.unwrap_or_default();
    let budget = bounds.budget.map(|given| Budget {
        cost: lower_f(own.cost, given.cost),
        tokens: lower(own.tokens, given.tokens),
        calls: lower(own.calls, given.calls),
    });
    let deadline = match (workflow.deadline, bounds.within) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let budget = budget.or(workflow.budget);
    if budget == workflow.budget && deadline == workflow.deadline {
        return workflow.clone();
    }
    let mut held = (**workflow).clone();
    held.budget = budget;
    held.deadline = deadline;
    std::sync::Arc::new(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_read_back_and_only_lower_a_workflows_own() {
        let sent = Bounds {
            budget: Some(Budget {
                cost: Some(0.5),
                tokens: None,
                calls: Some(3),
            }),
            within: Some(Duration::from_millis(1500)),
        };
        let mut meta = Map::new();
        write(&sent, &mut meta);
        assert_eq!(read(&meta), sent);
        let hostile =
            serde_json::json!({BUDGET: {"cost": -1, "tokens": "9", "calls": 1.5}, TIMEOUT_MS: -3});
        let got = read(hostile.as_object().unwrap());
        assert_eq!(got.budget, Some(Budget::default()));
        assert_eq!(got.within, None);

        let (w, _) = orchestrator_core::workflow::load_str(
            "w.toml",
            "[workflow]\nid = \"w\"\nname = \"W\"\ndescription = \"d\"\ndeadline = \"1s\"\nbudget = { cost = 2.0, tokens = 10 }\n[steps.a]\nagent = \"x\"\nmessage = \"m\"\n",
            Default::default(),
        );
        let w = std::sync::Arc::new(w.unwrap());
        let held = within(&w, &sent);
        let b = held.budget.unwrap();
        assert_eq!((b.cost, b.tokens, b.calls), (Some(0.5), Some(10), Some(3)));
        assert_eq!(held.deadline, Some(Duration::from_secs(1)), "never raised");
        let same = within(&w, &Bounds::default());
        assert!(std::sync::Arc::ptr_eq(&same, &w));
    }
}

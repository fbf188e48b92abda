//! Usage as agents report it, and as the orchestrator reports its own: a task's tokens
//! so far under the OpenTelemetry GenAI semantic convention's names, and its cost under
//! ours, in the metadata of its status updates (or of the task). Each report is the
//! task's total so far; the last one counts. Read defensively: numbers only, bounded;
//! anything else is ignored (with a warning), never failing the step.

use serde_json::{Map, Value};

use crate::registry::config::Price;
use orchestrator_core::engine::Usage;

/// Tokens the task's model read (OpenTelemetry GenAI).
pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Tokens it wrote (OpenTelemetry GenAI).
pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// What the task cost, in the currency its caller counts in (ours: the convention has
/// no cost).
pub const COST: &str = "a2a_orchestrator.usage.cost";

/// The model the task used (OpenTelemetry GenAI).
pub const MODEL: &str = "gen_ai.request.model";

/// The model a task's metadata names: a short name of visible characters, else none.
pub fn model(meta: &Map<String, Value>) -> Option<String> {
    let m = meta.get(MODEL)?.as_str()?;
    (!m.is_empty() && m.len() <= 128 && m.chars().all(|c| !c.is_control())).then(|| m.to_owned())
}

/// How many messages the task sent agents (ours: the convention has no calls), for a
/// caller that believes its account.
pub const CALLS: &str = "a2a_orchestrator.usage.calls";

/// Most tokens one report may claim; more is not a real count.
const MAX_TOKENS: f64 = 1e12;
/// Most cost one report may claim.
const MAX_COST: f64 = 1e9;

/// A whole count from a report's value, or why it is not one.
fn count(v: &Value) -> Result<u64, String> {
    match v.as_f64() {
        Some(n) if (0.0..=MAX_TOKENS).contains(&n) => Ok(n as u64),
        Some(n) => Err(format!("{n} is not a count of tokens")),
        None => Err(format!("a {} is not a number", kind(v))),
    }
}

/// What a JSON value is, for a warning (never the value: it may be huge or hostile).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "table",
    }
}

/// The usage a task's metadata reports, priced as `price` says: tokens by its rates,
/// and the agent's own cost only when `price.reported`. `None` when it reports none.
pub fn read(meta: &Map<String, Value>, price: Option<Price>, agent: &str) -> Option<Usage> {
    let (i, o, c) = (
        meta.get(INPUT_TOKENS),
        meta.get(OUTPUT_TOKENS),
        meta.get(COST),
    );
    if i.is_none() && o.is_none() && c.is_none() && !meta.contains_key(CALLS) {
        return None;
    }
    let mut usage = Usage::default();
    let take = |key: &str, v: Option<&Value>, into: &mut u64| {
        if let Some(v) = v {
            match count(v) {
                Ok(n) => *into = n,
                Err(why) => tracing::warn!(agent, key, "ignored the agent's usage: {why}"),
            }
        }
    };
    take(INPUT_TOKENS, i, &mut usage.input_tokens);
    take(OUTPUT_TOKENS, o, &mut usage.output_tokens);
    let price = price.unwrap_or_default();
    usage.cost = price.of_tokens(usage.input_tokens, usage.output_tokens);
    if price.reported
        && let Some(calls) = meta.get(CALLS)
    {
        match count(calls) {
            Ok(n) => usage.calls = n,
            Err(why) => tracing::warn!(agent, key = CALLS, "ignored the agent's calls: {why}"),
        }
    }
    if price.reported
        && let Some(c) = c
    {
        match c.as_f64() {
            Some(n) if (0.0..=MAX_COST).contains(&n) => usage.cost = n,
            _ => tracing::warn!(
                agent,
                key = COST,
                "ignored the agent's cost: not a number from 0 to {MAX_COST}"
            ),
        }
    }
    Some(usage)
}

/// Writes `usage` (a run's) into a task's metadata, as an agent reports its own.
pub fn write(usage: &Usage, meta: &mut Map<String, Value>) {
    if usage.is_zero() {
        return;
    }
    meta.insert(INPUT_TOKENS.into(), usage.input_tokens.into());
    meta.insert(OUTPUT_TOKENS.into(), usage.output_tokens.into());
    meta.insert(COST.into(), usage.cost.into());
    meta.insert(CALLS.into(), usage.calls.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn tokens_are_priced_and_an_agents_own_cost_believed_only_where_configured() {
        let price = Price {
            input_per_million: 3.0,
            output_per_million: 15.0,
            per_call: 0.0,
            reported: false,
        };
        let m = meta(json!({INPUT_TOKENS: 1000, OUTPUT_TOKENS: 200, COST: 99.0}));
        let u = read(&m, Some(price), "a").unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (1000, 200));
        assert!((u.cost - 0.006).abs() < 1e-12, "{}", u.cost);
        let trusting = Price {
            reported: true,
            ..price
        };
        assert_eq!(read(&m, Some(trusting), "a").unwrap().cost, 99.0);
        assert_eq!(read(&m, None, "a").unwrap().cost, 0.0);
        assert!(read(&meta(json!({"other": 1})), None, "a").is_none());
    }

    #[test]
    fn hostile_values_are_ignored_not_taken() {
        let trusting = Some(Price {
            reported: true,
            ..Price::default()
        });
        for bad in [
            json!(-5),
            json!("12"),
            json!(1e300),
            json!({"n": 1}),
            json!("x".repeat(1 << 20)),
        ] {
            let m = meta(json!({INPUT_TOKENS: bad.clone(), OUTPUT_TOKENS: 7, COST: bad}));
            let u = read(&m, trusting, "a").unwrap();
            assert_eq!(
                (u.input_tokens, u.output_tokens, u.cost),
                (0, 7, 0.0),
                "{m:?}"
            );
        }
    }

    #[test]
    fn what_is_written_reads_back() {
        let usage = Usage {
            input_tokens: 5,
            output_tokens: 6,
            calls: 2,
            cost: 0.5,
        };
        let mut m = Map::new();
        write(&usage, &mut m);
        let trusting = Some(Price {
            reported: true,
            ..Price::default()
        });
        let back = read(&m, trusting, "a").unwrap();
        assert_eq!(
            (back.input_tokens, back.output_tokens, back.cost),
            (5, 6, 0.5)
        );
    }
}

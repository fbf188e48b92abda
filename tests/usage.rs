//! Issue 80: what a run costs, across hops. Agents report their tasks' tokens in their
//! status metadata (OpenTelemetry GenAI's names); the orchestrator prices them as
//! `agents.toml` says, adds them up per step and run, and reports its own run's usage
//! the same way — so an orchestrator calling another adds the other's cost to its own.

use a2a::types::{Message, MessageSendParams};
use a2a_orchestrator::agents::{Behaviour, Fleet, Set};
use serde_json::Value;

use crate::util::orchestra::{client, orchestra_on, task};

const INNER: &str = r#"
[workflow]
id = "flights-only"
name = "Flights only"
description = "Finds flights"

[steps.flights]
agent = "flights"
message = "Find return flights from London to Lisbon on 2027-03-10 for 2 traveller(s), coming back after 5 nights."
data = { origin = "London", destination = "Lisbon", depart = "2027-03-10", nights = 5, travellers = 2 }
"#;

const OUTER: &str = r#"
[workflow]
id = "trip"
name = "Trip"
description = "Flights through another orchestrator, and money here"

[steps.via_inner]
agent = "inner"
message = "Find flights"

[steps.money]
agent = "currency"
message = "Convert 2000 EUR to the local currency of Lisbon."
data = { amount = 2000, from = "EUR", city = "Lisbon" }
"#;

fn usage(detail: &Value) -> (u64, u64, u64, f64) {
    let u = &detail["usage"];
    (
        u["inputTokens"].as_u64().unwrap_or(0),
        u["outputTokens"].as_u64().unwrap_or(0),
        u["calls"].as_u64().unwrap_or(0),
        u["cost"].as_f64().unwrap_or(0.0),
    )
}

fn step<'a>(detail: &'a Value, id: &str) -> &'a Value {
    detail["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == id && s.get("item").is_none())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runs_cost_is_priced_per_step_and_carried_up_through_an_orchestrator_it_calls() {
    let behaviour = Behaviour {
        latency: std::time::Duration::from_millis(5),
        chunk_delay: std::time::Duration::from_millis(1),
        ..Behaviour::default()
    };
    let fleet = Fleet::start(&[Set::Travel], behaviour, "127.0.0.1", true)
        .await
        .unwrap();
    let priced = |toml: String, agent: &str, price: &str| {
        toml.replace(
            &format!("[agents.{agent}]\n"),
            &format!("[agents.{agent}]\nprice = {price}\n"),
        )
    };
    // The inner orchestrator prices its flights agent.
    let inner_toml = priced(
        fleet.agents_toml(),
        "flights",
        "{ input_per_million = 2.0, output_per_million = 10.0 }",
    );
    let inner = orchestra_on(&[INNER], inner_toml, |_| {}).await;
    // The outer one believes the inner one's own cost, and prices currency.
    let outer_toml = priced(
        format!(
            "{}[agents.inner]\nurl = \"{}\"\n",
            fleet.agents_toml(),
            inner.url
        ),
        "inner",
        "{ reported = true }",
    );
    let outer_toml = priced(
        outer_toml,
        "currency",
        "{ input_per_million = 1.0, output_per_million = 1.0 }",
    );
    let outer = orchestra_on(&[OUTER], outer_toml, |_| {}).await;

    let (c, _) = client(&outer.url).await;
    let done = task(
        c.send_message(&MessageSendParams::new(Message::user_text("plan it")))
            .await
            .unwrap(),
    );
    let meta = done.metadata.clone().unwrap().into_map();
    let detail = &meta["run"];
    assert_eq!(detail["state"], "completed", "{detail:#}");

    // The outer run's own agent: priced by its tokens.
    let money = step(detail, "money");
    let (i, o, calls, cost) = usage(money);
    assert!(i > 0 && o > 0 && calls == 1, "{money:#}");
    assert!((cost - (i + o) as f64 * 1e-6).abs() < 1e-12, "{money:#}");

    // The inner orchestrator's run, as the outer one saw it: its flights' cost.
    let via = step(detail, "via_inner");
    let (vi, vo, vcalls, vcost) = usage(via);
    assert_eq!(vcalls, 1, "{via:#}");
    assert!(vi > 0 && vo > 0, "the inner run's tokens: {via:#}");
    assert!(
        (vcost - (vi as f64 * 2e-6 + vo as f64 * 10e-6)).abs() < 1e-12,
        "the inner run's cost, its flights priced there: {via:#}"
    );
    // The run's total is its steps', and its task says it as an agent would.
    let (ti, to, tcalls, tcost) = usage(detail);
    assert_eq!((ti, to, tcalls), (i + vi, o + vo, 2));
    assert!((tcost - (cost + vcost)).abs() < 1e-12);
    assert_eq!(meta["gen_ai.usage.input_tokens"], ti);
    assert_eq!(meta["gen_ai.usage.output_tokens"], to);
    assert!((meta["a2a_orchestrator.usage.cost"].as_f64().unwrap() - tcost).abs() < 1e-12);
    fleet.shutdown().await;
}

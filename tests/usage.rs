//! Issue 80: what a run costs, across hops. Agents report their tasks' tokens in their
//! status metadata (OpenTelemetry GenAI's names); the orchestrator prices them as
//! `agents.toml` says, adds them up per step and run, and reports its own run's usage
//! the same way — so an orchestrator calling another adds the other's cost to its own.

use a2a::types::*;
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

/// Sends `text` to the orchestrator at `url` and waits: the metadata of the task it
/// ends with (its run's detail under `run`, its usage as an agent reports it).
async fn ran(url: &str, text: &str) -> serde_json::Map<String, Value> {
    let (c, _) = client(url).await;
    let done = task(
        c.send_message(&SendMessageRequest::new(Message::user_text(text)))
            .await
            .unwrap(),
    );
    done.metadata.unwrap().into_map()
}

/// The example travel agents, quick to answer, on loopback.
async fn travel_agents() -> Fleet {
    let behaviour = Behaviour {
        latency: std::time::Duration::from_millis(5),
        chunk_delay: std::time::Duration::from_millis(1),
        ..Behaviour::default()
    };
    Fleet::start(&[Set::Travel], behaviour, "127.0.0.1", true)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runs_cost_is_priced_per_step_and_carried_up_through_an_orchestrator_it_calls() {
    let fleet = travel_agents().await;
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
        "{ input_per_million = 1.0, output_per_million = 1.0, per_call = 0.01, currency = \"USD\" }",
    );
    let outer = orchestra_on(&[OUTER], outer_toml, |_| {}).await;

    let meta = ran(&outer.url, "plan it").await;
    let detail = &meta["run"];
    assert_eq!(detail["state"], "completed", "{detail:#}");

    // The outer run's own agent: priced by its tokens and its call, in the currency
    // its price names.
    assert_eq!(detail["currency"], "USD");
    let money = step(detail, "money");
    let (i, o, calls, cost) = usage(money);
    assert!(i > 0 && o > 0 && calls == 1, "{money:#}");
    assert!(
        (cost - ((i + o) as f64 * 1e-6 + 0.01)).abs() < 1e-12,
        "{money:#}"
    );

    // The inner orchestrator's run, as the outer one saw it: its flights' cost, and
    // its call to them besides the outer run's own call to it.
    let via = step(detail, "via_inner");
    let (vi, vo, vcalls, vcost) = usage(via);
    assert_eq!(vcalls, 2, "{via:#}");
    assert!(vi > 0 && vo > 0, "the inner run's tokens: {via:#}");
    assert!(
        (vcost - (vi as f64 * 2e-6 + vo as f64 * 10e-6)).abs() < 1e-12,
        "the inner run's cost, its flights priced there: {via:#}"
    );
    // The run's total is its steps', and its task says it as an agent would.
    let (ti, to, tcalls, tcost) = usage(detail);
    assert_eq!((ti, to, tcalls), (i + vi, o + vo, 3));
    assert!((tcost - (cost + vcost)).abs() < 1e-12);
    assert_eq!(meta["gen_ai.usage.input_tokens"], ti);
    assert_eq!(meta["gen_ai.usage.output_tokens"], to);
    assert!((meta["a2a_orchestrator.usage.cost"].as_f64().unwrap() - tcost).abs() < 1e-12);
    // And Prometheus counts them by workflow and agent.
    let metrics = orchestrator_metrics::get().render();
    for line in [
        format!(
            "a2a_orchestrator_usage_tokens_total{{workflow=\"trip\",agent=\"currency\",direction=\"input\"}} {i}"
        ),
        format!(
            "a2a_orchestrator_usage_tokens_total{{workflow=\"trip\",agent=\"inner\",direction=\"output\"}} {vo}"
        ),
        "a2a_orchestrator_usage_cost_total{workflow=\"trip\",agent=\"inner\"}".to_owned(),
        format!(
            "a2a_orchestrator_usage_tokens_total{{workflow=\"flights-only\",agent=\"flights\",direction=\"input\"}} {vi}"
        ),
    ] {
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
    fleet.shutdown().await;
}

/// Issue 80: a budget and a deadline reach the bottom of a chain. The outer run sends
/// what it has left with its message; the inner orchestrator holds its own run within
/// it, so the inner run fails on the outer run's budget, at its own step, and the outer
/// run fails too, counting what the inner one spent.
#[tokio::test(flavor = "multi_thread")]
async fn a_budget_and_a_deadline_are_sent_down_and_hold_the_run_an_orchestrator_starts() {
    let fleet = travel_agents().await;
    // Ids of their own: the metrics the other test reads are by workflow.
    let inner_workflow = INNER.replace("id = \"flights-only\"", "id = \"flights-held\"");
    let inner = orchestra_on(&[&inner_workflow], fleet.agents_toml(), |_| {}).await;
    let outer_workflow = OUTER
        .replace("id = \"trip\"", "id = \"trip-on-budget\"")
        .replace(
            "description = \"Flights through another orchestrator, and money here\"",
            "description = \"Flights through another orchestrator, on a budget\"\nbudget = { tokens = 40 }\ndeadline = \"30s\"",
        )
        .replace("[steps.money]", "[steps.money]\nneeds = [\"via_inner\"]");
    let outer_toml = format!(
        "{}[agents.inner]\nurl = \"{}\"\nprice = {{ reported = true }}\n",
        fleet.agents_toml(),
        inner.url
    );
    let outer = orchestra_on(&[&outer_workflow], outer_toml, |_| {}).await;
    let meta = ran(&outer.url, "plan it").await;
    let detail = &meta["run"];
    assert_eq!(detail["state"], "failed", "{detail:#}");
    let error = detail["error"].as_str().unwrap();
    assert!(
        error.starts_with("budget exceeded: tokens ")
            && error.ends_with("> 40 at step `via_inner`"),
        "{error}"
    );
    assert_eq!(
        step(detail, "money")["attempts"],
        0,
        "never called: {detail:#}"
    );

    // The inner orchestrator's run: started within the outer run's 40 tokens and its
    // 30 seconds, it failed on them at its own step.
    let (ic, _) = client(&inner.url).await;
    let listed = ic
        .list_tasks(&ListTasksRequest {
            history_length: Some(10),
            ..ListTasksRequest::default()
        })
        .await
        .unwrap();
    let first = listed
        .tasks
        .last()
        .expect("the inner orchestrator ran a task");
    let sent = first
        .history
        .first()
        .and_then(|m| m.metadata.clone())
        .unwrap()
        .into_map();
    assert_eq!(
        sent["a2a_orchestrator.budget"],
        serde_json::json!({"tokens": 40})
    );
    let ms = sent["a2a_orchestrator.timeout_ms"].as_u64().unwrap();
    assert!(ms > 20_000 && ms <= 30_000, "{ms}");
    let inner_run = first.metadata.clone().unwrap().into_map()["run"].clone();
    assert_eq!(inner_run["state"], "failed", "{inner_run:#}");
    let inner_error = inner_run["error"].as_str().unwrap();
    assert!(
        inner_error.starts_with("budget exceeded: tokens ")
            && inner_error.ends_with("> 40 at step `flights`"),
        "{inner_error}"
    );
    // The card says it takes them.
    let (_, card) = client(&outer.url).await;
    let uris: Vec<&str> = (card.capabilities.iter().flat_map(|c| &c.extensions))
        .map(|e| e.uri.as_str())
        .collect();
    assert!(
        uris.contains(&a2a_orchestrator::connect::bounds::EXTENSION),
        "{uris:?}"
    );
    fleet.shutdown().await;
}

/// Issue 80: a run's account and bounds survive a restart. The run starts held to a
/// caller's budget, lower than its workflow's; the first step's usage is kept with its
/// record; the run resumed by another engine, on the workflow as written, is held to
/// the caller's budget again and goes on counting from what was used, so the second
/// step passes the budget the two together exceed.
#[tokio::test(start_paused = true)]
async fn a_resumed_run_goes_on_counting_from_what_its_finished_steps_used() {
    use a2a_orchestrator::testmode::{file, script::ScriptedAgents};
    use orchestrator_core::engine::{
        Engine, EngineOptions, MemoryRunStore, RunEvent, RunStore, StepState,
    };
    use std::sync::Arc;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("usage-resume");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("w.toml"),
        r#"
[workflow]
id = "two"
name = "Two"
description = "Two paid steps"
budget = { tokens = 1000 }

[steps.a]
agent = "x"
message = "first"

[steps.b]
agent = "x"
needs = ["a"]
message = "second"
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("t.test.toml"),
        r#"
[test]
workflow = "two"

[steps.a]
replies = [{ text = "one", usage = { input_tokens = 60, output_tokens = 40 } }]

[steps.b]
replies = [{ delay = "1h", text = "two", usage = { input_tokens = 60, output_tokens = 40 } }]

[expect]
state = "failed"
"#,
    )
    .unwrap();
    let (case, diags) = file::load(&dir.join("t.test.toml"), &dir);
    let case = case.unwrap_or_else(|| panic!("{diags:?}"));
    let store = Arc::new(MemoryRunStore::new());
    let engine = Engine::new(
        Arc::new(ScriptedAgents::new(&case)),
        EngineOptions::default(),
    )
    .with_store(store.clone());
    let caller = orchestrator_core::engine::Bounds {
        budget: Some(orchestrator_core::workflow::Budget {
            tokens: Some(150),
            ..Default::default()
        }),
        within: Some(std::time::Duration::from_secs(3 * 3600)),
    };
    let held = a2a_orchestrator::connect::bounds::within(&case.workflow, &caller);
    let mut first = engine.start(held, &case.input, "r-1".into()).unwrap();
    // Stopped once `a` is done: as a process that stops.
    loop {
        match first.events.recv().await.expect("the run goes on") {
            RunEvent::Step {
                step,
                state: StepState::Completed,
                ..
            } if step.as_str() == "a" => break,
            _ => {}
        }
    }
    first.control.halt();
    let saved = store.load_run("r-1").await.unwrap().expect("stored");
    let kept = saved.header.held.expect("its bounds are stored");
    assert_eq!(
        (kept.budget.unwrap().tokens, kept.deadline),
        (Some(150), Some(std::time::Duration::from_secs(3 * 3600)))
    );
    // Another engine resumes it.
    let again = Engine::new(
        Arc::new(ScriptedAgents::new(&case)),
        EngineOptions::default(),
    )
    .with_store(store.clone());
    let mut resumed = again.resume(case.workflow.clone(), saved);
    while resumed.events.recv().await.is_some() {}
    let detail = resumed.control.read(|told| told.detail().clone());
    assert_eq!(
        detail.error.as_deref(),
        Some("budget exceeded: tokens 200 > 150 at step `b`"),
        "{detail:#?}"
    );
    let a = detail.steps.iter().find(|s| s.step == "a").unwrap();
    assert_eq!((a.usage.input_tokens, a.usage.calls), (60, 1), "{a:#?}");
    assert_eq!(detail.usage.tokens(), 200, "{:?}", detail.usage);
}

/// Reports usage as a hostile agent would: a negative count, a count as text, a
/// megabyte string, a huge cost, each time a status update goes out.
struct Lying;

impl a2a::server::AgentExecutor for Lying {
    async fn execute(
        &self,
        _ctx: a2a::server::RequestContext,
        events: a2a::server::EventSink,
    ) -> Result<(), a2a::RpcError> {
        let fail = |e: a2a::server::SinkError| a2a::RpcError::internal(e.to_string());
        let lies = [
            serde_json::json!({"gen_ai.usage.input_tokens": -5, "gen_ai.usage.output_tokens": "12"}),
            serde_json::json!({"gen_ai.usage.input_tokens": "x".repeat(1 << 20), "a2a_orchestrator.usage.cost": 1e300, "gen_ai.request.model": "m".repeat(1 << 20)}),
            serde_json::json!({"gen_ai.usage.input_tokens": 1e300, "gen_ai.usage.output_tokens": {"n": 1}, "a2a_orchestrator.usage.cost": -1}),
        ];
        for (i, lie) in lies.into_iter().enumerate() {
            let state = if i == 2 {
                a2a::types::TaskState::Completed
            } else {
                a2a::types::TaskState::Working
            };
            let mut update = events.status_update(state, None);
            update.metadata = Some(lie.as_object().unwrap().clone().into());
            events.send(update).await.map_err(fail)?;
        }
        Ok(())
    }
}

/// Issue 80: malformed and hostile usage never breaks a run: each value that is not a
/// count (or a cost) is left out, the step completes, and nothing is counted for it
/// but its call — even where its own cost is believed.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_usage_reports_are_ignored_and_never_break_a_run() {
    let liar = crate::util::serve(
        Lying,
        crate::echo_agent::echo_card,
        a2a::server::ServerConfig::default(),
    )
    .await;
    let workflow = r#"
[workflow]
id = "lied-to"
name = "Lied to"
description = "Calls an agent that lies about what it used"
budget = { tokens = 10, cost = 1.0 }

[steps.ask]
agent = "liar"
message = "how much?"
"#;
    let toml = format!(
        "[agents.liar]\nurl = \"{}\"\nprice = {{ input_per_million = 1.0, reported = true }}\n",
        liar.url
    );
    let o = orchestra_on(&[workflow], toml, |_| {}).await;
    let meta = ran(&o.url, "go").await;
    let detail = &meta["run"];
    assert_eq!(detail["state"], "completed", "{detail:#}");
    assert_eq!(usage(step(detail, "ask")), (0, 0, 1, 0.0), "{detail:#}");
    assert!(step(detail, "ask").get("model").is_none(), "{detail:#}");
}

/// Issue 80: the official Python SDK's agent reports usage in its final status's
/// metadata (through its `TaskUpdater`), and the model it used; the orchestrator reads
/// them on JSON-RPC and on gRPC (where metadata is a protobuf `Struct`), and prices it.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn an_sdk_agents_reported_usage_is_read_on_each_binding() {
    let text = "please report usage of these six words";
    for agent in [
        crate::util::python_v1_agent(0.0).await,
        crate::util::python_v1_grpc_agent(0.0).await,
    ] {
        let workflow = format!(
            "[workflow]\nid = \"sdk-usage\"\nname = \"SDK usage\"\ndescription = \"d\"\n\n[steps.words]\nagent = \"py\"\nmessage = \"{text}\"\n"
        );
        let toml = format!(
            "[agents.py]\nurl = \"{}\"\nprice = {{ input_per_million = 1000000.0, output_per_million = 0.0 }}\n",
            agent.url
        );
        let o = orchestra_on(&[&workflow], toml, |_| {}).await;
        let meta = ran(&o.url, "go").await;
        let detail = &meta["run"];
        assert_eq!(detail["state"], "completed", "{detail:#}");
        let chars = text.len() as u64;
        let words = text.split_whitespace().count() as u64;
        assert_eq!(
            usage(step(detail, "words")),
            (chars, words, 1, chars as f64),
            "{detail:#}"
        );
        assert_eq!(step(detail, "words")["model"], "words-1", "{detail:#}");
    }
}

/// A task as `url` holds it now, with its history.
async fn task_at(url: &str, id: &str) -> a2a::types::Task {
    let (c, _) = client(url).await;
    c.get_task(&a2a::types::GetTaskRequest {
        history_length: Some(10),
        ..a2a::types::GetTaskRequest::new(id)
    })
    .await
    .unwrap_or_else(|e| panic!("task {id} at {url}: {e}"))
}

/// The run detail a task of ours holds.
fn run_of(task: &a2a::types::Task) -> Value {
    task.metadata.clone().unwrap().into_map()["run"].clone()
}

/// The downstream task of `step` in a run's detail, once it has one.
fn downstream(detail: &Value, id: &str) -> Option<String> {
    step(detail, id)["downstreamTaskId"]
        .as_str()
        .map(str::to_owned)
}

/// Waits (20 s at most) until `check` gives something.
async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let until = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(t) = check().await {
            return t;
        }
        assert!(tokio::time::Instant::now() < until, "never: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

const BOTTOM: &str = r#"
[workflow]
id = "bottom"
name = "Bottom"
description = "Flights from our agent, words from the official Python SDK's"

[steps.flights]
agent = "flights"
message = "Find return flights from London to Lisbon on 2027-03-10 for 2 traveller(s), coming back after 5 nights."
data = { origin = "London", destination = "Lisbon", depart = "2027-03-10", nights = 5, travellers = 2 }

[steps.words]
agent = "py"
message = "WORDS"
"#;

/// Issue 80, on real processes: `serve` A's workflows call `serve` B as an agent, whose
/// workflows call our flights agent and the official Python SDK's agent, both reporting
/// usage. A's run counts what B's run cost (B's own prices); a budget on A smaller than
/// the chain's cost fails A at its step and B at its own, and the Python agent's task
/// ends canceled; so does a deadline on A (sent down with each message), and a cancel
/// of A's task.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_chain_of_serve_processes_is_counted_and_stopped_top_to_bottom() {
    use crate::util::orchestra::spawn_serve;
    let fleet = travel_agents().await;
    let py = crate::util::python_v1_agent(0.25).await;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("usage-chain");
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["a", "b"] {
        std::fs::create_dir_all(dir.join(d).join("flows")).unwrap();
    }
    let flights = fleet.agents.iter().find(|(n, _)| n == "flights").unwrap();
    std::fs::write(
        dir.join("b/agents.toml"),
        format!(
            "[agents.flights]\nurl = \"{}\"\nprice = {{ input_per_million = 2.0, output_per_million = 10.0, currency = \"USD\" }}\n\n[agents.py]\nurl = \"{}\"\nprice = {{ input_per_million = 1000.0, output_per_million = 1000.0, per_call = 0.001 }}\n",
            flights.1, py.url
        ),
    )
    .unwrap();
    // Four words (a second at the Python agent), and forty (ten seconds).
    let quick = BOTTOM.replace("WORDS", "please report usage now");
    let slow = BOTTOM
        .replace("id = \"bottom\"", "id = \"bottom-slow\"")
        .replace("WORDS", &"slowly ".repeat(40));
    std::fs::write(dir.join("b/flows/bottom.toml"), quick).unwrap();
    std::fs::write(dir.join("b/flows/bottom-slow.toml"), slow).unwrap();
    let serve_args = |d: &str| {
        [
            "--agents".to_owned(),
            dir.join(d).join("agents.toml").display().to_string(),
            "--workflows".to_owned(),
            dir.join(d).join("flows").display().to_string(),
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
        ]
    };
    let args = serve_args("b");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_b, b_url) = spawn_serve(&args, &[]).await;

    let currency = fleet.agents.iter().find(|(n, _)| n == "currency").unwrap();
    std::fs::write(
        dir.join("a/agents.toml"),
        format!(
            "[agents.b]\nurl = \"{b_url}\"\nprice = {{ reported = true }}\n\n[agents.currency]\nurl = \"{}\"\nprice = {{ input_per_million = 1.0, output_per_million = 1.0, currency = \"USD\" }}\n",
            currency.1
        ),
    )
    .unwrap();
    let top = |id: &str, bottom: &str, extra: &str| {
        format!(
            r#"[workflow]
id = "{id}"
name = "{id}"
description = "Through B"
{extra}

[steps.via_b]
agent = "b"
message = "go"
data = {{ workflow = "{bottom}" }}

[steps.money]
agent = "currency"
needs = ["via_b"]
message = "Convert 2000 EUR to the local currency of Lisbon."
data = {{ amount = 2000, from = "EUR", city = "Lisbon" }}
"#
        )
    };
    for (id, bottom, extra) in [
        ("top", "bottom", ""),
        ("top-budget", "bottom-slow", "budget = { tokens = 5 }"),
        ("top-deadline", "bottom-slow", "deadline = \"3s\""),
        ("top-slow", "bottom-slow", ""),
    ] {
        std::fs::write(
            dir.join("a/flows").join(format!("{id}.toml")),
            top(id, bottom, extra),
        )
        .unwrap();
    }
    let args = serve_args("a");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_a, a_url) = spawn_serve(&args, &[]).await;
    let (a, _) = client(&a_url).await;
    let start = |workflow: &str, blocking: bool| {
        let mut m = Message::user_text("");
        m.parts = vec![a2a::types::Part::data(
            serde_json::json!({ "workflow": workflow })
                .as_object()
                .unwrap()
                .clone(),
        )];
        let mut p = SendMessageRequest::new(m);
        p.configuration = Some(a2a::types::SendMessageConfiguration {
            return_immediately: !blocking,
            ..Default::default()
        });
        p
    };

    // All the way through: A's step is what B's run cost, at B's prices.
    let done = task(a.send_message(&start("top", true)).await.unwrap());
    let detail = run_of(&done);
    assert_eq!(detail["state"], "completed", "{detail:#}");
    let b_task = task_at(&b_url, &downstream(&detail, "via_b").unwrap()).await;
    let b_run = run_of(&b_task);
    assert_eq!(b_run["state"], "completed", "{b_run:#}");
    let (bi, bo, bcalls, bcost) = usage(&b_run);
    let words = step(&b_run, "words");
    let (wi, wo, wcalls, wcost) = usage(words);
    assert_eq!((wi, wo, wcalls), (23, 4, 1), "the SDK's report: {words:#}");
    assert!((wcost - (27.0 * 1e-3 + 0.001)).abs() < 1e-9, "{words:#}");
    let (vi, vo, vcalls, vcost) = usage(step(&detail, "via_b"));
    // Its own call to B, and B's calls, which it believes.
    assert_eq!((vi, vo, vcalls), (bi, bo, 1 + bcalls), "{detail:#}");
    assert!((vcost - bcost).abs() < 1e-9, "{vcost} {bcost}");
    assert_eq!(detail["currency"], "USD");

    // A budget smaller than the chain's cost: B's flights pass it (held to what A has
    // left), B fails there and cancels the Python agent's task; A fails at its step.
    let done = task(a.send_message(&start("top-budget", true)).await.unwrap());
    let detail = run_of(&done);
    assert_eq!(detail["state"], "failed", "{detail:#}");
    let error = detail["error"].as_str().unwrap();
    assert!(
        error.starts_with("budget exceeded: tokens ") && error.ends_with("> 5 at step `via_b`"),
        "{error}"
    );
    let b_run = run_of(&task_at(&b_url, &downstream(&detail, "via_b").unwrap()).await);
    let b_error = b_run["error"].as_str().unwrap_or_default();
    assert!(b_error.ends_with("> 5 at step `flights`"), "{b_run:#}");
    let words = downstream(&b_run, "words")
        .unwrap_or_else(|| panic!("the Python agent was called: {b_run:#}"));
    let state = eventually("the Python agent's task is canceled", || {
        let (url, id) = (py.url.clone(), words.clone());
        async move {
            let t = task_at(&url, &id).await;
            (t.status().state() == a2a::types::TaskState::Canceled).then_some(t)
        }
    })
    .await;
    assert_eq!(state.status().state(), a2a::types::TaskState::Canceled);

    // A deadline: B's run is held to what A has left of its three seconds, and so is
    // the message B sends the Python agent.
    let done = task(a.send_message(&start("top-deadline", true)).await.unwrap());
    let detail = run_of(&done);
    assert_eq!(detail["state"], "failed", "{detail:#}");
    // B's run ends on its deadline, or on A's cancel when A's deadline (a transit
    // earlier) passes first.
    let b_run = run_of(&task_at(&b_url, &downstream(&detail, "via_b").unwrap()).await);
    let b_error = b_run["error"].as_str().unwrap_or_default();
    assert!(
        (b_run["state"] == "failed" && b_error.contains("deadline"))
            || b_run["state"] == "canceled",
        "{b_run:#}"
    );
    let words = downstream(&b_run, "words").expect("the Python agent was called");
    let t = eventually("the Python agent's task is canceled", || {
        let (url, id) = (py.url.clone(), words.clone());
        async move {
            let t = task_at(&url, &id).await;
            (t.status().state() == a2a::types::TaskState::Canceled).then_some(t)
        }
    })
    .await;
    let sent = t.history.iter().find_map(|m| m.metadata.clone());
    // (A number in a protobuf `Struct`: a double.)
    let ms = (sent.as_ref())
        .and_then(|m| m.get("a2a_orchestrator.timeout_ms"))
        .and_then(Value::as_f64);
    assert!(ms.is_some_and(|ms| ms > 0.0 && ms < 3000.0), "{sent:?}");

    // A cancel of A's task reaches the Python agent's, through B's.
    let started = task(a.send_message(&start("top-slow", false)).await.unwrap());
    let words = eventually("B calls the Python agent", || {
        let (a_url, b_url, id) = (a_url.clone(), b_url.clone(), started.id.to_string());
        async move {
            let top = run_of(&task_at(&a_url, &id).await);
            let b = run_of(&task_at(&b_url, &downstream(&top, "via_b")?).await);
            downstream(&b, "words")
        }
    })
    .await;
    a.cancel_task(&CancelTaskRequest::new(started.id.clone()))
        .await
        .unwrap();
    eventually("the Python agent's task is canceled", || {
        let (url, id) = (py.url.clone(), words.clone());
        async move {
            let t = task_at(&url, &id).await;
            (t.status().state() == a2a::types::TaskState::Canceled).then_some(())
        }
    })
    .await;
    let top = run_of(&task_at(&a_url, started.id.as_str()).await);
    assert_eq!(top["state"], "canceled", "{top:#}");
    fleet.shutdown().await;
}

/// Issue 80: a gRPC call's own deadline (`grpc-timeout`, from a client held `within`)
/// holds the run it starts, as the message's `a2a_orchestrator.timeout_ms` would.
#[tokio::test(flavor = "multi_thread")]
async fn a_grpc_calls_deadline_holds_the_run_it_starts() {
    use a2a::Version;
    use a2a::client::{A2aClient, Binding, ClientConfig, Interface};
    let workflow = r#"
[workflow]
id = "waits"
name = "Waits"
description = "Waits for a slow agent"

[steps.wait]
agent = "one"
message = "slowly"
"#;
    let o = crate::util::orchestra::orchestra_with(&[workflow], 20_000, |_| {}).await;
    let grpc = A2aClient::new(&o.url, ClientConfig::default())
        .unwrap()
        .only(Interface {
            url: o.url.clone(),
            protocol: Version::V1_0,
            binding: Binding::Grpc,
            tenant: String::new(),
        })
        .within(std::time::Duration::from_secs(2));
    let mut p = SendMessageRequest::new(Message::user_text("go"));
    p.configuration = Some(a2a::types::SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let started = task(grpc.send_message(&p).await.unwrap());
    let ended = eventually("the run ends", || {
        let (url, id) = (o.url.clone(), started.id.to_string());
        async move {
            let t = task_at(&url, &id).await;
            t.status().state().is_terminal().then_some(t)
        }
    })
    .await;
    let detail = run_of(&ended);
    assert_eq!(detail["state"], "failed", "{detail:#}");
    let error = detail["error"].as_str().unwrap();
    assert!(
        error.starts_with("the run's deadline of 19")
            && error.ends_with("ms passed with `wait` still running (canceled)"),
        "{error}"
    );
}

/// Records the deadline each call came with (gRPC's `grpc-timeout`, as left when the
/// agent is told), and completes.
struct Deadlines(std::sync::Arc<std::sync::Mutex<Vec<Option<std::time::Duration>>>>);

impl a2a::server::AgentExecutor for Deadlines {
    async fn execute(
        &self,
        ctx: a2a::server::RequestContext,
        events: a2a::server::EventSink,
    ) -> Result<(), a2a::RpcError> {
        let left =
            (ctx.caller.deadline()).map(|d| d.saturating_duration_since(std::time::Instant::now()));
        self.0.lock().unwrap().push(left);
        events
            .complete(Some("done"))
            .await
            .map_err(|e| a2a::RpcError::internal(e.to_string()))
    }
}

/// Issue 80: the orchestrator calling an agent over gRPC sends what the run has left of
/// its time as the call's `grpc-timeout` too.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_calls_a_grpc_agent_within_what_it_has_left() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let agent = crate::util::serve(
        Deadlines(seen.clone()),
        crate::echo_agent::echo_card,
        a2a::server::ServerConfig::default(),
    )
    .await;
    let workflow = r#"
[workflow]
id = "timed"
name = "Timed"
description = "Calls a gRPC agent within five seconds"
deadline = "5s"

[steps.call]
agent = "rec"
message = "hello"
"#;
    let toml = format!(
        "[agents.rec]\nurl = \"{}\"\nbinding = \"grpc\"\n",
        agent.url
    );
    let o = orchestra_on(&[workflow], toml, |_| {}).await;
    let meta = ran(&o.url, "go").await;
    assert_eq!(meta["run"]["state"], "completed", "{:#}", meta["run"]);
    let seen = seen.lock().unwrap().clone();
    assert!(
        matches!(seen.as_slice(), [Some(left)] if *left > std::time::Duration::from_secs(3) && *left <= std::time::Duration::from_secs(5)),
        "{seen:?}"
    );
}

/// Issue 80: the approval that extends a budget survives a restart. Its question,
/// waiting when the process stops, is asked again by the run resumed; an extension
/// approved before a restart still holds after it.
#[tokio::test(start_paused = true)]
async fn a_budgets_approval_and_its_extension_survive_a_restart() {
    use a2a_orchestrator::testmode::{file, script::ScriptedAgents};
    use orchestrator_core::engine::{
        Answer, Engine, EngineOptions, MemoryRunStore, RunEvent, RunStore, StepState,
    };
    use std::sync::Arc;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("usage-ask-resume");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("w.toml"),
        r#"
[workflow]
id = "drafting"
name = "Drafting"
description = "Two paid steps on a budget its approvers may extend"
budget = { cost = 1.0 }

[steps.draft]
agent = "writer"
message = "Draft"

[steps.publish]
agent = "publisher"
needs = ["draft"]
message = "Publish"

[steps.more_budget]
kind = "approval"
on_budget = "ask"
prompt = "Allow another 0.50?"
extend = { cost = 0.5 }
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("t.test.toml"),
        r#"
[test]
workflow = "drafting"

[agents.writer]
replies = [{ text = "a draft", usage = { cost = 1.2 } }]

[agents.publisher]
replies = [{ delay = "1h", text = "published", usage = { cost = 0.2 } }]

[expect]
state = "completed"
"#,
    )
    .unwrap();
    let (case, diags) = file::load(&dir.join("t.test.toml"), &dir);
    let case = case.unwrap_or_else(|| panic!("{diags:?}"));
    let store = Arc::new(MemoryRunStore::new());
    let engine = || {
        Engine::new(
            Arc::new(ScriptedAgents::new(&case)),
            EngineOptions::default(),
        )
        .with_store(store.clone())
    };
    let first = engine();
    let mut run = first
        .start(case.workflow.clone(), &case.input, "r-1".into())
        .unwrap();
    // The draft passes the budget: the run asks, saying why; the process stops.
    loop {
        if let RunEvent::Question {
            step, prompt, item, ..
        } = run.events.recv().await.expect("the run goes on")
        {
            assert_eq!(step.as_str(), "more_budget");
            assert_eq!(item, Some(0));
            assert_eq!(
                prompt,
                "budget exceeded: cost 1.2000 > 1 at step `draft`. Allow another 0.50?"
            );
            break;
        }
    }
    run.control.halt();

    // Resumed, it asks again; approved, the publisher is called.
    let saved = store.load_run("r-1").await.unwrap().expect("stored");
    let second = engine();
    let mut run = second.resume(case.workflow.clone(), saved);
    loop {
        match run.events.recv().await.expect("the run goes on") {
            RunEvent::Question { step, item, .. } if step.as_str() == "more_budget" => {
                assert_eq!(item, Some(0), "the same pass, asked again");
                run.control
                    .answer(Some("more_budget"), item, Answer::text("yes"))
                    .await
                    .unwrap();
            }
            RunEvent::Step {
                step,
                state: StepState::Working,
                ..
            } if step.as_str() == "publish" => break,
            _ => {}
        }
    }
    run.control.halt();

    // Resumed again: held to the budget as extended (1.5), the run completes.
    let saved = store.load_run("r-1").await.unwrap().expect("stored");
    let third = engine();
    let mut run = third.resume(case.workflow.clone(), saved);
    while let Some(e) = run.events.recv().await {
        assert!(
            !matches!(&e, RunEvent::Question { .. }),
            "asked again after a restart: {e:?}"
        );
    }
    let detail = run.control.read(|told| told.detail().clone());
    assert_eq!(
        detail.state,
        orchestrator_core::engine::RunState::Completed,
        "{detail:#?}"
    );
    assert!((detail.usage.cost - 1.4).abs() < 1e-9, "{:?}", detail.usage);
}

//! The first-run commands as a user runs them: the `a2a-orchestrator` binary with
//! `demo`, `run` and `send`, against the example agents and the echo agent over HTTP.

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use a2a_orchestrator::agents::{Behaviour, Fleet, Set};
use serde_json::Value;

use crate::util::{ROOT, echo};

async fn orchestrator(args: &[&str]) -> Output {
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(args)
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the command finished")
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The line of `step` in the progress output, e.g. `✓ hotel   hotels   completed ...`.
fn step_line<'a>(out: &'a str, step: &str) -> Option<&'a str> {
    out.lines().find(|l| {
        l.starts_with(['✓', '✗', '-', '…', '?']) && l.split_whitespace().nth(1) == Some(step)
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_travel_demo_runs_without_a_terminal_and_prints_the_itinerary() {
    let o = orchestrator(&["demo"]).await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // Issue 38: it shows all it sends, the inputs beside the sentence.
    assert!(
        out.contains("→ message/stream: \"Plan 5 nights in Lisbon")
            && out.contains("with a data part: {\"input\":{")
            && out.contains("\"workflow\":\"travel-planning\""),
        "{out}"
    );
    for step in [
        "flights",
        "hotel",
        "activities",
        "book_tours[0]",
        "book_tours",
        "currency",
        "advice",
    ] {
        let line = step_line(&out, step).unwrap_or_else(|| panic!("no line for {step}:\n{out}"));
        assert!(
            line.starts_with('✓') && line.contains("completed"),
            "{line}"
        );
    }
    // The hotel asked which of two hotels; the demo chose the first by itself.
    assert!(out.contains("Which one should I book?"), "{out}");
    assert!(out.contains("answered automatically: 1"), "{out}");
    // The agents' artifacts as they completed, then the assembled itinerary.
    assert!(out.contains("── flights · flights ──"), "{out}");
    let itinerary = out
        .split("══ International trip planner ══")
        .nth(1)
        .expect("the result");
    for section in [
        "# Lisbon from London",
        "## Flights\nOutbound",
        "## Hotel\nBooked Grand Hotel Lisbon",
        "Booked \"Lisbon food and market tour\" for 2 on day 1",
        "## Money\n2500 GBP is about",
        "## Advice\nEntry:",
    ] {
        assert!(itinerary.contains(section), "{section:?} in:\n{itinerary}");
    }
    assert!(out.contains("workflow completed"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_onboarding_demo_completes_with_the_laptop_approved() {
    let o = orchestrator(&["demo", "onboarding", "--yes"]).await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("? Approve a high-spec laptop for Ada Lovelace"),
        "{out}"
    );
    assert!(out.contains("answered automatically: yes"), "{out}");
    for step in [
        "create_record",
        "send_documents",
        "provision_accounts",
        "approve_laptop",
        "order_laptop",
        "assign_desk",
        "print_badge",
        "notify_manager",
    ] {
        let line = step_line(&out, step).unwrap_or_else(|| panic!("no line for {step}:\n{out}"));
        assert!(line.contains("completed"), "{line}");
    }
    assert!(
        out.contains("Laptop: ordered a 16-inch, 32 GB RAM, 1 TB laptop"),
        "{out}"
    );
    assert!(out.contains("mailbox: ada.lovelace@example.com"), "{out}");
    // Its accounts are a child run of provision-accounts, shown as they come.
    assert!(
        out.contains("access of their role (engineer): engineering, source-code, vpn"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_shows_retries_and_fails_when_an_agent_always_fails() {
    let o = orchestrator(&["demo", "--failure-rate", "1", "--latency", "10ms"]).await;
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("attempt 1 failed") && out.contains("simulated outage"),
        "{out}"
    );
    assert!(out.contains("after 3 attempts"), "{out}");
    assert!(out.contains("workflow failed"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn send_talks_to_the_echo_agent_with_and_without_streaming() {
    let agent = echo(5).await;
    let o = orchestrator(&["send", &agent.url, "hello there agents"]).await;
    assert!(o.status.success(), "{}", text(&o));
    // Printed as A2A 1.0's JSON: the SendMessageResponse.
    let answer: Value = serde_json::from_slice(&o.stdout).expect("the answer as JSON");
    serde_json::from_value::<a2a::types::SendMessageResponse>(answer.clone()).unwrap();
    let task = &answer["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let echoed: String = task["artifacts"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(echoed, "hello there agents");

    let o = orchestrator(&["send", &agent.url, "one two three", "--stream"]).await;
    assert!(o.status.success(), "{}", text(&o));
    let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(chunks, ["one", " two", " three"]);
    for e in &events {
        serde_json::from_value::<a2a::types::StreamResponse>(e.clone()).unwrap();
    }
    let last = events.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // A continuation: ask, then answer on the same task.
    let o = orchestrator(&["send", &agent.url, "ask me"]).await;
    let asked: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        asked["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let id = asked["task"]["id"].as_str().unwrap();
    let o = orchestrator(&["send", &agent.url, "echo this", "--task", id]).await;
    let done: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );

    let bad = orchestrator(&["send", &agent.url, "x", "--data", "[1]"]).await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--data must be a JSON object"),
        "{}",
        text(&bad)
    );
}

/// An agents file for `fleet` in a fresh directory.
fn agents_file(fleet: &Fleet, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("agents.toml");
    std::fs::write(&path, fleet.agents_toml()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn run_json_emits_well_formed_events_ending_in_the_final_state() {
    let behaviour = Behaviour {
        latency: Duration::from_millis(5),
        chunk_delay: Duration::from_millis(2),
        ..Behaviour::default()
    };
    let fleet = Fleet::start(&[Set::Travel], behaviour, "127.0.0.1", true)
        .await
        .unwrap();
    let agents = agents_file(&fleet, "run-json");
    let agents = agents.to_str().unwrap();
    let o = orchestrator(&[
        "run",
        "travel-planning",
        "--agents",
        agents,
        "-i",
        "origin=Paris",
        "-i",
        "destination=Tokyo",
        "-i",
        "depart=2027-04-01",
        "-i",
        "interests=[\"food\",\"temples\"]",
        "--json",
        "--answer",
        "hotel=1",
    ])
    .await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"run"));
    for k in ["step", "artifact", "question", "answer", "output"] {
        assert!(kinds.contains(&k), "no {k} event in {kinds:?}");
    }
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run");
    assert_eq!(last["state"], "completed", "{out}");
    let question = events.iter().find(|e| e["event"] == "question").unwrap();
    assert_eq!(question["step"], "hotel");
    assert_eq!(question["kind"], "agent");
    let completed: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "step" && e["state"] == "completed" && e["item"].is_null())
        .map(|e| e["step"].as_str().unwrap())
        .collect();
    for step in [
        "flights",
        "hotel",
        "activities",
        "book_tours",
        "currency",
        "advice",
    ] {
        assert!(completed.contains(&step), "{step} in {completed:?}");
    }
    // A step event is the host's step metadata schema (`StepUpdate`) with `event`.
    let hotel = events
        .iter()
        .find(|e| e["event"] == "step" && e["step"] == "hotel" && e["state"] == "input-required")
        .unwrap_or_else(|| panic!("the hotel step asks: {out}"));
    let update: a2a_orchestrator::host::detail::StepUpdate =
        serde_json::from_value(hotel.clone()).unwrap();
    assert!(update.downstream_task_id.is_some(), "{hotel}");
    assert_eq!(update.agent.as_deref(), Some("hotels"), "{hotel}");
    let output = events.iter().find(|e| e["event"] == "output").unwrap();
    let result = output["text"].as_str().unwrap();
    assert!(result.starts_with("# Tokyo from Paris"), "{result}");
    assert!(result.contains("Tokyo temples circuit"), "{result}");
    assert_eq!(output["data"]["currency"]["to"], "JPY");
    // Chunks of one artifact arrive in order: the text of flights' chunks joins up.
    let flights: String = events
        .iter()
        .filter(|e| e["event"] == "artifact" && e["step"] == "flights")
        .flat_map(|e| e["parts"].as_array().unwrap().clone())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect();
    assert!(
        flights.starts_with("Outbound") && flights.ends_with("each."),
        "{flights}"
    );

    // Bad input: named, and nothing is run.
    let bad = orchestrator(&[
        "run",
        "travel-planning",
        "--agents",
        agents,
        "-i",
        "origin=Paris",
    ])
    .await;
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("destination") && err.contains("depart"),
        "{err}"
    );
    fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_cancels_instead_of_hanging_when_a_question_cannot_be_answered_automatically() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-input-step");
    std::fs::create_dir_all(&dir).unwrap();
    let workflow = dir.join("ask.toml");
    std::fs::write(
        &workflow,
        r#"[workflow]
id = "ask"
description = "Asks for a room"

[steps.room]
kind = "input"
prompt = "Which room?"
fields = { room = { type = "integer", required = true } }
timeout = "1h"

[output]
text = "room {{ steps.room.data.room }}"
"#,
    )
    .unwrap();
    let agents = dir.join("agents.toml");
    std::fs::write(&agents, "").unwrap();
    let o = orchestrator(&[
        "run",
        workflow.to_str().unwrap(),
        "--agents",
        agents.to_str().unwrap(),
        "--yes",
    ])
    .await;
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("cannot be answered automatically"), "{out}");
    assert!(out.contains("workflow canceled"), "{out}");
}

/// Issue 75: `run` without a terminal decides nothing by itself. An approval nobody
/// answers (no `--yes`, no `--answer`) cancels the run, saying how to answer it, and
/// the step it guards never reaches its agent; `--answer STEP=VALUE` answers it, and
/// says so.
#[tokio::test(flavor = "multi_thread")]
async fn run_without_a_terminal_answers_nothing_by_itself() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    let it = crate::util::counting::counting("order", Duration::from_millis(5), &seen).await;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-decides-nothing");
    std::fs::create_dir_all(&dir).unwrap();
    let workflow = dir.join("laptop.toml");
    std::fs::write(
        &workflow,
        r#"[workflow]
id = "laptop"
description = "An approval, then an order"

[steps.approve]
kind = "approval"
prompt = "Order a laptop?"

[steps.order]
agent = "it"
needs = ["approve"]
when = "steps.approve.data.approved"
message = "order a laptop"
"#,
    )
    .unwrap();
    let agents = dir.join("agents.toml");
    std::fs::write(&agents, format!("[agents.it]\nurl = \"{}\"\n", it.url)).unwrap();
    let (workflow, agents) = (workflow.to_str().unwrap(), agents.to_str().unwrap());
    for json in [false, true] {
        let mut args = vec!["run", workflow, "--agents", agents];
        if json {
            args.push("--json");
        }
        let o = orchestrator(&args).await;
        let out = text(&o);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(
            out.contains("Order a laptop?") && out.contains("--answer approve=ANSWER"),
            "the question, and how to answer it: {out}"
        );
        assert!(!out.contains("answered automatically"), "{out}");
        assert!(seen.lock().unwrap().is_empty(), "nothing ordered: {out}");
    }
    let o = orchestrator(&[
        "run",
        workflow,
        "--agents",
        agents,
        "--answer",
        "approve=yes",
    ])
    .await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("answered as given: yes"), "{out}");
    assert_eq!(seen.lock().unwrap().values().sum::<u32>(), 1, "{out}");
}

/// `validate | head`, `agents | head`: a reader that goes away ends the output quietly
/// and successfully — no panic, no error, exit 0 — as with any Unix tool.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    for args in [
        &["validate"][..],
        &["graph", "employee-onboarding"],
        &["agents"],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
            .args(args)
            .current_dir(ROOT)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the first line is written.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked") && !stderr.contains("error"),
            "{args:?}: {} {stderr}",
            out.status
        );
    }
}

/// Bad input to `run` exits 2, as the README says, with what was wrong.
#[tokio::test]
async fn run_exits_2_on_bad_input() {
    for (args, says) in [
        (&["run", "no-such-workflow"][..], "no-such-workflow"),
        (
            &["run", "travel-planning", "-i", "no-equals-sign"],
            "no-equals-sign",
        ),
        (
            &[
                "run",
                "travel-planning",
                "--input-json",
                "no/such/file.json",
            ],
            "no/such/file.json",
        ),
    ] {
        let out = orchestrator(args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(says) && stderr.contains("nothing was run"),
            "{stderr}"
        );
    }
}

/// An example binary built beside the tests.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

/// `echo_agent --help` prints its usage instead of starting a server, and a port taken
/// already is said plainly, with the address.
#[test]
fn echo_agent_helps_and_names_a_taken_port() {
    let out = std::process::Command::new(example("echo_agent"))
        .arg("--help")
        .output()
        .expect("the echo_agent example is built with the tests");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("usage: echo_agent"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = std::process::Command::new(example("echo_agent"))
        .arg(&port)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")) && !stderr.contains("Os {"),
        "{stderr}"
    );
    let out = std::process::Command::new(example("echo_agent"))
        .arg("not-a-port")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The README's exit codes, one row at a time, in several commands: 2 for bad input
/// (nothing done), 1 for a failure of what the command did, 0 for done.
#[test]
fn exit_codes_are_the_readmes() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
            .args(args)
            .current_dir(ROOT)
            .env_remove("A2A_TEST_UNSET_TOKEN")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (args, says) in [
        (&["serve", "--lease", "abc"][..], "--lease"),
        (&["serve", "--store", "mysql://db/x"], "--store"),
        (&["serve", "--no-such-flag"], "--no-such-flag"),
        (&["graph", "no-such-workflow"], "no-such-workflow"),
        (
            &["send", "http://127.0.0.1:9/", "hi", "--data", "[1]"],
            "--data",
        ),
        (
            &[
                "send",
                "http://127.0.0.1:9/",
                "hi",
                "--bearer-token-env",
                "A2A_TEST_UNSET_TOKEN",
            ],
            "A2A_TEST_UNSET_TOKEN",
        ),
        (&["run", "no-such-workflow"], "no-such-workflow"),
        (
            &["bench", "--baseline", "target/no-such-build"],
            "target/no-such-build: no such file",
        ),
        (
            &[
                "bench",
                "--baseline",
                "x",
                "--replicas",
                "2",
                "--postgres",
                "u",
            ],
            "--baseline",
        ),
        (
            &["bench", "--stores", "memory,nowhere"],
            "--stores nowhere: unknown store",
        ),
        (
            &["bench", "--stores", "memory", "--baseline", "x"],
            "--stores",
        ),
        (&["bench", "--agent-http", "tls"], "--agent-http"),
        (
            &["bench", "--peer", "target/no-such-peer"],
            "target/no-such-peer: no such file",
        ),
        (&["bench", "--peer", "x", "--baseline", "y"], "--peer"),
    ] {
        let (code, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?} is bad input: {stderr}");
        assert!(stderr.contains(says), "{args:?} names {says}: {stderr}");
    }
    // What the command did failed: the agent cannot be reached.
    let (code, stderr) = run(&["card", "http://127.0.0.1:9/"]);
    assert_eq!(code, Some(1), "{stderr}");
    // Done.
    let (code, stderr) = run(&["validate"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Calls to agents go through the proxy that `HTTP_PROXY` names, as curl's do, except to
/// the hosts `NO_PROXY` lists; without either, they go straight to the agent (the
/// suite's other tests).
#[tokio::test(flavor = "multi_thread")]
async fn agents_are_called_through_the_proxy_the_environment_names() {
    use axum::body::Body;
    use axum::extract::Request;
    use std::sync::{Arc, Mutex};

    let agent = echo(0).await;
    // A forwarding proxy: it notes each request's target (absolute-form, as a client
    // sends it to a proxy) and passes it on.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let noted = seen.clone();
    let direct = a2a::https::reqwest_client_builder()
        .no_proxy()
        .build()
        .unwrap();
    let proxy = axum::Router::new().fallback(move |req: Request| {
        let (noted, direct) = (noted.clone(), direct.clone());
        async move {
            let (parts, body) = req.into_parts();
            noted.lock().unwrap().push(parts.uri.to_string());
            let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let resp = direct
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .unwrap();
            let mut answer = axum::http::Response::builder().status(resp.status());
            for (name, value) in resp.headers() {
                if name != "transfer-encoding" && name != "connection" {
                    answer = answer.header(name, value);
                }
            }
            answer.body(Body::from_stream(resp.bytes_stream())).unwrap()
        }
    });
    let proxy = crate::util::serve_router(proxy).await;

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-through-proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let workflow = dir.join("say.toml");
    std::fs::write(
        &workflow,
        "[workflow]\nid = \"say\"\ndescription = \"Says it\"\n\n[steps.say]\nagent = \"echo\"\nmessage = \"through the proxy\"\n",
    )
    .unwrap();
    let agents = dir.join("agents.toml");
    std::fs::write(&agents, format!("[agents.echo]\nurl = \"{}\"\n", agent.url)).unwrap();
    let run = |no_proxy: &str| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"));
        command
            .args(["run", workflow.to_str().unwrap(), "--agents"])
            .arg(&agents)
            .env("HTTP_PROXY", &proxy)
            .env("NO_PROXY", no_proxy)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        async move {
            tokio::time::timeout(Duration::from_secs(120), command.output())
                .await
                .expect("the run finished")
                .unwrap()
        }
    };

    let o = run("").await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("through the proxy"), "{out}");
    let through: Vec<String> = seen.lock().unwrap().clone();
    assert!(
        through.iter().any(|u| u.starts_with(&agent.url)),
        "the agent's calls went to it directly, not through the proxy: {through:?}"
    );

    // The agent's host listed in NO_PROXY: straight to it.
    seen.lock().unwrap().clear();
    let o = run("127.0.0.1").await;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("through the proxy"), "{out}");
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new());
}

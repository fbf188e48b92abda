//! The engine driving real agents over HTTP through the A2A connector: our echo agent
//! (streamed and polled) and the official Python SDK agent; artifacts forwarded live;
//! a downstream question answered on the same task; a timeout and a cancel that reach
//! the agent's task; and a stream that drops mid-way, resumed with no chunk lost or
//! repeated; a finished task's stream read to its end.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a::card::AgentCapabilities;
use a2a::client::{A2aClient, ClientConfig};
use a2a::server::{A2aServer, ServerConfig};
use a2a::types::{GetTaskRequest, TaskState};
use a2a_orchestrator::connect::A2aConnector;
use a2a_orchestrator::registry::config::load_str;
use a2a_orchestrator::registry::{Registry, RegistryOptions};
use axum::body::Body;
use futures::StreamExt;
use orchestrator_core::engine::*;
use orchestrator_core::workflow::{self, Options};
use serde_json::Map;

use crate::echo_agent::{EchoAgent, echo_card};
use crate::util::{echo, python_agent, serve};

async fn engine_for(agents: &[(&str, &str)]) -> Engine {
    let toml: String = agents
        .iter()
        .map(|(n, u)| format!("[agents.{n}]\nurl = \"{u}\"\n"))
        .collect();
    let (file, diags) = load_str("agents.toml", &toml);
    assert!(diags.is_empty(), "{diags:?}");
    let registry =
        Registry::discover(&file.unwrap(), &HashMap::new(), RegistryOptions::default()).await;
    for s in registry.statuses() {
        assert!(!s.health.is_unavailable(), "{}: {}", s.name, s.health);
    }
    Engine::new(
        Arc::new(A2aConnector::new(registry)),
        EngineOptions::default(),
    )
}

fn workflow(toml: &str) -> Arc<workflow::Workflow> {
    let (wf, diags) = workflow::load_str(
        "t.toml",
        &format!("[workflow]\nid = \"t\"\ndescription = \"d\"\n{toml}"),
        Options::default(),
    );
    Arc::new(wf.unwrap_or_else(|| panic!("{diags:#?}")))
}

async fn run_to_end(handle: &mut RunHandle) -> Vec<RunEvent> {
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), handle.events.recv())
            .await
            .expect("the run goes on")
            .expect("the run ends with a final event");
        let end = matches!(&e, RunEvent::Run { state, .. } if state.is_terminal());
        events.push(e);
        if end {
            return events;
        }
    }
}

fn final_state(events: &[RunEvent]) -> (RunState, Option<String>) {
    match events.last() {
        Some(RunEvent::Run { state, message }) => (*state, message.clone()),
        other => panic!("{other:?}"),
    }
}

/// The text a consumer of the live artifact events would assemble for `step`.
fn assembled(events: &[RunEvent], step: &str) -> String {
    let mut text = String::new();
    for e in events {
        if let RunEvent::Artifact { step: s, chunk, .. } = e
            && s.as_str() == step
        {
            if !chunk.append {
                text.clear();
            }
            for p in &chunk.parts {
                if let Content::Text(t) = p {
                    text.push_str(t);
                }
            }
        }
    }
    text
}

fn task_ids(events: &[RunEvent], step: &str) -> Vec<String> {
    let mut ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Step {
                step: s,
                task_id: Some(t),
                ..
            } if s.as_str() == step => Some(t.clone()),
            _ => None,
        })
        .collect();
    ids.dedup();
    ids
}

fn start(engine: &Engine, wf: Arc<workflow::Workflow>) -> RunHandle {
    engine
        .start(wf, &Map::new(), format!("run-{}", uuid::Uuid::new_v4()))
        .unwrap()
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn real_agents_stream_artifacts_live_and_results_flow_downstream() {
    let one = echo(5).await;
    let two = echo(0).await;
    let py = python_agent(0.01).await;
    let engine = engine_for(&[("one", &one.url), ("two", &two.url), ("py", &py.url)]).await;
    let wf = workflow(
        "[steps.a]\nagent = \"one\"\nmessage = \"alpha beta gamma\"\n\
         [steps.b]\nagent = \"py\"\nmessage = \"delta epsilon\"\n\
         [steps.c]\nagent = \"two\"\nneeds = [\"a\", \"b\"]\nmessage = \"{{ steps.a.text }} + {{ steps.b.text }}\"\n",
    );
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    let chunks: Vec<(String, String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Artifact {
                step, agent, chunk, ..
            } if step.as_str() == "a" => {
                Some((agent.clone(), chunk.artifact_id.clone(), chunk.append))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        chunks,
        [
            ("one".into(), "echo".into(), false),
            ("one".into(), "echo".into(), true),
            ("one".into(), "echo".into(), true)
        ],
        "each chunk forwarded with its agent, artifact id and append flag"
    );
    assert_eq!(
        assembled(&events, "b"),
        "delta epsilon",
        "the Python SDK agent's chunks"
    );
    assert_eq!(assembled(&events, "c"), "alpha beta gamma + delta epsilon");
}

#[tokio::test]
async fn agents_without_streaming_are_polled() {
    let agent = serve(
        EchoAgent {
            word_delay: Duration::from_millis(20),
        },
        |u| {
            let mut card = echo_card(u);
            card.capabilities = Some(AgentCapabilities::default());
            card
        },
        ServerConfig::default(),
    )
    .await;
    let engine = engine_for(&[("plain", &agent.url)]).await;
    let wf = workflow(
        "[steps.a]\nagent = \"plain\"\nmessage = \"polled words arrive\"\n[output]\ntext = \"{{ steps.a.text }}\"\n",
    );
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed);
    assert_eq!(assembled(&events, "a"), "polled words arrive");
    assert!(events.contains(&RunEvent::Output {
        text: Some("polled words arrive".into()),
        data: None
    }));
}

#[tokio::test]
async fn a_question_from_a_real_agent_is_answered_on_the_same_task() {
    let agent = echo(0).await;
    let engine = engine_for(&[("echo", &agent.url)]).await;
    let wf = workflow("[steps.ask]\nagent = \"echo\"\nmessage = \"please ask me\"\n");
    let mut handle = start(&engine, wf);
    loop {
        match handle.events.recv().await.unwrap() {
            RunEvent::Question {
                step, kind, prompt, ..
            } => {
                assert_eq!(step.as_str(), "ask");
                assert_eq!(
                    kind,
                    QuestionKind::Downstream {
                        agent: "echo".into(),
                        auth: false
                    }
                );
                assert_eq!(prompt, "What should I echo?");
                break;
            }
            RunEvent::Run { state, .. } if state.is_terminal() => {
                panic!("ended without a question")
            }
            _ => {}
        }
    }
    handle
        .control
        .answer(Some("ask"), None, Answer::text("the answer"))
        .await
        .unwrap();
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed);
    assert_eq!(assembled(&events, "ask"), "the answer");
    assert_eq!(
        task_ids(&events, "ask").len(),
        1,
        "one downstream task throughout"
    );
}

async fn downstream_state(url: &str, task: &str) -> TaskState {
    let (client, _) = A2aClient::connect(url, ClientConfig::default())
        .await
        .unwrap();
    client
        .get_task(&GetTaskRequest::new(task))
        .await
        .unwrap()
        .status()
        .state()
}

#[tokio::test]
async fn a_timeout_cancels_the_task_at_the_agent() {
    let agent = echo(300).await;
    let engine = engine_for(&[("slow", &agent.url)]).await;
    let words = (0..20)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let wf = workflow(&format!(
        "[steps.a]\nagent = \"slow\"\nmessage = \"{words}\"\ntimeout = \"500ms\"\n"
    ));
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    let (state, message) = final_state(&events);
    assert_eq!(state, RunState::Failed);
    assert!(message.unwrap().contains("timed out after 500ms"));
    let ids = task_ids(&events, "a");
    assert_eq!(ids.len(), 1);
    assert_eq!(
        downstream_state(&agent.url, &ids[0]).await,
        TaskState::Canceled,
        "the agent saw tasks/cancel"
    );
}

#[tokio::test]
async fn cancel_reaches_every_running_task_at_the_agents() {
    let one = echo(200).await;
    let two = echo(200).await;
    let engine = engine_for(&[("one", &one.url), ("two", &two.url)]).await;
    let words = (0..50)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let wf = workflow(&format!(
        "[steps.a]\nagent = \"one\"\nmessage = \"{words}\"\n[steps.b]\nagent = \"two\"\nmessage = \"{words}\"\n"
    ));
    let mut handle = start(&engine, wf);
    let mut tasks: HashMap<String, String> = HashMap::new();
    while tasks.len() < 2 {
        if let RunEvent::Step {
            step,
            task_id: Some(t),
            ..
        } = handle.events.recv().await.unwrap()
        {
            tasks.insert(step.to_string(), t);
        }
    }
    handle.control.cancel();
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Canceled);
    assert_eq!(
        downstream_state(&one.url, &tasks["a"]).await,
        TaskState::Canceled
    );
    assert_eq!(
        downstream_state(&two.url, &tasks["b"]).await,
        TaskState::Canceled
    );
}

#[tokio::test]
async fn a_dropped_stream_is_resumed_with_no_chunk_lost_or_repeated() {
    // The agent sits behind a proxy that cuts every message/stream response after a few
    // SSE frames; resubscriptions pass through whole.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let inner = A2aServer::new(
        EchoAgent {
            word_delay: Duration::from_millis(30),
        },
        echo_card(&base),
    )
    .router();
    let resubscribes = Arc::new(AtomicUsize::new(0));
    let seen = resubscribes.clone();
    let proxy_inner = inner.clone();
    let proxy = axum::Router::new()
        .route(
            "/",
            axum::routing::post(move |body: axum::body::Bytes| {
                let inner = proxy_inner.clone();
                let seen = seen.clone();
                async move {
                    let text = String::from_utf8_lossy(&body).to_string();
                    let request = axum::http::Request::post("/")
                        .header("content-type", "application/json")
                        .body(Body::from(body))
                        .unwrap();
                    let response = tower::ServiceExt::oneshot(inner, request).await.unwrap();
                    if text.contains("tasks/resubscribe") {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                    if text.contains("message/stream") {
                        let (parts, body) = response.into_parts();
                        let cut = body.into_data_stream().take(4);
                        return axum::response::Response::from_parts(parts, Body::from_stream(cut));
                    }
                    response
                }
            }),
        )
        .fallback_service(inner);
    tokio::spawn(async move { axum::serve(listener, proxy).await });

    let engine = engine_for(&[("flaky", &base)]).await;
    let words: Vec<String> = (0..12).map(|i| format!("word{i}")).collect();
    let text = words.join(" ");
    let wf = workflow(&format!(
        "[steps.a]\nagent = \"flaky\"\nmessage = \"{text}\"\n"
    ));
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    assert!(
        resubscribes.load(Ordering::SeqCst) >= 1,
        "the connector resubscribed"
    );
    assert_eq!(assembled(&events, "a"), text, "every chunk once, in order");
    let parts: usize = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Artifact { chunk, .. } => Some(chunk.parts.len()),
            _ => None,
        })
        .sum();
    assert_eq!(parts, words.len(), "no part forwarded twice");
}

/// Sets its flag when dropped after `armed` was set: the SSE body below was read to
/// its end (hyper drops an unfinished body too, but before the last item).
struct Finished {
    armed: bool,
    flag: Arc<AtomicUsize>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        if self.armed {
            self.flag.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_stream_is_read_to_its_end() {
    // An agent whose stream stays open a moment after the task's final event (as a
    // server's may until it flushes and closes). Dropping it unfinished costs an
    // HTTP/1.1 connection, or an HTTP/2 reset; the connector reads it to the end.
    let finished = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    // An A2A 0.3 agent: its events below are 0.3's.
    let mut card = echo_card(&url);
    card.supported_interfaces[0].protocol_version = "0.3".into();
    let card = card.to_json();
    let flag = finished.clone();
    let rpc = move |axum::Json(request): axum::Json<serde_json::Value>| {
        let flag = flag.clone();
        async move {
            let id = request["id"].clone();
            let task = |state: &str, fin: bool| {
                let result = if fin {
                    serde_json::json!({"kind": "status-update", "taskId": "t1", "contextId": "c1",
                        "status": {"state": state}, "final": true})
                } else {
                    serde_json::json!({"kind": "task", "id": "t1", "contextId": "c1",
                        "status": {"state": state}})
                };
                let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
                Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(format!(
                    "data: {line}\n\n"
                )))
            };
            let events = vec![task("working", false), task("completed", true)];
            let guard = Finished { armed: false, flag };
            let tail = futures::stream::unfold(Some(guard), |guard| async move {
                let mut guard = guard?;
                tokio::time::sleep(Duration::from_millis(200)).await;
                guard.armed = true;
                drop(guard);
                None::<(
                    Result<axum::body::Bytes, std::convert::Infallible>,
                    Option<Finished>,
                )>
            });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(futures::stream::iter(events).chain(tail)))
                .unwrap()
        }
    };
    let router = axum::Router::new()
        .route("/", axum::routing::post(rpc))
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || async move { axum::Json(card) }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await });

    let engine = engine_for(&[("one", &url)]).await;
    let mut handle = start(
        &engine,
        workflow("[steps.a]\nagent = \"one\"\nmessage = \"hi\"\n"),
    );
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the stream was read to its end"
    );
}

/// A non-streaming agent accepts the message, then the connection drops before its
/// answer arrives: the retry sends the same message id, the agent answers with the task
/// it already made, and the step completes with one downstream task, not one a retry.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_a_dropped_answer_does_not_run_the_step_twice() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let mut card = echo_card(&url);
    card.capabilities = Some(AgentCapabilities::default());
    let server = A2aServer::new(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        card,
    );
    let dropped = Arc::new(AtomicUsize::new(0));
    let router = {
        let dropped = dropped.clone();
        server.router().layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let dropped = dropped.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = http_body_util::BodyExt::collect(body)
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    // The send, in either generation's name.
                    let send = bytes.windows(12).any(|w| w == b"message/send")
                        || bytes.windows(13).any(|w| w == b"\"SendMessage\"");
                    let resp = next
                        .run(axum::extract::Request::from_parts(parts, Body::from(bytes)))
                        .await;
                    if send && dropped.fetch_add(1, Ordering::SeqCst) == 0 {
                        // The agent has the task; its answer is lost on the way back.
                        let broken = futures::stream::once(async {
                            Err::<bytes::Bytes, _>(std::io::Error::other("connection dropped"))
                        });
                        return axum::response::Response::new(Body::from_stream(broken));
                    }
                    resp
                }
            },
        ))
    };
    tokio::spawn(async move { axum::serve(listener, router).await });
    let engine = engine_for(&[("solo", &url)]).await;
    let wf = workflow(
        "[steps.only]\nagent = \"solo\"\nmessage = \"just once\"\nretry = { max_attempts = 3, initial = \"50ms\" }\n",
    );
    let mut handle = engine
        .start(wf, &Map::new(), format!("run-{}", uuid::Uuid::new_v4()))
        .unwrap();
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    assert!(
        dropped.load(Ordering::SeqCst) >= 2,
        "the answer was dropped, then sent again"
    );
    let tasks: serde_json::Value = crate::util::http()
        .post(&url)
        .header("A2A-Version", "1.0")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        tasks["result"]["totalSize"], 1,
        "one downstream task: {tasks}"
    );
}

/// An agent written with the official SDK 1.x and its defaults — A2A v1.0 only, a card
/// with `supportedInterfaces` and no v0.3 fields — is discovered and orchestrated: its
/// streamed chunks arrive live and in order, and its question is answered on its task.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_v1_only_sdk_agent_is_discovered_streamed_and_asked() {
    v1_sdk_agent_streamed_and_asked(crate::util::python_v1_agent(0.01).await).await;
}

/// The same over HTTP+JSON: the SDK's REST routes alone.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_v1_sdk_agent_over_http_json_is_streamed_and_asked() {
    v1_sdk_agent_streamed_and_asked(crate::util::python_v1_rest_agent(0.01).await).await;
}

/// The same over gRPC: an agent whose card offers only the SDK's gRPC service.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_grpc_only_sdk_agent_is_streamed_and_asked() {
    v1_sdk_agent_streamed_and_asked(crate::util::python_v1_grpc_agent(0.01).await).await;
}

/// The same with the JavaScript SDK's gRPC server (@grpc/grpc-js) as the agent.
#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_grpc_only_js_sdk_agent_is_streamed_and_asked() {
    v1_sdk_agent_streamed_and_asked(crate::util::js_agent(10, "grpc").await).await;
}

async fn v1_sdk_agent_streamed_and_asked(py: crate::util::SdkAgent) {
    let engine = engine_for(&[("v1", &py.url)]).await;
    let wf = workflow(
        "[steps.words]\nagent = \"v1\"\nmessage = \"one two three\"\n\
         [steps.asked]\nagent = \"v1\"\nmessage = \"please ask me\"\n",
    );
    let mut handle = start(&engine, wf);
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), handle.events.recv())
            .await
            .expect("the run goes on")
            .expect("the run ends with a final event");
        if let RunEvent::Question { step, .. } = &e {
            assert_eq!(step.as_str(), "asked");
            handle
                .control
                .answer(
                    Some("asked"),
                    None,
                    Answer {
                        text: Some("echo this back".into()),
                        data: None,
                        by: None,
                    },
                )
                .await
                .unwrap();
        }
        let end = matches!(&e, RunEvent::Run { state, .. } if state.is_terminal());
        events.push(e);
        if end {
            break;
        }
    }
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    let appends: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Artifact { step, chunk, .. } if step.as_str() == "words" => {
                Some(chunk.append)
            }
            _ => None,
        })
        .collect();
    assert_eq!(appends, [false, true, true], "three chunks, live, in order");
    assert_eq!(assembled(&events, "words"), "one two three");
    assert_eq!(assembled(&events, "asked"), "echo this back");
}

/// A cancel reaches the v1.0-only agent's task (`CancelTask`), which ends canceled.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_a_v1_only_sdk_agent() {
    cancel_reaches_v1_sdk_agent(crate::util::python_v1_agent(0.2).await).await;
}

/// The same over HTTP+JSON (`POST /tasks/{id}:cancel`).
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_a_v1_sdk_agent_over_http_json() {
    cancel_reaches_v1_sdk_agent(crate::util::python_v1_rest_agent(0.2).await).await;
}

/// The same over gRPC (`CancelTask`).
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_a_v1_sdk_agent_over_grpc() {
    cancel_reaches_v1_sdk_agent(crate::util::python_v1_grpc_agent(0.2).await).await;
}

/// The same to the JavaScript SDK's gRPC server (`CancelTask` through @grpc/grpc-js).
#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_a_js_sdk_agent_over_grpc() {
    cancel_reaches_v1_sdk_agent(crate::util::js_agent(200, "grpc").await).await;
}

/// A step whose task the SDK agent fails is sent again and completes: over JSON-RPC and
/// over HTTP+JSON.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_v1_sdk_agent_is_retried_on_both_bindings() {
    let (rpc, rest) = tokio::join!(
        crate::util::python_v1_agent(0.0),
        crate::util::python_v1_rest_agent(0.0)
    );
    let engine = engine_for(&[("rpc", &rpc.url), ("rest", &rest.url)]).await;
    let wf = workflow(
        "[steps.a]\nagent = \"rpc\"\nmessage = \"fail once then work\"\nretry = { max_attempts = 2, initial = \"10ms\" }\n\
         [steps.b]\nagent = \"rest\"\nmessage = \"fail once then work\"\nretry = { max_attempts = 2, initial = \"10ms\" }\n",
    );
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    for step in ["a", "b"] {
        assert_eq!(assembled(&events, step), "fail once then work");
        let retried = events
            .iter()
            .any(|e| matches!(e, RunEvent::Step { step: s, attempt: 2, .. } if s.as_str() == step));
        assert!(retried, "{step} was retried: {events:#?}");
    }
}

/// The stream of a step on an SDK 1.x agent breaks mid-way (a proxy cuts the
/// connection): the step resubscribes (SubscribeToTask; over HTTP+JSON
/// `POST /tasks/{id}:subscribe`) and its artifact is whole, each chunk once.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_stream_from_a_v1_sdk_agent_is_resumed_without_loss_or_repeats() {
    let ((rpc, rpc_cuts), (rest, rest_cuts)) = tokio::join!(
        crate::util::python_v1_agent_behind_a_cut(0.1, "jsonrpc", b"SendStreamingMessage", 4),
        crate::util::python_v1_agent_behind_a_cut(0.1, "rest", b"message:stream", 4),
    );
    let engine = engine_for(&[("rpc", &rpc.url), ("rest", &rest.url)]).await;
    let text = "one two three four five six seven";
    let wf = workflow(&format!(
        "[steps.a]\nagent = \"rpc\"\nmessage = \"{text}\"\n[steps.b]\nagent = \"rest\"\nmessage = \"{text}\"\n"
    ));
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    assert_eq!(
        rpc_cuts.load(Ordering::SeqCst),
        1,
        "the JSON-RPC stream was cut"
    );
    assert_eq!(
        rest_cuts.load(Ordering::SeqCst),
        1,
        "the HTTP+JSON stream was cut"
    );
    for step in ["a", "b"] {
        assert_eq!(assembled(&events, step), text, "{step}: {events:#?}");
        let attempts: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Step {
                    step: s, attempt, ..
                } if s.as_str() == step => Some(*attempt),
                _ => None,
            })
            .collect();
        assert!(
            attempts.iter().all(|a| *a == 1),
            "{step} was resumed, not sent again: {attempts:?}"
        );
    }
}

/// The same over gRPC: the SDK's gRPC stream is broken off (UNAVAILABLE) after four
/// events; the step resubscribes (gRPC `SubscribeToTask`) and its artifact is whole,
/// each chunk once.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_grpc_stream_is_resumed_without_loss_or_repeats() {
    let py = crate::util::python_v1_agent_with(0.1, &[("CUT_STREAM_AFTER", "4")], "grpc").await;
    let engine = engine_for(&[("g", &py.url)]).await;
    let text = "one two three four five six seven";
    let wf = workflow(&format!("[steps.a]\nagent = \"g\"\nmessage = \"{text}\"\n"));
    let mut handle = start(&engine, wf);
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Completed, "{events:#?}");
    assert!(
        py.output.lock().unwrap().iter().any(|l| l == "CUT"),
        "the gRPC stream was cut"
    );
    assert_eq!(assembled(&events, "a"), text, "{events:#?}");
    let attempts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Step { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert!(
        attempts.iter().all(|a| *a == 1),
        "resumed, not sent again: {attempts:?}"
    );
}

async fn cancel_reaches_v1_sdk_agent(agent: crate::util::SdkAgent) {
    let engine = engine_for(&[("v1", &agent.url)]).await;
    let words = (0..50)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let wf = workflow(&format!(
        "[steps.long]\nagent = \"v1\"\nmessage = \"{words}\"\n"
    ));
    let mut handle = start(&engine, wf);
    let task = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let RunEvent::Step {
                task_id: Some(t), ..
            } = handle.events.recv().await.expect("the step starts")
            {
                break t;
            }
        }
    })
    .await
    .expect("the step reaches the agent");
    handle.control.cancel();
    let events = run_to_end(&mut handle).await;
    assert_eq!(final_state(&events).0, RunState::Canceled);
    let (client, _) = A2aClient::connect(&agent.url, ClientConfig::default())
        .await
        .unwrap();
    assert_eq!(client.version(), a2a::Version::V1_0);
    let state = client
        .get_task(&GetTaskRequest::new(task))
        .await
        .unwrap()
        .status()
        .state();
    assert_eq!(
        state,
        TaskState::Canceled,
        "the agent's own task was canceled"
    );
}

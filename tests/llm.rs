//! The optional language model, end to end: the orchestrator (and an example agent) talk
//! to a local OpenAI-compatible chat-completions server that the tests start on
//! loopback, scripted per test — a JSON answer, a stream of tokens, an error status, a
//! broken stream, or no answer at all. Nothing here needs a real model or a key.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::client::A2aClient;
use a2a::types::*;
use a2a_orchestrator::llm::LlmConfig;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::util::orchestra::{Orchestra, client, orchestra_with, result_text, task};

/// What the fake model does with one request.
#[derive(Clone)]
enum Answer {
    /// A complete answer whose text is this.
    Text(String),
    /// A streamed answer: these tokens, this long apart.
    Tokens(Vec<&'static str>, Duration),
    /// A streamed answer that breaks off after these tokens.
    Broken(Vec<&'static str>),
    /// An HTTP error with an OpenAI-style error body.
    Status(u16),
    /// No answer for a minute.
    Hang,
}

type Script = Arc<dyn Fn(&Value) -> Answer + Send + Sync>;

#[derive(Clone)]
struct Fake {
    script: Script,
    seen: Arc<Mutex<Vec<Value>>>,
}

/// A running fake model: its base URL (`.../v1`) and the requests it received.
struct FakeModel {
    base_url: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    fn config(&self, timeout: Duration) -> LlmConfig {
        let mut c = LlmConfig::new(&self.base_url, "test-model");
        c.timeout = timeout;
        c
    }

    fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

/// What a request asks for: "route", "inputs" (structured output), or "stream".
fn purpose(body: &Value) -> &str {
    if body["stream"] == json!(true) {
        return "stream";
    }
    body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or("?")
}

fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

async fn completions(State(fake): State<Fake>, Json(body): Json<Value>) -> Response {
    fake.seen.lock().unwrap().push(body.clone());
    let answer = (fake.script)(&body);
    match answer {
        Answer::Text(text) => Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "test-model",
            "choices": [{ "index": 0, "finish_reason": "stop",
                          "message": { "role": "assistant", "content": text } }],
        }))
        .into_response(),
        Answer::Status(code) => (
            axum::http::StatusCode::from_u16(code).unwrap(),
            Json(json!({ "error": { "message": "the model is overloaded", "type": "server_error", "param": null, "code": null } })),
        )
            .into_response(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Json(json!({})).into_response()
        }
        Answer::Tokens(tokens, gap) => {
            // What the answer used, when asked, as OpenAI's API says it: a last chunk
            // with no choices.
            let used = (body["stream_options"]["include_usage"] == json!(true))
                .then(|| (user_text(&body).len().div_ceil(4), tokens.len()));
            sse(tokens, gap, false, used)
        }
        Answer::Broken(tokens) => sse(tokens, Duration::ZERO, true, None),
    }
}

fn chunk(token: &str) -> String {
    let c = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "test-model",
        "choices": [{ "index": 0, "delta": { "content": token }, "finish_reason": null }],
    });
    format!("data: {c}\n\n")
}

fn sse(
    tokens: Vec<&'static str>,
    gap: Duration,
    broken: bool,
    used: Option<(usize, usize)>,
) -> Response {
    let used = used.map(|(prompt, completion)| {
        let c = json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "test-model",
            "choices": [],
            "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion },
        });
        Ok::<_, std::io::Error>(format!("data: {c}\n\n"))
    });
    let body = futures::stream::iter(tokens)
        .then(move |t| async move {
            tokio::time::sleep(gap).await;
            Ok::<_, std::io::Error>(chunk(t))
        })
        .chain(futures::stream::iter(used))
        .chain(futures::stream::once(async move {
            if broken {
                Err(std::io::Error::other("the connection broke"))
            } else {
                Ok("data: [DONE]\n\n".to_owned())
            }
        }));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

async fn fake_model(script: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> FakeModel {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake {
        script: Arc::new(script),
        seen: seen.clone(),
    };
    let router = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(fake);
    let url = crate::util::serve_router(router).await;
    FakeModel {
        base_url: format!("{url}/v1"),
        seen,
    }
}

const TRIP: &str = r#"
[workflow]
id = "trip"
name = "Trip planner"
description = "Plans a trip to a city"
tags = ["trip", "travel"]
examples = ["Plan a trip to Rome"]
[input]
destination = { type = "string", description = "The city", required = true }
nights = { type = "integer", description = "Nights there", default = 3 }
[steps.plan]
agent = "one"
message = "trip to {{ input.destination }} for {{ input.nights }} nights"
[output]
text = "{{ steps.plan.text }}"
"#;

const HIRE: &str = r#"
[workflow]
id = "hire"
name = "Onboarding"
description = "Onboards a new employee"
tags = ["onboarding", "employee"]
[input]
name = { type = "string", required = true }
[steps.welcome]
agent = "one"
message = "welcome {{ input.name }}"
[output]
text = "{{ steps.welcome.text }}"
"#;

const STORY: &str = r#"
[workflow]
id = "story"
name = "Story"
description = "Writes a story about a topic"
[input]
topic = { type = "string", required = true }
[steps.facts]
agent = "one"
message = "facts about {{ input.topic }}"
[steps.story]
kind = "llm"
needs = ["facts"]
system = "You write short stories."
prompt = "Write a story about {{ input.topic }} using: {{ steps.facts.text }}"
fallback = "A story about {{ input.topic }} could not be written."
[output]
text = "{{ steps.story.text }}"
"#;

/// An orchestrator with the trip and hire workflows using `model` (answers within
/// `timeout`), and a client of it; keep the first alive while the second is used.
async fn trip_or_hire(model: &FakeModel, timeout: Duration) -> (Orchestra, A2aClient) {
    let config = model.config(timeout);
    let o = orchestra_with(&[TRIP, HIRE], 0, move |c| c.llm = Some(config)).await;
    let (c, _) = client(&o.url).await;
    (o, c)
}

/// A free-text message (no workflow named).
fn free_text(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

fn data_message(data: Value) -> SendMessageRequest {
    let mut m = Message::user_text("");
    m.parts = vec![Part::data(data.as_object().unwrap().clone())];
    SendMessageRequest::new(m)
}

#[tokio::test]
async fn the_model_routes_free_text_and_extracts_the_inputs() {
    let model = fake_model(|body| match purpose(body) {
        "route" => Answer::Text(r#"{"workflow": "trip"}"#.into()),
        "inputs" => Answer::Text(r#"{"destination": "Lisbon", "nights": 5}"#.into()),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let (_o, c) = trip_or_hire(&model, Duration::from_secs(10)).await;
    // Nothing here names a workflow or an input: the words match neither workflow.
    let t = task(
        c.send_message(&free_text("Five nights in Lisbon, please"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::Completed, "{t:?}");
    assert_eq!(result_text(&t), "trip to Lisbon for 5 nights");

    let seen = model.requests();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert_eq!(purpose(&seen[0]), "route");
    let route_prompt = user_text(&seen[0]);
    assert!(
        route_prompt.contains("Five nights in Lisbon, please")
            && route_prompt.contains("Plans a trip to a city")
            && route_prompt.contains("Onboards a new employee"),
        "the model is shown the request and every workflow: {route_prompt}"
    );
    assert_eq!(
        seen[0]["response_format"]["json_schema"]["schema"]["properties"]["workflow"]["enum"],
        json!(["trip", "hire", "none"])
    );
    assert_eq!(purpose(&seen[1]), "inputs");
    let schema = &seen[1]["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["properties"]["nights"]["type"], "integer");
    assert_eq!(seen[1]["model"], "test-model");
}

#[tokio::test]
async fn extracted_values_failing_the_input_check_are_asked_for() {
    let model = fake_model(|body| match purpose(body) {
        "route" => Answer::Text(r#"{"workflow": "trip"}"#.into()),
        // A wrong type, an input that does not exist, and a null.
        "inputs" => Answer::Text(
            r#"{"destination": "Lisbon", "nights": "five", "hotel": "any", "pets": null}"#.into(),
        ),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let (_o, c) = trip_or_hire(&model, Duration::from_secs(10)).await;
    let t = task(
        c.send_message(&free_text("Lisbon for five nights"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::InputRequired, "{t:?}");
    let asked = t.status().message.as_ref().unwrap().text();
    assert!(
        asked.contains("`nights` must be an integer, got a string"),
        "{asked}"
    );
    assert!(
        !asked.contains("hotel"),
        "unknown keys are dropped: {asked}"
    );

    // The answer (structured: no model needed) completes the inputs.
    let mut answer = data_message(json!({ "nights": 5 }));
    answer.message.as_mut().unwrap().task_id = t.id.clone();
    answer.message.as_mut().unwrap().context_id = t.context_id.clone();
    let t = task(c.send_message(&answer).await.unwrap());
    assert_eq!(t.status().state(), TaskState::Completed, "{t:?}");
    assert_eq!(result_text(&t), "trip to Lisbon for 5 nights");
    assert_eq!(
        model.requests().len(),
        2,
        "a data part is not sent to the model"
    );
}

#[tokio::test]
async fn a_model_answering_garbage_leaves_routing_and_inputs_to_the_rules() {
    let model = fake_model(|body| match purpose(body) {
        "route" => Answer::Text("Sure! I think you want the trip one.".into()),
        "inputs" => Answer::Text(r#"["Lisbon"]"#.into()),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let (_o, c) = trip_or_hire(&model, Duration::from_secs(10)).await;
    // The words match the trip workflow's tags; the inputs are in `name: value` lines.
    let t = task(
        c.send_message(&free_text("A trip please\ndestination: Porto"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::Completed, "{t:?}");
    assert_eq!(result_text(&t), "trip to Porto for 3 nights");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_model_that_fails_or_times_out_leaves_it_to_the_rules() {
    let model = fake_model(|body| match purpose(body) {
        "route" => Answer::Status(500),
        "inputs" => Answer::Hang,
        other => panic!("unexpected request {other}"),
    })
    .await;
    let (_o, c) = trip_or_hire(&model, Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    let t = task(
        c.send_message(&free_text("onboarding for an employee"))
            .await
            .unwrap(),
    );
    // Routed by its words to `hire`; asked for the name the model never gave.
    assert_eq!(t.status().state(), TaskState::InputRequired, "{t:?}");
    let asked = t.status().message.as_ref().unwrap().text();
    assert!(
        asked.contains("To run `hire`") && asked.contains("`name` is required"),
        "{asked}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the model's timeout bounds the wait"
    );
    // (async-openai retries a server error itself, within the timeout.)
    let purposes: Vec<String> = model
        .requests()
        .iter()
        .map(|b| purpose(b).to_owned())
        .collect();
    assert!(purposes.starts_with(&["route".to_owned()]), "{purposes:?}");
    assert_eq!(
        purposes.last().map(String::as_str),
        Some("inputs"),
        "{purposes:?}"
    );
}

#[tokio::test]
async fn the_model_saying_none_fits_asks_which_workflow() {
    let model = fake_model(|body| match purpose(body) {
        "route" => Answer::Text(r#"{"workflow": "none"}"#.into()),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let (_o, c) = trip_or_hire(&model, Duration::from_secs(10)).await;
    let t = task(
        c.send_message(&free_text("What is the weather like?"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::InputRequired, "{t:?}");
    let asked = t.status().message.as_ref().unwrap().text();
    assert!(asked.contains("Which workflow should I run?"), "{asked}");
}

/// Every event of a `message/stream` call running the story workflow (about owls) on an
/// orchestrator using `model`.
async fn story_events(model: &FakeModel) -> Vec<StreamEvent> {
    let config = model.config(Duration::from_secs(10));
    let o = orchestra_with(&[STORY], 0, move |c| c.llm = Some(config)).await;
    let (c, _) = client(&o.url).await;
    c.send_message_stream(&data_message(
        json!({ "workflow": "story", "input": { "topic": "owls" } }),
    ))
    .await
    .unwrap()
    .map(|e| e.unwrap())
    .collect()
    .await
}

/// The artifact-update events of `step`'s llm artifact, in arrival order.
fn llm_chunks(events: &[StreamEvent], step: &str) -> Vec<(String, bool, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArtifactUpdate(a)
                if a.artifact().artifact_id.as_str() == format!("{step}/text") =>
            {
                Some((parts_text(&a.artifact().parts), a.append, a.last_chunk))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_llm_step_streams_its_tokens_to_a_message_stream_client_in_order() {
    let model = fake_model(|body| match purpose(body) {
        "stream" => Answer::Tokens(
            vec!["Once", " upon", " a", " time", "."],
            Duration::from_millis(30),
        ),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let events = story_events(&model).await;
    let chunks = llm_chunks(&events, "story");
    assert_eq!(
        chunks,
        [
            ("Once".to_owned(), false, false),
            (" upon".to_owned(), true, false),
            (" a".to_owned(), true, false),
            (" time".to_owned(), true, false),
            (".".to_owned(), true, true),
        ],
        "one chunk per token, in order, the first new, the last marked"
    );
    let StreamEvent::StatusUpdate(last) = events.last().unwrap() else {
        panic!("{events:?}")
    };
    assert_eq!(last.status().state(), TaskState::Completed);
    let result = events
        .iter()
        .rev()
        .find_map(|e| match e {
            StreamEvent::ArtifactUpdate(a) if a.artifact().artifact_id.as_str() == "result" => {
                Some(parts_text(&a.artifact().parts))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(result, "Once upon a time.");
    // The model got the rendered system and user prompts, with the upstream result.
    let seen = model.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0]["messages"][0]["content"],
        "You write short stories."
    );
    assert_eq!(
        user_text(&seen[0]),
        "Write a story about owls using: facts about owls"
    );
}

#[tokio::test]
async fn an_llm_step_whose_model_breaks_off_is_replaced_by_its_fallback() {
    let model = fake_model(|body| match purpose(body) {
        "stream" => Answer::Broken(vec!["Once", " upon"]),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let events = story_events(&model).await;
    let chunks = llm_chunks(&events, "story");
    let last = chunks.last().unwrap();
    assert_eq!(
        last,
        &(
            "A story about owls could not be written.".to_owned(),
            false,
            true
        ),
        "the fallback replaces what was written: {chunks:?}"
    );
    let StreamEvent::StatusUpdate(end) = events.last().unwrap() else {
        panic!("{events:?}")
    };
    assert_eq!(
        end.status().state(),
        TaskState::Completed,
        "never a failed task because of the model alone"
    );
}

/// Issue 80: an llm step's account. The model's own count of the answer's tokens (asked
/// for with `stream_options.include_usage`) is priced as `[llm] price` says and added
/// to the step's and the run's usage, with the call.
#[tokio::test]
async fn an_llm_steps_tokens_are_counted_and_priced_as_the_model_reports_them() {
    let model = fake_model(|body| match purpose(body) {
        "stream" => Answer::Tokens(vec!["Owls", " hoot."], Duration::ZERO),
        other => panic!("unexpected request {other}"),
    })
    .await;
    let config = model.config(Duration::from_secs(10));
    let pricing = a2a_orchestrator::registry::price::Pricing {
        price: a2a_orchestrator::registry::price::Price {
            input_per_million: 100.0,
            output_per_million: 1000.0,
            per_call: 0.5,
            reported: false,
        },
        currency: Some("EUR".into()),
    };
    let o = orchestra_with(&[STORY], 0, move |c| {
        c.llm = Some(config);
        c.llm_price = Some(pricing);
    })
    .await;
    let (c, _) = client(&o.url).await;
    let t = task(
        c.send_message(&data_message(
            json!({ "workflow": "story", "input": { "topic": "owls" } }),
        ))
        .await
        .unwrap(),
    );
    assert_eq!(result_text(&t), "Owls hoot.");
    assert_eq!(model.requests()[0]["stream_options"]["include_usage"], true);
    let detail = &t.metadata.unwrap().into_map()["run"];
    let story = (detail["steps"].as_array().unwrap().iter())
        .find(|s| s["step"] == "story")
        .unwrap();
    let prompt = "Write a story about owls using: facts about owls"
        .len()
        .div_ceil(4) as f64;
    let u = &story["usage"];
    assert_eq!(
        (&u["calls"], &u["inputTokens"], &u["outputTokens"]),
        (&json!(1), &json!(prompt as u64), &json!(2)),
        "{story:#}"
    );
    let cost = u["cost"].as_f64().unwrap();
    assert!(
        (cost - (prompt * 1e-4 + 2.0 * 1e-3 + 0.5)).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(detail["currency"], "EUR");
    assert_eq!(detail["usage"]["inputTokens"], json!(prompt as u64));
}

#[tokio::test]
async fn without_a_model_an_llm_step_writes_its_fallback() {
    let o = orchestra_with(&[STORY], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let t = task(
        c.send_message(&data_message(
            json!({ "workflow": "story", "input": { "topic": "owls" } }),
        ))
        .await
        .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::Completed, "{t:?}");
    assert_eq!(result_text(&t), "A story about owls could not be written.");
}

#[tokio::test]
async fn an_example_agent_writes_its_answer_with_the_model() {
    use a2a_orchestrator::agents::{Behaviour, Fleet, Set};
    let model = fake_model(|body| match purpose(body) {
        "stream" => {
            assert!(user_text(body).contains("Facts (JSON)"), "{body}");
            Answer::Tokens(vec!["Take", " the", " train."], Duration::ZERO)
        }
        other => panic!("unexpected request {other}"),
    })
    .await;
    let llm = a2a_orchestrator::llm::Llm::new(model.config(Duration::from_secs(10)));
    let behaviour = Behaviour {
        latency: Duration::ZERO,
        chunk_delay: Duration::ZERO,
        ..Default::default()
    };
    // The currency desk also gives travel advice.
    let only = ["currency".to_owned()];
    let fleet = Fleet::start_only(
        &[Set::Travel],
        &only,
        behaviour,
        "127.0.0.1",
        a2a_orchestrator::agents::Ports::Free,
        Some(&llm),
        a2a_orchestrator::agents::Speaks::Both,
    )
    .await
    .unwrap();
    let (c, _) = client(&fleet.agents[0].1).await;
    let t = task(
        c.send_message(&free_text("Travel advice for Lisbon from London"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status().state(), TaskState::Completed, "{t:?}");
    let text: String = t.artifacts.iter().map(|a| parts_text(&a.parts)).collect();
    assert!(text.starts_with("Take the train."), "{text}");
    assert_eq!(model.requests().len(), 1);
    fleet.shutdown().await;
}

/// A model server behind which hostile answers wait: a redirect elsewhere (to a server
/// that records whether the key reached it), an answer of 5 MiB, and a stream that
/// goes on past 4 MiB. The client follows no redirect and reads no answer past 4 MiB,
/// whole or streamed; each says what was wrong.
#[tokio::test]
async fn a_hostile_model_server_is_bounded_and_never_gets_the_key_elsewhere() {
    use a2a_orchestrator::llm::{Llm, LlmError};

    let keys_elsewhere: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = keys_elsewhere.clone();
    let elsewhere = crate::util::serve_router(axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap| {
            let seen = seen.clone();
            async move {
                let key = headers
                    .get("authorization")
                    .map(|v| v.to_str().unwrap_or("?").to_owned());
                seen.lock().unwrap().push(key.unwrap_or_default());
                Json(json!({}))
            }
        },
    ))
    .await;
    let huge = "x".repeat(5 << 20);
    let hostile = axum::Router::new()
        .route(
            "/redirect/v1/chat/completions",
            axum::routing::post(move || {
                let to = format!("{elsewhere}/v1/chat/completions");
                async move { axum::response::Redirect::temporary(&to) }
            }),
        )
        .route(
            "/huge/v1/chat/completions",
            axum::routing::post(move || {
                let text = huge.clone();
                async move {
                    Json(json!({
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
                        "choices": [{ "index": 0, "finish_reason": "stop",
                                      "message": { "role": "assistant", "content": text } }],
                    }))
                }
            }),
        )
        .route(
            "/endless/v1/chat/completions",
            axum::routing::post(|| async {
                let piece = "y".repeat(64 << 10);
                let body = futures::stream::repeat(piece)
                    .map(|p| Ok::<_, std::io::Error>(chunk_owned(&p)))
                    .take(100);
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(body))
                    .unwrap()
            }),
        );
    let url = crate::util::serve_router(hostile).await;
    let model = |path: &str| {
        let mut c = LlmConfig::new(format!("{url}/{path}/v1"), "m");
        c.api_key = Some("sk-secret".into());
        c.timeout = Duration::from_secs(20);
        Llm::new(c)
    };

    let redirected = model("redirect")
        .extract("hi", &json!({"type": "object"}))
        .await;
    let Err(LlmError::Endpoint(why)) = redirected else {
        panic!("a redirect is an error of the endpoint: {redirected:?}");
    };
    assert!(why.contains("307"), "{why}");
    assert!(
        keys_elsewhere.lock().unwrap().is_empty(),
        "the redirect was followed: {:?}",
        keys_elsewhere.lock().unwrap()
    );

    let whole = model("huge")
        .extract("hi", &json!({"type": "object"}))
        .await;
    let Err(LlmError::Malformed(why)) = whole else {
        panic!("a 5 MiB answer is refused: {whole:?}");
    };
    assert!(why.contains("longer than 4194304 bytes"), "{why}");

    let mut pieces = model("endless")
        .stream(None, "hi".into())
        .await
        .expect("the stream starts");
    let mut read = 0;
    let failure = loop {
        match pieces.next().await {
            Some(Ok(a2a_orchestrator::llm::Piece::Text(text))) => read += text.len(),
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("a 6 MiB stream ends with an error, not quietly ({read} bytes read)"),
        }
    };
    assert!(read <= 4 << 20, "{read} bytes read");
    assert!(
        failure.to_string().contains("longer than 4194304 bytes"),
        "{failure}"
    );
}

/// A streamed chunk whose text is `token`.
fn chunk_owned(token: &str) -> String {
    chunk(token)
}

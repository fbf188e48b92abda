//! The server's behaviour, driven by our own client over HTTP: blocking and
//! non-blocking sends, streams, concurrent subscribers, cancel, multi-turn, direct
//! replies, failing agents and push notifications.

use std::sync::Arc;
use std::time::Duration;

use a2a::RpcError;
use a2a::card::AgentCard;
use a2a::client::{A2aClient, ClientConfig, ClientError};
use a2a::server::{
    AgentExecutor, EventSink, NOTIFICATION_TOKEN_HEADER, RequestContext, ServerConfig,
};
use a2a::types::*;
use axum::http::HeaderMap;
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::echo_agent::echo_card;
use crate::util::{echo, serve, serve_router, serve_with};

async fn client(url: &str) -> A2aClient {
    let (client, _card) = A2aClient::connect(url, ClientConfig::default())
        .await
        .unwrap();
    client
}

fn send(text: &str, blocking: bool) -> SendMessageRequest {
    let mut p = SendMessageRequest::new(Message::user_text(text));
    p.configuration = Some(SendMessageConfiguration {
        return_immediately: !blocking,
        ..Default::default()
    });
    p
}

fn as_task(r: SendMessageResult) -> Task {
    match r {
        SendMessageResult::Task(t) => t,
        SendMessageResult::Message(m) => panic!("expected a task, got message {m:?}"),
    }
}

fn artifact_text(task: &Task) -> String {
    task.artifacts
        .iter()
        .map(|a| parts_text(&a.parts))
        .collect()
}

async fn wait_state(c: &A2aClient, id: &str, state: TaskState) -> Task {
    crate::util::eventually(
        &format!("task {id} reaching {state}"),
        Duration::from_secs(10),
        || async {
            let t = c.get_task(&GetTaskRequest::new(id)).await.unwrap();
            if t.status().state() == state {
                Ok(t)
            } else {
                Err(t.status().state())
            }
        },
    )
    .await
}

#[tokio::test]
async fn blocking_send_returns_the_finished_task() {
    let agent = echo(5).await;
    let c = client(&agent.url).await;
    let task = as_task(
        c.send_message(&send("the quick brown fox", true))
            .await
            .unwrap(),
    );
    assert_eq!(task.status().state(), TaskState::Completed);
    assert_eq!(artifact_text(&task), "the quick brown fox");
    assert_eq!(
        task.artifacts.len(),
        1,
        "chunks were appended to one artifact"
    );
    assert_eq!(task.history[0].text(), "the quick brown fox");
    assert_eq!(
        task.history[0].task_id, task.id,
        "the user message is bound to the task"
    );

    let mut p = send("history", true);
    p.configuration.as_mut().unwrap().history_length = Some(0);
    let task = as_task(c.send_message(&p).await.unwrap());
    assert!(
        task.history.is_empty(),
        "historyLength 0 returns no history"
    );
}

#[tokio::test]
async fn non_blocking_send_returns_at_once_and_work_goes_on() {
    let agent = echo(40).await;
    let c = client(&agent.url).await;
    let task = as_task(
        c.send_message(&send("a b c d e f g h i j", false))
            .await
            .unwrap(),
    );
    assert!(
        matches!(
            task.status().state(),
            TaskState::Submitted | TaskState::Working
        ),
        "{}",
        task.status().state()
    );
    let done = wait_state(&c, &task.id, TaskState::Completed).await;
    assert_eq!(artifact_text(&done), "a b c d e f g h i j");
}

#[tokio::test]
async fn stream_delivers_every_event_in_order() {
    let agent = echo(1).await;
    let c = client(&agent.url).await;
    let events: Vec<StreamEvent> = c
        .send_message_stream(&send("one two three", true))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    let kinds: Vec<&str> = events.iter().map(StreamEvent::kind).collect();
    assert_eq!(
        kinds,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    let chunks: Vec<(String, bool, bool)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArtifactUpdate(a) => {
                Some((parts_text(&a.artifact().parts), a.append, a.last_chunk))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        chunks,
        [
            ("one".to_owned(), false, false),
            (" two".to_owned(), true, false),
            (" three".to_owned(), true, true)
        ]
    );
    match events.last().unwrap() {
        StreamEvent::StatusUpdate(s) => {
            assert_eq!(s.status().state(), TaskState::Completed);
        }
        other => panic!("last event {other:?}"),
    }
}

#[tokio::test]
async fn concurrent_subscribers_all_see_the_whole_artifact_in_order() {
    let agent = echo(30).await;
    let c = client(&agent.url).await;
    let words: Vec<String> = (0..20).map(|i| format!("w{i}")).collect();
    let text = words.join(" ");
    let task = as_task(c.send_message(&send(&text, false)).await.unwrap());
    let mut subscribers = Vec::new();
    for _ in 0..4 {
        let c = c.clone();
        let id = task.id.clone();
        subscribers.push(tokio::spawn(async move {
            let mut stream = c.subscribe(&SubscribeToTaskRequest::new(id)).await.unwrap();
            // Assemble what this subscriber saw: the snapshot, then every chunk.
            let mut assembled = String::new();
            let mut last_state = None;
            while let Some(event) = stream.next().await {
                match event.unwrap() {
                    StreamEvent::Task(t) => {
                        assembled = artifact_text(&t);
                        last_state = Some(t.status().state());
                    }
                    StreamEvent::ArtifactUpdate(a) => {
                        if !a.append {
                            assembled.clear();
                        }
                        assembled.push_str(&parts_text(&a.artifact().parts));
                    }
                    StreamEvent::StatusUpdate(s) => last_state = Some(s.status().state()),
                    StreamEvent::Message(_) => {}
                }
            }
            (assembled, last_state)
        }));
        tokio::time::sleep(Duration::from_millis(45)).await;
    }
    for s in subscribers {
        let (assembled, last_state) = tokio::time::timeout(Duration::from_secs(20), s)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(assembled, text, "no chunk lost or duplicated");
        assert_eq!(last_state, Some(TaskState::Completed));
    }
}

#[tokio::test]
async fn cancel_stops_the_agent_and_ends_streams() {
    let agent = echo(50).await;
    let c = client(&agent.url).await;
    let words = (0..100)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let task = as_task(c.send_message(&send(&words, false)).await.unwrap());
    let mut watcher = c
        .subscribe(&SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    let canceled = c
        .cancel_task(&CancelTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(canceled.status().state(), TaskState::Canceled);
    let mut last = None;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), watcher.next())
        .await
        .unwrap()
    {
        last = Some(e.unwrap());
    }
    match last {
        Some(StreamEvent::StatusUpdate(s)) => assert_eq!(s.status().state(), TaskState::Canceled),
        other => panic!("the stream should end with the cancel, got {other:?}"),
    }
    let after = c
        .get_task(&GetTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(after.status().state(), TaskState::Canceled);
    assert!(
        artifact_text(&after).len() < words.len(),
        "the agent stopped early"
    );
    let err = c
        .cancel_task(&CancelTaskRequest::new(task.id))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32002);
}

#[tokio::test]
async fn input_required_then_continuation_on_the_same_task() {
    let agent = echo(0).await;
    let c = client(&agent.url).await;
    let task = as_task(c.send_message(&send("please ask me", true)).await.unwrap());
    assert_eq!(task.status().state(), TaskState::InputRequired);
    assert_eq!(
        task.status().message.as_ref().unwrap().text(),
        "What should I echo?"
    );
    let reply = Message::user_text("echo this").with_task(task.id.clone());
    let done = as_task(
        c.send_message(&SendMessageRequest::new(reply))
            .await
            .unwrap(),
    );
    assert_eq!(done.id, task.id);
    assert_eq!(done.context_id, task.context_id);
    assert_eq!(done.status().state(), TaskState::Completed);
    assert_eq!(artifact_text(&done), "echo this");
    let texts: Vec<String> = done.history.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        [
            "please ask me",
            "What should I echo?",
            "echo this",
            "echoing"
        ]
    );

    let wrong = Message::user_text("x")
        .with_task(task.id.clone())
        .with_context(ContextId::new("other"));
    let err = c
        .send_message(&SendMessageRequest::new(wrong))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32602);
}

/// Replies with a message (no task), fails, panics or does nothing, as the text says.
struct Scripted;

impl AgentExecutor for Scripted {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let fail = |e: a2a::server::SinkError| RpcError::internal(e.to_string());
        match ctx.message.text().as_str() {
            "reply" => events
                .reply(vec![a2a::types::Part::text("a direct answer")])
                .await
                .map_err(fail),
            "reject" => Err(RpcError::invalid_params(
                "message.parts",
                "I only take poems",
            )),
            "nothing" => Ok(()),
            "panic" => {
                events.working(None).await.map_err(fail)?;
                panic!("scripted panic");
            }
            "fail later" => {
                events.working(None).await.map_err(fail)?;
                Err(RpcError::internal("the backend went away"))
            }
            other => panic!("unexpected {other}"),
        }
    }
}

fn scripted_card(url: &str) -> AgentCard {
    let mut card = AgentCard::new("Scripted", "test agent", url);
    card.capabilities_mut().streaming = Some(true);
    card
}

#[tokio::test]
async fn agents_that_reply_fail_or_panic() {
    let agent = serve(Scripted, scripted_card, ServerConfig::default()).await;
    let c = client(&agent.url).await;

    match c.send_message(&send("reply", true)).await.unwrap() {
        SendMessageResult::Message(m) => {
            assert_eq!(m.text(), "a direct answer");
            assert_eq!(m.role(), Role::Agent);
        }
        other => panic!("{other:?}"),
    }
    let events: Vec<_> = c
        .send_message_stream(&send("reply", true))
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), 1);
    assert!(matches!(
        events[0].as_ref().unwrap(),
        StreamEvent::Message(_)
    ));
    let raw = crate::util::post_sse(
        &agent.url,
        &crate::util::rpc("message/stream", crate::util::text_params("reply")),
    )
    .await;
    assert_eq!(raw.len(), 1);
    crate::util::schema::assert_valid("SendStreamingMessageSuccessResponse", &raw[0]);
    crate::util::schema::assert_valid("Message", &raw[0]["result"]);

    let err = c.send_message(&send("reject", true)).await.unwrap_err();
    let rpc = err.rpc().unwrap();
    assert_eq!(rpc.code.0, -32602);
    assert!(rpc.message.contains("poems"));

    let err = c.send_message(&send("nothing", true)).await.unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32006);

    let failed = as_task(c.send_message(&send("panic", true)).await.unwrap());
    assert_eq!(failed.status().state(), TaskState::Failed);

    let failed = as_task(c.send_message(&send("fail later", true)).await.unwrap());
    assert_eq!(failed.status().state(), TaskState::Failed);
    assert_eq!(
        failed.status().message.as_ref().unwrap().text(),
        "the backend went away"
    );
}

/// A webhook on loopback (its URL, and the headers and body of each delivery) and an
/// echo agent whose server allows private webhooks.
async fn echo_with_webhook() -> (
    crate::util::Running,
    String,
    mpsc::Receiver<(HeaderMap, Value)>,
) {
    let (tx, rx) = mpsc::channel::<(HeaderMap, Value)>(64);
    let hook = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: HeaderMap, axum::Json(body): axum::Json<Value>| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send((headers, body)).await;
                    "ok"
                }
            },
        ),
    );
    let hook_url = format!("{}/hook", serve_router(hook).await);
    let config = ServerConfig {
        allow_private_webhooks: true,
        ..ServerConfig::default()
    };
    let agent = serve(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        config,
    )
    .await;
    (agent, hook_url, rx)
}

/// A config set with tasks/pushNotificationConfig/set on a task that is waiting for
/// input (no config until then) delivers the task's later state changes.
#[tokio::test]
async fn a_push_config_set_later_delivers_later_changes() {
    let (agent, hook_url, mut rx) = echo_with_webhook().await;
    let c = client(&agent.url).await;
    let task = as_task(c.send_message(&send("please ask me", true)).await.unwrap());
    assert_eq!(task.status().state(), TaskState::InputRequired);
    c.set_push_config(&TaskPushNotificationConfig {
        task_id: task.id.clone(),
        url: hook_url,
        ..Default::default()
    })
    .await
    .unwrap();
    let reply = Message::user_text("echo this").with_task(task.id.clone());
    let done = as_task(
        c.send_message(&SendMessageRequest::new(reply))
            .await
            .unwrap(),
    );
    assert_eq!(done.status().state(), TaskState::Completed);
    let mut states = Vec::new();
    while states.last().map(String::as_str) != Some("TASK_STATE_COMPLETED") {
        let (_, body) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no notification after {states:?}"))
            .unwrap();
        // Set by a v1.0 client: v1.0's StreamResponse body (§4.3.3).
        assert_eq!(body["task"]["id"], task.id.as_str(), "{body}");
        states.push(body["task"]["status"]["state"].as_str().unwrap().to_owned());
    }
    assert!(
        !states.contains(&"TASK_STATE_INPUT_REQUIRED".to_owned()),
        "{states:?}"
    );
}

#[tokio::test]
async fn push_notifications_reach_the_webhook_with_the_token() {
    let (agent, hook_url, mut rx) = echo_with_webhook().await;
    let c = client(&agent.url).await;

    let mut p = send("notify me", true);
    p.configuration
        .as_mut()
        .unwrap()
        .task_push_notification_config = Some(TaskPushNotificationConfig {
        url: hook_url.clone(),
        token: "secret-token".into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "hook-credential".into(),
        }),
        ..Default::default()
    });
    let task = as_task(c.send_message(&p).await.unwrap());
    let mut states = Vec::new();
    while states.last() != Some(&"TASK_STATE_COMPLETED".to_owned()) {
        let (headers, body) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(headers[NOTIFICATION_TOKEN_HEADER], "secret-token");
        assert_eq!(headers["authorization"], "Bearer hook-credential");
        assert_eq!(headers["content-type"], "application/a2a+json");
        // Set by a v1.0 client: a StreamResponse holding the task, as v1.0 reads it.
        assert_eq!(body["task"]["id"], task.id.as_str(), "{body}");
        let read: Task = serde_json::from_value(body["task"].clone()).unwrap();
        assert_eq!(read.id, task.id);
        states.push(body["task"]["status"]["state"].as_str().unwrap().to_owned());
    }
    assert!(
        states.contains(&"TASK_STATE_WORKING".to_owned()),
        "{states:?}"
    );

    // The config methods.
    let list = ListTaskPushNotificationConfigsRequest {
        task_id: task.id.clone(),
        ..Default::default()
    };
    let configs = c.list_push_configs(&list).await.unwrap().configs;
    assert_eq!(configs.len(), 1);
    let config_id = configs[0].id.clone();
    assert!(!config_id.is_empty());
    let second = c
        .set_push_config(&TaskPushNotificationConfig {
            task_id: task.id.clone(),
            id: "second".into(),
            url: hook_url,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(second.id, "second");
    let got = c
        .get_push_config(&GetTaskPushNotificationConfigRequest {
            task_id: task.id.clone(),
            id: "second".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(got, second);
    c.delete_push_config(&DeleteTaskPushNotificationConfigRequest {
        task_id: task.id.clone(),
        id: config_id,
        ..Default::default()
    })
    .await
    .unwrap();
    let left = c.list_push_configs(&list).await.unwrap().configs;
    assert_eq!(left, vec![second]);

    let bad = c
        .set_push_config(&TaskPushNotificationConfig {
            task_id: task.id,
            url: "ftp://example.com/x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    // v1.0's request is the config itself.
    assert_eq!(bad.rpc().unwrap().field().unwrap(), "url");
}

#[tokio::test]
async fn authenticated_extended_card() {
    let agent = serve_with(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        |url| {
            let mut card = echo_card(url);
            card.capabilities_mut().extended_agent_card = Some(true);
            card
        },
        |b| {
            let mut extended = echo_card("http://unused/");
            extended.description = "the extended description".into();
            b.extended_card(extended)
        },
    )
    .await;
    let c = client(&agent.url).await;
    let card = c.get_authenticated_extended_card().await.unwrap();
    assert_eq!(card.description, "the extended description");
}

#[tokio::test]
async fn shutdown_cancels_running_agents_and_ends_streams() {
    let agent = echo(200).await;
    let c = client(&agent.url).await;
    let words = (0..100)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut stream = c.send_message_stream(&send(&words, true)).await.unwrap();
    stream.next().await.unwrap().unwrap();
    let server = Arc::new(agent.server);
    tokio::time::timeout(Duration::from_secs(15), server.shutdown())
        .await
        .expect("shutdown is bounded");
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        let mut n = 0;
        while stream.next().await.is_some() {
            n += 1;
        }
        n
    })
    .await
    .expect("the stream ends at shutdown");
    assert!(rest < 100, "the agent stopped");
}

#[tokio::test]
async fn client_errors_keep_the_code() {
    let agent = echo(0).await;
    let c = client(&agent.url).await;
    let err = c
        .get_task(&GetTaskRequest::new(TaskId::new("missing")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Rpc(ref e) if e.code.0 == -32001),
        "{err}"
    );
}

#[tokio::test]
async fn idle_streams_carry_keep_alive_comments() {
    let config = ServerConfig {
        keep_alive: Duration::from_millis(50),
        ..ServerConfig::default()
    };
    let agent = serve(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::from_millis(400),
        },
        echo_card,
        config,
    )
    .await;
    let resp = crate::util::http()
        .post(&agent.url)
        .json(&crate::util::rpc(
            "message/stream",
            crate::util::text_params("slow words"),
        ))
        .send()
        .await
        .unwrap();
    let body = tokio::time::timeout(Duration::from_secs(20), resp.text())
        .await
        .unwrap()
        .unwrap();
    let comments = body.lines().filter(|l| l.starts_with(':')).count();
    assert!(
        comments >= 1,
        "no keep-alive comment while the agent was idle:\n{body}"
    );
    assert!(
        body.contains("\"final\":true"),
        "the stream still ends normally"
    );
}

#[tokio::test]
async fn webhooks_on_private_addresses_are_refused_unless_allowed() {
    let agent = echo(0).await;
    let c = client(&agent.url).await;
    let task = as_task(c.send_message(&send("x", true)).await.unwrap());
    let set = |url: &str| TaskPushNotificationConfig {
        task_id: task.id.clone(),
        url: url.into(),
        ..Default::default()
    };
    for url in [
        "http://127.0.0.1:9000/hook",
        "http://10.1.2.3/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://localhost:8080/hook",
        "http://metadata.google.internal/",
    ] {
        let err = c.set_push_config(&set(url)).await.unwrap_err();
        let rpc = err.rpc().unwrap_or_else(|| panic!("{url}: {err}"));
        assert_eq!(rpc.code.0, -32602, "{url}");
        assert_eq!(
            rpc.field().unwrap(),
            "url",
            "{url}: v1.0's request is the config"
        );
        assert!(rpc.message.contains("refused"), "{url}: {}", rpc.message);
    }
    c.set_push_config(&set("https://203.0.113.10/hook"))
        .await
        .unwrap();

    // Inline configs in message/send are checked the same way.
    let mut p = send("x", true);
    p.configuration
        .as_mut()
        .unwrap()
        .task_push_notification_config = Some(set("http://127.0.0.1/h"));
    let err = c.send_message(&p).await.unwrap_err();
    assert_eq!(
        err.rpc().unwrap().field().unwrap(),
        "configuration.taskPushNotificationConfig.url"
    );
}

/// Queues its events without waiting for each to be stored, then one more after the
/// task ended, and reports that one's outcome.
struct Queuing {
    late: mpsc::UnboundedSender<Result<(), String>>,
}

impl AgentExecutor for Queuing {
    async fn execute(&self, _ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let fail = |e: a2a::server::SinkError| RpcError::internal(e.to_string());
        let mut queued = vec![
            events
                .queue(events.status_update(a2a::types::TaskState::Working, None))
                .await
                .map_err(fail)?,
        ];
        for i in 0..50 {
            let chunk = events.artifact_update(
                a2a::types::Artifact::new(
                    ArtifactId::new("count"),
                    vec![a2a::types::Part::text(format!("{i},"))],
                ),
                i > 0,
                i == 49,
            );
            queued.push(events.queue(chunk).await.map_err(fail)?);
        }
        queued.push(
            events
                .queue(events.status_update(a2a::types::TaskState::Completed, None))
                .await
                .map_err(fail)?,
        );
        let late = events
            .queue(events.status_update(a2a::types::TaskState::Working, None))
            .await
            .map_err(fail)?;
        for q in queued {
            q.outcome().await.map_err(fail)?;
        }
        let _ = self
            .late
            .send(late.outcome().await.map_err(|e| e.to_string()));
        Ok(())
    }
}

#[tokio::test]
async fn queued_events_are_applied_in_order_and_a_late_one_is_refused() {
    let (late, mut outcome) = mpsc::unbounded_channel();
    let agent = serve(Queuing { late }, scripted_card, ServerConfig::default()).await;
    let c = client(&agent.url).await;
    let task = as_task(c.send_message(&send("count", true)).await.unwrap());
    assert_eq!(task.status().state(), TaskState::Completed);
    let expected: String = (0..50).map(|i| format!("{i},")).collect();
    assert_eq!(artifact_text(&task), expected);
    let late = tokio::time::timeout(Duration::from_secs(10), outcome.recv())
        .await
        .unwrap()
        .unwrap();
    let why = late.unwrap_err();
    assert!(why.contains("completed"), "{why}");
}

/// A webhook that answers with a redirect is not followed: nothing reaches the second
/// address and the notification token never leaves for another host.
#[tokio::test]
async fn webhook_redirects_are_not_followed() {
    let (stolen_tx, mut stolen) = tokio::sync::mpsc::channel::<axum::http::HeaderMap>(8);
    let thief = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let tx = stolen_tx.clone();
        async move {
            let _ = tx.send(headers).await;
            "thanks"
        }
    });
    let thief_url = format!("{}/steal", crate::util::serve_router(thief).await);
    let (hit_tx, mut hits) = tokio::sync::mpsc::channel::<()>(8);
    let hook = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let (tx, to) = (hit_tx.clone(), thief_url.clone());
            async move {
                let _ = tx.send(()).await;
                axum::response::Redirect::temporary(&to)
            }
        }),
    );
    let hook_url = format!("{}/hook", crate::util::serve_router(hook).await);
    let agent = serve(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        ServerConfig {
            allow_private_webhooks: true,
            ..ServerConfig::default()
        },
    )
    .await;
    let c = client(&agent.url).await;
    let mut p = send("redirect me", true);
    p.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(TaskPushNotificationConfig {
            url: hook_url,
            token: "secret-token".into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    c.send_message(&p).await.unwrap();
    // A notification is tried three times: each answered with the redirect.
    for _ in 0..3 {
        tokio::time::timeout(Duration::from_secs(10), hits.recv())
            .await
            .expect("the webhook was called")
            .unwrap();
    }
    // The last attempt has had time to follow its redirect, had it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        stolen.try_recv().is_err(),
        "nothing reached the redirect's target"
    );
}

/// A client that opens connections and dawdles over its headers holds them only until
/// the header timeout, and meanwhile everyone else is served.
#[tokio::test(flavor = "multi_thread")]
async fn slow_half_open_connections_are_closed_and_others_still_served() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/");
    let config = ServerConfig {
        header_read_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let server = a2a::server::A2aServer::builder(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card(&url),
    )
    .config(config)
    .build();
    tokio::spawn(server.serve(listener, std::future::pending()));
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-")
            .await
            .unwrap();
        slow.push(s);
    }
    // Served meanwhile.
    let c = client(&url).await;
    c.send_message(&send("still served", true)).await.unwrap();
    // Every dawdler is closed soon after the timeout.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        for s in &mut slow {
            let mut buf = [0u8; 1024];
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => continue,
                }
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the half-open connections were closed");
}

/// Issue 33: a `messageId` sent again is answered with the task it started only when it
/// is the same message (parts, conversation) from the same caller (credential); a
/// different message, conversation or caller reusing the id is refused with an
/// invalid-params error naming `messageId`, and never gets the earlier task. With
/// idempotency off, every message starts a task of its own.
#[tokio::test]
async fn a_repeated_message_id_returns_the_task_only_for_the_same_message_and_caller() {
    use a2a::client::ClientAuth;
    use a2a::server::InboundAuth;
    let config = ServerConfig {
        auth: Some(InboundAuth::unnamed(
            vec!["token-a".into(), "token-b".into()],
            None,
        )),
        ..ServerConfig::default()
    };
    let agent = crate::echo_agent::EchoAgent {
        word_delay: Duration::ZERO,
    };
    let running = serve(agent, echo_card, config).await;
    let as_caller = |token: &str| {
        let config = ClientConfig {
            auth: Some(ClientAuth::Bearer(token.into())),
            ..ClientConfig::default()
        };
        let url = running.url.clone();
        async move { A2aClient::connect(&url, config).await.unwrap().0 }
    };
    let a = as_caller("token-a").await;
    let b = as_caller("token-b").await;
    let message = |text: &str, context: &str| {
        let mut m = Message::user_text(text);
        m.message_id = "m-reused".into();
        m.context_id = context.into();
        SendMessageRequest::new(m)
    };
    let first = as_task(
        a.send_message(&message("hello there", "ctx-a"))
            .await
            .unwrap(),
    );
    // The same message from the same caller: the same task (a retry).
    let again = as_task(
        a.send_message(&message("hello there", "ctx-a"))
            .await
            .unwrap(),
    );
    assert_eq!(again.id, first.id);
    // Also without the context it was sent in (the task's own is implied).
    let mut bare = Message::user_text("hello there");
    bare.message_id = "m-reused".into();
    let again = as_task(
        a.send_message(&SendMessageRequest::new(bare))
            .await
            .unwrap(),
    );
    assert_eq!(again.id, first.id);
    // Anything else reusing the id is refused, naming the field.
    let refusals = [
        (
            "other parts",
            a.send_message(&message("something else", "ctx-a")).await,
        ),
        (
            "another conversation",
            a.send_message(&message("hello there", "ctx-b")).await,
        ),
        (
            "another caller",
            b.send_message(&message("hello there", "ctx-a")).await,
        ),
    ];
    for (what, outcome) in refusals {
        match outcome {
            Err(ClientError::Rpc(e)) => {
                assert_eq!(e.code, a2a::ErrorCode::INVALID_PARAMS, "{what}");
                assert!(e.message.contains("messageId"), "{what}: {}", e.message);
                assert!(
                    !e.message.contains(first.id.as_str()),
                    "{what}: no task id leaks"
                );
            }
            other => panic!("{what}: refused, not answered with a task: {other:?}"),
        }
    }

    // Idempotency off: the same message twice starts two tasks.
    let config = ServerConfig {
        message_idempotency: false,
        ..ServerConfig::default()
    };
    let agent = crate::echo_agent::EchoAgent {
        word_delay: Duration::ZERO,
    };
    let fresh = serve(agent, echo_card, config).await;
    let c = client(&fresh.url).await;
    let one = as_task(
        c.send_message(&message("hello there", "ctx-a"))
            .await
            .unwrap(),
    );
    let two = as_task(
        c.send_message(&message("hello there", "ctx-a"))
            .await
            .unwrap(),
    );
    assert_ne!(one.id, two.id);
}

/// Issue 37: the card is served with `Cache-Control`, a strong `ETag` and
/// `Last-Modified`; a request naming its ETag in `If-None-Match` gets 304 without a
/// body, one naming another gets the card.
#[tokio::test]
async fn the_card_carries_validators_and_answers_conditional_requests() {
    let agent = echo(0).await;
    let url = format!("{}.well-known/agent-card.json", agent.url);
    let http = crate::util::http();
    let first = http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let h = first.headers().clone();
    assert_eq!(h["cache-control"], "public, max-age=300");
    let etag = h["etag"].to_str().unwrap().to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 10,
        "{etag}"
    );
    let modified = h["last-modified"].to_str().unwrap();
    assert!(modified.ends_with(" GMT"), "{modified}");
    let card: Value = first.json().await.unwrap();
    assert_eq!(card["name"], "Echo");

    let again = http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty());

    let other = http
        .get(&url)
        .header("if-none-match", "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    // The legacy path serves the same card, with the same validators.
    let legacy = http
        .get(format!("{}.well-known/agent.json", agent.url))
        .send()
        .await
        .unwrap();
    assert_eq!(legacy.headers()["etag"].to_str().unwrap(), etag);
}

/// An application's rule, from an attribute its principals carry: `reach = "readAll"`
/// reads every task, `"steerAll"` does anything with every task.
struct ByReach;

impl a2a::server::Authorize for ByReach {
    fn lets(
        &self,
        caller: &a2a::server::Caller,
        _task: Option<&a2a::store::StoredTask>,
        access: a2a::server::Access,
    ) -> bool {
        let reach = caller.principal().and_then(|p| p.attributes.get("reach"));
        match reach.and_then(serde_json::Value::as_str) {
            Some("steerAll") => true,
            Some("readAll") => access == a2a::server::Access::Read,
            _ => false,
        }
    }
}

/// Issue 35: a task belongs to the principal who started it. Another principal gets
/// `TaskNotFoundError` for everything about it (get, cancel, subscribe, a message to
/// it, push configs) and does not see it listed, unless the application's authorizer
/// lets it in: a viewer reads every task but steers none of others'; an operator reads
/// and steers every task.
#[tokio::test]
async fn a_task_is_its_initiators_and_others_reach_it_only_as_the_application_lets_them() {
    use a2a::client::ClientAuth;
    use a2a::server::{Credential, InboundAuth, Principal};
    let person = |name: &str, reach: &str| {
        let mut p = Principal::new(None, format!("token:{name}"), name);
        p.attributes.insert("reach".into(), reach.into());
        Credential {
            secret: format!("{name}-token"),
            principal: Arc::new(p),
        }
    };
    let config = ServerConfig {
        auth: Some(InboundAuth {
            bearer: vec![
                person("alice", "own"),
                person("bob", "own"),
                person("vera", "readAll"),
                person("olga", "steerAll"),
            ],
            authorize: Some(Arc::new(ByReach)),
            ..InboundAuth::default()
        }),
        ..ServerConfig::default()
    };
    let agent = crate::echo_agent::EchoAgent {
        word_delay: Duration::ZERO,
    };
    let running = serve(agent, echo_card, config).await;
    let as_caller = |name: &str| {
        let config = ClientConfig {
            auth: Some(ClientAuth::Bearer(format!("{name}-token"))),
            ..ClientConfig::default()
        };
        let url = running.url.clone();
        async move { A2aClient::connect(&url, config).await.unwrap().0 }
    };
    let (alice, bob, vera, olga) = (
        as_caller("alice").await,
        as_caller("bob").await,
        as_caller("vera").await,
        as_caller("olga").await,
    );
    // Alice's task waits for her answer.
    let task = as_task(
        alice
            .send_message(&SendMessageRequest::new(Message::user_text("ask me")))
            .await
            .unwrap(),
    );
    assert_eq!(task.status().state(), TaskState::InputRequired);
    let id = SubscribeToTaskRequest::new(&task.id);
    let cancel = CancelTaskRequest::new(&task.id);
    let push_list = ListTaskPushNotificationConfigsRequest {
        task_id: task.id.clone(),
        ..Default::default()
    };
    let not_found = |what: &str, outcome: Result<(), ClientError>| match outcome {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, a2a::ErrorCode::TASK_NOT_FOUND, "{what}: {e:?}")
        }
        other => panic!("{what}: expected TaskNotFoundError, got {other:?}"),
    };
    let answer = || {
        let mut m = Message::user_text("echo this");
        m.task_id = task.id.clone();
        SendMessageRequest::new(m)
    };
    let push = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        url: "https://hooks.example.com/a2a".into(),
        ..Default::default()
    };
    let listed = |c: A2aClient| async move {
        let page = c.list_tasks(&ListTasksRequest::default()).await.unwrap();
        page.tasks.into_iter().map(|t| t.id).collect::<Vec<_>>()
    };

    // Bob reaches nothing of it, and is told nothing of it.
    not_found(
        "get",
        bob.get_task(&GetTaskRequest::new(task.id.clone()))
            .await
            .map(drop),
    );
    not_found("cancel", bob.cancel_task(&cancel).await.map(drop));
    // A stream's error is its one event.
    let first_event = match bob.subscribe(&id).await {
        Ok(mut events) => events.next().await.expect("an event").map(drop),
        Err(e) => Err(e),
    };
    not_found("subscribe", first_event);
    not_found("answer", bob.send_message(&answer()).await.map(drop));
    not_found("set push", bob.set_push_config(&push).await.map(drop));
    not_found(
        "list push",
        bob.list_push_configs(&push_list).await.map(drop),
    );
    assert!(
        listed(bob.clone()).await.is_empty(),
        "bob lists none of alice's tasks"
    );
    assert_eq!(listed(alice.clone()).await, std::slice::from_ref(&task.id));

    // A viewer reads it but cannot steer it.
    let seen = vera
        .get_task(&GetTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(seen.id, task.id);
    assert_eq!(listed(vera.clone()).await, std::slice::from_ref(&task.id));
    not_found("viewer's cancel", vera.cancel_task(&cancel).await.map(drop));
    not_found(
        "viewer's answer",
        vera.send_message(&answer()).await.map(drop),
    );

    // An operator steers it; its owner answers it.
    assert_eq!(listed(olga.clone()).await, std::slice::from_ref(&task.id));
    let answered = as_task(alice.send_message(&answer()).await.unwrap());
    assert_eq!(answered.status().state(), TaskState::Completed);
    let other = as_task(
        alice
            .send_message(&SendMessageRequest::new(Message::user_text("ask me")))
            .await
            .unwrap(),
    );
    let canceled = olga
        .cancel_task(&CancelTaskRequest::new(other.id.clone()))
        .await
        .unwrap();
    assert_eq!(canceled.status().state(), TaskState::Canceled);
}

/// Lets `token:bob` read and answer every task, as an approver of a pending question
/// is let in.
struct Approving;

impl a2a::server::Authorize for Approving {
    fn lets(
        &self,
        caller: &a2a::server::Caller,
        task: Option<&a2a::store::StoredTask>,
        access: a2a::server::Access,
    ) -> bool {
        task.is_some()
            && caller.id() == Some("token:bob")
            && matches!(
                access,
                a2a::server::Access::Read | a2a::server::Access::Answer
            )
    }
}

/// Issue 81: an approver answers and reads a task, and changes nothing else of it: a
/// push config sent with an answer is refused (the owner's stays, with its token),
/// the configs it reads carry no secrets, and it cannot cancel; a messageId it reuses
/// from the owner is refused without naming the owner's task; a task holds at most 10
/// push configs. On every binding.
#[tokio::test]
async fn an_approver_answers_and_reads_but_steers_nothing_on_every_binding() {
    use a2a::Version;
    use a2a::client::{Binding, ClientAuth, Interface};
    let config = ServerConfig {
        auth: Some(a2a::server::InboundAuth {
            authorize: Some(Arc::new(Approving)),
            ..alice_and_bob()
        }),
        allow_private_webhooks: true,
        ..ServerConfig::default()
    };
    let running = serve(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        config,
    )
    .await;
    let hook = |task_id: &str, id: &str, token: &str| TaskPushNotificationConfig {
        task_id: task_id.into(),
        id: id.into(),
        url: "http://127.0.0.1:9/hook".into(),
        token: token.into(),
        ..Default::default()
    };
    let refused = |what: &str, outcome: Result<(), ClientError>, field: &str| match outcome {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, a2a::ErrorCode::INVALID_PARAMS, "{what}: {e:?}");
            let said = format!("{} {:?}", e.message, e.data);
            assert!(said.contains(field), "{what}: {said}");
            e.message
        }
        other => panic!("{what}: refused, not {other:?}"),
    };
    for (binding, protocol) in [
        (Binding::JsonRpc, Version::V0_3),
        (Binding::JsonRpc, Version::V1_0),
        (Binding::HttpJson, Version::V1_0),
        (Binding::Grpc, Version::V1_0),
    ] {
        let on = format!("{binding} {}", protocol.as_str());
        let as_caller = |name: &str| {
            let config = ClientConfig {
                auth: Some(ClientAuth::Bearer(format!("{name}-token"))),
                ..ClientConfig::default()
            };
            A2aClient::new(&running.url, config)
                .unwrap()
                .only(Interface {
                    url: running.url.clone(),
                    protocol,
                    binding,
                    tenant: String::new(),
                })
        };
        let (alice, bob) = (as_caller("alice"), as_caller("bob"));
        let mut first = Message::user_text("ask me");
        let first_id = MessageId::new(format!("m-first-{binding}-{}", protocol.as_str()));
        first.message_id = first_id.to_string();
        let task = as_task(
            alice
                .send_message(&SendMessageRequest::new(first))
                .await
                .unwrap(),
        );
        assert_eq!(task.status().state(), TaskState::InputRequired, "{on}");
        let owners = hook(&task.id, "news", "alice-secret");
        alice.set_push_config(&owners).await.unwrap();

        // The approver's answer may not bring a push config of its own.
        let mut answer = Message::user_text("echo this");
        answer.task_id = task.id.clone();
        let mut params = SendMessageRequest::new(answer.clone());
        params.configuration = Some(SendMessageConfiguration {
            task_push_notification_config: Some(hook("", "news", "bob-secret")),
            ..SendMessageConfiguration::default()
        });
        // Named as each generation names it.
        let (inline, set) = match protocol {
            Version::V0_3 => ("pushNotificationConfig", "pushNotificationConfig"),
            Version::V1_0 => ("configuration.taskPushNotificationConfig", "id: task"),
        };
        refused(
            &format!("{on}: an approver's push config"),
            bob.send_message(&params).await.map(drop),
            inline,
        );
        // It reads the configs, without their secrets; the owner's stays as it was.
        let id = ListTaskPushNotificationConfigsRequest {
            task_id: task.id.clone(),
            ..Default::default()
        };
        let read = bob.list_push_configs(&id).await.unwrap().configs;
        assert_eq!(read.len(), 1, "{on}");
        assert_eq!(read[0].token, "", "{on}");
        let kept = alice.list_push_configs(&id).await.unwrap().configs;
        assert_eq!(kept[0].token, "alice-secret", "{on}");
        match bob.cancel_task(&CancelTaskRequest::new(&task.id)).await {
            Err(ClientError::Rpc(e)) => assert_eq!(e.code, a2a::ErrorCode::TASK_NOT_FOUND),
            other => panic!("{on}: an approver's cancel: {other:?}"),
        }
        // A messageId of the owner's, reused: refused, naming nothing of the task.
        let mut reused = Message::user_text("ask me");
        reused.message_id = first_id.to_string();
        let said = refused(
            &format!("{on}: a reused messageId"),
            bob.send_message(&SendMessageRequest::new(reused))
                .await
                .map(drop),
            "messageId",
        );
        assert!(!said.contains(task.id.as_str()), "{on}: {said}");

        // At most 10 push configs a task; the same id again replaces.
        for n in 1..10 {
            let more = hook(&task.id, &format!("more-{n}"), "t");
            alice.set_push_config(&more).await.unwrap();
        }
        let eleventh = hook(&task.id, "one-too-many", "t");
        refused(
            &format!("{on}: an eleventh push config"),
            alice.set_push_config(&eleventh).await.map(drop),
            set,
        );
        alice.set_push_config(&owners).await.unwrap();
        let all = alice.list_push_configs(&id).await.unwrap().configs;
        assert_eq!(all.len(), 10);

        // The approver's plain answer is taken; a blocking answer returns the task as
        // the approver may read it, once taken (issue 75): the run's end is the owner's.
        let taken = as_task(
            bob.send_message(&SendMessageRequest::new(answer))
                .await
                .unwrap(),
        );
        assert_ne!(taken.status().state(), TaskState::InputRequired, "{on}");
        assert!(taken.artifacts.is_empty(), "{on}: {taken:?}");
        let done = crate::util::eventually(
            &format!("{on}: the run ending"),
            Duration::from_secs(20),
            || async {
                let t = alice
                    .get_task(&GetTaskRequest::new(task.id.clone()))
                    .await
                    .unwrap();
                if t.status().state().is_terminal() {
                    Ok(t)
                } else {
                    Err(t.status().state())
                }
            },
        )
        .await;
        assert_eq!(done.status().state(), TaskState::Completed, "{on}");
    }
}

/// Issue 81: one caller cannot hold every connection. Past its bound of connections
/// held with streams, a stream on one more is refused, saying so (-32042; HTTP 429 and
/// gRPC RESOURCE_EXHAUSTED on the wire), while another caller still streams; a stream
/// closed frees its place. (Our client opens a connection a stream over HTTP/1.1, and
/// multiplexes gRPC's over one HTTP/2 connection, which counts once.)
#[tokio::test]
async fn one_caller_holds_at_most_its_share_of_streams() {
    use a2a::Version;
    use a2a::client::{Binding, ClientAuth, Interface};
    let config = ServerConfig {
        auth: Some(alice_and_bob()),
        max_streaming_connections_per_caller: 3,
        ..ServerConfig::default()
    };
    let running = serve(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        config,
    )
    .await;
    let as_caller = |name: &str, binding: Binding| {
        let config = ClientConfig {
            auth: Some(ClientAuth::Bearer(format!("{name}-token"))),
            ..ClientConfig::default()
        };
        A2aClient::new(&running.url, config)
            .unwrap()
            .only(Interface {
                url: running.url.clone(),
                protocol: Version::V1_0,
                binding,
                tenant: String::new(),
            })
    };
    let task_of = |c: A2aClient| async move {
        as_task(
            c.send_message(&SendMessageRequest::new(Message::user_text("ask me")))
                .await
                .unwrap(),
        )
    };
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let (alice, bob) = (as_caller("alice", binding), as_caller("bob", binding));
        let waiting = task_of(alice.clone()).await;
        let id = SubscribeToTaskRequest::new(&waiting.id);
        let mut held = Vec::new();
        for _ in 0..3 {
            // A client of its own: a connection of its own, on every binding.
            let alice = as_caller("alice", binding);
            let mut s = alice.subscribe(&id).await.unwrap();
            // The first event (the task) says the stream is open.
            s.next().await.unwrap().unwrap();
            held.push((alice, s));
        }
        // More streams on a connection it holds are not refused (gRPC's share one).
        if binding == Binding::Grpc {
            let mut more = held[0].0.subscribe(&id).await.unwrap();
            more.next().await.unwrap().unwrap();
        }
        let refused = match as_caller("alice", binding).subscribe(&id).await {
            Ok(mut s) => s.next().await.expect("an event").map(drop),
            Err(e) => Err(e),
        };
        match refused {
            Err(ClientError::Rpc(e)) => {
                assert_eq!(
                    e.code,
                    a2a::ErrorCode::RESOURCE_EXHAUSTED,
                    "{binding}: {e:?}"
                );
                assert!(
                    e.message.contains("connections open with streams"),
                    "{binding}: {}",
                    e.message
                );
            }
            other => panic!("{binding}: a fourth stream refused, not {other:?}"),
        }
        // Another caller still streams.
        let bobs = task_of(bob.clone()).await;
        let mut s = bob
            .subscribe(&SubscribeToTaskRequest::new(bobs.id))
            .await
            .unwrap();
        s.next().await.unwrap().unwrap();
        // A stream closed frees its place.
        drop(held.pop());
        let _again = crate::util::eventually(
            &format!("{binding}: a closed stream's place taken again"),
            Duration::from_secs(5),
            || async {
                let mut s = as_caller("alice", binding).subscribe(&id).await?;
                s.next().await.expect("an event").map(|_| s)
            },
        )
        .await;
    }
}

/// Static tokens `alice-token` and `bob-token`, for principals `token:alice` and
/// `token:bob`.
fn alice_and_bob() -> a2a::server::InboundAuth {
    use a2a::server::{Credential, InboundAuth, Principal};
    let person = |name: &str| Credential {
        secret: format!("{name}-token"),
        principal: Arc::new(Principal::new(None, format!("token:{name}"), name)),
    };
    InboundAuth {
        bearer: vec![person("alice"), person("bob")],
        ..InboundAuth::default()
    }
}

/// The tests above whose answers the official SDK 0.3 reads too: in the full suite each
/// runs again here, with `assert_valid` on (plain `cargo test` checks the same answers
/// in Rust alone). No test of the plain tier runs twice.
mod read_by_the_sdk {
    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn agents_that_reply_fail_or_panic() {
        super::agents_that_reply_fail_or_panic();
    }
}

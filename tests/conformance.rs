//! The conformance agent (`examples/conformance_agent.rs`) behaves as the v1.0
//! conformance kit expects of a system under test, on each binding.

use serde_json::{Value, json};

use crate::conformance_agent::{ConformanceAgent, conformance_card};
use crate::util::serve;

async fn agent() -> crate::util::Running {
    serve(
        ConformanceAgent { time_scale: 0.05 },
        conformance_card,
        Default::default(),
    )
    .await
}

fn send(prefix: &str, return_immediately: bool) -> Value {
    json!({
        "message": {
            "messageId": format!("{prefix}-{}", a2a::types::MessageId::random()),
            "role": "ROLE_USER",
            "parts": [{"text": "go"}]
        },
        "configuration": {"returnImmediately": return_immediately}
    })
}

async fn call(url: &str, method: &str, params: Value) -> Value {
    let body: Value = crate::util::http()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(body.get("result").is_some(), "{method}: {body}");
    body["result"].clone()
}

/// Like [`call`], over A2A 0.3 (no `A2A-Version`).
async fn call_v03(url: &str, method: &str, params: Value) -> Value {
    let body: Value = crate::util::http()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(body.get("result").is_some(), "{method}: {body}");
    body["result"].clone()
}

/// The `data:` of each SSE event of a stream.
async fn stream(request: reqwest::RequestBuilder) -> Vec<Value> {
    let text = request
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect()
}

#[tokio::test]
async fn the_conformance_agent_answers_each_prefix_as_the_kit_expects() {
    let a = agent().await;
    let url = a.url.as_str();
    let task = call(url, "SendMessage", send("tck-complete-task", false)).await;
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["task"]["status"]["message"]["parts"][0]["text"],
        "Hello from TCK"
    );
    let reply = call(url, "SendMessage", send("tck-message-response", false)).await;
    assert_eq!(
        reply["message"]["parts"][0]["text"],
        "Direct message response"
    );
    let data = call(url, "SendMessage", send("tck-artifact-data", false)).await;
    assert_eq!(
        data["task"]["artifacts"][0]["parts"][0]["data"],
        json!({"key": "value", "count": 42})
    );
    let file = call(url, "SendMessage", send("tck-artifact-file", false)).await;
    let part = &file["task"]["artifacts"][0]["parts"][0];
    assert_eq!(
        (part["filename"].as_str(), part["mediaType"].as_str()),
        (Some("output.txt"), Some("text/plain"))
    );
    assert!(part["raw"].is_string(), "{part}");
    let link = call(url, "SendMessage", send("tck-artifact-file-url", false)).await;
    assert_eq!(
        link["task"]["artifacts"][0]["parts"][0]["url"],
        "https://example.com/output.txt"
    );
    let rejected = call(url, "SendMessage", send("tck-reject-task", false)).await;
    assert_eq!(rejected["task"]["status"]["state"], "TASK_STATE_REJECTED");
    let waiting = call(url, "SendMessage", send("tck-input-required", false)).await;
    assert_eq!(
        waiting["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    // returnImmediately is honoured: the same behaviour seen working, then done.
    let early = call(url, "SendMessage", send("tck-delayed-complete", true)).await;
    assert_ne!(
        early["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{early}"
    );
    let late = call(url, "SendMessage", send("tck-delayed-complete", false)).await;
    assert_eq!(
        late["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{late}"
    );
}

#[tokio::test]
async fn the_conformance_agent_streams_and_resubscribes_on_every_binding() {
    let a = agent().await;
    let url = a.url.as_str();
    let base = url.trim_end_matches('/');
    let http = crate::util::http();
    let events = stream(
        http.post(format!("{base}/message:stream"))
            .json(&send("tck-stream-artifact-chunked", false)),
    )
    .await;
    let chunks: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("artifactUpdate"))
        .collect();
    assert_eq!(chunks.len(), 2, "{events:?}");
    assert_eq!(chunks[1]["lastChunk"], true);
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let started = call(
        url,
        "SendMessage",
        send("test-resubscribe-message-id", true),
    )
    .await;
    let id = started["task"]["id"].as_str().unwrap();
    let events = stream(http.post(url).json(&json!({
        "jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": id}
    })))
    .await;
    assert!(
        events[0]["result"]["task"].is_object(),
        "the task first: {events:?}"
    );
    assert_eq!(
        events.last().unwrap()["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // The card lists the three interfaces the kit may choose from.
    let card: Value = http
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let interfaces: Vec<(String, String)> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap().to_owned(),
                i["protocolVersion"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for want in [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")] {
        assert!(
            interfaces.contains(&(want.0.into(), want.1.into())),
            "{interfaces:?}"
        );
    }
}

/// The kit's STREAM-SUB-002 on both bindings: a subscription to a task waiting for
/// input stays open through the next message and ends with the terminal state (§3.1.6
/// ends a subscription at a terminal state only).
#[tokio::test]
async fn a_subscription_to_a_waiting_task_follows_it_to_its_end() {
    let a = agent().await;
    let url = a.url.as_str();
    let base = url.trim_end_matches('/');
    let http = crate::util::http();
    for binding in ["jsonrpc", "http+json"] {
        let waiting = call(url, "SendMessage", send("tck-input-required", false)).await;
        let id = waiting["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            waiting["task"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
        let request = match binding {
            "jsonrpc" => http.post(url).json(&json!({
                "jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": id}
            })),
            _ => http.post(format!("{base}/tasks/{id}:subscribe")),
        };
        let subscribed = tokio::spawn(stream(request));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(
            !subscribed.is_finished(),
            "{binding}: the subscription stays open"
        );
        let mut complete = send("tck-complete-task", false);
        complete["message"]["taskId"] = json!(id);
        call(url, "SendMessage", complete).await;
        let events = tokio::time::timeout(std::time::Duration::from_secs(10), subscribed)
            .await
            .unwrap_or_else(|_| panic!("{binding}: the subscription ends at the terminal state"))
            .unwrap();
        let unwrap = |e: &Value| e.get("result").cloned().unwrap_or_else(|| e.clone());
        assert!(
            unwrap(&events[0])["task"].is_object(),
            "{binding}: {events:?}"
        );
        assert_eq!(
            unwrap(events.last().unwrap())["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED",
            "{binding}: {events:?}"
        );
    }
}

/// Push notifications take the body of the generation that set the webhook: a v1.0
/// `StreamResponse` (§4.3.3; the kit's PUSH-DELIVER-003) for a config set over v1.0,
/// the task for one set over v0.3; HTTP+JSON bodies are labelled `application/a2a+json`
/// for a client that asks for it, `application/json` otherwise (the kit's
/// HTTP_JSON-SVC-001).
#[tokio::test]
async fn push_bodies_and_media_types_follow_the_client() {
    use std::sync::{Arc, Mutex};
    // A loopback webhook recording each body and its media type.
    let got: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let seen = got.clone();
    let hook = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let seen = seen.clone();
                async move {
                    let ct = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    seen.lock()
                        .unwrap()
                        .push((ct, serde_json::from_slice(&body).unwrap()));
                    "ok"
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, hook).await });
    let a = serve(
        ConformanceAgent { time_scale: 0.05 },
        conformance_card,
        a2a::server::ServerConfig {
            allow_private_webhooks: true,
            ..Default::default()
        },
    )
    .await;
    let url = a.url.as_str();
    let base = url.trim_end_matches('/');
    let http = crate::util::http();

    // Over v1.0: the webhook gets StreamResponses.
    let waiting = call(url, "SendMessage", send("tck-input-required", false)).await;
    let id = waiting["task"]["id"].as_str().unwrap().to_owned();
    call(
        url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": hook_url}),
    )
    .await;
    let mut complete = send("tck-complete-task", false);
    complete["message"]["taskId"] = json!(id);
    call(url, "SendMessage", complete).await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while got.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no notification");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (ct, body) = got.lock().unwrap()[0].clone();
    assert_eq!(ct, "application/a2a+json");
    assert_eq!(body["task"]["id"], json!(id), "{body}");
    assert!(
        body.get("kind").is_none(),
        "a StreamResponse, not a v0.3 task: {body}"
    );
    // The config read back says nothing of how notifications are shaped.
    let listed = call(
        url,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert!(!listed.to_string().contains("x-a2a-payload"), "{listed}");

    // Over v0.3: the task itself.
    got.lock().unwrap().clear();
    let v03 = call_v03(url, "message/send", json!({
        "message": {"kind": "message", "messageId": format!("tck-input-required-{}", a2a::types::MessageId::random()), "role": "user", "parts": [{"kind": "text", "text": "go"}]}
    }))
    .await;
    let id03 = v03["id"].as_str().unwrap().to_owned();
    call_v03(
        url,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": id03, "pushNotificationConfig": {"url": hook_url}}),
    )
    .await;
    let mut complete = send("tck-complete-task", false);
    complete["message"]["taskId"] = json!(id03);
    call(url, "SendMessage", complete).await;
    while got.lock().unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no v0.3 notification"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (_, body) = got.lock().unwrap()[0].clone();
    assert_eq!(body["kind"], "task", "{body}");
    assert_eq!(body["id"], json!(id03));

    // HTTP+JSON media types by Accept.
    for (accept, want) in [
        (
            Some("application/a2a+json, application/json"),
            "application/a2a+json",
        ),
        (Some("application/json"), "application/json"),
        (None, "application/json"),
    ] {
        let mut req = http
            .get(format!("{base}/tasks/{id}"))
            .header("A2A-Version", "1.0");
        if let Some(accept) = accept {
            req = req.header("Accept", accept);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap(),
            want,
            "{accept:?}"
        );
    }
}

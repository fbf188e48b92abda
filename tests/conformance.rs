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
    let body: Value = reqwest::Client::new()
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
    let http = reqwest::Client::new();
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

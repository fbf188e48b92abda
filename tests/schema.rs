//! Every JSON our server emits in v0.3's shape is read by the official Python SDK 0.3's
//! own models (a2a-sdk 0.3.26, pydantic): the card, each method's response, each stream
//! event, each error. (v1.0's shapes are checked by the SDK 1.x's protobuf types in
//! `python_v1_client.rs`.) Nothing outside the repository is read.

use serde_json::{Value, json};

use crate::util::schema::assert_valid;
use crate::util::{echo, post_raw, post_sse, rpc, text_params};

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn card_validates() {
    let agent = echo(0).await;
    for path in [".well-known/agent-card.json", ".well-known/agent.json"] {
        let card: Value = crate::util::http()
            .get(format!("{}{path}", agent.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_valid("AgentCard", &card);
    }
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn unary_responses_validate() {
    let agent = echo(0).await;
    let url = &agent.url;
    let (_, sent) = post_raw(
        url,
        rpc("message/send", text_params("schema check")).to_string(),
    )
    .await;
    assert_valid("SendMessageResponse", &sent);
    assert_valid("SendMessageSuccessResponse", &sent);
    let task_id = sent["result"]["id"].as_str().unwrap().to_owned();

    let (_, got) = post_raw(url, rpc("tasks/get", json!({ "id": task_id })).to_string()).await;
    assert_valid("GetTaskSuccessResponse", &got);

    let config = json!({ "taskId": task_id, "pushNotificationConfig": {
        "url": "http://203.0.113.10/hook", "token": "t",
        "authentication": { "schemes": ["Bearer"], "credentials": "c" } } });
    let (_, set) = post_raw(
        url,
        rpc("tasks/pushNotificationConfig/set", config).to_string(),
    )
    .await;
    assert_valid("SetTaskPushNotificationConfigSuccessResponse", &set);
    let (_, get) = post_raw(
        url,
        rpc("tasks/pushNotificationConfig/get", json!({ "id": task_id })).to_string(),
    )
    .await;
    assert_valid("GetTaskPushNotificationConfigSuccessResponse", &get);
    let (_, list) = post_raw(
        url,
        rpc(
            "tasks/pushNotificationConfig/list",
            json!({ "id": task_id }),
        )
        .to_string(),
    )
    .await;
    assert_valid("ListTaskPushNotificationConfigSuccessResponse", &list);
    let config_id = list["result"][0]["pushNotificationConfig"]["id"]
        .as_str()
        .unwrap();
    let (_, del) = post_raw(
        url,
        rpc(
            "tasks/pushNotificationConfig/delete",
            json!({ "id": task_id, "pushNotificationConfigId": config_id }),
        )
        .to_string(),
    )
    .await;
    assert_valid("DeleteTaskPushNotificationConfigSuccessResponse", &del);

    // A cancel of a running task.
    let slow = crate::util::echo(200).await;
    let mut params = text_params("a b c d e f g h");
    params["configuration"] = json!({ "blocking": false });
    let (_, started) = post_raw(&slow.url, rpc("message/send", params).to_string()).await;
    let id = started["result"]["id"].clone();
    let (_, canceled) = post_raw(
        &slow.url,
        rpc("tasks/cancel", json!({ "id": id })).to_string(),
    )
    .await;
    assert_valid("CancelTaskSuccessResponse", &canceled);
    assert_eq!(canceled["result"]["status"]["state"], "canceled");
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn stream_events_validate() {
    let agent = echo(0).await;
    let events = post_sse(
        &agent.url,
        &rpc("message/stream", text_params("one two three")),
    )
    .await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "task",
            "status-update",
            "artifact-update",
            "artifact-update",
            "artifact-update",
            "status-update"
        ]
    );
    for e in &events {
        assert_valid("SendStreamingMessageSuccessResponse", e);
        let def = match e["result"]["kind"].as_str().unwrap() {
            "task" => "Task",
            "status-update" => "TaskStatusUpdateEvent",
            "artifact-update" => "TaskArtifactUpdateEvent",
            other => panic!("unexpected kind {other}"),
        };
        assert_valid(def, &e["result"]);
    }
    assert_eq!(events.last().unwrap()["result"]["final"], true);

    // A resubscribe to the finished task: the snapshot.
    let id = events[0]["result"]["id"].clone();
    let resub = post_sse(&agent.url, &rpc("tasks/resubscribe", json!({ "id": id }))).await;
    assert_eq!(resub.len(), 1);
    assert_valid("SendStreamingMessageSuccessResponse", &resub[0]);
    assert_valid("Task", &resub[0]["result"]);
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn errors_validate() {
    let agent = echo(0).await;
    let url = &agent.url;
    let cases: Vec<(String, &str)> = vec![
        ("{not json".into(), "JSONParseError"),
        ("[1]".into(), "InvalidRequestError"),
        (rpc("no/such", json!({})).to_string(), "MethodNotFoundError"),
        (
            rpc("tasks/get", json!({})).to_string(),
            "InvalidParamsError",
        ),
        (
            rpc("tasks/get", json!({ "id": "missing" })).to_string(),
            "TaskNotFoundError",
        ),
        (
            rpc("agent/getAuthenticatedExtendedCard", Value::Null).to_string(),
            "AuthenticatedExtendedCardNotConfiguredError",
        ),
    ];
    for (body, def) in cases {
        let (_, resp) = post_raw(url, body).await;
        assert_valid("JSONRPCErrorResponse", &resp);
        assert_valid(def, &resp["error"]);
    }
    let events = post_sse(url, &rpc("tasks/resubscribe", json!({ "id": "missing" }))).await;
    assert_valid("SendStreamingMessageResponse", &events[0]);
    assert_valid("TaskNotFoundError", &events[0]["error"]);
}

/// The check can fail: what the SDK cannot read is refused, naming the problem.
#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[test]
fn the_validator_refuses_what_the_sdk_cannot_read() {
    let bad = json!({ "kind": "task", "id": "t" });
    let refused = std::panic::catch_unwind(|| assert_valid("Task", &bad)).unwrap_err();
    let why = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        why.contains("not a valid Task") && why.contains("status"),
        "{why}"
    );
}

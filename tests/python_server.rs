//! Our client drives an agent written with the official Python SDK (`a2a-sdk`):
//! discovery, send, stream, get, cancel.

use a2a::client::{A2aClient, ClientConfig};
use a2a::types::*;
use futures::StreamExt;

use crate::util::python_agent;

fn artifact_text(task: &Task) -> String {
    task.artifacts
        .iter()
        .map(|a| parts_text(&a.parts))
        .collect()
}

fn params(text: &str, blocking: bool) -> SendMessageRequest {
    let mut p = SendMessageRequest::new(Message::user_text(text));
    p.configuration = Some(SendMessageConfiguration {
        return_immediately: !blocking,
        ..Default::default()
    });
    p
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn our_client_sends_and_gets_against_the_python_sdk() {
    let agent = python_agent(0.01).await;
    let (client, card) = A2aClient::connect(&agent.url, ClientConfig::default())
        .await
        .unwrap();
    assert_eq!(card.name, "SDK words agent");
    assert!(card.supports_streaming());
    let task = match client
        .send_message(&params("hello python world", true))
        .await
        .unwrap()
    {
        SendMessageResult::Task(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(task.status().state(), TaskState::Completed);
    assert_eq!(artifact_text(&task), "hello python world");
    let fetched = client
        .get_task(&GetTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(fetched.status().state(), TaskState::Completed);
    assert_eq!(artifact_text(&fetched), "hello python world");
    let err = client
        .get_task(&GetTaskRequest::new(TaskId::new("missing")))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32001);
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn our_client_streams_from_the_python_sdk() {
    let agent = python_agent(0.01).await;
    let (client, _) = A2aClient::connect(&agent.url, ClientConfig::default())
        .await
        .unwrap();
    let events: Vec<StreamEvent> = client
        .send_message_stream(&params("alpha beta gamma", true))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert_eq!(events[0].kind(), "task");
    let chunks: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArtifactUpdate(a) => Some(parts_text(&a.artifact().parts)),
            _ => None,
        })
        .collect();
    assert_eq!(chunks, ["alpha", " beta", " gamma"]);
    match events.last().unwrap() {
        StreamEvent::StatusUpdate(s) => {
            assert!(s.status().state() == TaskState::Completed)
        }
        other => panic!("{other:?}"),
    }
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn our_client_cancels_on_the_python_sdk() {
    let agent = python_agent(0.2).await;
    let (client, _) = A2aClient::connect(&agent.url, ClientConfig::default())
        .await
        .unwrap();
    let words = (0..100)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let task = match client.send_message(&params(&words, false)).await.unwrap() {
        SendMessageResult::Task(t) => t,
        other => panic!("{other:?}"),
    };
    assert!(!task.status().state().is_terminal());
    let canceled = client
        .cancel_task(&CancelTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(canceled.status().state(), TaskState::Canceled);
    let after = client
        .get_task(&GetTaskRequest::new(task.id))
        .await
        .unwrap();
    assert_eq!(after.status().state(), TaskState::Canceled);
}

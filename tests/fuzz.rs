//! Fuzzing the request decoders: whatever a client sends — JSON-RPC of either version or
//! an HTTP+JSON request, well-formed, mangled or random — the server answers with a
//! well-formed error or result and never panics, hangs or answers 5xx for input alone.
//! A few thousand cases run with the suite; for a long run:
//!
//!     PROPTEST_CASES=1000000 cargo test --release --test tests fuzz::
//!
//! (The workflow parser has its own property test, `workflow_props.rs`.)

use std::time::Duration;

use a2a::server::A2aServer;
use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::echo_agent::{EchoAgent, echo_card};

fn router() -> axum::Router {
    A2aServer::new(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card("http://127.0.0.1:1/"),
    )
    .router()
}

/// Sends one request to a fresh router; its status and body.
async fn call(req: Request<Body>) -> (u16, Vec<u8>) {
    let resp = tokio::time::timeout(Duration::from_secs(10), router().oneshot(req))
        .await
        .expect("answered in time")
        .expect("the router is infallible");
    let status = resp.status().as_u16();
    let body = tokio::time::timeout(
        Duration::from_secs(10),
        http_body_util::BodyExt::collect(resp.into_body()),
    )
    .await
    .expect("the body arrives in time")
    .expect("a body")
    .to_bytes();
    (status, body.to_vec())
}

/// A JSON value of modest depth and size, from which requests are built.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z0-9 _:/.-]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("ROLE_USER"),
            Just("user"),
            Just("text"),
            Just("kind"),
            Just("TASK_STATE_WORKING"),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("message".to_owned()),
                    Just("messageId".to_owned()),
                    Just("role".to_owned()),
                    Just("parts".to_owned()),
                    Just("text".to_owned()),
                    Just("data".to_owned()),
                    Just("kind".to_owned()),
                    Just("id".to_owned()),
                    Just("taskId".to_owned()),
                    Just("configuration".to_owned()),
                    Just("metadata".to_owned()),
                    "[a-z]{1,8}",
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const METHODS: &[&str] = &[
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetExtendedAgentCard",
    "NoSuchMethod",
];

const PATHS: &[&str] = &[
    "/message:send",
    "/message:stream",
    "/tasks",
    "/tasks/x",
    "/tasks/x:cancel",
    "/tasks/x:subscribe",
    "/tasks/x/pushNotificationConfigs",
    "/tasks/x/pushNotificationConfigs/y",
    "/t/tasks",
    "/extendedAgentCard",
    "/nothing",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(1_500),
        ..ProptestConfig::default()
    })]

    /// JSON-RPC of either version, with arbitrary params (streaming methods included:
    /// their error, or their first event, must come at once for these inputs).
    #[test]
    fn json_rpc_requests_always_get_a_well_formed_answer(
        method in prop::sample::select(METHODS),
        params in json_value(),
        version in prop_oneof![Just(None), Just(Some("1.0")), Just(Some("0.3")), Just(Some("9"))],
        with_id in any::<bool>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        if with_id {
            body["id"] = json!(1);
        }
        let mut req = Request::post("/").header("content-type", "application/json");
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        let req = req.body(Body::from(body.to_string())).unwrap();
        let streaming = matches!(method, "message/stream" | "tasks/resubscribe" | "SendStreamingMessage" | "SubscribeToTask");
        if streaming {
            // A stream that starts may go on: only its head is awaited.
            let resp = rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), router().oneshot(req)).await
            }).expect("answered in time").unwrap();
            prop_assert!(resp.status().as_u16() < 500, "{}", resp.status());
        } else {
            let (status, bytes) = rt.block_on(call(req));
            prop_assert!(status < 500, "{status}");
            let answer: Value = serde_json::from_slice(&bytes).expect("a JSON answer");
            prop_assert!(answer.get("result").is_some() || answer["error"]["code"].is_i64(), "{answer}");
        }
    }

    /// Raw bytes as a JSON-RPC body.
    #[test]
    fn arbitrary_bodies_get_a_json_rpc_error(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let req = Request::post("/").header("content-type", "application/json").body(Body::from(bytes)).unwrap();
        let (status, body) = rt.block_on(call(req));
        prop_assert!(status < 500);
        let answer: Value = serde_json::from_slice(&body).expect("a JSON answer");
        prop_assert!(answer["error"]["code"].is_i64() || answer.get("result").is_some(), "{answer}");
    }

    /// HTTP+JSON requests: any route, method, query and body.
    #[test]
    fn http_json_requests_always_get_a_well_formed_answer(
        path in prop::sample::select(PATHS),
        method in prop_oneof![Just("GET"), Just("POST"), Just("DELETE"), Just("PUT")],
        query in "[a-zA-Z=&%0-9]{0,24}",
        body in json_value(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let uri = if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") };
        let Ok(req) = Request::builder()
            .method(method)
            .uri(&uri)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string())) else { return Ok(()) };
        let resp = rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), router().oneshot(req)).await
        }).expect("answered in time").unwrap();
        prop_assert!(resp.status().as_u16() < 500, "{uri}: {}", resp.status());
    }
}

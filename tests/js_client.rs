//! The official JavaScript SDK's client (`@a2a-js/sdk` 1.x, installed by the test setup
//! with npm) sends to and streams from our server over A2A v1.0, on every binding: a
//! second independent implementation beside the Python SDK.

use crate::util::{echo, echo_taking_loopback_webhooks, echo_with_extended_card, run_node};

const BINDINGS: [&str; 3] = ["JSONRPC", "HTTP+JSON", "GRPC"];

#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn js_client_sends_and_streams_to_the_echo_agent() {
    let agent = echo(10).await;
    for binding in BINDINGS {
        let (ok, out) = run_node("client.mjs", &[&agent.url, binding, "echo"]).await;
        assert!(ok && out.trim_end().ends_with("ok"), "{binding}:\n{out}");
    }
}

/// Get (historyLength 0, not found), list with paging and filters, subscribe, push-config
/// CRUD and cancel, on every binding.
#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn js_client_task_operations_on_the_echo_agent() {
    // Webhooks on loopback are allowed: the scenario registers one.
    let agent = echo_taking_loopback_webhooks(10).await;
    for binding in BINDINGS {
        let (ok, out) = run_node("client.mjs", &[&agent.url, binding, "tasks"]).await;
        assert!(ok && out.trim_end().ends_with("ok"), "{binding}:\n{out}");
    }
}

/// The extended card is refused without the token and is the extended one with it (the
/// token as a header, as gRPC metadata).
#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn js_client_extended_card_with_and_without_the_token() {
    let agent = echo_with_extended_card("s3cret").await;
    for binding in BINDINGS {
        let (ok, out) = run_node("client.mjs", &[&agent.url, binding, "extended"]).await;
        assert!(ok && out.trim_end().ends_with("ok"), "{binding}:\n{out}");
    }
}

#[ignore = "needs Node and the official JavaScript SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn js_client_streams_a_run_of_the_orchestrator_and_answers_it() {
    let o = crate::util::orchestra::orchestra_with(&[crate::util::orchestra::APPROVE], 10, |_| {})
        .await;
    for binding in BINDINGS {
        let (ok, out) = run_node("client.mjs", &[&o.url, binding, "host"]).await;
        assert!(ok && out.trim_end().ends_with("ok"), "{binding}:\n{out}");
    }
}

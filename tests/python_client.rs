//! The official Python SDK's client (`a2a-sdk`) drives our server — the echo example
//! agent — through each scenario of `tests/python/sdk_client.py`.

use crate::util::{echo, run_python};

async fn scenario(name: &str) {
    let agent = echo(20).await;
    let (ok, output) = run_python("sdk_client.py", &[&agent.url, name]).await;
    assert!(ok, "Python SDK scenario {name} failed:\n{output}");
    assert!(output.trim_end().ends_with("ok"), "{output}");
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_send_blocking() {
    scenario("send_blocking").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_send_non_blocking() {
    scenario("send_non_blocking").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_stream() {
    scenario("stream").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_get() {
    scenario("get").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_cancel() {
    scenario("cancel").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_resubscribe() {
    scenario("resubscribe").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_multi_turn_input_required() {
    scenario("multi_turn").await;
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn python_stream_multi_turn() {
    scenario("stream_multi_turn").await;
}

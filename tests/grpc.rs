//! Issue 37: the gRPC binding's edges, with grpcio (gRPC's own Python library) as the
//! client sending what an SDK never would: an unknown method, bytes that are no
//! protobuf, a message past the size bound, a deadline shorter than the work, another
//! A2A version, no credentials; and the binding turned off.

use std::time::Duration;

use a2a::server::{InboundAuth, ServerConfig};
use serde_json::Value;

use crate::echo_agent::{EchoAgent, echo_card};
use crate::util::{run_python_v1, serve};

async fn raw(target: &str, case: &str) -> Value {
    let (ok, out) = run_python_v1("grpc_raw.py", &[target, case]).await;
    assert!(ok, "{case}: {out}");
    let line = out.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{case}: {e}: {out}"))
}

fn target(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

#[ignore = "needs grpcio (the official Python SDK's venv): the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn grpc_refuses_what_it_cannot_take_with_the_spec_status() {
    let agent = serve(
        EchoAgent {
            word_delay: Duration::from_millis(100),
        },
        echo_card,
        ServerConfig {
            max_body_bytes: 64 * 1024,
            ..ServerConfig::default()
        },
    )
    .await;
    let at = target(&agent.url);
    let got = raw(&at, "unknown_method").await;
    assert_eq!(got["code"], "UNIMPLEMENTED", "{got}");
    let got = raw(&at, "malformed").await;
    assert_eq!(got["code"], "INVALID_ARGUMENT", "{got}");
    assert_eq!(got["reasons"][0], "INVALID_PARAMS", "{got}");
    // Past `max_body_bytes`: refused before it is decoded, naming the bound (tonic's
    // status for it is OUT_OF_RANGE).
    let got = raw(&at, "oversized").await;
    assert_eq!(got["code"], "OUT_OF_RANGE", "{got}");
    assert!(got["message"].as_str().unwrap().contains("65536"), "{got}");
    let got = raw(&at, "deadline").await;
    assert_eq!(got["code"], "DEADLINE_EXCEEDED", "{got}");
    let got = raw(&at, "version").await;
    assert_eq!(got["code"], "FAILED_PRECONDITION", "{got}");
    assert_eq!(got["reasons"][0], "VERSION_NOT_SUPPORTED", "{got}");
    let got = raw(&at, "version_empty").await;
    assert_eq!(got["code"], "FAILED_PRECONDITION", "{got}");
    assert_eq!(got["reasons"][0], "VERSION_NOT_SUPPORTED", "{got}");
    // A stream refused before its first message, its call carrying a deadline: the
    // status arrives whole (trailers-only), not as a broken stream.
    let got = raw(&at, "subscribe_unknown").await;
    assert_eq!(got["code"], "NOT_FOUND", "{got}");
    assert_eq!(got["reasons"][0], "TASK_NOT_FOUND", "{got}");
    // After all that, an ordinary call works.
    let got = raw(&at, "ok").await;
    assert_eq!(got["code"], "OK", "{got}");
}

#[ignore = "needs grpcio (the official Python SDK's venv): the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn grpc_needs_credentials_and_can_be_turned_off() {
    let guarded = serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        ServerConfig {
            auth: Some(InboundAuth::unnamed(vec!["s3cret".into()], None)),
            ..ServerConfig::default()
        },
    )
    .await;
    let got = raw(&target(&guarded.url), "anonymous").await;
    assert_eq!(got["code"], "UNAUTHENTICATED", "{got}");

    let off = serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        ServerConfig {
            grpc: false,
            ..ServerConfig::default()
        },
    )
    .await;
    let card: Value = crate::util::http()
        .get(format!("{}.well-known/agent-card.json", off.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        !card.to_string().contains("\"GRPC\""),
        "no GRPC interface on the card: {card}"
    );
    let got = raw(&target(&off.url), "ok").await;
    assert_ne!(got["code"], "OK", "{got}");
}

//! One test per error row of spec §8, each asserting the exact code, plus the JSON-RPC
//! 2.0 envelope rules: notifications, batches, the body-size limit, malformed input.

use std::time::Duration;

use a2a::card::AgentCapabilities;
use a2a::server::ServerConfig;
use serde_json::{Value, json};

use crate::echo_agent::{EchoAgent, echo_card};
use crate::util::schema::assert_valid;
use crate::util::{Running, echo, post_raw, post_sse, rpc, serve, text_params};

/// The error code of a response, after checking the whole response against the schema:
/// the JSON-RPC error envelope, and the spec's definition for that code.
fn code(resp: &Value) -> i64 {
    let code = resp["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {resp}"));
    assert_valid("JSONRPCErrorResponse", resp);
    // The spec's name for the code is the schema's definition name; a wrong name
    // would validate the error against the wrong definition and fail.
    let def = a2a::ErrorCode(code)
        .name()
        .unwrap_or_else(|| panic!("not a spec error code: {code}"));
    assert_valid(def, &resp["error"]);
    code
}

/// An echo agent whose card declares neither streaming nor push notifications.
async fn plain_agent() -> Running {
    serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        |url| {
            let mut card = echo_card(url);
            card.capabilities = Some(AgentCapabilities::default());
            card
        },
        ServerConfig::default(),
    )
    .await
}

#[tokio::test]
async fn parse_error_32700() {
    let agent = echo(0).await;
    for body in ["{bad", "", "{\"jsonrpc\": \"2.0\",", "\u{0}"] {
        let (status, resp) = post_raw(&agent.url, body).await;
        assert_eq!(status, 200);
        assert_eq!(code(&resp), -32700, "{body:?}");
        assert_eq!(resp["id"], Value::Null);
    }
    // Invalid UTF-8.
    let (_, resp) = post_raw(&agent.url, vec![0xff_u8, 0xfe, b'{']).await;
    assert_eq!(code(&resp), -32700);
}

#[tokio::test]
async fn invalid_request_32600() {
    let agent = echo(0).await;
    let cases = [
        (json!("a string"), Value::Null),
        (json!(42), Value::Null),
        (json!({ "id": 1, "method": "tasks/get" }), json!(1)),
        (
            json!({ "jsonrpc": "1.0", "id": "x", "method": "tasks/get" }),
            json!("x"),
        ),
        (json!({ "jsonrpc": "2.0", "id": 2, "method": 7 }), json!(2)),
        (json!({ "jsonrpc": "2.0", "id": 3 }), json!(3)),
        (
            json!({ "jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": "x" }),
            json!(4),
        ),
        (
            json!({ "jsonrpc": "2.0", "id": { "a": 1 }, "method": "tasks/get" }),
            Value::Null,
        ),
    ];
    for (body, id) in cases {
        let (status, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(status, 200);
        assert_eq!(code(&resp), -32600, "{body}");
        assert_eq!(resp["id"], id, "{body}");
    }
}

#[tokio::test]
async fn batches_are_rejected_clearly() {
    let agent = echo(0).await;
    for body in [json!([]), json!([rpc("tasks/get", json!({ "id": "x" }))])] {
        let (_, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(code(&resp), -32600);
        assert!(resp["error"]["message"].as_str().unwrap().contains("batch"));
    }
}

#[tokio::test]
async fn method_not_found_32601() {
    let agent = echo(0).await;
    let (_, resp) = post_raw(&agent.url, rpc("tasks/list", json!({})).to_string()).await;
    assert_eq!(code(&resp), -32601);
    assert_eq!(resp["id"], 1);
    assert_eq!(resp["error"]["data"]["method"], "tasks/list");
}

#[tokio::test]
async fn invalid_params_32602_name_the_field() {
    let agent = echo(0).await;
    let mut bad_kind = text_params("x");
    bad_kind["message"]["parts"][0]["kind"] = json!("txt");
    let mut no_id = text_params("x");
    no_id["message"]
        .as_object_mut()
        .unwrap()
        .remove("messageId");
    let mut agent_role = text_params("x");
    agent_role["message"]["role"] = json!("agent");
    let mut no_parts = text_params("x");
    no_parts["message"]["parts"] = json!([]);
    let mut not_base64 = text_params("x");
    not_base64["message"]["parts"] = json!([
        { "kind": "text", "text": "x" },
        { "kind": "file", "file": { "mimeType": "text/plain", "bytes": "not base64!" } },
    ]);
    let cases = [
        (rpc("message/send", json!({})), "message"),
        (
            json!({ "jsonrpc": "2.0", "id": 1, "method": "tasks/get" }),
            "params",
        ),
        (rpc("tasks/get", json!(["t"])), "params"),
        (rpc("message/send", bad_kind), "message.parts[0].kind"),
        (rpc("message/send", no_id), "message.messageId"),
        (rpc("message/send", agent_role), "message.role"),
        (rpc("message/send", no_parts), "message.parts"),
        (
            rpc("message/send", not_base64),
            "message.parts[1].file.bytes",
        ),
        (
            rpc("tasks/get", json!({ "id": "t", "historyLength": -1 })),
            "historyLength",
        ),
        (rpc("tasks/get", json!({ "id": 5 })), "id"),
    ];
    for (body, field) in cases {
        let (_, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(code(&resp), -32602, "{body}: {resp}");
        assert_eq!(resp["error"]["data"]["field"], field, "{body}: {resp}");
        let message = resp["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(field),
            "the message names {field}: {message}"
        );
    }
}

/// An id is a key of the store that keeps it: one with a control character (PostgreSQL's
/// text holds no NUL), or longer than the server takes, is refused at the door, naming
/// the field and where the character is, never echoing the id.
#[tokio::test]
async fn ids_with_control_characters_or_too_long_are_32602() {
    let agent = echo(0).await;
    let with = |field: &str, value: &str| {
        let mut params = text_params("x");
        params["message"][field] = json!(value);
        rpc("message/send", params)
    };
    let long = "x".repeat(257);
    let hook = |id: &str| json!({ "id": id, "url": "http://127.0.0.1:9/hook" });
    let cases = [
        (
            with("messageId", "m\u{0}1"),
            "message.messageId",
            "U+0000) at byte 1",
        ),
        (
            with("contextId", "c\n"),
            "message.contextId",
            "U+000A) at byte 1",
        ),
        (
            with("taskId", "\u{7f}"),
            "message.taskId",
            "U+007F) at byte 0",
        ),
        (
            with("messageId", &long),
            "message.messageId",
            "257 bytes long",
        ),
        (
            rpc("tasks/get", json!({ "id": "t\u{1b}[2J" })),
            "id",
            "U+001B) at byte 1",
        ),
        (
            rpc(
                "tasks/pushNotificationConfig/set",
                json!({ "taskId": "t", "pushNotificationConfig": hook("p\u{0}") }),
            ),
            "pushNotificationConfig.id",
            "U+0000) at byte 1",
        ),
        (
            rpc(
                "tasks/pushNotificationConfig/delete",
                json!({ "id": "t", "pushNotificationConfigId": "\u{85}" }),
            ),
            "pushNotificationConfigId",
            "U+0085) at byte 0",
        ),
    ];
    for (body, field, why) in cases {
        let (_, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(code(&resp), -32602, "{body}: {resp}");
        assert_eq!(resp["error"]["data"]["field"], field, "{body}: {resp}");
        let message = resp["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{field}: {message}");
        assert!(!message.contains(&long), "the id is not echoed: {message}");
    }
    // And inline, in a new message's push config.
    let mut inline = text_params("x");
    inline["configuration"] = json!({ "pushNotificationConfig": hook("p\u{0}") });
    let (_, resp) = post_raw(&agent.url, rpc("message/send", inline).to_string()).await;
    assert_eq!(code(&resp), -32602, "{resp}");
    assert_eq!(
        resp["error"]["data"]["field"],
        "configuration.pushNotificationConfig.id"
    );
}

#[tokio::test]
async fn message_to_a_terminal_task_32004() {
    let agent = echo(0).await;
    let (_, done) = post_raw(
        &agent.url,
        rpc("message/send", text_params("done")).to_string(),
    )
    .await;
    assert_eq!(done["result"]["status"]["state"], "completed");
    let mut again = text_params("more");
    again["message"]["taskId"] = done["result"]["id"].clone();
    let (_, resp) = post_raw(&agent.url, rpc("message/send", again).to_string()).await;
    // v1.0.1 §3.1.1: UnsupportedOperationError, on either generation.
    assert_eq!(code(&resp), -32004, "{resp}");
    assert_eq!(resp["error"]["data"]["field"], "message.taskId");
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("terminal")
    );
}

#[tokio::test]
async fn task_not_found_32001() {
    let agent = echo(0).await;
    let mut continuation = text_params("x");
    continuation["message"]["taskId"] = json!("nope");
    for body in [
        rpc("tasks/get", json!({ "id": "nope" })),
        rpc("tasks/cancel", json!({ "id": "nope" })),
        rpc("message/send", continuation.clone()),
        rpc("tasks/pushNotificationConfig/list", json!({ "id": "nope" })),
    ] {
        let (_, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(code(&resp), -32001, "{body}");
    }
    for body in [
        rpc("tasks/resubscribe", json!({ "id": "nope" })),
        rpc("message/stream", continuation),
    ] {
        let events = post_sse(&agent.url, &body).await;
        assert_eq!(events.len(), 1);
        assert_eq!(code(&events[0]), -32001, "{body}");
    }
}

#[tokio::test]
async fn task_not_cancelable_32002() {
    let agent = echo(0).await;
    let (_, done) = post_raw(
        &agent.url,
        rpc("message/send", text_params("done")).to_string(),
    )
    .await;
    let (_, resp) = post_raw(
        &agent.url,
        rpc("tasks/cancel", json!({ "id": done["result"]["id"] })).to_string(),
    )
    .await;
    assert_eq!(code(&resp), -32002);
    assert_eq!(resp["error"]["data"]["state"], "completed");
}

#[tokio::test]
async fn push_not_supported_32003() {
    let agent = plain_agent().await;
    let (_, done) = post_raw(
        &agent.url,
        rpc("message/send", text_params("x")).to_string(),
    )
    .await;
    let id = done["result"]["id"].clone();
    let hook = json!({ "url": "http://127.0.0.1:9/hook" });
    let mut inline = text_params("x");
    inline["configuration"] = json!({ "pushNotificationConfig": hook });
    for body in [
        rpc(
            "tasks/pushNotificationConfig/set",
            json!({ "taskId": id, "pushNotificationConfig": hook }),
        ),
        rpc("tasks/pushNotificationConfig/get", json!({ "id": id })),
        rpc("tasks/pushNotificationConfig/list", json!({ "id": id })),
        rpc(
            "tasks/pushNotificationConfig/delete",
            json!({ "id": id, "pushNotificationConfigId": "x" }),
        ),
        rpc("message/send", inline),
    ] {
        let (_, resp) = post_raw(&agent.url, body.to_string()).await;
        assert_eq!(code(&resp), -32003, "{body}");
    }
}

#[tokio::test]
async fn streaming_unsupported_32004() {
    let agent = plain_agent().await;
    for body in [
        rpc("message/stream", text_params("x")),
        rpc("tasks/resubscribe", json!({ "id": "t" })),
    ] {
        let events = post_sse(&agent.url, &body).await;
        assert_eq!(events.len(), 1);
        assert_eq!(code(&events[0]), -32004, "{body}");
    }
}

#[tokio::test]
async fn content_type_not_supported_32005() {
    let agent = echo(0).await;
    let mut image = text_params("x");
    image["message"]["parts"] =
        json!([{ "kind": "file", "file": { "mimeType": "image/png", "bytes": "aGk=" } }]);
    let (_, resp) = post_raw(&agent.url, rpc("message/send", image).to_string()).await;
    assert_eq!(code(&resp), -32005);
    assert_eq!(resp["error"]["data"]["field"], "message.parts[0]");

    let mut output = text_params("x");
    output["configuration"] = json!({ "acceptedOutputModes": ["image/png"] });
    let (_, resp) = post_raw(&agent.url, rpc("message/send", output).to_string()).await;
    assert_eq!(code(&resp), -32005);
    assert_eq!(
        resp["error"]["data"]["field"],
        "configuration.acceptedOutputModes"
    );

    let mut wildcard = text_params("x");
    wildcard["configuration"] = json!({ "acceptedOutputModes": ["text/*"] });
    let (_, resp) = post_raw(&agent.url, rpc("message/send", wildcard).to_string()).await;
    assert_eq!(resp["result"]["status"]["state"], "completed", "{resp}");
}

#[tokio::test]
async fn extended_card_not_configured_32007() {
    let agent = echo(0).await;
    let body = json!({ "jsonrpc": "2.0", "id": 9, "method": "agent/getAuthenticatedExtendedCard" });
    let (_, resp) = post_raw(&agent.url, body.to_string()).await;
    assert_eq!(code(&resp), -32007);
}

/// A2A requests always carry an `id`: one without is refused with -32600 and not run
/// (it is not a JSON-RPC notification here), in both generations.
#[tokio::test]
async fn requests_without_an_id_are_refused_and_not_run() {
    let agent = echo(0).await;
    let mut body = rpc("message/send", text_params("quiet"));
    body.as_object_mut().unwrap().remove("id");
    let (status, resp) = post_raw(&agent.url, body.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(code(&resp), -32600, "{resp}");
    assert_eq!(resp["id"], Value::Null);
    assert!(resp["error"]["message"].as_str().unwrap().contains("id"));
    // What is wrong besides the id is said first (issue 37: the v0.3 kit's order): an
    // unknown method is -32601, malformed params -32602, both with a null id.
    let unknown = json!({ "jsonrpc": "2.0", "method": "no/such" });
    let (_, resp) = post_raw(&agent.url, unknown.to_string()).await;
    assert_eq!(code(&resp), -32601, "{resp}");
    assert_eq!(resp["id"], Value::Null);
    let malformed = json!({ "jsonrpc": "2.0", "method": "message/send", "params": {"message": 7} });
    let (_, resp) = post_raw(&agent.url, malformed.to_string()).await;
    assert_eq!(code(&resp), -32602, "{resp}");
    assert_eq!(resp["id"], Value::Null);
    let (_, resp) = post_raw(
        &agent.url,
        json!({ "jsonrpc": "2.0", "method": "tasks/get", "params": {} }).to_string(),
    )
    .await;
    assert_eq!(code(&resp), -32602, "a missing required field: {resp}");
    // Nothing ran: the agent has no task at all.
    let list = crate::util::http()
        .post(&agent.url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(list["result"]["totalSize"], 0, "{list}");
    assert_eq!(list["result"]["nextPageToken"], "", "{list}");
}

#[tokio::test]
async fn oversized_bodies_get_413_with_a_jsonrpc_error() {
    let config = ServerConfig {
        max_body_bytes: 1024,
        ..ServerConfig::default()
    };
    let agent = serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        config,
    )
    .await;
    let big = rpc("message/send", text_params(&"x".repeat(4096)));
    let (status, resp) = post_raw(&agent.url, big.to_string()).await;
    assert_eq!(status, 413);
    assert_eq!(code(&resp), -32600);
    assert!(resp["error"]["message"].as_str().unwrap().contains("1024"));
    // The server still works afterwards.
    let (_, ok) = post_raw(
        &agent.url,
        rpc("message/send", text_params("small")).to_string(),
    )
    .await;
    assert_eq!(ok["result"]["status"]["state"], "completed");
}

#[tokio::test]
async fn hostile_input_never_panics_or_hangs() {
    let agent = echo(0).await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let bodies = vec![
        deep,
        "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"tasks/get\"}".to_owned(),
        rpc(
            "message/send",
            json!({ "message": { "kind": "message", "messageId": "m", "role": "user",
            "parts": [{ "kind": "data", "data": [1, 2] }] } }),
        )
        .to_string(),
        rpc("message/send", json!({ "message": null })).to_string(),
        rpc("tasks/get", json!({ "id": "x".repeat(100_000) })).to_string(),
    ];
    for body in bodies {
        let (status, resp) = post_raw(&agent.url, body.clone()).await;
        assert_eq!(status, 200, "{}", &body[..body.len().min(80)]);
        assert!(
            resp["error"]["code"].is_i64(),
            "a JSON-RPC error for {}: {resp}",
            &body[..body.len().min(80)]
        );
    }
}

/// The tests above whose answers the official SDK 0.3 reads too: in the full suite each
/// runs again here, with `assert_valid` on (plain `cargo test` checks the same answers
/// in Rust alone). No test of the plain tier runs twice.
mod read_by_the_sdk {
    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn parse_error_32700() {
        super::parse_error_32700();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn invalid_request_32600() {
        super::invalid_request_32600();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn batches_are_rejected_clearly() {
        super::batches_are_rejected_clearly();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn method_not_found_32601() {
        super::method_not_found_32601();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn invalid_params_32602_name_the_field() {
        super::invalid_params_32602_name_the_field();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn ids_with_control_characters_or_too_long_are_32602() {
        super::ids_with_control_characters_or_too_long_are_32602();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn message_to_a_terminal_task_32004() {
        super::message_to_a_terminal_task_32004();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn task_not_found_32001() {
        super::task_not_found_32001();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn task_not_cancelable_32002() {
        super::task_not_cancelable_32002();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn push_not_supported_32003() {
        super::push_not_supported_32003();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn streaming_unsupported_32004() {
        super::streaming_unsupported_32004();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn content_type_not_supported_32005() {
        super::content_type_not_supported_32005();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn extended_card_not_configured_32007() {
        super::extended_card_not_configured_32007();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn requests_without_an_id_are_refused_and_not_run() {
        super::requests_without_an_id_are_refused_and_not_run();
    }

    #[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
    #[test]
    fn oversized_bodies_get_413_with_a_jsonrpc_error() {
        super::oversized_bodies_get_413_with_a_jsonrpc_error();
    }
}

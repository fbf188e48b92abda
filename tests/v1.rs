//! A2A v1.0 on our server, checked on the wire: version negotiation (header and query
//! parameter; missing, 0.3, 1.0, 99.0) on both bindings, and every v1.0 error with its
//! JSON-RPC code or HTTP status and its `google.rpc.ErrorInfo`.

use std::time::Duration;

use a2a::server::ServerConfig;
use serde_json::{Value, json};

use crate::echo_agent::{EchoAgent, echo_card};
use crate::util::{echo, serve};

fn http() -> reqwest::Client {
    a2a::https::reqwest_client_builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A JSON-RPC call with `version` as the `A2A-Version` header (none when `None`).
async fn rpc(url: &str, version: Option<&str>, method: &str, params: Value) -> Value {
    let mut req = http().post(url).json(&json!({
        "jsonrpc": "2.0", "id": 7, "method": method, "params": params
    }));
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    req.send().await.unwrap().json().await.unwrap()
}

/// An HTTP+JSON call: (status, body).
async fn rest(
    method: reqwest::Method,
    url: &str,
    version: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http().request(method, url);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The whole SSE body of a v1.0 JSON-RPC streaming call, with `extra` headers.
async fn stream_text(url: &str, method: &str, params: Value, extra: &[(&str, &str)]) -> String {
    let mut req = http().post(url).header("A2A-Version", "1.0").json(&json!({
        "jsonrpc": "2.0", "id": 1, "method": method, "params": params
    }));
    // Replacing, not adding to, what the client sends by default (its `Accept: */*`).
    let mut headers = reqwest::header::HeaderMap::new();
    for (k, v) in extra {
        headers.append(
            reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    req = req.headers(headers);
    req.send().await.unwrap().text().await.unwrap()
}

fn send_params(text: &str) -> Value {
    json!({ "message": {
        "messageId": uuid_like(), "role": "ROLE_USER", "parts": [{ "text": text }]
    }})
}

fn uuid_like() -> String {
    a2a::types::MessageId::random().to_string()
}

/// The JSON-RPC error's code and its ErrorInfo reason.
fn rpc_error(resp: &Value) -> (i64, String) {
    let e = &resp["error"];
    assert!(e.is_object(), "an error: {resp}");
    let info = &e["data"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{resp}"
    );
    assert_eq!(info["domain"], "a2a-protocol.org", "{resp}");
    (
        e["code"].as_i64().unwrap(),
        info["reason"].as_str().unwrap().to_owned(),
    )
}

/// The HTTP+JSON error's status name and ErrorInfo reason.
fn rest_error(body: &Value) -> (String, String) {
    let e = &body["error"];
    assert!(e.is_object(), "an error: {body}");
    let info = &e["details"][0];
    assert_eq!(info["domain"], "a2a-protocol.org", "{body}");
    (
        e["status"].as_str().unwrap().to_owned(),
        info["reason"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn versions_are_negotiated_on_json_rpc() {
    let agent = echo(0).await;
    let url = &agent.url;
    // v1.0 methods need A2A-Version 1.0; none means 0.3.
    for version in [None, Some("0.3"), Some("99.0")] {
        let resp = rpc(url, version, "SendMessage", send_params("x")).await;
        assert_eq!(
            rpc_error(&resp),
            (-32009, "VERSION_NOT_SUPPORTED".into()),
            "{version:?}"
        );
    }
    let ok = rpc(url, Some("1.0"), "SendMessage", send_params("hi")).await;
    assert_eq!(
        ok["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{ok}"
    );
    let ok = rpc(
        url,
        Some("1.0.1"),
        "GetTask",
        json!({"id": ok["result"]["task"]["id"]}),
    )
    .await;
    assert!(
        ok["result"]["id"].is_string(),
        "patch versions are ignored: {ok}"
    );
    // As a query parameter.
    let resp: Value = http()
        .post(format!("{url}?A2A-Version=1.0"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(resp["result"]["tasks"].is_array(), "{resp}");
    // v0.3 methods with a 1.0 header are refused; without one they work as ever.
    let v03 = json!({"message": {"kind": "message", "messageId": uuid_like(), "role": "user",
        "parts": [{"kind": "text", "text": "old"}]}});
    let resp = rpc(url, Some("1.0"), "message/send", v03.clone()).await;
    assert_eq!(resp["error"]["code"], -32009, "{resp}");
    let resp = rpc(url, None, "message/send", v03).await;
    assert_eq!(resp["result"]["status"]["state"], "completed", "{resp}");
    // An unknown version names itself and what is spoken.
    let resp = rpc(url, Some("99.0"), "GetTask", json!({"id": "x"})).await;
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(message.contains("1.0"), "{message}");
}

#[tokio::test]
async fn versions_are_negotiated_on_http_json() {
    let agent = echo(0).await;
    let base = agent.url.trim_end_matches('/');
    for version in [None, Some("0.3"), Some("99.0")] {
        let (status, body) = rest(
            reqwest::Method::GET,
            &format!("{base}/tasks"),
            version,
            None,
        )
        .await;
        assert_eq!(status, 400, "{version:?}: {body}");
        assert_eq!(
            rest_error(&body),
            ("FAILED_PRECONDITION".into(), "VERSION_NOT_SUPPORTED".into())
        );
    }
    let (status, body) = rest(
        reqwest::Method::GET,
        &format!("{base}/tasks?A2A-Version=1.0"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["nextPageToken"], "", "always present: {body}");
    let (status, body) = rest(
        reqwest::Method::POST,
        &format!("{base}/acme/message:send"),
        Some("1.0"),
        Some(send_params("tenant prefix")),
    )
    .await;
    assert_eq!(status, 200, "a tenant prefix is honoured: {body}");
}

/// A tenant is stored with every task made in it: one with a control character (a
/// `%00` in the path decodes to NUL), or longer than 256 bytes, is refused on both
/// bindings, naming `tenant`; and a listing's context filter is checked as ids are.
#[tokio::test]
async fn tenants_and_filters_with_control_characters_or_too_long_are_refused() {
    let agent = echo(0).await;
    let url = agent.url.as_str();
    let base = url.trim_end_matches('/');
    let long = "t".repeat(257);
    for (tenant, why) in [
        ("a\u{0}b", "U+0000) at byte 1"),
        (long.as_str(), "257 bytes long"),
    ] {
        let mut params = send_params("x");
        params["tenant"] = json!(tenant);
        let resp = rpc(url, Some("1.0"), "SendMessage", params).await;
        assert_eq!(rpc_error(&resp), (-32602, "INVALID_PARAMS".into()));
        assert_eq!(
            resp["error"]["data"][1]["fieldViolations"][0]["field"], "tenant",
            "{resp}"
        );
        assert!(
            resp["error"]["message"].as_str().unwrap().contains(why),
            "{resp}"
        );
    }
    for tenant in ["a%00b", "a%0Ab", long.as_str()] {
        let (status, body) = rest(
            reqwest::Method::POST,
            &format!("{base}/{tenant}/message:send"),
            Some("1.0"),
            Some(send_params("x")),
        )
        .await;
        assert_eq!(
            (status, rest_error(&body).1),
            (400, "INVALID_PARAMS".into()),
            "{tenant}: {body}"
        );
    }
    // So is a listing's context filter, compared with the stored ids.
    let resp = rpc(
        url,
        Some("1.0"),
        "ListTasks",
        json!({"contextId": "c\u{0}"}),
    )
    .await;
    assert_eq!(rpc_error(&resp).0, -32602);
    assert_eq!(
        resp["error"]["data"][1]["fieldViolations"][0]["field"], "contextId",
        "{resp}"
    );
}

#[tokio::test]
async fn every_error_has_its_code_status_and_reason_on_both_bindings() {
    let agent = echo(0).await;
    let url = agent.url.as_str();
    let base = url.trim_end_matches('/');
    let v = Some("1.0");
    let done = rpc(url, v, "SendMessage", send_params("finished")).await;
    let done_id = done["result"]["task"]["id"].as_str().unwrap().to_owned();

    // TaskNotFound.
    let resp = rpc(url, v, "GetTask", json!({"id": "nope"})).await;
    assert_eq!(rpc_error(&resp), (-32001, "TASK_NOT_FOUND".into()));
    let (status, body) = rest(reqwest::Method::GET, &format!("{base}/tasks/nope"), v, None).await;
    assert_eq!(
        (status, rest_error(&body)),
        (404, ("NOT_FOUND".into(), "TASK_NOT_FOUND".into()))
    );

    // TaskNotCancelable.
    let resp = rpc(url, v, "CancelTask", json!({"id": done_id})).await;
    assert_eq!(rpc_error(&resp), (-32002, "TASK_NOT_CANCELABLE".into()));
    let (status, body) = rest(
        reqwest::Method::POST,
        &format!("{base}/tasks/{done_id}:cancel"),
        v,
        None,
    )
    .await;
    assert_eq!(
        (status, rest_error(&body).1),
        (400, "TASK_NOT_CANCELABLE".into())
    );

    // UnsupportedOperation: subscribing to a finished task, answered as a plain JSON-RPC
    // error before any stream (as on HTTP+JSON; the kit's STREAM-SUB-003).
    let resp = stream_text(url, "SubscribeToTask", json!({"id": done_id}), &[]).await;
    let data: Value = serde_json::from_str(&resp)
        .unwrap_or_else(|e| panic!("a JSON-RPC error, not a stream ({e}): {resp}"));
    assert_eq!(rpc_error(&data), (-32004, "UNSUPPORTED_OPERATION".into()));
    let (status, body) = rest(
        reqwest::Method::POST,
        &format!("{base}/tasks/{done_id}:subscribe"),
        v,
        None,
    )
    .await;
    assert_eq!(
        (status, rest_error(&body).1),
        (400, "UNSUPPORTED_OPERATION".into())
    );

    // InvalidParams, naming the field, with a BadRequest detail.
    let bad = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [
        {"text": "fine"}, {"metadata": {"a part": "with nothing in it"}}
    ]}});
    let resp = rpc(url, v, "SendMessage", bad.clone()).await;
    assert_eq!(rpc_error(&resp), (-32602, "INVALID_PARAMS".into()));
    assert_eq!(
        resp["error"]["data"][1]["fieldViolations"][0]["field"], "message.parts[1]",
        "{resp}"
    );
    let (status, body) = rest(
        reqwest::Method::POST,
        &format!("{base}/message:send"),
        v,
        Some(bad),
    )
    .await;
    assert_eq!(
        (status, rest_error(&body).1),
        (400, "INVALID_PARAMS".into())
    );
    let resp = rpc(url, v, "ListTasks", json!({"pageSize": 0})).await;
    assert_eq!(rpc_error(&resp).0, -32602);
    let resp = rpc(url, v, "ListTasks", json!({"pageToken": "garbage"})).await;
    assert_eq!(rpc_error(&resp).0, -32602);
    let (status, _) = rest(
        reqwest::Method::GET,
        &format!("{base}/tasks?status=NOT_A_STATE"),
        v,
        None,
    )
    .await;
    assert_eq!(status, 400);

    // ContentTypeNotSupported.
    let mut wants_png = send_params("x");
    wants_png["configuration"] = json!({"acceptedOutputModes": ["image/png"]});
    let resp = rpc(url, v, "SendMessage", wants_png).await;
    assert_eq!(
        rpc_error(&resp),
        (-32005, "CONTENT_TYPE_NOT_SUPPORTED".into())
    );

    // The extended card, not offered by this card.
    let resp = rpc(url, v, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(rpc_error(&resp), (-32004, "UNSUPPORTED_OPERATION".into()));
    let (status, _) = rest(
        reqwest::Method::GET,
        &format!("{base}/extendedAgentCard"),
        v,
        None,
    )
    .await;
    assert_eq!(status, 400);

    // MethodNotFound, and JSON that does not parse.
    let resp = rpc(url, v, "NoSuchMethod", json!({})).await;
    assert_eq!(rpc_error(&resp), (-32601, "METHOD_NOT_FOUND".into()));
    let (status, body) = rest(
        reqwest::Method::GET,
        &format!("{base}/no/such/route"),
        v,
        None,
    )
    .await;
    assert_eq!(
        (status, rest_error(&body).1),
        (404, "METHOD_NOT_FOUND".into())
    );
    let resp = http()
        .post(format!("{base}/message:send"))
        .header("A2A-Version", "1.0")
        .header("content-type", "application/a2a+json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);

    // Last-Event-ID past the end of the log.
    let resp = stream_text(
        url,
        "SubscribeToTask",
        json!({"id": done_id}),
        &[("Last-Event-ID", "999")],
    )
    .await;
    assert!(resp.contains("-32600") && resp.contains("999"), "{resp}");
}

#[tokio::test]
async fn push_configs_need_the_capability_and_extensions_are_required_when_marked() {
    let agent = serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        |url| {
            let mut card = echo_card(url);
            card.capabilities = Some(a2a::card::AgentCapabilities {
                streaming: Some(true),
                push_notifications: None,
                extensions: vec![a2a::card::AgentExtension {
                    uri: "https://example.com/ext/must".into(),
                    required: true,
                    ..Default::default()
                }],
                ..Default::default()
            });
            card
        },
        ServerConfig::default(),
    )
    .await;
    let url = agent.url.as_str();
    let resp = rpc(url, Some("1.0"), "SendMessage", send_params("x")).await;
    assert_eq!(
        rpc_error(&resp),
        (-32008, "EXTENSION_SUPPORT_REQUIRED".into())
    );
    let send = |headers: &[(&str, &str)]| {
        let mut req = http().post(url).json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig",
            "params": {"taskId": "t", "url": "https://example.com/hook"}
        }));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
    };
    let resp: Value = send(&[
        ("A2A-Version", "1.0"),
        ("A2A-Extensions", "https://example.com/ext/must"),
    ])
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        rpc_error(&resp),
        (-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED".into())
    );
    // The same on v0.3, whose errors keep their v0.3 shape.
    let resp = rpc(url, None, "tasks/get", json!({"id": "x"})).await;
    assert_eq!(resp["error"]["code"], -32008, "{resp}");
    assert!(
        !resp["error"]["data"].is_array(),
        "v0.3 errors keep their shape: {resp}"
    );
}

/// A client that lost its stream subscribes again with `Last-Event-ID`, on either
/// binding: the stream begins with the task as it stands (§3.1.6), numbered as the last
/// event it includes, then the events after it, in v1.0's shape; a finished task is that
/// one frame. (v0.3's `tasks/resubscribe` replays the logged events: durable.rs.)
#[tokio::test]
async fn last_event_id_resumes_with_the_task_first_on_both_bindings() {
    let agent = echo(100).await;
    let url = agent.url.as_str();
    let base = url.trim_end_matches('/');
    let frames = |body: &str| -> Vec<(u64, Value)> {
        let mut out = Vec::new();
        for block in body.split("\n\n") {
            let (mut seq, mut data) = (0, None);
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("id:") {
                    seq = n.trim().parse().unwrap();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data = Some(serde_json::from_str(d.trim()).unwrap());
                }
            }
            if let Some(d) = data {
                out.push((seq, d));
            }
        }
        out
    };
    // A task still working (ten words, a tenth of a second each), resumed after its
    // first event on each binding.
    let start = || async {
        let mut p = send_params("one two three four five six seven eight nine ten");
        p["configuration"] = json!({ "returnImmediately": true });
        let sent = rpc(url, Some("1.0"), "SendMessage", p).await;
        let id = sent["result"]["task"]["id"]
            .as_str()
            .expect("a task")
            .to_owned();
        tokio::time::sleep(Duration::from_millis(250)).await;
        id
    };
    let id = start().await;
    let jsonrpc = stream_text(
        url,
        "SubscribeToTask",
        json!({"id": id}),
        &[("Last-Event-ID", "1")],
    )
    .await;
    // HTTP+JSON's SubscribeToTask of `id` after event `after`: the whole SSE body.
    let rest_subscribe = |id: String, after: &'static str| async move {
        http()
            .get(format!("{base}/tasks/{id}:subscribe"))
            .header("A2A-Version", "1.0")
            .header("Last-Event-ID", after)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let id = start().await;
    let rest_body = rest_subscribe(id.clone(), "1").await;
    for (body, result) in [(&jsonrpc, true), (&rest_body, false)] {
        let got = frames(body);
        let response = |v: &Value| {
            if result {
                v["result"].clone()
            } else {
                v.clone()
            }
        };
        let (first_n, first) = &got[0];
        let first = response(first);
        assert_eq!(
            first["task"]["status"]["state"], "TASK_STATE_WORKING",
            "{body}"
        );
        assert!(*first_n >= 1, "{body}");
        let numbers: Vec<u64> = got.iter().map(|(n, _)| *n).collect();
        assert!(
            numbers.windows(2).all(|w| w[1] == w[0] + 1),
            "the events after the task, each once, in order: {numbers:?}"
        );
        let last = response(&got.last().unwrap().1);
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{body}"
        );
        assert!(last.get("final").is_none() && last["statusUpdate"].get("final").is_none());
    }

    // Once the task has ended: the finished task alone, numbered as its last event, the
    // same on both bindings.
    let ended = stream_text(
        url,
        "SubscribeToTask",
        json!({"id": id}),
        &[("Last-Event-ID", "2")],
    )
    .await;
    let rest_ended = rest_subscribe(id.clone(), "2").await;
    let (a, b) = (frames(&ended), frames(&rest_ended));
    let ([(n, only)], [(m, also)]) = (&a[..], &b[..]) else {
        panic!("one frame each: {ended} / {rest_ended}");
    };
    assert_eq!(n, m);
    assert_eq!(*n, frames(&rest_body).last().unwrap().0, "{ended}");
    assert_eq!(
        only["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{ended}"
    );
    assert_eq!(&only["result"], also);

    // A task sent and answered without a stream: nobody was given its events' numbers,
    // and its end stands for its log — one frame, the finished task.
    let sent = rpc(url, Some("1.0"), "SendMessage", send_params("one two")).await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let resumed = stream_text(
        url,
        "SubscribeToTask",
        json!({"id": id}),
        &[("Last-Event-ID", "2")],
    )
    .await;
    let resumed = frames(&resumed);
    let [(_, only)] = &resumed[..] else {
        panic!("one frame: {resumed:?}");
    };
    assert_eq!(only["result"]["task"], sent["result"]["task"]);
}

/// Every bound is an error that names it, never a crash, a hang or a silent cut; the
/// server stays healthy and echoes no huge id back.
#[tokio::test]
async fn bounds_on_parts_ids_and_metadata_name_the_limit() {
    let agent = echo(0).await;
    let url = agent.url.as_str();
    let v = Some("1.0");
    let mut many = send_params("x");
    many["message"]["parts"] = Value::Array(vec![json!({"text": "a"}); 1_001]);
    let resp = rpc(url, v, "SendMessage", many).await;
    assert_eq!(rpc_error(&resp).0, -32602, "{resp}");
    let message = resp["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("message.parts") && message.contains("1000"),
        "{message}"
    );
    let huge = "i".repeat(5_000_000);
    let resp = rpc(url, v, "GetTask", json!({ "id": huge })).await;
    assert_eq!(rpc_error(&resp).0, -32602);
    assert!(resp.to_string().len() < 2_000, "the id is not echoed back");
    let mut long_id = send_params("x");
    long_id["message"]["messageId"] = json!("m".repeat(300));
    let resp = rpc(url, v, "SendMessage", long_id).await;
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("message.messageId"),
        "{resp}"
    );
    let mut fat = send_params("x");
    fat["metadata"] = json!({ "blob": "b".repeat(70 * 1024) });
    let resp = rpc(url, v, "SendMessage", fat).await;
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("metadata"),
        "{resp}"
    );
    // Healthy afterwards.
    let ok = rpc(url, v, "SendMessage", send_params("still here")).await;
    assert_eq!(
        ok["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

/// A web page cannot make this server do anything: a `text/plain` (or form) POST —
/// which a browser sends cross-site without a preflight — is refused before anything
/// runs, and a foreign `Origin` is refused unless listed; a listed one gets CORS.
#[tokio::test]
async fn browsers_cannot_run_anything_unless_their_origin_is_allowed() {
    let agent = serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        ServerConfig {
            cors_origins: vec!["https://app.example.com".into()],
            ..ServerConfig::default()
        },
    )
    .await;
    let url = agent.url.as_str();
    let base = url.trim_end_matches('/');
    let v03 = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": uuid_like(), "role": "user", "parts": [{"kind": "text", "text": "x"}]}}});
    // The cross-site "simple request": text/plain, from a foreign page.
    let resp = http()
        .post(url)
        .header("content-type", "text/plain")
        .header("origin", "https://evil.example.net")
        .body(v03.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    let resp = http()
        .post(url)
        .header("content-type", "text/plain")
        .body(v03.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415, "text/plain is not JSON");
    // ContentTypeNotSupportedError (§5.4; the kit's JSONRPC-SSE-002), with v1.0's
    // ErrorInfo when the request names v1.0.
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32005, "{body}");
    let resp = http()
        .post(url)
        .header("content-type", "text/plain")
        .header("A2A-Version", "1.0")
        .body(v03.to_string())
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        rpc_error(&body),
        (-32005, "CONTENT_TYPE_NOT_SUPPORTED".into()),
        "{body}"
    );
    let (status, body) = rest(
        reqwest::Method::GET,
        &format!("{base}/tasks"),
        Some("1.0"),
        None,
    )
    .await;
    assert_eq!(
        (status, body["totalSize"].as_i64()),
        (200, Some(0)),
        "nothing ran: {body}"
    );
    // An allowed origin: preflight, then the call, both with CORS headers.
    let pre = http()
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status().as_u16(), 204);
    assert_eq!(
        pre.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    let ok = http()
        .post(url)
        .header("origin", "https://app.example.com")
        .json(&v03)
        .send()
        .await
        .unwrap();
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body["result"]["status"]["state"], "completed", "{body}");
    // The server's own pages are never foreign.
    let host = base.trim_start_matches("http://");
    let own = http()
        .post(url)
        .header("origin", format!("http://{host}"))
        .json(&v03)
        .send()
        .await
        .unwrap();
    assert_eq!(own.status().as_u16(), 200);
}

/// The resident memory of a process, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

/// Eight messages of 200,000 tiny parts (6 MB each) at once: each is refused for its
/// parts, nothing of them is kept, and `serve`'s memory comes back near where it was.
#[tokio::test(flavor = "multi_thread")]
async fn floods_of_parts_are_refused_and_memory_comes_back() {
    let (child, url) = crate::util::orchestra::spawn_serve(
        &["--workflows", "workflows", "--agents", "agents.toml"],
        &[],
    )
    .await;
    let pid = child.id().unwrap();
    let part = json!({"kind": "text", "text": "x"});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "flood", "role": "user",
        "parts": vec![part; 200_000]}}})
    .to_string();
    // Warm up: one request of each kind, so what is measured is growth, not start-up.
    let flood = |body: String| {
        let url = url.clone();
        async move {
            http()
                .post(&url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let first = flood(body.clone()).await;
    assert_eq!(first["error"]["code"], -32602, "refused for its parts");
    // And a first flood like the measured one: the allocator's per-thread arenas it
    // touches grow once (that is the allocator's, and stays), so the measure below is
    // what a flood keeps, not where it first landed.
    futures::future::join_all((0..8).map(|_| flood(body.clone()))).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_bytes(pid);
    let answers = futures::future::join_all((0..8).map(|_| flood(body.clone()))).await;
    assert!(answers.iter().all(|a| a["error"]["code"] == -32602));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_bytes(pid);
    let grown = after.saturating_sub(before);
    eprintln!(
        "serve: {} MB before the floods, {} MB after",
        before >> 20,
        after >> 20
    );
    assert!(
        grown < 32 << 20,
        "serve grew by {} MB after the floods (from {} MB)",
        grown >> 20,
        before >> 20
    );
    // Healthy.
    let ok: Value = http()
        .get(format!("{url}.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(ok["name"].is_string());
    drop(child);
}

/// Our own client speaking v1.0 does everything it does over v0.3, on the same
/// internal types: send, stream, get, cancel, resubscribe, the push configs, the
/// extended card.
#[tokio::test]
async fn our_client_speaks_v1_0_throughout_over_jsonrpc() {
    our_client_speaks_v1_0_throughout(a2a::client::Binding::JsonRpc, "").await;
}

/// The same over HTTP+JSON, with a tenant in the path.
#[tokio::test]
async fn our_client_speaks_v1_0_throughout_over_http_json() {
    our_client_speaks_v1_0_throughout(a2a::client::Binding::HttpJson, "acme").await;
}

/// The same over gRPC, with a tenant in the messages.
#[tokio::test]
async fn our_client_speaks_v1_0_throughout_over_grpc() {
    our_client_speaks_v1_0_throughout(a2a::client::Binding::Grpc, "acme").await;
}

async fn our_client_speaks_v1_0_throughout(binding: a2a::client::Binding, tenant: &str) {
    use a2a::Version;
    use a2a::client::{A2aClient, ClientConfig, Interface};
    use a2a::types::*;
    use futures::StreamExt;
    let agent = crate::util::serve_with(
        EchoAgent {
            word_delay: Duration::from_millis(5),
        },
        |url| {
            let mut card = echo_card(url);
            card.capabilities_mut().extended_agent_card = Some(true);
            card
        },
        |b| {
            let mut extended = echo_card("http://unused/");
            extended.description = "the extended one".into();
            b.config(ServerConfig {
                allow_private_webhooks: true,
                ..ServerConfig::default()
            })
            .extended_card(extended)
        },
    )
    .await;
    let c = A2aClient::new(&agent.url, ClientConfig::default())
        .unwrap()
        .only(Interface {
            url: agent.url.clone(),
            protocol: Version::V1_0,
            binding,
            tenant: tenant.to_owned(),
        });
    let sent = c
        .send_message(&SendMessageRequest::new(Message::user_text(
            "v1 all the way",
        )))
        .await
        .unwrap();
    let SendMessageResult::Task(task) = sent else {
        panic!("a task")
    };
    assert_eq!(task.status().state(), TaskState::Completed);
    assert_eq!(parts_text(&task.artifacts[0].parts), "v1 all the way");
    let mut events = c
        .send_message_stream(&SendMessageRequest::new(Message::user_text("a b c")))
        .await
        .unwrap();
    let mut last = None;
    let mut chunks = 0;
    while let Some(e) = events.next().await {
        let e = e.unwrap();
        if matches!(e, StreamEvent::ArtifactUpdate(_)) {
            chunks += 1;
        }
        last = Some(e);
    }
    assert_eq!(chunks, 3);
    match last {
        Some(StreamEvent::StatusUpdate(u)) => {
            assert!(u.status().state() == TaskState::Completed)
        }
        other => panic!("{other:?}"),
    }
    let got = c
        .get_task(&GetTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(got.id, task.id);
    let config = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "hook".into(),
        url: "http://127.0.0.1:9/hook".into(),
        token: "t".into(),
        ..Default::default()
    };
    let get_hook = || GetTaskPushNotificationConfigRequest {
        task_id: task.id.clone(),
        id: "hook".into(),
        ..Default::default()
    };
    let delete_hook = || DeleteTaskPushNotificationConfigRequest {
        task_id: task.id.clone(),
        id: "hook".into(),
        ..Default::default()
    };
    let list = ListTaskPushNotificationConfigsRequest {
        task_id: task.id.clone(),
        ..Default::default()
    };
    let made = c.set_push_config(&config).await.unwrap();
    assert_eq!(made, config);
    let listed = c.list_push_configs(&list).await.unwrap().configs;
    assert_eq!(listed, std::slice::from_ref(&config));
    let one = c.get_push_config(&get_hook()).await.unwrap();
    assert_eq!(one, config);
    c.delete_push_config(&delete_hook()).await.unwrap();
    assert!(c.list_push_configs(&list).await.unwrap().configs.is_empty());
    // Deleting it again has the same effect, not an error (spec §3.1.10, the kit's
    // PUSH-DEL-002).
    c.delete_push_config(&delete_hook()).await.unwrap();
    // A config that does not exist is TaskNotFoundError (v1.0.1 §3.1.8).
    let e = c.get_push_config(&get_hook()).await.unwrap_err();
    assert_eq!(
        e.rpc().map(|e| e.code),
        Some(a2a::ErrorCode::TASK_NOT_FOUND),
        "{e}"
    );
    let extended = c.get_authenticated_extended_card().await.unwrap();
    assert_eq!(extended.description, "the extended one");
    let e = c
        .cancel_task(&CancelTaskRequest::new(task.id.clone()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("-32002"), "{e}");
    let e = c
        .get_task(&GetTaskRequest::new(TaskId::new("no-such-task")))
        .await
        .unwrap_err();
    assert_eq!(
        e.rpc().map(|e| e.code),
        Some(a2a::ErrorCode::TASK_NOT_FOUND),
        "{e}"
    );
    // v1.0 refuses a subscription to a finished task (UnsupportedOperation).
    // (Over JSON-RPC the error is the stream's one event.)
    let e = match c
        .subscribe(&SubscribeToTaskRequest::new(task.id.clone()))
        .await
    {
        Ok(mut events) => tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("the error arrives")
            .expect("one event")
            .expect_err("a finished task cannot be subscribed to"),
        Err(e) => e,
    };
    assert_eq!(
        e.rpc().map(|e| e.code),
        Some(a2a::ErrorCode::UNSUPPORTED_OPERATION),
        "{e}"
    );
}

/// A card that offers v1.0 first at an agent that turns it down: the client falls back
/// to the card's v0.3 interface on VersionNotSupported, and stays there.
#[tokio::test]
async fn the_client_falls_back_to_v0_3_when_v1_0_is_turned_down() {
    use a2a::Version;
    use a2a::client::{A2aClient, ClientConfig, Interface, http_client};
    use a2a::server::Versions;
    use a2a::types::*;
    let agent = crate::util::serve(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card,
        ServerConfig {
            generations: Versions::V0_3,
            ..ServerConfig::default()
        },
    )
    .await;
    let c = A2aClient::with_interfaces(
        http_client(),
        vec![
            Interface::jsonrpc(&agent.url, Version::V1_0),
            Interface::jsonrpc(&agent.url, Version::V0_3),
        ],
        ClientConfig::default(),
    )
    .unwrap();
    assert_eq!(c.version(), Version::V1_0);
    let sent = c
        .send_message(&SendMessageRequest::new(Message::user_text("fall back")))
        .await
        .unwrap();
    let SendMessageResult::Task(task) = sent else {
        panic!("a task")
    };
    assert_eq!(task.status().state(), TaskState::Completed);
    assert_eq!(c.version(), Version::V0_3, "it stays on v0.3");
    let again = c
        .clone()
        .get_task(&GetTaskRequest::new(task.id))
        .await
        .unwrap();
    assert_eq!(again.status().state(), TaskState::Completed);

    // With nothing to fall back to, the refusal is the caller's.
    let only = A2aClient::with_interfaces(
        http_client(),
        vec![Interface::jsonrpc(&agent.url, Version::V1_0)],
        ClientConfig::default(),
    )
    .unwrap();
    let e = only
        .send_message(&SendMessageRequest::new(Message::user_text("no")))
        .await
        .unwrap_err();
    assert_eq!(
        e.rpc().map(|e| e.code),
        Some(a2a::ErrorCode::VERSION_NOT_SUPPORTED),
        "{e}"
    );
}

/// Issue 37, defect 3: `historyLength = 0` asks for no history at all — on GetTask over
/// JSON-RPC and HTTP+JSON, and on SendMessage's configuration — while an unset one
/// gives the whole history and 1 the last message.
#[tokio::test]
async fn history_length_zero_returns_no_history_on_both_bindings() {
    let agent = echo(0).await;
    let url = &agent.url;
    let sent = rpc(
        url,
        Some("1.0"),
        "SendMessage",
        send_params("hello history"),
    )
    .await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let whole = rpc(url, Some("1.0"), "GetTask", json!({ "id": id })).await;
    let all = whole["result"]["history"].as_array().map_or(0, Vec::len);
    assert!(all >= 1, "{whole}");
    let none = rpc(
        url,
        Some("1.0"),
        "GetTask",
        json!({ "id": id, "historyLength": 0 }),
    )
    .await;
    assert!(
        none["result"]["history"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{none}"
    );
    let one = rpc(
        url,
        Some("1.0"),
        "GetTask",
        json!({ "id": id, "historyLength": 1 }),
    )
    .await;
    assert_eq!(
        one["result"]["history"].as_array().map_or(0, Vec::len),
        1,
        "{one}"
    );
    let (status, body) = rest(
        reqwest::Method::GET,
        &format!("{url}tasks/{id}?historyLength=0"),
        Some("1.0"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["history"].as_array().is_none_or(Vec::is_empty),
        "{body}"
    );
    let mut params = send_params("no history back");
    params["configuration"] = json!({ "historyLength": 0 });
    let sent = rpc(url, Some("1.0"), "SendMessage", params).await;
    assert!(
        sent["result"]["task"]["history"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{sent}"
    );
}

/// Issue 37 (conformance defect 4): ProtoJSON parsers read a field under its proto name
/// as well as its JSON name — the kit sends `task_id` — and a webhook whose host does not
/// resolve yet is taken (its address is checked at each delivery).
#[tokio::test]
async fn proto_field_names_are_read_and_unresolved_webhooks_taken() {
    let agent = echo(0).await;
    let url = &agent.url;
    let sent = rpc(url, Some("1.0"), "SendMessage", send_params("proto names")).await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let none = rpc(
        url,
        Some("1.0"),
        "GetTask",
        json!({ "id": id, "history_length": 0 }),
    )
    .await;
    assert!(
        none["result"]["history"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "history_length is historyLength: {none}"
    );
    let created = rpc(
        url,
        Some("1.0"),
        "CreateTaskPushNotificationConfig",
        json!({ "task_id": id, "url": "https://hooks.invalid/a2a" }),
    )
    .await;
    assert!(created["error"].is_null(), "{created}");
    assert_eq!(created["result"]["taskId"], id.as_str(), "{created}");
    assert_eq!(created["result"]["url"], "https://hooks.invalid/a2a");
    // A private address is still refused.
    let private = rpc(
        url,
        Some("1.0"),
        "CreateTaskPushNotificationConfig",
        json!({ "taskId": id, "url": "http://10.0.0.1/hook" }),
    )
    .await;
    assert!(!private["error"].is_null(), "{private}");
}

/// Issue 37 (conformance defect 1): a stream asked for with an `Accept` that leaves out
/// `text/event-stream` is ContentTypeNotSupported (-32005) on both bindings, and a part
/// of a media type the agent does not take is too; `*/*` and no `Accept` stream.
#[tokio::test]
async fn streams_refuse_an_accept_they_cannot_answer() {
    let agent = echo(0).await;
    let url = &agent.url;
    let refused = stream_text(
        url,
        "SendStreamingMessage",
        send_params("hi"),
        &[("Accept", "application/json")],
    )
    .await;
    let refused: Value = serde_json::from_str(&refused)
        .unwrap_or_else(|e| panic!("a JSON-RPC error, not a stream ({e}): {refused}"));
    assert_eq!(
        rpc_error(&refused),
        (-32005, "CONTENT_TYPE_NOT_SUPPORTED".into()),
        "{refused}"
    );
    let resp = http()
        .post(format!("{url}message:stream"))
        .header("A2A-Version", "1.0")
        .json(&send_params("hi"))
        .headers(reqwest::header::HeaderMap::from_iter([(
            reqwest::header::ACCEPT,
            "application/xml".parse().unwrap(),
        )]))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        rest_error(&body).1,
        "CONTENT_TYPE_NOT_SUPPORTED",
        "{status} {body}"
    );
    for accept in ["*/*", "text/event-stream, application/json;q=0.5"] {
        let streamed = stream_text(
            url,
            "SendStreamingMessage",
            send_params("hi"),
            &[("Accept", accept)],
        )
        .await;
        assert!(streamed.contains("data:"), "{accept}: {streamed}");
    }
    // A part the agent does not take (its card takes text only).
    let mut params = send_params("a picture");
    params["message"]["parts"] = json!([{ "raw": "aGk=", "mediaType": "image/png" }]);
    let resp = rpc(url, Some("1.0"), "SendMessage", params).await;
    assert_eq!(rpc_error(&resp).0, -32005, "{resp}");
}

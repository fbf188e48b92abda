//! The client against hand-made HTTP servers: card discovery and its fallbacks,
//! transport selection, SSE parsing tolerance and limits, and typed errors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::card::{AgentCard, AgentInterface};
use a2a::client::{A2aClient, CardResolver, ClientAuth, ClientConfig, ClientError, http_client};
use a2a::types::*;
use axum::Router;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::echo_agent::echo_card;
use crate::util::serve_router;

fn resolver() -> CardResolver {
    CardResolver::new(http_client(), Default::default(), Duration::from_secs(10))
}

#[tokio::test]
async fn resolves_the_legacy_card_path_when_the_current_one_is_missing() {
    let router = Router::new().route(
        "/.well-known/agent.json",
        // A v0.3 agent's card, where v0.3 agents first published it.
        get(|| async {
            axum::Json(json!({
                "protocolVersion": "0.3.0", "name": "legacy", "description": "", "version": "1",
                "url": "http://legacy.example/rpc", "capabilities": {},
                "defaultInputModes": [], "defaultOutputModes": [], "skills": []
            }))
        }),
    );
    let base = serve_router(router).await;
    let card = resolver().resolve(&base).await.unwrap();
    assert_eq!(card.url(), "http://legacy.example/rpc");
    assert_eq!(card.supported_interfaces[0].protocol_version, "0.3.0");
}

#[tokio::test]
async fn card_errors_say_what_is_wrong() {
    let router = Router::new()
        .route(
            "/bad/.well-known/agent-card.json",
            get(|| async { axum::Json(json!({ "name": "x" })) }),
        )
        .route(
            "/notjson/.well-known/agent-card.json",
            get(|| async { "<html>" }),
        );
    let base = serve_router(router).await;

    let err = resolver()
        .resolve(&format!("{base}/bad"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Protocol { .. }), "{err}");
    assert!(err.to_string().contains("supportedInterfaces"), "{err}");

    let err = resolver()
        .resolve(&format!("{base}/notjson"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Protocol { .. }), "{err}");

    let err = resolver()
        .resolve(&format!("{base}/none"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::HttpStatus { status: 404, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("legacy"), "{err}");

    // Nothing listens on port 9 on loopback.
    let err = resolver().resolve("http://127.0.0.1:9").await.unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
}

#[tokio::test]
async fn transport_selection_follows_the_card() {
    // A v0.3 agent preferring gRPC, which this client speaks at 1.0 only.
    let at = |url: &str, binding: &str| AgentInterface {
        url: url.into(),
        protocol_binding: binding.into(),
        tenant: String::new(),
        protocol_version: "0.3.0".into(),
    };
    let mut card = echo_card("https://grpc.example:443");
    card.supported_interfaces = vec![
        at("https://grpc.example:443", "GRPC"),
        at("https://rpc.example/a2a", "JSONRPC"),
    ];
    let client = A2aClient::from_card(&card, ClientConfig::default()).unwrap();
    assert_eq!(client.endpoint(), "https://rpc.example/a2a");

    card.supported_interfaces = vec![
        at("https://grpc.example:443", "GRPC"),
        at("https://rest.example/v1", "HTTP+JSON"),
    ];
    let err = A2aClient::from_card(&card, ClientConfig::default()).unwrap_err();
    assert!(matches!(err, ClientError::UnsupportedTransport { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("GRPC 0.3.0 at https://grpc.example:443")
            && msg.contains("HTTP+JSON 0.3.0 at https://rest.example/v1"),
        "{msg}"
    );
}

/// A server that answers every POST with `body(request_id)` as an SSE stream.
async fn raw_sse_server(body: fn(&Value) -> String) -> String {
    let router = Router::new().route(
        "/",
        post(move |axum::Json(req): axum::Json<Value>| async move {
            ([("content-type", "text/event-stream")], body(&req["id"]))
        }),
    );
    serve_router(router).await
}

fn task_json() -> Value {
    json!({ "kind": "task", "id": "t", "contextId": "c", "status": { "state": "working" } })
}

#[tokio::test]
async fn sse_parsing_tolerates_comments_crlf_and_multi_line_data() {
    let base = raw_sse_server(|id| {
        let task = json!({ "jsonrpc": "2.0", "id": id, "result": task_json() });
        let done = json!({ "jsonrpc": "2.0", "id": id, "result": {
            "kind": "status-update", "taskId": "t", "contextId": "c", "status": { "state": "completed" }, "final": true } });
        // A keep-alive comment, CRLF line ends, and one JSON document split over
        // several data lines (joined with newlines, which JSON treats as whitespace).
        let pretty = serde_json::to_string_pretty(&done).unwrap();
        let split: String = pretty.lines().map(|l| format!("data: {l}\r\n")).collect();
        format!(": keep-alive\r\n\r\nevent: message\r\ndata: {task}\r\n\r\nretry: 1000\n{split}\r\n")
    })
    .await;
    let client = A2aClient::new(format!("{base}/"), ClientConfig::default()).unwrap();
    let events: Vec<StreamEvent> = client
        .send_message_stream(&SendMessageRequest::new(Message::user_text("x")))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert_eq!(events.len(), 2);
    assert!(
        matches!(&events[1], StreamEvent::StatusUpdate(s) if s.status().state() == TaskState::Completed)
    );
}

#[tokio::test]
async fn oversized_sse_events_are_refused() {
    let base = raw_sse_server(|id| {
        let big = "x".repeat(200_000);
        let ev = json!({ "jsonrpc": "2.0", "id": id, "result": {
            "kind": "artifact-update", "taskId": "t", "contextId": "c", "artifact": { "artifactId": "a", "parts": [{ "kind": "text", "text": big }] } } });
        format!("data: {ev}\n\n")
    })
    .await;
    let config = ClientConfig {
        max_event_bytes: 64 * 1024,
        ..ClientConfig::default()
    };
    let client = A2aClient::new(format!("{base}/"), config).unwrap();
    let mut stream = client
        .send_message_stream(&SendMessageRequest::new(Message::user_text("x")))
        .await
        .unwrap();
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, ClientError::Protocol { .. }), "{err}");
    assert!(err.to_string().contains("65536"), "{err}");
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the error"
    );
}

#[tokio::test]
async fn protocol_violations_and_http_errors_are_told_apart() {
    let router = Router::new()
        .route(
            "/500",
            post(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
        )
        .route(
            "/wrong-id",
            post(|| async {
                axum::Json(json!({ "jsonrpc": "2.0", "id": 999, "result": task_json() }))
            }),
        )
        .route(
            "/not-a-task",
            post(|axum::Json(r): axum::Json<Value>| async move {
                axum::Json(json!({ "jsonrpc": "2.0", "id": r["id"], "result": { "kind": "task" } }))
            }),
        )
        .route(
            "/slow",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        );
    let base = serve_router(router).await;
    let get = GetTaskRequest::new(TaskId::new("t"));
    let at =
        |path: &str, config: ClientConfig| A2aClient::new(format!("{base}{path}"), config).unwrap();

    let err = at("/500", ClientConfig::default())
        .get_task(&get)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::HttpStatus { status: 500, ref body, .. } if body == "boom"),
        "{err}"
    );

    let err = at("/wrong-id", ClientConfig::default())
        .get_task(&get)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Protocol { .. }) && err.to_string().contains("id"),
        "{err}"
    );

    let err = at("/not-a-task", ClientConfig::default())
        .get_task(&get)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Protocol { .. }) && err.to_string().contains("missing field"),
        "{err}"
    );

    let quick = ClientConfig {
        timeout: Duration::from_millis(200),
        ..ClientConfig::default()
    };
    let err = at("/slow", quick).get_task(&get).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn auth_and_extra_headers_reach_the_agent() {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Default::default();
    let seen2 = seen.clone();
    let router = Router::new().route(
        "/",
        post(
            move |headers: HeaderMap, axum::Json(r): axum::Json<Value>| {
                seen2.lock().unwrap().push(headers);
                async move {
                    axum::Json(json!({ "jsonrpc": "2.0", "id": r["id"], "result": task_json() }))
                }
            },
        ),
    );
    let base = serve_router(router).await;
    let get = GetTaskRequest::new(TaskId::new("t"));
    let bearer = ClientConfig {
        auth: Some(ClientAuth::Bearer("tok-1".into())),
        headers: vec![("X-Tenant".into(), "acme".into())],
        ..ClientConfig::default()
    };
    A2aClient::new(format!("{base}/"), bearer)
        .unwrap()
        .get_task(&get)
        .await
        .unwrap();
    let key = ClientConfig {
        auth: Some(ClientAuth::ApiKey {
            header: "X-API-Key".into(),
            value: "k-2".into(),
        }),
        ..ClientConfig::default()
    };
    A2aClient::new(format!("{base}/"), key)
        .unwrap()
        .get_task(&get)
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0]["authorization"], "Bearer tok-1");
    assert_eq!(seen[0]["x-tenant"], "acme");
    assert!(
        seen[0]["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("a2a-protocol/")
    );
    assert_eq!(seen[1]["x-api-key"], "k-2");
    assert!(seen[1].get("authorization").is_none());
}

#[tokio::test]
async fn the_card_command_prints_a_card() {
    let agent = crate::util::echo(0).await;
    let url = agent.url.clone();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["card", &url])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let card = AgentCard::from_json(serde_json::from_slice(&out.stdout).unwrap()).unwrap();
    assert_eq!(card.name, "Echo");
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout() {
    let router = Router::new().route(
        "/",
        post(|axum::Json(r): axum::Json<Value>| async move {
            let first = format!(
                "data: {}\n\n",
                json!({ "jsonrpc": "2.0", "id": r["id"], "result": task_json() })
            );
            let body = futures::stream::once(async move { Ok::<_, std::io::Error>(first) })
                .chain(futures::stream::pending());
            (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(body),
            )
        }),
    );
    let base = serve_router(router).await;
    let config = ClientConfig {
        stream_idle_timeout: Some(Duration::from_millis(200)),
        ..ClientConfig::default()
    };
    let client = A2aClient::new(format!("{base}/"), config).unwrap();
    let mut stream = client
        .send_message_stream(&SendMessageRequest::new(Message::user_text("x")))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::Task(_)
    ));
    let err = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    assert!(stream.next().await.is_none());
}

/// The idle timeout is the longest wait for the stream's next piece, not for the whole
/// stream: events that keep coming, each well within it, outlast it together.
#[tokio::test]
async fn a_stream_that_keeps_talking_outlasts_the_idle_timeout() {
    const EVENTS: usize = 12;
    let router = Router::new().route(
        "/",
        post(|axum::Json(r): axum::Json<Value>| async move {
            let id = r["id"].clone();
            let body = futures::stream::iter(0..EVENTS).then(move |i| {
                let id = id.clone();
                async move {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(60)).await;
                    }
                    let event = json!({ "jsonrpc": "2.0", "id": id, "result": task_json() });
                    Ok::<_, std::io::Error>(format!("data: {event}\n\n"))
                }
            });
            (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(body),
            )
        }),
    );
    let base = serve_router(router).await;
    let config = ClientConfig {
        stream_idle_timeout: Some(Duration::from_millis(500)),
        ..ClientConfig::default()
    };
    let client = A2aClient::new(format!("{base}/"), config).unwrap();
    let started = std::time::Instant::now();
    let events: Vec<_> = client
        .send_message_stream(&SendMessageRequest::new(Message::user_text("x")))
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), EVENTS, "{events:?}");
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    // Together they took longer than one idle timeout.
    assert!(started.elapsed() > Duration::from_millis(500));
}

/// A plain `http://` call goes straight through hyper's pool, a call that may follow
/// redirects through reqwest: the agent sees the same request (headers, body) from
/// both, and the caller gets the same answers: a unary result, a stream's events, an
/// HTTP error status with its body.
#[tokio::test]
async fn hyper_and_reqwest_paths_send_and_read_alike() {
    use a2a::client::{Redirects, http_client_with};
    use axum::response::IntoResponse;

    let seen: Arc<Mutex<Vec<(HeaderMap, Value)>>> = Default::default();
    let seen2 = seen.clone();
    let router = Router::new()
        .route(
            "/",
            post(
                move |headers: HeaderMap, axum::Json(r): axum::Json<Value>| {
                    seen2.lock().unwrap().push((headers, r.clone()));
                    async move {
                        let id = &r["id"];
                        if r["method"] == "message/stream" {
                            let task = json!({ "jsonrpc": "2.0", "id": id, "result": task_json() });
                            let done = json!({ "jsonrpc": "2.0", "id": id, "result": {
                                "kind": "status-update", "taskId": "t", "contextId": "c",
                                "status": { "state": "completed" }, "final": true } });
                            let body = format!("data: {task}\n\ndata: {done}\n\n");
                            ([("content-type", "text/event-stream")], body).into_response()
                        } else {
                            axum::Json(json!({ "jsonrpc": "2.0", "id": id, "result": task_json() }))
                                .into_response()
                        }
                    }
                },
            ),
        )
        .route(
            "/down",
            post(|| async { (axum::http::StatusCode::BAD_GATEWAY, "upstream is down") }),
        );
    let base = serve_router(router).await;
    let config = ClientConfig {
        headers: vec![("X-Tenant".into(), "acme".into())],
        ..ClientConfig::default()
    };
    let paths = [
        ("hyper", http_client_with(false, Redirects::Never)),
        ("reqwest", http_client_with(false, Redirects::SameOrigin)),
        ("h2", http_client_with(true, Redirects::Never)),
    ];
    let send = SendMessageRequest::new(Message::user_text("x"));
    let mut answers = Vec::new();
    for (name, http) in paths {
        let client =
            A2aClient::with_http(http.clone(), format!("{base}/"), config.clone()).unwrap();
        let task = client
            .get_task(&GetTaskRequest::new(TaskId::new("t")))
            .await
            .unwrap();
        let events: Vec<StreamEvent> = client
            .send_message_stream(&send)
            .await
            .unwrap()
            .map(|e| e.unwrap())
            .collect()
            .await;
        assert_eq!(events.len(), 2, "{name}");
        let down = A2aClient::with_http(http, format!("{base}/down"), config.clone()).unwrap();
        let err = down
            .get_task(&GetTaskRequest::new(TaskId::new("t")))
            .await
            .unwrap_err();
        let ClientError::HttpStatus { status, body, .. } = &err else {
            panic!("{name}: {err}")
        };
        assert_eq!(
            (*status, body.as_str()),
            (502, "upstream is down"),
            "{name}"
        );
        answers.push((
            serde_json::to_value(&task).unwrap(),
            serde_json::to_value(&events).unwrap(),
        ));
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "two calls a path");
    for call in 0..2 {
        let hyper = &seen[call];
        for other in [&seen[2 + call], &seen[4 + call]] {
            for header in [
                "user-agent",
                "x-tenant",
                "accept",
                "content-type",
                "content-length",
            ] {
                assert_eq!(hyper.0.get(header), other.0.get(header), "{header}");
                assert!(hyper.0.get(header).is_some(), "{header} is sent");
            }
            assert_eq!(hyper.1["method"], other.1["method"]);
            assert_eq!(hyper.1["params"], other.1["params"]);
        }
    }
}

/// A client that speaks only HTTP/2 holds one connection per agent: concurrent first
/// calls share the one they open; after the agent closes it gracefully (`GOAWAY`, as a
/// restarting server does) or it breaks, the next call opens another and is answered;
/// an agent nobody listens for is "connection failed".
/// Accepts connections on `listener` for the rest of the test, each served by `serve`
/// on a task of its own; how many it has accepted so far.
fn count_connections<S, F>(
    listener: tokio::net::TcpListener,
    serve: S,
) -> Arc<std::sync::atomic::AtomicUsize>
where
    S: Fn(tokio::net::TcpStream) -> F + Send + 'static,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(serve(socket));
        }
    });
    accepted
}

/// A pooled HTTP/1.1 connection is given up after its idle timeout without a call,
/// before the server closes it: a call made as the server closes the connection would
/// fail with it. By default that is [`a2a::client::POOL_IDLE_TIMEOUT`], under the 5 s
/// Node's and uvicorn's servers keep an idle connection; here 400 ms.
#[tokio::test]
async fn an_idle_connection_is_given_up_before_the_server_closes_it() {
    use std::sync::atomic::Ordering;

    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto;
    use hyper_util::service::TowerToHyperService;

    let router = Router::new().route(
        "/",
        post(|axum::Json(req): axum::Json<Value>| async move {
            axum::Json(json!({ "jsonrpc": "2.0", "id": req["id"], "result": task_json() }))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let accepted = count_connections(listener, move |socket| {
        let service = TowerToHyperService::new(router.clone());
        // The server keeps every connection for as long as the client does.
        async move {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(socket), service)
                .await;
        }
    });
    assert!(a2a::client::HttpOptions::default().pool_idle_timeout < Duration::from_secs(5));
    let http = a2a::client::http_client_for(a2a::client::HttpOptions {
        pool_idle_timeout: Duration::from_millis(400),
        ..Default::default()
    })
    .unwrap();
    let client = A2aClient::with_http(http, base, ClientConfig::default()).unwrap();
    let get = GetTaskRequest::new(TaskId::new("t"));
    for _ in 0..3 {
        client.get_task(&get).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "calls a tenth of a second apart share one connection"
    );
    // Quiet past the idle timeout: the old connection is given up.
    tokio::time::sleep(Duration::from_millis(800)).await;
    client.get_task(&get).await.unwrap();
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "after 800 ms without a call, a new connection"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http2_only_client_holds_one_connection_and_opens_another_when_it_closes() {
    use std::sync::atomic::Ordering;

    use a2a::client::{Redirects, http_client_with};

    /// Requests a connection answers before it says `GOAWAY`.
    const PER_CONNECTION: usize = 40;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let accepted = count_connections(listener, |socket| async move {
        let mut conn = h2::server::handshake(socket).await.unwrap();
        let mut answered = 0;
        while let Some(Ok((req, respond))) = conn.accept().await {
            if req.uri().path() == "/break" {
                // Dropping the connection closes its socket: no GOAWAY.
                return;
            }
            answered += 1;
            if answered == PER_CONNECTION {
                conn.graceful_shutdown();
            }
            tokio::spawn(answer_with_task(req, respond));
        }
    });

    let http = http_client_with(true, Redirects::Never);
    let client =
        A2aClient::with_http(http.clone(), format!("{base}/"), ClientConfig::default()).unwrap();
    let get = GetTaskRequest::new(TaskId::new("t"));
    let first = futures::future::join_all((0..30).map(|_| client.get_task(&get))).await;
    assert!(first.iter().all(Result::is_ok), "{first:?}");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "the first calls share one"
    );

    // The 40th request is the connection's last; the calls after it go on a new one.
    for n in 30..60 {
        let task = client.get_task(&get).await;
        assert!(task.is_ok(), "call {n}: {task:?}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2, "one more after GOAWAY");

    let breaking = A2aClient::with_http(
        http.clone(),
        format!("{base}/break"),
        ClientConfig::default(),
    )
    .unwrap();
    let err = breaking.get_task(&get).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    let task = client.get_task(&get).await;
    assert!(task.is_ok(), "after the break: {task:?}");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        3,
        "one more after the break"
    );

    let nobody = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone = format!("http://{}/", nobody.local_addr().unwrap());
    drop(nobody);
    let err = A2aClient::with_http(http, gone, ClientConfig::default())
        .unwrap()
        .get_task(&get)
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    assert!(err.to_string().contains("connection failed"), "{err}");
}

/// Answers a raw HTTP/2 JSON-RPC request with `task_json()`, once its body has arrived.
async fn answer_with_task(
    req: axum::http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<bytes::Bytes>,
) {
    let mut body = req.into_body();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    let r: Value = serde_json::from_slice(&bytes).unwrap();
    let answer = json!({ "jsonrpc": "2.0", "id": r["id"], "result": task_json() });
    let head = axum::http::Response::builder()
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    let mut send = respond.send_response(head, false).unwrap();
    send.send_data(answer.to_string().into(), true).unwrap();
}

/// An agent's HTTP/2 side that refuses a stream before processing it (`REFUSED_STREAM`,
/// which RFC 9113 §8.7 says may be retried) has the call sent again, at most twice, as
/// reqwest would: on `/` the first stream is refused and the second answered; on
/// `/always` every stream is refused, and the third refusal is the caller's error.
#[tokio::test]
async fn a_refused_http2_stream_is_sent_again_at_most_twice() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use a2a::client::{Redirects, http_client_with};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let streams: Arc<Mutex<Vec<String>>> = Default::default();
    let seen = streams.clone();
    tokio::spawn(async move {
        let answered = Arc::new(AtomicUsize::new(0));
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let (seen, answered) = (seen.clone(), answered.clone());
            tokio::spawn(async move {
                let mut conn = h2::server::handshake(socket).await.unwrap();
                while let Some(Ok((req, mut respond))) = conn.accept().await {
                    let path = req.uri().path().to_owned();
                    seen.lock().unwrap().push(path.clone());
                    if path == "/always" || answered.fetch_add(1, Ordering::SeqCst) == 0 {
                        respond.send_reset(h2::Reason::REFUSED_STREAM);
                        continue;
                    }
                    tokio::spawn(answer_with_task(req, respond));
                }
            });
        }
    });

    let http = http_client_with(true, Redirects::Never);
    let get = GetTaskRequest::new(TaskId::new("t"));
    let client =
        A2aClient::with_http(http.clone(), format!("{base}/"), ClientConfig::default()).unwrap();
    let task = client.get_task(&get).await.unwrap();
    assert_eq!(task.id.as_str(), "t");
    assert_eq!(
        *streams.lock().unwrap(),
        ["/", "/"],
        "refused once, then answered"
    );

    streams.lock().unwrap().clear();
    let always =
        A2aClient::with_http(http, format!("{base}/always"), ClientConfig::default()).unwrap();
    let err = always.get_task(&get).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    assert!(err.to_string().to_lowercase().contains("refused"), "{err}");
    assert_eq!(
        streams.lock().unwrap().len(),
        3,
        "sent once and again twice"
    );
}

/// Over `https://` the client checks the agent's certificate: against the public
/// authorities by default (an agent whose certificate a private authority issued is
/// refused, saying why), against the agent's own authority when given one; over
/// HTTP/1.1 and over HTTP/2 as ALPN settles it, and with HTTP/2 only.
#[tokio::test]
async fn https_agents_are_checked_against_the_public_or_their_own_authorities() {
    use a2a::client::{ClientTls, Redirects, http_client_tls, http_client_with};
    use a2a::server::{A2aServer, CertFiles, ServerConfig};

    use crate::util::tls::Ca;

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("client-https");
    let _ = std::fs::remove_dir_all(&dir);
    let ca = Ca::new("agent CA");
    let (cert, key) = ca.issue(&dir.join("agent"));
    let config = ServerConfig {
        tls: Some(Arc::new(CertFiles::open(&cert, &key).unwrap())),
        ..ServerConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/", listener.local_addr().unwrap());
    let agent = crate::echo_agent::EchoAgent {
        word_delay: Duration::ZERO,
    };
    let server = A2aServer::builder(agent, echo_card(&url))
        .config(config)
        .build();
    tokio::spawn(server.serve(listener, std::future::pending()));
    let send = SendMessageRequest::new(Message::user_text("over tls"));

    let public = A2aClient::with_http(http_client(), &url, ClientConfig::default()).unwrap();
    let err = public.send_message(&send).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    assert!(err.to_string().contains("certificate"), "says why: {err}");

    let own = ClientTls {
        ca_pem: Some(ca.pem().into_bytes()),
        identity_pem: None,
    };
    for http2 in [false, true] {
        let http = http_client_tls(http2, Redirects::Never, &own).unwrap();
        let client = A2aClient::with_http(http, &url, ClientConfig::default()).unwrap();
        let answer = client.send_message(&send).await.unwrap();
        let SendMessageResult::Task(task) = answer else {
            panic!("http2 {http2}: {answer:?}")
        };
        assert_eq!(task.status().state(), TaskState::Completed, "http2 {http2}");
    }
    // The same through reqwest (a client that may follow redirects).
    let http = http_client_tls(false, Redirects::SameOrigin, &own).unwrap();
    let client = A2aClient::with_http(http, &url, ClientConfig::default()).unwrap();
    client.send_message(&send).await.unwrap();
    let public = http_client_with(false, Redirects::SameOrigin);
    let err = A2aClient::with_http(public, &url, ClientConfig::default())
        .unwrap()
        .send_message(&send)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("certificate"), "says why: {err}");
}

/// A hostile agent cannot make the client hold what it likes: an answer past
/// `max_event_bytes` is refused (declared, or as it arrives: here an endless body), and
/// of an error status's endless body only the start is read, so the call ends with the
/// status, not a timeout.
#[tokio::test]
async fn endless_answers_and_error_bodies_are_bounded() {
    use axum::body::Body;
    use axum::response::IntoResponse;

    fn endless() -> Body {
        let piece = bytes::Bytes::from(vec![b' '; 8192]);
        Body::from_stream(futures::stream::repeat_with(move || {
            Ok::<_, std::convert::Infallible>(piece.clone())
        }))
    }
    let router = Router::new()
        .route(
            "/answer",
            post(|| async { ([("content-type", "application/json")], endless()) }),
        )
        .route(
            "/declared",
            post(|| async {
                let big = format!("{{\"padding\": \"{}\"}}", "x".repeat(100_000));
                ([("content-type", "application/json")], big).into_response()
            }),
        )
        .route(
            "/error",
            post(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, endless()) }),
        );
    let base = serve_router(router).await;
    let config = ClientConfig {
        max_event_bytes: 64 * 1024,
        timeout: Duration::from_secs(20),
        ..ClientConfig::default()
    };
    let get = GetTaskRequest::new(TaskId::new("t"));
    for path in ["answer", "declared"] {
        let client = A2aClient::new(format!("{base}/{path}"), config.clone()).unwrap();
        let err = client.get_task(&get).await.unwrap_err();
        assert!(matches!(err, ClientError::Protocol { .. }), "{path}: {err}");
        assert!(err.to_string().contains("at most 65536"), "{path}: {err}");
    }
    let client = A2aClient::new(format!("{base}/error"), config).unwrap();
    let err = client.get_task(&get).await.unwrap_err();
    let ClientError::HttpStatus { status, body, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*status, 500);
    assert!(
        body.len() <= 512 + '…'.len_utf8(),
        "abridged: {}",
        body.len()
    );
}

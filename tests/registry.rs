//! The agent registry against real agents over HTTP: discovery (several agents, one
//! down, an invalid card, a legacy-only card, a gRPC-only card, the official Python SDK),
//! the card's own JSON-RPC URL, replicas sharing a skill, auth headers, refresh with
//! ETags, an agent coming up later, selection errors, the circuit breaker, and agents
//! called over HTTP/2 without TLS (h2c).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::RpcError;
use a2a::card::{AgentCard, AgentSkill};
use a2a::server::{A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig};
use a2a::types::*;
use a2a_orchestrator::registry::config::load_str;
use a2a_orchestrator::registry::{
    Health, Registry, RegistryOptions, Requirements, SelectError, Target,
};
use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;

use crate::echo_agent::echo_card;
use crate::util::{echo, python_agent, serve, serve_router};

/// Replies with a message and counts the calls it got.
#[derive(Clone, Default)]
struct Counting {
    hits: Arc<AtomicUsize>,
}

impl AgentExecutor for Counting {
    async fn execute(&self, _ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        self.hits.fetch_add(1, Ordering::SeqCst);
        events
            .reply(vec![a2a::types::Part::text("counted")])
            .await
            .map_err(|e| RpcError::internal(e.to_string()))
    }
}

fn counting_card(url: &str, skill: &str, streaming: bool) -> AgentCard {
    let mut card = AgentCard::new("Counting", "counts calls", url);
    card.capabilities_mut().streaming = Some(streaming);
    card.skills = vec![AgentSkill {
        id: skill.into(),
        name: skill.into(),
        description: "counts".into(),
        tags: vec!["counting".into()],
        ..Default::default()
    }];
    card
}

/// `router`, recording the headers of every POST it gets in `seen`.
fn recording_posts(router: Router, seen: &Arc<Mutex<Vec<HeaderMap>>>) -> Router {
    let seen = seen.clone();
    router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                if req.method() == axum::http::Method::POST {
                    seen.lock().unwrap().push(req.headers().clone());
                }
                next.run(req).await
            }
        },
    ))
}

async fn registry(toml: &str, env: HashMap<String, String>, options: RegistryOptions) -> Registry {
    let (file, diags) = load_str("agents.toml", toml);
    assert!(diags.is_empty(), "{diags:?}");
    Registry::discover(&file.unwrap(), &env, options).await
}

fn status(r: &Registry, name: &str) -> a2a_orchestrator::registry::AgentStatus {
    r.statuses().into_iter().find(|s| s.name == name).unwrap()
}

/// A loopback port with nothing listening on it.
async fn closed_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

async fn call(lease: &a2a_orchestrator::registry::Lease) -> SendMessageResult {
    lease
        .client()
        .send_message(&SendMessageRequest::new(Message::user_text("hi")))
        .await
        .unwrap()
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn discovers_several_agents_and_records_why_others_are_unavailable() {
    let ours = echo(0).await;
    let python = python_agent(0.01).await;
    let down = closed_port().await;
    let invalid = serve_router(Router::new().route(
        "/.well-known/agent-card.json",
        get(|| async { axum::Json(serde_json::json!({ "name": "half a card" })) }),
    ))
    .await;
    // Only the legacy path; everything else (the JSON-RPC endpoint) is the echo server.
    let legacy_server = echo(0).await;
    let legacy = serve_router(
        Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(|| async { StatusCode::NOT_FOUND }),
            )
            .fallback_service(legacy_server.server.router()),
    )
    .await;
    let grpc = serve_router(Router::new().route(
        "/.well-known/agent-card.json",
        // A v0.3 agent over gRPC, which this orchestrator speaks at 1.0 only.
        get(|| async {
            axum::Json(serde_json::json!({
                "protocolVersion": "0.3.0", "name": "grpc", "description": "", "version": "1",
                "url": "https://grpc.example:443", "preferredTransport": "GRPC", "capabilities": {},
                "defaultInputModes": [], "defaultOutputModes": [], "skills": []
            }))
        }),
    ))
    .await;
    // A JSON-RPC endpoint away from the base URL: the card's URL is the one to use.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        rpc_path: "/a2a/v1/rpc".into(),
        ..ServerConfig::default()
    };
    let deep = A2aServer::builder(
        Counting::default(),
        counting_card(&format!("{base}/a2a/v1/rpc"), "count", false),
    )
    .config(config)
    .build();
    let router = deep.router();
    tokio::spawn(async move { axum::serve(listener, router).await });

    let toml = format!(
        r#"
[agents.ours]
url = "{}"
[agents.python]
url = "{}"
[agents.down]
url = "http://127.0.0.1:{down}"
[agents.invalid]
url = "{invalid}"
[agents.legacy]
url = "{legacy}"
[agents.grpc]
url = "{grpc}"
[agents.deep]
url = "{base}"
"#,
        ours.url, python.url
    );
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;

    let s = status(&r, "ours");
    assert_eq!(s.health, Health::Healthy);
    assert_eq!(s.skills, ["echo"]);
    assert!(s.streaming && s.push_notifications);

    let s = status(&r, "python");
    assert_eq!(
        s.health,
        Health::Healthy,
        "the official SDK's card is understood"
    );
    assert_eq!(s.skills, ["words"]);

    let Health::Unavailable(why) = status(&r, "down").health else {
        panic!("down is unavailable")
    };
    assert!(why.contains("connection failed"), "{why}");

    let Health::Unavailable(why) = status(&r, "invalid").health else {
        panic!("invalid is unavailable")
    };
    assert!(
        why.contains("invalid agent card") && why.contains("supportedInterfaces"),
        "{why}"
    );

    assert_eq!(
        status(&r, "legacy").health,
        Health::Healthy,
        "found at the legacy path"
    );

    let Health::Unavailable(why) = status(&r, "grpc").health else {
        panic!("grpc-only is unavailable")
    };
    assert!(
        why.contains("offers no interface") && why.contains("GRPC"),
        "{why}"
    );

    let s = status(&r, "deep");
    assert_eq!(
        s.endpoint.as_deref(),
        Some(format!("{base}/a2a/v1/rpc").as_str())
    );
    let lease = r
        .acquire(Target::Name("deep"), &Requirements::default())
        .await
        .unwrap();
    assert!(
        matches!(call(&lease).await, SendMessageResult::Message(_)),
        "calls go to the card's URL"
    );

    // The legacy agent and the Python agent answer calls through the registry too.
    for name in ["legacy", "python"] {
        let lease = r
            .acquire(Target::Name(name), &Requirements::default())
            .await
            .unwrap();
        assert!(
            matches!(call(&lease).await, SendMessageResult::Task(_)),
            "{name}"
        );
        lease.success();
    }
}

#[tokio::test]
async fn replicas_of_a_skill_share_the_load() {
    let a = Counting::default();
    let b = Counting::default();
    let ra = serve(
        a.clone(),
        |u| counting_card(u, "count", false),
        ServerConfig::default(),
    )
    .await;
    let rb = serve(
        b.clone(),
        |u| counting_card(u, "count", false),
        ServerConfig::default(),
    )
    .await;
    let toml = format!(
        "[agents.a]\nurl = \"{}\"\n[agents.b]\nurl = \"{}\"\n",
        ra.url, rb.url
    );
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;

    for _ in 0..20 {
        let lease = r
            .acquire(Target::Skill("count"), &Requirements::default())
            .await
            .unwrap();
        call(&lease).await;
        lease.success();
    }
    let (ha, hb) = (a.hits.load(Ordering::SeqCst), b.hits.load(Ordering::SeqCst));
    assert_eq!(ha + hb, 20);
    assert!(
        ha >= 5 && hb >= 5,
        "sequential calls are spread: {ha} / {hb}"
    );

    // Held at once, leases go to the least loaded replica.
    let mut held = Vec::new();
    for _ in 0..6 {
        held.push(
            r.acquire(Target::Tag("counting"), &Requirements::default())
                .await
                .unwrap(),
        );
    }
    assert_eq!(status(&r, "a").in_flight, 3);
    assert_eq!(status(&r, "b").in_flight, 3);
    drop(held);
    assert_eq!(status(&r, "a").in_flight, 0);
}

#[tokio::test]
async fn auth_headers_and_user_agent_reach_the_agent() {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Default::default();
    // The card must name the recording router's address: calls go where the card says.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::new(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card(&format!("{base}/")),
    );
    let router = recording_posts(server.router(), &seen);
    tokio::spawn(async move { axum::serve(listener, router).await });
    let toml = format!(
        r#"
[agents.bearer]
url = "{base}"
auth = {{ type = "bearer", token_env = "BEARER_TOKEN" }}
headers = {{ "X-Tenant" = "${{TENANT}}" }}
[agents.keyed]
url = "{base}"
auth = {{ type = "api_key", header = "X-Api-Key", key_env = "API_KEY" }}
[agents.missing]
url = "{base}"
auth = {{ type = "bearer", token_env = "NOT_SET" }}
"#
    );
    let env: HashMap<String, String> = [
        ("BEARER_TOKEN", "tok-123"),
        ("API_KEY", "key-456"),
        ("TENANT", "acme"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let r = registry(&toml, env, RegistryOptions::default()).await;
    for name in ["bearer", "keyed"] {
        let lease = r
            .acquire(Target::Name(name), &Requirements::default())
            .await
            .unwrap();
        call(&lease).await;
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0]["authorization"], "Bearer tok-123");
    assert_eq!(seen[0]["x-tenant"], "acme");
    assert_eq!(seen[1]["x-api-key"], "key-456");
    let ua = seen[0]["user-agent"].to_str().unwrap();
    assert!(ua.starts_with("a2a-orchestrator/"), "{ua}");
    let Health::Unavailable(why) = status(&r, "missing").health else {
        panic!()
    };
    assert!(why.contains("NOT_SET"), "names the missing variable: {why}");
}

#[tokio::test]
async fn card_changes_are_picked_up_and_unchanged_cards_are_not_downloaded_again() {
    #[derive(Default)]
    struct CardState {
        version: u32,
        extra_skill: bool,
        not_modified: u32,
        full: u32,
    }
    let state: Arc<Mutex<CardState>> = Default::default();
    let agent = echo(0).await;
    let url = agent.url.clone();
    let st = state.clone();
    let card_route = get(move |headers: HeaderMap| {
        let st = st.clone();
        let url = url.clone();
        async move {
            let mut s = st.lock().unwrap();
            let etag = format!("\"v{}\"", s.version);
            if headers.get("if-none-match").and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
                s.not_modified += 1;
                return (StatusCode::NOT_MODIFIED, [("etag", etag)], String::new());
            }
            s.full += 1;
            let mut card = echo_card(&url);
            if s.extra_skill {
                let mut shout = card.skills[0].clone();
                shout.id = "shout".into();
                card.skills.push(shout);
            }
            (
                StatusCode::OK,
                [("etag", etag)],
                serde_json::to_string(&card).unwrap(),
            )
        }
    });
    let base = serve_router(
        Router::new()
            .route("/.well-known/agent-card.json", card_route)
            .fallback_service(agent.server.router()),
    )
    .await;
    let toml = format!("[agents.changing]\nurl = \"{base}\"\n");
    let options = RegistryOptions {
        refresh_interval: Duration::from_millis(200),
        ..RegistryOptions::default()
    };
    let r = registry(&toml, HashMap::new(), options).await;
    assert_eq!(status(&r, "changing").skills, ["echo"]);

    r.refresh_all().await;
    assert_eq!(
        state.lock().unwrap().not_modified,
        1,
        "the second fetch was conditional and answered 304"
    );
    assert_eq!(status(&r, "changing").health, Health::Healthy);

    {
        let mut s = state.lock().unwrap();
        s.version += 1;
        s.extra_skill = true;
    }
    r.start_refresh();
    let mut skills = Vec::new();
    for _ in 0..100 {
        skills = status(&r, "changing").skills;
        if skills.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        skills,
        ["echo", "shout"],
        "the background refresh picked the new card up"
    );
    let lease = r
        .acquire(Target::Skill("shout"), &Requirements::default())
        .await
        .unwrap();
    assert_eq!(lease.agent(), "changing");
    r.shutdown().await;
    assert_eq!(state.lock().unwrap().full, 2);
}

#[tokio::test]
async fn an_agent_that_comes_up_later_is_found() {
    let port = closed_port().await;
    let toml = format!("[agents.late]\nurl = \"http://127.0.0.1:{port}\"\n");
    let options = RegistryOptions {
        retry_initial: Duration::from_millis(20),
        refresh_interval: Duration::from_millis(400),
        ..RegistryOptions::default()
    };
    let r = registry(&toml, HashMap::new(), options).await;
    assert!(status(&r, "late").health.is_unavailable());
    r.start_refresh();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let server = A2aServer::new(
        Counting::default(),
        counting_card(&format!("http://127.0.0.1:{port}/"), "count", false),
    );
    let router = server.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let mut health = status(&r, "late").health;
    for _ in 0..200 {
        health = status(&r, "late").health;
        if health == Health::Healthy {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(health, Health::Healthy);
    r.shutdown().await;
}

#[tokio::test]
async fn selection_errors_say_what_is_wrong() {
    let plain = serve(
        Counting::default(),
        |u| counting_card(u, "count", false),
        ServerConfig::default(),
    )
    .await;
    let down = closed_port().await;
    let toml = format!(
        "[agents.plain]\nurl = \"{}\"\n[agents.down]\nurl = \"http://127.0.0.1:{down}\"\n",
        plain.url
    );
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;

    let err = r
        .acquire(Target::Skill("translate"), &Requirements::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no agent in agents.toml offers skill `translate`"
    );
    let err = r
        .acquire(Target::Name("payroll"), &Requirements::default())
        .await
        .unwrap_err();
    assert_eq!(err, SelectError::UnknownAgent("payroll".into()));

    let streaming = Requirements {
        streaming: true,
        ..Requirements::default()
    };
    let err = r
        .acquire(Target::Skill("count"), &streaming)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no usable agent for skill `count`: plain (does not declare streaming)"
    );

    let images = Requirements {
        input_modes: vec!["image/png".into()],
        ..Requirements::default()
    };
    let err = r.acquire(Target::Name("plain"), &images).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("does not accept image/png (it accepts text/plain)"),
        "{err}"
    );

    let err = r
        .acquire(Target::Name("down"), &Requirements::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("down (unavailable: cannot reach"),
        "{err}"
    );
}

#[tokio::test]
async fn the_circuit_opens_after_failures_and_a_probe_closes_it() {
    let agent = serve(
        Counting::default(),
        |u| counting_card(u, "count", false),
        ServerConfig::default(),
    )
    .await;
    let toml = format!("[agents.flaky]\nurl = \"{}\"\n", agent.url);
    let options = RegistryOptions {
        breaker_threshold: 2,
        breaker_cooldown: Duration::from_millis(300),
        ..RegistryOptions::default()
    };
    let r = registry(&toml, HashMap::new(), options).await;
    let any = Requirements::default();
    r.acquire(Target::Name("flaky"), &any)
        .await
        .unwrap()
        .failure();
    assert!(
        matches!(status(&r, "flaky").health, Health::Degraded(_)),
        "one failure: degraded"
    );
    r.acquire(Target::Name("flaky"), &any)
        .await
        .unwrap()
        .failure();
    let Health::Unavailable(why) = status(&r, "flaky").health else {
        panic!("open circuit")
    };
    assert!(
        why.contains("circuit open after 2 consecutive failed calls"),
        "{why}"
    );
    assert!(r.acquire(Target::Name("flaky"), &any).await.is_err());

    // After the cooldown one probe goes through; a second caller waits for its outcome.
    tokio::time::sleep(Duration::from_millis(350)).await;
    let probe = r.acquire(Target::Name("flaky"), &any).await.unwrap();
    let err = r.acquire(Target::Name("flaky"), &any).await.unwrap_err();
    assert!(err.to_string().contains("probe"), "{err}");
    probe.success();
    assert_eq!(status(&r, "flaky").health, Health::Healthy);
}

#[tokio::test]
async fn agents_command_prints_a_table_json_and_fails_strictly() {
    let agent = echo(0).await;
    let down = closed_port().await;
    let dir = std::env::temp_dir().join(format!("a2a-agents-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("agents.toml");
    std::fs::write(
        &file,
        format!(
            "[agents.echo]\nurl = \"{}\"\n[agents.gone]\nurl = \"http://127.0.0.1:{down}\"\n[agents.old]\nurl = \"{}\"\nprotocol = \"0.3\"\n",
            agent.url, agent.url
        ),
    )
    .unwrap();
    let run = |args: Vec<String>| async move {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
            .args(args)
            .output()
            .await
            .unwrap()
    };
    let f = file.display().to_string();
    let out = run(vec!["agents".into(), "--agents".into(), f.clone()]).await;
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("echo") && l.contains("healthy") && l.contains("1.0 JSONRPC")),
        "{table}"
    );
    assert!(
        table.contains("└─ called at A2A 1.0 JSONRPC: the newest A2A version the card offers"),
        "{table}"
    );
    assert!(table.contains("└─ cannot reach"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("old") && l.contains("0.3 JSONRPC")),
        "{table}"
    );
    assert!(
        table.contains("└─ called at A2A 0.3 JSONRPC: agents.toml asks for protocol = \"0.3\""),
        "{table}"
    );

    let out = run(vec![
        "agents".into(),
        "--agents".into(),
        f.clone(),
        "--json".into(),
    ])
    .await;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["name"], "echo");
    assert_eq!(json[0]["status"], "healthy");
    assert_eq!(
        json[0]["protocol"], "1.0",
        "the generation it is called with"
    );
    assert_eq!(json[0]["binding"], "JSONRPC");
    assert_eq!(json[2]["protocol"], "0.3");
    assert_eq!(json[1]["status"], "unavailable");
    assert!(
        json[1]["reason"]
            .as_str()
            .unwrap()
            .contains("connection failed")
    );

    let out = run(vec![
        "agents".into(),
        "--agents".into(),
        f,
        "--strict".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn max_concurrent_makes_callers_wait_for_a_permit() {
    let agent = serve(
        Counting::default(),
        |u| counting_card(u, "count", false),
        ServerConfig::default(),
    )
    .await;
    let toml = format!(
        "[agents.one]\nurl = \"{}\"\nmax_concurrent = 1\n",
        agent.url
    );
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;
    let any = Requirements::default();
    let first = r.acquire(Target::Name("one"), &any).await.unwrap();
    let r2 = r.clone();
    let second = tokio::spawn(async move {
        let lease = r2
            .acquire(Target::Name("one"), &Requirements::default())
            .await
            .unwrap();
        call(&lease).await
    });
    // The second call cannot get a permit while the first holds the only one.
    tokio::task::yield_now().await;
    assert!(!second.is_finished());
    assert_eq!(
        status(&r, "one").in_flight,
        2,
        "a waiting call counts as in flight"
    );
    drop(first);
    let result = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, SendMessageResult::Message(_)));
}

/// Answers at once, except a message saying "gather": those wait until `expected` of
/// them have arrived, then all answer.
#[derive(Clone)]
struct Gathering {
    arrived: Arc<AtomicUsize>,
    expected: usize,
    all_here: tokio_util::sync::CancellationToken,
}

impl AgentExecutor for Gathering {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        if ctx.message.text() == "gather" {
            let _ = events.working(None).await;
            if self.arrived.fetch_add(1, Ordering::SeqCst) + 1 >= self.expected {
                self.all_here.cancel();
            }
            self.all_here.cancelled().await;
        }
        let _ = events.complete(None).await;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http2_agent_is_called_over_h2c_with_room_for_many_streams() {
    // More calls in flight at once than hyper's default limit of 200 streams on one
    // HTTP/2 connection: each waits until all have arrived, so a lower limit hangs.
    const CALLS: usize = 300;
    let seen: Arc<Mutex<Vec<(axum::http::Method, axum::http::Version)>>> = Default::default();
    let seen2 = seen.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let agent = Gathering {
        arrived: Default::default(),
        expected: CALLS,
        all_here: Default::default(),
    };
    let server = A2aServer::new(agent, counting_card(&format!("{base}/"), "gather", true));
    let router = server.router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            seen2
                .lock()
                .unwrap()
                .push((req.method().clone(), req.version()));
            next.run(req)
        },
    ));
    let stop = tokio_util::sync::CancellationToken::new();
    let serving =
        tokio::spawn(server.serve_router(listener, router, stop.clone().cancelled_owned()));
    let toml =
        format!("[agents.two]\nurl = \"{base}\"\nhttp2 = true\n\n[agents.one]\nurl = \"{base}\"\n");
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;

    let one = r
        .acquire(Target::Name("one"), &Requirements::default())
        .await
        .unwrap();
    call(&one).await;
    let two = r
        .acquire(Target::Name("two"), &Requirements::default())
        .await
        .unwrap();
    let client = two.client().clone();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..CALLS {
        let client = client.clone();
        calls.spawn(async move {
            let params = SendMessageRequest::new(Message::user_text("gather"));
            let mut events = client.send_message_stream(&params).await.unwrap();
            let mut last = None;
            while let Some(event) = futures::StreamExt::next(&mut events).await {
                last = Some(event.unwrap());
            }
            last
        });
    }
    let all = tokio::time::timeout(Duration::from_secs(60), calls.join_all())
        .await
        .expect("every call completes: the server allows more than 200 streams");
    for last in all {
        assert!(
            matches!(&last, Some(StreamEvent::StatusUpdate(s)) if s.status().state() == TaskState::Completed),
            "{last:?}"
        );
    }

    let seen = seen.lock().unwrap().clone();
    let count = |method: &str, version| {
        seen.iter()
            .filter(|(m, v)| m.as_str() == method && *v == version)
            .count()
    };
    use axum::http::Version;
    assert_eq!(count("POST", Version::HTTP_2), CALLS, "{seen:?}");
    assert_eq!(count("POST", Version::HTTP_11), 1, "{seen:?}");
    assert_eq!(count("GET", Version::HTTP_2), 1, "the card too: {seen:?}");
    assert_eq!(count("GET", Version::HTTP_11), 1, "{seen:?}");

    // The server's own accept loop shuts down once asked, connections and all.
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(20), serving)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}

#[ignore = "needs the official Python SDK: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn an_http1_agent_marked_http2_is_unavailable_with_a_hint() {
    // The official Python SDK's server (uvicorn) speaks HTTP/1.1 only.
    let python = python_agent(0.01).await;
    let toml = format!("[agents.py]\nurl = \"{}\"\nhttp2 = true\n", python.url);
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;
    let Health::Unavailable(why) = status(&r, "py").health else {
        panic!("{:?}", status(&r, "py"))
    };
    assert!(why.contains("http2 = true"), "{why}");
    assert!(why.contains("HTTP/2 without TLS"), "{why}");
}

/// A server on another origin that records every request it gets (and answers 404):
/// where a hostile redirect would send a call.
async fn recording_elsewhere() -> (String, Arc<Mutex<Vec<(String, HeaderMap)>>>) {
    let seen: Arc<Mutex<Vec<(String, HeaderMap)>>> = Default::default();
    let seen2 = seen.clone();
    let router = Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap| {
        let seen = seen2.clone();
        async move {
            seen.lock().unwrap().push((uri.to_string(), headers));
            StatusCode::NOT_FOUND
        }
    });
    (serve_router(router).await, seen)
}

fn redirect_to(status: StatusCode, location: String) -> axum::response::Response {
    axum::response::Response::builder()
        .status(status)
        .header("location", location)
        .body(axum::body::Body::empty())
        .unwrap()
}

/// Issue 33: a card fetch answered with 302 and a JSON-RPC call answered with 307 are
/// not followed — to another origin nothing (no key, no header, no request at all)
/// arrives — and the error names where the redirect pointed; with
/// `follow_redirects = "same-origin"` redirects on the agent's own origin are followed
/// (credentials with them) while one to another origin is still refused.
#[tokio::test(flavor = "multi_thread")]
async fn redirects_are_not_followed_and_credentials_never_cross_origins() {
    let (elsewhere, seen_elsewhere) = recording_elsewhere().await;
    let seen_here: Arc<Mutex<Vec<HeaderMap>>> = Default::default();

    // An agent whose card moved to another origin.
    let target = format!("{elsewhere}/latest/meta-data/card.json");
    let card_redirect = Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let target = target.clone();
            async move { redirect_to(StatusCode::FOUND, target) }
        }),
    );
    let card_moved = serve_router(card_redirect).await;

    // Agents whose card is served as is (on the agent's origin, through a same-origin
    // 302), and whose JSON-RPC endpoint answers 307: to another origin at `/cross`, to
    // its own `/` at `/old`.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let cross_card = echo_card(&format!("{base}/cross"));
    let same_card = echo_card(&format!("{base}/old"));
    let server = A2aServer::new(
        crate::echo_agent::EchoAgent {
            word_delay: Duration::ZERO,
        },
        echo_card(&format!("{base}/")),
    );
    let to_elsewhere = format!("{elsewhere}/steal");
    let router = server
        .router()
        .route(
            "/cross",
            axum::routing::post(move || {
                let to = to_elsewhere.clone();
                async move { redirect_to(StatusCode::TEMPORARY_REDIRECT, to) }
            }),
        )
        .route(
            "/old",
            axum::routing::post(|| async {
                redirect_to(StatusCode::TEMPORARY_REDIRECT, "/".to_owned())
            }),
        )
        .route(
            "/cross/card.json",
            get(move || {
                let card = cross_card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/same/card.json",
            get(move || {
                let card = same_card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/same/moved.json",
            get(|| async { redirect_to(StatusCode::FOUND, "/same/card.json".to_owned()) }),
        );
    let router = recording_posts(router, &seen_here);
    tokio::spawn(async move { axum::serve(listener, router).await });

    let toml = format!(
        r#"
[agents.card_moved]
url = "{card_moved}"
auth = {{ type = "api_key", header = "X-API-Key", key_env = "KEY" }}
headers = {{ "X-Tenant" = "acme" }}
[agents.cross]
card_url = "{base}/cross/card.json"
auth = {{ type = "api_key", header = "X-API-Key", key_env = "KEY" }}
headers = {{ "X-Tenant" = "acme" }}
[agents.cross_opted_in]
card_url = "{base}/cross/card.json"
auth = {{ type = "api_key", header = "X-API-Key", key_env = "KEY" }}
follow_redirects = "same-origin"
[agents.same_not_opted_in]
card_url = "{base}/same/moved.json"
[agents.same]
card_url = "{base}/same/moved.json"
auth = {{ type = "api_key", header = "X-API-Key", key_env = "KEY" }}
headers = {{ "X-Tenant" = "acme" }}
follow_redirects = "same-origin"
"#
    );
    let env: HashMap<String, String> = [("KEY".to_owned(), "key-secret".to_owned())].into();
    let r = registry(&toml, env, RegistryOptions::default()).await;

    // The card's 302 to another origin: the agent is unavailable, saying where it pointed.
    let Health::Unavailable(why) = status(&r, "card_moved").health else {
        panic!("{:?}", status(&r, "card_moved").health)
    };
    assert!(
        why.contains("302") && why.contains("/latest/meta-data/card.json"),
        "names the redirect and where it pointed: {why}"
    );
    // A same-origin 302 is not followed either unless the entry opts in.
    let Health::Unavailable(why) = status(&r, "same_not_opted_in").health else {
        panic!("{:?}", status(&r, "same_not_opted_in").health)
    };
    assert!(
        why.contains("302") && why.contains("/same/card.json"),
        "{why}"
    );

    // The JSON-RPC call's 307 to another origin: refused, with or without the opt-in.
    for name in ["cross", "cross_opted_in"] {
        let lease = r
            .acquire(Target::Name(name), &Requirements::default())
            .await
            .unwrap();
        let err = lease
            .client()
            .send_message(&SendMessageRequest::new(Message::user_text("hi")))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, a2a::client::ClientError::Redirect { status: 307, .. }),
            "{name}: {text}"
        );
        assert!(
            text.contains(&format!("{base}/cross")) && text.contains(&format!("{elsewhere}/steal")),
            "{name}: names the URL requested and where it pointed: {text}"
        );
    }
    assert!(
        seen_elsewhere.lock().unwrap().is_empty(),
        "nothing reached the other origin: {:?}",
        seen_elsewhere.lock().unwrap()
    );

    // Opted in, same origin: the card's 302 and the call's 307 are followed, and the
    // agent's own credentials reach it (its own origin) on the redirected call.
    let lease = r
        .acquire(Target::Name("same"), &Requirements::default())
        .await
        .unwrap();
    let before = seen_here.lock().unwrap().len();
    call(&lease).await;
    let here = seen_here.lock().unwrap();
    assert_eq!(
        here.len(),
        before + 2,
        "the call to /old, then to / on the same origin"
    );
    for h in &here[before..] {
        assert_eq!(h["x-api-key"], "key-secret");
        assert_eq!(h["x-tenant"], "acme");
    }
}

/// Issue 38: an agent down at its last probe that has come back since is fetched again
/// before a step fails on it — by name and by skill — without waiting for the
/// background refresh (not even started here).
#[tokio::test]
async fn a_down_agent_is_fetched_again_before_a_step_fails_on_it() {
    let port = closed_port().await;
    let toml = format!("[agents.late]\nurl = \"http://127.0.0.1:{port}\"\n");
    let r = registry(&toml, HashMap::new(), RegistryOptions::default()).await;
    assert!(status(&r, "late").health.is_unavailable());
    // Still down: the step fails, saying why.
    let Err(down) = r
        .acquire(Target::Name("late"), &Requirements::default())
        .await
    else {
        panic!("no agent to call while it is down");
    };
    assert!(down.to_string().contains("late"), "{down}");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let server = A2aServer::new(
        Counting::default(),
        counting_card(&format!("http://127.0.0.1:{port}/"), "count", false),
    );
    let router = server.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    // By skill first: no card offered it, so the choice would fail without the
    // refetch.
    let by_skill = r
        .acquire(Target::Skill("count"), &Requirements::default())
        .await
        .expect("the card is fetched again before the step fails");
    assert_eq!(by_skill.agent(), "late");
    drop(by_skill);
    assert_eq!(status(&r, "late").health, Health::Healthy);
    let by_name = r
        .acquire(Target::Name("late"), &Requirements::default())
        .await
        .expect("and by name");
    assert_eq!(by_name.agent(), "late");
}

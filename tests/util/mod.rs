//! Test helpers: in-process servers on loopback, raw HTTP, the Python venv with the
//! official SDK, and the Python peers.

pub mod counting;
pub mod orchestra;
pub mod postgres;
pub mod schema;
pub mod sse;
pub mod tls;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use a2a::card::AgentCard;
use a2a::server::{A2aServer, AgentExecutor, ServerConfig};
use a2a::sse::SseDecoder;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::echo_agent::{EchoAgent, echo_card};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A server running on a loopback port for the duration of a test.
pub struct Running {
    pub url: String,
    pub server: A2aServer,
}

/// Serves `agent` on `127.0.0.1:0` with the card `card(url)`.
pub async fn serve<A: AgentExecutor>(
    agent: A,
    card: impl FnOnce(&str) -> AgentCard,
    config: ServerConfig,
) -> Running {
    serve_with(agent, card, |b| b.config(config)).await
}

/// Like [`serve`], with full control over the builder.
pub async fn serve_with<A: AgentExecutor>(
    agent: A,
    card: impl FnOnce(&str) -> AgentCard,
    build: impl FnOnce(a2a::server::A2aServerBuilder) -> a2a::server::A2aServerBuilder,
) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = build(A2aServer::builder(agent, card(&url))).build();
    // Served as `serve` and the examples serve it (the listener's limits, TCP_NODELAY,
    // HTTP/2 for gRPC), not through a bare `axum::serve`.
    let serving = server.clone();
    tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
    Running { url, server }
}

/// The echo agent with `delay_ms` between words that takes webhooks on loopback (the
/// SDK scenarios that register one, to a port nobody listens on).
pub async fn echo_taking_loopback_webhooks(delay_ms: u64) -> Running {
    let config = ServerConfig {
        allow_private_webhooks: true,
        ..ServerConfig::default()
    };
    let agent = EchoAgent {
        word_delay: Duration::from_millis(delay_ms),
    };
    serve(agent, echo_card, config).await
}

/// The echo agent (no delay) offering an authenticated extended card — described as
/// "the extended description" — to callers with the bearer token `token`.
pub async fn echo_with_extended_card(token: &str) -> Running {
    let config = ServerConfig {
        auth: Some(a2a::server::InboundAuth::unnamed(vec![token.into()], None)),
        ..ServerConfig::default()
    };
    serve_with(
        EchoAgent {
            word_delay: Duration::ZERO,
        },
        |url| {
            let mut card = echo_card(url);
            card.capabilities_mut().extended_agent_card = Some(true);
            card
        },
        |b| {
            let mut extended = echo_card("http://unused/");
            extended.description = "the extended description".into();
            b.config(config).extended_card(extended)
        },
    )
    .await
}

/// The echo example agent with `delay_ms` between words.
pub async fn echo(delay_ms: u64) -> Running {
    serve(
        EchoAgent {
            word_delay: Duration::from_millis(delay_ms),
        },
        echo_card,
        ServerConfig::default(),
    )
    .await
}

/// A client for a test's own HTTP calls, on the TLS every client of the product uses
/// (reqwest has no crypto provider of its own).
pub fn http() -> reqwest::Client {
    a2a::https::reqwest_client_builder().build().unwrap()
}

/// Serves an arbitrary axum router on loopback; returns its base URL (no trailing slash).
pub async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// POSTs `body` as it is; returns the status and the JSON body (Null when empty).
pub async fn post_raw(url: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let resp = crate::util::http()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.unwrap();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        })
    };
    (status, value)
}

/// POSTs a JSON-RPC request and reads the whole SSE response: each event's `data` JSON.
pub async fn post_sse(url: &str, body: &Value) -> Vec<Value> {
    let resp = crate::util::http()
        .post(url)
        .json(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/event-stream"), "content type {ct}");
    let bytes = resp.bytes().await.unwrap();
    let mut decoder = SseDecoder::new(1 << 24);
    decoder
        .feed(&bytes)
        .unwrap()
        .into_iter()
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

/// A JSON-RPC request body.
pub fn rpc(method: &str, params: Value) -> Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })
}

/// A `message/send` params object with one text part.
pub fn text_params(text: &str) -> Value {
    serde_json::json!({
        "message": {
            "kind": "message",
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "user",
            "parts": [{ "kind": "text", "text": text }]
        }
    })
}

/// Whether this run is the full suite's (`cargo xtask test` sets `A2A_FULL_SUITE`
/// after `cargo xtask prepare` installed its tools): it runs the tests plain
/// `cargo test` leaves out as ignored — those with the official SDKs, PostgreSQL and
/// Chromium — on the same build, and checks the wire with the SDK's parser.
pub fn full_suite() -> bool {
    std::env::var_os(FULL_SUITE).is_some()
}

/// The variable `cargo xtask test` sets for the full suite.
pub const FULL_SUITE: &str = "A2A_FULL_SUITE";

/// Fails a test that reached for a tool of the full suite outside it, saying so.
pub fn require_full_suite(what: &str) {
    if !full_suite() {
        panic!(
            "this test needs {what}, which only the full suite has (`cargo xtask test`); plain `cargo test` must mark it #[ignore = \"needs {what}: the full suite, `cargo xtask test`\"]"
        );
    }
}

/// What `check` gives once it gives something, asked every 20 ms for at most `within`;
/// past that the test fails saying that `what` never happened, and what `check` saw
/// last (its `Err`). One bounded wait for every "until" of the suite.
pub async fn eventually<T, E: std::fmt::Debug, F, Fut>(
    what: &str,
    within: Duration,
    mut check: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match check().await {
            Ok(found) => return found,
            Err(seen) if tokio::time::Instant::now() >= deadline => {
                panic!("{what} did not happen within {within:?}; last seen: {seen:?}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// What to run when a tool of the full suite is missing.
pub const PREPARE: &str =
    "run `cargo xtask prepare` (or the whole suite with `cargo xtask test`), which installs it";

/// The venv's Python with the official SDK 0.3 installed (`tests/python/requirements.txt`)
/// under `target/py-venv` by `cargo xtask prepare`.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| venv("py-venv", "requirements.txt"))
}

/// The venv's Python with the official SDK 1.x installed
/// (`tests/python/requirements-v1.txt`), under `target/py1-venv`.
pub fn python_v1() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| venv("py1-venv", "requirements-v1.txt"))
}

/// The Python of the venv `target/<name>`, which `cargo xtask prepare` made with
/// `tests/python/<requirements>`; a missing or outdated one fails the test, saying what
/// to run.
fn venv(name: &str, requirements: &str) -> PathBuf {
    require_full_suite("the official Python SDK");
    let venv = Path::new(ROOT).join("target").join(name);
    let wanted = std::fs::read_to_string(Path::new(ROOT).join("tests/python").join(requirements))
        .unwrap_or_else(|e| panic!("tests/python/{requirements}: {e}"));
    let python = venv.join("bin/python");
    let current = std::fs::read_to_string(venv.join(".a2a-requirements")).ok();
    assert!(
        current.as_deref() == Some(wanted.as_str()) && python.exists(),
        "target/{name} (Python with tests/python/{requirements}) is missing or out of date: {PREPARE}"
    );
    python
}

/// A directory under `target/js` with the official JavaScript SDK installed from
/// `tests/js/package-lock.json` by `cargo xtask prepare`, and the scripts of `tests/js`
/// copied beside it.
pub fn js_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        require_full_suite("Node and the official JavaScript SDK");
        let source = Path::new(ROOT).join("tests/js");
        let dir = Path::new(ROOT).join("target/js");
        let wanted = std::fs::read_to_string(source.join("package-lock.json"))
            .expect("tests/js/package-lock.json");
        let current = std::fs::read_to_string(dir.join(".installed-lock")).ok();
        assert!(
            current.as_deref() == Some(wanted.as_str())
                && dir.join("node_modules/@a2a-js/sdk").exists(),
            "target/js (the packages of tests/js/package-lock.json) is missing or out of date: {PREPARE}"
        );
        for file in [
            "client.mjs",
            "agent.mjs",
            "ui.mjs",
            "ui_signin.mjs",
            "ui_forms.mjs",
            "ui_inbox.mjs",
            "idp.mjs",
            "card_signature.mjs",
        ] {
            std::fs::copy(source.join(file), dir.join(file))
                .unwrap_or_else(|e| panic!("copying tests/js/{file}: {e}"));
        }
        dir
    })
}

/// Debian's Chromium for the browser tests.
pub fn chromium() -> &'static Path {
    require_full_suite("Chromium");
    let path = Path::new("/usr/bin/chromium");
    assert!(path.exists(), "no /usr/bin/chromium: {PREPARE}");
    path
}

/// Runs a script of `tests/js` with Node to completion (bounded); (success, output).
pub async fn run_node(script: &str, args: &[&str]) -> (bool, String) {
    let dir = js_dir();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(dir.join(script)).args(args).current_dir(dir);
    finish(
        cmd,
        script,
        args,
        "start node (the interop tests need Node 20+)",
    )
    .await
}

/// Runs `cmd` to completion (bounded); (success, its stdout and stderr).
async fn finish(
    mut cmd: tokio::process::Command,
    script: &str,
    args: &[&str],
    what: &str,
) -> (bool, String) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect(what);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{script} {args:?} did not finish within 120 s"))
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Runs a script from `tests/python` to completion (bounded) with the SDK 0.3 venv;
/// returns (success, output).
pub async fn run_python(script: &str, args: &[&str]) -> (bool, String) {
    run_script(python(), script, args, &[]).await
}

/// Like [`run_python`], with the SDK 1.x venv.
pub async fn run_python_v1(script: &str, args: &[&str]) -> (bool, String) {
    run_script(python_v1(), script, args, &[]).await
}

/// Like [`run_python_v1`], with these environment variables.
pub async fn run_python_v1_with(
    script: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> (bool, String) {
    run_script(python_v1(), script, args, envs).await
}

async fn run_script(
    python: &Path,
    script: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(Path::new(ROOT).join("tests/python").join(script))
        .args(args)
        .envs(envs.iter().copied());
    finish(cmd, script, args, "start python").await
}

/// What the `agents` command prints (its standard output) for `agents_toml`.
pub async fn agents_listing(agents_toml: &Path) -> String {
    agents_listing_with(agents_toml, &[]).await
}

/// Like [`agents_listing`], with these environment variables (the agents' secrets).
pub async fn agents_listing_with(agents_toml: &Path, envs: &[(&str, &str)]) -> String {
    let listed = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["agents", "--agents", agents_toml.to_str().unwrap()])
        .envs(envs.iter().copied())
        .output()
        .await
        .unwrap();
    String::from_utf8_lossy(&listed.stdout).into_owned()
}

/// An agent written with an official SDK (Python or JavaScript), running until dropped.
pub struct SdkAgent {
    pub url: String,
    /// Every line it printed after `PORT`, as it prints them.
    pub output: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    _child: tokio::process::Child,
}

/// Starts `tests/python/sdk_agent.py` (SDK 0.3) with `delay` seconds between words.
pub async fn python_agent(delay: f64) -> SdkAgent {
    start_python_agent(python(), "sdk_agent.py", &[&delay.to_string()]).await
}

/// Starts `tests/python/sdk1_agent.py` (SDK 1.x, v1.0 only) with `delay` seconds
/// between words.
pub async fn python_v1_agent(delay: f64) -> SdkAgent {
    start_python_agent(python_v1(), "sdk1_agent.py", &[&delay.to_string()]).await
}

/// Like [`python_v1_agent`], serving gRPC (the SDK's GrpcHandler on grpcio) only; its
/// card (over HTTP) lists the one GRPC interface.
pub async fn python_v1_grpc_agent(delay: f64) -> SdkAgent {
    start_python_agent(python_v1(), "sdk1_agent.py", &[&delay.to_string(), "grpc"]).await
}

/// Like [`python_v1_agent`] on `binding` (`jsonrpc`, `rest`, `grpc`), with these
/// environment variables (see the script: a signed card, requests logged, a stream cut).
pub async fn python_v1_agent_with(delay: f64, envs: &[(&str, &str)], binding: &str) -> SdkAgent {
    let mut cmd = tokio::process::Command::new(python_v1());
    cmd.arg(Path::new(ROOT).join("tests/python/sdk1_agent.py"))
        .arg(delay.to_string())
        .arg(binding)
        .envs(envs.iter().copied());
    start_agent(cmd, "the Python SDK agent").await
}

/// Like [`python_v1_agent`], serving HTTP+JSON (the SDK's REST routes) only.
pub async fn python_v1_rest_agent(delay: f64) -> SdkAgent {
    start_python_agent(python_v1(), "sdk1_agent.py", &[&delay.to_string(), "rest"]).await
}

/// The SDK 1.x agent on `binding` (`jsonrpc`, `rest`) behind a TCP proxy that cuts the
/// connection of the first streaming call (`marker` in its request) once `after` SSE
/// events have passed; its card names the proxy, so every call goes through it.
/// Returns the agent (at the proxy's URL) and the number of cuts made.
pub async fn python_v1_agent_behind_a_cut(
    delay: f64,
    binding: &str,
    marker: &'static [u8],
    after: usize,
) -> (SdkAgent, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let public = format!("http://{}/", listener.local_addr().unwrap());
    let mut agent = start_python_agent(
        python_v1(),
        "sdk1_agent.py",
        &[&delay.to_string(), binding, &public],
    )
    .await;
    let target = agent
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    agent.url = public;
    let armed = Arc::new(AtomicBool::new(true));
    let cuts = Arc::new(AtomicUsize::new(0));
    let counted = cuts.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&target).await else {
                continue;
            };
            let (armed, cuts) = (armed.clone(), counted.clone());
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let streaming = Arc::new(AtomicBool::new(false));
                let seen = streaming.clone();
                let up = tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = cr.read(&mut buf).await {
                        if n == 0 || sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        if buf[..n].windows(marker.len()).any(|w| w == marker) {
                            seen.store(true, Ordering::SeqCst);
                        }
                    }
                });
                let mut buf = vec![0u8; 16 * 1024];
                let mut events = 0;
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 || cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    if streaming.load(Ordering::SeqCst) {
                        events += buf[..n].windows(5).filter(|w| w == b"data:").count();
                        if events >= after && armed.swap(false, Ordering::SeqCst) {
                            cuts.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                    }
                }
                up.abort();
            });
        }
    });
    (agent, cuts)
}

/// Starts `tests/python/otlp_receiver.py`: a loopback OTLP/HTTP receiver whose
/// `output` gets one JSON line a span received.
pub async fn otlp_receiver() -> SdkAgent {
    start_python_agent(python_v1(), "otlp_receiver.py", &[]).await
}

/// Starts `tests/js/agent.mjs` (the official @a2a-js/sdk 1.x with Express, A2A 1.0 on
/// JSON-RPC and HTTP+JSON, `first` listed first on its card) with `delay_ms` between
/// words.
pub async fn js_agent(delay_ms: u64, first: &str) -> SdkAgent {
    let dir = js_dir();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(dir.join("agent.mjs"))
        .arg(delay_ms.to_string())
        .arg(first)
        .current_dir(dir);
    start_agent(cmd, "the @a2a-js/sdk agent (node)").await
}

/// Like [`js_agent`], with these environment variables (see the script: a signed card).
pub async fn js_agent_with(delay_ms: u64, first: &str, envs: &[(&str, &str)]) -> SdkAgent {
    let dir = js_dir();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(dir.join("agent.mjs"))
        .arg(delay_ms.to_string())
        .arg(first)
        .envs(envs.iter().copied())
        .current_dir(dir);
    start_agent(cmd, "the @a2a-js/sdk agent (node)").await
}

/// Starts `tests/js/idp.mjs`: a real OpenID Provider (panva's oidc-provider) on
/// 127.0.0.1 with three people as service clients (alice in group hr, bob in
/// it-managers, olga in sre) whose client-credentials tokens are JWTs for the audience
/// `a2a-orchestrator`; see the script for its test endpoints (key rotation, forgeries).
pub async fn idp() -> SdkAgent {
    idp_with(&[]).await
}

/// Like [`idp`], with these environment variables (`TOKEN_TTL`: the lifetime of its
/// client-credentials tokens, in seconds).
pub async fn idp_with(envs: &[(&str, &str)]) -> SdkAgent {
    let dir = js_dir();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(dir.join("idp.mjs"))
        .envs(envs.iter().copied())
        .current_dir(dir);
    start_agent(cmd, "the OpenID Provider (node oidc-provider)").await
}

async fn start_python_agent(python: &Path, script: &str, args: &[&str]) -> SdkAgent {
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(Path::new(ROOT).join("tests/python").join(script))
        .args(args);
    start_agent(cmd, "the Python SDK agent").await
}

/// Starts an agent process that prints `PORT <n>` once it serves on 127.0.0.1.
async fn start_agent(mut cmd: tokio::process::Command, what: &str) -> SdkAgent {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let port = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(p) = line.strip_prefix("PORT ") {
                return p.trim().to_owned();
            }
        }
        panic!("{what} exited before listening");
    })
    .await
    .unwrap_or_else(|_| panic!("{what} did not start within 60 s"));
    // Read on, so that the process never blocks on a full pipe.
    let output = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = output.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    SdkAgent {
        url: format!("http://127.0.0.1:{port}/"),
        output,
        _child: child,
    }
}

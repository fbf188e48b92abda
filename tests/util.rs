//! Test helpers: in-process servers on loopback, raw HTTP, the Python venv with the
//! official SDK, and the Python peers.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use a2a_orchestrator::protocol::server::{A2aServer, AgentExecutor, ServerConfig};
use a2a_orchestrator::protocol::sse::SseDecoder;
use a2a_orchestrator::protocol::types::AgentCard;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::echo_agent::{EchoAgent, echo_card};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A server running on a loopback port for the duration of a test.
pub struct Running<A> {
    pub url: String,
    pub server: A2aServer<A>,
}

/// Serves `agent` on `127.0.0.1:0` with the card `card(url)`.
pub async fn serve<A: AgentExecutor>(
    agent: A,
    card: impl FnOnce(&str) -> AgentCard,
    config: ServerConfig,
) -> Running<A> {
    serve_with(agent, card, |b| b.config(config)).await
}

/// Like [`serve`], with full control over the builder.
pub async fn serve_with<A: AgentExecutor>(
    agent: A,
    card: impl FnOnce(&str) -> AgentCard,
    build: impl FnOnce(
        a2a_orchestrator::protocol::server::A2aServerBuilder<A>,
    ) -> a2a_orchestrator::protocol::server::A2aServerBuilder<A>,
) -> Running<A> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = build(A2aServer::builder(agent, card(&url))).build();
    let router = server.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    Running { url, server }
}

/// The echo example agent with `delay_ms` between words.
pub async fn echo(delay_ms: u64) -> Running<EchoAgent> {
    serve(
        EchoAgent {
            word_delay: Duration::from_millis(delay_ms),
        },
        echo_card,
        ServerConfig::default(),
    )
    .await
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
    let resp = reqwest::Client::new()
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
    let resp = reqwest::Client::new()
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

/// The venv's Python with the official SDK 0.3 installed (`tests/python/requirements.txt`).
/// Created under `target/py-venv` on first use; fails the test loudly when Python or the
/// SDK cannot be installed.
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

/// Creates (once, or again when its requirements changed) a venv under `target/` with
/// `tests/python/<requirements>` installed; its Python.
fn venv(name: &str, requirements: &str) -> PathBuf {
    let target = Path::new(ROOT).join("target");
    let venv = target.join(name);
    let requirements = Path::new(ROOT).join("tests/python").join(requirements);
    let wanted = std::fs::read_to_string(&requirements)
        .unwrap_or_else(|e| panic!("{}: {e}", requirements.display()));
    std::fs::create_dir_all(&target).unwrap();
    // Test binaries may run in parallel processes (nextest): one installs, others wait.
    let lock = File::create(target.join(format!("{name}.lock"))).unwrap();
    lock.lock()
        .unwrap_or_else(|e| panic!("lock target/{name}.lock: {e}"));
    let marker = venv.join(".a2a-requirements");
    let python = venv.join("bin/python");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) || !python.exists()
    {
        let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        run(
            std::process::Command::new(&base)
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
            &format!(
                "creating a Python venv with `{base} -m venv` (the interop tests need Python 3.10+ with venv; set PYTHON to choose the interpreter)"
            ),
        );
        run(
            std::process::Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "-q",
                    "-r",
                ])
                .arg(&requirements),
            &format!(
                "installing {} (the official a2a-sdk) with pip",
                requirements.display()
            ),
        );
        std::fs::write(&marker, &wanted).unwrap();
    }
    drop(lock);
    python
}

/// A directory under `target/js` with the official JavaScript SDK installed from
/// `tests/js/package-lock.json` (with `npm ci`, once, or again when the lock changed),
/// and the scripts of `tests/js` beside it. Fails the test loudly without Node and npm.
pub fn js_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let source = Path::new(ROOT).join("tests/js");
        let dir = Path::new(ROOT).join("target/js");
        std::fs::create_dir_all(&dir).unwrap();
        let lock = File::create(Path::new(ROOT).join("target/js.lock")).unwrap();
        lock.lock().expect("lock target/js.lock");
        let wanted = std::fs::read_to_string(source.join("package-lock.json"))
            .expect("tests/js/package-lock.json");
        let marker = dir.join(".installed-lock");
        for file in [
            "package.json",
            "package-lock.json",
            "client.mjs",
            "agent.mjs",
            "ui.mjs",
        ] {
            std::fs::copy(source.join(file), dir.join(file))
                .unwrap_or_else(|e| panic!("copying tests/js/{file}: {e}"));
        }
        if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str())
            || !dir.join("node_modules/@a2a-js/sdk").exists()
        {
            run(
                std::process::Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir),
                "installing tests/js (the official @a2a-js/sdk) with `npm ci` (the interop tests need Node 20+ and npm)",
            );
            std::fs::write(&marker, &wanted).unwrap();
        }
        drop(lock);
        dir
    })
}

/// Debian's Chromium for the browser tests, installed with apt-get (as root, once) when
/// it is missing. Fails the test loudly when it cannot be had.
pub fn chromium() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = PathBuf::from("/usr/bin/chromium");
        let lock = File::create(Path::new(ROOT).join("target/apt.lock")).unwrap();
        lock.lock().expect("lock target/apt.lock");
        if !path.exists() {
            let install = || {
                std::process::Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "chromium"])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // The package lists may be missing or stale on a fresh machine.
            if !install() {
                run(
                    std::process::Command::new("apt-get").arg("update"),
                    "apt-get update (to install chromium for the browser test)",
                );
                run(
                    std::process::Command::new("apt-get")
                        .args(["install", "-y", "--no-install-recommends", "chromium"])
                        .env("DEBIAN_FRONTEND", "noninteractive"),
                    "installing Debian's chromium with apt-get (the browser test needs it; as root, or install `chromium` yourself)",
                );
            }
        }
        assert!(
            path.exists(),
            "no {} after installing chromium",
            path.display()
        );
        drop(lock);
        path
    })
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

fn run(cmd: &mut std::process::Command, what: &str) {
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{what} failed with {s}"),
        Err(e) => panic!("{what} failed: {e}"),
    }
}

/// Runs a script from `tests/python` to completion (bounded) with the SDK 0.3 venv;
/// returns (success, output).
pub async fn run_python(script: &str, args: &[&str]) -> (bool, String) {
    run_script(python(), script, args).await
}

/// Like [`run_python`], with the SDK 1.x venv.
pub async fn run_python_v1(script: &str, args: &[&str]) -> (bool, String) {
    run_script(python_v1(), script, args).await
}

async fn run_script(python: &Path, script: &str, args: &[&str]) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(Path::new(ROOT).join("tests/python").join(script))
        .args(args);
    finish(cmd, script, args, "start python").await
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

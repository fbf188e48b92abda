//! An orchestrator for a test: in-process on `127.0.0.1:0` over our echo agents
//! ([`orchestra_with`], [`orchestra_on`]), or the real binary's `serve` in a child
//! process ([`spawn_serve`]); the workflows several tests share, and reading a run's
//! result off its task.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use a2a::card::AgentCard;
use a2a::client::{A2aClient, ClientConfig};
use a2a::server::ServerConfig;
use a2a::types::*;
use a2a_orchestrator::host::serve::{HostConfig, build};
use a2a_orchestrator::registry::config::load_str as load_agents;
use orchestrator_core::workflow::{self, Options, Workflow};
use orchestrator_store::StoreSpec;

use crate::util::echo;

/// A directory of its own for a test's `serve` processes, made afresh under the test
/// target directory: `flows/` holding the test's workflow files and `agents.toml`
/// naming its agents.
pub struct ServeDir {
    pub dir: PathBuf,
}

impl ServeDir {
    /// `flows/NAME` for each (NAME, TOML) of `workflows`, and each (name, URL) of
    /// `agents` in `agents.toml`.
    pub fn new(name: &str, workflows: &[(&str, &str)], agents: &[(&str, &str)]) -> ServeDir {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("flows")).unwrap();
        for (file, text) in workflows {
            std::fs::write(dir.join("flows").join(file), text).unwrap();
        }
        let toml: String = (agents.iter())
            .map(|(name, url)| format!("[agents.{name}]\nurl = \"{url}\"\n"))
            .collect();
        std::fs::write(dir.join("agents.toml"), toml).unwrap();
        ServeDir { dir }
    }

    /// `--agents`, `--workflows` and `--listen 127.0.0.1:0`, and `more` after them.
    pub fn args(&self, more: &[&str]) -> Vec<String> {
        let mut args = vec![
            "--agents".to_owned(),
            self.dir.join("agents.toml").display().to_string(),
            "--workflows".to_owned(),
            self.dir.join("flows").display().to_string(),
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
        ];
        args.extend(more.iter().map(|a| (*a).to_owned()));
        args
    }

    /// A log file here for `serve` number `i`'s stderr.
    pub fn log_file(&self, i: usize) -> std::process::Stdio {
        std::fs::File::create(self.dir.join(format!("serve-{i}.log")))
            .unwrap()
            .into()
    }

    /// What `serve` number `i` logged so far.
    pub fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("serve-{i}.log"))).unwrap_or_default()
    }
}

/// [`spawn_serve`] with its log lines (stderr) sent to `stderr`.
pub async fn spawn_serve_logging(
    args: &[&str],
    envs: &[(&str, &str)],
    stderr: std::process::Stdio,
) -> (tokio::process::Child, String) {
    let mut all = args.to_vec();
    if !args.iter().any(|a| *a == "--store" || *a == "--config") {
        all.extend(["--store", "memory"]);
    }
    // The suite's serves are not about credentials: the shipped workflows' rules on who
    // may start or answer are served unenforced where no [auth] is given.
    all.push("--insecure-open");
    spawn_serve_as_given(&all, envs, stderr).await
}

/// `serve ARGS`, exactly these, from the repository root; it and its URL once it
/// listens.
pub async fn spawn_serve_as_given(
    args: &[&str],
    envs: &[(&str, &str)],
    stderr: std::process::Stdio,
) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .arg("serve")
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(crate::util::ROOT)
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let line = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match lines.next_line().await.unwrap() {
                Some(l) if l.contains("listening on") => return Some(l),
                Some(_) => continue,
                None => return None,
            }
        }
    })
    .await
    .unwrap()
    .expect("serve printed its URL");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap()
        .to_owned();
    (child, url)
}

/// Starts `serve` with `args` from the repository root (with `--store memory` unless
/// `args` name a store or a config file, and `--insecure-open`); returns it and its URL.
pub async fn spawn_serve(args: &[&str], envs: &[(&str, &str)]) -> (tokio::process::Child, String) {
    spawn_serve_logging(args, envs, std::process::Stdio::null()).await
}

/// [`spawn_serve`] on a free port with `dir/workflows` and `dir/agents.toml`.
pub async fn spawn_serve_in(
    dir: &std::path::Path,
    envs: &[(&str, &str)],
) -> (tokio::process::Child, String) {
    let (workflows, agents) = (dir.join("workflows"), dir.join("agents.toml"));
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--workflows",
        workflows.to_str().unwrap(),
        "--agents",
        agents.to_str().unwrap(),
    ];
    spawn_serve(&args, envs).await
}

pub(crate) fn result_text(t: &Task) -> String {
    t.artifacts
        .iter()
        .find(|a| a.artifact_id.as_str() == "result")
        .map(|a| parts_text(&a.parts))
        .unwrap_or_default()
}

/// A JSON object as a message's metadata (`{"workflow": ...}` names what to run).
pub(crate) fn metadata(object: serde_json::Value) -> Option<Metadata> {
    match object {
        serde_json::Value::Object(map) => Some(map.into()),
        other => panic!("metadata is a JSON object, not {other}"),
    }
}

pub(crate) fn task(r: SendMessageResult) -> Task {
    match r {
        SendMessageResult::Task(t) => t,
        other => panic!("{other:?}"),
    }
}

pub(crate) async fn client(url: &str) -> (A2aClient, AgentCard) {
    A2aClient::connect(url, ClientConfig::default())
        .await
        .unwrap()
}

/// An orchestrator (in memory, on a free port) with `workflows` over the agents of
/// `toml`, which the caller keeps running.
pub(crate) async fn orchestra_on(
    workflows: &[&str],
    toml: String,
    configure: impl FnOnce(&mut HostConfig),
) -> Orchestra {
    let (agents, diags) = load_agents("agents.toml", &toml);
    assert!(diags.is_empty(), "{diags:?}");
    let workflows: Vec<Arc<Workflow>> = workflows
        .iter()
        .map(|w| {
            Arc::new(
                workflow::load_str("w.toml", w, Options::default())
                    .0
                    .expect("valid workflow"),
            )
        })
        .collect();
    let mut config = HostConfig {
        name: "Test orchestrator".into(),
        description: "runs test workflows".into(),
        workflows: PathBuf::new(),
        agents: PathBuf::new(),
        server: ServerConfig {
            allow_private_webhooks: true,
            ..ServerConfig::default()
        },
        store: StoreSpec::Memory,
        retention: Duration::from_secs(3600),
        llm: None,
        llm_price: None,
        limits: Default::default(),
        ready_requires_agents: false,
        reload_workflows: false,
        reload_interval: a2a_orchestrator::host::serve::RELOAD_EVERY,
        insecure_open: true,
        card_signing: None,
    };
    configure(&mut config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let store = config.store.open().await.unwrap();
    let host = build(
        &config,
        workflows.clone(),
        &agents.unwrap(),
        &url,
        store.clone(),
    )
    .await;
    let router = host.router(None, Some(None));
    let serving = host.server.clone();
    tokio::spawn(async move {
        serving
            .serve_router(listener, router, std::future::pending())
            .await
    });
    Orchestra {
        url,
        echo_agents: Vec::new(),
        config,
        workflows,
        agents_toml: toml,
        store,
    }
}

pub(crate) async fn orchestra_with(
    workflows: &[&str],
    delay_ms: u64,
    configure: impl FnOnce(&mut HostConfig),
) -> Orchestra {
    let one = echo(delay_ms).await;
    let two = echo(delay_ms).await;
    let toml = format!(
        "[agents.one]\nurl = \"{}\"\n[agents.two]\nurl = \"{}\"\n",
        one.url, two.url
    );
    let mut o = orchestra_on(workflows, toml, configure).await;
    o.echo_agents = vec![one, two];
    o
}

pub(crate) struct Orchestra {
    pub(crate) url: String,
    pub(crate) echo_agents: Vec<crate::util::Running>,
    pub(crate) config: HostConfig,
    pub(crate) workflows: Vec<Arc<Workflow>>,
    pub(crate) agents_toml: String,
    pub(crate) store: Arc<dyn orchestrator_store::Store>,
}

impl Orchestra {
    /// A new host on the same store, agents and workflows, as after a restart: the
    /// first host's memory is gone; it resumes what the store holds. Returns its URL.
    pub(crate) async fn restarted(&self) -> String {
        let (agents, _) = load_agents("agents.toml", &self.agents_toml);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let host = build(
            &self.config,
            self.workflows.clone(),
            &agents.unwrap(),
            &url,
            self.store.clone(),
        )
        .await;
        host.server.recover().await.unwrap();
        let serving = host.server.clone();
        tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
        url
    }
}

pub(crate) const APPROVE: &str = r#"
[workflow]
id = "approve"
name = "Approved echo"
description = "Asks for approval, then echoes"
[steps.ok]
kind = "approval"
prompt = "May I echo?"
[steps.say]
agent = "one"
needs = ["ok"]
when = "steps.ok.data.approved"
message = "approved and echoed"
[output]
text = "{% if steps.say.state == 'completed' %}{{ steps.say.text }}{% else %}not approved{% endif %}"
"#;

pub(crate) const GREET: &str = r#"
[workflow]
id = "greet"
name = "Greeter"
description = "Greets someone by name"
tags = ["greet", "hello"]
[input]
name = { type = "string", description = "Who to greet", required = true }
[steps.hello]
agent = "one"
message = "hello {{ input.name }}"
[output]
text = "{{ steps.hello.text }}"
"#;

pub(crate) const TWO_APPROVALS: &str = r#"
[workflow]
id = "two"
description = "Two approvals asked together, then an echo"
[steps.first]
kind = "approval"
prompt = "First?"
[steps.second]
kind = "approval"
prompt = "Second?"
[steps.say]
agent = "one"
needs = ["first", "second"]
message = "both approved"
[output]
text = "{{ steps.say.text }}"
"#;

//! Workflow throughput through the whole host (HTTP in, HTTP out) with the in-memory
//! and the SQLite store: upstream clients at concurrency 64 run a 4-step diamond (one
//! step, two in parallel, one join) with blocking `message/send` against an instant
//! loopback agent. Target: SQLite ≥ 50% of the in-memory throughput.
//!
//! `cargo bench --bench store` (`-- --quick` for a short run)

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_orchestrator::host::serve::{HostConfig, build};
use a2a_orchestrator::protocol::RpcError;
use a2a_orchestrator::protocol::client::{A2aClient, ClientConfig};
use a2a_orchestrator::protocol::server::{
    A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig,
};
use a2a_orchestrator::protocol::types::*;
use a2a_orchestrator::store::StoreSpec;
use a2a_orchestrator::workflow::{self, Options};

/// Completes every task at once with a one-part artifact.
struct Instant_;

impl AgentExecutor for Instant_ {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let text = ctx.message.text();
        events
            .artifact(
                Artifact::new(ArtifactId::new("out"), vec![Part::text(text)]),
                false,
                true,
            )
            .await
            .ok();
        events.complete(None).await.ok();
        Ok(())
    }
}

const DIAMOND: &str = r#"
[workflow]
id = "diamond"
description = "one step, two in parallel, one join"
[steps.top]
agent = "fast"
message = "top"
[steps.left]
agent = "fast"
needs = ["top"]
message = "left"
[steps.right]
agent = "fast"
needs = ["top"]
message = "right"
[steps.join]
agent = "fast"
needs = ["left", "right"]
message = "join"
"#;

async fn agent() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let mut card = AgentCard::new("fast", "answers at once", &url);
    card.capabilities.streaming = Some(true);
    card.default_input_modes = vec!["text/plain".into()];
    card.default_output_modes = vec!["text/plain".into()];
    let router = A2aServer::new(Instant_, card).router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// Runs per second through a host on `store`.
async fn throughput(store: StoreSpec, agent_url: &str, runs: usize, concurrency: usize) -> f64 {
    let (wf, diags) = workflow::load_str("diamond.toml", DIAMOND, Options::default());
    let wf = Arc::new(wf.unwrap_or_else(|| panic!("{diags:?}")));
    let (agents, diags) = a2a_orchestrator::registry::config::load_str(
        "agents.toml",
        &format!("[agents.fast]\nurl = \"{agent_url}\"\n"),
    );
    let agents = agents.unwrap_or_else(|| panic!("{diags:?}"));
    let config = HostConfig {
        name: "bench".into(),
        description: "bench".into(),
        workflows: "diamond.toml".into(),
        agents: "agents.toml".into(),
        server: ServerConfig::default(),
        store: store.clone(),
        retention: Duration::from_secs(3600),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let host = build(
        &config,
        vec![wf],
        &agents,
        &url,
        store.open().await.unwrap(),
    )
    .await;
    let router = host.server.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let client = A2aClient::new(url.as_str(), ClientConfig::default()).unwrap();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, next) = (client.clone(), next.clone());
        workers.spawn(async move {
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < runs {
                let mut message = Message::user_text("go");
                message.metadata = Some(serde_json::Map::from_iter([(
                    "workflow".to_owned(),
                    serde_json::json!("diamond"),
                )]));
                match client.send_message(&MessageSendParams::new(message)).await {
                    Ok(SendMessageResult::Task(t)) if t.status.state == TaskState::Completed => {}
                    other => panic!("a run did not complete: {other:?}"),
                }
            }
        });
    }
    while let Some(r) = workers.join_next().await {
        r.unwrap();
    }
    runs as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 300 } else { 3000 };
    let agent = agent().await;
    let dir = std::env::temp_dir().join(format!("a2a-bench-store-{}", std::process::id()));
    let memory = throughput(StoreSpec::Memory, &agent, runs, 64).await;
    let sqlite = throughput(StoreSpec::Sqlite(dir.join("bench.db")), &agent, runs, 64).await;
    let _ = std::fs::remove_dir_all(&dir);
    let ratio = sqlite / memory;
    println!("runs_per_sec_c64_memory  {memory:>8.0}");
    println!("runs_per_sec_c64_sqlite  {sqlite:>8.0}");
    println!(
        "sqlite / memory          {:>7.0}%  (target ≥ 50%: {})",
        ratio * 100.0,
        if ratio >= 0.5 { "met" } else { "missed" }
    );
}

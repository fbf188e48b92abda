//! Benchmark: discovering 50 agents on loopback (target: under 100 ms).
//!
//! `cargo bench --bench discovery` starts 50 A2A servers in process, then times
//! `Registry::discover` over an agents file naming them all.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use a2a::RpcError;
use a2a::card::AgentCard;
use a2a::server::{A2aServer, AgentExecutor, EventSink, RequestContext};
use a2a_orchestrator::registry::config::load_str;
use a2a_orchestrator::registry::{Health, Registry, RegistryOptions};

struct Idle;

impl AgentExecutor for Idle {
    async fn execute(&self, _ctx: RequestContext, _events: EventSink) -> Result<(), RpcError> {
        Ok(())
    }
}

#[tokio::main]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut toml = String::new();
    for i in 0..50 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let router =
            A2aServer::new(Idle, AgentCard::new(format!("agent {i}"), "idle", &url)).router();
        tokio::spawn(async move { axum::serve(listener, router).await });
        toml.push_str(&format!("[agents.a{i}]\nurl = \"{url}\"\n"));
    }
    let (file, _) = load_str("agents.toml", &toml);
    let file = file.unwrap();
    let runs = if quick { 3 } else { 15 };
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let registry = Registry::discover(&file, &HashMap::new(), RegistryOptions::default()).await;
        times.push(start.elapsed());
        assert!(
            registry
                .statuses()
                .iter()
                .all(|s| s.health == Health::Healthy)
        );
    }
    times.sort();
    println!(
        "discover 50 agents: median {:.1} ms, slowest {:.1} ms over {runs} runs (target: < 100 ms)",
        times[runs / 2].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3
    );
}

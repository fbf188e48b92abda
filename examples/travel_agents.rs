//! The example travel agents of the demo, served on the ports `agents.toml` names, so
//! `a2a-orchestrator serve` (or `run`) can use them:
//!
//! ```sh
//! cargo run --example travel_agents -- [--latency 250ms] [--chunk-delay 60ms] [--failure-rate 0.2]
//! ```
//!
//! Their code is in `src/agents/` (so `demo` can start them in-process): a `Desk` per
//! agent decides what to answer, `ExampleAgent` streams it over A2A.

#[tokio::main]
async fn main() -> std::io::Result<()> {
    a2a_orchestrator::agents::serve_example(a2a_orchestrator::agents::Set::Travel).await
}

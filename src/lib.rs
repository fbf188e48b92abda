//! a2a-orchestrator: a multi-agent orchestrator for the Agent2Agent (A2A) protocol —
//! the application, built on the workspace's crates:
//!
//! - [`a2a`]: the A2A protocol, v1.0 and v0.3 (types, JSON-RPC, HTTP+JSON, SSE, client
//!   and server). It knows nothing of workflows.
//! - [`orchestrator_core`]: the workflow language and the engine, over traits; no HTTP,
//!   database or wire format.
//! - [`orchestrator_store`]: the protocol's `TaskStore` and the engine's `RunStore` in
//!   memory, SQLite or PostgreSQL.
//! - [`orchestrator_metrics`] and [`backoff`]: leaves every layer uses.
//!
//! This crate joins them:
//!
//! - [`registry`]: the downstream agents of `agents.toml` (discovery, health, selection).
//! - [`connect`]: the engine's agent connector over the protocol's client and the
//!   registry, and its text model over [`llm`].
//! - [`host`]: the orchestrator as one A2A agent (`serve`).
//! - [`llm`]: the optional language model (any OpenAI-compatible API).
//! - [`telemetry`]: logs, and OpenTelemetry traces carried across every hop.
//! - [`agents`]: the demo's example downstream agents, built on the protocol only.
//! - [`bench`](mod@bench): the benchmark behind `bench`.
//! - [`cli`]: the command-line front end.
//! - `untrusted`: fetching from a provider or token endpoint (which URLs, how much).
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the invariants.

#![forbid(unsafe_code)]

/// Writes a line to standard output and gives the write's error for `?` — the reader
/// gone (`… | head`) included, which `main` turns into a quiet, successful end — where
/// `println!` would panic. Declared before the modules, so every one of them has it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// [`say!`] without the line's end.
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

pub mod agents;
pub mod auth;
pub mod bench;
pub mod cli;
pub mod connect;
pub mod host;
pub mod llm;
pub mod registry;
pub mod telemetry;
pub mod testmode;
mod untrusted;

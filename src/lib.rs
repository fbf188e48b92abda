//! a2a-orchestrator: a multi-agent orchestrator for the Agent2Agent (A2A) protocol.
//!
//! The crate is layered; each layer knows only the ones below it:
//!
//! - [`protocol`]: a complete A2A implementation, v1.0 and v0.3 — wire types, a server
//!   (JSON-RPC and HTTP+JSON, SSE streaming) generic over an
//!   [`protocol::server::AgentExecutor`], and a client with card discovery speaking
//!   either generation on either binding. It knows nothing about workflows.
//! - [`config`]: reading the project's TOML files with `file:line:column` diagnostics.
//! - [`workflow`]: the workflow definition language — TOML format, static validation,
//!   templates, graph rendering. It knows nothing about HTTP or JSON-RPC.
//! - [`registry`]: the downstream agents of `agents.toml`.
//! - [`engine`]: runs workflows, reaching agents and models only through traits.
//! - [`store`]: [`protocol::server::TaskStore`] and [`engine::RunStore`] in memory,
//!   SQLite or PostgreSQL (replicas sharing one database).
//! - [`connect`]: the engine's agent connector over the protocol's client and the
//!   registry; [`host`]: the orchestrator as one A2A agent (`serve`). These adapters are
//!   the only places the engine and the protocol meet.
//! - [`llm`]: the optional language model (any OpenAI-compatible API).
//! - [`agents`]: the demo's example downstream agents, built on the protocol only.
//! - [`bench`]: the benchmark behind `bench`.
//! - [`backoff`]: the one retry schedule every retry loop uses (a leaf).
//! - [`metrics`]: the Prometheus metrics every layer records into (a leaf).
//! - [`telemetry`]: logs, and OpenTelemetry traces carried across every hop.
//! - [`cli`]: the command-line front end.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the invariants.

#![forbid(unsafe_code)]

pub mod agents;
pub mod bench;
pub mod cli;
pub mod connect;
pub mod host;
pub mod llm;
pub mod registry;
pub mod telemetry;

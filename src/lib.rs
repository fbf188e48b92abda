//! a2a-orchestrator: a multi-agent orchestrator for the Agent2Agent (A2A) protocol.
//!
//! The crate is layered; each layer knows only the ones below it:
//!
//! - [`protocol`]: a complete A2A v0.3.0 implementation — wire types, a JSON-RPC server
//!   with SSE streaming generic over an [`protocol::server::AgentExecutor`], and a client
//!   with card discovery. It knows nothing about workflows.
//! - [`cli`]: the command-line front end.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the invariants.

#![forbid(unsafe_code)]

pub mod cli;
pub mod protocol;

//! The A2A protocol layer (spec v0.3.0): wire types, JSON-RPC 2.0, SSE, a server generic
//! over an agent, and a client.
//!
//! **Architecture invariant:** nothing here knows about workflows, steps or the
//! orchestrator. This module is usable on its own to write any A2A agent or client.

pub mod client;
pub mod error;
pub mod jsonrpc;
pub mod log;
pub mod method;
pub mod server;
pub mod sse;
pub mod types;
pub mod v1;

pub use error::{ErrorCode, RpcError};
pub use method::Method;

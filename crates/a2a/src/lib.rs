//! The A2A protocol layer, v1.0 and v0.3: the internal model (v0.3's shapes) and v1.0's
//! at the boundary (`v1`), JSON-RPC 2.0 and HTTP+JSON, SSE, a server generic over an
//! agent, and a client that speaks either generation on either binding.
//!
//! Nothing here knows about workflows, steps or the orchestrator (the crate graph holds
//! it): the crate is usable on its own to write any A2A agent or client. Features:
//! `client` (card discovery and every operation) and `server` (every operation on one
//! port, push delivery), both on by default; without them, the types and JSON-RPC.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![doc = include_str!("../README.md")]

#[cfg(feature = "client")]
pub mod client;
pub mod error;
pub mod jsonrpc;
pub mod log;
pub mod method;
#[cfg(feature = "grpc")]
pub mod proto;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "signing")]
pub mod signing;
#[cfg(feature = "client")]
pub mod sse;
pub mod types;
pub mod v1;
pub mod version;

pub use error::{ErrorCode, RpcError};
pub use method::Method;
pub use version::{Version, Versions};

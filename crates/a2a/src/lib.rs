//! The A2A protocol layer, v1.0 and v0.3: the model (`types`: v1.0's messages, generated
//! from the normative proto in `proto`), the Agent Card both generations read (`card`),
//! v0.3's wire types and their conversion at the edge (`v0_3`), v1.0's card fields and
//! errors (`v1`), JSON-RPC 2.0 and HTTP+JSON, SSE,
//! a server generic over an agent, and a client that speaks either generation on any
//! binding.
//!
//! Nothing here knows about workflows, steps or the orchestrator (the crate graph holds
//! it): the crate is usable on its own to write any A2A agent or client. Features, all
//! on by default and each building alone: `client` (card discovery and every operation,
//! over JSON-RPC and HTTP+JSON), `server` (every operation on one port, push delivery),
//! `grpc` (the gRPC binding for either, on tonic),
//! `signing` (Agent Card signatures; the server needs it) and `v0_3` (A2A 0.3 beside 1.0:
//! its wire types, served and called, and what older stores wrote in it); without them,
//! the types and JSON-RPC.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The README's examples are an agent and a client: its text is the crate's page (and
// its examples doctests) where both are built.
#![cfg_attr(all(feature = "client", feature = "server"), doc = include_str!("../README.md"))]

pub mod card;
#[cfg(feature = "client")]
pub mod client;
pub mod error;
#[cfg(any(feature = "client", feature = "server"))]
pub mod https;
pub mod jsonrpc;
pub mod log;
pub mod method;
#[cfg(feature = "store")]
pub mod principal;
pub mod proto;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "signing")]
pub mod signing;
#[cfg(feature = "client")]
pub mod sse;
#[cfg(feature = "store")]
pub mod store;
pub mod types;
#[cfg(feature = "v0_3")]
pub mod v0_3;
pub mod v1;
pub mod version;

pub use error::{ErrorCode, RpcError};
pub use method::Method;
pub use version::{Version, Versions};

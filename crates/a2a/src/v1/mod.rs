//! A2A v1.0 on the wire: its messages are the model ([`crate::types`], as bytes on gRPC
//! and as ProtoJSON on the other bindings); here are its binding names and its errors
//! ([`error`]).

pub mod error;

pub use crate::error::ConvertError;

/// `protocolBinding` names of the interfaces a card lists.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The HTTP+JSON binding's name.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The gRPC binding's name.
pub const BINDING_GRPC: &str = "GRPC";

/// The `@type` and domain of the `google.rpc.ErrorInfo` detail v1.0 errors carry.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// The `domain` of v1.0's `ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

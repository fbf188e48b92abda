//! The A2A v0.3.0 wire types: every object of spec §5–§7 and of the normative JSON
//! Schema (`a2a.json`), with the exact JSON shape the spec prescribes.
//!
//! They serialize in camelCase, omit absent optionals, require what the schema requires
//! and ignore unknown fields on input. Discriminated unions (`Part`, `StreamEvent`,
//! `SendMessageResult`, `SecurityScheme`) dispatch on their `kind` / `type` member so
//! that errors name what was wrong rather than "did not match any variant".
//!
//! [`convert`] reads them into the model ([`crate::types`], v1.0's messages) and writes
//! them from it: v0.3's JSON-RPC methods, both ways, its push bodies and the rows older
//! stores wrote.

pub mod card;
pub mod convert;
mod events;
mod kind;
mod message;
mod params;
mod push;
mod task;

pub use crate::types::{
    ArtifactId, ContextId, MAX_PARTS, MessageId, Metadata, TaskId, media_type_matches,
};
pub use events::*;
pub use kind::*;
pub use message::*;
pub use params::*;
pub use push::*;
pub use task::*;

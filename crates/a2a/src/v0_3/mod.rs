//! The A2A v0.3.0 wire types: every object of spec §5–§7 and of the normative JSON
//! Schema (`a2a.json`), with the exact JSON shape the spec prescribes.
//!
//! They serialize in camelCase, omit absent optionals, require what the schema requires
//! and ignore unknown fields on input. Discriminated unions (`Part`, `StreamEvent`,
//! `SendMessageResult`, `SecurityScheme`) dispatch on their `kind` / `type` member so
//! that errors name what was wrong rather than "did not match any variant".
//!
//! The server's task actor and stores, and the client's answers, still hold tasks and
//! events in these shapes; v1.0's messages ([`crate::proto::pb`]) convert to and from
//! them in [`crate::v1::convert`].

mod card;
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
pub use card::*;
pub use events::*;
pub use kind::*;
pub use message::*;
pub use params::*;
pub use push::*;
pub use task::*;

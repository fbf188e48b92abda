//! The A2A v0.3.0 wire types: every object of spec §5–§7 and of the normative JSON
//! Schema (`a2a.json`), with the exact JSON shape the spec prescribes.
//!
//! These types are the protocol layer's model. They serialize in camelCase, omit absent
//! optionals, require what the schema requires and ignore unknown fields on input.
//! Discriminated unions (`Part`, `StreamEvent`, `SendMessageResult`, `SecurityScheme`)
//! dispatch on their `kind` / `type` member so that errors name what was wrong rather
//! than "did not match any variant".
//!
//! A2A v1.0, which renames methods and reshapes parts and enums, lives beside these in
//! [`crate::v1`] as its own serde structs converted to and from them at the edge;
//! nothing outside this crate depends on the JSON shape.

mod card;
mod events;
mod ids;
mod kind;
mod message;
mod metadata;
mod params;
mod push;
mod task;

pub use card::*;
pub use events::*;
pub use ids::*;
pub use kind::*;
pub use message::*;
pub use metadata::Metadata;
pub use params::*;
pub use push::*;
pub use task::*;

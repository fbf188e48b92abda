//! The protocol's model, whatever generation a peer speaks: identifiers and metadata.

mod ids;
mod metadata;

pub use ids::*;
pub use metadata::Metadata;

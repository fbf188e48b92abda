//! Newtypes for the protocol's identifiers, so a task id is never passed where a context
//! id belongs. All are opaque strings on the wire.
//!
//! Each holds its text in an `Arc<str>`: an id is copied far more often than it is
//! made (into every event of its task, every index of a store, every snapshot), and a
//! copy is then a count raised rather than an allocation, a copy of the text and a free.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        /// The empty id: what a wire form that leaves the field out reads as.
        impl Default for $name {
            fn default() -> Self {
                Self::new("")
            }
        }

        impl $name {
            /// Wraps an existing identifier.
            pub fn new(id: impl AsRef<str>) -> Self {
                Self(Arc::from(id.as_ref()))
            }

            /// A fresh identifier: a UUID v7, random but for its leading timestamp, so
            /// identifiers made later sort later and a store's index keeps its new keys
            /// together (a random key lands on a different page of the index each time).
            pub fn random() -> Self {
                let mut text = uuid::Uuid::encode_buffer();
                Self::new(uuid::Uuid::now_v7().hyphenated().encode_lower(&mut text))
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Whether the id is empty (a wire form's default).
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self::new(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self::new(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        /// Read from the text in place where the input allows (one allocation, the
        /// id's own), from an owned string otherwise.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(IdVisitor).map(Self)
            }
        }

        /// The id's text, as the proto's messages hold ids.
        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0.as_ref().to_owned()
            }
        }

        impl From<&$name> for String {
            fn from(id: &$name) -> String {
                id.0.as_ref().to_owned()
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                *self.0 == **other
            }
        }

        /// Looked up by its text (a map keyed by ids, asked with a `&str`): it hashes
        /// and compares as its text does.
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

/// Reads an id's text into its shared form, copying it once.
struct IdVisitor;

impl serde::de::Visitor<'_> for IdVisitor {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Arc::from(v))
    }
}

string_id!(
    /// Identifies a task (`Task.id`, `taskId`).
    TaskId
);
string_id!(
    /// Groups related tasks and messages (`contextId`).
    ContextId
);
string_id!(
    /// Identifies a message (`messageId`).
    MessageId
);
string_id!(
    /// Identifies an artifact within a task (`artifactId`).
    ArtifactId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_are_unique_and_sort_in_the_order_they_were_made() {
        let ids: Vec<TaskId> = (0..64)
            .map(|_| {
                // v7 orders by the millisecond; within one it is random.
                std::thread::sleep(std::time::Duration::from_millis(1));
                TaskId::random()
            })
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, ids);
    }
}

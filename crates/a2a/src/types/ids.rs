//! Newtypes for the protocol's identifiers, so a task id is never passed where a context
//! id belongs. All are opaque strings on the wire.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps an existing identifier.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// A fresh identifier: a UUID v7, random but for its leading timestamp, so
            /// identifiers made later sort later and a store's index keeps its new keys
            /// together (a random key lands on a different page of the index each time).
            pub fn random() -> Self {
                Self(uuid::Uuid::now_v7().to_string())
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
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

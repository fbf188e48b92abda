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

            /// A fresh random (UUID v4) identifier.
            pub fn random() -> Self {
                Self(uuid::Uuid::new_v4().to_string())
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

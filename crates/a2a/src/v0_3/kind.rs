//! Constant discriminator values (`"kind": "task"`, `"jsonrpc": "2.0"`, ...).
//!
//! Each marker is a zero-sized type that serializes as its one string and refuses any
//! other on input, so a `Task` can only be read from JSON that says `"kind": "task"`.

macro_rules! const_str {
    ($(#[$meta:meta])* $name:ident = $lit:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The one value this marker stands for.
            pub const VALUE: &'static str = $lit;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                if s == $lit {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(
                        serde::de::Unexpected::Str(&s),
                        &concat!("\"", $lit, "\""),
                    ))
                }
            }
        }
    };
}

const_str!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
const_str!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
const_str!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
const_str!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);
const_str!(
    /// `"jsonrpc": "2.0"`.
    JsonRpcVersion = "2.0"
);

//! Messages and their parts (spec §6.4–§6.6): the unit of communication between a
//! client and an agent, and the content blocks that messages and artifacts carry.

use serde::{Deserialize, Serialize};

use super::{ContextId, MAX_PARTS, MessageId, MessageKind, Metadata, TaskId};

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client side.
    User,
    /// The agent side.
    Agent,
}

/// One communication turn (`"kind": "message"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Always `message`.
    pub kind: MessageKind,
    /// The message's id, chosen by its sender.
    pub message_id: MessageId,
    /// Who sent it.
    pub role: Role,
    /// Its content.
    #[serde(deserialize_with = "bounded_parts")]
    pub parts: Vec<Part>,
    /// The context it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<ContextId>,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// Other tasks it refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<TaskId>>,
    /// The extensions it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Message {
    /// A message with a fresh random id and the given parts.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self::with_id(MessageId::random(), role, parts)
    }

    /// A message with the given id and parts (one read from the wire, say).
    pub fn with_id(message_id: MessageId, role: Role, parts: Vec<Part>) -> Self {
        Self {
            kind: MessageKind,
            message_id,
            role,
            parts,
            context_id: None,
            task_id: None,
            reference_task_ids: None,
            extensions: None,
            metadata: None,
        }
    }
}

/// A content block, discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Part {
    /// Text.
    Text(TextPart),
    /// A file, inline or by URI.
    File(FilePart),
    /// Structured data (a JSON object).
    Data(DataPart),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text(TextPart {
            text: text.into(),
            metadata: None,
        })
    }

    /// A structured-data part.
    pub fn data(data: serde_json::Map<String, serde_json::Value>) -> Self {
        Part::Data(DataPart {
            data,
            metadata: None,
        })
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Part::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The media type this part carries, as used to match input and output modes:
    /// `text/plain` for text, `application/json` for data, the file's own type (or
    /// `application/octet-stream` when it declares none) for files.
    pub fn media_type(&self) -> &str {
        match self {
            Part::Text(_) => "text/plain",
            Part::Data(_) => "application/json",
            Part::File(f) => f
                .file
                .mime_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
        }
    }
}

/// `{"kind": "text", "text": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextPart {
    /// The text.
    pub text: String,
    /// The part's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `{"kind": "file", "file": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePart {
    /// The file.
    pub file: FileContent,
    /// The part's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `{"kind": "data", "data": {...}}`: structured JSON content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataPart {
    /// The data.
    pub data: serde_json::Map<String, serde_json::Value>,
    /// The part's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A file, carried inline as base64 (`FileWithBytes`) or by reference (`FileWithUri`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawFile", into = "RawFile")]
pub struct FileContent {
    /// The file's name.
    pub name: Option<String>,
    /// Its media type.
    pub mime_type: Option<String>,
    /// Its bytes, or where to fetch them.
    pub source: FileSource,
}

/// Where a file's content is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileSource {
    /// Base64-encoded content (`bytes`).
    Bytes(String),
    /// A URI the content can be fetched from (`uri`).
    Uri(String),
}

impl FileSource {
    /// The bytes of inline content, decoded as a protobuf JSON reader decodes a `bytes`
    /// field: standard or URL-safe base64, padded or not (v0.3 says only "base64");
    /// `None` for a URI. An error says what is wrong with the text.
    pub fn decode(&self) -> Option<Result<Vec<u8>, base64::DecodeError>> {
        match self {
            FileSource::Bytes(b) => Some(crate::types::decode_base64(b)),
            FileSource::Uri(_) => None,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
}

impl TryFrom<RawFile> for FileContent {
    type Error = &'static str;

    fn try_from(raw: RawFile) -> Result<Self, Self::Error> {
        let source = match (raw.bytes, raw.uri) {
            (Some(b), None) => FileSource::Bytes(b),
            (None, Some(u)) => FileSource::Uri(u),
            (Some(_), Some(_)) => return Err("a file must have `bytes` or `uri`, not both"),
            (None, None) => return Err("a file must have either `bytes` or `uri`"),
        };
        Ok(FileContent {
            name: raw.name,
            mime_type: raw.mime_type,
            source,
        })
    }
}

impl From<FileContent> for RawFile {
    fn from(f: FileContent) -> Self {
        let (bytes, uri) = match f.source {
            FileSource::Bytes(b) => (Some(b), None),
            FileSource::Uri(u) => (None, Some(u)),
        };
        RawFile {
            name: f.name,
            mime_type: f.mime_type,
            bytes,
            uri,
        }
    }
}

/// A list of parts, read one by one and refused past [`MAX_PARTS`].
pub fn bounded_parts<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Bounded<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a list of at most {MAX_PARTS} parts")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
            while let Some(part) = seq.next_element()? {
                if out.len() == MAX_PARTS {
                    return Err(serde::de::Error::custom(format!(
                        "more than {MAX_PARTS} parts"
                    )));
                }
                out.push(part);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Bounded(std::marker::PhantomData))
}

#[cfg(test)]
mod tests {
    use super::FileSource;

    #[test]
    fn file_bytes_decode_as_protobuf_json_reads_bytes() {
        let decoded = |b: &str| FileSource::Bytes(b.into()).decode().unwrap();
        // "hi?>" is standard `aGk/Pg==`, URL-safe `aGk_Pg==`; both with or without `=`.
        for text in ["aGk/Pg==", "aGk/Pg", "aGk_Pg==", "aGk_Pg"] {
            assert_eq!(decoded(text).unwrap(), b"hi?>", "{text}");
        }
        assert_eq!(decoded("").unwrap(), b"");
        for text in ["not base64!", "a", "aGk/Pg_-", "aGk=aGk="] {
            assert!(decoded(text).is_err(), "{text}");
        }
        assert!(FileSource::Uri("https://x/".into()).decode().is_none());
    }
}

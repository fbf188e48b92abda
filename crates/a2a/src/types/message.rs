//! Messages and their parts (spec §4.1.4–§4.1.6): the proto's messages, with what a
//! program needs to make and read them.

use serde_json::{Map, Value};

use crate::proto::json::JsonValue;
use crate::proto::pb::part::Content;
use crate::proto::pb::{Message, Part, Role};

/// Most parts a message or an artifact may carry on the wire. A server bounds them
/// lower still (`ServerConfig::max_parts`); this bound stops reading at once, before a
/// flood of tiny parts costs memory.
pub const MAX_PARTS: usize = 10_000;

impl Message {
    /// A message with a fresh random id (a UUID v7) and the given parts.
    pub fn new(role: Role, parts: Vec<Part>) -> Message {
        Message::with_id(super::MessageId::random().as_str(), role, parts)
    }

    /// A message with the given id and parts.
    pub fn with_id(message_id: impl Into<String>, role: Role, parts: Vec<Part>) -> Message {
        Message {
            message_id: message_id.into(),
            role: role as i32,
            parts,
            ..Default::default()
        }
    }

    /// A user message with one text part.
    ///
    /// ```
    /// use a2a_protocol::types::{Message, Role};
    ///
    /// let m = Message::user_text("hello");
    /// assert_eq!(m.role(), Role::User);
    /// let json = serde_json::to_value(&m).unwrap();
    /// assert_eq!(json["role"], "ROLE_USER");
    /// assert_eq!(json["parts"][0], serde_json::json!({ "text": "hello" }));
    /// assert!(json.get("taskId").is_none(), "empty fields are left out");
    /// ```
    pub fn user_text(text: impl Into<String>) -> Message {
        Message::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent_text(text: impl Into<String>) -> Message {
        Message::new(Role::Agent, vec![Part::text(text)])
    }

    /// Sets the task this message belongs to.
    pub fn with_task(mut self, task_id: impl Into<String>) -> Message {
        self.task_id = task_id.into();
        self
    }

    /// Sets the conversation context.
    pub fn with_context(mut self, context_id: impl Into<String>) -> Message {
        self.context_id = context_id.into();
        self
    }

    /// The text of all its text parts, joined with no separator.
    pub fn text(&self) -> String {
        parts_text(&self.parts)
    }
}

/// Concatenates the text of every text part in `parts`.
pub fn parts_text(parts: &[Part]) -> String {
    parts.iter().filter_map(Part::as_text).collect()
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part::of(Content::Text(text.into()))
    }

    /// A structured-data part holding a JSON object.
    pub fn data(data: Map<String, Value>) -> Part {
        Part::json(Value::Object(data))
    }

    /// A structured-data part holding any JSON value.
    pub fn json(data: Value) -> Part {
        Part::of(Content::Data(JsonValue(data)))
    }

    /// A file carried inline: its bytes and media type.
    pub fn raw(bytes: impl Into<Vec<u8>>, media_type: impl Into<String>) -> Part {
        Part {
            media_type: media_type.into(),
            ..Part::of(Content::Raw(bytes.into()))
        }
    }

    /// A file by reference: where to fetch it, and its media type (empty if unknown).
    pub fn url(url: impl Into<String>, media_type: impl Into<String>) -> Part {
        Part {
            media_type: media_type.into(),
            ..Part::of(Content::Url(url.into()))
        }
    }

    /// Names the file this part holds.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Part {
        self.filename = filename.into();
        self
    }

    fn of(content: Content) -> Part {
        Part {
            content: Some(content),
            ..Default::default()
        }
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            Some(Content::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// The JSON of a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            Some(Content::Data(d)) => Some(&d.0),
            _ => None,
        }
    }

    /// The JSON object of a data part that holds one.
    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        self.as_data().and_then(Value::as_object)
    }

    /// Whether the part is a file (inline or by reference).
    pub fn is_file(&self) -> bool {
        matches!(self.content, Some(Content::Raw(_) | Content::Url(_)))
    }

    /// The media type to match against input and output modes: the part's own when it
    /// declares one, else `text/plain` for text, `application/json` for data and
    /// `application/octet-stream` for a file.
    pub fn mode(&self) -> &str {
        if !self.media_type.is_empty() {
            return &self.media_type;
        }
        match self.content {
            Some(Content::Text(_)) => "text/plain",
            Some(Content::Data(_)) => "application/json",
            _ => "application/octet-stream",
        }
    }
}

/// Bytes written as base64 text, read as a protobuf JSON reader reads a `bytes` field:
/// standard or URL-safe base64, padded or not (v0.3's file `bytes`, say, which it calls
/// only "base64").
pub fn decode_base64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine as _;
    use base64::alphabet;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);
    if text.contains(['-', '_']) {
        URL_SAFE.decode(text)
    } else {
        STANDARD.decode(text)
    }
}

/// Whether `offered` satisfies `wanted`, with `*/*` and `type/*` wildcards on either side
/// and media-type parameters (`; charset=utf-8`) ignored.
pub fn media_type_matches(wanted: &str, offered: &str) -> bool {
    /// The type and subtype, parameters left off (a bare type's subtype is `*`).
    fn split(m: &str) -> (&str, &str) {
        let essence = m.split(';').next().unwrap_or("").trim();
        essence.split_once('/').unwrap_or((essence, "*"))
    }
    let same = |a: &str, b: &str| a == "*" || b == "*" || a.eq_ignore_ascii_case(b);
    let ((wt, ws), (ot, os)) = (split(wanted), split(offered));
    same(wt, ot) && same(ws, os)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_say_what_they_hold() {
        let text = Part::text("hi");
        assert_eq!((text.as_text(), text.mode()), (Some("hi"), "text/plain"));
        let data = Part::data(Map::from_iter([("a".to_owned(), Value::from(1))]));
        assert_eq!(data.as_object().unwrap()["a"], 1);
        assert_eq!(data.mode(), "application/json");
        let file = Part::raw(b"%PDF".to_vec(), "application/pdf").with_filename("a.pdf");
        assert!(file.is_file() && file.as_text().is_none());
        assert_eq!(file.mode(), "application/pdf");
        assert_eq!(
            Part::url("https://x/", "").mode(),
            "application/octet-stream"
        );
        let m = Message::new(Role::Agent, vec![Part::text("a"), file, Part::text("b")]);
        assert_eq!(m.text(), "ab");
        assert_eq!(m.role(), Role::Agent);
        assert_eq!(m.message_id.len(), 36, "a UUID");
    }

    #[test]
    fn media_types_match_with_wildcards_and_without_parameters() {
        assert!(media_type_matches("text/*", "text/plain; charset=utf-8"));
        assert!(media_type_matches("*/*", "image/png"));
        assert!(media_type_matches("application/JSON", "application/json"));
        assert!(!media_type_matches("text/plain", "application/json"));
    }
}

//! What a step produced, assembled from its artifact chunks (the spec's `append`
//! semantics), and its view in templates: `steps.<id>.state`, `.text`, `.data`,
//! `.artifacts`, `.items`, `.error`, `.agent`.

use serde_json::{Map, Value, json};

use super::types::{ArtifactChunk, Content, StepState};

/// Artifacts assembled in the order they first appeared.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outputs {
    pub artifacts: Vec<(String, Option<String>, Vec<Content>)>,
}

impl Outputs {
    /// Applies a chunk: `append` extends the artifact of the same id (creating it if
    /// new); otherwise the chunk replaces it.
    pub fn apply(&mut self, chunk: &ArtifactChunk) {
        match self
            .artifacts
            .iter_mut()
            .find(|(id, _, _)| *id == chunk.artifact_id)
        {
            Some((_, name, parts)) if chunk.append => {
                parts.extend(chunk.parts.iter().cloned());
                if name.is_none() {
                    name.clone_from(&chunk.name);
                }
            }
            Some(slot) => {
                *slot = (
                    chunk.artifact_id.clone(),
                    chunk.name.clone(),
                    chunk.parts.clone(),
                )
            }
            None => self.artifacts.push((
                chunk.artifact_id.clone(),
                chunk.name.clone(),
                chunk.parts.clone(),
            )),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty()
    }

    /// The text parts of all artifacts, concatenated.
    pub fn text(&self) -> String {
        self.parts()
            .filter_map(|p| match p {
                Content::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The data parts of all artifacts merged into one object (later keys win).
    pub fn data(&self) -> Map<String, Value> {
        let mut out = Map::new();
        for p in self.parts() {
            if let Content::Data(d) = p {
                out.extend(d.clone());
            }
        }
        out
    }

    fn parts(&self) -> impl Iterator<Item = &Content> {
        self.artifacts.iter().flat_map(|(_, _, parts)| parts.iter())
    }

    pub fn artifacts_json(&self) -> Value {
        Value::Array(
            self.artifacts
                .iter()
                .map(|(id, name, parts)| {
                    json!({ "artifactId": id, "name": name, "parts": parts.iter().map(content_json).collect::<Vec<_>>() })
                })
                .collect(),
        )
    }
}

pub fn content_json(c: &Content) -> Value {
    match c {
        Content::Text(t) => json!({ "kind": "text", "text": t }),
        Content::Data(d) => json!({ "kind": "data", "data": d }),
        Content::File {
            name,
            mime_type,
            uri,
            bytes,
        } => {
            json!({ "kind": "file", "name": name, "mimeType": mime_type, "uri": uri, "bytes": bytes })
        }
    }
}

/// A finished step (or fan-out item).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub state: StepState,
    pub outputs: Outputs,
    /// Set instead of the outputs' data by approval and input steps.
    pub data: Option<Map<String, Value>>,
    /// A fan-out step's items, in item order; or a looping step's passes, in order.
    pub items: Option<Vec<Record>>,
    /// `items` are a loop's passes: the step's own outputs are its last pass's, and
    /// templates see them as `passes`.
    pub passes: bool,
    pub error: Option<String>,
    pub agent: Option<String>,
    /// Attempts made (0 when no agent was called: skipped, approvals, ...).
    pub attempts: u32,
    /// When the step (or item) started and ended (RFC 3339); set by the run as it
    /// settles the unit, so they survive a restart.
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// Who answered the step's question, and how (approval and input steps).
    pub decisions: Vec<crate::access::Decision>,
    /// What it used (calls, and the tokens and cost its agent reported), kept so that a
    /// resumed run's account goes on from it (boxed: most steps' futures hold records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Box<crate::engine::Usage>>,
}

impl Record {
    pub fn new(state: StepState) -> Self {
        Self {
            state,
            outputs: Outputs::default(),
            data: None,
            items: None,
            error: None,
            agent: None,
            attempts: 0,
            started_at: None,
            ended_at: None,
            decisions: Vec::new(),
            usage: None,
            passes: false,
        }
    }

    pub fn text(&self) -> String {
        match &self.items {
            Some(items) if !self.passes => items
                .iter()
                .map(Record::text)
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => self.outputs.text(),
        }
    }

    /// The record as templates see it.
    pub fn to_json(&self) -> Value {
        let data = match (&self.items, &self.data) {
            (Some(items), _) if !self.passes => {
                Value::Array(items.iter().map(|i| i.data_json()).collect())
            }
            (_, Some(d)) => Value::Object(d.clone()),
            (_, None) => Value::Object(self.outputs.data()),
        };
        let mut v = json!({
            "state": self.state.as_str(),
            "text": self.text(),
            "data": data,
            "artifacts": self.outputs.artifacts_json(),
        });
        if let Some(items) = &self.items {
            let key = if self.passes { "passes" } else { "items" };
            v[key] = Value::Array(items.iter().map(Record::to_json).collect());
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        if let Some(a) = &self.agent {
            v["agent"] = json!(a);
        }
        v
    }

    fn data_json(&self) -> Value {
        Value::Object(self.data.clone().unwrap_or_else(|| self.outputs.data()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str, append: bool) -> ArtifactChunk {
        ArtifactChunk {
            artifact_id: id.into(),
            name: None,
            parts: vec![Content::Text(text.into())],
            append,
            last_chunk: false,
        }
    }

    #[test]
    fn chunks_assemble_in_order() {
        let mut o = Outputs::default();
        o.apply(&chunk("a", "Hello", false));
        o.apply(&chunk("b", "[b]", false));
        o.apply(&chunk("a", ", world", true));
        assert_eq!(o.text(), "Hello, world[b]");
        o.apply(&chunk("a", "replaced", false));
        assert_eq!(o.text(), "replaced[b]");
        let mut d = Map::new();
        d.insert("x".into(), json!(1));
        o.apply(&ArtifactChunk {
            artifact_id: "c".into(),
            name: None,
            parts: vec![Content::Data(d)],
            append: false,
            last_chunk: true,
        });
        let mut r = Record::new(StepState::Completed);
        r.outputs = o;
        let v = r.to_json();
        assert_eq!(v["data"], json!({ "x": 1 }));
        assert_eq!(v["state"], "completed");
    }
}

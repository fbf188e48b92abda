//! Which artifact parts have been forwarded, per artifact id: turns a live chunk into an
//! engine chunk, and a snapshot (from `tasks/resubscribe` or `tasks/get`) into only the
//! parts not yet forwarded — so a resumed stream loses nothing and repeats nothing.

use std::collections::HashMap;

use super::content;
use a2a::types::{Artifact, TaskArtifactUpdateEvent};
use orchestrator_core::engine::ArtifactChunk;

#[derive(Debug, Default)]
pub struct Ledger {
    forwarded: HashMap<String, usize>,
}

impl Ledger {
    /// A chunk received live, forwarded as it is.
    pub fn live(&mut self, e: &TaskArtifactUpdateEvent) -> ArtifactChunk {
        let append = e.append == Some(true);
        let n = self
            .forwarded
            .entry(e.artifact.artifact_id.as_str().to_owned())
            .or_default();
        *n = if append {
            *n + e.artifact.parts.len()
        } else {
            e.artifact.parts.len()
        };
        chunk(&e.artifact, 0, append, e.last_chunk == Some(true))
    }

    /// The chunks that bring what was forwarded up to `artifacts`.
    pub fn missing(&mut self, artifacts: &[Artifact]) -> Vec<ArtifactChunk> {
        let mut out = Vec::new();
        for a in artifacts {
            let have = self
                .forwarded
                .entry(a.artifact_id.as_str().to_owned())
                .or_default();
            let total = a.parts.len();
            if total > *have {
                out.push(chunk(a, *have, *have > 0, false));
            } else if total < *have {
                // The artifact was replaced by a shorter one: send it whole.
                out.push(chunk(a, 0, false, false));
            }
            *have = total;
        }
        out
    }
}

fn chunk(a: &Artifact, from: usize, append: bool, last_chunk: bool) -> ArtifactChunk {
    ArtifactChunk {
        artifact_id: a.artifact_id.as_str().to_owned(),
        name: a.name.clone(),
        parts: a.parts[from..].iter().map(content).collect(),
        append,
        last_chunk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::types::{ArtifactId, ArtifactUpdateKind, ContextId, Part, TaskId};
    use orchestrator_core::engine::Content;

    fn artifact(parts: &[&str]) -> Artifact {
        Artifact::new(
            ArtifactId::new("a"),
            parts.iter().map(|p| Part::text(*p)).collect(),
        )
    }

    #[test]
    fn a_snapshot_after_live_chunks_adds_only_the_missing_parts() {
        let mut l = Ledger::default();
        let live = TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: TaskId::new("t"),
            context_id: ContextId::new("c"),
            artifact: artifact(&["one"]),
            append: Some(false),
            last_chunk: Some(false),
            metadata: None,
        };
        l.live(&live);
        let missing = l.missing(&[artifact(&["one", " two", " three"])]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].append);
        assert_eq!(
            missing[0].parts,
            [Content::Text(" two".into()), Content::Text(" three".into())]
        );
        assert!(
            l.missing(&[artifact(&["one", " two", " three"])])
                .is_empty(),
            "nothing twice"
        );
    }
}

//! Which artifact parts have been forwarded, per artifact id: turns a live chunk into an
//! engine chunk, and a snapshot (from `tasks/resubscribe` or `tasks/get`) into only the
//! parts not yet forwarded — so a resumed stream loses nothing and repeats nothing.

use std::collections::HashMap;

use super::content;
use a2a::types::{Artifact, Part, TaskArtifactUpdateEvent};
use orchestrator_core::engine::{ArtifactChunk, Content};

#[derive(Debug, Default)]
pub struct Ledger {
    forwarded: HashMap<String, Kept>,
}

/// What was forwarded of one artifact, counted as a task that joins streamed text
/// keeps it (ours does; others keep each chunk a part): its parts, and the length of
/// the last one's text when it is plain text, which the next plain text joins. Counted
/// so, a snapshot read back either way is compared alike.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Kept {
    parts: usize,
    text: Option<usize>,
}

impl Kept {
    fn add(&mut self, part: &Part) {
        match (self.text, plain(part)) {
            (Some(n), Some(t)) => self.text = Some(n + t.len()),
            (_, t) => {
                self.parts += 1;
                self.text = t.map(str::len);
            }
        }
    }
}

/// The text of a part that joins plain text before it: text without metadata or a
/// file name, of no media type but plain text's.
fn plain(part: &Part) -> Option<&str> {
    let plain = part.metadata.is_none()
        && part.filename.is_empty()
        && matches!(part.media_type.as_str(), "" | "text/plain");
    part.as_text().filter(|_| plain)
}

impl Ledger {
    /// A chunk received live, forwarded as it is.
    pub fn live(&mut self, e: &TaskArtifactUpdateEvent) -> ArtifactChunk {
        let artifact = e.artifact();
        let kept = self
            .forwarded
            .entry(artifact.artifact_id.clone())
            .or_default();
        if !e.append {
            *kept = Kept::default();
        }
        for part in &artifact.parts {
            kept.add(part);
        }
        let parts = artifact.parts.iter().map(content).collect();
        chunk(artifact, parts, e.append, e.last_chunk)
    }

    /// The chunks that bring what was forwarded up to `artifacts`.
    pub fn missing(&mut self, artifacts: &[Artifact]) -> Vec<ArtifactChunk> {
        let mut out = Vec::new();
        for a in artifacts {
            let have = self.forwarded.entry(a.artifact_id.clone()).or_default();
            // The snapshot's parts with plain text joined, as `have` counts them.
            let mut joined: Vec<Content> = Vec::with_capacity(a.parts.len().min(64));
            let mut now = Kept::default();
            for part in &a.parts {
                match (now.text.is_some(), plain(part), joined.last_mut()) {
                    (true, Some(t), Some(Content::Text(last))) => last.push_str(t),
                    _ => joined.push(content(part)),
                }
                now.add(part);
            }
            if now == *have {
                continue;
            }
            // What follows what was forwarded: the rest of the text part it ended in,
            // and the parts after it; none when the artifact was replaced (shorter,
            // or not the same kind where it ended): then it is sent whole.
            let rest = match have.text {
                _ if have.parts == 0 => None,
                Some(n) => match joined.get(have.parts - 1) {
                    Some(Content::Text(t)) if t.len() >= n && t.is_char_boundary(n) => {
                        let mut rest = Vec::with_capacity(joined.len() + 1 - have.parts);
                        if t.len() > n {
                            rest.push(Content::Text(t[n..].to_owned()));
                        }
                        rest.extend(joined[have.parts..].iter().cloned());
                        Some(rest)
                    }
                    _ => None,
                },
                None => joined.get(have.parts..).map(<[Content]>::to_vec),
            };
            match rest {
                Some(rest) if rest.is_empty() => {}
                Some(rest) => out.push(chunk(a, rest, true, false)),
                None => out.push(chunk(a, joined, false, false)),
            }
            *have = now;
        }
        out
    }
}

fn chunk(a: &Artifact, parts: Vec<Content>, append: bool, last_chunk: bool) -> ArtifactChunk {
    ArtifactChunk {
        artifact_id: a.artifact_id.clone(),
        name: (!a.name.is_empty()).then(|| a.name.clone()),
        parts,
        append,
        last_chunk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestrator_core::engine::Content;

    fn artifact(parts: &[&str]) -> Artifact {
        Artifact::new("a", parts.iter().map(|p| Part::text(*p)).collect())
    }

    #[test]
    fn a_snapshot_after_live_chunks_adds_only_the_missing_parts() {
        let mut l = Ledger::default();
        let live = TaskArtifactUpdateEvent::new("t", "c", artifact(&["one"]));
        l.live(&live);
        let missing = l.missing(&[artifact(&["one", " two", " three"])]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].append);
        assert_eq!(
            missing[0].parts,
            [Content::Text(" two three".into())],
            "plain text joined, as a task keeps it"
        );
        assert!(
            l.missing(&[artifact(&["one", " two", " three"])])
                .is_empty(),
            "nothing twice"
        );
    }

    /// An agent that keeps streamed text as one part (ours does) gives a snapshot of
    /// fewer parts than the chunks forwarded: only the text not yet forwarded follows.
    #[test]
    fn a_joined_snapshot_adds_only_the_text_not_yet_forwarded() {
        let live = |text: &str, append: bool| TaskArtifactUpdateEvent {
            append,
            ..TaskArtifactUpdateEvent::new("t", "c", artifact(&[text]))
        };
        let mut l = Ledger::default();
        l.live(&live("one", false));
        l.live(&live(" two", true));
        let missing = l.missing(&[artifact(&["one two three"])]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].append);
        assert_eq!(missing[0].parts, [Content::Text(" three".into())]);
        assert!(l.missing(&[artifact(&["one two three"])]).is_empty());
        // The same snapshot kept chunk by chunk by another agent: the same.
        let mut l = Ledger::default();
        l.live(&live("one", false));
        l.live(&live(" two", true));
        let missing = l.missing(&[artifact(&["one", " two", " three"])]);
        assert_eq!(missing[0].parts, [Content::Text(" three".into())]);
        // A shorter text: the artifact was replaced, and is sent whole.
        let missing = l.missing(&[artifact(&["new"])]);
        assert!(!missing[0].append);
        assert_eq!(missing[0].parts, [Content::Text("new".into())]);
    }
}

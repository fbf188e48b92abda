//! Bounds on what agents send a run: bytes of artifacts per step attempt and per run,
//! artifacts per step attempt, parts per artifact, updates per step attempt. An agent is a peer, not a
//! part of the orchestrator; one that streams without end (by mistake or on purpose)
//! must not take the orchestrator's memory, its store or the other runs with it.
//!
//! A step attempt past a step bound fails (and is retried as its policy says), its
//! downstream task canceled and nothing past the bound relayed; a step past the run's
//! bound fails for good, since another attempt would only add to it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::types::{ArtifactChunk, Content};

/// The bounds; every run of an engine has the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Bytes of artifact parts one step attempt may receive.
    pub step_bytes: u64,
    /// Bytes of artifact parts one run may receive, all steps and attempts together.
    pub run_bytes: u64,
    /// Distinct artifacts one step attempt may receive.
    pub step_artifacts: usize,
    /// Updates (status changes, artifact chunks) one step attempt may receive.
    pub step_events: usize,
    /// Parts one artifact may have, counted as a task keeps them: plain text streamed
    /// after plain text joins it, any other part is one more. The protocol's readers
    /// take no more (`a2a::types::MAX_PARTS`), so it is not a setting.
    pub artifact_parts: usize,
}

impl Default for OutputLimits {
    /// Far above what a conversational agent sends, far below what would strain a
    /// small machine: 4 MiB a step attempt (twice Temporal's 2 MiB payload limit; large
    /// files travel better as URIs), 16 MiB a run, 1,000 artifacts and 100,000 updates
    /// a step attempt.
    fn default() -> Self {
        OutputLimits {
            step_bytes: 4 * 1024 * 1024,
            run_bytes: 16 * 1024 * 1024,
            step_artifacts: 1_000,
            step_events: 100_000,
            artifact_parts: 10_000,
        }
    }
}

/// Which bound an attempt passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    StepBytes(u64),
    RunBytes(u64),
    StepArtifacts(usize),
    StepEvents(usize),
    ArtifactParts(usize),
}

impl Exceeded {
    /// Whether another attempt may stay within the bounds (a run's bound only grows).
    pub fn retryable(self) -> bool {
        !matches!(self, Exceeded::RunBytes(_))
    }
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::StepBytes(n) => write!(
                f,
                "more than {} of artifacts in one attempt (the limit `step_output_bytes`)",
                bytes(*n)
            ),
            Exceeded::RunBytes(n) => write!(
                f,
                "more than {} of artifacts in this run, its steps together (the limit `run_output_bytes`)",
                bytes(*n)
            ),
            Exceeded::StepArtifacts(n) => write!(
                f,
                "more than {n} artifacts in one attempt (the limit `step_artifacts`)"
            ),
            Exceeded::StepEvents(n) => write!(
                f,
                "more than {n} updates in one attempt (the limit `step_events`)"
            ),
            Exceeded::ArtifactParts(n) => write!(
                f,
                "more than {n} parts in one artifact (plain text streamed into it is one part; data and files are a part each)"
            ),
        }
    }
}

/// `n` bytes as people read them.
fn bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

/// A run's account: its bounds and the bytes its agents sent so far, and what they
/// used against the workflow's budget. Shared by its units.
#[derive(Debug)]
pub struct OutputBudget {
    pub limits: OutputLimits,
    run_bytes: AtomicU64,
    pub spend: super::usage::Spend,
    /// When the run's deadline passes, once it is known.
    pub deadline: std::sync::OnceLock<tokio::time::Instant>,
}

impl OutputBudget {
    pub fn new(limits: OutputLimits, budget: Option<crate::workflow::Budget>) -> OutputBudget {
        OutputBudget {
            limits,
            run_bytes: AtomicU64::new(0),
            spend: super::usage::Spend::new(budget),
            deadline: std::sync::OnceLock::new(),
        }
    }

    /// Its costs named in `currency` (when the prices name one).
    pub fn in_currency(mut self, currency: Option<std::sync::Arc<str>>) -> OutputBudget {
        self.spend.currency = currency;
        self
    }
}

/// One attempt's tally, checked at each update it receives.
#[derive(Debug, Default)]
pub struct Tally {
    bytes: u64,
    /// Per artifact: its parts as a task keeps them, and whether the last is plain
    /// text (which the next plain text joins).
    artifacts: HashMap<String, (usize, bool)>,
    events: usize,
    /// What the attempt's downstream task reported it used, last.
    pub reported: super::usage::Usage,
}

impl Tally {
    /// Takes what the attempt's task reports it used so far; what it adds.
    pub fn report(&mut self, now: super::usage::Usage) -> super::usage::Usage {
        let added = self.reported.since(&now);
        self.reported = now;
        added
    }

    /// Counts one update (`chunk` when it is an artifact's); the bound it passes, if
    /// any. What passes a bound is not counted in the run's bytes: it is not kept.
    pub fn take(
        &mut self,
        budget: &OutputBudget,
        chunk: Option<&ArtifactChunk>,
    ) -> Result<(), Exceeded> {
        let limits = &budget.limits;
        self.events += 1;
        if self.events > limits.step_events {
            return Err(Exceeded::StepEvents(limits.step_events));
        }
        let Some(chunk) = chunk else { return Ok(()) };
        if !self.artifacts.contains_key(&chunk.artifact_id)
            && self.artifacts.len() >= limits.step_artifacts
        {
            return Err(Exceeded::StepArtifacts(limits.step_artifacts));
        }
        let (mut parts, mut text) = match self.artifacts.get(&chunk.artifact_id) {
            Some(&kept) if chunk.append => kept,
            _ => (0, false),
        };
        for part in &chunk.parts {
            let plain = matches!(part, Content::Text(_));
            if !(plain && text) {
                parts += 1;
            }
            text = plain;
        }
        if parts > limits.artifact_parts {
            return Err(Exceeded::ArtifactParts(limits.artifact_parts));
        }
        let size: u64 = chunk.parts.iter().map(size_of_content).sum();
        if self.bytes + size > limits.step_bytes {
            return Err(Exceeded::StepBytes(limits.step_bytes));
        }
        let before = budget.run_bytes.fetch_add(size, Ordering::Relaxed);
        if before + size > limits.run_bytes {
            budget.run_bytes.fetch_sub(size, Ordering::Relaxed);
            return Err(Exceeded::RunBytes(limits.run_bytes));
        }
        self.bytes += size;
        self.artifacts
            .insert(chunk.artifact_id.clone(), (parts, text));
        Ok(())
    }
}

/// About the bytes a part takes: its text, its file's inline bytes and URI, its data
/// as JSON would spell it (without escapes).
fn size_of_content(c: &Content) -> u64 {
    match c {
        Content::Text(t) => t.len() as u64,
        Content::Data(d) => d
            .iter()
            .map(|(k, v)| k.len() as u64 + 4 + size_of_value(v))
            .sum(),
        Content::File {
            name,
            mime_type,
            uri,
            bytes,
        } => [name, mime_type, uri, bytes]
            .iter()
            .map(|s| s.as_ref().map_or(0, |s| s.len() as u64))
            .sum(),
    }
}

fn size_of_value(v: &Value) -> u64 {
    match v {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() as u64 + 2,
        Value::Array(a) => 2 + a.iter().map(|v| 1 + size_of_value(v)).sum::<u64>(),
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, v)| k.len() as u64 + 4 + size_of_value(v))
                .sum::<u64>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> ArtifactChunk {
        ArtifactChunk {
            artifact_id: id.into(),
            name: None,
            parts: vec![Content::Text(text.into())],
            append: true,
            last_chunk: false,
        }
    }

    #[test]
    fn each_bound_is_named_when_passed() {
        let budget = OutputBudget::new(
            OutputLimits {
                step_bytes: 10,
                run_bytes: 15,
                step_artifacts: 2,
                step_events: 5,
                artifact_parts: 3,
            },
            None,
        );
        let mut t = Tally::default();
        assert_eq!(t.take(&budget, Some(&chunk("a", "12345"))), Ok(()));
        assert_eq!(t.take(&budget, Some(&chunk("a", "12345"))), Ok(()));
        let over = t.take(&budget, Some(&chunk("a", "1"))).unwrap_err();
        assert_eq!(over, Exceeded::StepBytes(10));
        assert!(over.to_string().contains("step_output_bytes"), "{over}");
        assert!(over.retryable());
        // A second attempt: the run has 10 of its 15 bytes left... 5.
        let mut t = Tally::default();
        assert_eq!(t.take(&budget, Some(&chunk("b", "12345"))), Ok(()));
        let over = t.take(&budget, Some(&chunk("c", "1"))).unwrap_err();
        assert_eq!(over, Exceeded::RunBytes(15));
        assert!(!over.retryable());
        let mut t = Tally::default();
        assert_eq!(t.take(&budget, Some(&chunk("x", ""))), Ok(()));
        assert_eq!(t.take(&budget, Some(&chunk("y", ""))), Ok(()));
        assert_eq!(
            t.take(&budget, Some(&chunk("z", ""))),
            Err(Exceeded::StepArtifacts(2))
        );
        for _ in 0..2 {
            assert_eq!(t.take(&budget, None), Ok(()));
        }
        assert_eq!(t.take(&budget, None), Err(Exceeded::StepEvents(5)));
    }

    #[test]
    fn streamed_text_is_one_part_and_data_a_part_each() {
        let budget = OutputBudget::new(
            OutputLimits {
                artifact_parts: 3,
                ..OutputLimits::default()
            },
            None,
        );
        let mut t = Tally::default();
        for _ in 0..100 {
            assert_eq!(t.take(&budget, Some(&chunk("a", "word "))), Ok(()));
        }
        let mut data = chunk("a", "");
        data.parts = vec![Content::Data(Default::default())];
        assert_eq!(t.take(&budget, Some(&data)), Ok(()));
        assert_eq!(
            t.take(&budget, Some(&chunk("a", "more"))),
            Ok(()),
            "text, part 3"
        );
        let over = t.take(&budget, Some(&data)).unwrap_err();
        assert_eq!(over, Exceeded::ArtifactParts(3));
        assert!(over.retryable());
        // A chunk that replaces the artifact starts it again.
        data.append = false;
        assert_eq!(t.take(&budget, Some(&data)), Ok(()));
    }
}

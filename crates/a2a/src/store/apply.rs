//! What an event does to a task's snapshot: statuses replace the status (the one before
//! moving into the history), and the one that ends the task (terminal) merges its
//! metadata into the task's, key by key — how an agent leaves its own summary on the task
//! for `GetTask` and `ListTasks`, as the official SDKs' task managers merge every
//! update's (the updates before the end are left out here: they describe a moment, and
//! a snapshot that kept a copy of each would cost every live task memory; an agent shows
//! a live task's summary through `AgentExecutor::describe`); artifact chunks append or
//! replace by `append` and `lastChunk`, a streamed text joining the text part it
//! follows (so an artifact streamed a word at a time is one part, however many chunks
//! brought it, and stays within [`MAX_PARTS`]). The task actor moves tasks on with it,
//! and a store that keeps snapshots less often than every event replays the events
//! after one with it.

use crate::types::{
    Content, MAX_PARTS, Part, StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
    Timestamp,
};

/// Applies one event, as logged, to a task's snapshot: how the actor moves a task on,
/// and how a store that keeps a snapshot less often than every event brings it up to
/// date from the events logged after it.
pub fn apply_event(task: &mut Task, event: &StreamEvent) {
    match event {
        StreamEvent::Task(t) => {
            let mut t = t.clone();
            if t.history.is_empty() {
                t.history = std::mem::take(&mut task.history);
            }
            *task = t;
        }
        StreamEvent::Message(m) => task.history.push(m.clone()),
        StreamEvent::StatusUpdate(e) => apply_status(task, e),
        StreamEvent::ArtifactUpdate(e) => apply_artifact(task, e),
    }
    keep_history(task);
}

/// Messages a task's snapshot keeps; older ones are dropped from it (each stays in the
/// task's event log). Bounds what a long conversation costs every read and write.
pub const MAX_HISTORY: usize = 1_000;

/// Drops the oldest messages past [`MAX_HISTORY`].
pub(crate) fn keep_history(task: &mut Task) {
    if task.history.len() > MAX_HISTORY {
        let extra = task.history.len() - MAX_HISTORY;
        task.history.drain(..extra);
    }
}

/// Stamps a status that has no time with the current one.
#[cfg_attr(not(feature = "server"), allow(dead_code))] // the task actor's
pub(crate) fn normalize_status(e: &mut TaskStatusUpdateEvent) {
    let status = e.status.get_or_insert_with(Default::default);
    if status.timestamp.is_none() {
        status.timestamp = Some(Timestamp::now());
    }
}

/// The previous status message moves into the history; the new status replaces it; a
/// terminal update's metadata keys replace the task's keys of the same name.
fn apply_status(task: &mut Task, e: &TaskStatusUpdateEvent) {
    if let Some(previous) = task.status.as_mut().and_then(|s| s.message.take()) {
        task.history.push(previous);
    }
    task.status = Some(e.status().clone());
    if let Some(meta) = e
        .metadata
        .as_ref()
        .filter(|_| e.status().state().is_terminal())
    {
        match &mut task.metadata {
            Some(into) if !into.keys().all(|k| meta.contains_key(k)) => {
                for (k, v) in meta {
                    into.insert(k.clone(), v.clone());
                }
            }
            // The update replaces every key the task has: the task holds the update's
            // map itself (a run's whole detail, say), not a copy.
            whole => *whole = Some(meta.clone()),
        }
    }
}

/// `append: true` extends the artifact of the same id (creating it if it is new);
/// otherwise the artifact replaces any artifact of the same id.
fn apply_artifact(task: &mut Task, e: &TaskArtifactUpdateEvent) {
    let incoming = e.artifact();
    let existing = task
        .artifacts
        .iter_mut()
        .find(|a| a.artifact_id == incoming.artifact_id);
    match existing {
        Some(a) if e.append => {
            append_parts(&mut a.parts, &incoming.parts);
            if a.name.is_empty() {
                a.name.clone_from(&incoming.name);
            }
            if a.description.is_empty() {
                a.description.clone_from(&incoming.description);
            }
            if let Some(meta) = &incoming.metadata {
                a.metadata
                    .get_or_insert_with(Default::default)
                    .extend(meta.clone());
            }
        }
        Some(a) => *a = incoming.clone(),
        None => task.artifacts.push(incoming.clone()),
    }
}

/// Whether a part is plain text: text with no metadata or file name of its own.
fn plain_text(p: &Part) -> bool {
    matches!(p.content, Some(Content::Text(_))) && p.metadata.is_none() && p.filename.is_empty()
}

/// Whether a part joins a text part before it: plain text after plain text of the same
/// media type. Joined, the text a reader assembles is the same.
fn joins(before: Option<&Part>, part: &Part) -> bool {
    before.is_some_and(|b| plain_text(b) && plain_text(part) && b.media_type == part.media_type)
}

/// Appends `incoming` to `parts`, each plain text part joining the plain text part
/// it follows.
fn append_parts(parts: &mut Vec<Part>, incoming: &[Part]) {
    for part in incoming {
        if joins(parts.last(), part)
            && let (Some(Some(Content::Text(last))), Some(Content::Text(next))) =
                (parts.last_mut().map(|p| &mut p.content), &part.content)
        {
            last.push_str(next);
        } else {
            parts.push(part.clone());
        }
    }
}

/// Why an event cannot be taken by a task: what it would bring the task past, as a
/// reader could not read it back ([`MAX_PARTS`] parts in one message or artifact).
/// Checked before an event is applied and stored, so that what is stored can always
/// be read.
#[cfg_attr(not(feature = "server"), allow(dead_code))] // the task actor's
pub(crate) fn past_bounds(task: Option<&Task>, event: &StreamEvent) -> Option<String> {
    let too_many = |what: &str, n: usize| {
        (n > MAX_PARTS).then(|| format!("{what} would have {n} parts, more than {MAX_PARTS}"))
    };
    match event {
        StreamEvent::Task(t) => t
            .artifacts
            .iter()
            .find_map(|a| too_many(&format!("artifact {}", a.artifact_id), a.parts.len()))
            .or_else(|| {
                t.history
                    .iter()
                    .chain(t.status().message.as_ref())
                    .find_map(|m| too_many("a message", m.parts.len()))
            }),
        StreamEvent::Message(m) => too_many("the message", m.parts.len()),
        StreamEvent::StatusUpdate(e) => e
            .status()
            .message
            .as_ref()
            .and_then(|m| too_many("the status message", m.parts.len())),
        StreamEvent::ArtifactUpdate(e) => {
            let incoming = e.artifact();
            let existing = task
                .and_then(|t| {
                    t.artifacts
                        .iter()
                        .find(|a| a.artifact_id == incoming.artifact_id)
                })
                .filter(|_| e.append);
            let n = match existing {
                None => incoming.parts.len(),
                Some(a) => {
                    let mut last = a.parts.last();
                    let mut n = a.parts.len();
                    for part in &incoming.parts {
                        if !joins(last, part) {
                            n += 1;
                        }
                        last = Some(part);
                    }
                    n
                }
            };
            too_many(&format!("artifact {}", incoming.artifact_id), n)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::types::{Artifact, Message, TaskState, TaskStatus};

    /// An artifact chunk of task `t` in context `c`.
    pub(crate) fn chunk(id: &str, text: &str, append: bool) -> TaskArtifactUpdateEvent {
        TaskArtifactUpdateEvent {
            append,
            ..TaskArtifactUpdateEvent::new("t", "c", Artifact::new(id, vec![Part::text(text)]))
        }
    }

    fn working() -> Task {
        Task::new("t", "c", TaskStatus::new(TaskState::Working))
    }

    #[test]
    fn append_extends_and_replace_replaces() {
        let mut task = working();
        apply_artifact(&mut task, &chunk("a", "one ", true));
        apply_artifact(&mut task, &chunk("a", "two", true));
        apply_artifact(&mut task, &chunk("b", "x", false));
        assert_eq!(task.artifacts.len(), 2);
        assert_eq!(task.artifacts[0].text(), "one two");
        apply_artifact(&mut task, &chunk("a", "new", false));
        assert_eq!(task.artifacts[0].text(), "new");
    }

    #[test]
    fn streamed_text_joins_one_part_and_other_parts_stay_apart() {
        let mut task = working();
        apply_artifact(&mut task, &chunk("a", "one", false));
        for _ in 0..MAX_PARTS + 5 {
            let e = chunk("a", " more", true);
            assert_eq!(
                past_bounds(Some(&task), &StreamEvent::ArtifactUpdate(e.clone())),
                None
            );
            apply_artifact(&mut task, &e);
        }
        assert_eq!(task.artifacts[0].parts.len(), 1, "one text part");
        assert!(
            task.artifacts[0].parts[0]
                .as_text()
                .unwrap()
                .ends_with(" more more")
        );
        // Data parts, and text with metadata of its own, stay parts of their own, and
        // are refused past the bound.
        let mut data = chunk("a", "", true);
        data.artifact.as_mut().unwrap().parts = vec![Part::data(Default::default())];
        for _ in 1..MAX_PARTS {
            apply_artifact(&mut task, &data);
        }
        assert_eq!(task.artifacts[0].parts.len(), MAX_PARTS);
        let refused = past_bounds(Some(&task), &StreamEvent::ArtifactUpdate(data.clone()));
        assert!(
            refused
                .as_deref()
                .is_some_and(|r| r.contains("10001 parts")),
            "{refused:?}"
        );
        // Replacing it is fine.
        data.append = false;
        assert_eq!(
            past_bounds(Some(&task), &StreamEvent::ArtifactUpdate(data)),
            None
        );
        let mut marked = chunk("b", "x", true);
        marked.artifact.as_mut().unwrap().parts[0].metadata = Some(Default::default());
        apply_artifact(&mut task, &marked);
        apply_artifact(&mut task, &marked);
        assert_eq!(
            task.artifacts[1].parts.len(),
            2,
            "text with metadata stays apart"
        );
        let mut markdown = chunk("c", "# a", true);
        apply_artifact(&mut task, &markdown);
        markdown.artifact.as_mut().unwrap().parts[0].media_type = "text/markdown".into();
        apply_artifact(&mut task, &markdown);
        apply_artifact(&mut task, &markdown);
        assert_eq!(
            task.artifacts[2].parts.len(),
            2,
            "text of another media type stays apart; of the same, joins"
        );
    }

    #[test]
    fn status_moves_previous_message_to_history() {
        let mut task = Task::new(
            "t",
            "c",
            TaskStatus::new(TaskState::Working).with_message(Message::agent_text("first")),
        );
        let mut e = TaskStatusUpdateEvent::new(
            "t",
            "c",
            TaskStatus {
                timestamp: None,
                ..TaskStatus::new(TaskState::InputRequired)
                    .with_message(Message::agent_text("which?"))
            },
        );
        normalize_status(&mut e);
        assert!(e.status().timestamp.is_some());
        apply_status(&mut task, &e);
        assert_eq!(task.history.len(), 1);
        assert_eq!(task.history[0].text(), "first");
        assert_eq!(task.state(), TaskState::InputRequired);
        assert_eq!(
            task.metadata, None,
            "an update without metadata leaves none"
        );
        // Terminal updates, each leaving its metadata on the task.
        let with = |meta: serde_json::Value| TaskStatusUpdateEvent {
            metadata: serde_json::from_value(meta).unwrap(),
            status: Some(TaskStatus::new(TaskState::Completed)),
            ..e.clone()
        };
        let first = with(serde_json::json!({"run": {"n": 1}, "a": 1}));
        apply_status(&mut task, &first);
        let (held, given) = (task.metadata.as_ref(), first.metadata.as_ref());
        assert!(
            held.unwrap().shares(given.unwrap()),
            "a task with no keys of its own takes the update's map, not a copy"
        );
        let second = with(serde_json::json!({"run": {"n": 2}}));
        apply_status(&mut task, &second);
        let (held, given) = (task.metadata.as_ref(), second.metadata.as_ref());
        assert!(!held.unwrap().shares(given.unwrap()), "merged, not taken");
        assert_eq!(
            serde_json::to_value(&first.metadata).unwrap(),
            serde_json::json!({"run": {"n": 1}, "a": 1}),
            "a change to the task's map leaves the update's as it was"
        );
        assert_eq!(
            serde_json::to_value(&task.metadata).unwrap(),
            serde_json::json!({"run": {"n": 2}, "a": 1}),
            "keys replace keys; the others stay"
        );
        for state in [TaskState::Working, TaskState::InputRequired] {
            let mut progress = with(serde_json::json!({"run": {"n": 3}, "b": 2}));
            progress.status.as_mut().unwrap().set_state(state);
            normalize_status(&mut progress);
            apply_status(&mut task, &progress);
            assert_eq!(
                serde_json::to_value(&task.metadata).unwrap(),
                serde_json::json!({"run": {"n": 2}, "a": 1}),
                "a {state:?} update's metadata stays with the update"
            );
        }
    }

    #[test]
    fn history_keeps_the_latest_messages_only() {
        let mut task = working();
        for i in 0..MAX_HISTORY + 100 {
            let m = Message::agent_text(format!("m{i}"));
            apply_event(&mut task, &StreamEvent::Message(m));
        }
        assert_eq!(task.history.len(), MAX_HISTORY);
        assert_eq!(task.history[0].text(), "m100");
        assert_eq!(
            task.history.last().unwrap().text(),
            format!("m{}", MAX_HISTORY + 99)
        );
    }
}

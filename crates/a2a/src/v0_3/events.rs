//! Streaming events (spec §7.2) and the union results of `message/send` and
//! `message/stream`.

use serde::{Deserialize, Deserializer, Serialize, de::Error as _};

use super::{
    Artifact, ArtifactUpdateKind, ContextId, Message, Metadata, StatusUpdateKind, Task, TaskId,
    TaskStatus,
};

/// A change of a task's status (`"kind": "status-update"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Always `status-update`.
    pub kind: StatusUpdateKind,
    /// The task.
    pub task_id: TaskId,
    /// Its context.
    pub context_id: ContextId,
    /// The new status.
    pub status: TaskStatus,
    /// `final` on the wire: the last event of this stream.
    #[serde(rename = "final")]
    pub is_final: bool,
    /// The event's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new artifact or a chunk of one (`"kind": "artifact-update"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Always `artifact-update`.
    pub kind: ArtifactUpdateKind,
    /// The task.
    pub task_id: TaskId,
    /// Its context.
    pub context_id: ContextId,
    /// The artifact, or the chunk of it this event adds.
    pub artifact: Artifact,
    /// When true, these parts extend the artifact of the same id already sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// When true, this is the artifact's last chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// The event's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// One event of a `message/stream` or `tasks/resubscribe` stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StreamEvent {
    /// The task as a whole.
    Task(Task),
    /// A message (the agent answered without a task).
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact, or a chunk of one.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// Reads the `kind` member of a JSON object, for dispatching a union.
fn kind_of<E: serde::de::Error>(value: &serde_json::Value) -> Result<&str, E> {
    match value.get("kind") {
        Some(serde_json::Value::String(k)) => Ok(k.as_str()),
        Some(_) => Err(E::custom("`kind` must be a string")),
        None => Err(E::missing_field("kind")),
    }
}

fn from_value<T: serde::de::DeserializeOwned, E: serde::de::Error>(
    value: serde_json::Value,
) -> Result<T, E> {
    serde_json::from_value(value).map_err(E::custom)
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        match kind_of::<D::Error>(&value)? {
            "task" => from_value(value).map(StreamEvent::Task),
            "message" => from_value(value).map(StreamEvent::Message),
            "status-update" => from_value(value).map(StreamEvent::StatusUpdate),
            "artifact-update" => from_value(value).map(StreamEvent::ArtifactUpdate),
            other => Err(D::Error::unknown_variant(
                other,
                &["task", "message", "status-update", "artifact-update"],
            )),
        }
    }
}

/// The result of `message/send`: the task the message created or continued, or a
/// direct reply message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
// The wire's own shape, returned once per call and moved, never stored in bulk: a box
// would only cost every caller an indirection.
#[allow(clippy::large_enum_variant)]
pub enum SendMessageResult {
    /// The task.
    Task(Task),
    /// A message, when the agent answered without a task.
    Message(Message),
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        match kind_of::<D::Error>(&value)? {
            "task" => from_value(value).map(SendMessageResult::Task),
            "message" => from_value(value).map(SendMessageResult::Message),
            other => Err(D::Error::unknown_variant(other, &["task", "message"])),
        }
    }
}

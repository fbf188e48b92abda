//! Tasks, their lifecycle states and their artifacts (spec §6.1–§6.3, §6.7).

use serde::{Deserialize, Serialize};

use super::{ArtifactId, ContextId, Message, Metadata, Part, TaskId, TaskKind};

/// The nine states of a task's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// Received, not yet worked on.
    Submitted,
    /// Being worked on.
    Working,
    /// Waiting for the client's answer.
    InputRequired,
    /// Finished successfully.
    Completed,
    /// Canceled by the client.
    Canceled,
    /// Failed.
    Failed,
    /// Refused by the agent.
    Rejected,
    /// Waiting for the client to authenticate.
    AuthRequired,
    /// A state this crate does not know.
    Unknown,
}

impl TaskState {
    /// The state's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Canceled => "canceled",
            TaskState::Failed => "failed",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
            TaskState::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's current state, with an optional agent message and an ISO 8601 timestamp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message that comes with it (a question, a reason). Boxed: most statuses have
    /// none, and a status (in every task and status event) is moved often.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Box<Message>>,
    /// When the status was set (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status in `state`, stamped with the current time.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(now_rfc3339()),
        }
    }
}

/// The current UTC time as an RFC 3339 / ISO 8601 string (nanoseconds, their trailing
/// zeros left off).
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// A stateful unit of work (`"kind": "task"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Always `task`.
    pub kind: TaskKind,
    /// The task's id, chosen by the agent.
    pub id: TaskId,
    /// The context it belongs to.
    pub context_id: ContextId,
    /// Its current status.
    pub status: TaskStatus,
    /// The messages exchanged, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// What it produced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Task {
    /// A new task in `status`, with no history or artifacts.
    pub fn new(id: TaskId, context_id: ContextId, status: TaskStatus) -> Self {
        Self {
            kind: TaskKind,
            id,
            context_id,
            status,
            history: Vec::new(),
            artifacts: Vec::new(),
            metadata: None,
        }
    }
}

/// An output of a task (spec §6.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// The artifact's id, unique within its task.
    pub artifact_id: ArtifactId,
    /// Its content.
    #[serde(deserialize_with = "super::message::bounded_parts")]
    pub parts: Vec<Part>,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The extensions it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Artifact {
    /// An artifact with the given id and parts.
    pub fn new(artifact_id: ArtifactId, parts: Vec<Part>) -> Self {
        Self {
            artifact_id,
            parts,
            name: None,
            description: None,
            extensions: None,
            metadata: None,
        }
    }
}

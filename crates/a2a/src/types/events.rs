//! What a task's stream carries (spec §4.2): a [`StreamEvent`] is the proto's
//! `StreamResponse` payload (a task, a message, a status or an artifact update), and a
//! [`SendMessageResult`] the payload of a `SendMessageResponse` (a task or a message).
//! Each serializes as the response that holds it (`{"statusUpdate": {...}}`), the
//! form a task's log is stored in.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::proto::pb::{
    Artifact, Message, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, send_message_response, stream_response,
};

/// One event of a task's stream: the payload of a `StreamResponse`.
pub type StreamEvent = stream_response::Payload;

/// The answer to `SendMessage`: the payload of a `SendMessageResponse`.
pub type SendMessageResult = send_message_response::Payload;

/// The artifact of an update that has none (a malformed one): no id, no parts.
static NO_ARTIFACT: Artifact = Artifact {
    artifact_id: String::new(),
    name: String::new(),
    description: String::new(),
    parts: Vec::new(),
    metadata: None,
    extensions: Vec::new(),
};

impl StreamEvent {
    /// What the event is, as the member of `StreamResponse` that holds it.
    pub fn kind(&self) -> &'static str {
        match self {
            StreamEvent::Task(_) => "task",
            StreamEvent::Message(_) => "message",
            StreamEvent::StatusUpdate(_) => "statusUpdate",
            StreamEvent::ArtifactUpdate(_) => "artifactUpdate",
        }
    }

    /// The task the event is about (a message's, which may be empty).
    pub fn task_id(&self) -> &str {
        match self {
            StreamEvent::Task(t) => &t.id,
            StreamEvent::Message(m) => &m.task_id,
            StreamEvent::StatusUpdate(e) => &e.task_id,
            StreamEvent::ArtifactUpdate(e) => &e.task_id,
        }
    }

    /// The context the event belongs to (a message's, which may be empty).
    pub fn context_id(&self) -> &str {
        match self {
            StreamEvent::Task(t) => &t.context_id,
            StreamEvent::Message(m) => &m.context_id,
            StreamEvent::StatusUpdate(e) => &e.context_id,
            StreamEvent::ArtifactUpdate(e) => &e.context_id,
        }
    }

    /// The protobuf bytes of the `StreamResponse` that holds it (a oneof's fields are
    /// the message's own), without copying it into one.
    pub fn response_bytes(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.encoded_len());
        self.encode(&mut buf);
        buf
    }

    /// The state the event leaves its task in, if it says one (a task or a status).
    pub fn state(&self) -> Option<TaskState> {
        match self {
            StreamEvent::Task(t) => Some(t.state()),
            StreamEvent::StatusUpdate(e) => Some(e.status().state()),
            _ => None,
        }
    }
}

impl TaskStatusUpdateEvent {
    /// `task_id` (in `context_id`) moved to `status`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
    ) -> TaskStatusUpdateEvent {
        TaskStatusUpdateEvent {
            task_id: task_id.into(),
            context_id: context_id.into(),
            status: Some(status),
            metadata: None,
        }
    }

    /// Its status (`Unspecified` with nothing else, for an update sent without one).
    pub fn status(&self) -> &TaskStatus {
        self.status.as_ref().unwrap_or(super::task::no_status())
    }
}

impl TaskArtifactUpdateEvent {
    /// `task_id` (in `context_id`) produced `artifact`, whole.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
    ) -> TaskArtifactUpdateEvent {
        TaskArtifactUpdateEvent {
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact: Some(artifact),
            append: false,
            last_chunk: false,
            metadata: None,
        }
    }

    /// Its artifact (one with no id or parts, for an update sent without one).
    pub fn artifact(&self) -> &Artifact {
        self.artifact.as_ref().unwrap_or(&NO_ARTIFACT)
    }
}

impl From<Task> for StreamEvent {
    fn from(t: Task) -> Self {
        StreamEvent::Task(t)
    }
}

impl From<Message> for StreamEvent {
    fn from(m: Message) -> Self {
        StreamEvent::Message(m)
    }
}

impl From<TaskStatusUpdateEvent> for StreamEvent {
    fn from(e: TaskStatusUpdateEvent) -> Self {
        StreamEvent::StatusUpdate(e)
    }
}

impl From<TaskArtifactUpdateEvent> for StreamEvent {
    fn from(e: TaskArtifactUpdateEvent) -> Self {
        StreamEvent::ArtifactUpdate(e)
    }
}

impl From<StreamEvent> for StreamResponse {
    fn from(e: StreamEvent) -> Self {
        StreamResponse { payload: Some(e) }
    }
}

impl From<Task> for SendMessageResult {
    fn from(t: Task) -> Self {
        SendMessageResult::Task(t)
    }
}

impl From<Message> for SendMessageResult {
    fn from(m: Message) -> Self {
        SendMessageResult::Message(m)
    }
}

impl From<SendMessageResult> for SendMessageResponse {
    fn from(r: SendMessageResult) -> Self {
        SendMessageResponse { payload: Some(r) }
    }
}

impl From<SendMessageResult> for StreamEvent {
    fn from(r: SendMessageResult) -> Self {
        match r {
            SendMessageResult::Task(t) => StreamEvent::Task(t),
            SendMessageResult::Message(m) => StreamEvent::Message(m),
        }
    }
}

/// A one-member object: `{name: value}`.
fn one_member<S: Serializer>(s: S, name: &str, value: &impl Serialize) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    map.serialize_entry(name, value)?;
    map.end()
}

impl Serialize for StreamEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StreamEvent::Task(t) => one_member(s, "task", t),
            StreamEvent::Message(m) => one_member(s, "message", m),
            StreamEvent::StatusUpdate(e) => one_member(s, "statusUpdate", e),
            StreamEvent::ArtifactUpdate(e) => one_member(s, "artifactUpdate", e),
        }
    }
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StreamResponse::deserialize(d)?.payload.ok_or_else(|| {
            serde::de::Error::custom(
                "a StreamResponse holds one of task, message, statusUpdate or artifactUpdate",
            )
        })
    }
}

impl Serialize for SendMessageResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SendMessageResult::Task(t) => one_member(s, "task", t),
            SendMessageResult::Message(m) => one_member(s, "message", m),
        }
    }
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SendMessageResponse::deserialize(d)?.payload.ok_or_else(|| {
            serde::de::Error::custom("a SendMessageResponse holds a task or a message")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::pb::Part;

    #[test]
    fn an_event_is_stored_as_the_response_that_holds_it() {
        let mut chunk =
            TaskArtifactUpdateEvent::new("t", "c", Artifact::new("a", vec![Part::text("x")]));
        chunk.append = true;
        let events = [
            StreamEvent::from(Task::new("t", "c", TaskStatus::new(TaskState::Submitted))),
            Message::agent_text("hi").with_task("t").into(),
            TaskStatusUpdateEvent::new("t", "c", TaskStatus::new(TaskState::Working)).into(),
            chunk.into(),
        ];
        for e in events {
            let json = serde_json::to_value(&e).unwrap();
            assert_eq!(
                json.as_object().unwrap().keys().collect::<Vec<_>>(),
                [e.kind()]
            );
            let response: StreamResponse = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(response.payload.as_ref(), Some(&e));
            assert_eq!(serde_json::from_value::<StreamEvent>(json).unwrap(), e);
        }
        assert!(serde_json::from_str::<StreamEvent>("{}").is_err());
        let task = StreamEvent::from(Task::new("t", "c", TaskStatus::new(TaskState::Working)));
        let response = StreamResponse::from(task.clone());
        assert_eq!(
            task.response_bytes(),
            prost::Message::encode_to_vec(&response)
        );
        let update = TaskStatusUpdateEvent::default();
        assert_eq!(update.status().state(), TaskState::Unspecified);
        assert!(
            TaskArtifactUpdateEvent::default()
                .artifact()
                .parts
                .is_empty()
        );
    }
}

//! The one place where A2A v1.0's messages (the proto's, [`crate::proto::pb`]) and the
//! internal model meet, for every binding: JSON-RPC and HTTP+JSON read and write the
//! messages as ProtoJSON, gRPC as bytes. Internal to v1.0 is total and infallible:
//! every internal value has a v1.0 form. v1.0 to internal fails where the internal model
//! cannot hold what was sent — a `data` part that is not a JSON object, a field the
//! proto leaves optional that a message needs (a message's id, a task's status) — and
//! then says which field, as a -32602 would.

use base64::Engine as _;
use serde_json::Value;

pub use crate::error::ConvertError;
use crate::proto::json::JsonValue;
use crate::proto::{Timestamp, pb as v1};
use crate::v0_3::{self as t, ContextId, FileContent, FileSource, MessageId, TaskId};

fn refuse(field: impl std::fmt::Display, why: impl Into<String>) -> ConvertError {
    ConvertError {
        field: field.to_string(),
        why: why.into(),
    }
}

/// Where a value sits in what is converted, built up on the way down and written out
/// only when something there is refused: an answer that converts costs no strings.
#[derive(Clone, Copy)]
enum At<'a> {
    Root(&'a str),
    Field(&'a At<'a>, &'static str),
    Item(&'a At<'a>, &'static str, usize),
}

impl<'a> At<'a> {
    fn field(&'a self, name: &'static str) -> At<'a> {
        At::Field(self, name)
    }

    fn item(&'a self, list: &'static str, i: usize) -> At<'a> {
        At::Item(self, list, i)
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Root(path) => f.write_str(path),
            At::Field(parent, name) => write!(f, "{parent}.{name}"),
            At::Item(parent, list, i) => write!(f, "{parent}.{list}[{i}]"),
        }
    }
}

// ---- internal -> v1.0 -------------------------------------------------------------

/// A state in v1.0's form.
pub fn task_state(s: t::TaskState) -> v1::TaskState {
    match s {
        t::TaskState::Submitted => v1::TaskState::Submitted,
        t::TaskState::Working => v1::TaskState::Working,
        t::TaskState::InputRequired => v1::TaskState::InputRequired,
        t::TaskState::Completed => v1::TaskState::Completed,
        t::TaskState::Canceled => v1::TaskState::Canceled,
        t::TaskState::Failed => v1::TaskState::Failed,
        t::TaskState::Rejected => v1::TaskState::Rejected,
        t::TaskState::AuthRequired => v1::TaskState::AuthRequired,
        t::TaskState::Unknown => v1::TaskState::Unspecified,
    }
}

/// A role in v1.0's form.
pub fn role(r: t::Role) -> v1::Role {
    match r {
        t::Role::User => v1::Role::User,
        t::Role::Agent => v1::Role::Agent,
    }
}

fn metadata(m: &Option<t::Metadata>) -> Option<t::Metadata> {
    m.clone()
}

/// An internal time (RFC 3339) as a timestamp; one that is not a time is left out.
fn timestamp(t: &Option<String>) -> Option<Timestamp> {
    t.as_deref().and_then(|t| Timestamp::parse(t).ok())
}

/// A part in v1.0's form.
pub fn part(p: &t::Part) -> v1::Part {
    use v1::part::Content;
    match p {
        t::Part::Text(x) => v1::Part {
            content: Some(Content::Text(x.text.clone())),
            metadata: metadata(&x.metadata),
            ..Default::default()
        },
        t::Part::Data(x) => v1::Part {
            content: Some(Content::Data(JsonValue(Value::Object(x.data.clone())))),
            metadata: metadata(&x.metadata),
            ..Default::default()
        },
        t::Part::File(x) => {
            let content = match &x.file.source {
                FileSource::Bytes(_) => Content::Raw(
                    x.file.source.decode().and_then(Result::ok).unwrap_or_else(|| {
                        // Bytes that are no base64 (a v0.3 agent's answer: a message a
                        // server takes in is checked) have no bytes to give: said, and
                        // sent empty.
                        tracing::warn!(file = ?x.file.name, "a file part's bytes are not base64; sent empty");
                        Vec::new()
                    }),
                ),
                FileSource::Uri(u) => Content::Url(u.clone()),
            };
            v1::Part {
                content: Some(content),
                metadata: metadata(&x.metadata),
                filename: x.file.name.clone().unwrap_or_default(),
                media_type: x.file.mime_type.clone().unwrap_or_default(),
            }
        }
    }
}

/// A message in v1.0's form.
pub fn message(m: &t::Message) -> v1::Message {
    v1::Message {
        message_id: m.message_id.to_string(),
        context_id: m
            .context_id
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        task_id: m
            .task_id
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        role: role(m.role) as i32,
        parts: m.parts.iter().map(part).collect(),
        metadata: metadata(&m.metadata),
        extensions: m.extensions.clone().unwrap_or_default(),
        reference_task_ids: m
            .reference_task_ids
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect(),
    }
}

/// A status in v1.0's form.
pub fn status(s: &t::TaskStatus) -> v1::TaskStatus {
    v1::TaskStatus {
        state: task_state(s.state) as i32,
        message: s.message.as_deref().map(message),
        timestamp: timestamp(&s.timestamp),
    }
}

/// An artifact in v1.0's form.
pub fn artifact(a: &t::Artifact) -> v1::Artifact {
    v1::Artifact {
        artifact_id: a.artifact_id.to_string(),
        name: a.name.clone().unwrap_or_default(),
        description: a.description.clone().unwrap_or_default(),
        parts: a.parts.iter().map(part).collect(),
        metadata: metadata(&a.metadata),
        extensions: a.extensions.clone().unwrap_or_default(),
    }
}

/// A task in v1.0's form.
pub fn task(x: &t::Task) -> v1::Task {
    v1::Task {
        id: x.id.to_string(),
        context_id: x.context_id.to_string(),
        status: Some(status(&x.status)),
        artifacts: x.artifacts.iter().map(artifact).collect(),
        history: x.history.iter().map(message).collect(),
        metadata: metadata(&x.metadata),
    }
}

/// A stream event as v1.0's `StreamResponse`.
pub fn stream_event(e: &t::StreamEvent) -> v1::StreamResponse {
    use v1::stream_response::Payload;
    let payload = match e {
        t::StreamEvent::Task(x) => Payload::Task(task(x)),
        t::StreamEvent::Message(m) => Payload::Message(message(m)),
        t::StreamEvent::StatusUpdate(u) => Payload::StatusUpdate(v1::TaskStatusUpdateEvent {
            task_id: u.task_id.to_string(),
            context_id: u.context_id.to_string(),
            status: Some(status(&u.status)),
            metadata: metadata(&u.metadata),
        }),
        t::StreamEvent::ArtifactUpdate(u) => Payload::ArtifactUpdate(v1::TaskArtifactUpdateEvent {
            task_id: u.task_id.to_string(),
            context_id: u.context_id.to_string(),
            artifact: Some(artifact(&u.artifact)),
            append: u.append.unwrap_or(false),
            last_chunk: u.last_chunk.unwrap_or(false),
            metadata: metadata(&u.metadata),
        }),
    };
    v1::StreamResponse {
        payload: Some(payload),
    }
}

/// A `SendMessage` result in v1.0's form.
pub fn send_result(r: &t::SendMessageResult) -> v1::SendMessageResponse {
    use v1::send_message_response::Payload;
    v1::SendMessageResponse {
        payload: Some(match r {
            t::SendMessageResult::Task(x) => Payload::Task(task(x)),
            t::SendMessageResult::Message(m) => Payload::Message(message(m)),
        }),
    }
}

/// A push config in v1.0's form.
pub fn push_config(c: &t::TaskPushNotificationConfig) -> v1::TaskPushNotificationConfig {
    let p = &c.push_notification_config;
    v1::TaskPushNotificationConfig {
        tenant: String::new(),
        id: p.id.clone().unwrap_or_default(),
        task_id: c.task_id.to_string(),
        url: p.url.clone(),
        token: p.token.clone().unwrap_or_default(),
        authentication: p.authentication.as_ref().map(|a| v1::AuthenticationInfo {
            scheme: a.schemes.first().cloned().unwrap_or_default(),
            credentials: a.credentials.clone().unwrap_or_default(),
        }),
    }
}

// ---- v1.0 -> internal -------------------------------------------------------------

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// The internal state of a v1.0 one (`TASK_STATE_UNSPECIFIED`, or a number the proto
/// does not name, has none).
pub fn task_state_in(s: i32) -> Option<t::TaskState> {
    Some(match v1::TaskState::try_from(s).ok()? {
        v1::TaskState::Unspecified => return None,
        v1::TaskState::Submitted => t::TaskState::Submitted,
        v1::TaskState::Working => t::TaskState::Working,
        v1::TaskState::Completed => t::TaskState::Completed,
        v1::TaskState::Failed => t::TaskState::Failed,
        v1::TaskState::Canceled => t::TaskState::Canceled,
        v1::TaskState::InputRequired => t::TaskState::InputRequired,
        v1::TaskState::Rejected => t::TaskState::Rejected,
        v1::TaskState::AuthRequired => t::TaskState::AuthRequired,
    })
}

fn parts_at(parts: Vec<v1::Part>, at: At<'_>) -> Result<Vec<t::Part>, ConvertError> {
    if parts.len() > t::MAX_PARTS {
        return Err(refuse(
            at.field("parts"),
            format!("more than {} parts", t::MAX_PARTS),
        ));
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part_at(p, at.item("parts", i)))
        .collect()
}

/// A v1.0 part in the internal model (`at`: its path, for errors).
pub fn part_in(p: v1::Part, at: &str) -> Result<t::Part, ConvertError> {
    part_at(p, At::Root(at))
}

fn part_at(p: v1::Part, at: At<'_>) -> Result<t::Part, ConvertError> {
    use v1::part::Content;
    let v1::Part {
        content,
        metadata,
        filename,
        media_type,
    } = p;
    match content {
        None => Err(refuse(
            at,
            "a part has exactly one of `text`, `raw`, `url` or `data` (this one has none)",
        )),
        Some(Content::Text(text)) => {
            // Text is text: a text part's media type (`text/markdown`, say) has no place in
            // the internal model, and refusing the part would refuse a whole answer.
            if !filename.is_empty() {
                return Err(refuse(
                    at.field("filename"),
                    "a text part has no file name here; send a file as `raw` or `url`",
                ));
            }
            Ok(t::Part::Text(t::TextPart { text, metadata }))
        }
        Some(Content::Data(JsonValue(data))) => {
            if !media_type.is_empty() && !t::media_type_matches("application/json", &media_type) {
                return Err(refuse(
                    at.field("mediaType"),
                    format!("a data part is application/json, not {media_type:?}"),
                ));
            }
            let Value::Object(data) = data else {
                return Err(refuse(
                    at.field("data"),
                    "this agent takes structured data as a JSON object (wrap a list or a value in one)",
                ));
            };
            Ok(t::Part::Data(t::DataPart { data, metadata }))
        }
        Some(file @ (Content::Raw(_) | Content::Url(_))) => {
            let source = match file {
                Content::Raw(b) => {
                    FileSource::Bytes(base64::engine::general_purpose::STANDARD.encode(b))
                }
                Content::Url(u) => FileSource::Uri(u),
                _ => unreachable!("a file's content"),
            };
            Ok(t::Part::File(t::FilePart {
                file: FileContent {
                    name: non_empty(filename),
                    mime_type: non_empty(media_type),
                    source,
                },
                metadata,
            }))
        }
    }
}

/// A v1.0 message in the internal model (`at`: its path, for errors).
pub fn message_in(m: v1::Message, at: &str) -> Result<t::Message, ConvertError> {
    message_at(m, At::Root(at))
}

fn message_at(m: v1::Message, at: At<'_>) -> Result<t::Message, ConvertError> {
    let role = match v1::Role::try_from(m.role) {
        Ok(v1::Role::User) => t::Role::User,
        Ok(v1::Role::Agent) => t::Role::Agent,
        _ => {
            return Err(refuse(
                at.field("role"),
                "a message needs a role: ROLE_USER or ROLE_AGENT",
            ));
        }
    };
    if m.message_id.is_empty() {
        return Err(refuse(at.field("messageId"), "a message needs a messageId"));
    }
    let parts = parts_at(m.parts, at)?;
    let mut out = t::Message::with_id(MessageId::new(m.message_id), role, parts);
    out.context_id = (!m.context_id.is_empty()).then(|| ContextId::new(m.context_id));
    out.task_id = (!m.task_id.is_empty()).then(|| TaskId::new(m.task_id));
    out.metadata = m.metadata;
    out.extensions = (!m.extensions.is_empty()).then_some(m.extensions);
    out.reference_task_ids = (!m.reference_task_ids.is_empty())
        .then(|| m.reference_task_ids.into_iter().map(TaskId::new).collect());
    Ok(out)
}

/// A v1.0 push config as the internal (v0.3-shaped) one; the task it names.
pub fn push_config_in(
    c: v1::TaskPushNotificationConfig,
    at: &str,
) -> Result<t::PushNotificationConfig, ConvertError> {
    if c.url.is_empty() {
        return Err(refuse(
            At::Root(at).field("url"),
            "a push config needs a url",
        ));
    }
    Ok(t::PushNotificationConfig {
        id: non_empty(c.id),
        url: c.url,
        token: non_empty(c.token),
        authentication: c
            .authentication
            .map(|a| t::PushNotificationAuthenticationInfo {
                schemes: vec![a.scheme],
                credentials: non_empty(a.credentials),
            }),
    })
}

/// A history length from the wire: negative means "no limit" is not allowed.
fn history_length(n: Option<i32>, at: &str) -> Result<Option<u32>, ConvertError> {
    n.map(|n| u32::try_from(n).map_err(|_| refuse(at, format!("must be 0 or more, got {n}"))))
        .transpose()
}

/// A v1.0 `SendMessageRequest` as the internal params.
pub fn send_request_in(r: v1::SendMessageRequest) -> Result<t::MessageSendParams, ConvertError> {
    let Some(message) = r.message else {
        return Err(refuse("message", "a message is required"));
    };
    let message = message_in(message, "message")?;
    let configuration = match r.configuration {
        None => None,
        Some(c) => Some(t::MessageSendConfiguration {
            accepted_output_modes: (!c.accepted_output_modes.is_empty())
                .then_some(c.accepted_output_modes),
            blocking: Some(!c.return_immediately),
            history_length: history_length(c.history_length, "configuration.historyLength")?,
            push_notification_config: c
                .task_push_notification_config
                .map(|p| push_config_in(p, "configuration.taskPushNotificationConfig"))
                .transpose()?,
        }),
    };
    Ok(t::MessageSendParams {
        message,
        configuration,
        metadata: r.metadata,
    })
}

fn task_id_in(id: String) -> Result<TaskId, ConvertError> {
    if id.is_empty() {
        return Err(refuse("id", "a task id is required"));
    }
    Ok(TaskId::new(id))
}

/// A v1.0 `GetTaskRequest` as the internal params.
pub fn get_request_in(r: v1::GetTaskRequest) -> Result<t::TaskQueryParams, ConvertError> {
    Ok(t::TaskQueryParams {
        id: task_id_in(r.id)?,
        history_length: history_length(r.history_length, "historyLength")?,
        metadata: None,
    })
}

/// A v1.0 `CancelTaskRequest` as the internal params.
pub fn cancel_request_in(r: v1::CancelTaskRequest) -> Result<t::TaskIdParams, ConvertError> {
    Ok(t::TaskIdParams {
        id: task_id_in(r.id)?,
        metadata: r.metadata,
    })
}

/// A v1.0 `SubscribeToTaskRequest` as the internal params.
pub fn subscribe_request_in(
    r: v1::SubscribeToTaskRequest,
) -> Result<t::TaskIdParams, ConvertError> {
    Ok(t::TaskIdParams {
        id: task_id_in(r.id)?,
        metadata: None,
    })
}

/// An agent's v1.0 status as the internal one.
pub fn status_in(s: v1::TaskStatus, at: &str) -> Result<t::TaskStatus, ConvertError> {
    status_at(s, At::Root(at))
}

fn status_at(s: v1::TaskStatus, at: At<'_>) -> Result<t::TaskStatus, ConvertError> {
    Ok(t::TaskStatus {
        state: task_state_in(s.state).unwrap_or(t::TaskState::Unknown),
        message: s
            .message
            .map(|m| message_at(m, at.field("message")).map(Box::new))
            .transpose()?,
        timestamp: s.timestamp.and_then(|t| t.to_rfc3339().ok()),
    })
}

fn required_status(s: Option<v1::TaskStatus>, at: At<'_>) -> Result<t::TaskStatus, ConvertError> {
    match s {
        Some(s) => status_at(s, at.field("status")),
        None => Err(refuse(at.field("status"), "a status is required")),
    }
}

/// A v1.0 artifact in the internal model (`at`: its path, for errors).
pub fn artifact_in(a: v1::Artifact, at: &str) -> Result<t::Artifact, ConvertError> {
    artifact_at(a, At::Root(at))
}

fn artifact_at(a: v1::Artifact, at: At<'_>) -> Result<t::Artifact, ConvertError> {
    if a.artifact_id.is_empty() {
        return Err(refuse(
            at.field("artifactId"),
            "an artifact needs an artifactId",
        ));
    }
    Ok(t::Artifact {
        artifact_id: t::ArtifactId::new(a.artifact_id),
        parts: parts_at(a.parts, at)?,
        name: non_empty(a.name),
        description: non_empty(a.description),
        extensions: (!a.extensions.is_empty()).then_some(a.extensions),
        metadata: a.metadata,
    })
}

/// An agent's v1.0 task as the internal one.
pub fn task_in(x: v1::Task, at: &str) -> Result<t::Task, ConvertError> {
    task_at(x, At::Root(at))
}

fn task_at(x: v1::Task, at: At<'_>) -> Result<t::Task, ConvertError> {
    if x.id.is_empty() {
        return Err(refuse(at.field("id"), "a task needs an id"));
    }
    let status = required_status(x.status, at)?;
    let mut task = t::Task::new(TaskId::new(x.id), ContextId::new(x.context_id), status);
    task.artifacts = x
        .artifacts
        .into_iter()
        .enumerate()
        .map(|(i, a)| artifact_at(a, at.item("artifacts", i)))
        .collect::<Result<_, _>>()?;
    task.history = x
        .history
        .into_iter()
        .enumerate()
        .map(|(i, m)| message_at(m, at.item("history", i)))
        .collect::<Result<_, _>>()?;
    task.metadata = x.metadata;
    Ok(task)
}

/// An agent's v1.0 stream event as the internal one; a status update is final when its
/// state is terminal or waits for the client (v1.0 has no `final`: the stream ends).
pub fn stream_event_in(e: v1::StreamResponse) -> Result<t::StreamEvent, ConvertError> {
    use v1::stream_response::Payload;
    Ok(match e.payload {
        None => {
            return Err(refuse(
                "result",
                "a StreamResponse has one of task, message, statusUpdate or artifactUpdate",
            ));
        }
        Some(Payload::Task(x)) => t::StreamEvent::Task(task_in(x, "task")?),
        Some(Payload::Message(m)) => t::StreamEvent::Message(message_in(m, "message")?),
        Some(Payload::StatusUpdate(u)) => {
            let status = required_status(u.status, At::Root("statusUpdate"))?;
            t::StreamEvent::StatusUpdate(t::TaskStatusUpdateEvent {
                kind: t::StatusUpdateKind,
                task_id: TaskId::new(u.task_id),
                context_id: ContextId::new(u.context_id),
                is_final: status.state.is_terminal() || status.state.is_interrupted(),
                status,
                metadata: u.metadata,
            })
        }
        Some(Payload::ArtifactUpdate(u)) => {
            let Some(artifact) = u.artifact else {
                return Err(refuse(
                    "artifactUpdate.artifact",
                    "an artifact update needs its artifact",
                ));
            };
            t::StreamEvent::ArtifactUpdate(t::TaskArtifactUpdateEvent {
                kind: t::ArtifactUpdateKind,
                task_id: TaskId::new(u.task_id),
                context_id: ContextId::new(u.context_id),
                artifact: artifact_in(artifact, "artifactUpdate.artifact")?,
                append: Some(u.append),
                last_chunk: Some(u.last_chunk),
                metadata: u.metadata,
            })
        }
    })
}

/// A v1.0 `SendMessageResponse` as the internal result.
pub fn send_response_in(r: v1::SendMessageResponse) -> Result<t::SendMessageResult, ConvertError> {
    use v1::send_message_response::Payload;
    Ok(match r.payload {
        None => {
            return Err(refuse(
                "result",
                "a SendMessageResponse has a task or a message",
            ));
        }
        Some(Payload::Task(x)) => t::SendMessageResult::Task(task_in(x, "task")?),
        Some(Payload::Message(m)) => t::SendMessageResult::Message(message_in(m, "message")?),
    })
}

/// The internal push config of a task as v1.0's flat one.
fn push_out(task_id: &TaskId, p: &t::PushNotificationConfig) -> v1::TaskPushNotificationConfig {
    push_config(&t::TaskPushNotificationConfig {
        task_id: task_id.clone(),
        push_notification_config: p.clone(),
    })
}

/// What a client sends as v1.0's `SendMessageRequest`.
pub fn send_request(p: &t::MessageSendParams) -> v1::SendMessageRequest {
    let task_id = p.message.task_id.clone().unwrap_or_else(|| TaskId::new(""));
    v1::SendMessageRequest {
        tenant: String::new(),
        message: Some(message(&p.message)),
        configuration: p
            .configuration
            .as_ref()
            .map(|c| v1::SendMessageConfiguration {
                accepted_output_modes: c.accepted_output_modes.clone().unwrap_or_default(),
                task_push_notification_config: c
                    .push_notification_config
                    .as_ref()
                    .map(|push| push_out(&task_id, push)),
                history_length: c.history_length.map(|n| n.min(i32::MAX as u32) as i32),
                return_immediately: c.blocking == Some(false),
            }),
        metadata: p.metadata.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use v1::part::Content;

    #[test]
    fn parts_round_trip_and_what_cannot_be_held_is_named() {
        let text = v1::Part {
            content: Some(Content::Text("hi".into())),
            ..Default::default()
        };
        assert_eq!(part(&part_in(text.clone(), "p").unwrap()), text);
        let file = v1::Part {
            content: Some(Content::Raw(b"hi".to_vec())),
            filename: "a.txt".into(),
            media_type: "text/plain".into(),
            ..Default::default()
        };
        assert_eq!(part(&part_in(file.clone(), "p").unwrap()), file);
        let list = v1::Part {
            content: Some(Content::Data(JsonValue(serde_json::json!([1, 2])))),
            ..Default::default()
        };
        assert_eq!(
            part_in(list, "message.parts[2]").unwrap_err().field,
            "message.parts[2].data"
        );
        assert!(
            part_in(v1::Part::default(), "p")
                .unwrap_err()
                .why
                .contains("exactly one")
        );
        let two: Result<v1::Part, _> =
            serde_json::from_value(serde_json::json!({ "text": "a", "url": "http://x" }));
        assert!(two.is_err(), "two contents");
    }

    #[test]
    fn states_map_both_ways() {
        for s in [
            t::TaskState::Submitted,
            t::TaskState::Working,
            t::TaskState::InputRequired,
            t::TaskState::Completed,
            t::TaskState::Canceled,
            t::TaskState::Failed,
            t::TaskState::Rejected,
            t::TaskState::AuthRequired,
        ] {
            assert_eq!(task_state_in(task_state(s) as i32), Some(s));
        }
        assert_eq!(
            task_state_in(task_state(t::TaskState::Unknown) as i32),
            None
        );
        assert_eq!(task_state_in(99), None);
    }

    #[test]
    fn return_immediately_is_the_opposite_of_blocking() {
        let r: v1::SendMessageRequest = serde_json::from_value(serde_json::json!({
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "configuration": {"returnImmediately": true}
        }))
        .unwrap();
        assert!(!send_request_in(r).unwrap().blocking());
    }
}

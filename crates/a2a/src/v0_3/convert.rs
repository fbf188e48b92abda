//! The one place where v0.3's wire types and the model (v1.0's messages, [`crate::types`])
//! meet: what a v0.3 peer sends is read into the model, and what goes to one is written
//! from it.
//!
//! The model to v0.3 is total: every value has a v0.3 form, with what v0.3 cannot say
//! left out (a text part's media type or file name) or wrapped (a data part that is not
//! a JSON object goes as `{"value": …}`). v0.3 to the model fails only where v0.3's
//! text cannot be what it claims (a file's `bytes` that are not base64), and then says
//! which field, as a -32602 would.

use base64::Engine as _;
use serde_json::Value;

pub use crate::error::ConvertError;
use crate::proto::pb;
use crate::types::{self as m, Content, JsonValue};
use crate::v0_3 as w;

fn some(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

// ---- the model -> v0.3 --------------------------------------------------------------

/// A state in v0.3's form (`Unspecified` is `unknown`).
pub fn task_state(s: m::TaskState) -> w::TaskState {
    match s {
        m::TaskState::Unspecified => w::TaskState::Unknown,
        m::TaskState::Submitted => w::TaskState::Submitted,
        m::TaskState::Working => w::TaskState::Working,
        m::TaskState::InputRequired => w::TaskState::InputRequired,
        m::TaskState::Completed => w::TaskState::Completed,
        m::TaskState::Canceled => w::TaskState::Canceled,
        m::TaskState::Failed => w::TaskState::Failed,
        m::TaskState::Rejected => w::TaskState::Rejected,
        m::TaskState::AuthRequired => w::TaskState::AuthRequired,
    }
}

/// A part in v0.3's form.
pub fn part(p: &m::Part) -> w::Part {
    let metadata = p.metadata.clone();
    match &p.content {
        Some(Content::Text(text)) => w::Part::Text(w::TextPart {
            text: text.clone(),
            metadata,
        }),
        None => w::Part::Text(w::TextPart {
            text: String::new(),
            metadata,
        }),
        Some(Content::Data(JsonValue(data))) => w::Part::Data(w::DataPart {
            data: match data {
                Value::Object(o) => o.clone(),
                other => serde_json::Map::from_iter([("value".to_owned(), other.clone())]),
            },
            metadata,
        }),
        Some(Content::Raw(bytes)) => file(
            p,
            w::FileSource::Bytes(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
        Some(Content::Url(url)) => file(p, w::FileSource::Uri(url.clone())),
    }
}

fn file(p: &m::Part, source: w::FileSource) -> w::Part {
    w::Part::File(w::FilePart {
        file: w::FileContent {
            name: some(&p.filename),
            mime_type: some(&p.media_type),
            source,
        },
        metadata: p.metadata.clone(),
    })
}

/// A message in v0.3's form (a role the proto leaves unspecified is the agent's).
pub fn message(x: &m::Message) -> w::Message {
    let role = match x.role() {
        m::Role::User => w::Role::User,
        m::Role::Agent | m::Role::Unspecified => w::Role::Agent,
    };
    let mut out = w::Message::with_id(
        w::MessageId::new(&x.message_id),
        role,
        x.parts.iter().map(part).collect(),
    );
    out.context_id = some(&x.context_id).map(w::ContextId::from);
    out.task_id = some(&x.task_id).map(w::TaskId::from);
    out.metadata = x.metadata.clone();
    out.extensions = (!x.extensions.is_empty()).then(|| x.extensions.clone());
    out.reference_task_ids = (!x.reference_task_ids.is_empty())
        .then(|| x.reference_task_ids.iter().map(w::TaskId::new).collect());
    out
}

/// A status in v0.3's form.
pub fn status(s: &m::TaskStatus) -> w::TaskStatus {
    w::TaskStatus {
        state: task_state(s.state()),
        message: s.message.as_ref().map(|x| Box::new(message(x))),
        timestamp: s.timestamp.and_then(|t| t.to_rfc3339().ok()),
    }
}

/// An artifact in v0.3's form.
pub fn artifact(a: &m::Artifact) -> w::Artifact {
    w::Artifact {
        artifact_id: w::ArtifactId::new(&a.artifact_id),
        parts: a.parts.iter().map(part).collect(),
        name: some(&a.name),
        description: some(&a.description),
        extensions: (!a.extensions.is_empty()).then(|| a.extensions.clone()),
        metadata: a.metadata.clone(),
    }
}

/// A task in v0.3's form.
pub fn task(t: &m::Task) -> w::Task {
    let mut out = w::Task::new(
        w::TaskId::new(&t.id),
        w::ContextId::new(&t.context_id),
        status(t.status()),
    );
    out.history = t.history.iter().map(message).collect();
    out.artifacts = t.artifacts.iter().map(artifact).collect();
    out.metadata = t.metadata.clone();
    out
}

/// An event in v0.3's form; a status update is `final` when its state ends a stream
/// (terminal, or waiting for the client), as v0.3 has it.
pub fn stream_event(e: &m::StreamEvent) -> w::StreamEvent {
    match e {
        m::StreamEvent::Task(t) => w::StreamEvent::Task(task(t)),
        m::StreamEvent::Message(x) => w::StreamEvent::Message(message(x)),
        m::StreamEvent::StatusUpdate(u) => {
            let state = u.status().state();
            w::StreamEvent::StatusUpdate(w::TaskStatusUpdateEvent {
                kind: w::StatusUpdateKind,
                task_id: w::TaskId::new(&u.task_id),
                context_id: w::ContextId::new(&u.context_id),
                status: status(u.status()),
                is_final: state.is_terminal() || state.is_interrupted(),
                metadata: u.metadata.clone(),
            })
        }
        m::StreamEvent::ArtifactUpdate(u) => {
            w::StreamEvent::ArtifactUpdate(w::TaskArtifactUpdateEvent {
                kind: w::ArtifactUpdateKind,
                task_id: w::TaskId::new(&u.task_id),
                context_id: w::ContextId::new(&u.context_id),
                artifact: artifact(u.artifact()),
                append: Some(u.append),
                last_chunk: Some(u.last_chunk),
                metadata: u.metadata.clone(),
            })
        }
    }
}

/// A `message/send` result in v0.3's form.
pub fn send_result(r: &m::SendMessageResult) -> w::SendMessageResult {
    match r {
        m::SendMessageResult::Task(t) => w::SendMessageResult::Task(task(t)),
        m::SendMessageResult::Message(x) => w::SendMessageResult::Message(message(x)),
    }
}

/// A push config in v0.3's form (the task it belongs to beside it).
pub fn push_config(c: &pb::TaskPushNotificationConfig) -> w::TaskPushNotificationConfig {
    w::TaskPushNotificationConfig {
        task_id: w::TaskId::new(&c.task_id),
        push_notification_config: w::PushNotificationConfig {
            id: some(&c.id),
            url: c.url.clone(),
            token: some(&c.token),
            authentication: c.authentication.as_ref().map(|a| {
                w::PushNotificationAuthenticationInfo {
                    schemes: vec![a.scheme.clone()],
                    credentials: some(&a.credentials),
                }
            }),
        },
    }
}

/// What a client sends as v0.3's `message/send` params.
pub fn send_request(r: &m::SendMessageRequest) -> w::MessageSendParams {
    let task_id = r.message.as_ref().map(|x| x.task_id.as_str()).unwrap_or("");
    w::MessageSendParams {
        message: r.message.as_ref().map(message).unwrap_or_else(|| {
            w::Message::with_id(w::MessageId::new(""), w::Role::User, Vec::new())
        }),
        configuration: r
            .configuration
            .as_ref()
            .map(|c| w::MessageSendConfiguration {
                accepted_output_modes: (!c.accepted_output_modes.is_empty())
                    .then(|| c.accepted_output_modes.clone()),
                blocking: Some(!c.return_immediately),
                history_length: c.history_length.map(|n| n.max(0) as u32),
                push_notification_config: c.task_push_notification_config.as_ref().map(|p| {
                    let mut p = p.clone();
                    if p.task_id.is_empty() {
                        p.task_id = task_id.to_owned();
                    }
                    push_config(&p).push_notification_config
                }),
            }),
        metadata: r.metadata.clone(),
    }
}

/// What a client sends as v0.3's `tasks/get` params.
pub fn get_request(r: &pb::GetTaskRequest) -> w::TaskQueryParams {
    w::TaskQueryParams {
        id: w::TaskId::new(&r.id),
        history_length: r.history_length.map(|n| n.max(0) as u32),
        metadata: None,
    }
}

/// What a client sends as v0.3's `tasks/cancel` params.
pub fn cancel_request(r: &pb::CancelTaskRequest) -> w::TaskIdParams {
    w::TaskIdParams {
        id: w::TaskId::new(&r.id),
        metadata: r.metadata.clone(),
    }
}

/// What a client sends as v0.3's params naming just a task (`tasks/resubscribe`,
/// `tasks/pushNotificationConfig/list`).
pub fn task_id_params(id: &str) -> w::TaskIdParams {
    w::TaskIdParams::new(w::TaskId::new(id))
}

/// What a client sends as v0.3's `tasks/pushNotificationConfig/get` params.
pub fn get_push_request(
    r: &pb::GetTaskPushNotificationConfigRequest,
) -> w::GetTaskPushNotificationConfigParams {
    w::GetTaskPushNotificationConfigParams {
        id: w::TaskId::new(&r.task_id),
        push_notification_config_id: some(&r.id),
        metadata: None,
    }
}

/// What a client sends as v0.3's `tasks/pushNotificationConfig/delete` params.
pub fn delete_push_request(
    r: &pb::DeleteTaskPushNotificationConfigRequest,
) -> w::DeleteTaskPushNotificationConfigParams {
    w::DeleteTaskPushNotificationConfigParams {
        id: w::TaskId::new(&r.task_id),
        push_notification_config_id: r.id.clone(),
        metadata: None,
    }
}

// ---- v0.3 -> the model --------------------------------------------------------------

/// A v0.3 state in the model (`unknown` is `Unspecified`).
pub fn task_state_in(s: w::TaskState) -> m::TaskState {
    match s {
        w::TaskState::Unknown => m::TaskState::Unspecified,
        w::TaskState::Submitted => m::TaskState::Submitted,
        w::TaskState::Working => m::TaskState::Working,
        w::TaskState::InputRequired => m::TaskState::InputRequired,
        w::TaskState::Completed => m::TaskState::Completed,
        w::TaskState::Canceled => m::TaskState::Canceled,
        w::TaskState::Failed => m::TaskState::Failed,
        w::TaskState::Rejected => m::TaskState::Rejected,
        w::TaskState::AuthRequired => m::TaskState::AuthRequired,
    }
}

/// A v0.3 part in the model (`at`: its path, for errors).
pub fn part_in(p: w::Part, at: &str) -> Result<m::Part, ConvertError> {
    Ok(match p {
        w::Part::Text(t) => m::Part {
            metadata: t.metadata,
            ..m::Part::text(t.text)
        },
        w::Part::Data(d) => m::Part {
            metadata: d.metadata,
            ..m::Part::data(d.data)
        },
        w::Part::File(f) => {
            let content = match &f.file.source {
                w::FileSource::Uri(u) => Content::Url(u.clone()),
                w::FileSource::Bytes(_) => match f.file.source.decode() {
                    Some(Ok(bytes)) => Content::Raw(bytes),
                    Some(Err(e)) => {
                        return Err(ConvertError {
                            field: format!("{at}.file.bytes"),
                            why: format!("is not base64: {e}"),
                        });
                    }
                    None => unreachable!("inline bytes decode to something"),
                },
            };
            m::Part {
                metadata: f.metadata,
                filename: f.file.name.unwrap_or_default(),
                media_type: f.file.mime_type.unwrap_or_default(),
                content: Some(content),
            }
        }
    })
}

fn parts_in(parts: Vec<w::Part>, at: &str) -> Result<Vec<m::Part>, ConvertError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part_in(p, &format!("{at}.parts[{i}]")))
        .collect()
}

/// A v0.3 message in the model (`at`: its path, for errors).
pub fn message_in(x: w::Message, at: &str) -> Result<m::Message, ConvertError> {
    let role = match x.role {
        w::Role::User => m::Role::User,
        w::Role::Agent => m::Role::Agent,
    };
    Ok(m::Message {
        message_id: x.message_id.as_str().to_owned(),
        context_id: x.context_id.map(String::from).unwrap_or_default(),
        task_id: x.task_id.map(String::from).unwrap_or_default(),
        role: role as i32,
        parts: parts_in(x.parts, at)?,
        metadata: x.metadata,
        extensions: x.extensions.unwrap_or_default(),
        reference_task_ids: (x.reference_task_ids.into_iter().flatten())
            .map(String::from)
            .collect(),
    })
}

/// A v0.3 status in the model.
pub fn status_in(s: w::TaskStatus, at: &str) -> Result<m::TaskStatus, ConvertError> {
    Ok(m::TaskStatus {
        state: task_state_in(s.state) as i32,
        message: s
            .message
            .map(|x| message_in(*x, &format!("{at}.message")))
            .transpose()?,
        timestamp: s
            .timestamp
            .as_deref()
            .and_then(|t| crate::proto::Timestamp::parse(t).ok()),
    })
}

/// A v0.3 artifact in the model.
pub fn artifact_in(a: w::Artifact, at: &str) -> Result<m::Artifact, ConvertError> {
    Ok(m::Artifact {
        artifact_id: a.artifact_id.as_str().to_owned(),
        name: a.name.unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        parts: parts_in(a.parts, at)?,
        metadata: a.metadata,
        extensions: a.extensions.unwrap_or_default(),
    })
}

/// A v0.3 task in the model.
pub fn task_in(t: w::Task, at: &str) -> Result<m::Task, ConvertError> {
    Ok(m::Task {
        id: t.id.as_str().to_owned(),
        context_id: t.context_id.as_str().to_owned(),
        status: Some(status_in(t.status, &format!("{at}.status"))?),
        artifacts: (t.artifacts.into_iter().enumerate())
            .map(|(i, a)| artifact_in(a, &format!("{at}.artifacts[{i}]")))
            .collect::<Result<_, _>>()?,
        history: (t.history.into_iter().enumerate())
            .map(|(i, x)| message_in(x, &format!("{at}.history[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: t.metadata,
    })
}

/// A v0.3 event in the model (v0.3's `final` is what the state says).
pub fn stream_event_in(e: w::StreamEvent) -> Result<m::StreamEvent, ConvertError> {
    Ok(match e {
        w::StreamEvent::Task(t) => m::StreamEvent::Task(task_in(t, "result")?),
        w::StreamEvent::Message(x) => m::StreamEvent::Message(message_in(x, "result")?),
        w::StreamEvent::StatusUpdate(u) => m::StreamEvent::StatusUpdate(m::TaskStatusUpdateEvent {
            task_id: u.task_id.as_str().to_owned(),
            context_id: u.context_id.as_str().to_owned(),
            status: Some(status_in(u.status, "result.status")?),
            metadata: u.metadata,
        }),
        w::StreamEvent::ArtifactUpdate(u) => {
            m::StreamEvent::ArtifactUpdate(m::TaskArtifactUpdateEvent {
                task_id: u.task_id.as_str().to_owned(),
                context_id: u.context_id.as_str().to_owned(),
                artifact: Some(artifact_in(u.artifact, "result.artifact")?),
                append: u.append.unwrap_or(false),
                last_chunk: u.last_chunk.unwrap_or(false),
                metadata: u.metadata,
            })
        }
    })
}

/// A v0.3 `message/send` result in the model.
pub fn send_result_in(r: w::SendMessageResult) -> Result<m::SendMessageResult, ConvertError> {
    Ok(match r {
        w::SendMessageResult::Task(t) => m::SendMessageResult::Task(task_in(t, "result")?),
        w::SendMessageResult::Message(x) => m::SendMessageResult::Message(message_in(x, "result")?),
    })
}

/// A v0.3 push config of task `task_id` in the model.
pub fn push_config_in(
    c: w::PushNotificationConfig,
    task_id: &str,
) -> pb::TaskPushNotificationConfig {
    pb::TaskPushNotificationConfig {
        tenant: String::new(),
        id: c.id.unwrap_or_default(),
        task_id: task_id.to_owned(),
        url: c.url,
        token: c.token.unwrap_or_default(),
        authentication: c.authentication.map(|a| pb::AuthenticationInfo {
            scheme: a.schemes.into_iter().next().unwrap_or_default(),
            credentials: a.credentials.unwrap_or_default(),
        }),
    }
}

/// v0.3's `message/send` params as the model's request.
pub fn send_request_in(p: w::MessageSendParams) -> Result<m::SendMessageRequest, ConvertError> {
    let task_id = p
        .message
        .task_id
        .clone()
        .map(String::from)
        .unwrap_or_default();
    Ok(m::SendMessageRequest {
        tenant: String::new(),
        message: Some(message_in(p.message, "message")?),
        configuration: p.configuration.map(|c| m::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
            task_push_notification_config: c
                .push_notification_config
                .map(|push| push_config_in(push, &task_id)),
            history_length: c.history_length.map(|n| n.min(i32::MAX as u32) as i32),
            return_immediately: c.blocking == Some(false),
        }),
        metadata: p.metadata,
    })
}

/// v0.3's `tasks/get` params as the model's request.
pub fn get_request_in(p: w::TaskQueryParams) -> pb::GetTaskRequest {
    pb::GetTaskRequest {
        tenant: String::new(),
        id: p.id.as_str().to_owned(),
        history_length: p.history_length.map(|n| n.min(i32::MAX as u32) as i32),
    }
}

/// v0.3's `tasks/cancel` params as the model's request.
pub fn cancel_request_in(p: w::TaskIdParams) -> pb::CancelTaskRequest {
    pb::CancelTaskRequest {
        tenant: String::new(),
        id: p.id.as_str().to_owned(),
        metadata: p.metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part, message, task and event the model holds goes to v0.3 and back as it
    /// was, but for what v0.3 cannot say.
    #[test]
    fn the_model_goes_to_v0_3_and_back() {
        let parts = vec![
            m::Part::text("hi"),
            m::Part::data(serde_json::Map::from_iter([("a".into(), 1.into())])),
            m::Part::raw(b"%PDF".to_vec(), "application/pdf").with_filename("a.pdf"),
            m::Part::url("https://example.com/a.png", "image/png"),
        ];
        let message = m::Message::new(m::Role::User, parts.clone())
            .with_task("t")
            .with_context("c");
        assert_eq!(message_in(super::message(&message), "m").unwrap(), message);
        let mut t = m::Task::new(
            "t",
            "c",
            m::TaskStatus::new(m::TaskState::InputRequired)
                .with_message(m::Message::agent_text("which?")),
        );
        t.history = vec![message];
        t.artifacts = vec![m::Artifact::new("a", parts).with_name("report")];
        let stamped = |mut t: m::Task| {
            // v0.3 keeps the time to the nanosecond as text: the same time.
            t.status_mut().timestamp = t.status().timestamp;
            t
        };
        assert_eq!(task_in(task(&t), "t").unwrap(), stamped(t.clone()));
        let update = m::StreamEvent::StatusUpdate(m::TaskStatusUpdateEvent::new(
            "t",
            "c",
            m::TaskStatus::new(m::TaskState::Completed),
        ));
        let w::StreamEvent::StatusUpdate(out) = stream_event(&update) else {
            panic!("a status update");
        };
        assert!(out.is_final, "a terminal state ends a v0.3 stream");
        assert_eq!(
            stream_event_in(w::StreamEvent::StatusUpdate(out)).unwrap(),
            update
        );
    }

    #[test]
    fn what_v0_3_cannot_say_is_wrapped_or_left_out_and_bad_bytes_are_named() {
        let list = m::Part::json(serde_json::json!([1, 2]));
        let w::Part::Data(d) = part(&list) else {
            panic!("a data part");
        };
        assert_eq!(Value::Object(d.data), serde_json::json!({"value": [1, 2]}));
        let bad = w::Part::File(w::FilePart {
            file: w::FileContent {
                name: None,
                mime_type: None,
                source: w::FileSource::Bytes("not base64!".into()),
            },
            metadata: None,
        });
        let e = part_in(bad, "message.parts[1]").unwrap_err();
        assert_eq!(e.field, "message.parts[1].file.bytes");
        assert_eq!(task_state(m::TaskState::Unspecified), w::TaskState::Unknown);
        for s in m::TaskState::ALL {
            assert_eq!(task_state_in(task_state(s)), s);
        }
    }
}

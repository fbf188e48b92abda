//! What a client checks of an agent's A2A 1.0 answer before handing it on: what the
//! proto leaves optional but a program needs (a task's id and status, a message's id
//! and role, an artifact update's artifact, a part's content) and how many parts it
//! may hold. The answer is handed on as it came, not copied; a hostile or broken agent
//! gets a protocol error naming the field, as the server names a caller's.

use crate::error::ConvertError;
use crate::types::{
    Artifact, MAX_PARTS, Message, Part, Role, SendMessageResponse, SendMessageResult, StreamEvent,
    StreamResponse, Task, TaskPushNotificationConfig, TaskStatus,
};

fn refuse(field: impl std::fmt::Display, why: impl Into<String>) -> ConvertError {
    ConvertError {
        field: field.to_string(),
        why: why.into(),
    }
}

/// Where a value sits in the answer, written out only when something there is refused:
/// an answer that passes costs no strings.
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

fn parts(parts: &[Part], at: At<'_>) -> Result<(), ConvertError> {
    if parts.len() > MAX_PARTS {
        return Err(refuse(
            at.field("parts"),
            format!("more than {MAX_PARTS} parts"),
        ));
    }
    match parts.iter().position(|p| p.content.is_none()) {
        Some(i) => Err(refuse(
            at.item("parts", i),
            "a part has exactly one of `text`, `raw`, `url` or `data` (this one has none)",
        )),
        None => Ok(()),
    }
}

fn message(m: &Message, at: At<'_>) -> Result<(), ConvertError> {
    if !matches!(Role::try_from(m.role), Ok(Role::User | Role::Agent)) {
        return Err(refuse(
            at.field("role"),
            "a message needs a role: ROLE_USER or ROLE_AGENT",
        ));
    }
    if m.message_id.is_empty() {
        return Err(refuse(at.field("messageId"), "a message needs a messageId"));
    }
    parts(&m.parts, at)
}

fn status(s: Option<&TaskStatus>, at: At<'_>) -> Result<(), ConvertError> {
    let at = at.field("status");
    let Some(s) = s else {
        return Err(refuse(at, "a status is required"));
    };
    match &s.message {
        Some(m) => message(m, at.field("message")),
        None => Ok(()),
    }
}

fn artifact(a: &Artifact, at: At<'_>) -> Result<(), ConvertError> {
    if a.artifact_id.is_empty() {
        return Err(refuse(
            at.field("artifactId"),
            "an artifact needs an artifactId",
        ));
    }
    parts(&a.parts, at)
}

fn task_at(t: &Task, at: At<'_>) -> Result<(), ConvertError> {
    if t.id.is_empty() {
        return Err(refuse(at.field("id"), "a task needs an id"));
    }
    status(t.status.as_ref(), at)?;
    for (i, a) in t.artifacts.iter().enumerate() {
        artifact(a, at.item("artifacts", i))?;
    }
    for (i, m) in t.history.iter().enumerate() {
        message(m, at.item("history", i))?;
    }
    Ok(())
}

/// An agent's task (`at`: where it sits in the answer).
pub(super) fn task(t: &Task, at: &str) -> Result<(), ConvertError> {
    task_at(t, At::Root(at))
}

/// An agent's answer to `SendMessage`: a task or a message.
pub(super) fn send_response(r: SendMessageResponse) -> Result<SendMessageResult, ConvertError> {
    let Some(result) = r.payload else {
        return Err(refuse(
            "result",
            "a SendMessageResponse has a task or a message",
        ));
    };
    match &result {
        SendMessageResult::Task(t) => task(t, "task")?,
        SendMessageResult::Message(m) => message(m, At::Root("message"))?,
    }
    Ok(result)
}

/// One event of an agent's stream.
pub(super) fn event(r: StreamResponse) -> Result<StreamEvent, ConvertError> {
    let Some(event) = r.payload else {
        return Err(refuse(
            "result",
            "a StreamResponse has one of task, message, statusUpdate or artifactUpdate",
        ));
    };
    match &event {
        StreamEvent::Task(t) => task(t, "task")?,
        StreamEvent::Message(m) => message(m, At::Root("message"))?,
        StreamEvent::StatusUpdate(u) => status(u.status.as_ref(), At::Root("statusUpdate"))?,
        StreamEvent::ArtifactUpdate(u) => {
            let at = At::Root("artifactUpdate");
            match &u.artifact {
                Some(a) => artifact(a, at.field("artifact"))?,
                None => {
                    return Err(refuse(
                        at.field("artifact"),
                        "an artifact update needs its artifact",
                    ));
                }
            }
        }
    }
    Ok(event)
}

/// An agent's push config (`at`: where it sits in the answer).
pub(super) fn push_config(c: &TaskPushNotificationConfig, at: &str) -> Result<(), ConvertError> {
    if c.url.is_empty() {
        return Err(refuse(
            At::Root(at).field("url"),
            "a push config needs a url",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{TaskArtifactUpdateEvent, TaskState};

    #[test]
    fn what_an_agent_left_out_is_named() {
        let mut t = Task::new("t", "c", TaskStatus::new(TaskState::Working));
        assert!(task(&t, "result").is_ok());
        t.history.push(Message::user_text("hi"));
        t.history.push(Message::default());
        assert_eq!(
            task(&t, "result").unwrap_err().field,
            "result.history[1].role"
        );
        t.history.pop();
        t.artifacts.push(Artifact::new("a", vec![Part::default()]));
        assert_eq!(
            task(&t, "result").unwrap_err().field,
            "result.artifacts[0].parts[0]"
        );
        t.status = None;
        t.artifacts.clear();
        assert_eq!(task(&t, "result").unwrap_err().field, "result.status");

        let update = TaskArtifactUpdateEvent {
            task_id: "t".into(),
            ..Default::default()
        };
        let e = event(StreamResponse {
            payload: Some(StreamEvent::ArtifactUpdate(update)),
        })
        .unwrap_err();
        assert_eq!(e.field, "artifactUpdate.artifact");
        assert_eq!(
            send_response(SendMessageResponse::default())
                .unwrap_err()
                .field,
            "result"
        );
        let c = TaskPushNotificationConfig::default();
        assert_eq!(push_config(&c, "result").unwrap_err().field, "result.url");
    }
}

//! Runs the server starts of itself — a webhook's delivery, a schedule's time — as the
//! principal the workflow names (`as`). They go through the request handler every
//! caller's message goes through, so `allow`, ownership, audit and the message's
//! idempotency hold for them as for anyone's; each first message is named after what
//! started it, so that the same start sent twice finds the run the first one started.
//!
//! Without `as`, a run is started anonymously on a server that knows no callers (as
//! anyone's would be), and on one that does as the start itself — a principal named
//! `webhook:<path>` or `schedule:<key>` whom no one signs in as: its runs are read by
//! those who read every run (an operator), and are nobody else's.

use std::sync::Arc;

use a2a::RpcError;
use a2a::server::{Caller, Principal, WeakRequestHandler};
use a2a::types::{Message, Part, Role, SendMessageRequest, SendMessageResult, Task};
use serde_json::{Map, Value, json};

/// Who runs are started as, and the server they are started on.
#[derive(Clone)]
pub struct Starter {
    pub handler: WeakRequestHandler,
    /// The principals `[auth]` names, which `as` may name.
    pub principals: Arc<Vec<Arc<Principal>>>,
    /// Whether the server holds callers to credentials (then `as` must be said).
    pub guarded: bool,
}

/// Why no run was started.
#[derive(Debug, thiserror::Error)]
pub enum NotStarted {
    #[error("the server is stopping")]
    Stopping,
    /// `as` names no principal, or none is named where one must be.
    #[error("{0}")]
    Principal(String),
    /// The handler refused the message (the workflow's `allow`, its inputs).
    #[error("{}", .0.message)]
    Refused(RpcError),
    /// The handler answered with a message, not a task.
    #[error("no run was started: {0}")]
    NoRun(String),
}

impl Starter {
    /// The caller a run is started as: the principal named `as`; else `itself` (its
    /// id and a name to show) on a server that holds callers to credentials, or
    /// anonymous on one that does not.
    pub fn caller(
        &self,
        as_principal: Option<&str>,
        (id, name): (&str, &str),
    ) -> Result<Caller, NotStarted> {
        match as_principal {
            Some(named) => match self.principals.iter().find(|p| p.id == *named) {
                Some(p) => Ok(Caller::known(p.clone())),
                None => Err(NotStarted::Principal(format!(
                    "runs are started as `{named}`, which is not a principal of this server"
                ))),
            },
            None if self.guarded => Ok(Caller::known(Arc::new(Principal {
                id: id.to_owned(),
                issuer: None,
                subject: id.to_owned(),
                name: name.to_owned(),
                attributes: Map::new(),
                token: None,
            }))),
            None => Ok(Caller::anonymous()),
        }
    }

    /// Starts a run of `workflow` with `input`, its first message named `message_id`,
    /// without waiting for it: its task as it stands (the task that message started
    /// already, if it did).
    pub async fn start(
        &self,
        caller: &Caller,
        workflow: &str,
        message_id: String,
        input: Map<String, Value>,
    ) -> Result<Task, NotStarted> {
        let handler = self.handler.upgrade().ok_or(NotStarted::Stopping)?;
        let Value::Object(data) = json!({ "workflow": workflow, "input": input }) else {
            unreachable!("an object")
        };
        let message = Message::with_id(message_id, Role::User, vec![Part::data(data)]);
        let request = SendMessageRequest::new(message).returning_immediately();
        match handler.send_message(request, caller).await {
            Ok(SendMessageResult::Task(task)) => Ok(task),
            Ok(SendMessageResult::Message(m)) => Err(NotStarted::NoRun(m.text())),
            Err(e) => Err(NotStarted::Refused(e)),
        }
    }
}

/// What keeps `what` (a webhook, a schedule) from starting runs as `as_principal` on a
/// server whose named principals are `principals`: a name that is none of them, or no
/// name for a workflow that says who may start it (`allow`) on a server that holds
/// callers to credentials (the start itself is no one `allow` names).
pub fn principal_problem(
    what: &str,
    as_principal: Option<&str>,
    principals: &[Arc<Principal>],
    guarded: bool,
    allows: bool,
) -> Option<String> {
    match as_principal {
        Some(name) if !principals.iter().any(|p| p.id == *name) => {
            let known: Vec<&str> = principals.iter().map(|p| p.id.as_str()).collect();
            Some(format!(
                "{what} `as = \"{name}\"` names no principal of this server (its named ones: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))
        }
        None if guarded && allows => Some(format!(
            "{what}: the workflow says who may start it (`allow`): say who its runs are started as (`as = \"token:NAME\"`, a token of [auth.tokens])"
        )),
        _ => None,
    }
}

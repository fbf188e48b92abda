//! Connects the engine to A2A agents: implements [`AgentConnector`] over the registry and
//! the protocol client.
//!
//! Streaming agents are called with `message/stream`; a stream that drops before the
//! task is final is resumed with `tasks/resubscribe`. Other agents get a non-blocking
//! `message/send`, then `tasks/get` polled with backoff. Either way a ledger of the
//! artifact parts already forwarded turns snapshots into the missing chunks only, so no
//! chunk is lost or repeated. `conversation.rs` is one attempt's conversation, a state
//! machine. This is the only place where engine and A2A types meet on the way out;
//! `model.rs` is where the engine meets the language model.

pub mod behalf;
pub mod bounds;
pub mod child;
mod conversation;
mod ledger;
pub mod model;
pub mod usage;

use std::time::Duration;

use futures::future::BoxFuture;
use tracing::Instrument;

use crate::registry::{Registry, Requirements, Target};
use a2a::ErrorCode;
use a2a::Version;
use a2a::client::{A2aClient, ClientError};
use a2a::method::Method;
use a2a::types::{
    CancelTaskRequest, Content as PartContent, JsonValue, Message, Part, Role, SendMessageRequest,
    TaskId, TaskState, TaskStatus,
};
use backoff::{Backoff, Jitter};
use conversation::{Conversation, Poll, Polled, Streamed, updates};
use orchestrator_core::engine::{
    AgentConnector, AgentError, AgentErrorKind, Content, RemoteState, SendRequest, Updates,
};
use orchestrator_core::workflow::AgentTarget;

/// How many times a dropped stream is resumed within one attempt.
const MAX_RESUMES: u32 = 3;
/// Waits before resubscribing to a dropped stream: 50, 100, 200 ms.
const RESUME_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_millis(50), Duration::from_millis(200));

/// The engine's agents, reached over A2A through the registry.
#[derive(Clone)]
pub struct A2aConnector {
    registry: Registry,
    /// On whose behalf each run calls.
    behalf: std::sync::Arc<behalf::OnBehalf>,
    /// Where workflow steps run their workflows.
    children: child::Children,
    /// First and longest wait between two polls of a non-streaming agent.
    pub poll_initial: Duration,
    pub poll_max: Duration,
}

impl A2aConnector {
    /// Calls on behalf of the runs `behalf` names (shared with whoever starts runs).
    pub fn with_on_behalf(mut self, behalf: std::sync::Arc<behalf::OnBehalf>) -> Self {
        self.behalf = behalf;
        self
    }

    /// Where workflow steps run their workflows (set once the server is built).
    pub fn children(&self) -> &child::Children {
        &self.children
    }

    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            behalf: Default::default(),
            children: Default::default(),
            poll_initial: Duration::from_millis(100),
            poll_max: Duration::from_secs(2),
        }
    }
}

/// Maps a client error to the engine's retry semantics.
fn agent_error(e: ClientError) -> AgentError {
    let kind = match &e {
        ClientError::Transport { .. } | ClientError::Timeout { .. } => AgentErrorKind::Transport,
        ClientError::HttpStatus { status, .. } if *status >= 500 || *status == 429 => {
            AgentErrorKind::Transport
        }
        ClientError::HttpStatus { .. } => AgentErrorKind::Refused,
        ClientError::Rpc(r) => match r.code {
            ErrorCode::INTERNAL_ERROR | ErrorCode::TASK_NOT_FOUND => AgentErrorKind::Transport,
            _ => AgentErrorKind::Refused,
        },
        ClientError::Protocol { .. } => AgentErrorKind::Protocol,
        _ => AgentErrorKind::Refused,
    };
    AgentError::new(kind, e.to_string())
}

/// The CLIENT span of one call to an agent, named by the method as the client sends it
/// (`SendStreamingMessage`, `tasks/get`, …), and the client to make the call with: one
/// that sends the span's trace context (`traceparent`) when traces are on.
fn traced(
    client: &A2aClient,
    agent: &str,
    method: Method,
    task: Option<&str>,
) -> (tracing::Span, A2aClient) {
    let name = match client.version() {
        Version::V0_3 => method.as_str(),
        Version::V1_0 => method.v1_name(),
    };
    let span = tracing::info_span!(
        "a2a_call",
        otel.name = name,
        otel.kind = "client",
        "a2a.method.name" = name,
        "a2a.protocol.version" = client.version().as_str(),
        "a2a.task.id" = task,
        "gen_ai.agent.name" = agent,
        "server.address" = client.endpoint(),
    );
    let headers = span.in_scope(crate::telemetry::current_headers);
    (span, client.with_headers(&headers))
}

/// Counts one call to `agent` in the metrics, by method and outcome.
fn count<T>(agent: &str, method: &str, r: &Result<T, ClientError>) {
    let outcome = match r {
        Ok(_) => "ok",
        Err(ClientError::Transport { .. }) => "transport",
        Err(ClientError::Timeout { .. }) => "timeout",
        Err(ClientError::HttpStatus { .. } | ClientError::Redirect { .. }) => "http",
        Err(ClientError::Rpc(_)) => "a2a_error",
        Err(ClientError::Protocol { .. }) => "protocol",
        Err(_) => "client",
    };
    orchestrator_metrics::get()
        .downstream_calls
        .get_or_create(&orchestrator_metrics::CallLabels {
            agent: agent.to_owned(),
            method: method.to_owned(),
            outcome: outcome.to_owned(),
        })
        .inc();
}

fn remote_state(s: TaskState) -> RemoteState {
    match s {
        TaskState::Submitted | TaskState::Working | TaskState::Unspecified => RemoteState::Working,
        TaskState::InputRequired => RemoteState::InputRequired,
        TaskState::AuthRequired => RemoteState::AuthRequired,
        TaskState::Completed => RemoteState::Completed,
        TaskState::Canceled => RemoteState::Canceled,
        TaskState::Failed => RemoteState::Failed,
        TaskState::Rejected => RemoteState::Rejected,
    }
}

fn ends(s: TaskState) -> bool {
    s.is_terminal() || s.is_interrupted()
}

/// A part as the engine keeps it: structured data that is not an object wrapped as
/// `{"value": …}`, a file's bytes as base64 (the engine's records are JSON).
pub(crate) fn content(p: &Part) -> Content {
    use base64::Engine as _;
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let file = |uri, bytes| Content::File {
        name: some(&p.filename),
        mime_type: some(&p.media_type),
        uri,
        bytes,
    };
    match &p.content {
        Some(PartContent::Text(t)) => Content::Text(t.clone()),
        Some(PartContent::Data(JsonValue(serde_json::Value::Object(d)))) => {
            Content::Data(d.clone())
        }
        Some(PartContent::Data(JsonValue(other))) => Content::Data(serde_json::Map::from_iter([(
            "value".into(),
            other.clone(),
        )])),
        Some(PartContent::Url(u)) => file(Some(u.clone()), None),
        Some(PartContent::Raw(b)) => {
            let text = base64::engine::general_purpose::STANDARD.encode(b);
            file(None, Some(text))
        }
        // The client refuses a part with no content before it gets here.
        None => Content::Text(String::new()),
    }
}

fn status_text(s: &TaskStatus) -> Option<String> {
    s.message
        .as_ref()
        .map(Message::text)
        .filter(|t| !t.is_empty())
}

impl AgentConnector for A2aConnector {
    fn send(&self, req: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let this = self.clone();
        Box::pin(async move {
            if let Some(workflow) = child::workflow_of(&req.target) {
                let workflow = workflow.to_owned();
                return this.children.send(&this.behalf, &workflow, req);
            }
            let target = match &req.target {
                AgentTarget::Named(a) => Target::Name(a.as_str()),
                AgentTarget::Skill(s) => Target::Skill(s.as_str()),
                AgentTarget::Workflow(_) => unreachable!("workflows are run as child runs above"),
            };
            let mut requirements = Requirements {
                on_behalf_of: this.behalf.of(&req.run_id),
                ..Requirements::default()
            };
            if req.data.is_some() {
                requirements.input_modes.push("application/json".into());
            }
            let lease = this
                .registry
                .acquire(target, &requirements)
                .await
                .map_err(|e| AgentError::new(AgentErrorKind::Unavailable, e.to_string()))?;
            let agent = lease.agent().to_owned();
            let mut parts = Vec::new();
            if let Some(t) = req.text {
                parts.push(Part::text(t));
            }
            if let Some(d) = req.data {
                parts.push(Part::data(d));
            }
            let answering = req.task_id.is_some();
            let mut message = Message::with_id(req.message_id, Role::User, parts);
            // An agent with several skills learns which one the step asked for; every
            // agent, what the run has left of its budget and time.
            let mut meta = serde_json::Map::new();
            if let AgentTarget::Skill(s) = &req.target {
                meta.insert("skill".into(), serde_json::Value::String(s.to_string()));
            }
            let within = req.bounds.as_ref().and_then(|b| b.within);
            if let Some(b) = &req.bounds {
                bounds::write(b, &mut meta);
            }
            if !meta.is_empty() {
                message.metadata = Some(meta.into());
            }
            match req.task_id {
                // A continuation takes the task's own context.
                Some(t) => message.task_id = t,
                // One conversation per (run, agent).
                None => {
                    // Joined by hand: `format!` costs several times as much, per call.
                    let mut context = String::with_capacity(req.run_id.len() + 1 + agent.len());
                    context.push_str(&req.run_id);
                    context.push(':');
                    context.push_str(&agent);
                    message.context_id = context
                }
            }
            let streaming = lease.card().supports_streaming();
            let mut conversation = Conversation::new(lease, answering);
            if let Some(w) = within {
                conversation.within(w);
            }
            conversation.charge_call();
            let request = SendMessageRequest::new(message);
            if streaming {
                let phase = Streamed::Send(Box::new(request));
                Ok(Box::pin(updates(conversation, phase)) as Updates)
            } else {
                let request = request.returning_immediately();
                let phase = Polled {
                    next: Poll::Send(Box::new(request)),
                    schedule: poll_schedule(&this),
                };
                Ok(Box::pin(updates(conversation, phase)) as Updates)
            }
        })
    }

    fn attach(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
        if agent.starts_with(orchestrator_core::workflow::CHILD_PREFIX) {
            let attached = self.children.attach(&self.behalf, run_id, agent, task_id);
            return Box::pin(async move { attached });
        }
        let this = self.clone();
        let (agent, task_id) = (agent.to_owned(), TaskId::new(task_id));
        Box::pin(async move {
            let lease = this
                .registry
                .acquire(Target::Name(&agent), &Requirements::default())
                .await
                .map_err(|e| AgentError::new(AgentErrorKind::Unavailable, e.to_string()))?;
            let streaming = lease.card().supports_streaming();
            let conversation = Conversation::new(lease, false);
            if streaming {
                let phase = Streamed::Attach(task_id);
                Ok(Box::pin(updates(conversation, phase)) as Updates)
            } else {
                let phase = Polled {
                    next: Poll::Attach(task_id),
                    schedule: poll_schedule(&this),
                };
                Ok(Box::pin(updates(conversation, phase)) as Updates)
            }
        })
    }

    /// A child run can be answered on its own task (the inbox lists it there); an
    /// agent's task is answered through the run that asked, and is not watched.
    fn watch(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let watched = if agent.starts_with(orchestrator_core::workflow::CHILD_PREFIX) {
            self.children.watch(&self.behalf, run_id, agent, task_id)
        } else {
            Err(AgentError::new(AgentErrorKind::Unavailable, "not watched"))
        };
        Box::pin(async move { watched })
    }

    fn cancel(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        if agent.starts_with(orchestrator_core::workflow::CHILD_PREFIX) {
            let this = self.clone();
            let (run_id, task_id) = (run_id.to_owned(), task_id.to_owned());
            return Box::pin(
                async move { this.children.cancel(&this.behalf, &run_id, &task_id).await },
            );
        }
        let registry = self.registry.clone();
        let (agent, task_id) = (agent.to_owned(), task_id.to_owned());
        Box::pin(async move {
            let client = registry.authorized_client(&agent).await.map_err(|why| {
                AgentError::new(
                    AgentErrorKind::Unavailable,
                    format!("agent {agent} cannot be called without a token: {why}"),
                )
            })?;
            let client = client.ok_or_else(|| {
                AgentError::new(
                    AgentErrorKind::Unavailable,
                    format!("agent {agent} is not available"),
                )
            })?;
            let (span, client) = traced(&client, &agent, Method::CancelTask, Some(&task_id));
            let r = client
                .cancel_task(&CancelTaskRequest::new(task_id))
                .instrument(span)
                .await;
            count(&agent, "cancel", &r);
            r.map(|_| ()).map_err(agent_error)
        })
    }
}

/// The schedule of a polled conversation's polls.
fn poll_schedule(c: &A2aConnector) -> Backoff {
    Backoff::exponential(c.poll_initial, c.poll_max).with_jitter(Jitter::Up(0.1))
}

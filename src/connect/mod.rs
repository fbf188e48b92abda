//! Connects the engine to A2A agents: implements [`AgentConnector`] over the registry and
//! the protocol client.
//!
//! Streaming agents are called with `message/stream`; a stream that drops before the
//! task is final is resumed with `tasks/resubscribe`. Other agents get a non-blocking
//! `message/send`, then `tasks/get` polled with backoff. Either way a ledger of the
//! artifact parts already forwarded turns snapshots into the missing chunks only, so no
//! chunk is lost or repeated. This is the only place where engine and A2A types meet
//! on the way out; `model.rs` is where the engine meets the language model.

pub mod behalf;
mod ledger;
mod model;

use std::collections::VecDeque;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use tracing::Instrument;

use crate::registry::{Lease, Registry, Requirements, Target};
use a2a::ErrorCode;
use a2a::Version;
use a2a::client::{A2aClient, ClientError, EventStream};
use a2a::method::Method;
use a2a::types::{
    ContextId, FileSource, Message, MessageId, MessageSendConfiguration, MessageSendParams, Part,
    Role, SendMessageResult, StreamEvent, Task, TaskId, TaskIdParams, TaskQueryParams, TaskState,
    TaskStatus,
};
use backoff::{Backoff, Jitter};
use ledger::Ledger;
use orchestrator_core::engine::{
    AgentConnector, AgentError, AgentErrorKind, Content, RemoteState, SendRequest, Update, Updates,
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

    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            behalf: Default::default(),
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
        TaskState::Submitted | TaskState::Working | TaskState::Unknown => RemoteState::Working,
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

pub(crate) fn content(p: &Part) -> Content {
    match p {
        Part::Text(t) => Content::Text(t.text.clone()),
        Part::Data(d) => Content::Data(d.data.clone()),
        Part::File(f) => {
            let (uri, bytes) = match &f.file.source {
                FileSource::Uri(u) => (Some(u.clone()), None),
                FileSource::Bytes(b) => (None, Some(b.clone())),
            };
            Content::File {
                name: f.file.name.clone(),
                mime_type: f.file.mime_type.clone(),
                uri,
                bytes,
            }
        }
    }
}

fn status_text(s: &TaskStatus) -> Option<String> {
    s.message
        .as_deref()
        .map(Message::text)
        .filter(|t| !t.is_empty())
}

/// The state of one attempt's conversation with a downstream agent.
struct Conversation {
    lease: Option<Lease>,
    client: A2aClient,
    agent: String,
    task_id: Option<String>,
    ledger: Ledger,
    pending: VecDeque<Result<Update, AgentError>>,
    done: bool,
    /// This conversation answers a question: the first snapshot still shows the task
    /// waiting for that answer, which must not be taken for a new question.
    answering: bool,
    /// Its first call was refused for its token and made again with a new one.
    renewed: bool,
}

impl Conversation {
    fn new(lease: Lease, answering: bool) -> Self {
        Self {
            client: lease.client().clone(),
            agent: lease.agent().to_owned(),
            lease: Some(lease),
            task_id: None,
            ledger: Ledger::default(),
            pending: VecDeque::new(),
            done: false,
            answering,
            renewed: false,
        }
    }

    /// Whether a call that failed with `e` is to be made again: the agent refused its
    /// token (HTTP 401) and a new one was fetched (once a conversation).
    async fn renew(&mut self, e: &ClientError) -> bool {
        if self.renewed || !matches!(e, ClientError::HttpStatus { status: 401, .. }) {
            return false;
        }
        self.renewed = true;
        let Some(lease) = &self.lease else {
            return false;
        };
        match lease.renewed_client().await {
            Some(client) => {
                tracing::info!(agent = %self.agent, "the agent refused its token; calling again with a new one");
                self.client = client;
                true
            }
            None => false,
        }
    }

    fn started(&mut self, task_id: &TaskId) {
        if self.task_id.is_none() {
            self.task_id = Some(task_id.as_str().to_owned());
            self.pending.push_back(Ok(Update::Started {
                agent: self.agent.clone(),
                task_id: self.task_id.clone(),
            }));
        }
    }

    fn status(&mut self, status: &TaskStatus) {
        self.pending.push_back(Ok(Update::Status {
            state: remote_state(status.state),
            message: status_text(status),
        }));
        if ends(status.state) {
            self.finish(true);
        }
    }

    /// A snapshot: the missing artifact parts, then the status if it changed.
    fn snapshot(&mut self, task: &Task, last_state: &mut Option<TaskState>) {
        self.started(&task.id);
        for chunk in self.ledger.missing(&task.artifacts) {
            self.pending.push_back(Ok(Update::Artifact(chunk)));
        }
        if std::mem::take(&mut self.answering) && task.status.state.is_interrupted() {
            *last_state = Some(task.status.state);
            return;
        }
        if *last_state != Some(task.status.state) || ends(task.status.state) {
            *last_state = Some(task.status.state);
            self.status(&task.status);
        }
    }

    fn event(&mut self, event: StreamEvent, last_state: &mut Option<TaskState>) {
        if !matches!(event, StreamEvent::Task(_)) {
            self.answering = false;
        }
        match event {
            StreamEvent::Task(t) => self.snapshot(&t, last_state),
            StreamEvent::Message(m) if self.task_id.is_none() => {
                self.pending
                    .push_back(Ok(Update::Reply(m.parts.iter().map(content).collect())));
                self.finish(true);
            }
            // A message in a task's stream: progress, nothing to keep.
            StreamEvent::Message(_) => {}
            StreamEvent::StatusUpdate(e) => {
                self.started(&e.task_id);
                *last_state = Some(e.status.state);
                self.status(&e.status);
            }
            StreamEvent::ArtifactUpdate(e) => {
                self.started(&e.task_id);
                let chunk = self.ledger.live(&e);
                self.pending.push_back(Ok(Update::Artifact(chunk)));
            }
        }
    }

    /// One `tasks/get` of task `id`: its snapshot taken in, or the failure.
    async fn poll(&mut self, id: TaskId, last_state: &mut Option<TaskState>) {
        let (span, client) = traced(
            &self.client,
            &self.agent,
            Method::GetTask,
            Some(id.as_str()),
        );
        let r = client
            .get_task(&TaskQueryParams::new(id))
            .instrument(span)
            .await;
        count(&self.agent, "get", &r);
        match r {
            Ok(t) => self.snapshot(&t, last_state),
            Err(e) => self.client_failure(e),
        }
    }

    /// A call failed: a token the agent refused (HTTP 401) is dropped, and the attempt
    /// may be made again with a fresh one.
    fn client_failure(&mut self, e: ClientError) {
        let refused = matches!(e, ClientError::HttpStatus { status: 401, .. })
            && self.lease.as_ref().is_some_and(|l| l.credentials_refused());
        let mut error = agent_error(e);
        if refused {
            error.kind = AgentErrorKind::Transport;
            error.message = format!(
                "{} (its token was refused; a new one will be fetched)",
                error.message
            );
        }
        self.fail(error);
    }

    fn fail(&mut self, e: AgentError) {
        let counts = e.kind == AgentErrorKind::Transport;
        self.pending.push_back(Err(e));
        self.finish(!counts);
    }

    /// Ends the conversation and reports the outcome to the agent's circuit breaker.
    fn finish(&mut self, ok: bool) {
        self.done = true;
        if let Some(lease) = self.lease.take() {
            if ok { lease.success() } else { lease.failure() }
        }
    }
}

impl AgentConnector for A2aConnector {
    fn send(&self, req: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let this = self.clone();
        Box::pin(async move {
            let target = match &req.target {
                AgentTarget::Named(a) => Target::Name(a.as_str()),
                AgentTarget::Skill(s) => Target::Skill(s.as_str()),
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
            let mut message = Message::with_id(MessageId::new(req.message_id), Role::User, parts);
            // An agent with several skills learns which one the step asked for.
            if let AgentTarget::Skill(s) = &req.target {
                let mut meta = serde_json::Map::new();
                meta.insert("skill".into(), serde_json::Value::String(s.to_string()));
                message.metadata = Some(meta.into());
            }
            match req.task_id {
                // A continuation takes the task's own context.
                Some(t) => message.task_id = Some(TaskId::new(t)),
                // One conversation per (run, agent).
                None => {
                    // Joined by hand: `format!` costs several times as much, per call.
                    let mut context = String::with_capacity(req.run_id.len() + 1 + agent.len());
                    context.push_str(&req.run_id);
                    context.push(':');
                    context.push_str(&agent);
                    message.context_id = Some(ContextId::new(context))
                }
            }
            let streaming = lease.card().supports_streaming();
            let conversation = Conversation::new(lease, answering);
            let mut params = MessageSendParams::new(message);
            if streaming {
                Ok(Box::pin(streamed(conversation, params)) as Updates)
            } else {
                params.configuration = Some(MessageSendConfiguration {
                    blocking: Some(false),
                    ..Default::default()
                });
                Ok(Box::pin(polled(
                    conversation,
                    params,
                    this.poll_initial,
                    this.poll_max,
                )) as Updates)
            }
        })
    }

    fn attach(
        &self,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
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
                Ok(Box::pin(followed(conversation, Phase::Attach(task_id))) as Updates)
            } else {
                Ok(Box::pin(polled_from(
                    conversation,
                    Poll::Attach(task_id),
                    this.poll_initial,
                    this.poll_max,
                )) as Updates)
            }
        })
    }

    fn cancel(&self, agent: &str, task_id: &str) -> BoxFuture<'static, Result<(), AgentError>> {
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
                .cancel_task(&TaskIdParams::new(TaskId::new(task_id)))
                .instrument(span)
                .await;
            count(&agent, "cancel", &r);
            r.map(|_| ()).map_err(agent_error)
        })
    }
}

enum Phase {
    Send(Box<MessageSendParams>),
    /// Follow an existing task: its snapshot, then a resubscription.
    Attach(TaskId),
    Live(EventStream),
    Resume(u32),
}

/// `message/stream`, resumed with `tasks/resubscribe` when the stream drops early.
fn streamed(
    conversation: Conversation,
    params: MessageSendParams,
) -> impl Stream<Item = Result<Update, AgentError>> + Send {
    followed(conversation, Phase::Send(Box::new(params)))
}

/// A streaming conversation from `phase` on.
fn followed(
    conversation: Conversation,
    phase: Phase,
) -> impl Stream<Item = Result<Update, AgentError>> + Send {
    // The conversation is boxed: `unfold` moves its state in and out of a new future at
    // every update, and inline that would copy the conversation each time.
    let state = (Box::new(conversation), phase, None::<TaskState>);
    // The stream's future is as large as its largest await, and a waiting task holds it
    // for as long as it waits: the one-off requests (send, get, resubscribe) are boxed so
    // that it holds only the wait for the next event.
    futures::stream::unfold(state, |(mut c, mut phase, mut last)| async move {
        loop {
            if let Some(u) = c.pending.pop_front() {
                return Some((u, (c, phase, last)));
            }
            if c.done {
                return None;
            }
            phase = match phase {
                Phase::Send(params) => {
                    let (span, client) =
                        traced(&c.client, &c.agent, Method::SendStreamingMessage, None);
                    let r = Box::pin(client.send_message_stream(&params))
                        .instrument(span)
                        .await;
                    count(&c.agent, "stream", &r);
                    match r {
                        Ok(s) => Phase::Live(s),
                        Err(e) if Box::pin(c.renew(&e)).await => Phase::Send(params),
                        Err(e) => {
                            c.client_failure(e);
                            Phase::Resume(MAX_RESUMES)
                        }
                    }
                }
                Phase::Attach(id) => {
                    let (span, client) =
                        traced(&c.client, &c.agent, Method::GetTask, Some(id.as_str()));
                    let r = Box::pin(client.get_task(&TaskQueryParams::new(id)))
                        .instrument(span)
                        .await;
                    count(&c.agent, "get", &r);
                    match r {
                        // The snapshot, then the live events (resubscribing, as after a drop).
                        Ok(t) => {
                            c.snapshot(&t, &mut last);
                            Phase::Resume(0)
                        }
                        Err(e) => {
                            c.client_failure(e);
                            Phase::Resume(MAX_RESUMES)
                        }
                    }
                }
                Phase::Live(mut s) => match s.next().await {
                    Some(Ok(event)) => {
                        c.event(event, &mut last);
                        if c.done {
                            // Read the stream to its end before the last update goes
                            // out (the caller may drop us on it): a stream dropped
                            // unfinished costs the HTTP/1.1 connection, or an HTTP/2
                            // reset that the server answers.
                            Box::pin(drain(&mut s)).await;
                        }
                        Phase::Live(s)
                    }
                    Some(Err(e))
                        if c.task_id.is_some()
                            && matches!(
                                e,
                                ClientError::Transport { .. } | ClientError::Timeout { .. }
                            ) =>
                    {
                        Phase::Resume(0)
                    }
                    Some(Err(e)) => {
                        c.client_failure(e);
                        Phase::Resume(MAX_RESUMES)
                    }
                    None if c.task_id.is_some() => Phase::Resume(0),
                    None => {
                        c.fail(AgentError::new(
                            AgentErrorKind::Protocol,
                            "the stream ended before any task or reply",
                        ));
                        Phase::Resume(MAX_RESUMES)
                    }
                },
                Phase::Resume(n) if n >= MAX_RESUMES => {
                    if !c.done {
                        c.fail(AgentError::new(
                            AgentErrorKind::Transport,
                            "the stream dropped and could not be resumed",
                        ));
                    }
                    Phase::Resume(n)
                }
                Phase::Resume(n) => {
                    let id = TaskId::new(c.task_id.clone().unwrap_or_default());
                    tracing::debug!(agent = %c.agent, task = %id, attempt = n + 1, "resubscribing after a dropped stream");
                    tokio::time::sleep(RESUME_BACKOFF.delay(n + 1)).await;
                    let (span, client) =
                        traced(&c.client, &c.agent, Method::Resubscribe, Some(id.as_str()));
                    let r = Box::pin(client.resubscribe(&TaskIdParams::new(id.clone())))
                        .instrument(span)
                        .await;
                    count(&c.agent, "resubscribe", &r);
                    match r {
                        Ok(s) => Phase::Live(s),
                        Err(_) => {
                            // The task may have ended since (a finished task cannot be
                            // subscribed to): its snapshot says so and ends the
                            // conversation; else the next resubscribe.
                            let (span, client) =
                                traced(&c.client, &c.agent, Method::GetTask, Some(id.as_str()));
                            let r = Box::pin(client.get_task(&TaskQueryParams::new(id)))
                                .instrument(span)
                                .await;
                            count(&c.agent, "get", &r);
                            if let Ok(t) = r {
                                c.snapshot(&t, &mut last);
                            }
                            Phase::Resume(n + 1)
                        }
                    }
                }
            };
        }
    })
}

/// How long a finished task's stream may take to end after its last event (the server
/// ends it at once).
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Reads `stream` to its end, or for [`DRAIN_WAIT`] at most; what comes is dropped.
async fn drain(stream: &mut EventStream) {
    let _ =
        tokio::time::timeout(DRAIN_WAIT, async { while stream.next().await.is_some() {} }).await;
}

enum Poll {
    Send(Box<MessageSendParams>),
    /// Follow an existing task: get it now, then poll.
    Attach(TaskId),
    /// Wait before poll number `n` (1 for the first after sending).
    Wait(u32),
}

/// A non-blocking `message/send`, then `tasks/get` with backoff until the task is final.
fn polled(
    conversation: Conversation,
    params: MessageSendParams,
    initial: Duration,
    max: Duration,
) -> impl Stream<Item = Result<Update, AgentError>> + Send {
    polled_from(conversation, Poll::Send(Box::new(params)), initial, max)
}

/// A polled conversation from `phase` on.
fn polled_from(
    conversation: Conversation,
    phase: Poll,
    initial: Duration,
    max: Duration,
) -> impl Stream<Item = Result<Update, AgentError>> + Send {
    let schedule = Backoff::exponential(initial, max).with_jitter(Jitter::Up(0.1));
    // Boxed, as in `followed`.
    let state = (Box::new(conversation), phase, None::<TaskState>);
    futures::stream::unfold(state, move |(mut c, mut phase, mut last)| async move {
        loop {
            if let Some(u) = c.pending.pop_front() {
                return Some((u, (c, phase, last)));
            }
            if c.done {
                return None;
            }
            phase = match phase {
                Poll::Send(params) => {
                    let (span, client) = traced(&c.client, &c.agent, Method::SendMessage, None);
                    let r = client.send_message(&params).instrument(span).await;
                    count(&c.agent, "send", &r);
                    match r {
                        Ok(SendMessageResult::Task(t)) => c.snapshot(&t, &mut last),
                        Ok(SendMessageResult::Message(m)) => {
                            c.event(StreamEvent::Message(m), &mut last)
                        }
                        Err(e) if Box::pin(c.renew(&e)).await => {
                            phase = Poll::Send(params);
                            continue;
                        }
                        Err(e) => c.client_failure(e),
                    }
                    Poll::Wait(1)
                }
                Poll::Attach(id) => {
                    c.poll(id, &mut last).await;
                    Poll::Wait(1)
                }
                Poll::Wait(n) => {
                    tokio::time::sleep(schedule.delay(n)).await;
                    let id = TaskId::new(c.task_id.clone().unwrap_or_default());
                    c.poll(id, &mut last).await;
                    Poll::Wait(n.saturating_add(1))
                }
            };
        }
    })
}

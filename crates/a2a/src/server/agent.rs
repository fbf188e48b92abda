//! The trait an A2A agent implements to be served, and what it is handed: the request's
//! context and a sink for the events it produces.
//!
//! The agent never builds JSON-RPC responses or SSE frames. It emits A2A events (a Task,
//! a Message, status and artifact updates) into an [`EventSink`]; the server applies them
//! to the task's snapshot, stores it, and fans them out to every client waiting on the
//! task — blocking `message/send`, `message/stream`, `tasks/resubscribe` alike.

use futures::future::BoxFuture;
use std::future::Future;

use tokio_util::sync::CancellationToken;

use super::auth::Caller;
pub use super::sink_error::SinkError;
use super::task_manager::ActorHandle;
use crate::card::AgentCard;
use crate::error::RpcError;
use crate::store::StoredTask;
use crate::types::{
    Artifact, ContextId, Message, Metadata, Part, Role, SendMessageConfiguration, StreamEvent,
    Task, TaskArtifactUpdateEvent, TaskId, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

/// An A2A agent: what the server calls for each incoming message and cancel request.
///
/// `execute` runs in its own tokio task, owned by the server: a client that disconnects
/// does not stop it, and the server's shutdown cancels [`RequestContext::cancel`].
/// Returning `Err` before emitting anything answers the request with that error;
/// returning `Err` later fails the task with the error's message.
pub trait AgentExecutor: Send + Sync + 'static {
    /// Handles a new message (a new task, or a continuation of `ctx.task`).
    fn execute(
        &self,
        ctx: RequestContext,
        events: EventSink,
    ) -> impl Future<Output = Result<(), RpcError>> + Send;

    /// Handles `tasks/cancel` for a task that is not terminal. The default marks the task
    /// canceled; the running `execute` sees its [`RequestContext::cancel`] token fire.
    /// Return [`RpcError::task_not_cancelable`] to refuse.
    fn cancel(
        &self,
        ctx: CancelContext,
        events: EventSink,
    ) -> impl Future<Output = Result<(), RpcError>> + Send {
        let _ = ctx;
        async move {
            events
                .status(TaskState::Canceled, None)
                .await
                .map_err(RpcError::from)
        }
    }

    /// Adds what the agent knows of a task beyond its stored snapshot to a task a
    /// client reads (GetTask, ListTasks, a subscription's first snapshot, a send's
    /// answer): live detail too large or too frequent to write with every event. Called
    /// once the caller may read the task. It may read the agent's own store (for a task
    /// another server sharing the store runs, say), but should be quick: ListTasks
    /// describes a page's tasks side by side. The default adds nothing.
    fn describe<'a>(&'a self, task: &'a mut Task) -> impl Future<Output = ()> + Send + 'a {
        let _ = task;
        async {}
    }

    /// Shapes the authenticated extended card for `caller` (the skills it may use, say).
    /// Must be quick (no I/O); the default serves the card as configured.
    fn tailor_extended_card(&self, card: &mut AgentCard, caller: &Caller) {
        let _ = (card, caller);
    }

    /// Checks a message `caller` sends to an existing `task` before the task takes it
    /// (before it joins the history): an error refuses the message and leaves the task
    /// as it was. Must be quick (no I/O); the default takes every message.
    fn admit(&self, task: &StoredTask, message: &Message, caller: &Caller) -> Result<(), RpcError> {
        let _ = (task, message, caller);
        Ok(())
    }

    /// Called once per unfinished task found in a durable store when the server starts
    /// ([`A2aServer::recover`](super::A2aServer::recover)): the agent picks its work up
    /// again. The default fails tasks that were being worked on (`submitted`,
    /// `working`), since that work was lost with the previous process, and leaves tasks
    /// waiting for the client (`input-required`, `auth-required`) as they are.
    fn resume(
        &self,
        ctx: ResumeContext,
        events: EventSink,
    ) -> impl Future<Output = Result<(), RpcError>> + Send {
        async move {
            if matches!(
                ctx.task.state(),
                TaskState::Submitted | TaskState::Working | TaskState::Unspecified
            ) {
                events
                    .fail("the agent restarted while working on this task; send the message again")
                    .await
                    .map_err(RpcError::from)?;
            }
            Ok(())
        }
    }
}

/// An [`AgentExecutor`] behind a pointer: the server holds its agent as this, so that
/// nothing of the server past its builder is compiled once per agent type (as axum
/// erases handlers). Each call's future is boxed: one allocation per task, not per
/// event.
pub(super) trait ErasedExecutor: Send + Sync + 'static {
    fn execute(
        &self,
        ctx: RequestContext,
        events: EventSink,
    ) -> BoxFuture<'_, Result<(), RpcError>>;
    fn cancel(&self, ctx: CancelContext, events: EventSink) -> BoxFuture<'_, Result<(), RpcError>>;
    fn describe<'a>(&'a self, task: &'a mut Task) -> BoxFuture<'a, ()>;
    fn tailor_extended_card(&self, card: &mut AgentCard, caller: &Caller);
    fn admit(&self, task: &StoredTask, message: &Message, caller: &Caller) -> Result<(), RpcError>;
    fn resume(&self, ctx: ResumeContext, events: EventSink) -> BoxFuture<'_, Result<(), RpcError>>;
}

impl<A: AgentExecutor> ErasedExecutor for A {
    fn execute(
        &self,
        ctx: RequestContext,
        events: EventSink,
    ) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(AgentExecutor::execute(self, ctx, events))
    }

    fn cancel(&self, ctx: CancelContext, events: EventSink) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(AgentExecutor::cancel(self, ctx, events))
    }

    fn describe<'a>(&'a self, task: &'a mut Task) -> BoxFuture<'a, ()> {
        Box::pin(AgentExecutor::describe(self, task))
    }

    fn admit(&self, task: &StoredTask, message: &Message, caller: &Caller) -> Result<(), RpcError> {
        AgentExecutor::admit(self, task, message, caller)
    }

    fn tailor_extended_card(&self, card: &mut AgentCard, caller: &Caller) {
        AgentExecutor::tailor_extended_card(self, card, caller)
    }

    fn resume(&self, ctx: ResumeContext, events: EventSink) -> BoxFuture<'_, Result<(), RpcError>> {
        Box::pin(AgentExecutor::resume(self, ctx, events))
    }
}

/// What `resume` is told: the task as it was stored.
#[derive(Debug, Clone)]
pub struct ResumeContext {
    /// The task as stored when the server started.
    pub task: StoredTask,
    /// Fires when a client cancels the task.
    pub cancel: CancellationToken,
    /// Fires when the server stops (see [`RequestContext::shutdown`]).
    pub shutdown: CancellationToken,
}

/// What `execute` is told about the request.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The task this message creates or continues.
    pub task_id: TaskId,
    /// The context the task belongs to.
    pub context_id: ContextId,
    /// The incoming message (with `taskId` and `contextId` filled in).
    pub message: Message,
    /// The task's snapshot, including this message in its history, when the message
    /// continues an existing task; `None` for a new task. (Boxed, like `configuration`:
    /// the context lives in the agent's future for as long as the task runs.)
    pub task: Option<Box<StoredTask>>,
    /// The client's configuration of the request (history length, blocking, push).
    pub configuration: Option<Box<SendMessageConfiguration>>,
    /// The request's `params.metadata`.
    pub metadata: Option<Metadata>,
    /// Who sent the message (anonymous on a server that asks for no credentials).
    pub caller: Caller,
    /// Fires when a client cancels the task: stop, the server has marked it canceled.
    pub cancel: CancellationToken,
    /// Fires when the server stops (SIGTERM, a deploy): stop working *without* ending
    /// the task — no failure, no cancel. With a durable store the task is handed to
    /// [`AgentExecutor::resume`] when a server starts on it again. A user's cancel and a
    /// server's stop are different signals: only the first ends the task.
    pub shutdown: CancellationToken,
}

impl RequestContext {
    /// Completes when the work should stop, for either reason: the task was canceled
    /// ([`cancel`](Self::cancel)) or the server is stopping
    /// ([`shutdown`](Self::shutdown)).
    pub async fn stopped(&self) {
        tokio::select! {
            () = self.cancel.cancelled() => {}
            () = self.shutdown.cancelled() => {}
        }
    }
}

/// What `cancel` is told.
#[derive(Debug, Clone)]
pub struct CancelContext {
    /// The task as stored (not yet terminal).
    pub task: StoredTask,
    /// The cancel request's metadata.
    pub metadata: Option<Metadata>,
    /// Who asked.
    pub caller: Caller,
}

/// An event queued with [`EventSink::queue`].
#[derive(Debug)]
pub struct Queued(tokio::sync::oneshot::Receiver<Result<(), SinkError>>);

impl Queued {
    /// Waits until the event was applied and stored, or refused.
    pub async fn outcome(self) -> Result<(), SinkError> {
        self.0.await.unwrap_or(Err(SinkError::Closed))
    }

    /// The outcome if it is known already.
    pub fn try_outcome(&mut self) -> Option<Result<(), SinkError>> {
        use tokio::sync::oneshot::error::TryRecvError;
        match self.0.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Closed) => Some(Err(SinkError::Closed)),
        }
    }
}

/// Where an agent sends the events of one task. Cheap to clone; every clone keeps the
/// task's live state open, so drop it when the work is done.
#[derive(Debug, Clone)]
pub struct EventSink {
    pub(super) handle: ActorHandle,
    pub(super) task_id: TaskId,
    pub(super) context_id: ContextId,
}

impl EventSink {
    /// A sink on a new task `t` of context `c` in a throwaway in-memory store, with
    /// no server behind it: for tests of an executor. Call it within a Tokio runtime.
    pub fn detached(first: Message) -> EventSink {
        let manager = super::task_manager::TaskManager::new(
            std::sync::Arc::new(crate::store::InMemoryTaskStore::new()),
            None,
            tokio_util::task::TaskTracker::new(),
            CancellationToken::new(),
        );
        let (task_id, context_id) = (TaskId::new("t"), ContextId::new("c"));
        EventSink {
            handle: manager.open_new(
                task_id.clone(),
                context_id.clone(),
                first,
                super::task_manager::Origin::default(),
            ),
            task_id,
            context_id,
        }
    }

    /// The task these events belong to.
    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }

    /// The task's context.
    pub fn context_id(&self) -> &ContextId {
        &self.context_id
    }

    /// Whether the task's events are read as events by anyone yet: a stream has
    /// followed it, a webhook hears its state changes, or (servers sharing a store)
    /// another server follows it (it said so, or what it said may have gone unheard).
    /// Until then only what an event leaves in the task is ever read — its state,
    /// artifacts and messages, the metadata of its end — and an agent may leave out an
    /// update that changes none of them.
    pub fn followed(&self) -> bool {
        self.handle.followed()
    }

    /// Sends any event. Ids in it must name this sink's task; a status without a time
    /// is stamped with the current one.
    pub async fn send(&self, event: impl Into<StreamEvent>) -> Result<(), SinkError> {
        self.handle.apply(event.into()).await
    }

    /// Queues an event without waiting for it to be applied and stored: an agent relaying
    /// a stream of events queues them, the task stores those that wait together in one
    /// write, and [`Queued::outcome`] tells each one's fate. Events keep their order.
    pub async fn queue(&self, event: impl Into<StreamEvent>) -> Result<Queued, SinkError> {
        self.handle.queue(event.into()).await.map(Queued)
    }

    /// Moves the task to `state`, with an optional agent message.
    pub async fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> Result<(), SinkError> {
        self.send(self.status_update(state, message)).await
    }

    /// A status update for this task, its message stamped with the task's ids (to
    /// [`send`](Self::send) or [`queue`](Self::queue)).
    pub fn status_update(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> TaskStatusUpdateEvent {
        self.status_update_at(state, message, Timestamp::now())
    }

    /// Like [`status_update`](Self::status_update), stamped `timestamp`: the time an
    /// agent already read for the move it reports.
    pub fn status_update_at(
        &self,
        state: TaskState,
        message: Option<Message>,
        timestamp: Timestamp,
    ) -> TaskStatusUpdateEvent {
        let status = TaskStatus {
            state: state as i32,
            message: message.map(|m| self.own(m)),
            timestamp: Some(timestamp),
        };
        TaskStatusUpdateEvent::new(self.task_id.as_str(), self.context_id.as_str(), status)
    }

    /// An artifact (or a chunk of one) for this task; see [`artifact`](Self::artifact).
    pub fn artifact_update(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> TaskArtifactUpdateEvent {
        TaskArtifactUpdateEvent {
            append,
            last_chunk,
            ..TaskArtifactUpdateEvent::new(
                self.task_id.as_str(),
                self.context_id.as_str(),
                artifact,
            )
        }
    }

    /// `working`, with an optional progress text.
    pub async fn working(&self, text: Option<&str>) -> Result<(), SinkError> {
        let msg = text.map(Message::agent_text);
        self.status(TaskState::Working, msg).await
    }

    /// `completed`, with an optional final text.
    pub async fn complete(&self, text: Option<&str>) -> Result<(), SinkError> {
        let msg = text.map(Message::agent_text);
        self.status(TaskState::Completed, msg).await
    }

    /// `failed`, saying why.
    pub async fn fail(&self, reason: &str) -> Result<(), SinkError> {
        self.status(TaskState::Failed, Some(Message::agent_text(reason)))
            .await
    }

    /// `input-required`, asking the client `question`.
    pub async fn input_required(&self, question: &str) -> Result<(), SinkError> {
        self.status(
            TaskState::InputRequired,
            Some(Message::agent_text(question)),
        )
        .await
    }

    /// Sends an artifact or a chunk of one. `append` extends the artifact of the same id;
    /// `last_chunk` marks its end.
    pub async fn artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), SinkError> {
        self.send(self.artifact_update(artifact, append, last_chunk))
            .await
    }

    /// Answers with a message and no task (only as the agent's first event).
    pub async fn reply(&self, parts: Vec<Part>) -> Result<(), SinkError> {
        let msg = Message::new(Role::Agent, parts).with_context(self.context_id.as_str());
        self.send(msg).await
    }

    /// Stamps an agent message with this task's ids.
    fn own(&self, mut m: Message) -> Message {
        if m.task_id.is_empty() {
            m.task_id = self.task_id.as_str().to_owned();
        }
        if m.context_id.is_empty() {
            m.context_id = self.context_id.as_str().to_owned();
        }
        m
    }
}

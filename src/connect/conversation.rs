//! One attempt's conversation with a downstream agent, as a state machine: a
//! [`Conversation`] (what has been said: the task, the artifact parts forwarded, the
//! updates not yet taken) and its phase, [`Streamed`] or [`Polled`]. Each phase makes
//! one call and names the phase after it; what the agent said is queued as engine
//! [`Update`]s. The decisions — where a stream that broke goes, when resuming gives up,
//! what a snapshot adds — are plain functions of the call's outcome
//! ([`Conversation::opened`], [`Conversation::read`], …), tested one by one below
//! without an agent; [`Advance::advance`] makes the calls.
//!
//! [`updates`] drives either machine as the stream of updates the engine reads.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};
use tracing::Instrument;

use super::ledger::Ledger;
use super::{MAX_RESUMES, RESUME_BACKOFF, agent_error, content, count, ends, remote_state};
use super::{status_text, traced};
use crate::registry::Lease;
use a2a::client::{A2aClient, ClientError, EventStream};
use a2a::method::Method;
use a2a::types::{
    GetTaskRequest, Metadata, SendMessageRequest, SendMessageResult, StreamEvent,
    SubscribeToTaskRequest, Task, TaskId, TaskState, TaskStatus,
};
use backoff::Backoff;
use orchestrator_core::engine::{AgentError, AgentErrorKind, Update, Usage};

/// What has passed between one attempt and its agent.
pub(super) struct Conversation {
    lease: Option<Lease>,
    client: A2aClient,
    agent: String,
    task_id: Option<String>,
    ledger: Ledger,
    /// Updates said and not yet taken by the engine.
    pending: VecDeque<Result<Update, AgentError>>,
    /// The state last passed on (a snapshot repeating it adds nothing).
    last_state: Option<TaskState>,
    done: bool,
    /// This conversation answers a question: the first snapshot still shows the task
    /// waiting for that answer, which must not be taken for a new question.
    answering: bool,
    /// Its first call was refused for its token and made again with a new one.
    renewed: bool,
    /// What the task reported it used, last passed on.
    used: Option<Usage>,
    /// The task is a child run of this orchestrator: its own account (cost, calls) is
    /// believed, as an agent's is with `price = { reported = true }`.
    own: bool,
    /// The model the task said it used, last passed on.
    model: Option<String>,
    /// Only watching a task that waits for input: it says nothing while the task waits
    /// (asking or not), and the first other state ends it.
    watching: bool,
}

/// A streaming conversation's phase: the call it makes next.
pub(super) enum Streamed {
    /// `SendStreamingMessage`.
    Send(Box<SendMessageRequest>),
    /// An existing task: its snapshot, then its live events (as after a drop).
    Attach(TaskId),
    /// Reading the live stream.
    Live(EventStream),
    /// Resubscribing after a drop, this many tries made ([`MAX_RESUMES`]: given up).
    Resume(u32),
}

/// A polled conversation's phase: a non-blocking `message/send`, then `tasks/get` with
/// backoff until the task is final.
pub(super) struct Polled {
    pub(super) next: Poll,
    pub(super) schedule: Backoff,
}

/// The call a polled conversation makes next.
pub(super) enum Poll {
    Send(Box<SendMessageRequest>),
    /// An existing task: get it now, then poll.
    Attach(TaskId),
    /// Wait before poll number `n` (1 for the first after sending).
    Wait(u32),
}

/// Where a live stream goes after its next item.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AfterRead {
    /// Keep reading it (after draining it, when the conversation is over).
    Read,
    /// Resubscribe, from this many tries.
    Resume(u32),
}

/// A phase: it makes its call, queues what the agent said on the conversation, and
/// names the phase after it.
pub(super) trait Advance: Sized + Send + 'static {
    fn advance(self, c: &mut Conversation) -> impl Future<Output = Self> + Send + '_;
}

/// The updates of `conversation` from `phase` on, until it is over.
pub(super) fn updates<P: Advance>(
    conversation: Conversation,
    phase: P,
) -> impl Stream<Item = Result<Update, AgentError>> + Send {
    // The conversation is boxed: `unfold` moves its state in and out of a new future at
    // every update, and inline that would copy the conversation each time.
    futures::stream::unfold(
        (Box::new(conversation), phase),
        |(mut c, mut phase)| async move {
            loop {
                if let Some(u) = c.pending.pop_front() {
                    return Some((u, (c, phase)));
                }
                if c.done {
                    return None;
                }
                phase = phase.advance(&mut c).await;
            }
        },
    )
}

impl Conversation {
    pub(super) fn new(lease: Lease, answering: bool) -> Self {
        let (client, agent) = (lease.client().clone(), lease.agent().to_owned());
        Self::with(Some(lease), client, agent, answering)
    }

    /// A conversation with a child run of this orchestrator, through an in-process
    /// client.
    pub(super) fn in_process(client: A2aClient, agent: String, answering: bool) -> Self {
        let mut c = Self::with(None, client, agent, answering);
        c.own = true;
        c
    }

    fn with(lease: Option<Lease>, client: A2aClient, agent: String, answering: bool) -> Self {
        Self {
            lease,
            client,
            agent,
            task_id: None,
            ledger: Ledger::default(),
            pending: VecDeque::new(),
            last_state: None,
            done: false,
            answering,
            renewed: false,
            used: None,
            own: false,
            model: None,
            watching: false,
        }
    }

    /// Only watches the task (see `watching`).
    pub(super) fn watching(mut self) -> Self {
        self.watching = true;
        self
    }

    /// Its calls to be answered within `within` (on gRPC, their `grpc-timeout`).
    pub(super) fn within(&mut self, within: std::time::Duration) {
        self.client = self.client.within(within);
    }

    /// Charges the message about to go out at the agent's price per call.
    pub(super) fn charge_call(&mut self) {
        let per_call = self
            .lease
            .as_ref()
            .and_then(Lease::price)
            .map_or(0.0, |p| p.per_call);
        if per_call > 0.0 {
            self.pending.push_back(Ok(Update::Charged(Usage {
                cost: per_call,
                ..Usage::default()
            })));
        }
    }

    /// Passes on what the task reports it used in `meta` (a status update's, or the
    /// task's), when it says something new.
    fn usage(&mut self, meta: Option<&Metadata>) {
        if let Some(m) = meta.and_then(|m| super::usage::model(m))
            && self.model.as_deref() != Some(m.as_str())
        {
            self.model = Some(m.clone());
            self.pending.push_back(Ok(Update::Model(m)));
        }
        let price = match self.own {
            true => Some(crate::registry::price::Price {
                reported: true,
                ..Default::default()
            }),
            false => self.lease.as_ref().and_then(Lease::price),
        };
        let Some(now) = meta.and_then(|m| super::usage::read(m, price, &self.agent)) else {
            return;
        };
        if self.used != Some(now) {
            self.used = Some(now);
            self.pending.push_back(Ok(Update::Usage(now)));
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

    fn started(&mut self, task_id: &str) {
        if self.task_id.is_none() {
            self.task_id = Some(task_id.to_owned());
            self.pending.push_back(Ok(Update::Started {
                agent: self.agent.clone(),
                task_id: self.task_id.clone(),
            }));
        }
    }

    fn status(&mut self, status: &TaskStatus) {
        let state = status.state();
        if self.watching && state.is_interrupted() {
            return;
        }
        self.pending.push_back(Ok(Update::Status {
            state: remote_state(state),
            message: status_text(status),
        }));
        if ends(state) {
            self.finish(true);
        }
    }

    /// A snapshot: the missing artifact parts, then the status if it changed.
    fn snapshot(&mut self, task: &Task) {
        self.started(&task.id);
        self.usage(task.metadata.as_ref());
        for chunk in self.ledger.missing(&task.artifacts) {
            self.pending.push_back(Ok(Update::Artifact(chunk)));
        }
        let state = task.state();
        if std::mem::take(&mut self.answering) && state.is_interrupted() {
            self.last_state = Some(state);
            return;
        }
        if self.last_state != Some(state) || ends(state) {
            self.last_state = Some(state);
            self.status(task.status());
        }
    }

    fn event(&mut self, event: StreamEvent) {
        if !matches!(event, StreamEvent::Task(_)) {
            self.answering = false;
        }
        match event {
            StreamEvent::Task(t) => self.snapshot(&t),
            StreamEvent::Message(m) if self.task_id.is_none() => {
                self.pending
                    .push_back(Ok(Update::Reply(m.parts.iter().map(content).collect())));
                self.finish(true);
            }
            // A message in a task's stream: progress, nothing to keep.
            StreamEvent::Message(_) => {}
            StreamEvent::StatusUpdate(e) => {
                self.started(&e.task_id);
                self.usage(e.metadata.as_ref());
                self.last_state = Some(e.status().state());
                self.status(e.status());
            }
            StreamEvent::ArtifactUpdate(e) => {
                self.started(&e.task_id);
                let chunk = self.ledger.live(&e);
                self.pending.push_back(Ok(Update::Artifact(chunk)));
            }
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

    /// The task this conversation is about (empty before the agent named one).
    fn task(&self) -> TaskId {
        TaskId::new(self.task_id.clone().unwrap_or_default())
    }

    // The transitions, each a function of one call's outcome.

    /// After `message/stream` or a resubscription was answered: read the stream, or give
    /// up (the failure queued).
    fn opened(&mut self, r: Result<EventStream, ClientError>) -> Streamed {
        match r {
            Ok(s) => Streamed::Live(s),
            Err(e) => {
                self.client_failure(e);
                Streamed::Resume(MAX_RESUMES)
            }
        }
    }

    /// After an attached task's snapshot was asked for: its live events next, or give
    /// up.
    fn attached(&mut self, r: Result<Task, ClientError>) -> Streamed {
        match r {
            Ok(t) => {
                self.snapshot(&t);
                Streamed::Resume(0)
            }
            Err(e) => {
                self.client_failure(e);
                Streamed::Resume(MAX_RESUMES)
            }
        }
    }

    /// After the live stream's next item (`None`: it ended). A stream that broke or
    /// ended once the agent named its task is resumed; before that, or on any other
    /// error, the attempt fails.
    fn read(&mut self, item: Option<Result<StreamEvent, ClientError>>) -> AfterRead {
        match item {
            Some(Ok(event)) => {
                self.event(event);
                AfterRead::Read
            }
            Some(Err(ClientError::Transport { .. } | ClientError::Timeout { .. }))
                if self.task_id.is_some() =>
            {
                AfterRead::Resume(0)
            }
            Some(Err(e)) => {
                self.client_failure(e);
                AfterRead::Resume(MAX_RESUMES)
            }
            None if self.task_id.is_some() => AfterRead::Resume(0),
            None => {
                self.fail(AgentError::new(
                    AgentErrorKind::Protocol,
                    "the stream ended before any task or reply",
                ));
                AfterRead::Resume(MAX_RESUMES)
            }
        }
    }

    /// Resuming is given up: the attempt fails, unless it is over already.
    fn given_up(&mut self) {
        if !self.done {
            self.fail(AgentError::new(
                AgentErrorKind::Transport,
                "the stream dropped and could not be resumed",
            ));
        }
    }

    /// After a resubscription was refused, the task's snapshot (the task may have ended
    /// since, and a finished task cannot be subscribed to): taken in when there is one.
    fn resume_refused(&mut self, snapshot: Result<Task, ClientError>) {
        if let Ok(t) = snapshot {
            self.snapshot(&t);
        }
    }

    /// After a non-blocking `message/send` was answered.
    fn sent(&mut self, r: Result<SendMessageResult, ClientError>) {
        match r {
            Ok(SendMessageResult::Task(t)) => self.snapshot(&t),
            Ok(SendMessageResult::Message(m)) => self.event(StreamEvent::Message(m)),
            Err(e) => self.client_failure(e),
        }
    }

    /// After a poll (`tasks/get`) was answered.
    fn polled(&mut self, r: Result<Task, ClientError>) {
        match r {
            Ok(t) => self.snapshot(&t),
            Err(e) => self.client_failure(e),
        }
    }

    /// One `tasks/get` of task `id`.
    async fn get(&self, id: TaskId) -> Result<Task, ClientError> {
        let (span, client) = traced(
            &self.client,
            &self.agent,
            Method::GetTask,
            Some(id.as_str()),
        );
        let r = Box::pin(client.get_task(&GetTaskRequest::new(id.as_str())))
            .instrument(span)
            .await;
        count(&self.agent, "get", &r);
        r
    }
}

impl Advance for Streamed {
    // The future is as large as its largest await, and a waiting task holds it for as
    // long as it waits: the one-off requests (send, get, resubscribe) are boxed, so
    // that it holds only the wait for the next event.
    async fn advance(self, c: &mut Conversation) -> Streamed {
        match self {
            Streamed::Send(params) => {
                let (span, client) =
                    traced(&c.client, &c.agent, Method::SendStreamingMessage, None);
                let r = Box::pin(client.send_message_stream(&params))
                    .instrument(span)
                    .await;
                count(&c.agent, "stream", &r);
                match r {
                    Err(e) if Box::pin(c.renew(&e)).await => Streamed::Send(params),
                    r => c.opened(r),
                }
            }
            Streamed::Attach(id) => {
                let r = c.get(id).await;
                c.attached(r)
            }
            Streamed::Live(mut s) => {
                let item = s.next().await;
                match c.read(item) {
                    AfterRead::Read => {
                        if c.done {
                            // Read the stream to its end before the last update goes
                            // out (the caller may drop us on it): a stream dropped
                            // unfinished costs the HTTP/1.1 connection, or an HTTP/2
                            // reset that the server answers.
                            Box::pin(drain(&mut s)).await;
                        }
                        Streamed::Live(s)
                    }
                    AfterRead::Resume(n) => Streamed::Resume(n),
                }
            }
            Streamed::Resume(n) if n >= MAX_RESUMES => {
                c.given_up();
                Streamed::Resume(n)
            }
            Streamed::Resume(n) => {
                let id = c.task();
                tracing::debug!(agent = %c.agent, task = %id, attempt = n + 1, "resubscribing after a dropped stream");
                tokio::time::sleep(RESUME_BACKOFF.delay(n + 1)).await;
                let (span, client) =
                    traced(&c.client, &c.agent, Method::Resubscribe, Some(id.as_str()));
                let r = Box::pin(client.subscribe(&SubscribeToTaskRequest::new(id.as_str())))
                    .instrument(span)
                    .await;
                count(&c.agent, "resubscribe", &r);
                match r {
                    Ok(s) => Streamed::Live(s),
                    Err(_) => {
                        let snapshot = c.get(id).await;
                        c.resume_refused(snapshot);
                        Streamed::Resume(n + 1)
                    }
                }
            }
        }
    }
}

impl Advance for Polled {
    async fn advance(self, c: &mut Conversation) -> Polled {
        let Polled { next, schedule } = self;
        let next = match next {
            Poll::Send(params) => {
                let (span, client) = traced(&c.client, &c.agent, Method::SendMessage, None);
                let r = Box::pin(client.send_message(&params))
                    .instrument(span)
                    .await;
                count(&c.agent, "send", &r);
                match r {
                    Err(e) if Box::pin(c.renew(&e)).await => Poll::Send(params),
                    r => {
                        c.sent(r);
                        Poll::Wait(1)
                    }
                }
            }
            Poll::Attach(id) => {
                let r = c.get(id).await;
                c.polled(r);
                Poll::Wait(1)
            }
            Poll::Wait(n) => {
                tokio::time::sleep(schedule.delay(n)).await;
                let r = c.get(c.task()).await;
                c.polled(r);
                Poll::Wait(n.saturating_add(1))
            }
        };
        Polled { next, schedule }
    }
}

/// How long a finished task's stream may take to end after its last event (the server
/// ends it at once).
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Reads `stream` to its end, or for [`DRAIN_WAIT`] at most; what comes is dropped.
async fn drain(stream: &mut EventStream) {
    let _ =
        tokio::time::timeout(DRAIN_WAIT, async { while stream.next().await.is_some() {} }).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::client::ClientConfig;
    use a2a::types::{Artifact, Message, Part, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};

    /// A conversation with no agent behind it: the transitions make no calls.
    fn conversation(answering: bool) -> Conversation {
        let client = A2aClient::new("http://127.0.0.1:9/", ClientConfig::default()).unwrap();
        Conversation::with(None, client, "agent".into(), answering)
    }

    fn task(state: TaskState) -> Task {
        Task::new("t1", "c", TaskStatus::new(state))
    }

    fn broke() -> ClientError {
        ClientError::Transport {
            url: "http://127.0.0.1:9/".into(),
            detail: "connection reset".into(),
        }
    }

    fn refused() -> ClientError {
        ClientError::HttpStatus {
            url: "http://127.0.0.1:9/".into(),
            status: 403,
            body: String::new(),
        }
    }

    fn taken(c: &mut Conversation) -> Vec<String> {
        c.pending
            .drain(..)
            .map(|u| match u {
                Ok(Update::Started { task_id, .. }) => {
                    format!("started {}", task_id.unwrap_or_default())
                }
                Ok(Update::Status { state, .. }) => format!("status {state:?}"),
                Ok(Update::Artifact(chunk)) => format!("artifact {}", chunk.artifact_id),
                Ok(Update::Reply(_)) => "reply".into(),
                Ok(Update::Usage(u)) => format!("usage {u:?}"),
                Ok(Update::Charged(u)) => format!("charged {u:?}"),
                Ok(Update::Model(m)) => format!("model {m}"),
                Err(e) => format!("failed {:?}: {}", e.kind, e.message),
            })
            .collect()
    }

    fn status_event(state: TaskState) -> StreamEvent {
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent::new(
            "t1",
            "c",
            TaskStatus::new(state),
        ))
    }

    #[test]
    fn a_stream_that_opens_is_read_and_one_refused_fails_the_attempt() {
        let mut c = conversation(false);
        assert!(matches!(
            c.opened(Err(refused())),
            Streamed::Resume(MAX_RESUMES)
        ));
        assert!(c.done);
        let said = taken(&mut c);
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("failed Refused"), "{said:?}");
    }

    #[test]
    fn live_events_become_updates_and_a_final_state_ends_the_conversation() {
        let mut c = conversation(false);
        assert_eq!(
            c.read(Some(Ok(StreamEvent::Task(task(TaskState::Submitted))))),
            AfterRead::Read
        );
        assert_eq!(
            c.read(Some(Ok(status_event(TaskState::Working)))),
            AfterRead::Read
        );
        let artifact = Artifact::new("a1", vec![Part::text("hi")]);
        let chunk = StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
            last_chunk: true,
            ..TaskArtifactUpdateEvent::new("t1", "c", artifact)
        });
        assert_eq!(c.read(Some(Ok(chunk))), AfterRead::Read);
        assert!(!c.done);
        assert_eq!(
            c.read(Some(Ok(status_event(TaskState::Completed)))),
            AfterRead::Read
        );
        assert!(c.done, "a final state ends it");
        assert_eq!(
            taken(&mut c),
            [
                "started t1",
                "status Working",
                "status Working",
                "artifact a1",
                "status Completed"
            ]
        );
    }

    #[test]
    fn a_stream_that_breaks_after_the_task_is_named_is_resumed_and_before_fails() {
        let mut named = conversation(false);
        named.read(Some(Ok(StreamEvent::Task(task(TaskState::Working)))));
        assert_eq!(named.read(Some(Err(broke()))), AfterRead::Resume(0));
        assert_eq!(
            named.read(None),
            AfterRead::Resume(0),
            "an early end is resumed too"
        );
        assert!(!named.done);

        let mut anonymous = conversation(false);
        assert_eq!(anonymous.read(None), AfterRead::Resume(MAX_RESUMES));
        let said = taken(&mut anonymous);
        assert!(
            said[0].contains("ended before any task or reply"),
            "{said:?}"
        );

        // An error the agent answered is not a drop: the attempt fails.
        let mut answered = conversation(false);
        answered.read(Some(Ok(StreamEvent::Task(task(TaskState::Working)))));
        assert_eq!(
            answered.read(Some(Err(refused()))),
            AfterRead::Resume(MAX_RESUMES)
        );
        assert!(answered.done);
    }

    #[test]
    fn resuming_gives_up_once_but_not_after_the_task_ended() {
        let mut c = conversation(false);
        c.read(Some(Ok(StreamEvent::Task(task(TaskState::Working)))));
        taken(&mut c);
        // A refused resubscription, then a snapshot saying the task ended meanwhile.
        c.resume_refused(Ok(task(TaskState::Completed)));
        assert!(c.done);
        c.given_up();
        assert_eq!(
            taken(&mut c),
            ["status Completed"],
            "no failure after the end"
        );

        let mut lost = conversation(false);
        lost.read(Some(Ok(StreamEvent::Task(task(TaskState::Working)))));
        taken(&mut lost);
        lost.resume_refused(Err(broke()));
        lost.given_up();
        let said = taken(&mut lost);
        assert!(said[0].contains("could not be resumed"), "{said:?}");
    }

    #[test]
    fn an_answer_s_first_snapshot_is_not_taken_for_a_new_question() {
        let mut c = conversation(true);
        c.attached(Ok(task(TaskState::InputRequired)));
        assert_eq!(
            taken(&mut c),
            ["started t1"],
            "still waiting for the answer sent"
        );
        assert!(!c.done);
        // The agent asks again, later: that one is a question.
        c.read(Some(Ok(status_event(TaskState::Working))));
        c.read(Some(Ok(status_event(TaskState::InputRequired))));
        assert!(c.done);
        assert_eq!(taken(&mut c), ["status Working", "status InputRequired"]);
    }

    #[test]
    fn a_polled_send_answered_with_a_message_is_the_reply() {
        let reply = Message::with_id("m", a2a::types::Role::Agent, vec![Part::text("done")]);
        let mut c = conversation(false);
        c.sent(Ok(SendMessageResult::Message(reply)));
        assert!(c.done);
        assert_eq!(taken(&mut c), ["reply"]);

        let mut polled = conversation(false);
        polled.sent(Ok(SendMessageResult::Task(task(TaskState::Working))));
        polled.polled(Ok(task(TaskState::Working)));
        assert!(!polled.done, "a repeated state adds nothing");
        polled.polled(Ok(task(TaskState::Failed)));
        assert_eq!(
            taken(&mut polled),
            ["started t1", "status Working", "status Failed"]
        );
    }
}

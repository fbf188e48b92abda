//! The live state of tasks: one single-writer actor per task that is being worked on.
//!
//! Every event for a task goes through its actor, which applies it to the snapshot
//! (with the spec's `append` / `lastChunk` semantics), saves the snapshot to the store,
//! and only then announces the event on a broadcast channel. Because one actor owns each
//! task, events are applied and announced in one order, and a subscriber that takes the
//! snapshot and a receiver in one command sees every later event exactly once.
//!
//! An actor lives while someone holds a strong handle to it: the agent's [`EventSink`]s
//! and request handlers setting work up. Subscribers hold only broadcast receivers, so
//! when the agent's work ends the actor ends, the channel closes, and every stream ends.
//! The registry of live actors holds weak handles, so it never keeps an actor alive.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info_span, warn};

use super::push::PushNotifier;
use super::sink_error::SinkError;
use super::stream::{ends_on, ends_stream};
use crate::error::RpcError;
use crate::store::NoticeBoard;
use crate::store::apply::{apply_event, keep_history, normalize_status, past_bounds};
use crate::store::{StoredTask, TaskStore};
use crate::types::{
    ContextId, Message, StreamEvent, Task, TaskId, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// How many events a slow subscriber may fall behind before it is caught up from the
/// stored log instead. A task with subscribers allocates this many slots (about 50
/// bytes each) at its first, so it is small: lagging is cheap, memory per task is not.
pub(super) const BROADCAST_CAPACITY: usize = 32;
/// Commands queued to one actor before senders wait.
const COMMAND_CAPACITY: usize = 64;
/// Most events committed to the store in one write: events queued while a write is in
/// progress are committed together.
const MAX_BATCH: usize = 64;

/// What subscribers of a task receive.
#[derive(Debug, Clone)]
pub(crate) enum Update {
    /// An event and its number in the task's log (0 for a direct reply, which is not
    /// logged). Shared: the broadcast channel clones an update once per subscriber.
    Event(u64, Arc<StreamEvent>),
    /// The agent failed before it created a task or replied. Boxed: the broadcast
    /// channel allocates all its slots with the task, and an error inline would double
    /// them.
    Error(Box<RpcError>),
}

/// How long a request that wants only the task (a `message/send`) waits: for the
/// first event, or for one that ends a stream — a terminal state, or an interrupted one
/// once the agent has taken the request's message (its `execute` sent an event or
/// returned). Another executor's question, said before the agent took the message (a
/// resumed run asking again what the message answers), is not its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    FirstEvent,
    End,
}

/// What a request waiting [`Until`] an event is told, once: it is not woken by the
/// events before.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The event came: the task as it stands once that event is stored.
    Task(Arc<StoredTask>),
    /// The agent replied with a message and made no task.
    Message(Box<Message>),
    /// The agent failed before it made a task or replied.
    Error(Box<RpcError>),
}

/// Events, messages and errors are boxed: the command channel allocates its slots in
/// blocks of 32 per live task, and a task inline would make each slot ~350 bytes.
enum Cmd {
    /// An event from the handle of that id.
    Apply(
        Box<StreamEvent>,
        HandleId,
        oneshot::Sender<Result<(), SinkError>>,
    ),
    UserMessage(Box<Message>, oneshot::Sender<Result<StoredTask, SinkError>>),
    Subscribe(oneshot::Sender<Subscription>),
    AwaitEvent(Until, HandleId, oneshot::Sender<Ending>),
    /// The work holding the handle of that id returned.
    Done(HandleId),
    Fail(Box<RpcError>, oneshot::Sender<()>),
}

/// Which handle of a task's actor an event came from: the one a request opened for its
/// message (and gave its `execute`), or another (a resumed run's).
type HandleId = u64;

/// A request waiting for an event.
struct Waiter {
    until: Until,
    /// The handle its message's `execute` holds.
    handle: HandleId,
    /// Whether that `execute` has sent an event or returned (see [`Until`]).
    taken: bool,
    /// Whether an event has stopped the task since it began waiting.
    stopped: bool,
    tx: oneshot::Sender<Ending>,
}

/// A snapshot and every event after it.
pub(crate) struct Subscription {
    pub snapshot: Option<Task>,
    /// The number of the last event the snapshot includes.
    pub seq: u64,
    pub events: broadcast::Receiver<Update>,
    /// Keeps the task's actor running while the subscriber listens: a subscriber to a
    /// task nothing works on now (one waiting for input) hears the events of the next
    /// message, which that same actor takes.
    pub keep: Option<ActorHandle>,
    /// End at a terminal state only (a v1.0 subscription), not at an interrupted one.
    pub until_terminal: bool,
    /// The caller's count of open streams, while a client's stream holds this.
    pub slot: Option<super::streams::StreamSlot>,
    /// For a caller the executor let in (an approver of a waiting question): whether
    /// an event ends that leave. The stream ends before such an event.
    pub lapses: Option<Lapse>,
}

/// Whether an event ends a caller's leave to read the task (see
/// [`Subscription::lapses`]).
pub(crate) type Lapse = Box<dyn FnMut(&StreamEvent) -> bool + Send>;

/// A strong handle to a task's actor.
#[derive(Clone)]
pub(crate) struct ActorHandle {
    tx: mpsc::Sender<Cmd>,
    /// Fires when the task is canceled or the server shuts down.
    pub cancel: CancellationToken,
    /// Fires when this server stops running the task without ending it: it stops, or
    /// (servers sharing a store) another server took the task over. The executors'
    /// `shutdown`.
    pub handover: CancellationToken,
    /// Set once anything other than the task's own snapshot reads its events (see
    /// [`ActorHandle::followed`]).
    followed: Arc<AtomicBool>,
    /// This handle's own, shared by its clones (see [`Until`]).
    id: HandleId,
}

impl std::fmt::Debug for ActorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActorHandle").finish_non_exhaustive()
    }
}

impl ActorHandle {
    /// Sends a command; the receiver hears its answer.
    async fn post<R>(
        &self,
        make: impl FnOnce(oneshot::Sender<R>) -> Cmd,
    ) -> Result<oneshot::Receiver<R>, SinkError> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(make(tx))
            .await
            .map_err(|_| SinkError::Closed)?;
        Ok(rx)
    }

    async fn call<R>(&self, make: impl FnOnce(oneshot::Sender<R>) -> Cmd) -> Result<R, SinkError> {
        self.post(make).await?.await.map_err(|_| SinkError::Closed)
    }

    /// Whether the task's events are read as events by anyone: a stream has followed it,
    /// its state changes are pushed to a webhook, or (servers sharing a store) another
    /// server follows it for a client: it said so, or what it said may have gone
    /// unheard. Until then only what an event leaves in the task's snapshot is ever read.
    pub fn followed(&self) -> bool {
        self.followed.load(Ordering::Relaxed)
    }

    pub async fn apply(&self, event: StreamEvent) -> Result<(), SinkError> {
        self.call(|ack| Cmd::Apply(Box::new(event), self.id, ack))
            .await?
    }

    /// Queues `event` without waiting for it to be stored; the receiver hears when it is.
    pub async fn queue(
        &self,
        event: StreamEvent,
    ) -> Result<oneshot::Receiver<Result<(), SinkError>>, SinkError> {
        self.post(|ack| Cmd::Apply(Box::new(event), self.id, ack))
            .await
    }

    pub async fn user_message(&self, message: Message) -> Result<StoredTask, SinkError> {
        self.call(|ack| Cmd::UserMessage(Box::new(message), ack))
            .await?
    }

    pub async fn subscribe(&self) -> Result<Subscription, SinkError> {
        self.call(Cmd::Subscribe).await
    }

    /// Hears the first event from now on (or the first that ends a stream), and only
    /// that (see [`Ending`]); nothing if the actor ends first.
    pub async fn await_event(&self, until: Until) -> Result<oneshot::Receiver<Ending>, SinkError> {
        self.post(|waiter| Cmd::AwaitEvent(until, self.id, waiter))
            .await
    }

    /// Tells the actor that the work holding this handle returned: a request waiting
    /// for its message's end hears of the task's stop from now on.
    pub async fn done(&self) {
        let _ = self.tx.send(Cmd::Done(self.id)).await;
    }

    pub async fn fail(&self, error: RpcError) {
        let _ = self.call(|ack| Cmd::Fail(Box::new(error), ack)).await;
    }
}

struct LiveEntry {
    tx: mpsc::WeakSender<Cmd>,
    cancel: CancellationToken,
    handover: CancellationToken,
    followed: Arc<AtomicBool>,
    generation: u64,
}

/// The registry of live task actors. Cheap to clone.
#[derive(Clone)]
pub(crate) struct TaskManager {
    shared: Arc<Shared>,
}

struct Shared {
    store: Arc<dyn TaskStore>,
    // A std mutex: held only to look up or insert an entry, never across an await.
    live: Mutex<HashMap<TaskId, LiveEntry>>,
    next_generation: AtomicU64,
    next_handle: AtomicU64,
    push: Option<PushNotifier>,
    tracker: TaskTracker,
    /// The server's stop: every task's handover token is a child of it.
    shutdown: CancellationToken,
}

impl TaskManager {
    pub fn new(
        store: Arc<dyn TaskStore>,
        push: Option<PushNotifier>,
        tracker: TaskTracker,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                store,
                live: Mutex::new(HashMap::new()),
                next_generation: Default::default(),
                next_handle: Default::default(),
                push,
                tracker,
                shutdown,
            }),
        }
    }

    /// Whether this server has the task's actor now.
    pub fn is_live(&self, task: &TaskId) -> bool {
        let live = self.shared.live.lock().unwrap_or_else(|p| p.into_inner());
        live.get(task).is_some_and(|e| e.tx.upgrade().is_some())
    }

    /// Stops running `task` here without ending it (another server runs it now): its
    /// executors hear their `shutdown`, the next request for it opens no actor from
    /// this one, and its push configs are the new server's to deliver (it reads them
    /// as it claims the task).
    pub fn hand_over(&self, task: &TaskId) {
        let entry = self
            .shared
            .live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task);
        if let Some(entry) = entry {
            entry.handover.cancel();
        }
        if let Some(push) = &self.shared.push {
            push.disarm(task);
        }
    }

    /// Notes that `task` has a push config: its state changes are delivered (and its
    /// actor, if live, counts it followed from now).
    pub fn arm_push(&self, task: &TaskId) {
        if let Some(push) = &self.shared.push {
            push.arm(task);
            let live = self.shared.live.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(entry) = live.get(task) {
                entry.followed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Counts `task`'s actor, if live, followed from now: a server sharing the store
    /// began following it for a client.
    pub fn follow(&self, task: &TaskId) {
        let live = self.shared.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = live.get(task) {
            entry.followed.store(true, Ordering::Relaxed);
        }
    }

    /// Counts every live actor followed from now: whether a server sharing the store
    /// began following one cannot be known (its announcement may have been missed).
    pub fn follow_all(&self) {
        let live = self.shared.live.lock().unwrap_or_else(|p| p.into_inner());
        for entry in live.values() {
            entry.followed.store(true, Ordering::Relaxed);
        }
    }

    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.shared.store
    }

    /// The actor of a task that does not exist yet; `first` becomes its first history
    /// entry, and `origin` says who started it where, when the agent's first event
    /// creates the task.
    pub fn open_new(
        &self,
        task_id: TaskId,
        context_id: ContextId,
        first: Message,
        origin: Origin,
    ) -> ActorHandle {
        // A server sharing the store follows a task through its log, and announces it
        // (see [`super::Cluster::notices`]): until then a new task is followed by
        // nobody, but while the store does not hear, an announcement would be missed.
        let followed = self
            .shared
            .store
            .cluster()
            .is_some_and(|c| !c.notices().is_some_and(NoticeBoard::is_listening));
        self.open(&task_id, followed, || ActorState {
            task_id: task_id.clone(),
            context_id,
            snapshot: None,
            seq: 0,
            first_message: Some(Box::new((first, origin))),
            replied: false,
        })
    }

    /// The actor of an existing task: the live one, or a new one starting from `task`,
    /// whose last logged event is `seq`.
    pub fn open_existing(&self, task: StoredTask, seq: u64) -> ActorHandle {
        let id = TaskId::new(&task.id);
        // A server sharing the store may have followed it before this one ran it.
        let followed = self.shared.store.cluster().is_some();
        self.open(&id, followed, || ActorState {
            task_id: id.clone(),
            context_id: ContextId::new(&task.context_id),
            snapshot: Some(Arc::new(task)),
            seq,
            first_message: None,
            replied: false,
        })
    }

    /// The live actor of `task_id`, or a new one starting from `init()`, `followed`
    /// (see [`ActorHandle::followed`]) or not yet.
    fn open(
        &self,
        task_id: &TaskId,
        followed: bool,
        init: impl FnOnce() -> ActorState,
    ) -> ActorHandle {
        let shared = &self.shared;
        let handle_id = shared.next_handle.fetch_add(1, Ordering::Relaxed);
        let mut live = shared.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = live.get(task_id)
            && let Some(tx) = entry.tx.upgrade()
        {
            return ActorHandle {
                tx,
                cancel: entry.cancel.clone(),
                handover: entry.handover.clone(),
                followed: entry.followed.clone(),
                id: handle_id,
            };
        }
        let (tx, rx) = mpsc::channel(COMMAND_CAPACITY);
        // A task's own token: a client's cancel fires it, a server's stop does not (the
        // executors hear that through the server's shutdown token, and leave the task
        // as it is for the next server to resume).
        let cancel = CancellationToken::new();
        // Only servers sharing their store hand a task over alone; for the others the
        // server's stop is the task's (a child token per task would cost every waiting
        // task an allocation).
        let handover = if shared.store.cluster().is_some() {
            shared.shutdown.child_token()
        } else {
            shared.shutdown.clone()
        };
        let followed = Arc::new(AtomicBool::new(followed));
        let generation = shared.next_generation.fetch_add(1, Ordering::Relaxed);
        live.insert(
            task_id.clone(),
            LiveEntry {
                tx: tx.downgrade(),
                cancel: cancel.clone(),
                handover: handover.clone(),
                followed: followed.clone(),
                generation,
            },
        );
        let state = init();
        let actor = Actor {
            state,
            followed: followed.clone(),
            broadcast: None,
            waiters: Vec::new(),
            store: shared.store.clone(),
            push: shared.push.clone(),
            push_queue: None,
            tracker: shared.tracker.clone(),
            handover: handover.clone(),
        };
        let span = info_span!("task", task_id = %task_id);
        let shared2 = self.shared.clone();
        let id = task_id.clone();
        shared.tracker.spawn(
            async move {
                actor.run(rx).await;
                let mut live = shared2.live.lock().unwrap_or_else(|p| p.into_inner());
                if live.get(&id).is_some_and(|e| e.generation == generation) {
                    live.remove(&id);
                }
            }
            .instrument(span),
        );
        ActorHandle {
            tx,
            cancel,
            handover,
            followed,
            id: handle_id,
        }
    }
}

/// Who started a new task, and in which tenant.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    pub initiator: Option<String>,
    pub tenant: Option<String>,
}

struct ActorState {
    task_id: TaskId,
    context_id: ContextId,
    /// Shared with the store when it keeps tasks in memory (see
    /// [`TaskStore::commit_shared`]): changed in place while only the actor holds it,
    /// copied first otherwise.
    snapshot: Option<Arc<StoredTask>>,
    /// The number of the last event committed.
    seq: u64,
    /// A new task's first message and origin, until the task is created. Boxed: the
    /// actor's future holds it for the task's life.
    first_message: Option<Box<(Message, Origin)>>,
    replied: bool,
}

struct Actor {
    state: ActorState,
    /// Shared with the task's handles (see [`ActorHandle::followed`]).
    followed: Arc<AtomicBool>,
    /// Made at the first subscriber: a task only waited on to its end (a blocking
    /// `message/send`) announces nothing, and keeps no slots for it.
    broadcast: Option<broadcast::Sender<Update>>,
    /// Requests waiting for an event (see [`Ending`]).
    waiters: Vec<Waiter>,
    store: Arc<dyn TaskStore>,
    /// Set when the server delivers push notifications.
    push: Option<PushNotifier>,
    /// This task's delivery worker, started at its first state change.
    push_queue: Option<mpsc::Sender<Task>>,
    tracker: TaskTracker,
    /// The task's handover (the server stops, or another runs it): a write waiting for
    /// the store gives up then.
    handover: CancellationToken,
}

/// Commits `events` with `task` again until the store takes them (or says they were
/// taken), waiting between tries with [`backoff::STORE`]: what a transient
/// failure (`error`) leads to. Gives up when `handover` fires, or on a failure that is
/// not transient (a fenced task, say).
async fn commit_when_back(
    store: &dyn TaskStore,
    task: &StoredTask,
    events: &[crate::store::LoggedEvent],
    mut error: crate::store::StoreError,
    handover: &CancellationToken,
) -> Result<(), crate::store::StoreError> {
    let mut waits = backoff::STORE.waits();
    for attempt in 1u64.. {
        // Said once, then now and then: an outage must not flood the log.
        if attempt == 1 || attempt.is_power_of_two() {
            warn!(error = %error, attempt, "storing the task failed; it waits for the store and tries again");
        }
        let wait = waits.next().unwrap_or(backoff::STORE.max);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = handover.cancelled() => return Err(error),
        }
        // The failed write may have been stored, its answer lost with the connection:
        // then writing it again would log its events twice.
        if let Some((last, _)) = events.last() {
            match store.get(&TaskId::new(&task.id)).await {
                Ok(Some((_, seq))) if seq >= *last => return Ok(()),
                Ok(_) => {}
                Err(e) if e.is_transient() => {
                    error = e;
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        match store.commit(task, events).await {
            Ok(()) => {
                tracing::info!(attempt, "stored the task; the store is back");
                return Ok(());
            }
            Err(e) if e.is_transient() => error = e,
            Err(e) => return Err(e),
        }
    }
    Err(error)
}

impl Actor {
    // Not an `async fn`, whose arguments would be kept twice in the future (as passed
    // and as bound): the actor lives as long as its task.
    #[allow(clippy::manual_async_fn)] // see above: an async fn would hold its arguments twice
    fn run(
        mut self,
        mut rx: mpsc::Receiver<Cmd>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        async move {
            let mut next = None;
            loop {
                let cmd = match next.take() {
                    Some(cmd) => cmd,
                    None => match rx.recv().await {
                        Some(cmd) => cmd,
                        None => break,
                    },
                };
                match cmd {
                    Cmd::Apply(event, handle, ack) => {
                        // Group commit: events already queued are applied and written with
                        // this one, in one store write; each sender is told after it.
                        let mut batch = Vec::new();
                        let mut acks = Vec::new();
                        let r = self.stage(*event, &mut batch);
                        self.taken_by(handle);
                        acks.push((ack, r));
                        while acks.len() < MAX_BATCH {
                            match rx.try_recv() {
                                Ok(Cmd::Apply(event, handle, ack)) => {
                                    let r = self.stage(*event, &mut batch);
                                    self.taken_by(handle);
                                    acks.push((ack, r));
                                }
                                Ok(other) => {
                                    next = Some(other);
                                    break;
                                }
                                Err(_) => break,
                            }
                        }
                        let committed = self.commit(batch).await;
                        for (ack, r) in acks {
                            let r = match (&committed, r) {
                                (Err(e), Ok(())) => Err(e.clone()),
                                (_, r) => r,
                            };
                            let _ = ack.send(r);
                        }
                    }
                    Cmd::UserMessage(message, ack) => {
                        let r = self.user_message(*message).await;
                        let _ = ack.send(r);
                    }
                    Cmd::Subscribe(reply) => {
                        self.followed.store(true, Ordering::Relaxed);
                        let _ = reply.send(Subscription {
                            snapshot: self.state.snapshot.as_ref().map(|s| s.task.clone()),
                            seq: self.state.seq,
                            events: self
                                .broadcast
                                .get_or_insert_with(|| broadcast::channel(BROADCAST_CAPACITY).0)
                                .subscribe(),
                            keep: None,
                            until_terminal: false,
                            slot: None,
                            lapses: None,
                        });
                    }
                    Cmd::AwaitEvent(until, handle, tx) => {
                        // Requests that stopped waiting (their clients went away) are
                        // not kept until the task next stops.
                        self.waiters.retain(|w| !w.tx.is_closed());
                        self.waiters.push(Waiter {
                            until,
                            handle,
                            taken: false,
                            stopped: false,
                            tx,
                        });
                    }
                    Cmd::Done(handle) => {
                        self.taken_by(handle);
                        // Stopped while it worked (by another executor's question, say):
                        // the request whose message it took hears of it now. A task
                        // stopped before (the question the message answers) is not.
                        if let Some(task) = &self.state.snapshot
                            && ends_on(task.state())
                        {
                            let task = task.clone();
                            self.tell_waiters(&task, false, false);
                        }
                    }
                    Cmd::Fail(error, ack) => {
                        self.fail(*error).await;
                        let _ = ack.send(());
                    }
                }
            }
            if let (Some(push), Some(task)) = (&self.push, &self.state.snapshot)
                && task.state().is_terminal()
            {
                push.disarm(&self.state.task_id);
            }
            debug!("task actor finished");
        }
    }

    fn check_ids(&self, event: &StreamEvent) -> Result<(), SinkError> {
        let s = &self.state;
        // A message may leave its ids out (empty); every other event names both.
        let optional = matches!(event, StreamEvent::Message(_));
        let (task, context) = (event.task_id(), event.context_id());
        if (!optional || !task.is_empty()) && task != s.task_id.as_str() {
            return Err(SinkError::WrongTask {
                expected: s.task_id.clone(),
                got: TaskId::new(task),
            });
        }
        if (!optional || !context.is_empty()) && context != s.context_id.as_str() {
            return Err(SinkError::WrongContext {
                expected: s.context_id.clone(),
                got: ContextId::new(context),
            });
        }
        Ok(())
    }

    /// Marks the requests whose message the work holding `handle` took (see [`Until`]).
    fn taken_by(&mut self, handle: HandleId) {
        for w in self.waiters.iter_mut().filter(|w| w.handle == handle) {
            w.taken = true;
        }
    }

    /// Tells the requests waiting on `task`, as it stands now, what it ends: each
    /// waiting for the first event when one `came`; each waiting for the end when the
    /// task is stopped now, by an event since it began waiting (these events, when they
    /// `stop` it) — at a terminal state, or at an interrupted one once the agent took
    /// the request's message (see [`Until`]). A task stopped by one event and moved on
    /// by another of the same commit is not stopped.
    fn tell_waiters(&mut self, task: &Arc<StoredTask>, came: bool, stop: bool) {
        let state = task.state();
        let ended = |w: &Waiter| match w.until {
            Until::FirstEvent => came,
            Until::End => w.stopped && (state.is_terminal() || (w.taken && ends_on(state))),
        };
        for w in std::mem::take(&mut self.waiters) {
            let w = Waiter {
                stopped: w.stopped || stop,
                ..w
            };
            if ended(&w) {
                let _ = w.tx.send(Ending::Task(task.clone()));
            } else {
                self.waiters.push(w);
            }
        }
    }

    /// Tells the task's subscribers, if it has had any (`update` is made only then). No
    /// receivers now is fine: nobody is watching this task right now.
    fn announce(&self, update: impl FnOnce() -> Update) {
        if let Some(broadcast) = &self.broadcast {
            let _ = broadcast.send(update());
        }
    }

    /// Applies one event and commits it.
    async fn apply(&mut self, event: StreamEvent) -> Result<(), SinkError> {
        let mut batch = Vec::with_capacity(2);
        self.stage(event, &mut batch)?;
        self.commit(batch).await
    }

    /// Applies an event to the snapshot and adds what it announces to `announce`.
    fn stage(
        &mut self,
        event: StreamEvent,
        announce: &mut Vec<StreamEvent>,
    ) -> Result<(), SinkError> {
        if self.state.replied {
            return Err(SinkError::AlreadyReplied);
        }
        self.check_ids(&event)?;
        if let Some(why) = past_bounds(self.state.snapshot.as_deref().map(|s| &s.task), &event) {
            return Err(SinkError::TooLarge(why));
        }
        let task = match self.state.snapshot.as_mut() {
            Some(task) => Arc::make_mut(task),
            None => {
                if let StreamEvent::Message(m) = event {
                    // A direct reply: no task is created or stored.
                    self.state.replied = true;
                    for w in self.waiters.drain(..) {
                        let _ = w.tx.send(Ending::Message(Box::new(m.clone())));
                    }
                    self.announce(|| Update::Event(0, Arc::new(StreamEvent::Message(m))));
                    return Ok(());
                }
                let mut task = StoredTask::new(Task::new(
                    self.state.task_id.as_str(),
                    self.state.context_id.as_str(),
                    TaskStatus::new(TaskState::Submitted),
                ));
                // Exactly one: `extend` would reserve room for four messages, held
                // for the life of the task.
                if let Some(first) = self.state.first_message.take() {
                    let (message, origin) = *first;
                    task.history = vec![message];
                    task.initiator = origin.initiator;
                    task.tenant = origin.tenant;
                }
                if !matches!(event, StreamEvent::Task(_)) {
                    announce.push(StreamEvent::Task(task.task.clone()));
                }
                Arc::make_mut(self.state.snapshot.insert(Arc::new(task)))
            }
        };
        if task.state().is_terminal() {
            return Err(SinkError::Terminal(
                self.state.task_id.clone(),
                task.state(),
            ));
        }
        let event = match event {
            // Moved in rather than applied from a reference: a task is large. Who
            // started it where stays the server's record, beside it.
            StreamEvent::Task(mut t) => {
                if t.history.is_empty() {
                    t.history = std::mem::take(&mut task.history);
                }
                task.task = t;
                StreamEvent::Task(task.task.clone())
            }
            StreamEvent::StatusUpdate(mut e) => {
                normalize_status(&mut e);
                let e = StreamEvent::StatusUpdate(e);
                apply_event(task, &e);
                e
            }
            e => {
                apply_event(task, &e);
                e
            }
        };
        announce.push(event);
        Ok(())
    }

    async fn user_message(&mut self, message: Message) -> Result<StoredTask, SinkError> {
        let Some(task) = self.state.snapshot.as_mut().map(Arc::make_mut) else {
            return Err(SinkError::Closed);
        };
        if task.state().is_terminal() {
            return Err(SinkError::Terminal(
                self.state.task_id.clone(),
                task.state(),
            ));
        }
        if let Some(previous) = task.status.as_mut().and_then(|s| s.message.take()) {
            task.history.push(previous);
        }
        task.history.push(message);
        keep_history(task);
        let task = task.clone();
        self.save(&[]).await?;
        Ok(task)
    }

    async fn fail(&mut self, error: RpcError) {
        match &self.state.snapshot {
            None if !self.state.replied => {
                for w in self.waiters.drain(..) {
                    let _ = w.tx.send(Ending::Error(Box::new(error.clone())));
                }
                self.announce(|| Update::Error(Box::new(error)));
            }
            Some(task) if !task.state().is_terminal() => {
                let status = TaskStatus::new(TaskState::Failed)
                    .with_message(Message::agent_text(error.message.clone()));
                let event = TaskStatusUpdateEvent::new(
                    self.state.task_id.as_str(),
                    self.state.context_id.as_str(),
                    status,
                );
                if let Err(e) = self.apply(event.into()).await {
                    warn!(error = %e, "could not mark the task failed");
                }
            }
            _ => {}
        }
    }

    /// Stores the snapshot with `events` appended to the log; on failure the snapshot
    /// goes back to the stored one, so nothing unstored is ever announced.
    async fn save(&mut self, events: &[crate::store::LoggedEvent]) -> Result<(), SinkError> {
        let Some(task) = &self.state.snapshot else {
            return Ok(());
        };
        let mut stored = self.store.commit_shared(task, events).await;
        if let Err(e) = &stored
            && e.is_transient()
        {
            let first = e.clone();
            // The store may come back: the task waits for it (and its agent, whose
            // next events queue up behind this write, with it). Boxed: rarely taken.
            stored = Box::pin(commit_when_back(
                &*self.store,
                task,
                events,
                first,
                &self.handover,
            ))
            .await;
        }
        if let Err(e) = stored {
            warn!(error = %e, "saving the task failed; reloading the stored snapshot");
            match self.store.get(&self.state.task_id).await {
                Ok(Some((stored, seq))) => {
                    self.state.snapshot = Some(Arc::new(stored));
                    self.state.seq = seq;
                }
                Ok(None) => self.state.snapshot = None,
                Err(_) => {}
            }
            return Err(SinkError::Store(e));
        }
        if let Some((seq, _)) = events.last() {
            self.state.seq = *seq;
        }
        Ok(())
    }

    /// Numbers `events`, stores them with the snapshot, then announces them and
    /// notifies webhooks.
    async fn commit(&mut self, events: Vec<StreamEvent>) -> Result<(), SinkError> {
        if events.is_empty() {
            return Ok(());
        }
        let state_changed = events
            .iter()
            .any(|e| matches!(e, StreamEvent::StatusUpdate(_) | StreamEvent::Task(_)));
        let first = self.state.seq + 1;
        let logged: Vec<crate::store::LoggedEvent> = events
            .into_iter()
            .zip(first..)
            .map(|(e, seq)| (seq, Arc::new(e)))
            .collect();
        self.save(&logged).await?;
        let stops = !self.waiters.is_empty() && logged.iter().any(|(_, e)| ends_stream(e));
        for (seq, e) in logged {
            self.announce(|| Update::Event(seq, e));
        }
        // Ended with no stream ever following it (a blocking send's task, most often):
        // no client holds the number of any of its events to resume after.
        if self.broadcast.is_none()
            && let Some(task) = &self.state.snapshot
            && task.state().is_terminal()
        {
            self.store.ended_unfollowed(&self.state.task_id);
        }
        if let Some(task) = self.state.snapshot.clone() {
            self.tell_waiters(&task, true, stops);
        }
        if state_changed
            && let (Some(push), Some(task)) = (&self.push, &self.state.snapshot)
            && push.is_armed(&self.state.task_id)
        {
            self.followed.store(true, Ordering::Relaxed);
            let queue = self
                .push_queue
                .get_or_insert_with(|| push.worker(&self.tracker));
            if queue.try_send(task.task.clone()).is_err() {
                warn!("push-notification queue full; a notification was dropped");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of a task actor's future, which every live task holds for its whole life:
    /// commands carry boxed events and the future is an `async move` block, so it stays
    /// this small. Fails when a change undoes that.
    const ACTOR_FUTURE_MAX: usize = 1_700;

    #[test]
    fn the_actor_future_stays_small() {
        let actor = Actor {
            state: ActorState {
                task_id: TaskId::new("t"),
                context_id: ContextId::new("c"),
                snapshot: None,
                seq: 0,
                first_message: None,
                replied: false,
            },
            followed: Arc::default(),
            broadcast: Some(broadcast::channel(1).0),
            waiters: Vec::new(),
            store: Arc::new(crate::store::InMemoryTaskStore::new()),
            push: None,
            push_queue: None,
            tracker: TaskTracker::new(),
            handover: CancellationToken::new(),
        };
        let (_tx, rx) = mpsc::channel(1);
        let size = std::mem::size_of_val(&actor.run(rx));
        eprintln!("actor future {size} B");
        assert!(
            size <= ACTOR_FUTURE_MAX,
            "the task actor's future grew to {size} bytes (bound {ACTOR_FUTURE_MAX})"
        );
    }
    use crate::store::apply::tests::chunk;
    use crate::types::{Part, Role};

    type MemoryStore = crate::store::InMemoryTaskStore;

    /// A manager on an in-memory store, and an actor for a new task `id` in context `c`.
    fn started(id: &TaskId) -> (Arc<MemoryStore>, TaskManager, ActorHandle) {
        let store = Arc::new(MemoryStore::new());
        let manager = TaskManager::new(
            store.clone(),
            None,
            TaskTracker::new(),
            CancellationToken::new(),
        );
        let first = Message::new(Role::User, vec![Part::text("hi")]);
        let actor = manager.open_new(id.clone(), ContextId::new("c"), first, Origin::default());
        (store, manager, actor)
    }

    /// A status update of task `id` in context `c`.
    fn status_update(id: &TaskId, status: TaskStatus) -> StreamEvent {
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent::new(id.as_str(), "c", status))
    }

    /// A request waiting for the end hears nothing of the events before it, then the
    /// task as stored once an event ends the stream; one waiting for the first event
    /// hears the task as that event left it; one whose client went away is passed
    /// over. A direct reply is heard as the reply.
    #[tokio::test]
    async fn a_request_waiting_for_the_end_hears_only_the_end() {
        let id = TaskId::new("t");
        let (store, manager, actor) = started(&id);
        let status = |state| status_update(&id, TaskStatus::new(state));
        drop(actor.await_event(Until::End).await.unwrap());
        let mut end = actor.await_event(Until::End).await.unwrap();
        let first = actor.await_event(Until::FirstEvent).await.unwrap();
        actor.apply(status(TaskState::Working)).await.unwrap();
        let heard = |end| tokio::time::timeout(std::time::Duration::from_secs(5), end);
        let Ok(Ok(Ending::Task(task))) = heard(first).await else {
            panic!("the first event is heard with the task");
        };
        assert_eq!(task.state(), TaskState::Working);
        actor
            .apply(StreamEvent::ArtifactUpdate(chunk("a", "one", true)))
            .await
            .unwrap();
        assert!(end.try_recv().is_err(), "woken before the end");
        actor.apply(status(TaskState::Completed)).await.unwrap();
        let Ok(Ok(Ending::Task(task))) = heard(end).await else {
            panic!("the end is heard with the task");
        };
        let (stored, _) = store.get(&id).await.unwrap().unwrap();
        assert_eq!(task.state(), TaskState::Completed);
        assert_eq!(task.task, stored.task);

        let replying = manager.open_new(
            TaskId::new("r"),
            ContextId::new("c"),
            Message::new(Role::User, vec![Part::text("hi")]),
            Origin::default(),
        );
        let end = replying.await_event(Until::End).await.unwrap();
        replying
            .apply(StreamEvent::Message(Message::agent_text("a direct answer")))
            .await
            .unwrap();
        let Ok(Ok(Ending::Message(m))) = heard(end).await else {
            panic!("a direct reply is heard as the reply");
        };
        assert_eq!(m.text(), "a direct answer");
    }

    /// Events of two senders committed together (the run asking again, an answer taken)
    /// that leave the task working have not stopped it: a request waiting for the end
    /// is not told of a working task, and hears the end when it comes.
    #[tokio::test]
    async fn a_stop_undone_in_the_same_commit_is_not_the_end() {
        let id = TaskId::new("t");
        let (_store, _manager, actor) = started(&id);
        let status = |state| status_update(&id, TaskStatus::new(state));
        actor.apply(status(TaskState::Working)).await.unwrap();
        let mut end = actor.await_event(Until::End).await.unwrap();
        // Both queued before the actor runs (one thread): one group commit.
        let (asked, taken) = tokio::join!(
            actor.apply(status(TaskState::InputRequired)),
            actor.apply(status(TaskState::Working)),
        );
        asked.unwrap();
        taken.unwrap();
        assert!(end.try_recv().is_err(), "told of a task that is working");
        actor.apply(status(TaskState::Completed)).await.unwrap();
        let heard = tokio::time::timeout(std::time::Duration::from_secs(5), end).await;
        let Ok(Ok(Ending::Task(task))) = heard else {
            panic!("the end is heard with the task");
        };
        assert_eq!(task.state(), TaskState::Completed);
    }

    /// A request's message is answered by the work its handle holds: another
    /// executor's question said before that work took the message (a resumed run asking
    /// again what the message answers) does not end the request; a question after it
    /// does, and so does the work returning while the task waits.
    #[tokio::test]
    async fn a_question_before_the_message_is_taken_is_not_its_end() {
        let id = TaskId::new("t");
        let (store, manager, run) = started(&id);
        let status = |state| status_update(&id, TaskStatus::new(state));
        run.apply(status(TaskState::Working)).await.unwrap();
        let again = || async {
            let (task, seq) = store.get(&id).await.unwrap().unwrap();
            manager.open_existing(task, seq)
        };
        let answering = again().await;
        let mut end = answering.await_event(Until::End).await.unwrap();
        run.apply(status(TaskState::InputRequired)).await.unwrap();
        assert!(end.try_recv().is_err(), "ended by a question it answers");
        answering.apply(status(TaskState::Working)).await.unwrap();
        run.apply(status(TaskState::InputRequired)).await.unwrap();
        let heard = |end| tokio::time::timeout(std::time::Duration::from_secs(5), end);
        let Ok(Ok(Ending::Task(task))) = heard(end).await else {
            panic!("the next question is heard with the task");
        };
        assert_eq!(task.state(), TaskState::InputRequired);

        // Work that takes a message and says nothing: the request hears the task as it
        // waits once the work returns.
        let silent = again().await;
        let mut end = silent.await_event(Until::End).await.unwrap();
        run.apply(status(TaskState::InputRequired)).await.unwrap();
        assert!(end.try_recv().is_err());
        silent.done().await;
        let Ok(Ok(Ending::Task(task))) = heard(end).await else {
            panic!("the waiting task is heard when the work returns");
        };
        assert_eq!(task.state(), TaskState::InputRequired);

        // Work that hands the message on and returns: the question the task showed
        // before is not the request's end; the next one is.
        let handing_on = again().await;
        let mut end = handing_on.await_event(Until::End).await.unwrap();
        handing_on.done().await;
        run.apply(status(TaskState::Working)).await.unwrap();
        assert!(end.try_recv().is_err(), "ended by the question it answers");
        run.apply(status(TaskState::Completed)).await.unwrap();
        let Ok(Ok(Ending::Task(task))) = heard(end).await else {
            panic!("the end is heard with the task");
        };
        assert_eq!(task.state(), TaskState::Completed);
    }

    /// A store may keep a snapshot less often than every event and replay the events
    /// logged after it (`apply_event`); the replay must give the actor's own snapshot.
    #[tokio::test]
    async fn replaying_the_logged_events_gives_the_actors_snapshot() {
        let id = TaskId::new("t");
        let (store, _manager, actor) = started(&id);
        // Followed, so that its log is kept whole past its end.
        let _following = actor.subscribe().await.unwrap();
        let status = |state, text: &str| {
            let status = TaskStatus::new(state).with_message(Message::agent_text(text));
            status_update(&id, status)
        };
        let events = [
            status(TaskState::Working, "on it"),
            StreamEvent::ArtifactUpdate(chunk("a", "one ", false)),
            StreamEvent::ArtifactUpdate(chunk("a", "two", true)),
            StreamEvent::Message(Message::agent_text("an aside")),
            status(TaskState::Working, "still on it"),
            StreamEvent::ArtifactUpdate(chunk("b", "x", false)),
            StreamEvent::ArtifactUpdate(chunk("a", "new", false)),
            status(TaskState::Completed, "done"),
        ];
        for e in events {
            actor.apply(e).await.unwrap();
        }
        let (stored, seq) = store.get(&id).await.unwrap().unwrap();
        let logged = store.events_after(&id, 0).await.unwrap();
        assert_eq!(logged.len() as u64, seq);
        assert!(matches!(&*logged[0].1, StreamEvent::Task(_)));
        // The log starts with the task as created; the rest replays onto it.
        let mut task = Task::new(id.as_str(), "c", TaskStatus::new(TaskState::Unspecified));
        for (_, e) in &logged {
            apply_event(&mut task, e);
        }
        assert_eq!(task, stored.task);
        assert_eq!(stored.artifacts.len(), 2);
        assert_eq!(stored.history.len(), 4, "{:?}", stored.history);
    }

    /// A task is followed once a stream subscribes to it, or once a webhook is to hear
    /// it; not before.
    #[tokio::test]
    async fn a_task_is_followed_by_a_stream_or_a_webhook() {
        let id = TaskId::new("t");
        let (_store, _manager, actor) = started(&id);
        assert!(!actor.followed());
        let _following = actor.subscribe().await.unwrap();
        assert!(actor.followed());

        let store: Arc<MemoryStore> = Arc::new(MemoryStore::new());
        let push = PushNotifier::new(store.clone(), std::time::Duration::from_secs(1), false);
        let manager = TaskManager::new(
            store,
            Some(push),
            TaskTracker::new(),
            CancellationToken::new(),
        );
        let first = Message::new(Role::User, vec![Part::text("hi")]);
        let actor = manager.open_new(id.clone(), ContextId::new("c"), first, Origin::default());
        assert!(!actor.followed());
        manager.arm_push(&id);
        assert!(actor.followed());

        // Handed over to another server: delivering is that one's now, and this one
        // keeps nothing of it.
        manager.hand_over(&id);
        let push = manager.shared.push.as_ref().unwrap();
        assert!(!push.is_armed(&id));
    }

    /// A task is followed once another server says it follows it (that task only), or
    /// once that cannot be known (every live task).
    #[tokio::test]
    async fn a_task_is_followed_when_another_server_says_so_or_may_have() {
        let (_store, manager, one) = started(&TaskId::new("one"));
        let first = Message::new(Role::User, vec![Part::text("hi")]);
        let two = manager.open_new(
            TaskId::new("two"),
            ContextId::new("c"),
            first,
            Origin::default(),
        );
        manager.follow(&TaskId::new("one"));
        manager.follow(&TaskId::new("gone"));
        assert!(one.followed());
        assert!(!two.followed(), "another task");
        manager.follow_all();
        assert!(two.followed());
    }

    /// A task that ends with no stream ever following it keeps no event log in a store
    /// that drops it: a read of the log (a client resuming after a number it made up)
    /// gives the finished task, numbered as its last event, and nothing after that
    /// number. One followed to its end keeps its log whole.
    #[tokio::test]
    async fn a_task_that_ends_unfollowed_keeps_its_end_not_its_log() {
        let events = |id: &TaskId| {
            let working = TaskStatus::new(TaskState::Working);
            [
                status_update(id, working.clone()),
                status_update(id, working.with_message(Message::agent_text("on it"))),
                status_update(id, TaskStatus::new(TaskState::Completed)),
            ]
        };
        let id = TaskId::new("t");
        let (store, manager, actor) = started(&id);
        for e in events(&id) {
            actor.apply(e).await.unwrap();
        }
        let (stored, seq) = store.get(&id).await.unwrap().unwrap();
        assert_eq!(seq, 4, "the task as created, then three events");
        assert_eq!(stored.state(), TaskState::Completed);
        let logged = store.events_after(&id, 1).await.unwrap();
        let [(n, event)] = &logged[..] else {
            panic!("one event stands for the log: {logged:?}");
        };
        assert_eq!(*n, seq);
        let StreamEvent::Task(task) = &**event else {
            panic!("the finished task stands for the log: {event:?}");
        };
        assert_eq!(*task, stored.task);
        assert!(store.events_after(&id, seq).await.unwrap().is_empty());

        let followed = TaskId::new("f");
        let actor = manager.open_new(
            followed.clone(),
            ContextId::new("c"),
            Message::new(Role::User, vec![Part::text("hi")]),
            Origin::default(),
        );
        let _following = actor.subscribe().await.unwrap();
        for e in events(&followed) {
            actor.apply(e).await.unwrap();
        }
        let logged = store.events_after(&followed, 1).await.unwrap();
        let numbers: Vec<u64> = logged.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [2, 3, 4]);
        assert!(matches!(&*logged[2].1, StreamEvent::StatusUpdate(_)));
    }
}

//! Where the server keeps tasks, their event logs and their push-notification configs.
//!
//! A trait so that a durable store (SQLite, PostgreSQL) can replace the in-memory one
//! without the server changing. The server commits a task's new snapshot together with
//! the events that produced it, each numbered (`seq`, from 1, per task), *before* it
//! announces them; so a store always holds a state some client may have seen, and a
//! client that reconnects with the number of the last event it saw (SSE `Last-Event-ID`)
//! can be given exactly the events it missed.

pub(crate) mod apply;
pub(crate) mod cluster;
pub(crate) mod notices;

pub use apply::apply_event;
pub use cluster::{Cluster, ClusterRequest, Forwarded, Owner};
pub use notices::{Follows, Notice, NoticeBoard, Notices};

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use futures::future::BoxFuture;

use crate::types::{ContextId, StreamEvent, Task, TaskId, TaskPushNotificationConfig, TaskState};
use sizes::task as task_bytes;

/// The error a store keeps as the cause of a failure: the database's own error (or an
/// I/O or decoding error), shared so that the failure can be reported to every caller
/// that waited on the same write.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// Why a task store could not do what it was asked. The server answers each with an
/// internal error and logs it; the cause stays in the log, never on the wire.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store takes no more requests: its writer has stopped (the process is
    /// shutting down).
    #[error("the task store is closed")]
    Closed,
    /// Something stored cannot be read back (`what`: a task, an event, a config).
    #[error("a stored {what} is unreadable: {cause}")]
    Unreadable {
        /// What could not be read.
        what: &'static str,
        /// Why.
        #[source]
        cause: Cause,
    },
    /// The database (or the file system under it) failed.
    #[error("the task store failed: {0}")]
    Backend(#[source] Cause),
    /// Another server runs this task now (servers sharing a store): this one must not
    /// write for it.
    #[error("task {0} is run by another server now")]
    Fenced(TaskId),
    /// The database refused what it was given (a value it cannot hold, one past its
    /// limits): written again, it would be refused again.
    #[error("the task store refused the data: {0}")]
    Refused(#[source] Cause),
    /// The store failed moments ago and is not asked again until it has had time to
    /// come back: the request fails at once rather than waiting on the database.
    #[error("the task store is unavailable (it failed {ago_ms} ms ago: {cause})")]
    Unavailable {
        /// How long ago it failed.
        ago_ms: u64,
        /// How it failed.
        #[source]
        cause: Cause,
    },
}

impl StoreError {
    /// Whether the failure may pass by itself (the database or the disk under it
    /// failing, unreachable, restarting, full or locked): work that needs the write
    /// waits and tries again rather than giving up. A closed store, an unreadable row,
    /// a fenced task and refused data are not.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Backend(_) | StoreError::Unavailable { .. }
        )
    }

    /// A failure of the database, keeping its error as the cause.
    pub fn backend(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
        StoreError::Backend(Arc::new(e))
    }

    /// A stored `what` that cannot be decoded.
    pub fn unreadable(
        what: &'static str,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Unreadable {
            what,
            cause: Arc::new(e),
        }
    }
}

/// One entry of a task's event log.
pub type LoggedEvent = (u64, Arc<StreamEvent>);

/// A task as a store keeps it: the task, and who started it where — the server's
/// record, never on the wire. Reads as the task it holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: Task,
    /// Who started it (the id of the server's `Caller`), when the server knows.
    pub initiator: Option<String>,
    /// The tenant it was made in: it is reached only in that tenant.
    pub tenant: Option<String>,
}

impl StoredTask {
    /// `task`, started by nobody known, in no tenant.
    pub fn new(task: Task) -> StoredTask {
        StoredTask {
            task,
            initiator: None,
            tenant: None,
        }
    }
}

impl From<Task> for StoredTask {
    fn from(task: Task) -> StoredTask {
        StoredTask::new(task)
    }
}

impl std::ops::Deref for StoredTask {
    type Target = Task;
    fn deref(&self) -> &Task {
        &self.task
    }
}

impl std::ops::DerefMut for StoredTask {
    fn deref_mut(&mut self) -> &mut Task {
        &mut self.task
    }
}

/// What a push notification's body is: the generation of the request that set the
/// webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PushBody {
    /// v0.3: the task (§9.5 of v0.3).
    #[default]
    Task,
    /// v1.0: a `StreamResponse` holding the task (§4.3.3 of v1.0).
    StreamResponse,
}

/// A webhook for a task's updates, as a store keeps it: the config a client set, and
/// the body its notifications take (the server's record, never sent to a client).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoredPushConfig {
    /// The config (its `id` set: the server names one a client left unnamed).
    pub config: TaskPushNotificationConfig,
    /// What its notifications carry.
    pub body: PushBody,
}

/// Which tasks ListTasks asks for: newest status first, a page at a time.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<ContextId>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status changed at or after this (milliseconds since the epoch).
    pub changed_since_ms: Option<i64>,
    /// Most tasks on the page.
    pub limit: usize,
    /// Where the previous page ended.
    pub after: Option<TaskCursor>,
    /// Only tasks this principal started (by [`StoredTask::initiator`]).
    pub initiator: Option<String>,
    /// Only tasks of this tenant (by [`StoredTask::tenant`]); `None`: only
    /// tasks made in no tenant.
    pub tenant: Option<String>,
}

/// A place in the list order: tasks sort by status time, newest first, then by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TaskCursor {
    /// When the task's status last changed (ms since the epoch).
    pub status_ms: i64,
    /// The task's id, which breaks ties.
    pub id: TaskId,
}

impl TaskCursor {
    /// The cursor of `task`: its status time (0 when it has none) and id.
    pub fn of(task: &Task) -> TaskCursor {
        TaskCursor {
            status_ms: status_ms(task),
            id: TaskId::new(&task.id),
        }
    }
}

/// One page of tasks, and how many match in all.
#[derive(Debug, Clone, Default)]
pub struct TaskPage {
    /// The tasks of this page, with who started them where.
    pub tasks: Vec<StoredTask>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<TaskCursor>,
    /// How many tasks match the query in all.
    pub total: usize,
}

/// A task's status time in milliseconds since the epoch (0 when it has none or it does
/// not parse).
pub fn status_ms(task: &Task) -> i64 {
    task.status().timestamp.map_or(0, |t| t.unix_millis())
}

/// Whether `task` passes the filters of `q` (not its page).
pub fn matches(q: &TaskQuery, task: &StoredTask, ms: i64) -> bool {
    q.context_id
        .as_ref()
        .is_none_or(|c| c.as_str() == task.context_id)
        && q.state.is_none_or(|s| s == task.state())
        && q.changed_since_ms.is_none_or(|since| ms >= since)
        && q.initiator
            .as_deref()
            .is_none_or(|who| task.initiator.as_deref() == Some(who))
        && q.tenant == task.tenant
}

/// Persistence for tasks, their event logs, and push configs. Implementations must be
/// cheap to share, and must apply each call atomically.
pub trait TaskStore: Send + Sync + 'static {
    /// The latest snapshot of a task, with the `seq` of its last logged event (0 if none).
    /// A store may keep snapshots less often than every commit and bring the one it
    /// kept up to date with [`apply_event`] over the events after it.
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>>;
    /// Replaces the snapshot of `task.id` and appends `events` (numbered by the caller,
    /// consecutively after the last one) to its log, in one step.
    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// [`TaskStore::commit`] of a task its caller shares: a store that keeps tasks in
    /// memory keeps this one rather than a copy (the task actor's snapshot, which it
    /// no longer changes once the task has ended). The default commits `task` as any.
    fn commit_shared<'a>(
        &'a self,
        task: &'a Arc<StoredTask>,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.commit(task, events)
    }
    /// Told that `task` has ended without any stream ever following it: no client was
    /// given the number of any of its events, so none can resume after one, and a store
    /// may keep the finished task without its event log. A store that drops the log
    /// answers a read of it after an earlier number ([`TaskStore::events_after`]) with
    /// the finished task itself, numbered as its last event. By default the log is kept.
    fn ended_unfollowed(&self, _task: &TaskId) {}
    /// The logged events of a task with `seq > after`, in order.
    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>>;
    /// The task a message (by `messageId`) created, if any: a client resending the same
    /// message after a lost response gets that task rather than a second one.
    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>>;
    /// Every task not in a terminal state, with its last `seq`: the work a restarted
    /// server resumes.
    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>>;
    /// Removes terminal tasks last changed before `before` (their logs and push configs
    /// too); how many were removed.
    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>>;
    /// Adds or replaces (by `config.id`, which the caller has set) a push config.
    fn set_push_config(
        &self,
        task: &TaskId,
        config: StoredPushConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
    /// All push configs of a task, in the order they were first set.
    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>>;
    /// Removes one push config; whether it existed.
    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>>;
    /// One page of the tasks `query` asks for, newest status first, through an index
    /// kept in that order (never a scan of every task).
    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>>;
    /// How the servers sharing this store divide its tasks; `None` (the default) for a
    /// store one server has to itself, which runs every task.
    fn cluster(&self) -> Option<&dyn Cluster> {
        None
    }
}

/// Keeps everything in process memory: fast, and gone at exit.
#[derive(Debug, Clone)]
pub struct InMemoryTaskStore {
    // A std mutex: every critical section is a map operation, never held across an await.
    inner: Arc<Mutex<Maps>>,
    /// Most finished tasks kept (see [`DEFAULT_FINISHED_KEPT`]).
    finished_kept: usize,
    /// Most bytes of finished tasks kept, as `task_bytes` and `log_bytes` count them (see
    /// [`DEFAULT_FINISHED_BYTES_KEPT`]).
    finished_bytes_kept: usize,
    /// Whether the tasks dropped past the bounds are kept for [`Self::take_evicted`].
    reports_evictions: bool,
}

/// How many finished tasks an in-memory store keeps by default, the oldest finished
/// dropped first: memory stays bounded however long the process serves (a finished
/// task with its event log is tens of kilobytes), whatever the age-based pruning says.
pub const DEFAULT_FINISHED_KEPT: usize = 10_000;

/// How many bytes of finished tasks (their content and event logs, as `task_bytes` and
/// `log_bytes` count them) an in-memory store keeps by default, the oldest finished
/// dropped first: a few large tasks (long streamed artifacts) cannot fill memory where
/// the count would allow them. The heap they take is some two or three times this.
pub const DEFAULT_FINISHED_BYTES_KEPT: usize = 64 << 20;

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self {
            inner: Default::default(),
            finished_kept: DEFAULT_FINISHED_KEPT,
            finished_bytes_kept: DEFAULT_FINISHED_BYTES_KEPT,
            reports_evictions: false,
        }
    }
}

#[derive(Debug)]
struct Entry {
    /// The task as of event `applied`: brought up to date from `log` when read (see
    /// [`Entry::current`]), not at every commit. Shared with the task's actor when it
    /// committed it so (see [`TaskStore::commit_shared`]): copied only if changed here.
    task: Arc<StoredTask>,
    applied: u64,
    /// The state of the last commit, current whether or not `task` is.
    state: TaskState,
    /// The events since the task began; none once it has ended unfollowed (see
    /// [`TaskStore::ended_unfollowed`]), when `task` is whole and `applied` its last
    /// number.
    log: Vec<LoggedEvent>,
    changed: SystemTime,
    /// Its key in `Maps::by_time`.
    at: TaskCursor,
}

impl Entry {
    /// The task as last committed: the events logged since `task` was taken are
    /// applied to it first.
    fn current(&mut self) -> &StoredTask {
        let start = self.log.partition_point(|(s, _)| *s <= self.applied);
        if start < self.log.len() {
            let task = Arc::make_mut(&mut self.task);
            for (_, e) in &self.log[start..] {
                apply::apply_event(task, e);
            }
        }
        self.applied = self.seq();
        &self.task
    }

    /// The number of its last event.
    fn seq(&self) -> u64 {
        last_seq(&self.log).max(self.applied)
    }
}

#[derive(Debug, Default)]
struct Maps {
    /// Boxed: a task is large, and a hash map's empty slots are as large as its full ones.
    tasks: HashMap<TaskId, Box<Entry>>,
    by_message: HashMap<String, TaskId>,
    push: HashMap<TaskId, Vec<StoredPushConfig>>,
    /// Every task by status time: the list order.
    by_time: BTreeSet<TaskCursor>,
    /// Finished tasks, in the order they finished, with their size: the first to go
    /// past the bounds.
    finished: std::collections::VecDeque<(TaskId, usize)>,
    /// The sizes in `finished`, summed.
    finished_bytes: usize,
    /// Finished tasks dropped past the bounds since the last [`InMemoryTaskStore::take_evicted`].
    evicted: Vec<TaskId>,
}

impl Maps {
    /// Removes a task and what refers to it; the task's entry is handed back, for the
    /// caller to drop once the lock is released (freeing a task and its log is most of
    /// the work, and every other commit waits while the lock is held).
    fn remove(&mut self, id: &TaskId) -> Option<Box<Entry>> {
        self.push.remove(id);
        let e = self.tasks.remove(id)?;
        self.by_time.remove(&e.at);
        if let Some(first) = e.task.history.first() {
            self.by_message.remove(&first.message_id);
        }
        Some(e)
    }
}

impl InMemoryTaskStore {
    /// Commits `task` (see [`TaskStore::commit`]), keeping `shared()` where the task is
    /// stored whole.
    fn keep(
        &self,
        task: &StoredTask,
        shared: impl Fn() -> Arc<StoredTask>,
        events: &[LoggedEvent],
    ) {
        let (kept, bytes_kept) = (self.finished_kept, self.finished_bytes_kept);
        let reports = self.reports_evictions;
        let dropped = self.with(|m| {
            let mut dropped = Vec::new();
            let ms = status_ms(task);
            // Looked up by its text: a task's id is made into a key once, at its first
            // commit, and shared from its entry after.
            let fresh = !m.tasks.contains_key(task.id.as_str());
            if fresh {
                let id = TaskId::new(&task.id);
                let entry = Box::new(Entry {
                    task: shared(),
                    applied: events.last().map_or(0, |(s, _)| *s),
                    state: task.state(),
                    log: Vec::new(),
                    changed: SystemTime::now(),
                    at: TaskCursor { status_ms: ms, id },
                });
                m.tasks.insert(entry.at.id.clone(), entry);
            }
            let Some(entry) = m.tasks.get_mut(task.id.as_str()) else {
                unreachable!("a task's entry is there once made");
            };
            let id = entry.at.id.clone();
            // Moved in the time index only when its status time moved (an artifact
            // chunk leaves it where it is).
            if fresh {
                m.by_time.insert(entry.at.clone());
            } else if entry.at.status_ms != ms {
                m.by_time.remove(&entry.at);
                entry.at.status_ms = ms;
                m.by_time.insert(entry.at.clone());
            }
            // The events are logged, and applied to the stored task only when it is
            // read: a copy of the whole task per commit would make streaming a large
            // artifact cost its size at every chunk, and applying each event as it
            // comes would cost every run's events again for tasks nobody reads while
            // they run. A commit without events (a message added to the history), with
            // a whole task or ending the task replaces it, as the durable stores store a
            // snapshot then.
            let state = task.state();
            let finishes = state.is_terminal() && (fresh || !entry.state.is_terminal());
            let whole = events.is_empty()
                || state.is_terminal()
                || events
                    .iter()
                    .any(|(_, e)| matches!(**e, StreamEvent::Task(_)));
            entry.log.extend(events.iter().cloned());
            if whole && !fresh {
                entry.task = shared();
                entry.applied = entry.seq();
            }
            entry.state = state;
            entry.changed = SystemTime::now();
            // Looked up before it is copied: it is there after the task's first commit.
            if let Some(first) = task.history.first()
                && !m.by_message.contains_key(&first.message_id)
            {
                m.by_message.insert(first.message_id.clone(), id.clone());
            }
            if finishes {
                entry.current();
                let size = task_bytes(&entry.task) + log_bytes(&entry.log);
                m.finished.push_back((id, size));
                m.finished_bytes += size;
                while m.finished.len() > kept
                    || (m.finished_bytes > bytes_kept && m.finished.len() > 1)
                {
                    if let Some((oldest, size)) = m.finished.pop_front() {
                        m.finished_bytes -= size;
                        dropped.extend(m.remove(&oldest));
                        if reports {
                            m.evicted.push(oldest);
                        }
                    }
                }
            }
            dropped
        });
        drop(dropped);
    }

    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps at most `n` finished tasks (at least one).
    pub fn with_finished_kept(n: usize) -> Self {
        Self {
            finished_kept: n.max(1),
            ..Self::default()
        }
    }

    /// The same store keeping at most `bytes` of finished tasks (the last one to finish
    /// is kept whatever its size).
    pub fn keeping_bytes(mut self, bytes: usize) -> Self {
        self.finished_bytes_kept = bytes;
        self
    }

    /// The same store keeping the ids of the finished tasks it drops past its bounds
    /// for [`Self::take_evicted`], which the owner must then call after each commit.
    pub fn reporting_evictions(mut self) -> Self {
        self.reports_evictions = true;
        self
    }

    /// The finished tasks dropped past the store's bounds since the last call (with
    /// [`Self::reporting_evictions`]; none otherwise): what a store keeping more beside
    /// each task (the engine's runs) drops with them.
    pub fn take_evicted(&self) -> Vec<TaskId> {
        self.with(|m| std::mem::take(&mut m.evicted))
    }

    /// Whether the store holds a task.
    pub fn contains(&self, id: &TaskId) -> bool {
        self.with(|m| m.tasks.contains_key(id))
    }

    fn with<R>(&self, f: impl FnOnce(&mut Maps) -> R) -> R {
        // A poisoned lock means a panic mid-update of a plain map; the maps stay usable.
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

fn last_seq(log: &[LoggedEvent]) -> u64 {
    log.last().map_or(0, |(s, _)| *s)
}

/// What an event log holds, in bytes, as [`task_bytes`] counts a task's.
fn log_bytes(log: &[LoggedEvent]) -> usize {
    log.iter()
        .map(|(_, e)| {
            48 + match &**e {
                StreamEvent::Task(t) => sizes::task(t),
                StreamEvent::Message(m) => sizes::message(m),
                StreamEvent::StatusUpdate(u) => {
                    128 + u.status().message.as_ref().map_or(0, sizes::message)
                        + sizes::meta(&u.metadata)
                }
                StreamEvent::ArtifactUpdate(u) => {
                    128 + sizes::parts(&u.artifact().parts) + sizes::meta(&u.metadata)
                }
            }
        })
        .sum()
}

/// What a task and its parts hold, in bytes, roughly: the text, data and ids in them
/// plus a fixed cost per value; walked once, when the task finishes (no
/// serialization). [`task_bytes`] and [`log_bytes`] add them up.
mod sizes {
    use crate::types::{Content, Message, Metadata, Part, Task};

    fn value(v: &serde_json::Value) -> usize {
        use serde_json::Value;
        16 + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(value).sum(),
            Value::Object(m) => map(m),
            _ => 0,
        }
    }

    fn map(m: &serde_json::Map<String, serde_json::Value>) -> usize {
        m.iter().map(|(k, v)| 16 + k.len() + value(v)).sum()
    }

    pub(super) fn meta(m: &Option<Metadata>) -> usize {
        m.as_deref().map_or(0, map)
    }

    pub(super) fn parts(ps: &[Part]) -> usize {
        ps.iter()
            .map(|p| {
                64 + p.filename.len()
                    + p.media_type.len()
                    + meta(&p.metadata)
                    + match &p.content {
                        Some(Content::Text(t) | Content::Url(t)) => t.len(),
                        Some(Content::Raw(b)) => b.len(),
                        Some(Content::Data(d)) => value(&d.0),
                        None => 0,
                    }
            })
            .sum()
    }

    pub(super) fn message(m: &Message) -> usize {
        160 + parts(&m.parts) + meta(&m.metadata)
    }

    pub(super) fn task(t: &Task) -> usize {
        256 + t.history.iter().map(message).sum::<usize>()
            + t.artifacts
                .iter()
                .map(|a| 96 + parts(&a.parts) + meta(&a.metadata))
                .sum::<usize>()
            + t.status().message.as_ref().map_or(0, message)
            + meta(&t.metadata)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>> {
        let task = self.with(|m| m.tasks.get_mut(id).map(|e| (e.current().clone(), e.seq())));
        Box::pin(async move { Ok(task) })
    }

    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.keep(task, || Arc::new(task.clone()), events);
        Box::pin(async { Ok(()) })
    }

    fn commit_shared<'a>(
        &'a self,
        task: &'a Arc<StoredTask>,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.keep(task, || task.clone(), events);
        Box::pin(async { Ok(()) })
    }

    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>> {
        let events = self.with(|m| {
            m.tasks.get(id).map_or_else(Vec::new, |e| {
                if e.log.is_empty() && e.applied > after {
                    // It ended unfollowed: the whole task stands for its log.
                    let task = StreamEvent::Task(e.task.task.clone());
                    return vec![(e.applied, Arc::new(task))];
                }
                let start = e.log.partition_point(|(s, _)| *s <= after);
                e.log[start..].to_vec()
            })
        });
        Box::pin(async move { Ok(events) })
    }

    fn ended_unfollowed(&self, id: &TaskId) {
        let log = self.with(|m| {
            let entry = m.tasks.get_mut(id)?;
            if !entry.state.is_terminal() || entry.log.is_empty() {
                return None;
            }
            entry.current();
            let log = std::mem::take(&mut entry.log);
            // It finished moments ago: at the back of the finished, or near it.
            let size = log_bytes(&log);
            // (Saturating: an event logged after its end, were there one, was not counted.)
            if let Some((_, counted)) = m.finished.iter_mut().rev().find(|(t, _)| t == id) {
                let freed = size.min(*counted);
                *counted -= freed;
                m.finished_bytes = m.finished_bytes.saturating_sub(freed);
            }
            Some(log)
        });
        // Freed once the lock is released, while the events are still in the cache: a
        // log freed when its task is evicted, long after, costs several times as much.
        drop(log);
    }

    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        let id = self.with(|m| m.by_message.get(message_id).cloned());
        Box::pin(async move { Ok(id) })
    }

    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        let tasks = self.with(|m| {
            m.tasks
                .values_mut()
                .filter(|e| !e.state.is_terminal())
                .map(|e| (e.current().clone(), e.seq()))
                .collect()
        });
        Box::pin(async move { Ok(tasks) })
    }

    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        let removed = self.with(|m| {
            let old: Vec<TaskId> = m
                .tasks
                .iter()
                .filter(|(_, e)| e.state.is_terminal() && e.changed < before)
                .map(|(id, _)| id.clone())
                .collect();
            let removed: Vec<Box<Entry>> = old.iter().filter_map(|id| m.remove(id)).collect();
            m.finished.retain(|(id, _)| m.tasks.contains_key(id));
            m.finished_bytes = m.finished.iter().map(|(_, size)| size).sum();
            m.tasks.shrink_to_fit();
            m.by_message.shrink_to_fit();
            removed
        });
        let n = removed.len();
        drop(removed);
        Box::pin(async move { Ok(n) })
    }

    fn set_push_config(
        &self,
        task: &TaskId,
        config: StoredPushConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.with(|m| {
            let list = m.push.entry(task.clone()).or_default();
            match list.iter_mut().find(|c| c.config.id == config.config.id) {
                Some(existing) => *existing = config,
                None => list.push(config),
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>> {
        let list = self.with(|m| m.push.get(task).cloned().unwrap_or_default());
        Box::pin(async move { Ok(list) })
    }

    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let removed = self.with(|m| {
            let Some(list) = m.push.get_mut(task) else {
                return false;
            };
            let before = list.len();
            list.retain(|c| c.config.id != config_id);
            before != list.len()
        });
        Box::pin(async move { Ok(removed) })
    }

    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>> {
        let page = self.with(|m| {
            let mut page = TaskPage::default();
            for at in m.by_time.iter().rev() {
                let Some(e) = m.tasks.get_mut(&at.id) else {
                    continue;
                };
                if !matches(query, e.current(), at.status_ms) {
                    continue;
                }
                page.total += 1;
                if query.after.as_ref().is_some_and(|after| at >= after) {
                    continue;
                }
                if page.tasks.len() == query.limit {
                    page.next = page.tasks.last().map(|t| TaskCursor::of(t));
                    continue;
                }
                page.tasks.push(StoredTask::clone(&e.task));
            }
            page
        });
        Box::pin(async move { Ok(page) })
    }
}

#[cfg(test)]
mod tests {
    use super::{InMemoryTaskStore, StoredTask, TaskQuery, TaskStore};
    use crate::types::{Task, TaskId, TaskState, TaskStatus};

    fn task(id: &str, state: TaskState) -> StoredTask {
        StoredTask::new(Task::new(id, "c", TaskStatus::new(state)))
    }

    /// Events committed without a whole task are logged and applied only when the task
    /// is read: `get` and `list` (its state filter too) see every one of them.
    #[tokio::test]
    async fn events_are_applied_when_the_task_is_read() {
        use crate::store::apply::{apply_event, tests::chunk};
        use crate::types::{Message, StreamEvent, TaskStatusUpdateEvent, Timestamp};
        use std::sync::Arc;
        let store = InMemoryTaskStore::new();
        let mut live = task("t", TaskState::Working);
        store.commit(&live, &[]).await.unwrap();
        let asking = TaskStatusUpdateEvent::new(
            "t",
            "c",
            TaskStatus {
                state: TaskState::InputRequired as i32,
                message: Some(Message::agent_text("which?")),
                timestamp: Some(Timestamp::parse("2026-11-26T10:00:00Z").unwrap()),
            },
        );
        let events: Vec<StreamEvent> = vec![
            chunk("a", "x", false).into(),
            chunk("a", "y", true).into(),
            asking.into(),
        ];
        let logged: Vec<_> = events
            .into_iter()
            .zip(1..)
            .map(|(e, seq)| (seq, Arc::new(e)))
            .collect();
        for (_, e) in &logged {
            apply_event(&mut live, e);
        }
        store.commit(&live, &logged[..2]).await.unwrap();
        store.commit(&live, &logged[2..]).await.unwrap();
        let (got, seq) = store.get(&TaskId::new("t")).await.unwrap().unwrap();
        assert_eq!((got, seq), (live.clone(), 3));
        let asked = TaskQuery {
            state: Some(TaskState::InputRequired),
            limit: 10,
            ..TaskQuery::default()
        };
        assert_eq!(store.list(&asked).await.unwrap().tasks, vec![live]);
    }

    /// A task committed shared is kept as it is, not copied: the actor's ended task is
    /// then held once. The store's copy of a task applies later events to itself only:
    /// the caller's, shared before them, stays as it was.
    #[tokio::test]
    async fn a_shared_task_is_kept_without_a_copy() {
        use crate::store::apply::{apply_event, tests::chunk};
        use crate::types::StreamEvent;
        use std::sync::Arc;
        let store = InMemoryTaskStore::new();
        let started = Arc::new(task("t", TaskState::Working));
        store.commit_shared(&started, &[]).await.unwrap();
        assert_eq!(Arc::strong_count(&started), 2, "kept as it is");
        let logged = vec![(1, Arc::new(StreamEvent::from(chunk("a", "x", true))))];
        let mut live = (*started).clone();
        apply_event(&mut live, &logged[0].1);
        store
            .commit_shared(&Arc::new(live.clone()), &logged)
            .await
            .unwrap();
        let (got, seq) = store.get(&TaskId::new("t")).await.unwrap().unwrap();
        assert_eq!((&got, seq), (&live, 1));
        assert!(started.artifacts.is_empty(), "{started:?}");

        let mut ended = live;
        ended.status = Some(TaskStatus::new(TaskState::Completed));
        let ended = Arc::new(ended);
        store.commit_shared(&ended, &[]).await.unwrap();
        assert_eq!(Arc::strong_count(&ended), 2, "kept as it is");
        let (got, _) = store.get(&TaskId::new("t")).await.unwrap().unwrap();
        assert_eq!(got, *ended);
        // Committed plainly, a task is copied.
        let copied = Arc::new(task("u", TaskState::Completed));
        store.commit(&copied, &[]).await.unwrap();
        assert_eq!(Arc::strong_count(&copied), 1);
    }

    /// Past its bound, the store forgets the tasks that finished first; tasks still
    /// going are never dropped.
    #[tokio::test]
    async fn the_oldest_finished_tasks_go_past_the_bound() {
        let store = InMemoryTaskStore::with_finished_kept(3);
        store
            .commit(&task("going", TaskState::Working), &[])
            .await
            .unwrap();
        for i in 0..5 {
            let id = format!("t{i}");
            store
                .commit(&task(&id, TaskState::Working), &[])
                .await
                .unwrap();
            store
                .commit(&task(&id, TaskState::Completed), &[])
                .await
                .unwrap();
            // Committed again once finished: counted once.
            store
                .commit(&task(&id, TaskState::Completed), &[])
                .await
                .unwrap();
        }
        for (id, kept) in [
            ("t0", false),
            ("t1", false),
            ("t2", true),
            ("t3", true),
            ("t4", true),
            ("going", true),
        ] {
            assert_eq!(store.contains(&TaskId::new(id)), kept, "{id}");
        }
        assert!(store.get(&TaskId::new("t0")).await.unwrap().is_none());
        let listed = store.list(&TaskQuery::default()).await.unwrap();
        assert_eq!(listed.total, 4, "listed: {:?}", listed.tasks);
        // Nobody asked for the dropped ids: none are kept for them.
        assert!(store.take_evicted().is_empty());
    }

    /// Past its bound in bytes, the store forgets the finished tasks that finished
    /// first, however few they are; their event logs count; the newest stays whatever
    /// its size; a task still going is never dropped.
    #[tokio::test]
    async fn the_oldest_finished_tasks_go_past_the_bytes_bound() {
        let store = InMemoryTaskStore::default().keeping_bytes(250_000);
        let big = streamed;
        store
            .commit(&task("going", TaskState::Working), &big("going"))
            .await
            .unwrap();
        for i in 0..4 {
            let id = format!("t{i}");
            store
                .commit(&task(&id, TaskState::Working), &big(&id))
                .await
                .unwrap();
            store
                .commit(&task(&id, TaskState::Completed), &[])
                .await
                .unwrap();
        }
        for (id, kept) in [
            ("t0", false),
            ("t1", false),
            ("t2", true),
            ("t3", true),
            ("going", true),
        ] {
            assert_eq!(store.contains(&TaskId::new(id)), kept, "{id}");
        }
        let huge = InMemoryTaskStore::default().keeping_bytes(1_000);
        huge.commit(&task("one", TaskState::Working), &big("one"))
            .await
            .unwrap();
        huge.commit(&task("one", TaskState::Completed), &[])
            .await
            .unwrap();
        assert!(huge.contains(&TaskId::new("one")), "the newest stays");
    }

    /// A task that ended unfollowed counts without the log it no longer keeps: the four
    /// tasks of which the bound above keeps two all stay, and each reads as it ended.
    #[tokio::test]
    async fn a_log_dropped_at_the_end_no_longer_counts() {
        let store = InMemoryTaskStore::default().keeping_bytes(250_000);
        for i in 0..4 {
            let id = format!("t{i}");
            let ended = task(&id, TaskState::Completed);
            store
                .commit(&task(&id, TaskState::Working), &streamed(&id))
                .await
                .unwrap();
            store.commit(&ended, &[]).await.unwrap();
            store.ended_unfollowed(&TaskId::new(&ended.id));
        }
        for i in 0..4 {
            let id = TaskId::new(format!("t{i}"));
            let (read, seq) = store.get(&id).await.unwrap().expect("kept");
            assert_eq!((read.state(), seq), (TaskState::Completed, 10));
            assert_eq!(store.events_after(&id, 3).await.unwrap()[0].0, 10);
        }
    }

    /// 100 KB in an event log of ten artifact chunks, numbered 1 to 10, as a streamed
    /// artifact would leave it.
    fn streamed(id: &str) -> Vec<super::LoggedEvent> {
        use crate::types::{Artifact, Part, StreamEvent, TaskArtifactUpdateEvent};
        use std::sync::Arc;
        let chunk = |n: u64| {
            let artifact = Artifact::new("a", vec![Part::text("x".repeat(10_000))]);
            let event = TaskArtifactUpdateEvent {
                append: n > 1,
                ..TaskArtifactUpdateEvent::new(id, "c", artifact)
            };
            (n, Arc::new(StreamEvent::ArtifactUpdate(event)))
        };
        (1..=10).map(chunk).collect()
    }
}

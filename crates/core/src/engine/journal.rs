//! What the engine writes down so that a run survives the process: the run itself (its
//! workflow's exact source and inputs), a checkpoint per unit of work, and its end.
//!
//! The engine decides *when* to write — before it acts on what it writes, so a restart
//! never redoes finished work and never forgets a message it may have sent — and a
//! [`RunStore`] decides *where*. The engine assumes nothing about the store beyond the
//! trait: in memory, SQLite and PostgreSQL all fit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tracing::warn;

use super::record::Record;
use super::types::RunState;

/// Why a run store could not do what it was asked. The cause (the database's own
/// error) is kept for the log.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RunStoreError {
    /// No run has this id.
    #[error("no run {0}")]
    NoRun(String),
    /// The store takes no more requests: its writer has stopped (shutting down).
    #[error("the run store is closed")]
    Closed,
    /// A stored run cannot be read back.
    #[error("run {run} is unreadable: {cause}")]
    Unreadable {
        run: String,
        #[source]
        cause: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The database (or the file system under it) failed.
    #[error("the run store failed: {0}")]
    Backend(#[source] std::sync::Arc<dyn std::error::Error + Send + Sync>),
    /// Another process runs this run now (it took the run over while this one was
    /// stopped or cut off): this one must not act for it any more.
    #[error("run {0} is run by another process now")]
    Fenced(String),
    /// The database refused what it was given (a value it cannot hold, one past its
    /// limits): written again, it would be refused again.
    #[error("the run store refused the data: {0}")]
    Refused(#[source] std::sync::Arc<dyn std::error::Error + Send + Sync>),
}

impl RunStoreError {
    /// Whether the failure may pass by itself (the database failing, unreachable,
    /// restarting, full or locked): the run waits and writes again.
    pub fn is_transient(&self) -> bool {
        matches!(self, RunStoreError::Backend(_))
    }

    /// A failure of the database, keeping its error as the cause.
    pub fn backend(e: impl std::error::Error + Send + Sync + 'static) -> RunStoreError {
        RunStoreError::Backend(std::sync::Arc::new(e))
    }
}

/// A run as it started.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunHeader {
    pub run_id: String,
    pub workflow_id: String,
    /// Where the workflow was loaded from, for messages.
    pub workflow_file: String,
    /// The workflow's source text and its SHA-256: the run goes on with this version
    /// even if the file changes.
    pub workflow_source: String,
    pub workflow_hash: String,
    /// The checked inputs (defaults filled in).
    pub inputs: Map<String, Value>,
    /// The trace context the run started in (see [`super::TraceHooks`]), so that the
    /// run resumed after a restart links to its first trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// When the run started (RFC 3339), so that its start and duration survive
    /// restarts and takeovers; `None` in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Who started the run; `None` on a server that does not authenticate its callers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiator: Option<crate::access::Actor>,
    /// The tenant the run was started in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The run this one retries, if it is a retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
    /// The budget and deadline the run was held to, which a caller may have set lower
    /// than its workflow's: a resumed run is held to them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
    /// The run (and its step) that started this one as a child run, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentRun>,
}

/// The run whose workflow step started a child run, and the step (and fan-out item or
/// loop pass); with how many runs deep the child is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ParentRun {
    pub run: String,
    pub step: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    #[serde(default)]
    pub depth: usize,
}

/// A run's budget and deadline (from its start), as it started with them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Held {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::workflow::Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "millis")]
    pub deadline: Option<std::time::Duration>,
}

impl Held {
    /// What `workflow` runs with.
    pub fn of(workflow: &crate::workflow::Workflow) -> Option<Held> {
        let held = Held {
            budget: workflow.budget,
            deadline: workflow.deadline,
        };
        (held != Held::default()).then_some(held)
    }
}

/// A duration as whole milliseconds.
mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

/// The wall-clock time now, as RFC 3339: how the journal writes when a run and each of
/// its units started and ended.
pub fn wall_clock() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Where one unit of work (a step, or a fan-out item) stands.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Checkpoint {
    /// A message is being sent to an agent (written before it is sent). Until `task_id`
    /// is known, whether the agent got it is unknown: a resumed run sends it again with
    /// the same `message_id`. With `task_id`, the downstream task is followed again.
    Sent {
        attempt: u32,
        /// 0 for the step's message, then one per answer sent to the same task.
        turn: u32,
        message_id: String,
        agent: Option<String>,
        task_id: Option<String>,
        text: Option<String>,
        data: Option<Map<String, Value>>,
        /// When the unit started (its first attempt; RFC 3339), kept across its
        /// checkpoints; `None` in runs stored before it was kept.
        started_at: Option<String>,
        /// The downstream task asked a question, which the run put to the client: a
        /// resumed run holds an answer that comes before it asks it again.
        asking: bool,
    },
    /// A question (an approval or input step's) has been put to the client: after a
    /// restart it is asked again, its start and its timeout counted from `started_at`.
    Asked {
        /// When the unit started (RFC 3339).
        started_at: String,
    },
    /// Finished: never run again.
    Done(Record),
}

/// How a run ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunEnd {
    pub state: RunState,
    pub message: Option<String>,
    /// The rendered output, for a completed run.
    pub output_text: Option<String>,
    pub output_data: Option<Value>,
}

/// Everything stored about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedRun {
    pub header: RunHeader,
    pub canceled: bool,
    /// Per (step id, item).
    pub units: HashMap<(String, Option<usize>), Checkpoint>,
    pub end: Option<RunEnd>,
}

/// Persistence for runs. Each call must be atomic; calls for one run arrive in order.
/// A store may resolve `create_run` and `finish_run` once the write is queued, as
/// [`RunStore::queue_unit`] does, when it stores no later write of the run, nor of the
/// task of the same id, without them: the run's next waited checkpoint vouches for its
/// header, and the task's last commit (which the host makes after the run ends) for
/// its end. `load_run` reads them back either way.
pub trait RunStore: Send + Sync + 'static {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>>;
    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>>;
    /// Like [`RunStore::save_unit`], resolving once the write is queued behind the run's
    /// earlier writes rather than once it is stored: any later write of the run that is
    /// waited for stores it too. For checkpoints whose loss in a crash costs only a
    /// repeat (following a downstream task again, sending a message again with the same
    /// id), so that a run does not wait for them. By default, waits.
    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.save_unit(run_id, step, item, checkpoint)
    }
    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>>;
    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>>;
    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>>;
}

/// One run's handle on the store. A write that fails for a reason that may pass (the
/// database down, restarting, full or locked: [`RunStoreError::is_transient`]) is tried
/// again with [`backoff::STORE`] until it is stored — the run waits, never ends
/// for it — or the run is halted. A write refused because another process runs the run
/// now ([`RunStoreError::Fenced`]) halts the run where it stands. Other failures (an
/// unreadable run, a closed store, data the database refuses) are logged and the run
/// goes on, less durably.
#[derive(Clone)]
pub(crate) struct Journal {
    pub store: Arc<dyn RunStore>,
    pub run_id: String,
    /// The run's halt (see `RunControl::halt`).
    pub halt: tokio_util::sync::CancellationToken,
}

impl Journal {
    pub async fn create(&self, header: &RunHeader) {
        let first = self.store.create_run(header).await;
        self.settle("the run", first, || self.store.create_run(header))
            .await;
    }

    pub async fn unit(&self, step: &str, item: Option<usize>, checkpoint: &Checkpoint) {
        let first = self
            .store
            .save_unit(&self.run_id, step, item, checkpoint)
            .await;
        self.settle("a checkpoint", first, || {
            self.store.save_unit(&self.run_id, step, item, checkpoint)
        })
        .await;
    }

    /// Like [`Journal::unit`], not waiting for the checkpoint to be stored (see
    /// [`RunStore::queue_unit`]).
    pub async fn queue_unit(&self, step: &str, item: Option<usize>, checkpoint: &Checkpoint) {
        let first = self
            .store
            .queue_unit(&self.run_id, step, item, checkpoint)
            .await;
        self.settle("a checkpoint", first, || {
            self.store.queue_unit(&self.run_id, step, item, checkpoint)
        })
        .await;
    }

    /// Halts the run when the store says another process runs it now.
    fn failed(&self, e: &RunStoreError) {
        if matches!(e, RunStoreError::Fenced(_)) {
            self.halt.cancel();
        }
    }

    /// Whether the run is halted: what a unit asks after its checkpoint, before it
    /// sends anything.
    pub fn halted(&self) -> bool {
        self.halt.is_cancelled()
    }

    pub async fn canceled(&self) {
        let first = self.store.set_canceled(&self.run_id).await;
        self.settle("the cancel", first, || {
            self.store.set_canceled(&self.run_id)
        })
        .await;
    }

    pub async fn finish(&self, end: &RunEnd) {
        let first = self.store.finish_run(&self.run_id, end).await;
        self.settle("the run's end", first, || {
            self.store.finish_run(&self.run_id, end)
        })
        .await;
    }

    /// What follows a write's first outcome: nothing when it was stored; the same write
    /// again (`again`) while it fails transiently; a halt when it was fenced.
    async fn settle<'a>(
        &'a self,
        what: &'static str,
        first: Result<(), RunStoreError>,
        again: impl Fn() -> BoxFuture<'a, Result<(), RunStoreError>> + Send + 'a,
    ) {
        match first {
            Ok(()) => {}
            // Boxed: rarely taken, and inline it would grow every unit's future.
            Err(e) if e.is_transient() => Box::pin(self.retry(what, e, again)).await,
            Err(e) => {
                self.failed(&e);
                warn!(run_id = %self.run_id, error = %e, "could not save {what}");
            }
        }
    }

    async fn retry<'a>(
        &'a self,
        what: &'static str,
        mut error: RunStoreError,
        again: impl Fn() -> BoxFuture<'a, Result<(), RunStoreError>> + Send + 'a,
    ) {
        let mut waits = backoff::STORE.waits();
        for attempt in 1u64.. {
            // Said once, then now and then: an outage must not flood the log.
            if attempt == 1 || attempt.is_power_of_two() {
                warn!(run_id = %self.run_id, error = %error, attempt, "could not save {what}; the run waits for the store and tries again");
            }
            let wait = waits.next().unwrap_or(backoff::STORE.max);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.halt.cancelled() => return,
            }
            match again().await {
                Ok(()) => {
                    tracing::info!(run_id = %self.run_id, attempt, "saved {what}; the store is back");
                    return;
                }
                Err(e) if e.is_transient() => error = e,
                Err(e) => {
                    self.failed(&e);
                    warn!(run_id = %self.run_id, error = %e, "could not save {what}");
                    return;
                }
            }
        }
    }
}

/// Keeps runs in process memory (for tests, and `serve --store memory`).
#[derive(Debug, Default, Clone)]
pub struct MemoryRunStore {
    runs: Arc<Mutex<HashMap<String, SavedRun>>>,
}

impl MemoryRunStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, SavedRun>) -> R) -> R {
        let mut guard = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Removes a run if it has finished.
    pub fn remove_finished(&self, run_id: &str) {
        self.with(|runs| {
            if runs.get(run_id).is_some_and(|r| r.end.is_some()) {
                runs.remove(run_id);
            }
        });
    }

    /// Removes finished runs whose id `keep` refuses; how many.
    pub fn retain_finished(&self, mut keep: impl FnMut(&str) -> bool) -> usize {
        self.with(|runs| {
            let before = runs.len();
            runs.retain(|id, r| r.end.is_none() || keep(id));
            runs.shrink_to_fit();
            before - runs.len()
        })
    }
}

fn missing(run_id: &str) -> RunStoreError {
    RunStoreError::NoRun(run_id.to_owned())
}

impl RunStore for MemoryRunStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.with(|runs| {
            runs.insert(
                header.run_id.clone(),
                SavedRun {
                    header: header.clone(),
                    canceled: false,
                    units: HashMap::new(),
                    end: None,
                },
            )
        });
        Box::pin(async { Ok(()) })
    }

    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        let r = self.with(|runs| {
            let run = runs.get_mut(run_id).ok_or_else(|| missing(run_id))?;
            run.units
                .insert((step.to_owned(), item), checkpoint.clone());
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        let r = self.with(|runs| {
            runs.get_mut(run_id)
                .ok_or_else(|| missing(run_id))?
                .canceled = true;
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        let r = self.with(|runs| {
            let run = runs.get_mut(run_id).ok_or_else(|| missing(run_id))?;
            // A finished run keeps its steps' checkpoints: a retry of it begins with the
            // results of those that completed.
            run.end = Some(end.clone());
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        let r = self.with(|runs| runs.get(run_id).cloned());
        Box::pin(async move { Ok(r) })
    }
}

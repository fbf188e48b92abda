//! The gate in front of a durable store: once the database cannot be reached or used
//! (down, restarting, unreachable, full, locked: [`is_outage`]), requests are not sent to it for
//! a moment — they fail at once with [`StoreError::Unavailable`] instead of each
//! waiting out the pool's timeout — and one request a second goes through as a probe.
//! The first write that succeeds opens the gate again.
//!
//! What waits for the store (a task's events, a run's checkpoints) retries with
//! [`backoff::STORE`] through the gate, so it is never refused for good: runs
//! stall while the store is down and go on when it is back. Readiness asks the gate
//! first, so `/readyz` says at once that the store is unavailable.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures::future::BoxFuture;
use tracing::{info, warn};

use super::Store;
use a2a::store::{
    Cause, Cluster, LoggedEvent, StoreError, StoredPushConfig, StoredTask, TaskPage, TaskQuery,
    TaskStore,
};
use a2a::types::TaskId;
use orchestrator_core::engine::{Checkpoint, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};

/// How long after a failure the store is left alone before a probe.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// A store behind the gate.
pub struct Gated {
    inner: Arc<dyn Store>,
    // A std mutex: held only to read or set the state, never across an await.
    state: Mutex<State>,
}

enum State {
    Open,
    /// Failed at `since` with `cause`; the next request at or after `probe_at` goes
    /// through.
    Shut {
        since: Instant,
        probe_at: Instant,
        cause: Cause,
    },
}

impl Gated {
    pub fn new(inner: Arc<dyn Store>) -> Gated {
        Gated {
            inner,
            state: Mutex::new(State::Open),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a request may go to the store now; the refusal when it may not.
    fn admit(&self) -> Result<(), StoreError> {
        let mut state = self.state();
        match &mut *state {
            State::Open => Ok(()),
            State::Shut {
                since,
                probe_at,
                cause,
            } => {
                let now = Instant::now();
                if now >= *probe_at {
                    *probe_at = now + PROBE_EVERY;
                    Ok(())
                } else {
                    Err(StoreError::Unavailable {
                        ago_ms: now.duration_since(*since).as_millis() as u64,
                        cause: cause.clone(),
                    })
                }
            }
        }
    }

    /// Notes what the store answered: a transient failure shuts the gate, anything
    /// else (the store answered) opens it.
    fn observe(&self, failure: Option<&Cause>) {
        let mut state = self.state();
        match (failure, &*state) {
            (None, State::Open) => {}
            (None, State::Shut { since, .. }) => {
                info!(
                    down_for_ms = since.elapsed().as_millis() as u64,
                    "the store answers again"
                );
                *state = State::Open;
            }
            (Some(cause), current) => {
                if matches!(current, State::Open) {
                    warn!(error = %cause, "the store failed; requests fail at once while it is probed each second");
                }
                let now = Instant::now();
                let since = match current {
                    State::Shut { since, .. } => *since,
                    State::Open => now,
                };
                *state = State::Shut {
                    since,
                    probe_at: now + PROBE_EVERY,
                    cause: cause.clone(),
                };
            }
        }
    }

    /// `call` through the gate.
    async fn task<'a, T>(
        &'a self,
        call: impl FnOnce() -> BoxFuture<'a, Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.admit()?;
        let r = call().await;
        match &r {
            Err(StoreError::Backend(cause)) if is_outage(cause) => self.observe(Some(cause)),
            Err(StoreError::Closed | StoreError::Unavailable { .. }) => {}
            Ok(_) | Err(_) => self.observe(None),
        }
        r
    }

    /// `call` through the gate, for the run store.
    async fn run<'a, T>(
        &'a self,
        call: impl FnOnce() -> BoxFuture<'a, Result<T, RunStoreError>>,
    ) -> Result<T, RunStoreError> {
        self.run_as(Resolves::WhenStored, call).await
    }

    /// `call` through the gate, for the run store. A write that may resolve once
    /// queued does not open the gate by succeeding: queued, it says nothing of whether
    /// the database is back.
    async fn run_as<'a, T>(
        &'a self,
        resolves: Resolves,
        call: impl FnOnce() -> BoxFuture<'a, Result<T, RunStoreError>>,
    ) -> Result<T, RunStoreError> {
        self.admit().map_err(RunStoreError::backend)?;
        let r = call().await;
        match (&r, resolves) {
            (Err(RunStoreError::Backend(cause)), _) if is_outage(cause) => {
                self.observe(Some(cause))
            }
            (Err(RunStoreError::Closed), _) | (Ok(_), Resolves::MaybeWhenQueued) => {}
            (Ok(_) | Err(_), _) => self.observe(None),
        }
        r
    }
}

/// When a run store's write resolves.
#[derive(Debug, Clone, Copy)]
enum Resolves {
    WhenStored,
    /// It may resolve once queued (`queue_unit`; `create_run` and `finish_run` on a
    /// store that queues them).
    MaybeWhenQueued,
}

/// Whether a failure says the database cannot be reached or used now — the
/// connection lost or refused, no connection free in time, the server shutting down or
/// out of disk, memory or connections, SQLite busy, locked, full or failing I/O —
/// rather than that one statement failed (a deadlock, a constraint): only the first
/// shuts the gate. (Both kinds are written again by what waits for them.)
fn is_outage(cause: &Cause) -> bool {
    let cause: &(dyn std::error::Error + 'static) = &**cause;
    #[cfg(feature = "postgres")]
    if let Some(e) = cause.downcast_ref::<sqlx::Error>() {
        return match e {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(db) => db
                .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
                .is_some_and(|pg| {
                    // Connection exception, insufficient resources, operator
                    // intervention.
                    let code = pg.code();
                    code.starts_with("08") || code.starts_with("53") || code.starts_with("57P")
                }),
            _ => false,
        };
    }
    #[cfg(feature = "sqlite")]
    if let Some(e) = cause.downcast_ref::<rusqlite::Error>() {
        use rusqlite::ErrorCode as C;
        return matches!(
            e.sqlite_error_code(),
            Some(
                C::DatabaseBusy
                    | C::DatabaseLocked
                    | C::SystemIoFailure
                    | C::DiskFull
                    | C::CannotOpen
            )
        );
    }
    false
}

impl Store for Gated {
    fn durable(&self) -> bool {
        self.inner.durable()
    }

    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(self.task(move || self.inner.prune_finished(before)))
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.flush()
    }

    fn check_writable(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.task(|| self.inner.check_writable()))
    }

    fn schedule_mark<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<SystemTime>, StoreError>> {
        Box::pin(self.task(move || self.inner.schedule_mark(key)))
    }

    fn advance_schedule<'a>(
        &'a self,
        key: &'a str,
        to: SystemTime,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.task(move || self.inner.advance_schedule(key, to)))
    }
}

impl TaskStore for Gated {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>> {
        let id = id.clone();
        Box::pin(async move { self.task(|| self.inner.get(&id)).await })
    }
    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.task(move || self.inner.commit(task, events)))
    }
    fn commit_shared<'a>(
        &'a self,
        task: &'a Arc<StoredTask>,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.task(move || self.inner.commit_shared(task, events)))
    }
    fn ended_unfollowed(&self, task: &TaskId) {
        self.inner.ended_unfollowed(task);
    }
    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>> {
        let id = id.clone();
        Box::pin(async move { self.task(|| self.inner.events_after(&id, after)).await })
    }
    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        Box::pin(self.task(move || self.inner.task_of_message(message_id)))
    }
    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        Box::pin(self.task(|| self.inner.unfinished()))
    }
    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(self.task(move || self.inner.prune(before)))
    }
    fn set_push_config(
        &self,
        task: &TaskId,
        config: StoredPushConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let task = task.clone();
        Box::pin(async move {
            self.task(|| self.inner.set_push_config(&task, config))
                .await
        })
    }
    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>> {
        let task = task.clone();
        Box::pin(async move { self.task(|| self.inner.push_configs(&task)).await })
    }
    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let task = task.clone();
        let config_id = config_id.to_owned();
        Box::pin(async move {
            self.task(|| self.inner.delete_push_config(&task, &config_id))
                .await
        })
    }
    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>> {
        let query = query.clone();
        Box::pin(async move { self.task(|| self.inner.list(&query)).await })
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        // Leases and claims keep their own schedule: the cluster loop retries them.
        self.inner.cluster()
    }
}

impl RunStore for Gated {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(self.run_as(Resolves::MaybeWhenQueued, move || {
            self.inner.create_run(header)
        }))
    }
    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(self.run(move || self.inner.save_unit(run_id, step, item, checkpoint)))
    }
    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(self.run_as(Resolves::MaybeWhenQueued, move || {
            self.inner.queue_unit(run_id, step, item, checkpoint)
        }))
    }
    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(self.run(move || self.inner.set_canceled(run_id)))
    }
    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(self.run_as(Resolves::MaybeWhenQueued, move || {
            self.inner.finish_run(run_id, end)
        }))
    }
    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        Box::pin(self.run(move || self.inner.load_run(run_id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failure shuts the gate: requests fail at once, naming the cause, until a
    /// probe a second later; a probe that succeeds opens it.
    #[test]
    fn a_failure_shuts_the_gate_until_a_probe_succeeds() {
        let gate = Gated::new(Arc::new(super::super::MemoryStore::new()));
        assert!(gate.admit().is_ok());
        let cause: Cause = Arc::new(std::io::Error::other("connection refused"));
        gate.observe(Some(&cause));
        let refused = gate.admit().unwrap_err();
        assert!(refused.is_transient());
        assert!(
            refused.to_string().contains("connection refused"),
            "{refused}"
        );
        // Past the probe time, one request goes through; the next is refused again.
        if let State::Shut { probe_at, .. } = &mut *gate.state() {
            *probe_at = Instant::now();
        }
        assert!(gate.admit().is_ok(), "the probe goes through");
        assert!(gate.admit().is_err(), "only one probe a second");
        gate.observe(None);
        assert!(gate.admit().is_ok(), "open again");
    }

    /// Only a failure of the database itself shuts the gate; one statement's does not.
    #[test]
    fn outages_are_told_from_failed_statements() {
        let outage: Cause = Arc::new(sqlx::Error::PoolTimedOut);
        assert!(is_outage(&outage));
        let io: Cause = Arc::new(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionRefused,
        )));
        assert!(is_outage(&io));
        let statement: Cause = Arc::new(sqlx::Error::RowNotFound);
        assert!(!is_outage(&statement));
        let other: Cause = Arc::new(std::io::Error::other("not the database's"));
        assert!(!is_outage(&other));
    }
}

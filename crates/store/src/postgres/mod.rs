//! The PostgreSQL store (sqlx): what several `serve` replicas share.
//!
//! Writes are queued and committed together ([`writer`]: group commit, as the SQLite
//! store's writer does), each still one statement — a task's commit writes its events
//! and its row in one — and acknowledged once committed. Reads go to the pool. What is
//! stored is what the SQLite store stores (the same tables and the same JSON,
//! [`super::rows`]), so the two read alike.
//!
//! The schema's version is the row of `a2a_orchestrator_schema`; migrations are
//! embedded here and applied in order at open, under an advisory lock so that replicas
//! starting together migrate once. A database with other tables and not ours, or one
//! written by a newer version, is refused with an error saying so.
//!
//! Several `serve` processes (replicas) share one database: each registers itself with
//! a lease it renews, runs the tasks it starts or claims, and writes for a task only
//! while it holds it — every write for a task or its run checks, in its own statement,
//! that the task's owner and fencing number are still this replica's ([`cluster`]).
//!
//! Streams of tasks another replica runs, and requests queued for one, are announced
//! with `LISTEN/NOTIFY` ([`notices`]), polled only while that connection is lost.
//!
//! [`schema`] holds the migrations, [`tasks`] and [`runs`] the two traits' reads and
//! writes, [`writer`] the group commit and [`bulk`] its one statement a batch
//! (`a2a_write_batch`, a function of the schema), [`lookups`] the `messageId` lookups,
//! asked in batches too,
//! [`cluster`] the replicas' leases and requests.

mod bulk;
mod cluster;
mod lookups;
mod notices;
mod runs;
mod schema;
mod tasks;
mod writer;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{OpenError, OpenErrorKind, Store};
use crate::rows::millis;
use a2a::store::{NoticeBoard, StoreError};
use lookups::Lookups;
use writer::Writer;

/// Connections each replica keeps to the database at most.
const MAX_CONNECTIONS: u32 = 16;

/// How long a call waits for a pooled connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// The database's clock in milliseconds since the Unix epoch: leases are compared on
/// one clock, whatever the replicas' clocks say.
const NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// The advisory lock a replica holds while it prunes: one pruner at a time.
const PRUNE_LOCK: i64 = 0x4132_414f_7270_7275;

/// Finished tasks (and runs) deleted in one transaction.
const PRUNE_BATCH: i64 = 500;

/// How long after its lease ran out a replica that never stopped is forgotten.
const REAP_AFTER: Duration = Duration::from_secs(3600);

/// Tasks and runs in a PostgreSQL database. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// The database as the user named it, its password hidden.
    location: String,
    /// This replica's id in `replicas` and `tasks.owner`.
    replica: Arc<str>,
    lease: Duration,
    /// The fencing number of each unfinished task this replica runs: every write for
    /// the task (or its run) is refused unless the task's row still has it.
    fences: Arc<Mutex<HashMap<String, i64>>>,
    /// Where writes for tasks and runs are queued and committed together.
    writer: Writer,
    /// Where `messageId` lookups are queued and asked together.
    lookups: Lookups,
    /// Where what the replica hears (`LISTEN`) is posted.
    notices: NoticeBoard,
    /// The tasks this replica follows for clients while others run them.
    watching: Arc<notices::Watching>,
    /// Ends the listening connection when the last handle to the store is dropped.
    _listening: Arc<DropGuard>,
    /// What the store's work is reported to.
    observe: crate::Observe,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// brings its schema up to date and registers this process as a replica with a
    /// lease of `lease`. `location` is the URL as errors show it. What it does is
    /// reported to `observe`.
    pub async fn open(
        url: &str,
        location: &str,
        lease: Duration,
        observe: crate::Observe,
    ) -> Result<Self, OpenError> {
        let fail = |kind: OpenErrorKind| OpenError {
            location: location.to_owned(),
            kind,
        };
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| fail(OpenErrorKind::Database(e)))?
            .application_name("a2a-orchestrator");
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .min_connections(1)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // Not a round trip to ask whether a connection still works before each use
            // (a ping per query and per batch: 8% of the replica's CPU under load): a
            // connection lost meanwhile fails its statement as a connection's failure,
            // which the callers treat as the database being away, and the pool drops it.
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(|e| {
                fail(match e {
                    sqlx::Error::Tls(_) => OpenErrorKind::Tls(e),
                    e => OpenErrorKind::Unreachable(e),
                })
            })?;
        schema::migrate(&pool).await.map_err(fail)?;
        let replica: Arc<str> = uuid::Uuid::now_v7().to_string().into();
        sqlx::query(&format!(
            "INSERT INTO replicas (id, started_at, lease_until, requests_understood)
             VALUES ($1, {NOW_MS}, {NOW_MS} + $2, $3)"
        ))
        .bind(&*replica)
        .bind(lease.as_millis() as i64)
        .bind(cluster::UNDERSTOOD)
        .execute(&pool)
        .await
        .map_err(|e| fail(OpenErrorKind::Database(e)))?;
        let writer = Writer::start(&pool, &replica, observe.clone());
        let lookups = Lookups::start(&pool);
        let board = NoticeBoard::new();
        let stop = CancellationToken::new();
        tokio::spawn(notices::listen(
            pool.clone(),
            replica.clone(),
            board.clone(),
            stop.clone(),
            observe.clone(),
        ));
        Ok(Self {
            location: location.to_owned(),
            replica,
            lease,
            fences: Default::default(),
            writer,
            lookups,
            notices: board,
            watching: Default::default(),
            _listening: Arc::new(stop.drop_guard()),
            observe,
            pool,
        })
    }

    /// The fencing number this replica holds for task (or run) `id`, if it runs it.
    fn fence(&self, id: &str) -> Option<i64> {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .copied()
    }

    /// The fencing number this replica holds task `id` with; for a task new to it, the
    /// first (1), held from now: a new task's commits and its run's first writes race
    /// (the run starts as the task is first stored), and each must carry the number
    /// the task's row is created with.
    fn hold_fence(&self, id: &str) -> i64 {
        *self
            .fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id.to_owned())
            .or_insert(1)
    }

    fn set_fence(&self, id: &str, fence: Option<i64>) {
        let mut fences = self.fences.lock().unwrap_or_else(|p| p.into_inner());
        match fence {
            Some(f) => fences.insert(id.to_owned(), f),
            None => fences.remove(id),
        };
    }
}

/// JSON for a value to store.
fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::backend)
}

impl Store for PostgresStore {
    fn durable(&self) -> bool {
        true
    }

    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let before = millis(before);
            let mut pruned = 0;
            // In batches, each its own short transaction, so that pruning never holds
            // locks for long; one replica at a time (the others find the lock taken
            // and leave it to that one).
            loop {
                let mut tx = self.pool.begin().await.map_err(StoreError::backend)?;
                let ours: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
                    .bind(PRUNE_LOCK)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(StoreError::backend)?;
                if !ours {
                    return Ok(pruned);
                }
                let tasks: Vec<String> = sqlx::query_scalar(
                    "SELECT id FROM tasks WHERE terminal AND updated_at < $1
                     ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED",
                )
                .bind(before)
                .bind(PRUNE_BATCH)
                .fetch_all(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
                delete_all(
                    &mut tx,
                    &tasks,
                    &[
                        "DELETE FROM task_events WHERE task_id = ANY($1)",
                        "DELETE FROM push_configs WHERE task_id = ANY($1)",
                        // Requests that came too late for their task (it ended first).
                        "DELETE FROM task_requests WHERE task_id = ANY($1)",
                        // Watches a follower could not remove.
                        "DELETE FROM task_watches WHERE task_id = ANY($1)",
                        "DELETE FROM tasks WHERE id = ANY($1)",
                    ],
                )
                .await?;
                let runs: Vec<String> = sqlx::query_scalar(
                    "SELECT id FROM runs WHERE run_end IS NOT NULL AND updated_at < $1
                     ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED",
                )
                .bind(before)
                .bind(PRUNE_BATCH)
                .fetch_all(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
                delete_all(
                    &mut tx,
                    &runs,
                    &[
                        "DELETE FROM run_units WHERE run_id = ANY($1)",
                        "DELETE FROM runs WHERE id = ANY($1)",
                    ],
                )
                .await?;
                // Replicas that died without stopping: their rows, long expired, and
                // the watches of those gone.
                sqlx::query(&format!(
                    "DELETE FROM replicas WHERE lease_until < {NOW_MS} - $1"
                ))
                .bind(REAP_AFTER.as_millis() as i64)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
                sqlx::query(
                    "DELETE FROM task_watches w
                     WHERE NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = w.replica)",
                )
                .execute(&mut *tx)
                .await
                .map_err(StoreError::backend)?;
                tx.commit().await.map_err(StoreError::backend)?;
                pruned += tasks.len();
                if tasks.len() < PRUNE_BATCH as usize && runs.len() < PRUNE_BATCH as usize {
                    return Ok(pruned);
                }
            }
        })
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move { Ok(self.writer.flush().await?) })
    }

    fn check_writable(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            // A write that changes nothing: it needs the database up, reachable and
            // not read-only (a standby refuses it).
            sqlx::query("UPDATE a2a_orchestrator_schema SET version = version")
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            Ok(())
        })
    }

    fn schedule_mark<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<SystemTime>, StoreError>> {
        Box::pin(async move {
            let mark: Option<i64> =
                sqlx::query_scalar("SELECT mark FROM schedule_marks WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(StoreError::backend)?;
            Ok(mark.map(crate::rows::from_millis))
        })
    }

    fn advance_schedule<'a>(
        &'a self,
        key: &'a str,
        to: SystemTime,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            // Read committed: a replica whose upsert waits on another's row lock sees
            // the mark that one wrote, and its `WHERE` finds it no longer earlier.
            let moved = sqlx::query(
                "INSERT INTO schedule_marks (key, mark) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET mark = EXCLUDED.mark
                 WHERE schedule_marks.mark < EXCLUDED.mark",
            )
            .bind(key)
            .bind(millis(to))
            .execute(&self.pool)
            .await
            .map_err(StoreError::backend)?
            .rows_affected();
            Ok(moved == 1)
        })
    }
}

/// Runs each of `deletes` (statements taking the ids as `$1`) for `ids`, in `tx`.
async fn delete_all(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    ids: &[String],
    deletes: &[&str],
) -> Result<(), StoreError> {
    for sql in deletes {
        sqlx::query(sql)
            .bind(ids)
            .execute(&mut **tx)
            .await
            .map_err(StoreError::backend)?;
    }
    Ok(())
}

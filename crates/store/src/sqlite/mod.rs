//! The embedded SQLite store (rusqlite, SQLite bundled in the binary, WAL mode).
//!
//! Writes go through one writer thread that owns the only writing connection and
//! commits whatever is queued in one transaction (group commit): under load many small
//! writes cost one commit, and a write is acknowledged only once it is committed. Reads
//! use read-only connections of their own, which WAL lets run beside the writer. A
//! third connection checkpoints the WAL (copies it into the database file) beside the
//! writer too, so that no commit waits for a checkpoint.
//! `synchronous = NORMAL`: a commit survives the process being killed; a power loss may
//! lose the last commits, never corrupt the database.
//!
//! The schema's version is SQLite's `user_version`; migrations are embedded here and
//! applied in order at open. A file that is not a database, a database of another
//! program, or one written by a newer version is refused with an error saying so.
//!
//! [`schema`] holds the migrations, [`writer`] the writer and checkpointer threads,
//! [`tasks`] and [`runs`] the two traits' reads and writes, [`reads`] the connections
//! the reads are made on.

mod reads;
mod runs;
mod schema;
mod tasks;
mod writer;

use schema::migrate;
use writer::{Op, Write, checkpointer};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use super::{OpenError, OpenErrorKind, Store, WriteError};
use crate::rows::millis;
use a2a::store::StoreError;

/// Bytes a WAL file is cut back to when it is reused (SQLite's `journal_size_limit`).
const JOURNAL_SIZE_LIMIT: u64 = 64 << 20;

/// Tasks and runs in a SQLite database. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    writes: mpsc::Sender<Op>,
    reads: Arc<reads::Reads>,
    path: PathBuf,
    observe: crate::Observe,
    /// The writer and the checkpointer: owned here, ending when the last handle to the
    /// store is dropped (the writer once every queued write is committed).
    tasks: tokio_util::task::TaskTracker,
}

impl SqliteStore {
    /// Waits until the writer and the checkpointer have ended: after the last other
    /// handle to the store is dropped, every queued write is then committed and the
    /// connections closed.
    pub async fn closed(self) {
        let tasks = self.tasks.clone();
        drop(self);
        tasks.wait().await;
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens the database at `path`, creating it (and its directory) if it does not
    /// exist, and brings its schema up to date. A write waits up to `busy_timeout` for
    /// another process's lock on the file. What it does is reported to `observe`.
    pub async fn open(
        path: &Path,
        busy_timeout: Duration,
        observe: crate::Observe,
    ) -> Result<Self, OpenError> {
        let fail = |kind: OpenErrorKind| OpenError {
            location: path.display().to_string(),
            kind,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| {
                fail(OpenErrorKind::CreateDir {
                    dir: dir.to_owned(),
                    source,
                })
            })?;
        }
        if path.is_dir() {
            return Err(fail(OpenErrorKind::IsDirectory));
        }
        // The writer's connection brings the schema up to date first.
        let mut writing = writer::open(path, JOURNAL_SIZE_LIMIT, busy_timeout).map_err(|e| {
            fail(match schema::explain(e) {
                OpenErrorKind::Sqlite(e) => OpenErrorKind::Writer(e),
                other => other,
            })
        })?;
        migrate(&mut writing).map_err(fail)?;
        // A WAL left by a process that did not close the store (killed, or a crash) is
        // copied into the database and cut to nothing: the file would otherwise keep
        // the size it grew to.
        writing
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| fail(schema::explain(e)))?;
        let checkpoints = writer::open(path, JOURNAL_SIZE_LIMIT, busy_timeout)
            .map_err(|e| fail(OpenErrorKind::Writer(e)))?;
        let reads = Arc::new(reads::Reads::new(path, busy_timeout));
        let (tx, rx) = mpsc::channel(4096);
        let (committed, commits) = mpsc::channel(1);
        let wal_long = Arc::new(AtomicBool::new(false));
        // The writer ends when the last handle to the store is dropped, the checkpointer
        // when the writer has ended.
        let tasks = tokio_util::task::TaskTracker::new();
        let long = wal_long.clone();
        let told = observe.clone();
        tasks.spawn_blocking(move || writer::writer(writing, rx, committed, long, told));
        tasks.spawn_blocking(move || checkpointer(checkpoints, commits, wal_long));
        tasks.close();
        Ok(Self {
            writes: tx,
            reads,
            path: path.to_owned(),
            observe,
            tasks,
        })
    }

    /// Queues a write and waits until it is committed; the rows it affected.
    async fn write(&self, write: Write) -> Result<u64, WriteError> {
        let (done, rx) = oneshot::channel();
        self.writes
            .send(Op { write, done })
            .await
            .map_err(|_| WriteError::Closed)?;
        rx.await.map_err(|_| WriteError::Closed)?
    }
}

/// JSON for a value to store.
fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, WriteError> {
    serde_json::to_string(value).map_err(|e| WriteError::Encode(Arc::new(e)))
}

impl Store for SqliteStore {
    fn durable(&self) -> bool {
        true
    }

    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let n = self
                .write(Write::Prune {
                    before: millis(before),
                })
                .await?;
            Ok(n as usize)
        })
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            self.write(Write::Flush).await?;
            Ok(())
        })
    }

    fn check_writable(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            self.write(Write::Probe).await?;
            Ok(())
        })
    }

    fn schedule_mark<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<SystemTime>, StoreError>> {
        let key = key.to_owned();
        Box::pin(async move {
            let mark: Option<i64> = self
                .reads
                .off(move |conn| {
                    use rusqlite::OptionalExtension;
                    conn.prepare_cached("SELECT mark FROM schedule_marks WHERE key = ?1")?
                        .query_row([&key], |r| r.get(0))
                        .optional()
                })
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
            let moved = self
                .write(Write::AdvanceSchedule {
                    key: key.to_owned(),
                    to: millis(to),
                })
                .await?;
            Ok(moved == 1)
        })
    }
}

//! The embedded SQLite store (sqlx, SQLite bundled in the binary, WAL mode).
//!
//! Writes go through one writer task that owns the only writing connection and commits
//! whatever is queued in one transaction (group commit): under load many small writes
//! cost one commit, and a write is acknowledged only once it is committed. Reads use a
//! separate pool of read-only connections, which WAL lets run beside the writer. A
//! third connection checkpoints the WAL (copies it into the database file) beside the
//! writer too, so that no commit waits for a checkpoint.
//! `synchronous = NORMAL`: a commit survives the process being killed; a power loss may
//! lose the last commits, never corrupt the database.
//!
//! The schema's version is SQLite's `user_version`; migrations are embedded here and
//! applied in order at open. A file that is not a database, a database of another
//! program, or one written by a newer version is refused with an error saying so.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, Row};
use tokio::sync::{mpsc, oneshot};
use tracing::warn;

use super::Store;
use crate::engine::{Checkpoint, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};
use crate::protocol::server::{LoggedEvent, StoreError, TaskStore, apply_event};
use crate::protocol::types::{PushNotificationConfig, StreamEvent, Task, TaskId};

/// The schema, one migration per version (`user_version` = how many are applied).
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    snapshot TEXT NOT NULL,
    seq INTEGER NOT NULL,
    terminal INTEGER NOT NULL,
    first_message_id TEXT,
    updated_at INTEGER NOT NULL
);
CREATE INDEX tasks_by_terminal ON tasks (terminal, updated_at);
CREATE INDEX tasks_by_first_message ON tasks (first_message_id);
CREATE TABLE task_events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
CREATE TABLE push_configs (
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (task_id, config_id)
) WITHOUT ROWID;
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    canceled INTEGER NOT NULL DEFAULT 0,
    run_end TEXT,
    updated_at INTEGER NOT NULL
);
CREATE INDEX runs_by_end ON runs (run_end IS NULL, updated_at);
CREATE TABLE run_units (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    item INTEGER NOT NULL,
    checkpoint TEXT NOT NULL,
    PRIMARY KEY (run_id, step, item)
) WITHOUT ROWID;
"#];

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 512;

/// Most rows in one multi-row statement (at most 6 parameters a row, well under
/// SQLite's limit of 32,766 per statement).
const BULK_ROWS: usize = 1_000;

/// How often the WAL is checkpointed under a steady stream of writes.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL frames (pages) past which the writer finishes a checkpoint itself.
const WAL_RESTART_FRAMES: i64 = 4096;

/// Bytes a WAL file is cut back to when it is reused (SQLite's `journal_size_limit`).
const JOURNAL_SIZE_LIMIT: u64 = 64 << 20;

/// Tasks and runs in a SQLite database. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    writes: mpsc::Sender<Op>,
    reads: SqlitePool,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// One write, with everything it needs owned.
enum Write {
    Commit {
        id: String,
        /// None: only the events are stored (see `snapshot_due`).
        snapshot: Option<String>,
        seq: i64,
        terminal: bool,
        first_message_id: Option<String>,
        events: Vec<(i64, String)>,
    },
    SetPush {
        task: String,
        config_id: String,
        config: String,
    },
    DeletePush {
        task: String,
        config_id: String,
    },
    CreateRun {
        id: String,
        header: String,
    },
    SaveUnit {
        run: String,
        step: String,
        item: i64,
        checkpoint: String,
    },
    SetCanceled {
        run: String,
    },
    FinishRun {
        run: String,
        end: String,
    },
    Prune {
        before: i64,
    },
}

struct Op {
    write: Write,
    /// Rows the write affected.
    done: oneshot::Sender<Result<u64, String>>,
}

fn now_ms() -> i64 {
    millis(SystemTime::now())
}

fn millis(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

fn run_err(e: impl std::fmt::Display) -> RunStoreError {
    RunStoreError(e.to_string())
}

impl SqliteStore {
    /// Opens the database at `path`, creating it (and its directory) if it does not
    /// exist, and brings its schema up to date.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        let fail = |why: String| StoreError(format!("cannot open the store {shown}: {why}"));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        }
        if path.is_dir() {
            return Err(fail("it is a directory".into()));
        }
        let options = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|e| fail(e.to_string()))?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            // A WAL file grown under load is cut back to this once it is reused.
            .pragma("journal_size_limit", JOURNAL_SIZE_LIMIT.to_string())
            // A multi-row statement keeps a journal of its own (to undo just itself);
            // in memory, not in a temporary file.
            .pragma("temp_store", "memory")
            .foreign_keys(false);
        // The writer never checkpoints: a checkpoint copies the WAL's pages into the
        // database file and syncs it, and done in a commit (SQLite's default) it makes
        // every write queued behind that commit wait. The checkpointer does it beside.
        let mut writer =
            SqliteConnection::connect_with(&options.clone().pragma("wal_autocheckpoint", "0"))
                .await
                .map_err(|e| fail(explain(&e)))?;
        migrate(&mut writer).await.map_err(fail)?;
        let checkpoints = SqliteConnection::connect_with(&options)
            .await
            .map_err(|e| fail(explain(&e)))?;
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .connect_with(options.read_only(true).create_if_missing(false))
            .await
            .map_err(|e| fail(explain(&e)))?;
        let (tx, rx) = mpsc::channel(4096);
        let (committed, commits) = mpsc::channel(1);
        let wal_long = Arc::new(AtomicBool::new(false));
        // The writer ends when the last handle to the store is dropped, the checkpointer
        // when the writer has ended.
        tokio::spawn(writer_loop(writer, rx, committed, wal_long.clone()));
        tokio::spawn(checkpointer(checkpoints, commits, wal_long));
        Ok(Self {
            writes: tx,
            reads,
            path: path.to_owned(),
        })
    }

    async fn write(&self, write: Write) -> Result<u64, String> {
        let (done, rx) = oneshot::channel();
        self.writes
            .send(Op { write, done })
            .await
            .map_err(|_| "the store's writer has stopped".to_owned())?;
        rx.await
            .map_err(|_| "the store's writer has stopped".to_owned())?
    }
}

/// What an opening error means, in words.
fn explain(e: &sqlx::Error) -> String {
    let text = e.to_string();
    if text.contains("file is not a database") || text.contains("malformed") {
        format!(
            "{text} — the file is not a SQLite database or is corrupt; restore it from a backup or move it away (nothing was changed)"
        )
    } else {
        text
    }
}

/// Applies the migrations the database lacks, each in its own transaction.
async fn migrate(conn: &mut SqliteConnection) -> Result<(), String> {
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| explain(&e))?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(format!(
            "it was written by a newer version of a2a-orchestrator (schema version {version}; this one knows up to {known})"
        ));
    }
    if version == 0 {
        let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_master")
            .fetch_one(&mut *conn)
            .await
            .map_err(|e| explain(&e))?;
        if tables > 0 {
            return Err(
                "it is a SQLite database of another program (it has tables but no a2a-orchestrator schema)"
                    .into(),
            );
        }
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let mut tx = conn.begin().await.map_err(|e| explain(&e))?;
        sqlx::raw_sql(sql)
            .execute(&mut *tx)
            .await
            .map_err(|e| format!("migration {} failed: {e}", i + 1))?;
        sqlx::raw_sql(&format!("PRAGMA user_version = {}", i + 1))
            .execute(&mut *tx)
            .await
            .map_err(|e| explain(&e))?;
        tx.commit().await.map_err(|e| explain(&e))?;
    }
    Ok(())
}

/// Commits queued writes in batches until every handle is gone.
async fn writer_loop(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<Op>,
    committed: mpsc::Sender<()>,
    wal_long: Arc<AtomicBool>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let ops = std::mem::take(&mut batch);
        let r = apply_batch(&mut conn, &ops).await;
        // Wakes the checkpointer, unless a wake-up is already waiting.
        let _ = committed.try_send(());
        match r {
            Ok(rows) => {
                for (op, n) in ops.into_iter().zip(rows) {
                    let _ = op.done.send(Ok(n));
                }
            }
            Err(e) => {
                // Something in the batch failed: each write again on its own, so each
                // caller learns its own outcome.
                warn!(error = %e, "a batched store write failed; retrying writes one by one");
                for op in ops {
                    let r = apply_batch(&mut conn, std::slice::from_ref(&op))
                        .await
                        .map(|rows| rows.first().copied().unwrap_or(0));
                    if let Err(Err(e)) = op.done.send(r) {
                        // A queued write: nobody waits to hear it.
                        warn!(error = %e, "a queued store write failed");
                    }
                }
            }
        }
        if wal_long.swap(false, Ordering::Relaxed) {
            // Most of the WAL is copied already (see `checkpointer`): this copies the
            // rest, and the next commit starts the file again.
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&mut conn)
                .await
            {
                warn!(error = %e, "checkpointing the store's WAL failed");
            }
        }
    }
    let _ = conn.close().await;
}

/// Checkpoints the WAL after commits, at most once per [`CHECKPOINT_EVERY`], until the
/// writer has ended. A passive checkpoint copies the pages no reader still needs into
/// the database file and never blocks the writer. With commits landing all the while it
/// seldom copies the whole WAL, and only a whole copy lets the next commit start the
/// file again from the beginning; so once the WAL is longer than [`WAL_RESTART_FRAMES`]
/// it sets `long`, and the writer copies the rest between two commits.
async fn checkpointer(
    mut conn: SqliteConnection,
    mut commits: mpsc::Receiver<()>,
    long: Arc<AtomicBool>,
) {
    while commits.recv().await.is_some() {
        match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&mut conn)
            .await
        {
            Ok((_, frames, _)) => long.store(frames > WAL_RESTART_FRAMES, Ordering::Relaxed),
            Err(e) => {
                warn!(error = %e, "checkpointing the store's WAL failed; retrying after the next write")
            }
        }
        tokio::time::sleep(CHECKPOINT_EVERY).await;
    }
    let _ = conn.close().await;
}

/// Applies a batch in one transaction; the rows each write affected.
///
/// Every statement is a round trip to sqlx's SQLite worker thread, and those round trips,
/// not SQLite, bound the store's throughput. So the bulk of the writes — task commits and
/// their events, and run checkpoints — go in a few multi-row statements per batch, in
/// the order they were queued (a later write of the same row wins), then runs created
/// and runs finished (a finished run's checkpoints removed after this batch's
/// checkpoints are stored); the rest follow one by one, in order. That order is safe
/// because each call for a run or a task waits for the one before — except checkpoints,
/// which may be queued unwaited, and are bulk: a run's `CreateRun` is waited for before
/// its first checkpoint, and its `FinishRun` comes after its last one.
async fn apply_batch(conn: &mut SqliteConnection, ops: &[Op]) -> Result<Vec<u64>, String> {
    let e = |e: sqlx::Error| e.to_string();
    let mut tx = conn.begin().await.map_err(e)?;
    let now = now_ms();
    let mut tasks = Vec::new();
    let mut events = Vec::new();
    let mut units = Vec::new();
    let mut created = Vec::new();
    let mut finished = Vec::new();
    for op in ops {
        match &op.write {
            Write::Commit {
                id,
                snapshot,
                seq,
                terminal,
                first_message_id,
                events: logged,
            } => {
                // Without events, see `apply`.
                if let Some(snapshot) = snapshot.as_ref().filter(|_| !logged.is_empty()) {
                    tasks.push((id, snapshot, *seq, *terminal, first_message_id));
                }
                events.extend(logged.iter().map(|(seq, event)| (id, *seq, event)));
            }
            Write::SaveUnit {
                run,
                step,
                item,
                checkpoint,
            } => units.push((run, step, *item, checkpoint)),
            Write::CreateRun { id, header } => created.push((id, header)),
            Write::FinishRun { run, end } => finished.push((run, end)),
            _ => {}
        }
    }
    for chunk in tasks.chunks(BULK_ROWS) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, updated_at) ",
        );
        q.push_values(chunk, |mut row, (id, snapshot, seq, terminal, first)| {
            row.push_bind(id.as_str())
                .push_bind(snapshot.as_str())
                .push_bind(*seq)
                .push_bind(*terminal)
                .push_bind(first.as_deref())
                .push_bind(now);
        });
        q.push(
            " ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
              seq = max(tasks.seq, excluded.seq), terminal = excluded.terminal,
              first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
              updated_at = excluded.updated_at",
        );
        execute(&mut tx, q).await.map_err(e)?;
    }
    for chunk in events.chunks(BULK_ROWS) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO task_events (task_id, seq, event) ",
        );
        q.push_values(chunk, |mut row, (id, seq, event)| {
            row.push_bind(id.as_str())
                .push_bind(*seq)
                .push_bind(event.as_str());
        });
        execute(&mut tx, q).await.map_err(e)?;
    }
    for chunk in units.chunks(BULK_ROWS) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO run_units (run_id, step, item, checkpoint) ",
        );
        q.push_values(chunk, |mut row, (run, step, item, checkpoint)| {
            row.push_bind(run.as_str())
                .push_bind(step.as_str())
                .push_bind(*item)
                .push_bind(checkpoint.as_str());
        });
        q.push(" ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint");
        execute(&mut tx, q).await.map_err(e)?;
    }
    for chunk in created.chunks(BULK_ROWS) {
        let mut q =
            sqlx::QueryBuilder::<sqlx::Sqlite>::new("INSERT INTO runs (id, header, updated_at) ");
        q.push_values(chunk, |mut row, (id, header)| {
            row.push_bind(id.as_str())
                .push_bind(header.as_str())
                .push_bind(now);
        });
        q.push(
            " ON CONFLICT (id) DO UPDATE SET header = excluded.header,
              updated_at = excluded.updated_at",
        );
        execute(&mut tx, q).await.map_err(e)?;
    }
    for chunk in finished.chunks(BULK_ROWS) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "UPDATE runs SET run_end = ended.column2, updated_at = ended.column3 FROM (",
        );
        q.push_values(chunk, |mut row, (run, end)| {
            row.push_bind(run.as_str())
                .push_bind(end.as_str())
                .push_bind(now);
        });
        q.push(") AS ended WHERE runs.id = ended.column1");
        execute(&mut tx, q).await.map_err(e)?;
        // A finished run needs only its end: its steps are never run again.
        let mut q =
            sqlx::QueryBuilder::<sqlx::Sqlite>::new("DELETE FROM run_units WHERE run_id IN (");
        let mut ids = q.separated(", ");
        for (run, _) in chunk {
            ids.push_bind(run.as_str());
        }
        q.push(")");
        execute(&mut tx, q).await.map_err(e)?;
    }
    let mut rows = Vec::with_capacity(ops.len());
    for op in ops {
        rows.push(apply(&mut tx, &op.write).await.map_err(e)?);
    }
    tx.commit().await.map_err(e)?;
    Ok(rows)
}

/// Runs a statement built for one batch; not kept prepared, since its text changes with
/// its number of rows.
async fn execute(
    conn: &mut SqliteConnection,
    mut q: sqlx::QueryBuilder<'_, sqlx::Sqlite>,
) -> Result<(), sqlx::Error> {
    q.build().persistent(false).execute(conn).await?;
    Ok(())
}

async fn apply(conn: &mut SqliteConnection, w: &Write) -> Result<u64, sqlx::Error> {
    let now = now_ms();
    Ok(match w {
        // A snapshot changed without an event (a user's message added to the history)
        // includes every event logged so far: a task's commits each wait for the one
        // before, so those are all in earlier batches.
        Write::Commit {
            id,
            snapshot: Some(snapshot),
            terminal,
            first_message_id,
            events,
            ..
        } if events.is_empty() => sqlx::query(
            "INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, updated_at)
             VALUES (?1, ?2, coalesce((SELECT max(seq) FROM task_events WHERE task_id = ?1), 0), ?3, ?4, ?5)
             ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot, seq = excluded.seq,
               terminal = excluded.terminal,
               first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
               updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(snapshot)
        .bind(terminal)
        .bind(first_message_id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected(),
        // Written in bulk by `apply_batch`, before the writes applied one by one.
        Write::Commit { .. }
        | Write::SaveUnit { .. }
        | Write::CreateRun { .. }
        | Write::FinishRun { .. } => 1,
        Write::SetPush {
            task,
            config_id,
            config,
        } => sqlx::query(
            "INSERT INTO push_configs (task_id, config_id, position, config)
             VALUES (?1, ?2, (SELECT coalesce(max(position), 0) + 1 FROM push_configs WHERE task_id = ?1), ?3)
             ON CONFLICT (task_id, config_id) DO UPDATE SET config = ?3",
        )
        .bind(task)
        .bind(config_id)
        .bind(config)
        .execute(&mut *conn)
        .await?
        .rows_affected(),
        Write::DeletePush { task, config_id } => {
            sqlx::query("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2")
                .bind(task)
                .bind(config_id)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        }
        Write::SetCanceled { run } => {
            sqlx::query("UPDATE runs SET canceled = 1, updated_at = ?2 WHERE id = ?1")
                .bind(run)
                .bind(now)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        }
        Write::Prune { before } => {
            let old = "SELECT id FROM tasks WHERE terminal = 1 AND updated_at < ?1";
            sqlx::query(&format!("DELETE FROM task_events WHERE task_id IN ({old})"))
                .bind(before)
                .execute(&mut *conn)
                .await?;
            sqlx::query(&format!("DELETE FROM push_configs WHERE task_id IN ({old})"))
                .bind(before)
                .execute(&mut *conn)
                .await?;
            let n = sqlx::query("DELETE FROM tasks WHERE terminal = 1 AND updated_at < ?1")
                .bind(before)
                .execute(&mut *conn)
                .await?
                .rows_affected();
            let runs = "SELECT id FROM runs WHERE run_end IS NOT NULL AND updated_at < ?1";
            sqlx::query(&format!("DELETE FROM run_units WHERE run_id IN ({runs})"))
                .bind(before)
                .execute(&mut *conn)
                .await?;
            sqlx::query("DELETE FROM runs WHERE run_end IS NOT NULL AND updated_at < ?1")
                .bind(before)
                .execute(&mut *conn)
                .await?;
            n
        }
    })
}

/// Most events logged after a task's stored snapshot: a read replays at most this many
/// (and those of the commit that passed it).
const SNAPSHOT_EVERY: u64 = 32;

/// Whether a commit stores the task's snapshot, or only its events (the snapshot is
/// then the stored one with the events after it replayed; `SqliteStore::caught_up`).
/// Most commits of a busy task are a status or an artifact chunk, and rewriting the
/// whole task for each made up most of what a commit wrote. Stored: a task's first
/// commit, one without events (a user's message added to the history), one with a
/// whole task, the one that ends it (so a finished task is read without replaying), and
/// at least every [`SNAPSHOT_EVERY`] events.
fn snapshot_due(task: &Task, events: &[LoggedEvent]) -> bool {
    let (Some((first, _)), Some((last, _))) = (events.first(), events.last()) else {
        return true;
    };
    *first == 1
        || task.status.state.is_terminal()
        || events
            .iter()
            .any(|(_, e)| matches!(**e, StreamEvent::Task(_)))
        || (first - 1) / SNAPSHOT_EVERY != last / SNAPSHOT_EVERY
}

impl SqliteStore {
    /// A stored snapshot brought up to date: the events logged after it, replayed.
    async fn caught_up(&self, mut task: Task, mut seq: u64) -> Result<(Task, u64), StoreError> {
        for (n, event) in self.events_after(&task.id, seq).await? {
            apply_event(&mut task, &event);
            seq = n;
        }
        Ok((task, seq))
    }
}

fn parse_task(snapshot: &str) -> Result<Task, StoreError> {
    serde_json::from_str(snapshot).map_err(|e| err(format!("a stored task is unreadable: {e}")))
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
                .await
                .map_err(err)?;
            Ok(n as usize)
        })
    }
}

impl TaskStore for SqliteStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(Task, u64)>, StoreError>> {
        let id = id.clone();
        Box::pin(async move {
            let row = sqlx::query("SELECT snapshot, seq, terminal FROM tasks WHERE id = ?1")
                .bind(id.as_str())
                .fetch_optional(&self.reads)
                .await
                .map_err(err)?;
            let Some(row) = row else { return Ok(None) };
            let snapshot: String = row.get(0);
            let seq: i64 = row.get(1);
            let terminal: bool = row.get(2);
            let task = parse_task(&snapshot)?;
            Ok(Some(if terminal {
                // Stored with the event that ended it: nothing follows.
                (task, seq as u64)
            } else {
                self.caught_up(task, seq as u64).await?
            }))
        })
    }

    fn commit<'a>(
        &'a self,
        task: &'a Task,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let snapshot = snapshot_due(task, events)
                .then(|| serde_json::to_string(task))
                .transpose()
                .map_err(err)?;
            let events = events
                .iter()
                .map(|(seq, e)| Ok((*seq as i64, serde_json::to_string(&**e).map_err(err)?)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            // Without a new event, `apply` gives the snapshot the task's last stored number.
            let seq = events.last().map_or(0, |(s, _)| *s);
            self.write(Write::Commit {
                id: task.id.to_string(),
                snapshot,
                seq,
                terminal: task.status.state.is_terminal(),
                first_message_id: task.history.first().map(|m| m.message_id.to_string()),
                events,
            })
            .await
            .map_err(err)?;
            Ok(())
        })
    }

    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>> {
        let id = id.to_string();
        Box::pin(async move {
            let rows = sqlx::query(
                "SELECT seq, event FROM task_events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq",
            )
            .bind(&id)
            .bind(after as i64)
            .fetch_all(&self.reads)
            .await
            .map_err(err)?;
            rows.into_iter()
                .map(|r| {
                    let seq: i64 = r.get(0);
                    let text: String = r.get(1);
                    let event: StreamEvent = serde_json::from_str(&text)
                        .map_err(|e| err(format!("a stored event is unreadable: {e}")))?;
                    Ok((seq as u64, std::sync::Arc::new(event)))
                })
                .collect()
        })
    }

    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        Box::pin(async move {
            let id: Option<String> =
                sqlx::query_scalar("SELECT id FROM tasks WHERE first_message_id = ?1 LIMIT 1")
                    .bind(message_id)
                    .fetch_optional(&self.reads)
                    .await
                    .map_err(err)?;
            Ok(id.map(TaskId::new))
        })
    }

    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(Task, u64)>, StoreError>> {
        Box::pin(async move {
            let rows = sqlx::query("SELECT snapshot, seq FROM tasks WHERE terminal = 0")
                .fetch_all(&self.reads)
                .await
                .map_err(err)?;
            let mut tasks = Vec::with_capacity(rows.len());
            for r in rows {
                let snapshot: String = r.get(0);
                let seq: i64 = r.get(1);
                tasks.push(self.caught_up(parse_task(&snapshot)?, seq as u64).await?);
            }
            Ok(tasks)
        })
    }

    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        self.prune_finished(before)
    }

    fn set_push_config(
        &self,
        task: &TaskId,
        config: PushNotificationConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let task = task.to_string();
        Box::pin(async move {
            let config_id = config.id.clone().unwrap_or_else(|| task.clone());
            let config = serde_json::to_string(&config).map_err(err)?;
            self.write(Write::SetPush {
                task,
                config_id,
                config,
            })
            .await
            .map_err(err)?;
            Ok(())
        })
    }

    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<PushNotificationConfig>, StoreError>> {
        let task = task.to_string();
        Box::pin(async move {
            let rows: Vec<String> = sqlx::query_scalar(
                "SELECT config FROM push_configs WHERE task_id = ?1 ORDER BY position",
            )
            .bind(&task)
            .fetch_all(&self.reads)
            .await
            .map_err(err)?;
            rows.iter()
                .map(|c| serde_json::from_str(c).map_err(err))
                .collect()
        })
    }

    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (task, config_id) = (task.to_string(), config_id.to_owned());
        Box::pin(async move {
            let n = self
                .write(Write::DeletePush { task, config_id })
                .await
                .map_err(err)?;
            Ok(n > 0)
        })
    }
}

/// The write that stores a unit's checkpoint.
fn unit_write(
    run_id: &str,
    step: &str,
    item: Option<usize>,
    checkpoint: &Checkpoint,
) -> Result<Write, RunStoreError> {
    Ok(Write::SaveUnit {
        run: run_id.to_owned(),
        step: step.to_owned(),
        item: item.map_or(-1, |i| i as i64),
        checkpoint: serde_json::to_string(checkpoint).map_err(run_err)?,
    })
}

impl RunStore for SqliteStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(header).map_err(run_err)?;
            self.write(Write::CreateRun {
                id: header.run_id.clone(),
                header: json,
            })
            .await
            .map_err(run_err)?;
            Ok(())
        })
    }

    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            self.write(unit_write(run_id, step, item, checkpoint)?)
                .await
                .map_err(run_err)?;
            Ok(())
        })
    }

    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let write = unit_write(run_id, step, item, checkpoint)?;
            // Nobody waits for the outcome: the writer logs a failure.
            let (done, _) = oneshot::channel();
            self.writes
                .send(Op { write, done })
                .await
                .map_err(|_| run_err("the store's writer has stopped"))
        })
    }

    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            self.write(Write::SetCanceled {
                run: run_id.to_owned(),
            })
            .await
            .map_err(run_err)?;
            Ok(())
        })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(end).map_err(run_err)?;
            self.write(Write::FinishRun {
                run: run_id.to_owned(),
                end: json,
            })
            .await
            .map_err(run_err)?;
            Ok(())
        })
    }

    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        Box::pin(async move {
            let Some(row) = sqlx::query("SELECT header, canceled, run_end FROM runs WHERE id = ?1")
                .bind(run_id)
                .fetch_optional(&self.reads)
                .await
                .map_err(run_err)?
            else {
                return Ok(None);
            };
            let header: String = row.get(0);
            let canceled: bool = row.get(1);
            let end: Option<String> = row.get(2);
            let unreadable =
                |e: serde_json::Error| run_err(format!("run {run_id} is unreadable: {e}"));
            let units =
                sqlx::query("SELECT step, item, checkpoint FROM run_units WHERE run_id = ?1")
                    .bind(run_id)
                    .fetch_all(&self.reads)
                    .await
                    .map_err(run_err)?
                    .into_iter()
                    .map(|r| {
                        let step: String = r.get(0);
                        let item: i64 = r.get(1);
                        let c: String = r.get(2);
                        let item = usize::try_from(item).ok();
                        Ok(((step, item), serde_json::from_str(&c).map_err(unreadable)?))
                    })
                    .collect::<Result<HashMap<_, _>, RunStoreError>>()?;
            Ok(Some(SavedRun {
                header: serde_json::from_str(&header).map_err(unreadable)?,
                canceled,
                units,
                end: end
                    .map(|e| serde_json::from_str(&e))
                    .transpose()
                    .map_err(unreadable)?,
            }))
        })
    }
}

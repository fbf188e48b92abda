//! The one writer: a task that owns the only writing connection and commits whatever
//! is queued in one transaction (group commit), the bulk of it in multi-row statements;
//! and the checkpointer beside it, which copies the WAL into the database file so that
//! no commit waits for a checkpoint.

use super::WriteError;
use crate::rows::millis;
use sqlx::Connection;
use sqlx::sqlite::SqliteConnection;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, oneshot};
use tracing::warn;

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 512;

/// Most rows in one multi-row statement (at most 6 parameters a row, well under
/// SQLite's limit of 32,766 per statement).
const BULK_ROWS: usize = 1_000;

/// How often the WAL is checkpointed under a steady stream of writes.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL frames (pages) past which the writer finishes a checkpoint itself.
const WAL_RESTART_FRAMES: i64 = 4096;

/// A task's columns for ListTasks: its context, state and status time.
#[derive(Debug, Clone)]
pub(super) struct Listed {
    pub(super) context_id: String,
    pub(super) state: &'static str,
    pub(super) status_ms: i64,
}

/// One write, with everything it needs owned.
pub(super) enum Write {
    Commit {
        id: String,
        /// None: only the events are stored (see `snapshot_due`).
        snapshot: Option<String>,
        seq: i64,
        terminal: bool,
        first_message_id: Option<String>,
        /// Who started the task, and in which tenant; set once, with its first message.
        initiator: Option<String>,
        tenant: Option<String>,
        events: Vec<(i64, String)>,
        /// What ListTasks filters and sorts on, kept current at every commit.
        listed: Listed,
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
    /// Writes nothing: waited for, it returns once every write queued before it is
    /// committed (the writer keeps their order).
    Flush,
    /// Takes the database's write lock and writes what is already there (the schema
    /// version): whether the store can write now, for readiness.
    Probe,
}

pub(super) struct Op {
    pub(super) write: Write,
    /// Rows the write affected.
    pub(super) done: oneshot::Sender<Result<u64, WriteError>>,
}

fn now_ms() -> i64 {
    millis(SystemTime::now())
}

/// Commits queued writes in batches until every handle is gone.
pub(super) async fn writer_loop(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<Op>,
    committed: mpsc::Sender<()>,
    wal_long: Arc<AtomicBool>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let ops = std::mem::take(&mut batch);
        let started = std::time::Instant::now();
        let r = apply_batch(&mut conn, &ops).await;
        orchestrator_metrics::get()
            .store_commit
            .observe(started.elapsed().as_secs_f64());
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
pub(super) async fn checkpointer(
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
async fn apply_batch(conn: &mut SqliteConnection, ops: &[Op]) -> Result<Vec<u64>, WriteError> {
    let mut tx = conn.begin().await?;
    let now = now_ms();
    let mut tasks = Vec::new();
    // Per task, its last commit's listed columns, and whether that commit stored them
    // with its snapshot; those that did not are updated on their own.
    let mut listed: HashMap<&str, (&Listed, bool)> = HashMap::new();
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
                initiator,
                tenant,
                events: logged,
                listed: columns,
            } => {
                // Without events, see `apply`.
                let stored = snapshot.is_some();
                if let Some(snapshot) = snapshot.as_ref().filter(|_| !logged.is_empty()) {
                    tasks.push((
                        id,
                        snapshot,
                        *seq,
                        *terminal,
                        (first_message_id, initiator, tenant),
                        columns,
                    ));
                }
                listed.insert(id.as_str(), (columns, stored));
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
            "INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, initiator, tenant, updated_at, context_id, state, status_ms) ",
        );
        q.push_values(
            chunk,
            |mut row, (id, snapshot, seq, terminal, (first, initiator, tenant), l)| {
                row.push_bind(id.as_str())
                    .push_bind(snapshot.as_str())
                    .push_bind(*seq)
                    .push_bind(*terminal)
                    .push_bind(first.as_deref())
                    .push_bind(initiator.as_deref())
                    .push_bind(tenant.as_deref())
                    .push_bind(now)
                    .push_bind(l.context_id.as_str())
                    .push_bind(l.state)
                    .push_bind(l.status_ms);
            },
        );
        q.push(
            " ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
              seq = max(tasks.seq, excluded.seq), terminal = excluded.terminal,
              first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
              initiator = coalesce(tasks.initiator, excluded.initiator),
              tenant = coalesce(tasks.tenant, excluded.tenant),
              updated_at = excluded.updated_at, context_id = excluded.context_id,
              state = excluded.state, status_ms = excluded.status_ms",
        );
        execute(&mut tx, q).await?;
    }
    let touched: Vec<(&str, &Listed)> = listed
        .into_iter()
        .filter(|(_, (_, stored))| !stored)
        .map(|(id, (l, _))| (id, l))
        .collect();
    for chunk in touched.chunks(BULK_ROWS) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "UPDATE tasks SET state = changed.column2, status_ms = changed.column3 FROM (",
        );
        q.push_values(chunk, |mut row, (id, l)| {
            row.push_bind(*id).push_bind(l.state).push_bind(l.status_ms);
        });
        q.push(") AS changed WHERE tasks.id = changed.column1");
        execute(&mut tx, q).await?;
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
        execute(&mut tx, q).await?;
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
        execute(&mut tx, q).await?;
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
        execute(&mut tx, q).await?;
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
        // A finished run keeps its steps' checkpoints: a retry of it begins with the
        // results of those that completed. They go when retention prunes the run.
        execute(&mut tx, q).await?;
    }
    let mut rows = Vec::with_capacity(ops.len());
    for op in ops {
        rows.push(apply(&mut tx, &op.write).await?);
    }
    tx.commit().await?;
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
            initiator,
            tenant,
            events,
            listed,
            ..
        } if events.is_empty() => sqlx::query(
            "INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, updated_at, context_id, state, status_ms, initiator, tenant)
             VALUES (?1, ?2, coalesce((SELECT max(seq) FROM task_events WHERE task_id = ?1), 0), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot, seq = excluded.seq,
               terminal = excluded.terminal,
               first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
               initiator = coalesce(tasks.initiator, excluded.initiator),
               tenant = coalesce(tasks.tenant, excluded.tenant),
               updated_at = excluded.updated_at, context_id = excluded.context_id,
               state = excluded.state, status_ms = excluded.status_ms",
        )
        .bind(id)
        .bind(snapshot)
        .bind(terminal)
        .bind(first_message_id)
        .bind(now)
        .bind(&listed.context_id)
        .bind(listed.state)
        .bind(listed.status_ms)
        .bind(initiator)
        .bind(tenant)
        .execute(&mut *conn)
        .await?
        .rows_affected(),
        // Written in bulk by `apply_batch`, before the writes applied one by one.
        Write::Commit { .. }
        | Write::SaveUnit { .. }
        | Write::CreateRun { .. }
        | Write::FinishRun { .. } => 1,
        Write::Flush => 0,
        Write::Probe => {
            static PROBE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
            let sql: &'static str = PROBE.get_or_init(|| {
                format!("PRAGMA user_version = {}", super::schema::version())
            });
            sqlx::query(sql).execute(&mut *conn).await?;
            0
        }
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

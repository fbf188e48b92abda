//! The one writer: a thread that owns the only writing connection and commits whatever
//! is queued in one transaction (group commit), each write a statement kept prepared;
//! and the checkpointer beside it, which copies the WAL into the database file so that
//! no commit waits for a checkpoint.
//!
//! The writer is a thread of its own with a rusqlite connection: a batch is one
//! hand-off (with sqlx it was a round trip to the connection's thread per statement),
//! and its statements are prepared once, not parsed again in every batch.

use super::WriteError;
use crate::rows::millis;
use rusqlite::{Connection, ToSql, Transaction, params};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, oneshot};
use tracing::warn;

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 512;

/// Statements the writer keeps prepared: more than it has.
const PREPARED: usize = 32;

/// A batch this large says the store is busy: the next one waits for more writes to
/// gather (see [`gather`]).
const BUSY_BATCH: usize = 8;

/// The longest a busy writer lets writes gather before it begins a batch, and how often
/// it looks whether enough have.
const GATHER: Duration = Duration::from_micros(1_500);
const GATHER_STEP: Duration = Duration::from_micros(250);

/// Writes enough to begin a batch at once.
const GATHERED: usize = 64;

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
        /// None: only the events are stored (see `snapshot_due`), the task's end too.
        snapshot: Option<String>,
        seq: i64,
        terminal: bool,
        first_message_id: Option<String>,
        /// Who started the task, and in which tenant; set once, with its first message.
        initiator: Option<String>,
        tenant: Option<String>,
        /// The commit's events as the rows that log them, each with its number (see
        /// [`super::tasks::logged_rows`]).
        rows: Vec<(i64, String)>,
        /// What ListTasks filters and sorts on, kept current at every commit.
        listed: Listed,
        /// Whether `listed` may differ from the task's last commit: not when this one
        /// brings only artifacts, which move neither the state nor the status time.
        moved: bool,
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
    /// Moves a schedule's mark forward (see `Store::advance_schedule`).
    AdvanceSchedule {
        key: String,
        to: i64,
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

/// Opens the writing connection to a database whose schema is up to date.
///
/// `synchronous = NORMAL`, and no commit checkpoints (`wal_autocheckpoint = 0`): a
/// checkpoint copies the WAL's pages into the database file and syncs it, and done in a
/// commit (SQLite's default) it makes every write queued behind that commit wait. The
/// checkpointer does it beside.
pub(super) fn open(
    path: &Path,
    journal_size_limit: u64,
    busy_timeout: Duration,
) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(busy_timeout)?;
    // A multi-row statement (pruning) keeps a journal of its own, to undo just itself:
    // in memory, not in a temporary file.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA journal_size_limit = {journal_size_limit};
         PRAGMA temp_store = MEMORY;
         PRAGMA foreign_keys = OFF;
         PRAGMA wal_autocheckpoint = 0;"
    ))?;
    conn.set_prepared_statement_cache_capacity(PREPARED);
    Ok(conn)
}

/// Commits queued writes in batches until every handle is gone. Blocks: it runs on a
/// thread of its own.
pub(super) fn writer(
    mut conn: Connection,
    mut rx: mpsc::Receiver<Op>,
    committed: mpsc::Sender<()>,
    wal_long: Arc<AtomicBool>,
    observe: crate::Observe,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut busy = false;
    while rx.blocking_recv_many(&mut batch, MAX_BATCH) > 0 {
        if busy {
            gather(&mut rx, &mut batch);
        }
        busy = batch.len() >= BUSY_BATCH;
        let ops = std::mem::take(&mut batch);
        let started = std::time::Instant::now();
        let r = apply_batch(&mut conn, &ops);
        observe.committed(started.elapsed());
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
            if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                warn!(error = %e, "checkpointing the store's WAL failed");
            }
        }
    }
    if let Err((_, e)) = conn.close() {
        warn!(error = %e, "closing the store's writing connection failed");
    }
}

/// Lets writes gather for a moment before a batch begins, as PostgreSQL's
/// `commit_delay` does when other transactions are active: a commit's cost is mostly
/// its pages written to the WAL, and a task's, a run's and each index's latest page is
/// written once per commit whatever the number of writes to it. Without it, under the
/// c64 diamond a batch held ~7 writes; with it ~39, a quarter fewer bytes written a run
/// (the WAL and its checkpoints) and 12-17% more runs a second. Only after a busy
/// batch: a write on its own does not wait.
fn gather(rx: &mut mpsc::Receiver<Op>, batch: &mut Vec<Op>) {
    let until = std::time::Instant::now() + GATHER;
    while batch.len() + rx.len() < GATHERED && std::time::Instant::now() < until {
        std::thread::sleep(GATHER_STEP);
    }
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(op) => batch.push(op),
            Err(_) => break,
        }
    }
}

/// Checkpoints the WAL after commits, at most once per [`CHECKPOINT_EVERY`], until the
/// writer has ended; blocks, on a thread of its own. A passive checkpoint copies the pages no reader still needs into
/// the database file and never blocks the writer. With commits landing all the while it
/// seldom copies the whole WAL, and only a whole copy lets the next commit start the
/// file again from the beginning; so once the WAL is longer than [`WAL_RESTART_FRAMES`]
/// it sets `long`, and the writer copies the rest between two commits.
pub(super) fn checkpointer(
    conn: Connection,
    mut commits: mpsc::Receiver<()>,
    long: Arc<AtomicBool>,
) {
    while commits.blocking_recv().is_some() {
        let checkpoint =
            conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1));
        match checkpoint {
            Ok(frames) => long.store(frames > WAL_RESTART_FRAMES, Ordering::Relaxed),
            Err(e) => {
                warn!(error = %e, "checkpointing the store's WAL failed; retrying after the next write")
            }
        }
        std::thread::sleep(CHECKPOINT_EVERY);
    }
    if let Err((_, e)) = conn.close() {
        warn!(error = %e, "closing the store's checkpointing connection failed");
    }
}

/// Applies a batch in one transaction, each write in the order it was queued; the rows
/// each write affected.
///
/// Shortcuts keep the statements a batch runs few, the final state the same: a unit's
/// checkpoint that a later one in the batch replaces (a step's `Sent`, then its `Done`)
/// is not written; a commit's events come as one row (see
/// [`super::tasks::logged_rows`]); and the tasks' rows are inserted together, many a
/// statement, after the batch's other writes (a task's commits each wait for the one
/// before, so no write in the batch reads another's events).
fn apply_batch(conn: &mut Connection, ops: &[Op]) -> Result<Vec<u64>, WriteError> {
    let tx = conn.transaction()?;
    let now = now_ms();
    let mut last_unit = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        if let Write::SaveUnit {
            run, step, item, ..
        } = &op.write
        {
            last_unit.insert((run.as_str(), step.as_str(), *item), i);
        }
    }
    let mut events = Vec::new();
    let mut rows = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        rows.push(match &op.write {
            Write::SaveUnit {
                run, step, item, ..
            } if last_unit[&(run.as_str(), step.as_str(), *item)] != i => 1,
            Write::Commit { id, rows: more, .. } => {
                events.extend(
                    more.iter()
                        .map(|(seq, row)| (id.as_str(), *seq, row.as_str())),
                );
                apply(&tx, &op.write, now)?
            }
            write => apply(&tx, write, now)?,
        });
    }
    insert_events(&tx, &events)?;
    tx.commit()?;
    Ok(rows)
}

/// Rows in each of the multi-row event inserts, largest first: a batch's events go in
/// as few statements as these make, each kept prepared.
const EVENT_ROWS: [usize; 3] = [32, 8, 1];

/// Inserts tasks' logged rows, as (task, number, JSON).
fn insert_events(tx: &Transaction<'_>, events: &[(&str, i64, &str)]) -> rusqlite::Result<()> {
    let mut rest = events;
    for n in EVENT_ROWS {
        if rest.len() < n {
            continue;
        }
        let values = vec!["(?, ?, ?)"; n].join(", ");
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO task_events (task_id, seq, event) VALUES {values}"
        ))?;
        while rest.len() >= n {
            let (chunk, after) = rest.split_at(n);
            let params = chunk
                .iter()
                .flat_map(|(id, seq, event)| [id as &dyn ToSql, seq, event as &dyn ToSql]);
            insert.execute(rusqlite::params_from_iter(params))?;
            rest = after;
        }
    }
    Ok(())
}

/// Applies one write; the rows it affected (1 for a stored commit, checkpoint or run).
fn apply(tx: &Transaction<'_>, w: &Write, now: i64) -> rusqlite::Result<u64> {
    Ok(match w {
        Write::Commit {
            id,
            snapshot,
            seq,
            terminal,
            first_message_id,
            initiator,
            tenant,
            rows,
            listed,
            moved,
        } => {
            match snapshot {
                Some(snapshot) => {
                    // A snapshot changed without an event (a user's message added to
                    // the history) includes every event logged so far, and takes the
                    // last one's number: a task's commits each wait for the one before,
                    // so those are all committed already.
                    let seq = (!rows.is_empty()).then_some(*seq);
                    tx.prepare_cached(
                        "INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, initiator, tenant, updated_at, context_id, state, status_ms)
                         VALUES (?1, ?2, coalesce(?3, (SELECT max(seq) FROM task_events WHERE task_id = ?1), 0),
                           ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                         ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
                           seq = max(tasks.seq, excluded.seq), terminal = excluded.terminal,
                           first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
                           initiator = coalesce(tasks.initiator, excluded.initiator),
                           tenant = coalesce(tasks.tenant, excluded.tenant),
                           updated_at = excluded.updated_at, context_id = excluded.context_id,
                           state = excluded.state, status_ms = excluded.status_ms",
                    )?
                    .execute(params![
                        id,
                        snapshot,
                        seq,
                        terminal,
                        first_message_id,
                        initiator,
                        tenant,
                        now,
                        listed.context_id,
                        listed.state,
                        listed.status_ms,
                    ])?;
                }
                // Only the events: the snapshot stays, the columns ListTasks reads
                // follow the task; and at its end, what pruning and a restart read.
                None if *terminal => {
                    tx.prepare_cached(
                        "UPDATE tasks SET state = ?2, status_ms = ?3, terminal = 1, updated_at = ?4
                         WHERE id = ?1",
                    )?
                    .execute(params![id, listed.state, listed.status_ms, now])?;
                }
                None if *moved => {
                    tx.prepare_cached("UPDATE tasks SET state = ?2, status_ms = ?3 WHERE id = ?1")?
                        .execute(params![id, listed.state, listed.status_ms])?;
                }
                None => {}
            }
            // The events are inserted with the batch's others (see `apply_batch`).
            1
        }
        Write::SaveUnit {
            run,
            step,
            item,
            checkpoint,
        } => {
            tx.prepare_cached(
                "INSERT INTO run_units (run_id, step, item, checkpoint) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint",
            )?
            .execute(params![run, step, item, checkpoint])?;
            1
        }
        Write::CreateRun { id, header } => {
            tx.prepare_cached(
                "INSERT INTO runs (id, header, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                   updated_at = excluded.updated_at",
            )?
            .execute(params![id, header, now])?;
            1
        }
        // A finished run keeps its steps' checkpoints: a retry of it begins with the
        // results of those that completed. They go when retention prunes the run.
        Write::FinishRun { run, end } => {
            tx.prepare_cached("UPDATE runs SET run_end = ?2, updated_at = ?3 WHERE id = ?1")?
                .execute(params![run, end, now])?;
            1
        }
        Write::Flush => 0,
        Write::AdvanceSchedule { key, to } => tx
            .prepare_cached(
                "INSERT INTO schedule_marks (key, mark) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET mark = excluded.mark
                 WHERE schedule_marks.mark < excluded.mark",
            )?
            .execute(params![key, to])? as u64,
        Write::Probe => {
            tx.pragma_update(None, "user_version", super::schema::version() as i64)?;
            0
        }
        Write::SetPush {
            task,
            config_id,
            config,
        } => tx
            .prepare_cached(
                "INSERT INTO push_configs (task_id, config_id, position, config)
                 VALUES (?1, ?2, (SELECT coalesce(max(position), 0) + 1 FROM push_configs WHERE task_id = ?1), ?3)
                 ON CONFLICT (task_id, config_id) DO UPDATE SET config = ?3",
            )?
            .execute(params![task, config_id, config])? as u64,
        Write::DeletePush { task, config_id } => tx
            .prepare_cached("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2")?
            .execute(params![task, config_id])? as u64,
        Write::SetCanceled { run } => tx
            .prepare_cached("UPDATE runs SET canceled = 1, updated_at = ?2 WHERE id = ?1")?
            .execute(params![run, now])? as u64,
        Write::Prune { before } => {
            let old = "SELECT id FROM tasks WHERE terminal = 1 AND updated_at < ?1";
            tx.execute(
                &format!("DELETE FROM task_events WHERE task_id IN ({old})"),
                [before],
            )?;
            tx.execute(
                &format!("DELETE FROM push_configs WHERE task_id IN ({old})"),
                [before],
            )?;
            let n = tx.execute(
                "DELETE FROM tasks WHERE terminal = 1 AND updated_at < ?1",
                [before],
            )? as u64;
            let runs = "SELECT id FROM runs WHERE run_end IS NOT NULL AND updated_at < ?1";
            tx.execute(
                &format!("DELETE FROM run_units WHERE run_id IN ({runs})"),
                [before],
            )?;
            tx.execute(
                "DELETE FROM runs WHERE run_end IS NOT NULL AND updated_at < ?1",
                [before],
            )?;
            n
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(write: Write) -> Op {
        Op {
            write,
            done: oneshot::channel().0,
        }
    }

    fn commit(id: &str, snapshot: bool, events: std::ops::RangeInclusive<i64>) -> Op {
        op(Write::Commit {
            id: id.to_owned(),
            snapshot: snapshot.then(|| format!("{{\"id\": \"{id}\"}}")),
            seq: *events.end(),
            terminal: false,
            first_message_id: None,
            initiator: None,
            tenant: None,
            rows: rows(events),
            listed: Listed {
                context_id: "c".into(),
                state: "working",
                status_ms: 1,
            },
            moved: true,
        })
    }

    /// Events numbered `events` logged as [`super::super::tasks::logged_rows`] logs
    /// them: one row, an array numbered by the last, for two or more.
    fn rows(events: std::ops::RangeInclusive<i64>) -> Vec<(i64, String)> {
        let last = *events.end();
        let texts: Vec<String> = events.map(|n| format!("{{\"n\": {n}}}")).collect();
        match texts.len() {
            1 => vec![(last, texts[0].clone())],
            _ => vec![(last, format!("[{}]", texts.join(",")))],
        }
    }

    fn unit(checkpoint: &str) -> Op {
        op(Write::SaveUnit {
            run: "r".into(),
            step: "s".into(),
            item: -1,
            checkpoint: checkpoint.into(),
        })
    }

    /// A batch's events go in many rows a statement, a commit's events one row, every
    /// one of them in its task's order whatever the chunks; a unit's checkpoint written
    /// twice in a batch is the later one.
    #[tokio::test]
    async fn a_batch_stores_every_event_and_the_last_checkpoint_of_a_unit() {
        let dir = std::env::temp_dir().join(format!("a2a-batch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("t.db");
        super::super::SqliteStore::open(&path, crate::DEFAULT_BUSY_TIMEOUT, Default::default())
            .await
            .expect("a fresh store opens")
            .closed()
            .await;
        let mut conn =
            open(&path, 1 << 20, crate::DEFAULT_BUSY_TIMEOUT).expect("the writer's connection");
        // A commit of many events and commits of one: 44 rows, inserted in chunks of
        // 32, 8 and 1.
        let mut ops = vec![
            unit("sent"),
            commit("a", true, 1..=20),
            commit("b", true, 1..=3),
            unit("done"),
            commit("b", false, 4..=21),
        ];
        ops.extend((1..=41).map(|n| commit("c", n == 1, n..=n)));
        let rows = apply_batch(&mut conn, &ops).expect("the batch commits");
        assert_eq!(rows, vec![1; 46]);
        let rows = |task: &str| -> Vec<(i64, String)> {
            conn.prepare("SELECT seq, event FROM task_events WHERE task_id = ?1 ORDER BY seq")
                .unwrap()
                .query_map([task], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let events = |task: &str| -> Vec<(i64, String)> {
            rows(task)
                .iter()
                .flat_map(|(seq, text)| super::super::tasks::logged_texts(*seq, text).unwrap())
                .map(|(seq, text)| (seq, text.to_owned()))
                .collect()
        };
        let expected = |n: i64| {
            (1..=n)
                .map(|n| (n, format!("{{\"n\": {n}}}")))
                .collect::<Vec<_>>()
        };
        assert_eq!(events("a"), expected(20));
        assert_eq!(events("b"), expected(21));
        assert_eq!(events("c"), expected(41));
        // A commit's events are one row, numbered by its last.
        let numbers = |task: &str| rows(task).iter().map(|(n, _)| *n).collect::<Vec<_>>();
        assert_eq!(numbers("a"), [20]);
        assert_eq!(numbers("b"), [3, 21]);
        assert_eq!(numbers("c"), (1..=41).collect::<Vec<_>>());
        let checkpoint: String = conn
            .query_row(
                "SELECT checkpoint FROM run_units WHERE run_id = 'r'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(checkpoint, "done");
        let units: i64 = conn
            .query_row("SELECT count(*) FROM run_units", [], |r| r.get(0))
            .unwrap();
        assert_eq!(units, 1);
        drop(conn);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! The writes a batch commits — tasks' snapshots and events, runs' headers, checkpoints
//! and ends — made in one statement a round: `a2a_write_batch` (the schema's migrations
//! 7 and 10) takes each kind of write as columns (one array a column) and makes them in
//! order, so a batch costs one round trip whatever its size. It checks fencing row by
//! row, as the one-row statements do, and says which rows it wrote: a write for a task
//! another replica runs now writes nothing, and the others do.

use std::collections::HashSet;

use sqlx::PgConnection;

/// A task's commit that stores its snapshot (see `snapshot_due`), with its events if
/// any, while the task is this replica's with fencing number `fence` (a new task's row
/// is created with it).
#[derive(Debug, Clone)]
pub(super) struct Snapshot {
    pub(super) id: String,
    pub(super) snapshot: String,
    /// The number of the last event in the snapshot; none: every event logged so far
    /// (a snapshot changed without an event).
    pub(super) seq: Option<i64>,
    pub(super) terminal: bool,
    pub(super) first_message_id: Option<String>,
    pub(super) updated_at: i64,
    pub(super) context_id: String,
    pub(super) state: String,
    pub(super) status_ms: i64,
    pub(super) fence: i64,
    pub(super) initiator: Option<String>,
    pub(super) tenant: Option<String>,
    /// Each event's number and JSON.
    pub(super) events: Vec<(i64, String)>,
}

/// A task's events without its snapshot, logged while the task is this replica's with
/// fencing number `fence`; the row's listed columns (what ListTasks filters and sorts
/// on) kept current.
#[derive(Debug, Clone)]
pub(super) struct Events {
    pub(super) id: String,
    pub(super) state: String,
    pub(super) status_ms: i64,
    pub(super) fence: i64,
    /// Each event's number and JSON.
    pub(super) events: Vec<(i64, String)>,
}

/// A unit's checkpoint, stored while the run's task is this replica's with fencing
/// number `fence`, or is not stored yet.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub(super) run: String,
    pub(super) step: String,
    /// The fan-out item, -1 for none.
    pub(super) item: i64,
    pub(super) checkpoint: String,
    pub(super) fence: Option<i64>,
}

/// A run's header (when it starts), cancel or end (when it finishes), written while
/// the run's task is this replica's with fencing number `fence`, or is not stored yet.
#[derive(Debug, Clone)]
pub(super) struct RunRow {
    pub(super) id: String,
    /// The header's or the end's JSON (none for a cancel).
    pub(super) json: String,
    pub(super) updated_at: i64,
    pub(super) fence: Option<i64>,
}

/// The writes of one round of a batch: units' checkpoints, then tasks' snapshots and
/// events, then runs' headers, cancels and ends, each task or run at most once.
#[derive(Default)]
pub(super) struct Round<'a> {
    pub(super) units: Vec<&'a Unit>,
    pub(super) snapshots: Vec<&'a Snapshot>,
    pub(super) events: Vec<&'a Events>,
    pub(super) runs: Vec<(RunWrite, &'a RunRow)>,
}

/// What a round wrote (a write refused for its fence is in none).
#[derive(Debug, Default)]
pub(super) struct Written {
    /// Units' checkpoints stored, as (run, step, item).
    pub(super) units: HashSet<(String, String, i64)>,
    /// Tasks whose snapshot or events were written.
    pub(super) tasks: HashSet<String>,
    /// Runs written, with what was.
    pub(super) runs: HashSet<(RunWrite, String)>,
}

/// What a run row's write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum RunWrite {
    /// The header, as the run starts.
    Create,
    /// Canceled: a user's cancel, before the run ends.
    Cancel,
    /// The end.
    Finish,
}

impl RunWrite {
    /// The write's number in `a2a_write_batch` (its `r_what` and the `kind` it returns).
    fn code(self) -> i16 {
        match self {
            RunWrite::Create => 3,
            RunWrite::Cancel => 4,
            RunWrite::Finish => 5,
        }
    }

    fn of_code(code: i16) -> Option<Self> {
        [RunWrite::Create, RunWrite::Cancel, RunWrite::Finish]
            .into_iter()
            .find(|w| w.code() == code)
    }
}

/// Makes `round`'s writes in one statement (`a2a_write_batch`, the schema's
/// migrations 7 and 10): what it wrote.
pub(super) async fn write_round(
    conn: &mut PgConnection,
    replica: &str,
    round: &Round<'_>,
) -> Result<Written, sqlx::Error> {
    const WRITE_BATCH: &str = "SELECT kind, id, step, item FROM a2a_write_batch($1,
        $2, $3, $4, $5, $6,
        $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
        $19, $20, $21, $22,
        $23, $24, $25,
        $26, $27, $28, $29, $30)";
    let units = &round.units;
    let snapshots = &round.snapshots;
    let events = &round.events;
    let runs = &round.runs;
    let (mut l_task, mut l_seq, mut l_event) = (vec![], vec![], vec![]);
    let logged = snapshots
        .iter()
        .map(|c| (&c.id, &c.events))
        .chain(events.iter().map(|c| (&c.id, &c.events)));
    for (task, events) in logged {
        for (seq, event) in events {
            l_task.push(task.as_str());
            l_seq.push(*seq);
            l_event.push(event.as_str());
        }
    }
    let rows: Vec<(i16, String, Option<String>, Option<i64>)> = sqlx::query_as(WRITE_BATCH)
        .bind(replica)
        .bind(units.iter().map(|u| u.run.as_str()).collect::<Vec<_>>())
        .bind(units.iter().map(|u| u.step.as_str()).collect::<Vec<_>>())
        .bind(units.iter().map(|u| u.item).collect::<Vec<_>>())
        .bind(
            units
                .iter()
                .map(|u| u.checkpoint.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(units.iter().map(|u| u.fence).collect::<Vec<_>>())
        .bind(snapshots.iter().map(|c| c.id.as_str()).collect::<Vec<_>>())
        .bind(
            snapshots
                .iter()
                .map(|c| c.snapshot.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(snapshots.iter().map(|c| c.seq).collect::<Vec<_>>())
        .bind(snapshots.iter().map(|c| c.terminal).collect::<Vec<_>>())
        .bind(
            snapshots
                .iter()
                .map(|c| c.first_message_id.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(snapshots.iter().map(|c| c.updated_at).collect::<Vec<_>>())
        .bind(
            snapshots
                .iter()
                .map(|c| c.context_id.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            snapshots
                .iter()
                .map(|c| c.state.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(snapshots.iter().map(|c| c.status_ms).collect::<Vec<_>>())
        .bind(snapshots.iter().map(|c| c.fence).collect::<Vec<_>>())
        .bind(
            snapshots
                .iter()
                .map(|c| c.initiator.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(
            snapshots
                .iter()
                .map(|c| c.tenant.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(events.iter().map(|c| c.id.as_str()).collect::<Vec<_>>())
        .bind(events.iter().map(|c| c.state.as_str()).collect::<Vec<_>>())
        .bind(events.iter().map(|c| c.status_ms).collect::<Vec<_>>())
        .bind(events.iter().map(|c| c.fence).collect::<Vec<_>>())
        .bind(l_task)
        .bind(l_seq)
        .bind(l_event)
        .bind(runs.iter().map(|(w, _)| w.code()).collect::<Vec<_>>())
        .bind(runs.iter().map(|(_, r)| r.id.as_str()).collect::<Vec<_>>())
        .bind(
            runs.iter()
                .map(|(_, r)| r.json.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(runs.iter().map(|(_, r)| r.updated_at).collect::<Vec<_>>())
        .bind(runs.iter().map(|(_, r)| r.fence).collect::<Vec<_>>())
        .fetch_all(conn)
        .await?;
    let mut written = Written::default();
    for (kind, id, step, item) in rows {
        match (kind, step, item) {
            (0, Some(step), Some(item)) => {
                written.units.insert((id, step, item));
            }
            (1 | 2, ..) => {
                written.tasks.insert(id);
            }
            (kind, ..) => {
                if let Some(what) = RunWrite::of_code(kind) {
                    written.runs.insert((what, id));
                }
            }
        }
    }
    Ok(written)
}

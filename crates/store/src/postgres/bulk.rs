//! The writes a batch commits in bulk — tasks' snapshots and events, runs' headers,
//! checkpoints and ends — each kind in one multi-row statement (`UNNEST` of one array a
//! column), so a batch costs a few round trips whatever its size. Each statement checks
//! fencing row by row, as the one-row statements do, and says which rows it wrote: a
//! write for a task another replica runs now writes nothing, and the others do.

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

/// Stores `commits`' snapshots and events (each task once); the tasks written.
pub(super) async fn store_snapshots(
    conn: &mut PgConnection,
    replica: &str,
    commits: &[&Snapshot],
) -> Result<HashSet<String>, sqlx::Error> {
    // The upsert locks each row and checks the owner on its latest version, so a
    // takeover committed meanwhile makes it write nothing; the events are written only
    // for the rows that were.
    const STORE_SNAPSHOTS: &str = "
WITH c AS (
    SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::bool[], $5::text[],
                         $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[],
                         $11::text[], $12::text[])
        AS c(id, snapshot, seq, terminal, first_message_id, updated_at, context_id, state,
             status_ms, fence, initiator, tenant)
),
written AS (
    INSERT INTO tasks (id, snapshot, seq, terminal, first_message_id, updated_at,
                       context_id, state, status_ms, owner, fence, initiator, tenant)
    SELECT c.id, c.snapshot,
           -- Without a new event the snapshot includes every event logged so far: a
           -- task's commits each wait for the one before.
           coalesce(c.seq, (SELECT max(seq) FROM task_events WHERE task_id = c.id), 0),
           c.terminal, c.first_message_id, c.updated_at, c.context_id, c.state,
           c.status_ms, $13, c.fence, c.initiator, c.tenant
    FROM c
    ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
        seq = greatest(tasks.seq, excluded.seq), terminal = excluded.terminal,
        first_message_id = coalesce(tasks.first_message_id, excluded.first_message_id),
        initiator = coalesce(tasks.initiator, excluded.initiator),
        tenant = coalesce(tasks.tenant, excluded.tenant),
        updated_at = excluded.updated_at, context_id = excluded.context_id,
        state = excluded.state, status_ms = excluded.status_ms
    WHERE tasks.owner IS NOT DISTINCT FROM excluded.owner AND tasks.fence = excluded.fence
    RETURNING id
),
logged AS (
    INSERT INTO task_events (task_id, seq, event)
    SELECT e.task_id, e.seq, e.event
    FROM UNNEST($14::text[], $15::bigint[], $16::text[]) AS e(task_id, seq, event)
    WHERE e.task_id IN (SELECT id FROM written)
)
SELECT id FROM written
-- Announced (on notices::EVENTS) to the replicas that follow these tasks for
-- clients (none, mostly: then nothing is, and no commit waits for NOTIFY's lock).
-- The condition is always true; it makes the announcement part of the statement.
WHERE (SELECT count(pg_notify('a2a_task_events', w.task_id)) FROM task_watches w
       WHERE w.task_id IN (SELECT id FROM written)) >= 0";
    let mut columns = SnapshotColumns::default();
    let mut events = EventColumns::default();
    for c in commits {
        columns.push(c);
        events.push(&c.id, &c.events);
    }
    let written: Vec<String> = sqlx::query_scalar(STORE_SNAPSHOTS)
        .bind(columns.id)
        .bind(columns.snapshot)
        .bind(columns.seq)
        .bind(columns.terminal)
        .bind(columns.first_message_id)
        .bind(columns.updated_at)
        .bind(columns.context_id)
        .bind(columns.state)
        .bind(columns.status_ms)
        .bind(columns.fence)
        .bind(columns.initiator)
        .bind(columns.tenant)
        .bind(replica)
        .bind(events.task_id)
        .bind(events.seq)
        .bind(events.event)
        .fetch_all(conn)
        .await?;
    Ok(written.into_iter().collect())
}

/// [`Snapshot`]s as columns.
#[derive(Default)]
struct SnapshotColumns<'a> {
    id: Vec<&'a str>,
    snapshot: Vec<&'a str>,
    seq: Vec<Option<i64>>,
    terminal: Vec<bool>,
    first_message_id: Vec<Option<&'a str>>,
    updated_at: Vec<i64>,
    context_id: Vec<&'a str>,
    state: Vec<&'a str>,
    status_ms: Vec<i64>,
    fence: Vec<i64>,
    initiator: Vec<Option<&'a str>>,
    tenant: Vec<Option<&'a str>>,
}

impl<'a> SnapshotColumns<'a> {
    fn push(&mut self, c: &'a Snapshot) {
        self.id.push(&c.id);
        self.snapshot.push(&c.snapshot);
        self.seq.push(c.seq);
        self.terminal.push(c.terminal);
        self.first_message_id.push(c.first_message_id.as_deref());
        self.updated_at.push(c.updated_at);
        self.context_id.push(&c.context_id);
        self.state.push(&c.state);
        self.status_ms.push(c.status_ms);
        self.fence.push(c.fence);
        self.initiator.push(c.initiator.as_deref());
        self.tenant.push(c.tenant.as_deref());
    }
}

/// Events of several tasks as columns.
#[derive(Default)]
struct EventColumns<'a> {
    task_id: Vec<&'a str>,
    seq: Vec<i64>,
    event: Vec<&'a str>,
}

impl<'a> EventColumns<'a> {
    fn push(&mut self, task: &'a str, events: &'a [(i64, String)]) {
        for (seq, event) in events {
            self.task_id.push(task);
            self.seq.push(*seq);
            self.event.push(event);
        }
    }
}

/// Logs `commits`' events (each task once) and keeps their rows' listed columns
/// current; the tasks written.
pub(super) async fn log_events(
    conn: &mut PgConnection,
    replica: &str,
    commits: &[&Events],
) -> Result<HashSet<String>, sqlx::Error> {
    const LOG_EVENTS: &str = "
WITH c AS (
    SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::bigint[])
        AS c(id, state, status_ms, fence)
),
written AS (
    UPDATE tasks t SET state = c.state, status_ms = c.status_ms FROM c
    WHERE t.id = c.id AND t.owner = $5 AND t.fence = c.fence
    RETURNING t.id
),
logged AS (
    INSERT INTO task_events (task_id, seq, event)
    SELECT e.task_id, e.seq, e.event
    FROM UNNEST($6::text[], $7::bigint[], $8::text[]) AS e(task_id, seq, event)
    WHERE e.task_id IN (SELECT id FROM written)
)
SELECT id FROM written
-- Announced (on notices::EVENTS) to the replicas that follow these tasks for
-- clients (none, mostly: then nothing is, and no commit waits for NOTIFY's lock).
-- The condition is always true; it makes the announcement part of the statement.
WHERE (SELECT count(pg_notify('a2a_task_events', w.task_id)) FROM task_watches w
       WHERE w.task_id IN (SELECT id FROM written)) >= 0";
    let (mut ids, mut states, mut times, mut fences) = (vec![], vec![], vec![], vec![]);
    let mut events = EventColumns::default();
    for c in commits {
        ids.push(c.id.as_str());
        states.push(c.state.as_str());
        times.push(c.status_ms);
        fences.push(c.fence);
        events.push(&c.id, &c.events);
    }
    let written: Vec<String> = sqlx::query_scalar(LOG_EVENTS)
        .bind(ids)
        .bind(states)
        .bind(times)
        .bind(fences)
        .bind(replica)
        .bind(events.task_id)
        .bind(events.seq)
        .bind(events.event)
        .fetch_all(conn)
        .await?;
    Ok(written.into_iter().collect())
}

/// The runs' task rows ($1: the runs' ids), locked against a takeover until the commit,
/// and whether each is this replica's ($R) with the write's fencing number (`fence`
/// of the row named `r`): a run whose task is not stored yet is its starter's.
const HELD: &str = "held AS (SELECT id, owner, fence FROM tasks WHERE id = ANY($1) FOR SHARE)";
const MINE: &str = "NOT EXISTS (SELECT 1 FROM held h WHERE h.id = r.id
    AND (h.owner IS DISTINCT FROM $R OR h.fence IS DISTINCT FROM r.fence))";

/// Stores `units`' checkpoints (each unit once); the units stored, as (run, step,
/// item).
pub(super) async fn store_units(
    conn: &mut PgConnection,
    replica: &str,
    units: &[&Unit],
) -> Result<HashSet<(String, String, i64)>, sqlx::Error> {
    static STORE_UNITS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let sql = STORE_UNITS.get_or_init(|| {
        format!(
            "WITH r AS (
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[])
                     AS r(id, step, item, checkpoint, fence)
             ),
             {HELD},
             written AS (
                 INSERT INTO run_units (run_id, step, item, checkpoint)
                 SELECT r.id, r.step, r.item, r.checkpoint FROM r WHERE {}
                 ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint
                 RETURNING run_id, step, item
             )
             SELECT run_id, step, item FROM written",
            MINE.replace("$R", "$6")
        )
    });
    let (mut runs, mut steps, mut items, mut checkpoints, mut fences) =
        (vec![], vec![], vec![], vec![], vec![]);
    for u in units {
        runs.push(u.run.as_str());
        steps.push(u.step.as_str());
        items.push(u.item);
        checkpoints.push(u.checkpoint.as_str());
        fences.push(u.fence);
    }
    let stored: Vec<(String, String, i64)> = sqlx::query_as(sql)
        .bind(runs)
        .bind(steps)
        .bind(items)
        .bind(checkpoints)
        .bind(fences)
        .bind(replica)
        .fetch_all(conn)
        .await?;
    Ok(stored.into_iter().collect())
}

/// What a run row's write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunWrite {
    /// The header, as the run starts.
    Create,
    /// Canceled: a user's cancel, before the run ends.
    Cancel,
    /// The end.
    Finish,
}

/// Writes `runs`' headers, cancels or ends (each run once); the runs written.
pub(super) async fn write_runs(
    conn: &mut PgConnection,
    replica: &str,
    what: RunWrite,
    runs: &[&RunRow],
) -> Result<HashSet<String>, sqlx::Error> {
    static CREATE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static CANCEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static FINISH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let input = "r AS (
        SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::bigint[])
            AS r(id, json, updated_at, fence)
    )";
    let mine = MINE.replace("$R", "$5");
    let sql = match what {
        RunWrite::Create => CREATE.get_or_init(|| {
            format!(
                "WITH {input}, {HELD},
                 written AS (
                     INSERT INTO runs (id, header, updated_at)
                     SELECT r.id, r.json, r.updated_at FROM r WHERE {mine}
                     ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                         updated_at = excluded.updated_at
                     RETURNING id
                 )
                 SELECT id FROM written"
            )
        }),
        RunWrite::Cancel => CANCEL.get_or_init(|| {
            format!(
                "WITH {input}, {HELD},
                 written AS (
                     UPDATE runs SET canceled = true, updated_at = r.updated_at FROM r
                     WHERE runs.id = r.id AND {mine}
                     RETURNING runs.id
                 )
                 SELECT id FROM written"
            )
        }),
        // A finished run keeps its steps' checkpoints: a retry of it begins with the
        // results of those that completed. They go when retention prunes the run.
        RunWrite::Finish => FINISH.get_or_init(|| {
            format!(
                "WITH {input}, {HELD},
                 written AS (
                     UPDATE runs SET run_end = r.json, updated_at = r.updated_at FROM r
                     WHERE runs.id = r.id AND {mine}
                     RETURNING runs.id
                 )
                 SELECT id FROM written"
            )
        }),
    };
    let (mut ids, mut json, mut times, mut fences) = (vec![], vec![], vec![], vec![]);
    for r in runs {
        ids.push(r.id.as_str());
        json.push(r.json.as_str());
        times.push(r.updated_at);
        fences.push(r.fence);
    }
    let written: Vec<String> = sqlx::query_scalar(sql)
        .bind(ids)
        .bind(json)
        .bind(times)
        .bind(fences)
        .bind(replica)
        .fetch_all(conn)
        .await?;
    Ok(written.into_iter().collect())
}

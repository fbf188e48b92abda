//! The database's schema and its migrations, applied in order at open; what a database
//! that is not ours (another program's, a newer version's) is told.

use sqlx::{Connection, PgPool};

use super::OpenErrorKind;

/// The schema, one migration per version (`a2a_orchestrator_schema.version` = how many
/// are applied). The first is the SQLite store's schema 2, so that both keep the same
/// things the same way.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE a2a_orchestrator_schema (version BIGINT NOT NULL);
INSERT INTO a2a_orchestrator_schema VALUES (0);
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    snapshot TEXT NOT NULL,
    seq BIGINT NOT NULL,
    terminal BOOLEAN NOT NULL,
    first_message_id TEXT,
    updated_at BIGINT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_ms BIGINT NOT NULL
);
CREATE INDEX tasks_unfinished ON tasks (id) WHERE NOT terminal;
CREATE INDEX tasks_by_terminal ON tasks (terminal, updated_at);
CREATE INDEX tasks_by_first_message ON tasks (first_message_id);
CREATE INDEX tasks_by_status_time ON tasks (status_ms DESC, id DESC);
CREATE INDEX tasks_by_context_time ON tasks (context_id, status_ms DESC, id DESC);
CREATE TABLE task_events (
    task_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);
CREATE TABLE push_configs (
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (task_id, config_id)
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    canceled BOOLEAN NOT NULL DEFAULT false,
    run_end TEXT,
    updated_at BIGINT NOT NULL
);
CREATE INDEX runs_by_end ON runs ((run_end IS NULL), updated_at);
CREATE TABLE run_units (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    item BIGINT NOT NULL,
    checkpoint TEXT NOT NULL,
    PRIMARY KEY (run_id, step, item)
);
"#,
    // Several servers on one database: each server's lease, who runs each unfinished
    // task (and its fencing number), and the requests queued for the server running a
    // task.
    r#"
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
);
ALTER TABLE tasks ADD COLUMN owner TEXT;
ALTER TABLE tasks ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tasks_by_owner ON tasks (owner) WHERE NOT terminal;
CREATE TABLE task_requests (
    id BIGSERIAL PRIMARY KEY,
    task_id TEXT NOT NULL,
    request TEXT NOT NULL
);
CREATE INDEX task_requests_by_task ON task_requests (task_id);
"#,
    // Who started each task (the server's `Caller`), never on the wire: a messageId
    // sent again is answered with its task only for the same caller.
    r#"
ALTER TABLE tasks ADD COLUMN initiator TEXT;
"#,
    // A principal lists its own tasks (issue 35).
    r#"
CREATE INDEX tasks_by_initiator_time ON tasks (initiator, status_ms DESC, id DESC);
"#,
    // The tenant a task was made in (the HTTP+JSON `/{tenant}` prefix, v1.0's
    // `tenant`), never on the wire: it is reached only there.
    r#"
ALTER TABLE tasks ADD COLUMN tenant TEXT;
"#,
    // The tasks a replica follows for a client while another runs them: their owner
    // announces their events (NOTIFY) instead of being polled (issue 39).
    r#"
CREATE TABLE task_watches (
    task_id TEXT NOT NULL,
    replica TEXT NOT NULL,
    PRIMARY KEY (task_id, replica)
);
CREATE INDEX task_watches_by_replica ON task_watches (replica);
"#,
    // A replica's batch of writes in one statement (issue 39): the writes one by one in
    // one round trip, where a transaction of one statement per kind of write waited on
    // the replica between statements. The writes and their fencing are those of the
    // multi-row statements it replaces (see `bulk.rs`); it returns what it wrote.
    r#"
CREATE FUNCTION a2a_write_batch(
    p_replica TEXT,
    -- Units' checkpoints.
    u_run TEXT[], u_step TEXT[], u_item BIGINT[], u_checkpoint TEXT[], u_fence BIGINT[],
    -- Tasks' snapshots.
    s_id TEXT[], s_snapshot TEXT[], s_seq BIGINT[], s_terminal BOOLEAN[],
    s_first_message_id TEXT[], s_updated_at BIGINT[], s_context_id TEXT[], s_state TEXT[],
    s_status_ms BIGINT[], s_fence BIGINT[], s_initiator TEXT[], s_tenant TEXT[],
    -- Tasks' events without a snapshot: their rows' listed columns.
    e_id TEXT[], e_state TEXT[], e_status_ms BIGINT[], e_fence BIGINT[],
    -- The events of both, logged for the tasks written.
    l_task TEXT[], l_seq BIGINT[], l_event TEXT[],
    -- Runs' headers (3), cancels (4) and ends (5).
    r_what SMALLINT[], r_id TEXT[], r_json TEXT[], r_updated_at BIGINT[], r_fence BIGINT[]
) RETURNS TABLE (kind SMALLINT, id TEXT, step TEXT, item BIGINT)
LANGUAGE plpgsql
-- Every statement here finds its rows by key. A plan kept from when a table was new
-- and small scans it whole, and went on doing so as it grew (the first minute of a new
-- database, until its first ANALYZE: measured at three times the database's CPU a run).
SET enable_seqscan = off
AS $fn$
#variable_conflict use_column
DECLARE
    snapshots TEXT[] := '{}';
    logged TEXT[] := '{}';
BEGIN
    -- A unit's checkpoint, or a run's write, is stored while the run's task is this
    -- replica's with the write's fencing number, or is not stored yet (its starter's);
    -- the task's row is locked against a takeover until the commit.
    IF cardinality(u_run) > 0 THEN
        RETURN QUERY
        WITH r AS (
            SELECT * FROM UNNEST(u_run, u_step, u_item, u_checkpoint, u_fence)
                AS r(id, step, item, checkpoint, fence)
        ),
        held AS (SELECT t.id, t.owner, t.fence FROM tasks t WHERE t.id = ANY(u_run) FOR SHARE),
        written AS (
            INSERT INTO run_units AS u (run_id, step, item, checkpoint)
            SELECT r.id, r.step, r.item, r.checkpoint FROM r
            WHERE NOT EXISTS (SELECT 1 FROM held h WHERE h.id = r.id
                AND (h.owner IS DISTINCT FROM p_replica OR h.fence IS DISTINCT FROM r.fence))
            ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint
            RETURNING u.run_id, u.step, u.item
        )
        SELECT 0::SMALLINT, w.run_id, w.step, w.item FROM written w;
    END IF;

    -- A snapshot is stored while the task is this replica's with the write's fencing
    -- number; the upsert locks each row and checks the owner on its latest version, so
    -- a takeover committed meanwhile makes it write nothing.
    IF cardinality(s_id) > 0 THEN
        WITH c AS (
            SELECT * FROM UNNEST(s_id, s_snapshot, s_seq, s_terminal, s_first_message_id,
                                 s_updated_at, s_context_id, s_state, s_status_ms, s_fence,
                                 s_initiator, s_tenant)
                AS c(id, snapshot, seq, terminal, first_message_id, updated_at, context_id,
                     state, status_ms, fence, initiator, tenant)
        ),
        written AS (
            INSERT INTO tasks AS t (id, snapshot, seq, terminal, first_message_id, updated_at,
                                    context_id, state, status_ms, owner, fence, initiator,
                                    tenant)
            SELECT c.id, c.snapshot,
                   -- Without a new event the snapshot includes every event logged so
                   -- far: a task's commits each wait for the one before.
                   coalesce(c.seq, (SELECT max(e.seq) FROM task_events e WHERE e.task_id = c.id), 0),
                   c.terminal, c.first_message_id, c.updated_at, c.context_id, c.state,
                   c.status_ms, p_replica, c.fence, c.initiator, c.tenant
            FROM c
            ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
                seq = greatest(t.seq, excluded.seq), terminal = excluded.terminal,
                first_message_id = coalesce(t.first_message_id, excluded.first_message_id),
                initiator = coalesce(t.initiator, excluded.initiator),
                tenant = coalesce(t.tenant, excluded.tenant),
                updated_at = excluded.updated_at, context_id = excluded.context_id,
                state = excluded.state, status_ms = excluded.status_ms
            WHERE t.owner IS NOT DISTINCT FROM excluded.owner AND t.fence = excluded.fence
            RETURNING t.id
        )
        SELECT coalesce(array_agg(w.id), '{}') INTO snapshots FROM written w;
        RETURN QUERY SELECT 1::SMALLINT, x, NULL::TEXT, NULL::BIGINT FROM unnest(snapshots) x;
    END IF;

    -- Events alone keep the row's listed columns (what ListTasks filters and sorts on)
    -- current, while the task is this replica's with the write's fencing number.
    IF cardinality(e_id) > 0 THEN
        WITH c AS (
            SELECT * FROM UNNEST(e_id, e_state, e_status_ms, e_fence)
                AS c(id, state, status_ms, fence)
        ),
        written AS (
            UPDATE tasks t SET state = c.state, status_ms = c.status_ms FROM c
            WHERE t.id = c.id AND t.owner = p_replica AND t.fence = c.fence
            RETURNING t.id
        )
        SELECT coalesce(array_agg(w.id), '{}') INTO logged FROM written w;
        RETURN QUERY SELECT 2::SMALLINT, x, NULL::TEXT, NULL::BIGINT FROM unnest(logged) x;
    END IF;

    -- The events of the tasks written, announced to the replicas that follow those
    -- tasks for clients (none, mostly: then nothing is, and the commit does not wait
    -- for NOTIFY's lock).
    logged := snapshots || logged;
    IF cardinality(logged) > 0 THEN
        INSERT INTO task_events (task_id, seq, event)
        SELECT l.task_id, l.seq, l.event
        FROM UNNEST(l_task, l_seq, l_event) AS l(task_id, seq, event)
        WHERE l.task_id = ANY(logged);
        PERFORM pg_notify('a2a_task_events', w.task_id) FROM task_watches w
        WHERE w.task_id = ANY(logged);
    END IF;

    IF cardinality(r_id) > 0 THEN
        RETURN QUERY
        WITH r AS (
            SELECT * FROM UNNEST(r_what, r_id, r_json, r_updated_at, r_fence)
                AS r(what, id, json, updated_at, fence)
        ),
        held AS (SELECT t.id, t.owner, t.fence FROM tasks t WHERE t.id = ANY(r_id) FOR SHARE),
        mine AS (
            SELECT r.* FROM r WHERE NOT EXISTS (SELECT 1 FROM held h WHERE h.id = r.id
                AND (h.owner IS DISTINCT FROM p_replica OR h.fence IS DISTINCT FROM r.fence))
        ),
        created AS (
            INSERT INTO runs AS x (id, header, updated_at)
            SELECT m.id, m.json, m.updated_at FROM mine m WHERE m.what = 3
            ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                updated_at = excluded.updated_at
            RETURNING x.id
        ),
        canceled AS (
            UPDATE runs x SET canceled = true, updated_at = m.updated_at FROM mine m
            WHERE m.what = 4 AND x.id = m.id
            RETURNING x.id
        ),
        -- A finished run keeps its steps' checkpoints: a retry of it begins with the
        -- results of those that completed. They go when retention prunes the run.
        finished AS (
            UPDATE runs x SET run_end = m.json, updated_at = m.updated_at FROM mine m
            WHERE m.what = 5 AND x.id = m.id
            RETURNING x.id
        )
        SELECT 3::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM created w
        UNION ALL SELECT 4::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM canceled w
        UNION ALL SELECT 5::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM finished w;
    END IF;
END
$fn$;
"#,
    // Plans kept from call to call (issue 39). A statement given an array is planned
    // for its length, and a plan for any length never looks as cheap, so PostgreSQL
    // planned the events-only update of every batch again, and every lookup of
    // messages' tasks: a fifth of the writing connections' CPU under the benchmark's
    // load. Planned once a connection instead, by key (sequential scans off, as a plan
    // made while a table is small would otherwise scan it whole for good); the lookup
    // in a function of its own for that.
    r#"
ALTER FUNCTION a2a_write_batch SET plan_cache_mode = force_generic_plan;
CREATE FUNCTION a2a_tasks_of_messages(p_ids TEXT[])
RETURNS TABLE (message_id TEXT, task_id TEXT)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT m.id, t.id FROM UNNEST(p_ids) AS m(id)
    CROSS JOIN LATERAL (SELECT k.id FROM tasks k WHERE k.first_message_id = m.id LIMIT 1) t;
END
$fn$;
"#,
    // One index entry fewer at each write of a running task (issue 39): a task's row
    // changes with nearly every commit and its indexes with it, as the status time
    // they hold changes (no update is HOT). `tasks_by_owner`, also of the unfinished
    // tasks, serves what `tasks_unfinished` did: the unfinished tasks read at a start
    // (sorted then) and the tasks a claim looks at. Dropped, not built: instant on a
    // large table.
    r#"
DROP INDEX tasks_unfinished;
"#,
    // Fewer writes a task commit (issue 39). Events without a snapshot updated the
    // task's row even when its listed columns stayed as they were (an artifact, a
    // step's move): a new version of the row, with an entry in each of its seven
    // indexes. Such a row is now locked and checked instead (the rest of the function
    // is as in migration 7). And a task's snapshot, compressed when stored, with lz4
    // where the server has it (PostgreSQL 14 and later, built with it): pglz took 3%
    // of the writing connections' CPU, lz4 a fraction of that.
    r#"
CREATE OR REPLACE FUNCTION a2a_write_batch(
    p_replica TEXT,
    -- Units' checkpoints.
    u_run TEXT[], u_step TEXT[], u_item BIGINT[], u_checkpoint TEXT[], u_fence BIGINT[],
    -- Tasks' snapshots.
    s_id TEXT[], s_snapshot TEXT[], s_seq BIGINT[], s_terminal BOOLEAN[],
    s_first_message_id TEXT[], s_updated_at BIGINT[], s_context_id TEXT[], s_state TEXT[],
    s_status_ms BIGINT[], s_fence BIGINT[], s_initiator TEXT[], s_tenant TEXT[],
    -- Tasks' events without a snapshot: their rows' listed columns.
    e_id TEXT[], e_state TEXT[], e_status_ms BIGINT[], e_fence BIGINT[],
    -- The events of both, logged for the tasks written.
    l_task TEXT[], l_seq BIGINT[], l_event TEXT[],
    -- Runs' headers (3), cancels (4) and ends (5).
    r_what SMALLINT[], r_id TEXT[], r_json TEXT[], r_updated_at BIGINT[], r_fence BIGINT[]
) RETURNS TABLE (kind SMALLINT, id TEXT, step TEXT, item BIGINT)
LANGUAGE plpgsql
-- Every statement here finds its rows by key. A plan kept from when a table was new
-- and small scans it whole, and went on doing so as it grew (the first minute of a new
-- database, until its first ANALYZE: measured at three times the database's CPU a run).
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
DECLARE
    snapshots TEXT[] := '{}';
    logged TEXT[] := '{}';
BEGIN
    -- A unit's checkpoint, or a run's write, is stored while the run's task is this
    -- replica's with the write's fencing number, or is not stored yet (its starter's);
    -- the task's row is locked against a takeover until the commit.
    IF cardinality(u_run) > 0 THEN
        RETURN QUERY
        WITH r AS (
            SELECT * FROM UNNEST(u_run, u_step, u_item, u_checkpoint, u_fence)
                AS r(id, step, item, checkpoint, fence)
        ),
        held AS (SELECT t.id, t.owner, t.fence FROM tasks t WHERE t.id = ANY(u_run) FOR SHARE),
        written AS (
            INSERT INTO run_units AS u (run_id, step, item, checkpoint)
            SELECT r.id, r.step, r.item, r.checkpoint FROM r
            WHERE NOT EXISTS (SELECT 1 FROM held h WHERE h.id = r.id
                AND (h.owner IS DISTINCT FROM p_replica OR h.fence IS DISTINCT FROM r.fence))
            ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint
            RETURNING u.run_id, u.step, u.item
        )
        SELECT 0::SMALLINT, w.run_id, w.step, w.item FROM written w;
    END IF;

    -- A snapshot is stored while the task is this replica's with the write's fencing
    -- number; the upsert locks each row and checks the owner on its latest version, so
    -- a takeover committed meanwhile makes it write nothing.
    IF cardinality(s_id) > 0 THEN
        WITH c AS (
            SELECT * FROM UNNEST(s_id, s_snapshot, s_seq, s_terminal, s_first_message_id,
                                 s_updated_at, s_context_id, s_state, s_status_ms, s_fence,
                                 s_initiator, s_tenant)
                AS c(id, snapshot, seq, terminal, first_message_id, updated_at, context_id,
                     state, status_ms, fence, initiator, tenant)
        ),
        written AS (
            INSERT INTO tasks AS t (id, snapshot, seq, terminal, first_message_id, updated_at,
                                    context_id, state, status_ms, owner, fence, initiator,
                                    tenant)
            SELECT c.id, c.snapshot,
                   -- Without a new event the snapshot includes every event logged so
                   -- far: a task's commits each wait for the one before.
                   coalesce(c.seq, (SELECT max(e.seq) FROM task_events e WHERE e.task_id = c.id), 0),
                   c.terminal, c.first_message_id, c.updated_at, c.context_id, c.state,
                   c.status_ms, p_replica, c.fence, c.initiator, c.tenant
            FROM c
            ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,
                seq = greatest(t.seq, excluded.seq), terminal = excluded.terminal,
                first_message_id = coalesce(t.first_message_id, excluded.first_message_id),
                initiator = coalesce(t.initiator, excluded.initiator),
                tenant = coalesce(t.tenant, excluded.tenant),
                updated_at = excluded.updated_at, context_id = excluded.context_id,
                state = excluded.state, status_ms = excluded.status_ms
            WHERE t.owner IS NOT DISTINCT FROM excluded.owner AND t.fence = excluded.fence
            RETURNING t.id
        )
        SELECT coalesce(array_agg(w.id), '{}') INTO snapshots FROM written w;
        RETURN QUERY SELECT 1::SMALLINT, x, NULL::TEXT, NULL::BIGINT FROM unnest(snapshots) x;
    END IF;

    -- Events alone keep the row's listed columns (what ListTasks filters and sorts on)
    -- current, while the task is this replica's with the write's fencing number. A row
    -- whose columns change is updated; one whose columns stay (an artifact, a move of
    -- a step) is only locked against a takeover until the commit (FOR SHARE), and
    -- checked: an update would make a new version of it, with an entry in each of its
    -- indexes. Both are then read back, on their latest versions.
    IF cardinality(e_id) > 0 THEN
        UPDATE tasks t SET state = c.state, status_ms = c.status_ms
        FROM UNNEST(e_id, e_state, e_status_ms, e_fence) AS c(id, state, status_ms, fence)
        WHERE t.id = c.id AND t.owner = p_replica AND t.fence = c.fence
            AND (t.state <> c.state OR t.status_ms <> c.status_ms);
        SELECT coalesce(array_agg(w.id), '{}') INTO logged FROM (
            SELECT t.id FROM tasks t
            JOIN UNNEST(e_id, e_state, e_status_ms, e_fence) AS c(id, state, status_ms, fence)
                ON t.id = c.id
            WHERE t.owner = p_replica AND t.fence = c.fence AND t.state = c.state
                AND t.status_ms = c.status_ms
            FOR SHARE OF t
        ) w;
        RETURN QUERY SELECT 2::SMALLINT, x, NULL::TEXT, NULL::BIGINT FROM unnest(logged) x;
    END IF;

    -- The events of the tasks written, announced to the replicas that follow those
    -- tasks for clients (none, mostly: then nothing is, and the commit does not wait
    -- for NOTIFY's lock).
    logged := snapshots || logged;
    IF cardinality(logged) > 0 THEN
        INSERT INTO task_events (task_id, seq, event)
        SELECT l.task_id, l.seq, l.event
        FROM UNNEST(l_task, l_seq, l_event) AS l(task_id, seq, event)
        WHERE l.task_id = ANY(logged);
        PERFORM pg_notify('a2a_task_events', w.task_id) FROM task_watches w
        WHERE w.task_id = ANY(logged);
    END IF;

    IF cardinality(r_id) > 0 THEN
        RETURN QUERY
        WITH r AS (
            SELECT * FROM UNNEST(r_what, r_id, r_json, r_updated_at, r_fence)
                AS r(what, id, json, updated_at, fence)
        ),
        held AS (SELECT t.id, t.owner, t.fence FROM tasks t WHERE t.id = ANY(r_id) FOR SHARE),
        mine AS (
            SELECT r.* FROM r WHERE NOT EXISTS (SELECT 1 FROM held h WHERE h.id = r.id
                AND (h.owner IS DISTINCT FROM p_replica OR h.fence IS DISTINCT FROM r.fence))
        ),
        created AS (
            INSERT INTO runs AS x (id, header, updated_at)
            SELECT m.id, m.json, m.updated_at FROM mine m WHERE m.what = 3
            ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                updated_at = excluded.updated_at
            RETURNING x.id
        ),
        canceled AS (
            UPDATE runs x SET canceled = true, updated_at = m.updated_at FROM mine m
            WHERE m.what = 4 AND x.id = m.id
            RETURNING x.id
        ),
        -- A finished run keeps its steps' checkpoints: a retry of it begins with the
        -- results of those that completed. They go when retention prunes the run.
        finished AS (
            UPDATE runs x SET run_end = m.json, updated_at = m.updated_at FROM mine m
            WHERE m.what = 5 AND x.id = m.id
            RETURNING x.id
        )
        SELECT 3::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM created w
        UNION ALL SELECT 4::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM canceled w
        UNION ALL SELECT 5::SMALLINT, w.id, NULL::TEXT, NULL::BIGINT FROM finished w;
    END IF;
END
$fn$;
DO $do$
BEGIN
    EXECUTE 'ALTER TABLE tasks ALTER COLUMN snapshot SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    -- PostgreSQL 13, or a server built without lz4: pglz, as before.
    NULL;
END
$do$;
"#,
    // A unit's checkpoint rewritten in place (issue 39): a step's `Done` replaces its
    // `Sent`. With the table's pages full, two updates in three went to another page,
    // each with a new entry in the key's index; with room left on each page they stay
    // on it (HOT), the index untouched. Applies to the pages written from now on.
    r#"
ALTER TABLE run_units SET (fillfactor = 50);
"#,
    // Which queued requests each replica reads (see `cluster::UNDERSTOOD`): a kind is
    // queued only for a replica that reads it, so that a replica of an older version
    // still running during a rolling upgrade is never sent one. Its rows say 0.
    r#"
ALTER TABLE replicas ADD COLUMN requests_understood SMALLINT NOT NULL DEFAULT 0;
"#,
    // Each schedule's mark: the time it last fired at (issue 78). Replicas move it
    // with one conditional upsert each: of those firing one time, one moves it.
    r#"
CREATE TABLE schedule_marks (
    key TEXT PRIMARY KEY,
    mark BIGINT NOT NULL
);
"#,
];

/// The key of the advisory lock held while migrating: replicas opening one database
/// together migrate it once, one after the other.
const MIGRATION_LOCK: i64 = 0x4132_414f_7263_6801;

/// Applies the migrations the database lacks, all in one transaction (PostgreSQL's
/// DDL is transactional: a failed migration leaves the database as it was).
pub(super) async fn migrate(pool: &PgPool) -> Result<(), OpenErrorKind> {
    let mut conn = pool.acquire().await.map_err(OpenErrorKind::Unreachable)?;
    let mut tx = conn.begin().await.map_err(OpenErrorKind::Database)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(OpenErrorKind::Database)?;
    let ours: bool =
        sqlx::query_scalar("SELECT to_regclass('a2a_orchestrator_schema') IS NOT NULL")
            .fetch_one(&mut *tx)
            .await
            .map_err(OpenErrorKind::Database)?;
    let found: i64 = if ours {
        sqlx::query_scalar("SELECT version FROM a2a_orchestrator_schema")
            .fetch_one(&mut *tx)
            .await
            .map_err(OpenErrorKind::Database)?
    } else {
        let tables: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(OpenErrorKind::Database)?;
        if tables > 0 {
            return Err(OpenErrorKind::Foreign);
        }
        0
    };
    let known = MIGRATIONS.len() as i64;
    if found > known {
        return Err(OpenErrorKind::NewerSchema { found, known });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        sqlx::raw_sql(sql)
            .execute(&mut *tx)
            .await
            .map_err(|source| OpenErrorKind::Migration {
                number: i + 1,
                source: source.into(),
            })?;
        sqlx::query("UPDATE a2a_orchestrator_schema SET version = $1")
            .bind(i as i64 + 1)
            .execute(&mut *tx)
            .await
            .map_err(OpenErrorKind::Database)?;
    }
    tx.commit().await.map_err(OpenErrorKind::Database)?;
    Ok(())
}

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
                source,
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

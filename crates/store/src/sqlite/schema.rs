//! The database's schema and its migrations, applied in order at open; what a file
//! that is not ours (not a database, another program's, a newer version's) is told.

use super::super::OpenErrorKind;
use rusqlite::{Connection, ErrorCode};

/// The schema, one migration per version (`user_version` = how many are applied).
const MIGRATIONS: &[&str] = &[
    r#"
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
"#,
    r#"
ALTER TABLE tasks ADD COLUMN context_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN state TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN status_ms INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET context_id = coalesce(json_extract(snapshot, '$.contextId'), ''),
    state = coalesce(json_extract(snapshot, '$.status.state'), ''),
    status_ms = updated_at;
CREATE INDEX tasks_by_status_time ON tasks (status_ms DESC, id DESC);
CREATE INDEX tasks_by_context_time ON tasks (context_id, status_ms DESC, id DESC);
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
    // Events and checkpoints in the order they were written, each found by its task's
    // (or run's) key through an index: keyed by task, a table of whole rows put each
    // running task's next event on a page of its own, and a commit wrote a page per
    // task it touched (a third of the WAL under load); in written order a commit's
    // rows share the table's last pages, and only the small index entries scatter.
    r#"
ALTER TABLE task_events RENAME TO task_events_by_key;
CREATE TABLE task_events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL
);
INSERT INTO task_events (task_id, seq, event)
    SELECT task_id, seq, event FROM task_events_by_key ORDER BY task_id, seq;
DROP TABLE task_events_by_key;
CREATE UNIQUE INDEX task_events_by_task ON task_events (task_id, seq);
ALTER TABLE run_units RENAME TO run_units_by_key;
CREATE TABLE run_units (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    item INTEGER NOT NULL,
    checkpoint TEXT NOT NULL
);
INSERT INTO run_units (run_id, step, item, checkpoint)
    SELECT run_id, step, item, checkpoint FROM run_units_by_key ORDER BY run_id, step, item;
DROP TABLE run_units_by_key;
CREATE UNIQUE INDEX run_units_by_unit ON run_units (run_id, step, item);
"#,
    // No table changes; what a row may hold does: a finished task's row keeps an
    // earlier snapshot, and a read replays the events after it (`AtEnd::Events`); a
    // task's first snapshot may be empty, left to its log (`from_log`); and an event
    // row may be a JSON array of one commit's events, numbered by the last
    // (`tasks::logged_rows`). A build before this one would read such a task as it
    // stood before its end, or fail on it, so the version moves and that build refuses
    // the file.
    r#"
SELECT 1;
"#,
    // Each schedule's mark: the time it last fired at (issue 78).
    r#"
CREATE TABLE schedule_marks (
    key TEXT PRIMARY KEY,
    mark INTEGER NOT NULL
) WITHOUT ROWID;
"#,
];

/// What an opening error means: a file that is not a database, or is damaged, by its
/// SQLite result code.
pub(super) fn explain(e: rusqlite::Error) -> OpenErrorKind {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            OpenErrorKind::NotADatabase(e)
        }
        _ => OpenErrorKind::Sqlite(e),
    }
}

/// The schema version this build writes (`user_version`).
pub(super) fn version() -> usize {
    MIGRATIONS.len()
}

/// Applies the migrations the database lacks, each in its own transaction.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), OpenErrorKind> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(explain)?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(OpenErrorKind::NewerSchema {
            found: version,
            known,
        });
    }
    if version == 0 {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(explain)?;
        if tables > 0 {
            return Err(OpenErrorKind::Foreign);
        }
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction().map_err(explain)?;
        tx.execute_batch(sql)
            .map_err(|source| OpenErrorKind::Migration {
                number: i + 1,
                source: source.into(),
            })?;
        tx.pragma_update(None, "user_version", i as i64 + 1)
            .map_err(explain)?;
        tx.commit().map_err(explain)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database written before ListTasks (schema 1) is brought up to schema 2 with its
    /// tasks' context, state and time filled in from their snapshots.
    #[test]
    fn schema_1_is_migrated_with_its_tasks_listed() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO tasks (id, snapshot, seq, terminal, updated_at) VALUES ('t', ?1, 1, 1, 1234)",
            [r#"{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}"#],
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let (context, state, ms): (String, String, i64) = conn
            .query_row(
                "SELECT context_id, state, status_ms FROM tasks WHERE id = 't'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            (context.as_str(), state.as_str(), ms),
            ("c", "completed", 1234)
        );
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
    }
}

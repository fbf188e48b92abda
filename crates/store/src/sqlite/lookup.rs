//! Point reads made on the asking task's own thread, on read-only connections of
//! rusqlite's kept for them: the lookup every new message makes (has its `messageId`
//! made a task?).
//!
//! Through sqlx's pool that lookup cost more than the read itself: the query went to
//! the connection's own thread and its row came back, two thread switches and three
//! futex calls a read. Under the c64 diamond, skipping the lookup altogether cut the
//! SQLite store's CPU per run by 8–15%. A point read on a local file takes
//! microseconds; one that cannot begin at once (SQLite busy for longer than [`BUSY`])
//! fails here, and the caller makes it through the pool instead, so a worker thread is
//! never held longer than that.

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The longest a read here waits for SQLite's locks.
const BUSY: Duration = Duration::from_millis(20);

pub(super) struct Lookups {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Lookups {
    pub(super) fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The task whose first message has `message_id`, if any.
    pub(super) fn task_of_message(&self, message_id: &str) -> rusqlite::Result<Option<String>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT id FROM tasks WHERE first_message_id = ?1 LIMIT 1")?
                .query_row([message_id], |row| row.get(0))
                .optional()
        })
    }

    /// Runs `read` on an idle connection, or a new one; the connection is kept for the
    /// next read unless the read failed. Reads run on the threads that ask, one at a
    /// time each, so no more are kept than threads have read at once.
    fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => open(&self.path)?,
        };
        let answer = read(&conn)?;
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(conn);
        Ok(answer)
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read that cannot be made says so (the caller then reads through the pool);
    /// one that can is answered, and its connection kept for the next.
    #[test]
    fn a_lookup_answers_or_says_it_cannot() {
        let dir = std::env::temp_dir().join(format!("a2a-lookup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let missing = Lookups::new(&dir.join("missing.db"));
        assert!(missing.task_of_message("m").is_err());
        assert_eq!(missing.idle.lock().unwrap().len(), 0);

        let path = dir.join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE tasks (id TEXT PRIMARY KEY, first_message_id TEXT);
             INSERT INTO tasks VALUES ('t1', 'm1');",
        )
        .unwrap();
        let lookups = Lookups::new(&path);
        assert_eq!(
            lookups.task_of_message("m1").unwrap().as_deref(),
            Some("t1")
        );
        assert_eq!(lookups.task_of_message("m2").unwrap(), None);
        assert_eq!(lookups.idle.lock().unwrap().len(), 1);
        // A row written after the connection was kept is seen by its next read.
        conn.execute("INSERT INTO tasks VALUES ('t2', 'm2')", [])
            .unwrap();
        assert_eq!(
            lookups.task_of_message("m2").unwrap().as_deref(),
            Some("t2")
        );
        drop(conn);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

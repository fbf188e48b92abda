//! Every read of the SQLite store, on read-only connections of rusqlite's kept for
//! them (WAL lets them read beside the writer). Most run on Tokio's blocking threads
//! ([`Reads::off`]), at most [`AT_ONCE`] at a time; the lookup every new message makes
//! (has its `messageId` made a task?) runs on the asking thread ([`Reads::here`]).
//!
//! That lookup through a pool whose connections each had a thread of their own
//! (sqlx's) cost more than the read itself: the query went to the connection's thread
//! and its row came back, two thread switches and three futex calls a read. Under the
//! c64 diamond, skipping the lookup altogether cut the SQLite store's CPU per run by
//! 8–15%. A point read on a local file takes microseconds; one that cannot begin at once
//! (SQLite busy for longer than [`BUSY_HERE`]) fails here, and the caller makes it off
//! the thread instead, so a worker thread is never held longer than that.

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// The longest a read on the asking thread waits for SQLite's locks.
const BUSY_HERE: Duration = Duration::from_millis(20);

/// Most reads at once off the asking threads (each holds a connection and a thread).
const AT_ONCE: usize = 4;

pub(super) struct Reads {
    path: PathBuf,
    /// How long a read off the thread waits for SQLite's locks.
    busy: Duration,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
}

impl Reads {
    pub(super) fn new(path: &Path, busy: Duration) -> Self {
        Self {
            path: path.to_owned(),
            busy,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(AT_ONCE),
        }
    }

    /// Runs `read` on this thread, waiting at most [`BUSY_HERE`] for SQLite's locks.
    pub(super) fn here<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.with_connection(BUSY_HERE, read)
    }

    /// Runs `read` on a blocking thread, at most [`AT_ONCE`] at a time.
    pub(super) async fn off<T: Send + 'static>(
        self: &Arc<Self>,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> rusqlite::Result<T> {
        // The semaphore is never closed.
        let _permit = self.permits.acquire().await;
        let reads = self.clone();
        match tokio::task::spawn_blocking(move || reads.with_connection(reads.busy, read)).await {
            Ok(answer) => answer,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Runs `read` on an idle connection, or a new one; the connection is kept for the
    /// next read unless the read failed. No more are kept than have read at once.
    fn with_connection<T>(
        &self,
        busy: Duration,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => open(&self.path)?,
        };
        conn.busy_timeout(busy)?;
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
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    fn task_of(conn: &Connection, message: &str) -> rusqlite::Result<Option<String>> {
        conn.prepare_cached("SELECT id FROM tasks WHERE first_message_id = ?1")?
            .query_row([message], |row| row.get(0))
            .optional()
    }

    /// A read that cannot be made says so (the caller then reads off the thread); one
    /// that can is answered, on this thread or off it, and its connection kept for the
    /// next.
    #[tokio::test]
    async fn a_read_answers_or_says_it_cannot() {
        let dir = std::env::temp_dir().join(format!("a2a-reads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let missing = Reads::new(&dir.join("missing.db"), Duration::from_secs(1));
        assert!(missing.here(|c| task_of(c, "m")).is_err());
        assert_eq!(missing.idle.lock().unwrap().len(), 0);

        let path = dir.join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE tasks (id TEXT PRIMARY KEY, first_message_id TEXT);
             INSERT INTO tasks VALUES ('t1', 'm1');",
        )
        .unwrap();
        let reads = Arc::new(Reads::new(&path, Duration::from_secs(1)));
        assert_eq!(
            reads.here(|c| task_of(c, "m1")).unwrap().as_deref(),
            Some("t1")
        );
        assert_eq!(reads.here(|c| task_of(c, "m2")).unwrap(), None);
        assert_eq!(reads.idle.lock().unwrap().len(), 1);
        // A row written after the connection was kept is seen by its next read.
        conn.execute("INSERT INTO tasks VALUES ('t2', 'm2')", [])
            .unwrap();
        assert_eq!(
            reads.off(|c| task_of(c, "m2")).await.unwrap().as_deref(),
            Some("t2")
        );
        assert_eq!(reads.idle.lock().unwrap().len(), 1);
        drop(conn);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

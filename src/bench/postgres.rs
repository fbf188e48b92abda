//! What PostgreSQL itself counts while `bench --postgres` runs: the transactions its
//! database committed (the store writes and reads each in one statement, so each is a
//! round trip).

use std::time::Duration;

use anyhow::Context;
use sqlx::Connection;

/// A connection of the benchmark's own to the store's database.
pub(super) struct Counter {
    conn: tokio::sync::Mutex<sqlx::PgConnection>,
}

/// How long a server process may hold its counts before it reports them (PostgreSQL
/// flushes a busy backend's statistics at most once a second).
const STATS_FLUSH: Duration = Duration::from_millis(1500);

impl Counter {
    pub(super) async fn connect(url: &str) -> anyhow::Result<Counter> {
        let conn = sqlx::PgConnection::connect(url)
            .await
            .context("cannot connect to --postgres to read its statistics")?;
        Ok(Counter {
            conn: tokio::sync::Mutex::new(conn),
        })
    }

    /// Transactions committed in the database so far, once the server processes have
    /// reported what they did.
    pub(super) async fn transactions(&self) -> anyhow::Result<i64> {
        tokio::time::sleep(STATS_FLUSH).await;
        let mut conn = self.conn.lock().await;
        let n: i64 = sqlx::query_scalar(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
        )
        .fetch_one(&mut *conn)
        .await
        .context("reading pg_stat_database")?;
        Ok(n)
    }
}

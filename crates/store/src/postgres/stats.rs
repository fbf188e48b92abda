//! What PostgreSQL itself counts of a store's work: the transactions its database
//! committed (the store writes and reads each in one statement, so each is a round
//! trip). The benchmark reads it around its PostgreSQL rounds.

use std::time::Duration;

use sqlx::Connection;

/// A connection of its own to a store's database, to read the database's statistics.
pub struct TransactionCounter {
    conn: tokio::sync::Mutex<sqlx::PgConnection>,
}

/// How long a server process may hold its counts before it reports them (PostgreSQL
/// flushes a busy backend's statistics at most once a second).
const STATS_FLUSH: Duration = Duration::from_millis(1500);

impl TransactionCounter {
    /// Connects to the database of `url` (a `postgres://` URL, as `--store` takes it).
    pub async fn connect(url: &str) -> Result<TransactionCounter, sqlx::Error> {
        let conn = sqlx::PgConnection::connect(url).await?;
        Ok(TransactionCounter {
            conn: tokio::sync::Mutex::new(conn),
        })
    }

    /// Transactions committed in the database so far, once the server processes have
    /// reported what they did.
    pub async fn transactions(&self) -> Result<i64, sqlx::Error> {
        tokio::time::sleep(STATS_FLUSH).await;
        let mut conn = self.conn.lock().await;
        sqlx::query_scalar(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
        )
        .fetch_one(&mut *conn)
        .await
    }
}

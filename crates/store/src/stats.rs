//! What PostgreSQL itself counts of a store's work: the transactions its database
//! committed (the store writes and reads each in one statement, so each is a round
//! trip). The benchmark reads it around its PostgreSQL rounds. A build without the
//! `postgres` feature cannot connect one.

/// Why the statistics cannot be read.
pub type StatsError = Box<dyn std::error::Error + Send + Sync>;

/// A connection of its own to a store's database, to read the database's statistics.
pub struct TransactionCounter {
    #[cfg(feature = "postgres")]
    conn: tokio::sync::Mutex<sqlx::PgConnection>,
    #[cfg(not(feature = "postgres"))]
    never: std::convert::Infallible,
}

#[cfg(not(feature = "postgres"))]
impl TransactionCounter {
    /// Fails: this build has no PostgreSQL.
    pub async fn connect(_url: &str) -> Result<TransactionCounter, StatsError> {
        Err(
            "this build of a2a-orchestrator has no PostgreSQL store (the `postgres` feature)"
                .into(),
        )
    }

    /// Never called: no counter exists.
    pub async fn transactions(&self) -> Result<i64, StatsError> {
        match self.never {}
    }
}

#[cfg(feature = "postgres")]
use std::time::Duration;

#[cfg(feature = "postgres")]
use sqlx::Connection;

/// How long a server process may hold its counts before it reports them (PostgreSQL
/// flushes a busy backend's statistics at most once a second).
#[cfg(feature = "postgres")]
const STATS_FLUSH: Duration = Duration::from_millis(1500);

#[cfg(feature = "postgres")]
impl TransactionCounter {
    /// Connects to the database of `url` (a `postgres://` URL, as `--store` takes it).
    pub async fn connect(url: &str) -> Result<TransactionCounter, StatsError> {
        let conn = sqlx::PgConnection::connect(url).await?;
        Ok(TransactionCounter {
            conn: tokio::sync::Mutex::new(conn),
        })
    }

    /// Transactions committed in the database so far, once the server processes have
    /// reported what they did.
    pub async fn transactions(&self) -> Result<i64, StatsError> {
        tokio::time::sleep(STATS_FLUSH).await;
        let mut conn = self.conn.lock().await;
        Ok(sqlx::query_scalar(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
        )
        .fetch_one(&mut *conn)
        .await?)
    }
}

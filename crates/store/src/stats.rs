//! What PostgreSQL itself records of a store's work: the transactions its database
//! committed (the store writes and reads each in one statement, so each is a round
//! trip), and when each of a task's events was committed. The benchmark reads them
//! around its PostgreSQL rounds. A build without the `postgres` feature cannot connect
//! one.

use std::time::SystemTime;

/// Why the statistics cannot be read.
pub type StatsError = Box<dyn std::error::Error + Send + Sync>;

/// A connection of its own to a store's database, to read what the database records.
pub struct DatabaseStats {
    #[cfg(feature = "postgres")]
    conn: tokio::sync::Mutex<sqlx::PgConnection>,
    #[cfg(not(feature = "postgres"))]
    never: std::convert::Infallible,
}

/// A task's logged event (as the store keeps it: JSON) and when the transaction that
/// logged it committed.
pub type Committed = (String, SystemTime);

#[cfg(not(feature = "postgres"))]
impl DatabaseStats {
    /// Fails: this build has no PostgreSQL.
    pub async fn connect(_url: &str) -> Result<DatabaseStats, StatsError> {
        Err(
            "this build of a2a-orchestrator has no PostgreSQL store (the `postgres` feature)"
                .into(),
        )
    }

    /// Never called: no connection exists.
    pub async fn transactions(&self) -> Result<i64, StatsError> {
        match self.never {}
    }

    /// Never called: no connection exists.
    pub async fn commit_times(&self, _task: &str) -> Result<Option<Vec<Committed>>, StatsError> {
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
impl DatabaseStats {
    /// Connects to the database of `url` (a `postgres://` URL, as `--store` takes it).
    pub async fn connect(url: &str) -> Result<DatabaseStats, StatsError> {
        let conn = sqlx::PgConnection::connect(url).await?;
        Ok(DatabaseStats {
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

    /// Task `task`'s logged events in order, each with when the transaction that
    /// logged it committed, by the database's clock; none when the database does not
    /// record commit times (`track_commit_timestamp` is off). An event committed while
    /// it was off is left out.
    pub async fn commit_times(&self, task: &str) -> Result<Option<Vec<Committed>>, StatsError> {
        let mut conn = self.conn.lock().await;
        let on: bool =
            sqlx::query_scalar("SELECT current_setting('track_commit_timestamp') = 'on'")
                .fetch_one(&mut *conn)
                .await?;
        if !on {
            return Ok(None);
        }
        let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
            "SELECT event, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1e6)::BIGINT
             FROM task_events WHERE task_id = $1 ORDER BY seq",
        )
        .bind(task)
        .fetch_all(&mut *conn)
        .await?;
        Ok(Some(
            rows.into_iter()
                .filter_map(|(event, micros)| {
                    let at = SystemTime::UNIX_EPOCH
                        + Duration::from_micros(u64::try_from(micros?).ok()?);
                    Some((event, at))
                })
                .collect(),
        ))
    }
}

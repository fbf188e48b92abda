//! The PostgreSQL store (sqlx): what several `serve` replicas share.
//!
//! Unlike SQLite, PostgreSQL takes writes from many connections at once and commits
//! them together (its own group commit), so there is no writer task here: each call is
//! one statement on a pooled connection — a task's commit writes its events and its
//! row in one statement, so it is one round trip and one transaction — and is
//! acknowledged once committed. What is stored is what the SQLite store stores (the
//! same tables and the same JSON, [`super::rows`]), so the two read alike.
//!
//! The schema's version is the row of `a2a_orchestrator_schema`; migrations are
//! embedded here and applied in order at open, under an advisory lock so that replicas
//! starting together migrate once. A database with other tables and not ours, or one
//! written by a newer version, is refused with an error saying so.
//!
//! [`schema`] holds the migrations, [`tasks`] and [`runs`] the two traits' reads and
//! writes.

mod runs;
mod schema;
mod tasks;

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use super::{OpenError, OpenErrorKind, Store, millis};
use crate::protocol::server::StoreError;

/// Connections each replica keeps to the database at most.
const MAX_CONNECTIONS: u32 = 16;

/// How long a call waits for a pooled connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Tasks and runs in a PostgreSQL database. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// The database as the user named it, its password hidden.
    location: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`)
    /// and brings its schema up to date. `location` is the URL as errors show it.
    pub async fn open(url: &str, location: &str) -> Result<Self, OpenError> {
        let fail = |kind: OpenErrorKind| OpenError {
            location: location.to_owned(),
            kind,
        };
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| fail(OpenErrorKind::Database(e)))?
            .application_name("a2a-orchestrator");
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .min_connections(1)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|e| fail(OpenErrorKind::Unreachable(e)))?;
        schema::migrate(&pool).await.map_err(fail)?;
        Ok(Self {
            pool,
            location: location.to_owned(),
        })
    }

    /// Closes every connection, waiting for those in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// JSON for a value to store.
fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::backend)
}

impl Store for PostgresStore {
    fn durable(&self) -> bool {
        true
    }

    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let before = millis(before);
            let mut tx = self.pool.begin().await.map_err(StoreError::backend)?;
            for sql in [
                "DELETE FROM task_events WHERE task_id IN
                   (SELECT id FROM tasks WHERE terminal AND updated_at < $1)",
                "DELETE FROM push_configs WHERE task_id IN
                   (SELECT id FROM tasks WHERE terminal AND updated_at < $1)",
                "DELETE FROM run_units WHERE run_id IN
                   (SELECT id FROM runs WHERE run_end IS NOT NULL AND updated_at < $1)",
                "DELETE FROM runs WHERE run_end IS NOT NULL AND updated_at < $1",
            ] {
                sqlx::query(sql)
                    .bind(before)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::backend)?;
            }
            let n = sqlx::query("DELETE FROM tasks WHERE terminal AND updated_at < $1")
                .bind(before)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::backend)?
                .rows_affected();
            tx.commit().await.map_err(StoreError::backend)?;
            Ok(n as usize)
        })
    }

    fn check_writable(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            // A write that changes nothing: it needs the database up, reachable and
            // not read-only (a standby refuses it).
            sqlx::query("UPDATE a2a_orchestrator_schema SET version = version")
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            Ok(())
        })
    }
}

//! Runs and their checkpoints: the engine's [`RunStore`] on PostgreSQL, in the stored
//! row types the SQLite store writes too.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use futures::future::BoxFuture;
use sqlx::Row;

use super::PostgresStore;
use crate::engine::{Checkpoint, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};
use crate::store::millis;
use crate::store::rows::{CheckpointRow, EndRow, HeaderRow};

/// JSON for a row to store.
fn encode<T: serde::Serialize>(value: &T) -> Result<String, RunStoreError> {
    serde_json::to_string(value).map_err(RunStoreError::backend)
}

fn now() -> i64 {
    millis(SystemTime::now())
}

impl PostgresStore {
    /// Runs one statement with the run's id and one more text: the rows it changed.
    async fn run_write(&self, sql: &str, run_id: &str, text: &str) -> Result<u64, RunStoreError> {
        Ok(sqlx::query(sql)
            .bind(run_id)
            .bind(text)
            .bind(now())
            .execute(&self.pool)
            .await
            .map_err(RunStoreError::backend)?
            .rows_affected())
    }
}

impl RunStore for PostgresStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            self.run_write(
                "INSERT INTO runs (id, header, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                   updated_at = excluded.updated_at",
                &header.run_id,
                &encode(&HeaderRow::from(header))?,
            )
            .await?;
            Ok(())
        })
    }

    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO run_units (run_id, step, item, checkpoint) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint",
            )
            .bind(run_id)
            .bind(step)
            .bind(item.map_or(-1, |i| i as i64))
            .bind(encode(&CheckpointRow::from(checkpoint))?)
            .execute(&self.pool)
            .await
            .map_err(RunStoreError::backend)?;
            Ok(())
        })
    }

    /// Stored before it returns, as `save_unit`: PostgreSQL commits concurrent writes
    /// together, so there is no queue to leave it in.
    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.save_unit(run_id, step, item, checkpoint)
    }

    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            sqlx::query("UPDATE runs SET canceled = true, updated_at = $2 WHERE id = $1")
                .bind(run_id)
                .bind(now())
                .execute(&self.pool)
                .await
                .map_err(RunStoreError::backend)?;
            Ok(())
        })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            // A finished run keeps its steps' checkpoints: a retry of it begins with the
            // results of those that completed. They go when retention prunes the run.
            self.run_write(
                "UPDATE runs SET run_end = $2, updated_at = $3 WHERE id = $1",
                run_id,
                &encode(&EndRow::from(end))?,
            )
            .await?;
            Ok(())
        })
    }

    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        Box::pin(async move {
            let Some(row) = sqlx::query("SELECT header, canceled, run_end FROM runs WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(RunStoreError::backend)?
            else {
                return Ok(None);
            };
            let unreadable = |e: serde_json::Error| RunStoreError::Unreadable {
                run: run_id.to_owned(),
                cause: Arc::new(e),
            };
            let header: HeaderRow = serde_json::from_str(row.get(0)).map_err(unreadable)?;
            let end: Option<&str> = row.get(2);
            let end = end
                .map(serde_json::from_str::<EndRow>)
                .transpose()
                .map_err(unreadable)?;
            let units =
                sqlx::query("SELECT step, item, checkpoint FROM run_units WHERE run_id = $1")
                    .bind(run_id)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(RunStoreError::backend)?
                    .into_iter()
                    .map(|r| {
                        let item: i64 = r.get(1);
                        let c: CheckpointRow =
                            serde_json::from_str(r.get(2)).map_err(unreadable)?;
                        Ok(((r.get(0), usize::try_from(item).ok()), c.into()))
                    })
                    .collect::<Result<HashMap<_, _>, RunStoreError>>()?;
            Ok(Some(SavedRun {
                header: header.into(),
                canceled: row.get(1),
                units,
                end: end.map(RunEnd::from),
            }))
        })
    }
}

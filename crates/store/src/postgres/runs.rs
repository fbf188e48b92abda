//! Runs and their checkpoints: the engine's [`RunStore`] on PostgreSQL, in the stored
//! row types the SQLite store writes too.

use std::collections::HashMap;
use std::sync::Arc;

use std::time::SystemTime;

use futures::future::BoxFuture;
use sqlx::Row;

use super::PostgresStore;
use crate::rows::millis;
use crate::rows::{CheckpointRow, EndRow, HeaderRow};
use orchestrator_core::engine::{Checkpoint, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};

/// JSON for a row to store.
fn encode<T: serde::Serialize>(value: &T) -> Result<String, RunStoreError> {
    serde_json::to_string(value).map_err(RunStoreError::backend)
}

fn now() -> i64 {
    millis(SystemTime::now())
}

/// The row of the run's task, locked against a takeover until the write commits: a
/// run is fenced by its task's owner and fencing number (the host runs each run as the
/// task of the same id). A run whose task is not stored yet is its starter's.
const HELD: &str = "held AS (SELECT owner, fence FROM tasks WHERE id = $1 FOR SHARE)";

/// True unless the run's task is another replica's ($R, $F substituted).
const MINE: &str = "NOT EXISTS (SELECT 1 FROM held WHERE owner IS DISTINCT FROM $R OR fence IS DISTINCT FROM $F::bigint)";

/// A statement for run `$1`, `more` further parameters, made only while the run's task
/// is this replica's: `sql` with `{HELD}` and `{MINE}` filled in, the replica and fence
/// parameters numbered after the others.
fn fenced(sql: &str, more: usize) -> String {
    let mine = MINE
        .replace("$R", &format!("${}", more + 2))
        .replace("$F", &format!("${}", more + 3));
    format!("WITH {HELD} {}", sql.replace("{MINE}", &mine))
}

/// A parameter of a run's write after the run's id.
enum Value<'a> {
    Text(&'a str),
    Int(i64),
}

impl PostgresStore {
    /// Runs `sql` (see [`fenced`]) with the run's id and `texts`; refused with
    /// [`RunStoreError::Fenced`] when the run's task is another replica's.
    async fn run_write(
        &self,
        sql: &str,
        run_id: &str,
        values: &[Value<'_>],
    ) -> Result<(), RunStoreError> {
        let sql = fenced(sql, values.len());
        let mut q = sqlx::query(&sql).bind(run_id);
        for v in values {
            q = match *v {
                Value::Text(t) => q.bind(t),
                Value::Int(n) => q.bind(n),
            };
        }
        let written = q
            .bind(&*self.replica)
            .bind(self.fence(run_id))
            .execute(&self.pool)
            .await
            .map_err(RunStoreError::backend)?
            .rows_affected();
        if written > 0 {
            return Ok(());
        }
        // Nothing written: the run's task is someone else's, or the run is not stored
        // (nothing to change, as in the other stores).
        let owner: Option<(Option<String>, i64)> =
            sqlx::query_as("SELECT owner, fence FROM tasks WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(RunStoreError::backend)?;
        match owner {
            Some((owner, fence))
                if owner.as_deref() != Some(&*self.replica)
                    || Some(fence) != self.fence(run_id) =>
            {
                Err(RunStoreError::Fenced(run_id.to_owned()))
            }
            _ => Ok(()),
        }
    }
}

impl RunStore for PostgresStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let header_json = encode(&HeaderRow::from(header))?;
            self.run_write(
                "INSERT INTO runs (id, header, updated_at) SELECT $1, $2, $3
                 WHERE {MINE}
                 ON CONFLICT (id) DO UPDATE SET header = excluded.header,
                   updated_at = excluded.updated_at",
                &header.run_id,
                &[Value::Text(&header_json), Value::Int(now())],
            )
            .await
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
            let checkpoint = encode(&CheckpointRow::from(checkpoint))?;
            self.run_write(
                "INSERT INTO run_units (run_id, step, item, checkpoint) SELECT $1, $2, $3, $4
                 WHERE {MINE}
                 ON CONFLICT (run_id, step, item) DO UPDATE SET checkpoint = excluded.checkpoint",
                run_id,
                &[
                    Value::Text(step),
                    Value::Int(item.map_or(-1, |i| i as i64)),
                    Value::Text(&checkpoint),
                ],
            )
            .await
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
            self.run_write(
                "UPDATE runs SET canceled = true, updated_at = $2 WHERE id = $1 AND {MINE}",
                run_id,
                &[Value::Int(now())],
            )
            .await
        })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let end = encode(&EndRow::from(end))?;
            // A finished run keeps its steps' checkpoints: a retry of it begins with the
            // results of those that completed. They go when retention prunes the run.
            self.run_write(
                "UPDATE runs SET run_end = $2, updated_at = $3 WHERE id = $1 AND {MINE}",
                run_id,
                &[Value::Text(&end), Value::Int(now())],
            )
            .await
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

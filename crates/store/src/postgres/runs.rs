//! Runs and their checkpoints: the engine's [`RunStore`] on PostgreSQL, in the stored
//! row types the SQLite store writes too.
//!
//! A run's header and end are queued, not waited for: each is followed by a write that
//! is (the first step's checkpoint before its message goes out; the task's last
//! commit, before the client hears the run ended), and the writer stores a write only
//! with those queued before it for the same task ([`super::writer`]). So nothing is
//! done on the strength of either before it is stored, and a run does not wait a round
//! trip to the database for each alone: on the benchmark's diamond at c64, 6–18% more
//! runs a second (docs/benchmarks.md, the twenty-first look).

use std::collections::HashMap;
use std::sync::Arc;

use std::time::SystemTime;

use futures::future::BoxFuture;
use sqlx::Row;

use super::PostgresStore;
use super::bulk::{RunRow, RunWrite, Unit};
use super::writer::Write;
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

impl PostgresStore {
    /// Write `what` of run `run_id` (its header or end: `json`), made while the run's
    /// task is this replica's.
    fn run_row(&self, what: RunWrite, run_id: &str, json: String) -> Write {
        Write::Run(
            what,
            RunRow {
                id: run_id.to_owned(),
                json,
                updated_at: now(),
                fence: self.fence(run_id),
            },
        )
    }

    /// The write that stores a unit's checkpoint while the run's task is this
    /// replica's.
    fn unit_write(
        &self,
        run_id: &str,
        step: &str,
        item: Option<usize>,
        checkpoint: &Checkpoint,
    ) -> Result<Write, RunStoreError> {
        Ok(Write::Unit(Unit {
            run: run_id.to_owned(),
            step: step.to_owned(),
            item: item.map_or(-1, |i| i as i64),
            checkpoint: encode(&CheckpointRow::from(checkpoint))?,
            fence: self.fence(run_id),
        }))
    }

    /// Makes `write` for run `run_id` and waits until it is committed; refused with
    /// [`RunStoreError::Fenced`] when the run's task is another replica's.
    async fn run_write(&self, run_id: &str, write: Write) -> Result<(), RunStoreError> {
        let written = self.writer.write(write).await?;
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
            // A new run's task is new to this replica, and may not be stored yet: the
            // header carries the number its row is created with.
            self.hold_fence(&header.run_id);
            let write = self.run_row(RunWrite::Create, &header.run_id, header_json);
            // Stored with the run's next waited write (see the module's comment); one
            // refused for its fence is followed by that write, refused too.
            Ok(self.writer.queue(write).await?)
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
            let write = self.unit_write(run_id, step, item, checkpoint)?;
            self.run_write(run_id, write).await
        })
    }

    /// Queued without waiting for the commit: the writer logs a failure, and a write
    /// refused for its fence is followed by the run's next waited-for write, refused too.
    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let write = self.unit_write(run_id, step, item, checkpoint)?;
            Ok(self.writer.queue(write).await?)
        })
    }

    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let write = self.run_row(RunWrite::Cancel, run_id, String::new());
            self.run_write(run_id, write).await
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
            let write = self.run_row(RunWrite::Finish, run_id, end);
            // Stored with the task's last commit, which the relay makes next and waits
            // for (see the module's comment).
            Ok(self.writer.queue(write).await?)
        })
    }

    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        Box::pin(async move {
            // What this replica queued is read back: its header or end may still wait
            // for their next write (rare: a run is read to resume or retry it).
            self.writer.flush().await?;
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

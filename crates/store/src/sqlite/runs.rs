//! Runs and their checkpoints: the engine's [`RunStore`] on SQLite.

use super::writer::{Op, Write};
use super::{SqliteStore, encode};
use crate::rows::{CheckpointRow, EndRow, HeaderRow};
use futures::future::BoxFuture;
use orchestrator_core::engine::{Checkpoint, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};
use rusqlite::OptionalExtension;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::oneshot;

/// The write that stores a unit's checkpoint.
fn unit_write(
    run_id: &str,
    step: &str,
    item: Option<usize>,
    checkpoint: &Checkpoint,
) -> Result<Write, RunStoreError> {
    Ok(Write::SaveUnit {
        run: run_id.to_owned(),
        step: step.to_owned(),
        item: item.map_or(-1, |i| i as i64),
        checkpoint: encode(&CheckpointRow::from(checkpoint))?,
    })
}

impl RunStore for SqliteStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let json = encode(&HeaderRow::from(header))?;
            self.write(Write::CreateRun {
                id: header.run_id.clone(),
                header: json,
            })
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
            self.write(unit_write(run_id, step, item, checkpoint)?)
                .await?;
            Ok(())
        })
    }

    fn queue_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let write = unit_write(run_id, step, item, checkpoint)?;
            // Nobody waits for the outcome: the writer logs a failure.
            let (done, _) = oneshot::channel();
            self.writes
                .send(Op { write, done })
                .await
                .map_err(|_| RunStoreError::Closed)
        })
    }

    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            self.write(Write::SetCanceled {
                run: run_id.to_owned(),
            })
            .await?;
            Ok(())
        })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        Box::pin(async move {
            let json = encode(&EndRow::from(end))?;
            self.write(Write::FinishRun {
                run: run_id.to_owned(),
                end: json,
            })
            .await?;
            Ok(())
        })
    }

    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        Box::pin(async move {
            let id = run_id.to_owned();
            let stored = self
                .reads
                .off(move |conn| {
                    let read = conn.unchecked_transaction()?;
                    let run = read
                        .prepare_cached("SELECT header, canceled, run_end FROM runs WHERE id = ?1")?
                        .query_row([&id], |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, bool>(1)?,
                                r.get::<_, Option<String>>(2)?,
                            ))
                        })
                        .optional()?;
                    let Some(run) = run else { return Ok(None) };
                    let units = read
                        .prepare_cached(
                            "SELECT step, item, checkpoint FROM run_units WHERE run_id = ?1",
                        )?
                        .query_map([&id], |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, i64>(1)?,
                                r.get::<_, String>(2)?,
                            ))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    Ok(Some((run, units)))
                })
                .await
                .map_err(RunStoreError::backend)?;
            let Some(((header, canceled, end), units)) = stored else {
                return Ok(None);
            };
            let unreadable = |e: serde_json::Error| RunStoreError::Unreadable {
                run: run_id.to_owned(),
                cause: Arc::new(e),
            };
            let units = units
                .into_iter()
                .map(|(step, item, c)| {
                    let item = usize::try_from(item).ok();
                    let c: CheckpointRow = serde_json::from_str(&c).map_err(unreadable)?;
                    Ok(((step, item), c.into()))
                })
                .collect::<Result<HashMap<_, _>, RunStoreError>>()?;
            Ok(Some(SavedRun {
                header: serde_json::from_str::<HeaderRow>(&header)
                    .map_err(unreadable)?
                    .into(),
                canceled,
                units,
                end: end
                    .map(|e| serde_json::from_str::<EndRow>(&e).map(RunEnd::from))
                    .transpose()
                    .map_err(unreadable)?,
            }))
        })
    }
}

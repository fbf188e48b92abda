//! Tasks, their numbered event logs, the messageId index and push configs: the
//! protocol's [`TaskStore`] on PostgreSQL. As in SQLite, snapshots are kept now and
//! then ([`snapshot_due`]); a read replays the events after the stored snapshot.

use std::time::SystemTime;

use futures::future::BoxFuture;
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::bulk::{Events, Snapshot};
use super::writer::Write;
use super::{PostgresStore, encode};
use crate::Store;
use crate::rows::{AtEnd, millis, snapshot_due};
use crate::rows::{
    event_of, push_config_of, push_config_row, report_unreadable, task_of, unreadable_task,
};
use a2a::store::{
    LoggedEvent, StoreError, StoredPushConfig, StoredTask, TaskCursor, TaskPage, TaskQuery,
    TaskStore, apply_event, status_ms,
};
use a2a::types::TaskId;

/// The columns a task row is read by: its snapshot, the number of the last event in
/// it, whether it is terminal, who started it and in which tenant.
const TASK_COLUMNS: &str = "snapshot, seq, terminal, initiator, tenant";

impl PostgresStore {
    /// A stored snapshot brought up to date: the events logged after it, replayed.
    pub(super) async fn caught_up(&self, row: PgRow) -> Result<(StoredTask, u64), StoreError> {
        let snapshot: String = row.get(0);
        let seq: i64 = row.get(1);
        let terminal: bool = row.get(2);
        let mut task = task_of(&snapshot, row.get(3), row.get(4))?;
        let mut seq = seq as u64;
        if !terminal {
            // Stored with the event that ended it, a terminal task has nothing after.
            for (n, event) in self.events_after(&TaskId::new(&task.id), seq).await? {
                apply_event(&mut task, &event);
                seq = n;
            }
        }
        Ok((task, seq))
    }
}

impl TaskStore for PostgresStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>> {
        let id = id.clone();
        Box::pin(async move {
            let row = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"))
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            match row {
                Some(row) => Ok(Some(self.caught_up(row).await?)),
                None => Ok(None),
            }
        })
    }

    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let due = snapshot_due(task, events, AtEnd::Snapshot);
            let events = events
                .iter()
                .map(|(n, e)| Ok((*n as i64, encode(&**e)?)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            let id = task.id.as_str();
            let state = task.state().as_str();
            let known = self.fence(id);
            let fence = self.hold_fence(id);
            let write = if due {
                Write::Snapshot(Snapshot {
                    id: id.to_owned(),
                    snapshot: encode(&task.task)?,
                    seq: events.last().map(|(n, _)| *n),
                    terminal: task.state().is_terminal(),
                    first_message_id: task.history.first().map(|m| m.message_id.clone()),
                    updated_at: millis(SystemTime::now()),
                    context_id: task.context_id.clone(),
                    state: state.to_owned(),
                    status_ms: status_ms(task),
                    fence,
                    initiator: task.initiator.clone(),
                    tenant: task.tenant.clone(),
                    events,
                })
            } else {
                Write::Events(Events {
                    id: id.to_owned(),
                    state: state.to_owned(),
                    status_ms: status_ms(task),
                    fence,
                    events,
                })
            };
            let written = self.writer.write(write).await?;
            if written == 0 {
                if known.is_none() {
                    // Never this replica's.
                    self.set_fence(id, None);
                }
                // The task is another replica's now; the next renewal reports it lost,
                // and the server hands it over.
                return Err(StoreError::Fenced(TaskId::new(&task.id)));
            }
            if task.state().is_terminal() {
                // Nobody runs a finished task.
                self.set_fence(id, None);
            }
            Ok(())
        })
    }

    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>> {
        let id = id.to_string();
        Box::pin(async move {
            let rows = sqlx::query(
                "SELECT seq, event FROM task_events WHERE task_id = $1 AND seq > $2 ORDER BY seq",
            )
            .bind(&id)
            .bind(after as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            rows.into_iter()
                .map(|r| {
                    let text: &str = r.get(1);
                    event_of(r.get(0), text)
                })
                .collect()
        })
    }

    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        Box::pin(async move {
            let id = self
                .lookups
                .task_of(message_id)
                .await
                .map_err(|e| StoreError::Backend(e))?;
            Ok(id.map(TaskId::new))
        })
    }

    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        Box::pin(async move {
            let rows = sqlx::query(&format!(
                "SELECT {TASK_COLUMNS}, id FROM tasks WHERE NOT terminal ORDER BY id"
            ))
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            let mut tasks = Vec::with_capacity(rows.len());
            for row in rows {
                let id: String = row.get(5);
                match self.caught_up(row).await {
                    Ok(task) => tasks.push(task),
                    Err(e @ StoreError::Unreadable { .. }) => {
                        report_unreadable(&id, &e, &self.observe)
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(tasks)
        })
    }

    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        self.prune_finished(before)
    }

    fn set_push_config(
        &self,
        task: &TaskId,
        config: StoredPushConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let task = task.to_string();
        Box::pin(async move {
            let config_id = match config.config.id.as_str() {
                "" => task.clone(),
                id => id.to_owned(),
            };
            let config = push_config_row(&config).map_err(StoreError::backend)?;
            sqlx::query(
                "INSERT INTO push_configs (task_id, config_id, position, config)
                 VALUES ($1, $2, (SELECT coalesce(max(position), 0) + 1 FROM push_configs
                                  WHERE task_id = $1), $3)
                 ON CONFLICT (task_id, config_id) DO UPDATE SET config = excluded.config",
            )
            .bind(&task)
            .bind(&config_id)
            .bind(config)
            .execute(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            Ok(())
        })
    }

    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>> {
        let task = task.to_string();
        Box::pin(async move {
            let rows: Vec<String> = sqlx::query_scalar(
                "SELECT config FROM push_configs WHERE task_id = $1 ORDER BY position",
            )
            .bind(&task)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            rows.iter().map(|c| push_config_of(&task, c)).collect()
        })
    }

    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (task, config_id) = (task.to_string(), config_id.to_owned());
        Box::pin(async move {
            let n = sqlx::query("DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2")
                .bind(&task)
                .bind(&config_id)
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?
                .rows_affected();
            Ok(n > 0)
        })
    }

    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>> {
        let query = query.clone();
        Box::pin(async move {
            // The filters, the same for the page and the count; an absent one is NULL.
            let context = query.context_id.as_ref().map(|c| c.to_string());
            let state = query.state.map(|s| s.as_str());
            const FILTERS: &str = "($1::text IS NULL OR context_id = $1)
                AND ($2::text IS NULL OR state = $2)
                AND ($3::bigint IS NULL OR status_ms >= $3)
                AND ($4::text IS NULL OR initiator = $4)
                AND tenant IS NOT DISTINCT FROM $5::text";
            let (after_ms, after_id) = query
                .after
                .as_ref()
                .map(|a| (a.status_ms, a.id.to_string()))
                .unzip();
            let rows = sqlx::query(&format!(
                "SELECT {TASK_COLUMNS}, status_ms, id, context_id, state FROM tasks WHERE {FILTERS}
                 AND ($6::bigint IS NULL OR (status_ms, id) < ($6, $7::text))
                 ORDER BY status_ms DESC, id DESC LIMIT $8"
            ))
            .bind(&context)
            .bind(state)
            .bind(query.changed_since_ms)
            .bind(&query.initiator)
            .bind(&query.tenant)
            .bind(after_ms)
            .bind(&after_id)
            .bind(query.limit as i64 + 1)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            let total: i64 =
                sqlx::query_scalar(&format!("SELECT count(*) FROM tasks WHERE {FILTERS}"))
                    .bind(&context)
                    .bind(state)
                    .bind(query.changed_since_ms)
                    .bind(&query.initiator)
                    .bind(&query.tenant)
                    .fetch_one(&self.pool)
                    .await
                    .map_err(StoreError::backend)?;
            let more = rows.len() > query.limit;
            let mut tasks = Vec::with_capacity(rows.len().min(query.limit));
            let mut last = None;
            for row in rows.into_iter().take(query.limit) {
                last = Some(TaskCursor {
                    status_ms: row.get(5),
                    id: TaskId::new(row.get::<String, _>(6)),
                });
                let (id, context, state): (String, String, String) =
                    (row.get(6), row.get(7), row.get(8));
                match self.caught_up(row).await {
                    Ok((task, _)) => tasks.push(task),
                    Err(e @ StoreError::Unreadable { .. }) => {
                        let task = unreadable_task(&id, &context, &state, &e, &self.observe);
                        tasks.push(StoredTask::new(task));
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(TaskPage {
                next: last.filter(|_| more),
                tasks,
                total: total as usize,
            })
        })
    }

    fn cluster(&self) -> Option<&dyn a2a::store::Cluster> {
        Some(self)
    }
}

//! Tasks, their numbered event logs, the messageId index and push configs: the
//! protocol's [`TaskStore`] on SQLite. Snapshots are kept now and then, not at every
//! event and not at a task's end ([`AtEnd::Events`]); a read replays the events after
//! the stored snapshot, a finished task's too.

use super::writer::{Listed, Write};
use super::{SqliteStore, WriteError, encode};
use crate::Store;
use crate::rows::{AtEnd, report_unreadable, snapshot_due, unreadable_task};
use a2a::store::{
    LoggedEvent, StoreError, StoredPushConfig, StoredTask, TaskCursor, TaskPage, TaskQuery,
    TaskStore, apply_event, status_ms,
};
use a2a::types::{StreamEvent, Task, TaskId, TaskState, TaskStatus};
use futures::future::BoxFuture;
use rusqlite::{Connection, OptionalExtension, params};
use std::time::SystemTime;

/// A task's row and the rows of its log after its snapshot, as read (in one read
/// transaction: the log agrees with the row).
struct TaskRow {
    id: String,
    snapshot: String,
    seq: i64,
    initiator: Option<String>,
    tenant: Option<String>,
    log: Vec<(i64, String)>,
}

/// The columns every read of a task takes, in this order.
const TASK_COLUMNS: &str = "id, snapshot, seq, initiator, tenant";

/// A task's row from a statement that selects [`TASK_COLUMNS`] first, its log not yet
/// read.
fn stored_task(row: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        id: row.get(0)?,
        snapshot: row.get(1)?,
        seq: row.get(2)?,
        initiator: row.get(3)?,
        tenant: row.get(4)?,
        log: Vec::new(),
    })
}

/// The rows of task `id`'s log that hold events numbered after `after`.
fn log_rows(conn: &Connection, id: &str, after: i64) -> rusqlite::Result<Vec<(i64, String)>> {
    conn.prepare_cached(
        "SELECT seq, event FROM task_events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq",
    )?
    .query_map(params![id, after], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// `task` with its log read.
fn with_log(conn: &Connection, mut task: TaskRow) -> rusqlite::Result<TaskRow> {
    task.log = log_rows(conn, &task.id, task.seq)?;
    Ok(task)
}

/// A task as stored, brought up to date: its snapshot with the events logged after it
/// replayed, or — with no snapshot (see [`from_log`]) — the log replayed from its first
/// event, the whole task. Who started it and its tenant are columns of their own (never
/// on the wire, so never in an event).
fn caught_up(stored: &TaskRow) -> Result<(StoredTask, u64), StoreError> {
    let mut task = if stored.snapshot.is_empty() {
        Task::new(
            stored.id.as_str(),
            "",
            TaskStatus::new(TaskState::Submitted),
        )
    } else {
        parse_task(&stored.snapshot, None, None)?.task
    };
    let mut seq = stored.seq as u64;
    let mut events = Vec::new();
    for (n, text) in &stored.log {
        logged_events(*n, text, seq, &mut events)?;
    }
    if stored.snapshot.is_empty() && !from_log(&events) {
        return Err(StoreError::unreadable(
            "task",
            std::io::Error::other("it has no snapshot, and its log does not begin with it"),
        ));
    }
    for (n, event) in events {
        apply_event(&mut task, &event);
        seq = n;
    }
    let task = StoredTask {
        task,
        initiator: stored.initiator.clone(),
        tenant: stored.tenant.clone(),
    };
    Ok((task, seq))
}

/// Whether a commit's snapshot is left to the log: a task's first commit, whose first
/// event is the whole task, is stored with an empty snapshot numbered 0 — replaying the
/// commit's events rebuilds it, and the same bytes are not written twice.
fn from_log(events: &[LoggedEvent]) -> bool {
    matches!(events.first(), Some((1, e)) if matches!(**e, StreamEvent::Task(_)))
}

use crate::rows::{event_of, push_config_of, push_config_row, task_of as parse_task};

impl TaskStore for SqliteStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>> {
        let id = id.to_string();
        Box::pin(async move {
            let stored = self
                .reads
                .off(move |conn| {
                    let read = conn.unchecked_transaction()?;
                    let task = read
                        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"))?
                        .query_row([&id], stored_task)
                        .optional()?;
                    task.map(|t| with_log(&read, t)).transpose()
                })
                .await
                .map_err(read_error)?;
            stored.as_ref().map(caught_up).transpose()
        })
    }

    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let events_only_artifacts = !events.is_empty()
                && events
                    .iter()
                    .all(|(_, e)| matches!(**e, StreamEvent::ArtifactUpdate(_)));
            let left_to_log = from_log(events);
            let snapshot = snapshot_due(task, events, AtEnd::Events)
                .then(|| {
                    if left_to_log {
                        Ok(String::new())
                    } else {
                        encode(&task.task)
                    }
                })
                .transpose()?;
            let rows = logged_rows(events)?;
            // Without a new event, `apply` gives the snapshot the task's last stored
            // number; left to the log, the snapshot is numbered 0 (before every event).
            let seq = match events.last() {
                Some(_) if left_to_log => 0,
                last => last.map_or(0, |(s, _)| *s as i64),
            };
            self.write(Write::Commit {
                id: task.id.clone(),
                snapshot,
                seq,
                terminal: task.state().is_terminal(),
                first_message_id: task.history.first().map(|m| m.message_id.clone()),
                initiator: task.initiator.clone(),
                tenant: task.tenant.clone(),
                rows,
                listed: Listed {
                    context_id: task.context_id.clone(),
                    state: task.state().as_str(),
                    status_ms: status_ms(task),
                },
                moved: !events_only_artifacts,
            })
            .await?;
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
            let rows = self
                .reads
                .off(move |conn| log_rows(conn, &id, after as i64))
                .await
                .map_err(read_error)?;
            let mut events = Vec::with_capacity(rows.len());
            for (n, text) in &rows {
                logged_events(*n, text, after, &mut events)?;
            }
            Ok(events)
        })
    }

    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        Box::pin(async move {
            // Made here, on this thread (see `reads`); off it only when it cannot be made
            // at once.
            if let Ok(id) = self.reads.here(|conn| task_of_message(conn, message_id)) {
                return Ok(id.map(TaskId::new));
            }
            let message_id = message_id.to_owned();
            let id = self
                .reads
                .off(move |conn| task_of_message(conn, &message_id))
                .await
                .map_err(read_error)?;
            Ok(id.map(TaskId::new))
        })
    }

    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        Box::pin(async move {
            let stored = self
                .reads
                .off(|conn| {
                    let read = conn.unchecked_transaction()?;
                    let tasks = read
                        .prepare(&format!(
                            "SELECT {TASK_COLUMNS} FROM tasks WHERE terminal = 0"
                        ))?
                        .query_map([], stored_task)?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    tasks
                        .into_iter()
                        .map(|t| with_log(&read, t))
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .await
                .map_err(read_error)?;
            let mut tasks = Vec::with_capacity(stored.len());
            for task in stored {
                match caught_up(&task) {
                    Ok(task) => tasks.push(task),
                    Err(e @ StoreError::Unreadable { .. }) => {
                        report_unreadable(&task.id, &e, &self.observe)
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
            let config =
                push_config_row(&config).map_err(|e| WriteError::Encode(std::sync::Arc::new(e)))?;
            self.write(Write::SetPush {
                task,
                config_id,
                config,
            })
            .await?;
            Ok(())
        })
    }

    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>> {
        let task = task.to_string();
        Box::pin(async move {
            let id = task.clone();
            let rows: Vec<String> = self
                .reads
                .off(move |conn| {
                    conn.prepare_cached(
                        "SELECT config FROM push_configs WHERE task_id = ?1 ORDER BY position",
                    )?
                    .query_map([&id], |r| r.get(0))?
                    .collect()
                })
                .await
                .map_err(read_error)?;
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
            let n = self.write(Write::DeletePush { task, config_id }).await?;
            Ok(n > 0)
        })
    }

    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>> {
        let query = query.clone();
        Box::pin(async move {
            let page_sql = list_sql(&query, Listing::Page);
            let count_sql = list_sql(&query, Listing::Count);
            let listing = query.clone();
            let (stored, total, more) = self
                .reads
                .off(move |conn| {
                    let q = &listing;
                    let (after_ms, after_id) = q
                        .after
                        .as_ref()
                        .map(|a| (a.status_ms, a.id.to_string()))
                        .unzip();
                    // Every parameter is bound, those of absent filters too: the
                    // statements name only the present ones (see `list_sql`).
                    let bound = params![
                        q.context_id.as_ref().map(|c| c.as_str()),
                        q.state.map(|s| s.as_str()),
                        q.changed_since_ms,
                        after_ms,
                        after_id,
                        q.limit as i64 + 1,
                        q.initiator,
                        q.tenant,
                    ];
                    let read = conn.unchecked_transaction()?;
                    let page = read
                        .prepare(&page_sql)?
                        .query_map(bound, |row| {
                            Ok((
                                stored_task(row)?,
                                row.get::<_, i64>(5)?,
                                row.get::<_, String>(6)?,
                                row.get::<_, String>(7)?,
                            ))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    let total: i64 = read.prepare(&count_sql)?.query_row(bound, |r| r.get(0))?;
                    // The page asks for one row more than it holds: whether another follows.
                    let more = page.len() > q.limit;
                    let page = page
                        .into_iter()
                        .take(q.limit)
                        .map(|(task, ms, context, state)| {
                            Ok((with_log(&read, task)?, ms, context, state))
                        })
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    Ok((page, total, more))
                })
                .await
                .map_err(read_error)?;
            let mut tasks = Vec::with_capacity(stored.len());
            let mut last = None;
            for (stored, status_ms, context, state) in &stored {
                last = Some(TaskCursor {
                    status_ms: *status_ms,
                    id: TaskId::new(stored.id.as_str()),
                });
                tasks.push(match caught_up(stored) {
                    Ok((task, _)) => task,
                    Err(e @ StoreError::Unreadable { .. }) => StoredTask {
                        task: unreadable_task(&stored.id, context, state, &e, &self.observe),
                        initiator: stored.initiator.clone(),
                        tenant: stored.tenant.clone(),
                    },
                    Err(e) => return Err(e),
                });
            }
            Ok(TaskPage {
                next: last.filter(|_| more),
                tasks,
                total: total as usize,
            })
        })
    }
}

/// What a ListTasks statement reads: a page of tasks, or how many match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Page,
    Count,
}

/// ListTasks' statement, naming only the filters `query` has: parameters ?1 context,
/// ?2 state, ?3 changed since, ?4 and ?5 the cursor, ?6 the page's rows, ?7 initiator,
/// ?8 tenant. A filter written `(?1 IS NULL OR context_id = ?1)` read the same rows,
/// but SQLite plans a statement before its parameters are known, and with it walked
/// the status-time index over every task for any filter: a principal's or a context's
/// page among many others' tasks now comes from its own index (`tasks_by_initiator_time`,
/// `tasks_by_context_time`), and so does its count.
fn list_sql(query: &TaskQuery, listing: Listing) -> String {
    let mut filters = vec!["tenant IS ?8"];
    if query.context_id.is_some() {
        filters.push("context_id = ?1");
    }
    if query.state.is_some() {
        filters.push("state = ?2");
    }
    if query.changed_since_ms.is_some() {
        filters.push("status_ms >= ?3");
    }
    if query.initiator.is_some() {
        filters.push("initiator = ?7");
    }
    match listing {
        Listing::Count => format!("SELECT count(*) FROM tasks WHERE {}", filters.join(" AND ")),
        Listing::Page => {
            if query.after.is_some() {
                filters.push("(status_ms, id) < (?4, ?5)");
            }
            format!(
                "SELECT {TASK_COLUMNS}, status_ms, context_id, state
                 FROM tasks WHERE {}
                 ORDER BY status_ms DESC, id DESC LIMIT ?6",
                filters.join(" AND ")
            )
        }
    }
}

/// A commit's events as the rows that log them, each with its number: two or more
/// numbered one after another are one row, a JSON array of them numbered by the last
/// (read back by [`logged_texts`]), written straight into it rather than each into a
/// string of its own first; one event, or events not numbered one after another (never,
/// from the server), are a row each. A row and an index entry an event was most of
/// what the events' table and index grew by, a diamond run's 16 events in about 5
/// commits.
pub(super) fn logged_rows(events: &[LoggedEvent]) -> Result<Vec<(i64, String)>, WriteError> {
    let consecutive = events.windows(2).all(|w| w[1].0 == w[0].0 + 1);
    match events {
        [.., (last, _)] if events.len() > 1 && consecutive => {
            // Room for a status update with its metadata, say, without growing.
            let mut row = Vec::with_capacity(events.len() * 512);
            row.push(b'[');
            for (i, (_, event)) in events.iter().enumerate() {
                if i > 0 {
                    row.push(b',');
                }
                serde_json::to_writer(&mut row, &**event)
                    .map_err(|e| WriteError::Encode(std::sync::Arc::new(e)))?;
            }
            row.push(b']');
            let row = String::from_utf8(row).map_err(|e| {
                WriteError::Encode(std::sync::Arc::new(serde::ser::Error::custom(e)))
            })?;
            Ok(vec![(*last as i64, row)])
        }
        _ => events
            .iter()
            .map(|(seq, e)| Ok((*seq as i64, encode(&**e)?)))
            .collect(),
    }
}

/// The events of one logged row (see [`logged_rows`]) numbered after `after`, added to
/// `into`.
fn logged_events(
    seq: i64,
    text: &str,
    after: u64,
    into: &mut Vec<LoggedEvent>,
) -> Result<(), StoreError> {
    let events = logged_texts(seq, text).map_err(|e| StoreError::unreadable("event", e))?;
    for (n, event) in events {
        if n > after as i64 {
            into.push(event_of(n, event)?);
        }
    }
    Ok(())
}

/// One logged row's events' JSON with their numbers: the row is one event numbered
/// `seq`, or an array of events numbered one after another up to `seq`.
pub(super) fn logged_texts(seq: i64, text: &str) -> Result<Vec<(i64, &str)>, serde_json::Error> {
    if !text.starts_with('[') {
        return Ok(vec![(seq, text)]);
    }
    let events: Vec<&serde_json::value::RawValue> = serde_json::from_str(text)?;
    let first = seq - events.len() as i64 + 1;
    Ok((first..).zip(events.into_iter().map(|e| e.get())).collect())
}

/// The task whose first message has `message_id`, if any.
fn task_of_message(conn: &Connection, message_id: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT id FROM tasks WHERE first_message_id = ?1 LIMIT 1")?
        .query_row([message_id], |row| row.get(0))
        .optional()
}

/// A failed read: the database's error, kept.
fn read_error(e: rusqlite::Error) -> StoreError {
    StoreError::backend(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ListTasks by principal or by context reads its own index, for the page and the
    /// count; without a filter, the status-time index (SQLite's plan, asked with
    /// `EXPLAIN QUERY PLAN` over the statements the store runs).
    #[tokio::test]
    async fn a_filtered_list_reads_its_own_index() {
        let dir = std::env::temp_dir().join(format!("a2a-list-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("t.db");
        SqliteStore::open(&path, crate::DEFAULT_BUSY_TIMEOUT, Default::default())
            .await
            .expect("a fresh store opens")
            .closed()
            .await;
        let conn = Connection::open(&path).expect("a connection");
        let plan = |sql: String| -> String {
            let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let nulls = vec![rusqlite::types::Null; statement.parameter_count()];
            let details = statement
                .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            details.join("; ")
        };
        let by = |f: &dyn Fn(&mut TaskQuery)| {
            let mut q = TaskQuery {
                limit: 10,
                ..Default::default()
            };
            f(&mut q);
            q
        };
        let mine = by(&|q| q.initiator = Some("token:alice".into()));
        let context = by(&|q| q.context_id = Some(a2a::types::ContextId::new("c1")));
        let next = by(&|q| {
            q.initiator = Some("token:alice".into());
            q.after = Some(TaskCursor {
                status_ms: 5,
                id: TaskId::new("t"),
            });
        });
        for (query, index) in [
            (&mine, "tasks_by_initiator_time"),
            (&next, "tasks_by_initiator_time"),
            (&context, "tasks_by_context_time"),
        ] {
            for listing in [Listing::Page, Listing::Count] {
                let plan = plan(list_sql(query, listing));
                assert!(plan.contains(index), "{listing:?} of {query:?}: {plan}");
            }
        }
        let all = plan(list_sql(&by(&|_| {}), Listing::Page));
        assert!(all.contains("tasks_by_status_time"), "{all}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A row that no longer decodes is reported as unreadable, with serde's error as the
    /// cause, not as a database failure or an empty answer.
    #[tokio::test]
    async fn an_unreadable_task_is_typed_as_such() {
        let dir = std::env::temp_dir().join(format!("a2a-unreadable-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("t.db");
        let store = SqliteStore::open(&path, crate::DEFAULT_BUSY_TIMEOUT, Default::default())
            .await
            .expect("a fresh store opens");
        let task = StoredTask::new(Task::new("t", "c", TaskStatus::new(TaskState::Completed)));
        store.commit(&task, &[]).await.expect("stored");
        let conn = Connection::open(&path).expect("a second connection");
        conn.execute(
            "UPDATE tasks SET snapshot = '{\"id\": \"t\", \"status\": \"done\"}', terminal = 1",
            [],
        )
        .expect("the row is damaged");
        let e = store.get(&TaskId::new("t")).await.unwrap_err();
        assert!(
            matches!(&e, StoreError::Unreadable { what: "task", cause } if cause.is::<serde_json::Error>()),
            "{e:?}"
        );
        // An object that is no task at all reads as one with nothing in it: refused too.
        conn.execute("UPDATE tasks SET snapshot = '{\"not\": \"a task\"}'", [])
            .expect("the row is damaged");
        let e = store.get(&TaskId::new("t")).await.unwrap_err();
        assert!(
            matches!(&e, StoreError::Unreadable { what: "task", .. }),
            "{e:?}"
        );
        // A task whose first commit left its snapshot to the log, and whose log has lost
        // its first event: unreadable, said so, not a blank task.
        let first = StoredTask::new(Task::new("u", "c", TaskStatus::new(TaskState::Submitted)));
        let event = std::sync::Arc::new(StreamEvent::Task(first.task.clone()));
        store.commit(&first, &[(1, event)]).await.expect("stored");
        let id = TaskId::new("u");
        assert_eq!(
            store.get(&id).await.unwrap().unwrap().0.context_id,
            first.context_id
        );
        conn.execute("DELETE FROM task_events WHERE task_id = 'u'", [])
            .expect("the log is damaged");
        let e = store.get(&id).await.unwrap_err();
        assert!(
            matches!(&e, StoreError::Unreadable { what: "task", .. }),
            "{e:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A commit's events are one row written in one pass, and read back as the same
    /// events with the same numbers; one event, or events with a gap between their
    /// numbers, are a row each.
    #[test]
    fn a_commits_events_are_one_row_read_back_alike() {
        use std::sync::Arc;
        let task = |n: usize| {
            let mut t = Task::new(format!("t{n}"), "c", TaskStatus::new(TaskState::Working));
            t.metadata = Some(
                serde_json::Map::from_iter([(
                    "text \"quoted\" é".to_owned(),
                    serde_json::Value::from(n),
                )])
                .into(),
            );
            Arc::new(StreamEvent::Task(t))
        };
        let events: Vec<LoggedEvent> = (4..=7).map(|n| (n as u64, task(n))).collect();
        let rows = logged_rows(&events).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].0, 7);
        let mut read = Vec::new();
        logged_events(rows[0].0, &rows[0].1, 0, &mut read).unwrap();
        let json = |es: &[LoggedEvent]| -> Vec<(u64, String)> {
            es.iter()
                .map(|(n, e)| (*n, serde_json::to_string(&**e).unwrap()))
                .collect()
        };
        assert_eq!(json(&read), json(&events));
        // Those after the 5th only.
        let mut later = Vec::new();
        logged_events(rows[0].0, &rows[0].1, 5, &mut later).unwrap();
        assert_eq!(json(&later), json(&events[2..]));
        // One event; and a gap.
        let one = logged_rows(&events[..1]).unwrap();
        assert_eq!(one, vec![(4, encode(&*events[0].1).unwrap())]);
        let gapped = [events[0].clone(), events[2].clone()];
        let rows = logged_rows(&gapped).unwrap();
        assert_eq!(rows.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [4, 6]);
        assert!(rows.iter().all(|(_, text)| text.starts_with('{')));
        assert!(logged_rows(&[]).unwrap().is_empty());
    }
}

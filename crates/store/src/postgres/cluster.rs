//! The replicas sharing the database: each one's lease (`replicas.lease_until`, on the
//! database's clock), who runs each unfinished task (`tasks.owner`) with its fencing
//! number (`tasks.fence`, raised at every takeover), and the requests queued for the
//! replica running a task (`task_requests`): the protocol's [`Cluster`].

use std::time::Duration;

use futures::future::BoxFuture;
use sqlx::Row;

use super::notices::REQUESTS;
use super::{NOW_MS, PostgresStore};
use a2a::store::{Cluster, ClusterRequest, NoticeBoard, Owner, StoreError, StoredTask};
use a2a::types::TaskId;

/// Which queued requests this replica reads (its `replicas.requests_understood`): 0, a
/// replica from before the column, reads cancels and messages, and a request of
/// another kind fails its whole take (the requests taken with it lost); 1 reads
/// `armPush` too, and drops a kind it does not know.
pub(super) const UNDERSTOOD: i16 = 1;

/// What a replica must understand to be sent `request` (see [`UNDERSTOOD`]).
fn needs(request: &ClusterRequest) -> i16 {
    match request {
        ClusterRequest::Cancel(_) | ClusterRequest::Message(_) => 0,
        ClusterRequest::ArmPush => 1,
    }
}

impl Cluster for PostgresStore {
    fn lease(&self) -> Duration {
        self.lease
    }

    fn owner<'a>(&'a self, id: &'a TaskId) -> BoxFuture<'a, Result<Owner, StoreError>> {
        Box::pin(async move {
            let row: Option<(Option<String>, i64, Option<bool>)> = sqlx::query_as(&format!(
                "SELECT t.owner, t.fence, r.lease_until >= {NOW_MS}
                 FROM tasks t LEFT JOIN replicas r ON r.id = t.owner WHERE t.id = $1"
            ))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            Ok(match row {
                Some((Some(owner), fence, _))
                    if owner == *self.replica && self.fence(id.as_str()) == Some(fence) =>
                {
                    Owner::Here
                }
                Some((Some(owner), _, Some(true))) if owner != *self.replica => Owner::Elsewhere,
                _ => Owner::Nobody,
            })
        })
    }

    fn renew(&self) -> BoxFuture<'_, Result<Vec<TaskId>, StoreError>> {
        Box::pin(async move {
            let ms = self.lease.as_millis() as i64;
            // Whether the lease had run out before this renewal: only then can another
            // replica have taken a task over.
            let lapsed: Option<bool> = sqlx::query_scalar(&format!(
                "UPDATE replicas r SET lease_until = {NOW_MS} + $2
                 FROM (SELECT lease_until AS before FROM replicas WHERE id = $1) old
                 WHERE r.id = $1 RETURNING old.before < {NOW_MS}"
            ))
            .bind(&*self.replica)
            .bind(ms)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            if lapsed.is_none() {
                // Our row is gone (someone cleaned the table): register again.
                sqlx::query(&format!(
                    "INSERT INTO replicas (id, started_at, lease_until, requests_understood)
                     VALUES ($1, {NOW_MS}, {NOW_MS} + $2, $3) ON CONFLICT (id) DO NOTHING"
                ))
                .bind(&*self.replica)
                .bind(ms)
                .bind(UNDERSTOOD)
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            }
            if lapsed == Some(false) {
                return Ok(Vec::new());
            }
            let held: Vec<(String, i64)> =
                sqlx::query_as("SELECT id, fence FROM tasks WHERE owner = $1 AND NOT terminal")
                    .bind(&*self.replica)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(StoreError::backend)?;
            let held: std::collections::HashMap<String, i64> = held.into_iter().collect();
            let mut fences = self.fences.lock().unwrap_or_else(|p| p.into_inner());
            let lost: Vec<String> = fences
                .iter()
                .filter(|(id, fence)| held.get(*id) != Some(*fence))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &lost {
                fences.remove(id);
            }
            Ok(lost.into_iter().map(TaskId::new).collect())
        })
    }

    fn claim(&self, max: usize) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        Box::pin(async move {
            // Unfinished tasks of no replica with a lease: one whose lease ran out, one
            // that stopped (its row gone) or none (a store migrated from one replica),
            // each taken by one replica only. In no order: ordered by id, the planner
            // walked the whole table in key order for the few unfinished tasks (the
            // finished ones kept for days among them), every second on every replica;
            // unordered, it reads the index of the unfinished tasks (`tasks_by_owner`).
            let rows = sqlx::query(&format!(
                "UPDATE tasks SET owner = $1, fence = fence + 1
                 WHERE id IN (
                     SELECT t.id FROM tasks t
                     WHERE NOT t.terminal AND NOT EXISTS
                         (SELECT 1 FROM replicas r
                          WHERE r.id = t.owner AND r.lease_until >= {NOW_MS})
                     LIMIT $2 FOR UPDATE SKIP LOCKED)
                 RETURNING snapshot, seq, terminal, initiator, tenant, fence, id"
            ))
            .bind(&*self.replica)
            .bind(max as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            let mut claimed = Vec::with_capacity(rows.len());
            for row in rows {
                let fence: i64 = row.get(5);
                let id: String = row.get(6);
                let (task, seq) = match self.caught_up(row).await {
                    Ok(caught_up) => caught_up,
                    Err(e @ StoreError::Unreadable { .. }) => {
                        // Held, not run: reported at each claim, never a reason to
                        // leave the other tasks claimed with it unrun.
                        crate::rows::report_unreadable(&id, &e, &self.observe);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                self.set_fence(task.id.as_str(), Some(fence));
                claimed.push((task, seq));
            }
            Ok(claimed)
        })
    }

    fn release(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            // Gone from the table: a stopped replica leaves no row behind, and its tasks
            // are anyone's at once.
            sqlx::query("DELETE FROM replicas WHERE id = $1")
                .bind(&*self.replica)
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            sqlx::query("DELETE FROM task_watches WHERE replica = $1")
                .bind(&*self.replica)
                .execute(&self.pool)
                .await
                .map_err(StoreError::backend)?;
            self.fences
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
            Ok(())
        })
    }

    fn request<'a>(
        &'a self,
        id: &'a TaskId,
        request: &'a ClusterRequest,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let body = serde_json::to_string(request).map_err(StoreError::backend)?;
            // Announced to the task's owner (to every replica when it has none: the
            // one that claims it takes it). A kind some replicas do not read is queued
            // only for an owner that reads it; a task nobody runs needs none of those
            // (a replica that claims a task reads its push configs).
            let queued = sqlx::query(&format!(
                "WITH queued AS (
                     INSERT INTO task_requests (task_id, request)
                     SELECT $1, $2
                     WHERE $3 = 0 OR EXISTS (
                         SELECT 1 FROM tasks t JOIN replicas r ON r.id = t.owner
                         WHERE t.id = $1 AND r.requests_understood >= $3)
                     RETURNING task_id
                 )
                 SELECT pg_notify('{REQUESTS}', coalesce(t.owner, ''))
                 FROM queued LEFT JOIN tasks t ON t.id = queued.task_id"
            ))
            .bind(id.as_str())
            .bind(body)
            .bind(needs(request))
            .execute(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            if queued.rows_affected() == 0 {
                tracing::info!(task_id = %id, "no replica that runs this task reads such a request (it is of an older version, or none runs it): not queued; whichever claims the task next reads its push configs");
            }
            Ok(())
        })
    }

    fn requests(&self) -> BoxFuture<'_, Result<Vec<(TaskId, ClusterRequest)>, StoreError>> {
        Box::pin(async move {
            let mut rows: Vec<(i64, String, String)> = sqlx::query_as(
                "DELETE FROM task_requests WHERE id IN (
                     SELECT q.id FROM task_requests q JOIN tasks t ON t.id = q.task_id
                     WHERE t.owner = $1 FOR UPDATE OF q SKIP LOCKED)
                 RETURNING id, task_id, request",
            )
            .bind(&*self.replica)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
            rows.sort_by_key(|(n, ..)| *n);
            // Taken off the queue already: one this server cannot read (a kind a newer
            // server queued during a rolling upgrade, say) is dropped with a warning,
            // not made the end of the others taken with it.
            Ok(rows
                .into_iter()
                .filter_map(|(_, id, body)| match serde_json::from_str(&body) {
                    Ok(request) => Some((TaskId::new(id), request)),
                    Err(e) => {
                        tracing::warn!(task_id = %id, error = %e, "a request queued for this server's task cannot be read (a newer server's?); dropped");
                        None
                    }
                })
                .collect())
        })
    }

    fn notices(&self) -> Option<&NoticeBoard> {
        Some(&self.notices)
    }

    fn watch<'a>(&'a self, id: &'a TaskId) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.add_watch(id))
    }

    fn unwatch<'a>(&'a self, id: &'a TaskId) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.remove_watch(id))
    }
}

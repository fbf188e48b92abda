//! Pushed, not polled: `LISTEN/NOTIFY` between the replicas.
//!
//! Each replica keeps one connection that listens on three channels and posts what it
//! hears on the store's [`NoticeBoard`]:
//! - [`EVENTS`]: a task's id, announced in the same transaction that logs events for it
//!   ([`super::bulk`]), but only for tasks some replica follows for a client — the rows
//!   of `task_watches`, which [`Cluster::watch`] adds and `unwatch` removes. A NOTIFY
//!   serializes the commits that make one, so nothing else is announced.
//! - [`REQUESTS`]: the id of the replica a request was queued for (its task's owner).
//! - [`FOLLOWS`]: a task's id, announced as a replica begins following it for a client
//!   (with its row in `task_watches`): from then on the task's owner logs every move of
//!   it. A replica of an older version neither listens on it nor announces: during a
//!   rolling upgrade a stream through an older replica may miss a newer owner's moves
//!   that say nothing (no message, no new state).
//!
//! When the connection is lost the board says it is not listening (the server then
//! polls), and the connection is made again with backoff; once it listens again the
//! server reads once what it may have missed.
//!
//! [`Cluster::watch`]: a2a::store::Cluster::watch

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::postgres::{PgListener, PgPool};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use a2a::store::{Notice, NoticeBoard, StoreError};
use a2a::v0_3::TaskId;

use super::PostgresStore;

/// The channel on which a watched task's events are announced (its id).
pub(super) const EVENTS: &str = "a2a_task_events";

/// The channel on which a queued request is announced (its replica's id, or nothing
/// when its task has no owner).
pub(super) const REQUESTS: &str = "a2a_requests";

/// The channel on which a task's being followed is announced (its id).
pub(super) const FOLLOWS: &str = "a2a_task_follows";

/// Listens until `stop`, posting on `board`; connects again with backoff when the
/// connection is lost.
pub(super) async fn listen(
    pool: PgPool,
    replica: Arc<str>,
    board: NoticeBoard,
    stop: CancellationToken,
    observe: crate::Observe,
) {
    let mut waits = backoff::STORE.waits();
    loop {
        match subscribe(&pool).await {
            Ok(mut listener) => {
                waits = backoff::STORE.waits();
                board.set_listening(true);
                observe.listening(true);
                let lost = loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        heard = listener.try_recv() => match heard {
                            Ok(Some(n)) => {
                                let notice = match n.channel() {
                                    EVENTS => Some(Notice::Logged(TaskId::new(n.payload()))),
                                    FOLLOWS => Some(Notice::Followed(TaskId::new(n.payload()))),
                                    REQUESTS if n.payload().is_empty() || n.payload() == &*replica => {
                                        Some(Notice::Requested)
                                    }
                                    _ => None,
                                };
                                if let Some(notice) = notice {
                                    board.post(notice);
                                }
                            }
                            Ok(None) => break None,
                            Err(e) => break Some(e),
                        },
                    }
                };
                board.set_listening(false);
                observe.listening(false);
                match lost {
                    Some(e) => {
                        warn!(error = %e, "the store's notices stopped; polling until they are back")
                    }
                    None => warn!(
                        "the store's notices stopped (connection lost); polling until they are back"
                    ),
                }
            }
            Err(e) => {
                warn!(error = %e, "listening for the store's notices failed; polling meanwhile")
            }
        }
        let wait = waits.next().unwrap_or(backoff::STORE.max);
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// A connection listening on the three channels.
async fn subscribe(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // A lost connection ends the listening here, which reconnects with backoff.
    listener.eager_reconnect(false);
    listener.listen_all([EVENTS, REQUESTS, FOLLOWS]).await?;
    info!("listening for the store's notices");
    Ok(listener)
}

/// How many streams on this replica follow each watched task.
pub(super) type Watching = tokio::sync::Mutex<HashMap<String, usize>>;

impl PostgresStore {
    /// Counts one more follower of task `id`; the first adds its row to
    /// `task_watches` and announces it on [`FOLLOWS`].
    pub(super) async fn add_watch(&self, id: &TaskId) -> Result<(), StoreError> {
        // Held across the write, so that a first watch and a last unwatch of one task
        // never cross.
        let mut watching = self.watching.lock().await;
        let n = watching.get(id.as_str()).copied().unwrap_or(0);
        if n == 0 {
            sqlx::query(&format!(
                "WITH watch AS (
                     INSERT INTO task_watches (task_id, replica) VALUES ($1, $2)
                     ON CONFLICT DO NOTHING
                 )
                 SELECT pg_notify('{FOLLOWS}', $1)"
            ))
            .bind(id.as_str())
            .bind(&*self.replica)
            .execute(&self.pool)
            .await
            .map_err(StoreError::backend)?;
        }
        watching.insert(id.to_string(), n + 1);
        Ok(())
    }

    /// Counts one follower of task `id` fewer; the last removes its row.
    pub(super) async fn remove_watch(&self, id: &TaskId) -> Result<(), StoreError> {
        let mut watching = self.watching.lock().await;
        match watching.get(id.as_str()).copied() {
            Some(n) if n > 1 => {
                watching.insert(id.to_string(), n - 1);
            }
            Some(_) => {
                watching.remove(id.as_str());
                sqlx::query("DELETE FROM task_watches WHERE task_id = $1 AND replica = $2")
                    .bind(id.as_str())
                    .bind(&*self.replica)
                    .execute(&self.pool)
                    .await
                    .map_err(StoreError::backend)?;
            }
            None => {}
        }
        Ok(())
    }
}

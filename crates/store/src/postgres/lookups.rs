//! Which task a `messageId` made, asked in batches. Every `message/send` asks once (a
//! message sent again is answered with the task it made), and one query a message cost
//! a round trip, and two more testing the pooled connection it took and gave back, for
//! a lookup that almost always finds nothing. Here one task, with a connection of its
//! own, answers whatever lookups are queued with one query.

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgPool, Postgres};
use tokio::sync::{mpsc, oneshot};

/// Lookups answered by one query at most.
const MAX_BATCH: usize = 256;

/// Lookups queued at most before a caller waits to queue.
const QUEUE: usize = 4096;

/// One lookup: a message's id, and where the task it made (if any) goes.
struct Lookup {
    message_id: String,
    answer: oneshot::Sender<Result<Option<String>, Arc<sqlx::Error>>>,
}

/// The replica's lookups. Cheap to clone; the task ends when the last clone is dropped.
#[derive(Clone)]
pub(super) struct Lookups {
    queue: mpsc::Sender<Lookup>,
}

impl Lookups {
    pub(super) fn start(pool: &PgPool) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        // Ends when its queue closes: when the last handle is dropped.
        tokio::spawn(answer_loop(pool.clone(), rx));
        Self { queue }
    }

    /// The id of the task whose first message was `message_id`, if one was stored; a
    /// failure is the batch's, shared.
    pub(super) async fn task_of(
        &self,
        message_id: &str,
    ) -> Result<Option<String>, Arc<sqlx::Error>> {
        let (answer, rx) = oneshot::channel();
        let lookup = Lookup {
            message_id: message_id.to_owned(),
            answer,
        };
        self.queue
            .send(lookup)
            .await
            .map_err(|_| Arc::new(sqlx::Error::PoolClosed))?;
        rx.await.map_err(|_| Arc::new(sqlx::Error::PoolClosed))?
    }
}

/// Answers queued lookups in batches until every handle is gone.
async fn answer_loop(pool: PgPool, mut rx: mpsc::Receiver<Lookup>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // Kept from batch to batch, given back when it fails (as the writer's lanes are).
    let mut conn: Option<PoolConnection<Postgres>> = None;
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let lookups = std::mem::take(&mut batch);
        let ids: Vec<&str> = lookups.iter().map(|l| l.message_id.as_str()).collect();
        let found = match &mut conn {
            Some(c) => find(c, &ids).await,
            None => match pool.acquire().await {
                Ok(c) => find(conn.insert(c), &ids).await,
                Err(e) => Err(e),
            },
        };
        match found {
            Ok(found) => {
                for l in lookups {
                    let _ = l.answer.send(Ok(found.get(&l.message_id).cloned()));
                }
            }
            Err(e) => {
                conn = None;
                let e = Arc::new(e);
                for l in lookups {
                    let _ = l.answer.send(Err(e.clone()));
                }
            }
        }
    }
}

/// The task of each message id in `ids` that made one.
async fn find(
    conn: &mut PoolConnection<Postgres>,
    ids: &[&str],
) -> Result<HashMap<String, String>, sqlx::Error> {
    // One index lookup a message, planned once a connection (see the schema's
    // migration 8): planned for each batch's length, it was planned every time.
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT message_id, task_id FROM a2a_tasks_of_messages($1)")
            .bind(ids)
            .fetch_all(&mut **conn)
            .await?;
    Ok(rows.into_iter().collect())
}

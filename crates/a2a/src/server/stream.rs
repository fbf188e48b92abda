//! A task's events as a stream, whatever carries them: the logged events a reconnecting
//! client missed (after `Last-Event-ID`), or the task's snapshot, then its live events
//! until a final one. The bindings frame each as SSE in their version's shape.

use crate::RpcError;
use crate::server::{Inner, LoggedEvent, Subscription, Update, store_error};
use crate::types::{StreamEvent, Task, TaskId, TaskState};
use futures::Stream;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tracing::warn;

/// Whether a stream ends after this event: one that leaves its task terminal or
/// waiting for the client.
pub(super) fn ends_stream(event: &StreamEvent) -> bool {
    event.state().is_some_and(ends_on)
}

pub(super) fn ends_on(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// Whether `event` ends a v1.0 subscription: a terminal state only (§3.1.6).
fn ends_subscription(event: &StreamEvent) -> bool {
    event.state().is_some_and(TaskState::is_terminal)
}

/// What a stream sends, in order: logged events to replay (when resuming after
/// `Last-Event-ID`), else the snapshot (if the task exists); then live events until a
/// final one. Events are numbered; one already sent is never sent again, and a
/// subscriber that falls behind the live channel is caught up from the log.
pub(super) fn live_events(
    inner: Arc<Inner>,
    task_id: TaskId,
    sub: Subscription,
    after: Option<u64>,
) -> impl Stream<Item = Result<LoggedEvent, RpcError>> + Send {
    struct St {
        inner: Arc<Inner>,
        task_id: TaskId,
        /// The snapshot to send first, with its number.
        first: Option<(u64, Task)>,
        /// Fetch the log after this number before anything else.
        fetch: Option<u64>,
        /// Fetched events to send; `live` when they count as live events (a catch-up
        /// after lagging) rather than a replay.
        queue: std::collections::VecDeque<LoggedEvent>,
        live: bool,
        /// End once the replay is sent (the task is terminal).
        end_after_replay: bool,
        /// The number of the last event sent.
        last: u64,
        events: tokio::sync::broadcast::Receiver<Update>,
        task_exists: bool,
        done: bool,
        /// Counts the stream as an open subscriber while it lives.
        _open: super::observe::Subscriber,
        /// Keeps the task's actor for the stream's life (see `Subscription::keep`).
        _keep: Option<super::ActorHandle>,
        /// Counts the stream against its caller's bound while it lives.
        _slot: Option<super::streams::StreamSlot>,
        /// Ends at a terminal state only (see `Subscription::until_terminal`).
        until_terminal: bool,
        /// Ends before an event after which the caller may no longer read the task
        /// (see `Subscription::lapses`).
        lapses: Option<super::task_manager::Lapse>,
        /// The server's stop, waited for beside every event: made once, not per event
        /// (each would add a waiter to the token's list and take it out again).
        stopping: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    }
    let terminal = sub
        .snapshot
        .as_ref()
        .is_some_and(|t| t.state().is_terminal());
    let stopping = Box::pin(inner.shutdown.clone().cancelled_owned());
    let open = inner.config.observer.subscriber();
    let st = St {
        stopping,
        inner,
        task_id,
        _open: open,
        _keep: sub.keep,
        _slot: sub.slot,
        until_terminal: sub.until_terminal,
        lapses: sub.lapses,
        task_exists: sub.snapshot.is_some(),
        first: match after {
            Some(_) => None,
            None => sub.snapshot.map(|t| (sub.seq, t)),
        },
        fetch: after,
        queue: Default::default(),
        live: false,
        end_after_replay: after.is_some() && terminal,
        last: after.unwrap_or(sub.seq),
        events: sub.events,
        done: false,
    };
    impl St {
        fn ends(&self, event: &StreamEvent) -> bool {
            if self.until_terminal {
                ends_subscription(event)
            } else {
                ends_stream(event)
            }
        }

        /// Whether `event` ends the caller's leave to read the task: nothing from it
        /// on is sent.
        fn lapsed(&mut self, event: &StreamEvent) -> bool {
            self.lapses.as_mut().is_some_and(|lapses| lapses(event))
        }
    }
    futures::stream::unfold(st, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some(after) = st.fetch.take() {
                match st
                    .inner
                    .manager
                    .store()
                    .events_after(&st.task_id, after)
                    .await
                {
                    Ok(events) => st.queue.extend(events),
                    Err(e) => {
                        st.done = true;
                        return Some((Err(store_error(e)), st));
                    }
                }
            }
            if let Some((seq, event)) = st.queue.pop_front() {
                if seq <= st.last && seq != 0 && st.live {
                    continue;
                }
                if st.lapsed(&event) {
                    return None;
                }
                st.last = st.last.max(seq);
                if st.live {
                    st.done = st.ends(&event);
                } else if st.queue.is_empty() && st.end_after_replay {
                    st.done = true;
                }
                return Some((Ok((seq, event)), st));
            }
            if st.end_after_replay {
                return None;
            }
            if let Some((seq, task)) = st.first.take() {
                st.done = task.state().is_terminal();
                return Some((Ok((seq, Arc::new(StreamEvent::Task(task)))), st));
            }
            let update = tokio::select! {
                u = st.events.recv() => u,
                () = st.stopping.as_mut() => return None,
            };
            let item = match update {
                Ok(Update::Event(seq, _)) if seq != 0 && seq <= st.last => continue,
                Ok(Update::Event(_, event)) if st.lapsed(&event) => return None,
                Ok(Update::Event(seq, event)) => {
                    // A message before any task is the agent's whole answer.
                    let reply = !st.task_exists && event.kind() == "message";
                    st.task_exists |= !reply;
                    st.done = reply || st.ends(&event);
                    st.last = st.last.max(seq);
                    Ok((seq, event))
                }
                Ok(Update::Error(e)) => {
                    st.done = true;
                    Err(*e)
                }
                Err(RecvError::Lagged(n)) => {
                    // Too slow to follow: catch up from the log.
                    warn!(
                        skipped = n,
                        "stream subscriber lagged; catching up from the log"
                    );
                    st.fetch = Some(st.last);
                    st.live = true;
                    st.task_exists = true;
                    continue;
                }
                Err(RecvError::Closed) if !st.task_exists => {
                    st.done = true;
                    Err(RpcError::invalid_agent_response(
                        "the agent finished without creating a task or replying with a message",
                    ))
                }
                Err(RecvError::Closed) => return None,
            };
            return Some((item, st));
        }
    })
}

//! Several servers sharing one store, behind any load balancer: each unfinished task is
//! run by one of them, and any of them answers any request for any task.
//!
//! A store shared this way implements [`Cluster`]: who runs a task (a lease the server
//! renews while it lives, a fencing number the store checks on every write for the
//! task, so that a server that lost a task cannot write for it), taking over the tasks
//! of a server that stopped renewing, and a queue of requests for the server that runs
//! a task. Here is what the server does with it:
//!
//! - every third of the lease it renews its lease and hands over the tasks it lost
//!   (their executors hear `shutdown`, as at a stop); every second at most it claims
//!   the tasks nobody runs, resuming them as a restart resumes a store's unfinished
//!   tasks;
//! - a request for a task another server runs is answered from the store: a stream or
//!   a subscription follows the task's event log (so it goes on across a takeover), and
//!   a cancel, a message or a new push config is queued for the server running the task;
//! - a store that announces what happens ([`Cluster::notices`]: an event logged for a
//!   task this server follows, a request queued for it) wakes those at once; without
//!   it, or while it does not hear (its connection lost), logs are read every
//!   [`TAIL_POLL`] and queues taken every [`REQUEST_POLL`];
//! - a task is followed on another server once that server announces it follows it
//!   (a notice, [`Cluster::watch`]) — only then does the server running it log the
//!   moves that say nothing (see [`EventSink::followed`]) — or when that cannot be
//!   known: the store does not hear, or notices were missed;
//! - a graceful stop releases the lease at once, for the others to claim the tasks.

use std::time::Duration;

use tokio::sync::broadcast;
use tracing::info;

use crate::RpcError;
use crate::server::handler::Listen;
use crate::server::{
    Caller, EventSink, Inner, ResumeContext, Subscription, Update, store_error, task_manager,
};
use crate::store::StoredTask;
use crate::store::{
    Cluster, ClusterRequest, Follows, Forwarded, NoticeBoard, Notices, Owner, StoreError, TaskStore,
};
use crate::types::{TaskId, TaskState};
use std::sync::Arc;
use tracing::{info_span, warn};

/// How often a server takes the requests queued for the tasks it runs.
const REQUEST_POLL: Duration = Duration::from_millis(200);

/// How often a stream on a task another server runs reads the task's log, when the
/// store announces nothing.
const TAIL_POLL: Duration = Duration::from_millis(100);

/// When such a stream reads the log once more besides the announcements: an event
/// whose commit began before the stream asked to hear of the task is not announced to
/// it, and commits take milliseconds.
const TAIL_SETTLE: Duration = Duration::from_secs(1);

/// How often a server looks for tasks nobody runs, at most (a third of the lease when
/// that is shorter).
const CLAIM_EVERY: Duration = Duration::from_secs(1);

/// Most tasks claimed at once.
const CLAIM_BATCH: usize = 64;

impl<T> Forwarded<T> {
    /// `params` sent by `caller` in `generation`.
    pub fn new(params: T, generation: crate::Version, caller: &Caller) -> Self {
        Forwarded {
            params,
            caller: caller.principal().map(|p| (**p).clone()),
            tenant: caller.tenant().map(str::to_owned),
            version: Some(generation.as_str().to_owned()),
        }
    }

    /// The generation it was sent in (1.0 when an older server did not say).
    fn generation(&self) -> crate::Version {
        (self.version.as_deref())
            .and_then(crate::Version::parse)
            .unwrap_or(crate::Version::V1_0)
    }

    /// The caller it came from, as the server that runs the task sees it.
    fn caller(&self) -> Caller {
        let caller = self
            .caller
            .clone()
            .map_or_else(Caller::anonymous, |p| Caller::known(Arc::new(p)));
        // Checked where it arrived: the tenant is taken as it was.
        caller.acting_in(self.tenant.as_deref())
    }
}

/// Where a request for an existing task is served.
pub(super) enum Placement {
    /// Here: this server runs the task (or the store is this server's alone).
    Local,
    /// From the store: another server runs it, or will once it claims it.
    Remote(Arc<dyn TaskStore>),
}

impl Inner {
    /// Where a request for unfinished task `id` is served.
    pub(super) async fn placement(&self, id: &TaskId) -> Result<Placement, RpcError> {
        let store = self.manager.store();
        let Some(cluster) = store.cluster() else {
            return Ok(Placement::Local);
        };
        if self.manager.is_live(id) {
            return Ok(Placement::Local);
        }
        Ok(match cluster.owner(id).await.map_err(store_error)? {
            Owner::Here => Placement::Local,
            Owner::Elsewhere | Owner::Nobody => Placement::Remote(store.clone()),
        })
    }

    /// Queues `request` for the server running task `id`.
    pub(super) async fn forward(
        &self,
        store: &Arc<dyn TaskStore>,
        id: &TaskId,
        request: ClusterRequest,
    ) -> Result<(), RpcError> {
        let cluster = store.cluster().ok_or_else(|| {
            RpcError::internal("a task served remotely needs a store shared by servers")
        })?;
        cluster.request(id, &request).await.map_err(store_error)
    }

    /// A subscription to a task another server runs: its snapshot, then the events
    /// its log gets after `seq` until one ends the task (or nobody listens any more, or
    /// this server stops) — read when the store announces them, every [`TAIL_POLL`]
    /// while it cannot.
    pub(super) fn tail(
        &self,
        store: Arc<dyn TaskStore>,
        task: StoredTask,
        seq: u64,
    ) -> Subscription {
        let (tx, events) = broadcast::channel(task_manager::BROADCAST_CAPACITY);
        let id = TaskId::new(&task.id);
        let shutdown = self.shutdown.clone();
        self.tracker.spawn(async move {
            let cluster = store.cluster();
            let mut notices = cluster.and_then(Cluster::notices).map(NoticeBoard::subscribe);
            // Watched before the first read: whatever is logged after it is announced.
            let watched = match (cluster, &notices) {
                (Some(cluster), Some(_)) => match cluster.watch(&id).await {
                    Ok(()) => true,
                    Err(e) => {
                        warn!(task_id = %id, error = %e, "asking to hear of a task's events failed; reading its log every {TAIL_POLL:?}");
                        false
                    }
                },
                _ => false,
            };
            follow(&*store, &id, seq, &tx, notices.as_mut().filter(|_| watched), &shutdown).await;
            // At a stop the lease's release drops every watch at once.
            if let Some(cluster) = cluster.filter(|_| watched && !shutdown.is_cancelled())
                && let Err(e) = cluster.unwatch(&id).await
            {
                warn!(task_id = %id, error = %e, "ending the notices of a task's events failed");
            }
        });
        Subscription {
            snapshot: Some(task.task),
            seq,
            events,
            keep: None,
            until_terminal: false,
            slot: None,
            lapses: None,
        }
    }

    /// Resumes a task this server now runs (at start, or claimed from a server that
    /// stopped): its executor's `resume`, in a task the server owns.
    pub(super) async fn resume_task(&self, task: StoredTask, seq: u64) -> Result<(), StoreError> {
        let id = TaskId::new(&task.id);
        match self.manager.store().push_configs(&id).await {
            Ok(configs) if configs.is_empty() => {}
            Ok(_) => self.manager.arm_push(&id),
            // Unknown: armed, so that a config is not missed (delivery reads them).
            Err(e) => {
                warn!(task_id = %id, error = %e, "reading a resumed task's push configs failed; delivering as if it had some");
                self.manager.arm_push(&id);
            }
        }
        let handle = self.manager.open_existing(task.clone(), seq);
        let sink = EventSink {
            handle: handle.clone(),
            task_id: id,
            context_id: crate::types::ContextId::new(&task.context_id),
        };
        let ctx = ResumeContext {
            task,
            cancel: handle.cancel.clone(),
            shutdown: handle.handover.clone(),
        };
        let agent = self.agent.clone();
        let span = info_span!(
            "resume",
            task_id = %ctx.task.id,
            "a2a.task.id" = %ctx.task.id,
            "gen_ai.conversation.id" = %ctx.task.context_id,
        );
        self.spawn_agent(handle, span, async move { agent.resume(ctx, sink).await });
        Ok(())
    }
}

/// Sends task `id`'s events logged after `seq` to `tx` until one ends the task, nobody
/// listens, or `shutdown`: read when `notices` says the log may have grown (and once
/// [`TAIL_SETTLE`] after the start), every [`TAIL_POLL`] without them or while the store
/// does not hear.
async fn follow(
    store: &dyn TaskStore,
    id: &TaskId,
    seq: u64,
    tx: &broadcast::Sender<Update>,
    mut notices: Option<&mut Notices>,
    shutdown: &tokio_util::sync::CancellationToken,
) {
    let mut last = seq;
    let mut tick = tokio::time::interval(TAIL_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let settle = tokio::time::sleep(TAIL_SETTLE);
    tokio::pin!(settle);
    let mut settled = false;
    loop {
        if tx.receiver_count() == 0 {
            return;
        }
        let read = store.events_after(id, last).await;
        let failed = read.is_err();
        match read {
            Ok(events) => {
                for (n, event) in events {
                    last = n;
                    let end = event.state().is_some_and(TaskState::is_terminal);
                    let _ = tx.send(Update::Event(n, event));
                    if end {
                        return;
                    }
                }
            }
            Err(e) => {
                warn!(task_id = %id, error = %e, "reading the log of a task another server runs failed; retrying");
            }
        }
        // A failed read is tried again on the clock: no notice may come for it.
        let pushed = !failed && notices.as_ref().is_some_and(|n| n.listening());
        tokio::select! {
            () = async { if let Some(n) = notices.as_deref_mut() { n.logged(id).await } }, if pushed => {}
            () = &mut settle, if pushed && !settled => settled = true,
            _ = tick.tick(), if !pushed => {}
            () = tx.closed() => return,
            () = shutdown.cancelled() => return,
        }
    }
}

/// What a server sharing its store does while it runs: renews its lease (every third
/// of it) and hands over what it lost, claims what nobody runs (every [`CLAIM_EVERY`]
/// at most, so that a stopped server's tasks move at once), and takes the requests
/// queued for its tasks (when the store announces them and after a claim; every
/// [`REQUEST_POLL`] while it cannot).
pub(super) async fn cluster_loop(inner: Arc<Inner>) {
    let Some(lease) = inner.manager.store().cluster().map(|c| c.lease()) else {
        return;
    };
    let every = |period: Duration| {
        let mut i = tokio::time::interval(period);
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        i
    };
    let mut beat = every(lease / 3);
    let mut claims = every((lease / 3).min(CLAIM_EVERY));
    let mut poll = every(REQUEST_POLL);
    let board = inner.manager.store().cluster().and_then(Cluster::notices);
    let mut notices = board.map(NoticeBoard::subscribe);
    // Apart: waiting for requests passes over the follows.
    let mut follows = board.map(NoticeBoard::subscribe);
    loop {
        let pushed = notices.as_ref().is_some_and(Notices::listening);
        tokio::select! {
            biased;
            () = inner.shutdown.cancelled() => return,
            _ = beat.tick() => renew(&inner).await,
            _ = claims.tick() => {
                // Requests queued for a task before it was claimed were announced to
                // its old owner.
                if claim(&inner).await > 0 {
                    take_requests(&inner).await;
                }
            }
            _ = poll.tick(), if !pushed => take_requests(&inner).await,
            () = async { if let Some(n) = notices.as_mut() { n.requested().await } }, if pushed => {
                take_requests(&inner).await;
            }
            heard = async {
                match follows.as_mut() {
                    Some(n) => n.followed().await,
                    None => std::future::pending().await,
                }
            } => {
                match heard {
                    Follows::Task(id) => inner.manager.follow(&id),
                    Follows::Unknown => inner.manager.follow_all(),
                }
            }
        }
    }
}

async fn renew(inner: &Arc<Inner>) {
    let Some(cluster) = inner.manager.store().cluster() else {
        return;
    };
    match cluster.renew().await {
        Ok(lost) => {
            for id in lost {
                warn!(task_id = %id, "another server took this task over; handing it over");
                inner.manager.hand_over(&id);
            }
        }
        Err(e) => warn!(error = %e, "renewing this server's lease failed; retrying"),
    }
}

/// Claims tasks nobody runs and resumes them; how many.
async fn claim(inner: &Arc<Inner>) -> usize {
    let Some(cluster) = inner.manager.store().cluster() else {
        return 0;
    };
    match cluster.claim(CLAIM_BATCH).await {
        Ok(claimed) => {
            let n = claimed.len();
            for (task, seq) in claimed {
                info!(task_id = %task.id, "taking over a task nobody runs");
                if let Err(e) = inner.resume_task(task, seq).await {
                    warn!(error = %e, "resuming a claimed task failed");
                }
            }
            n
        }
        Err(e) => {
            warn!(error = %e, "claiming tasks nobody runs failed; retrying");
            0
        }
    }
}

async fn take_requests(inner: &Arc<Inner>) {
    let Some(cluster) = inner.manager.store().cluster() else {
        return;
    };
    let requests = match cluster.requests().await {
        Ok(r) => r,
        Err(e) => {
            warn!(error = %e, "taking the requests queued for this server failed; retrying");
            return;
        }
    };
    for (id, request) in requests {
        let inner2 = inner.clone();
        // Each as if a client had sent it here; its answer went to the client of the
        // server that queued it, from the task's log.
        inner.tracker.spawn(async move {
            let outcome = match request {
                // Who sent it was checked where it arrived.
                ClusterRequest::Cancel(f) => {
                    let caller = f.caller();
                    inner2.cancel(f.params.clone(), &caller).await.map(drop)
                }
                ClusterRequest::Message(f) => {
                    let (caller, generation) = (f.caller(), f.generation());
                    inner2
                        .start(f.params, generation, &caller, Listen::Events)
                        .await
                        .map(drop)
                }
                // Checked where it was set (the caller may steer the task).
                ClusterRequest::ArmPush => {
                    inner2.manager.arm_push(&id);
                    Ok(())
                }
            };
            if let Err(e) = outcome {
                info!(task_id = %id, error = %e.message, "a request queued by another server was refused");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;
    use crate::principal::Principal;
    use crate::types::{CancelTaskRequest, Message, SendMessageRequest};

    #[test]
    fn a_request_queued_by_an_older_server_still_reads() {
        let old: ClusterRequest = serde_json::from_str(r#"{"kind":"cancel","id":"t-1"}"#).unwrap();
        assert!(
            matches!(old, ClusterRequest::Cancel(f) if f.params.id == "t-1" && f.caller.is_none())
        );
        let who = Caller::known(Arc::new(Principal::new(None, "token:ci", "CI")));
        let new = ClusterRequest::Cancel(Box::new(Forwarded::new(
            CancelTaskRequest {
                id: "t-2".into(),
                ..Default::default()
            },
            Version::V1_0,
            &who,
        )));
        let text = serde_json::to_string(&new).unwrap();
        let back: ClusterRequest = serde_json::from_str(&text).unwrap();
        assert!(matches!(back, ClusterRequest::Cancel(f) if f.caller().id() == Some("token:ci")));
        // A message an older server queued: v0.3's params, read as the model's.
        #[cfg(feature = "v0_3")]
        {
            let old: ClusterRequest = serde_json::from_str(
            r#"{"kind":"message","message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"yes"}],"taskId":"t-3"},"configuration":{"blocking":false}}"#,
        )
        .unwrap();
            let ClusterRequest::Message(f) = old else {
                panic!("a message");
            };
            assert_eq!(f.generation(), Version::V0_3);
            let message = f.params.message.as_ref().unwrap();
            assert_eq!(
                (message.text(), message.task_id.as_str()),
                ("yes".into(), "t-3")
            );
            assert!(f.params.configuration.as_ref().unwrap().return_immediately);
        }
        // And this server's own.
        let request = SendMessageRequest {
            message: Some(Message::user_text("no").with_task("t-4")),
            ..Default::default()
        };
        let text = serde_json::to_string(&ClusterRequest::Message(Box::new(Forwarded::new(
            request.clone(),
            Version::V1_0,
            &who,
        ))))
        .unwrap();
        let ClusterRequest::Message(back) = serde_json::from_str(&text).unwrap() else {
            panic!("a message: {text}");
        };
        assert_eq!(back.generation(), Version::V1_0);
        assert_eq!(back.params, request);
    }

    #[test]
    fn a_push_config_set_elsewhere_is_queued_as_a_kind_of_its_own() {
        let text = serde_json::to_string(&ClusterRequest::ArmPush).unwrap();
        assert_eq!(text, r#"{"kind":"armPush"}"#);
        let back: ClusterRequest = serde_json::from_str(&text).unwrap();
        assert!(matches!(back, ClusterRequest::ArmPush));
    }
}

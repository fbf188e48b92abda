//! What a store shared by servers announces as it happens, so that a server waits for
//! it instead of polling: a task's log got events (for streams that follow a task
//! another server runs), requests were queued for this server's tasks, a server began
//! following a task for a client (so that the server running it logs every move of it
//! from then on). The store posts on its [`NoticeBoard`] and says whether it is
//! listening; while it is not (its connection lost, say) nothing may be announced, and
//! the server polls as if there were no board (and counts every task followed).

use std::sync::Arc;

use tokio::sync::{broadcast, watch};

use crate::types::TaskId;

/// Notices kept for a slow reader before it is told it missed some.
const CAPACITY: usize = 1024;

/// What a store announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Task `id`'s log got events (announced for the tasks [`super::Cluster::watch`]ed).
    Logged(TaskId),
    /// Requests were queued for the tasks this server runs.
    Requested,
    /// A server began following task `id` for a client ([`super::Cluster::watch`]);
    /// announced to every server, heard by the one that runs the task.
    Followed(TaskId),
}

/// What [`Notices::followed`] heard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follows {
    /// A server began following this task.
    Task(TaskId),
    /// Unknown: notices were missed, or the store stopped or started listening (what
    /// happened meanwhile was not announced). Any task may be followed.
    Unknown,
}

/// Where a store posts its notices, and says whether it hears them. Cheap to clone.
#[derive(Debug, Clone)]
pub struct NoticeBoard {
    notices: broadcast::Sender<Notice>,
    listening: Arc<watch::Sender<bool>>,
}

impl Default for NoticeBoard {
    fn default() -> Self {
        Self::new()
    }
}

impl NoticeBoard {
    /// A board not listening yet.
    pub fn new() -> Self {
        NoticeBoard {
            notices: broadcast::channel(CAPACITY).0,
            listening: Arc::new(watch::channel(false).0),
        }
    }

    /// Announces `notice` to every subscriber.
    pub fn post(&self, notice: Notice) {
        let _ = self.notices.send(notice);
    }

    /// Says whether the store hears what happens now: subscribers poll while it does
    /// not, and read again when it starts (what happened meanwhile was not announced).
    pub fn set_listening(&self, on: bool) {
        self.listening
            .send_if_modified(|now| std::mem::replace(now, on) != on);
    }

    /// Whether the store hears what happens now.
    pub fn is_listening(&self) -> bool {
        *self.listening.borrow()
    }

    /// A reader of the notices posted from now on.
    pub fn subscribe(&self) -> Notices {
        Notices {
            notices: self.notices.subscribe(),
            listening: self.listening.subscribe(),
        }
    }
}

/// A reader of a [`NoticeBoard`].
#[derive(Debug)]
pub struct Notices {
    notices: broadcast::Receiver<Notice>,
    listening: watch::Receiver<bool>,
}

impl Notices {
    /// Whether the store hears what happens now (else: poll).
    pub fn listening(&self) -> bool {
        *self.listening.borrow()
    }

    /// Waits until task `id`'s log may have grown: a notice names it, notices were
    /// missed, or the store stopped or started listening.
    pub async fn logged(&mut self, id: &TaskId) {
        self.until(|n| matches!(n, Notice::Logged(t) if t == id))
            .await
    }

    /// Waits until requests may have been queued for this server: a notice says so,
    /// notices were missed, or the store stopped or started listening.
    pub async fn requested(&mut self) {
        self.until(|n| *n == Notice::Requested).await
    }

    /// Waits until a server begins following a task, or until that cannot be known:
    /// notices were missed, or the store stopped or started listening.
    pub async fn followed(&mut self) -> Follows {
        loop {
            match self.next().await {
                Some(Notice::Followed(id)) => return Follows::Task(id),
                Some(_) => {}
                None => return Follows::Unknown,
            }
        }
    }

    async fn until(&mut self, wanted: impl Fn(&Notice) -> bool) {
        while let Some(notice) = self.next().await {
            if wanted(&notice) {
                return;
            }
        }
    }

    /// The next notice; none when notices were missed, or the store stopped or started
    /// listening.
    async fn next(&mut self) -> Option<Notice> {
        tokio::select! {
            notice = self.notices.recv() => match notice {
                Ok(n) => Some(n),
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                // The board is gone with its store: nothing more will come.
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            },
            changed = self.listening.changed() => {
                if changed.is_err() {
                    std::future::pending::<()>().await;
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn within<F: std::future::Future>(f: F) -> Option<F::Output> {
        tokio::time::timeout(Duration::from_millis(200), f)
            .await
            .ok()
    }

    #[tokio::test]
    async fn a_reader_wakes_for_its_task_missed_notices_and_the_listeners_changes() {
        let board = NoticeBoard::new();
        let mut notices = board.subscribe();
        let (t1, t2) = (TaskId::new("t1"), TaskId::new("t2"));
        assert!(!notices.listening());
        board.set_listening(true);
        assert!(
            within(notices.logged(&t1)).await.is_some(),
            "started listening"
        );
        assert!(notices.listening());

        board.post(Notice::Logged(t2.clone()));
        board.post(Notice::Requested);
        assert!(within(notices.logged(&t1)).await.is_none(), "not its task");
        board.post(Notice::Logged(t1.clone()));
        assert!(within(notices.logged(&t1)).await.is_some());
        board.post(Notice::Requested);
        assert!(within(notices.requested()).await.is_some());

        board.set_listening(true);
        assert!(within(notices.requested()).await.is_none(), "no change");
        board.set_listening(false);
        assert!(
            within(notices.requested()).await.is_some(),
            "stopped listening"
        );

        for _ in 0..CAPACITY + 1 {
            board.post(Notice::Logged(t2.clone()));
        }
        assert!(within(notices.logged(&t1)).await.is_some(), "missed some");
    }

    #[tokio::test]
    async fn a_follow_is_heard_by_name_and_missed_ones_as_unknown() {
        let board = NoticeBoard::new();
        let mut notices = board.subscribe();
        let t1 = TaskId::new("t1");
        board.set_listening(true);
        assert_eq!(within(notices.followed()).await, Some(Follows::Unknown));

        board.post(Notice::Logged(t1.clone()));
        board.post(Notice::Requested);
        assert_eq!(within(notices.followed()).await, None, "not a follow");
        board.post(Notice::Followed(t1.clone()));
        assert_eq!(within(notices.followed()).await, Some(Follows::Task(t1)));

        for _ in 0..CAPACITY + 1 {
            board.post(Notice::Requested);
        }
        assert_eq!(
            within(notices.followed()).await,
            Some(Follows::Unknown),
            "missed some"
        );
        board.set_listening(false);
        assert_eq!(
            within(notices.followed()).await,
            Some(Follows::Unknown),
            "stopped listening"
        );
    }
}

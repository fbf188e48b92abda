//! What a store shared by several servers does for them (the server's side is
//! `server::cluster`): who runs each unfinished task — a lease the server renews, a
//! fencing number the store checks on every write for the task — taking over the tasks
//! of a server that stopped renewing, and a queue of requests for the server that runs
//! a task.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::notices::NoticeBoard;
use super::{StoreError, StoredTask};
use crate::principal::Principal;
use crate::types::{CancelTaskRequest, SendMessageRequest, TaskId};

/// Who runs a task now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// This server.
    Here,
    /// Another server, whose lease is current.
    Elsewhere,
    /// Nobody: the server that ran it stopped renewing its lease; the next claim takes
    /// it over.
    Nobody,
}

/// What a server asks of the server that runs a task. Stored as JSON (a queue in the
/// shared store): a request an older server queued, whose message is v0.3's, reads too.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ClusterRequest {
    /// `tasks/cancel` / CancelTask.
    Cancel(Box<Forwarded<CancelTaskRequest>>),
    /// A message continuing the task (an answer to its question).
    Message(Box<Forwarded<SendMessageRequest>>),
    /// The task got a push config through another server: its state changes are to be
    /// delivered from now on. A store queues it only for a server that reads it (not
    /// one of an older version, still running in a rolling upgrade), and not for a task
    /// nobody runs: a server that claims a task reads its push configs.
    ArmPush,
}

/// A request queued for the server that runs its task, with who sent it (checked where
/// it arrived; none from a server that asks for no credentials, or from an older one).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Forwarded<T> {
    /// The request's params.
    #[serde(flatten)]
    pub params: T,
    /// Who sent it.
    #[serde(default, rename = "a2aCaller", skip_serializing_if = "Option::is_none")]
    pub caller: Option<Principal>,
    /// The tenant it was sent in.
    #[serde(default, rename = "a2aTenant", skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The generation it was sent in (`0.3` or `1.0`): the body of the notifications of
    /// a push config it sets. None from an older server: 1.0 (its requests are read
    /// as v1.0's messages).
    #[serde(
        default,
        rename = "a2aVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub version: Option<String>,
}

/// The forms a queued request is read in: this one's, then (a message, in a build with
/// `v0_3`) the one older servers queued, v0.3's params.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Queued {
    Cancel(Box<Forwarded<CancelTaskRequest>>),
    Message(Box<serde_json::Value>),
    ArmPush,
}

impl<'de> Deserialize<'de> for ClusterRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        Ok(match Queued::deserialize(d)? {
            Queued::Cancel(f) => ClusterRequest::Cancel(f),
            Queued::ArmPush => ClusterRequest::ArmPush,
            Queued::Message(value) => {
                match serde_json::from_value::<Forwarded<SendMessageRequest>>((*value).clone()) {
                    Ok(f) => ClusterRequest::Message(Box::new(f)),
                    #[cfg(not(feature = "v0_3"))]
                    Err(current) => return Err(D::Error::custom(current)),
                    #[cfg(feature = "v0_3")]
                    Err(current) => {
                        let old: Forwarded<crate::v0_3::MessageSendParams> =
                            serde_json::from_value(*value)
                                .map_err(|_| D::Error::custom(current))?;
                        let params = crate::v0_3::convert::send_request_in(old.params)
                            .map_err(D::Error::custom)?;
                        ClusterRequest::Message(Box::new(Forwarded {
                            params,
                            caller: old.caller,
                            tenant: old.tenant,
                            version: Some(crate::Version::V0_3.as_str().to_owned()),
                        }))
                    }
                }
            }
        })
    }
}

/// Ownership of tasks among the servers sharing a store (see the module's docs). The
/// store checks the fencing number on every write for a task this server runs, and
/// refuses one for a task it does not run with [`StoreError::Fenced`].
pub trait Cluster: Send + Sync {
    /// How long a lease lasts without renewal: how soon the tasks of a server that
    /// died are taken over.
    fn lease(&self) -> Duration;
    /// Who runs task `id`.
    fn owner<'a>(&'a self, id: &'a TaskId) -> BoxFuture<'a, Result<Owner, StoreError>>;
    /// Renews this server's lease; the tasks it has lost since the last renewal (taken
    /// over while it was stopped or cut off).
    fn renew(&self) -> BoxFuture<'_, Result<Vec<TaskId>, StoreError>>;
    /// Takes over up to `max` unfinished tasks nobody runs; with their last event's
    /// number, to resume.
    fn claim(&self, max: usize) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>>;
    /// Gives up this server's lease and tasks at once (a graceful stop), and its watches.
    fn release(&self) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Queues `request` for the server that runs task `id` (see
    /// [`ClusterRequest::ArmPush`] for when one is not).
    fn request<'a>(
        &'a self,
        id: &'a TaskId,
        request: &'a ClusterRequest,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Takes the requests queued for the tasks this server runs, oldest first; one it
    /// cannot read (of a kind a newer server queued) is dropped, not an error.
    fn requests(&self) -> BoxFuture<'_, Result<Vec<(TaskId, ClusterRequest)>, StoreError>>;
    /// Where the store announces events logged for the tasks this server
    /// [`watch`](Cluster::watch)es and requests queued for it; none: the server polls.
    fn notices(&self) -> Option<&NoticeBoard> {
        None
    }
    /// Asks for a [`Notice::Logged`](crate::store::Notice::Logged) whenever task
    /// `id`'s log gets events, whoever writes them, until as many
    /// [`unwatch`](Cluster::unwatch)es; and announces to every server that task `id`
    /// is followed ([`Notice::Followed`](crate::store::Notice::Followed)), for the one
    /// running it to log every move of it from then on.
    fn watch<'a>(&'a self, _id: &'a TaskId) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
    /// Undoes one [`watch`](Cluster::watch).
    fn unwatch<'a>(&'a self, _id: &'a TaskId) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

//! Why a task's event was not taken ([`SinkError`]), and what a client is told of it.
//! Its own file so that the agent-facing side (`agent.rs`) and the task actors
//! (`task_manager.rs`), which both speak of it, need not import each other.

use crate::error::RpcError;
use crate::store::StoreError;
use crate::types::{ContextId, TaskId, TaskState};

/// Why an event was not accepted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SinkError {
    /// The task has ended (in this state): it takes no more events.
    #[error("task {0} is already {1}; no further events are accepted")]
    Terminal(TaskId, TaskState),
    /// The agent answered with a message instead of a task.
    #[error("the agent already answered with a message; this request has no task")]
    AlreadyReplied,
    /// An event names another task than the sink's.
    #[error("event for task {got} sent to the sink of task {expected}")]
    WrongTask {
        /// The sink's task.
        expected: TaskId,
        /// The event's.
        got: TaskId,
    },
    /// An event names another context than the task's.
    #[error("event for context {got} sent to the sink of a task in context {expected}")]
    WrongContext {
        /// The task's context.
        expected: ContextId,
        /// The event's.
        got: ContextId,
    },
    /// The event would make the task larger than it can be stored and read back (say,
    /// an artifact of more parts than a reader takes).
    #[error("the event cannot be taken: {0}")]
    TooLarge(String),
    /// The store did not take the event.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The server is stopping.
    #[error("the server is shutting down")]
    Closed,
}

impl From<SinkError> for RpcError {
    /// What a client is told when a task's event was not taken. A store's failure or an
    /// agent's mistake is logged here, with its cause; the wire gets only what kind of
    /// failure it was, never database errors, paths or internal ids.
    fn from(e: SinkError) -> RpcError {
        match &e {
            SinkError::Closed => RpcError::internal("the server is shutting down"),
            SinkError::Store(cause) => {
                tracing::warn!(error = %cause, "task store failure");
                RpcError::internal("the task store failed")
            }
            SinkError::Terminal(..)
            | SinkError::TooLarge(_)
            | SinkError::AlreadyReplied
            | SinkError::WrongTask { .. }
            | SinkError::WrongContext { .. } => {
                let e = e.to_string();
                tracing::warn!(error = %crate::log::untrusted(&e), "an event was refused");
                RpcError::internal("the agent sent an event its task cannot take")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store's failure reaches the client as what failed, never as the database's
    /// own words (which may name files, tables or hosts); those go to the log.
    #[test]
    fn a_store_failure_keeps_its_cause_off_the_wire() {
        let cause = std::io::Error::other("disk I/O error at /var/lib/secret/orchestrator.db");
        let wire = RpcError::from(SinkError::Store(StoreError::backend(cause)));
        assert_eq!(wire.code, crate::ErrorCode::INTERNAL_ERROR);
        assert_eq!(wire.message, "the task store failed");
        let refused = RpcError::from(SinkError::WrongTask {
            expected: TaskId::new("internal-a"),
            got: TaskId::new("internal-b"),
        });
        assert!(
            !refused.message.contains("internal-"),
            "{}",
            refused.message
        );
    }
}

//! Test doubles for the engine's traits: for tests of the engine and of what embeds it
//! (the host's executor).

use futures::future::BoxFuture;

use super::types::{AgentConnector, AgentError, SendRequest, Updates};

/// Agents that never answer: for tests that build runs and executors without running
/// them to an end.
pub struct Silent;

impl AgentConnector for Silent {
    fn send(&self, _: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        Box::pin(futures::future::pending())
    }

    fn cancel(&self, _: &str, _: &str, _: &str) -> BoxFuture<'static, Result<(), AgentError>> {
        Box::pin(async { Ok(()) })
    }
}

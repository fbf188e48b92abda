//! A run's detail as the host shows it (the engine's [`RunDetail`], in the task's
//! metadata under [`RUN_KEY`]), and the request metadata keys that ask for a retry.

pub use orchestrator_core::engine::detail::*;

/// The request metadata key that asks for a retry of the run it names...
pub const RETRY_OF_KEY: &str = "retryOf";
/// ...and the one naming the step to retry from.
pub const FROM_KEY: &str = "from";

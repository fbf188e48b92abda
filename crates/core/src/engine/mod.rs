//! The workflow engine: runs a validated workflow with its inputs by delegating steps to
//! agents, as parallel as the DAG allows, fanning their streamed artifacts in live.
//!
//! It honours the semantics of `docs/workflows.md`. **Architecture invariant:** the engine
//! knows nothing about HTTP, JSON-RPC or A2A types; it reaches agents through
//! [`AgentConnector`] and reports through typed [`RunEvent`]s.

pub mod detail;
mod journal;
mod limits;
mod record;
mod run;
pub mod testing;
mod types;
mod unit;
pub mod usage;

pub use detail::{RunDetail, StepUpdate};
pub use journal::{
    Checkpoint, Held, MemoryRunStore, ParentRun, RunEnd, RunHeader, RunStore, RunStoreError,
    SavedRun, wall_clock,
};
pub use limits::OutputLimits;
pub use record::{Outputs, Record, content_json};
pub use run::{Engine, EngineOptions, RunControl, RunEvents, RunHandle, Told, TraceHooks};
pub use types::*;
pub use unit::approval;
pub use usage::{Spend, Usage};

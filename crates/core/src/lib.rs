//! The orchestrator's core: the workflow language and the engine that runs it, with no
//! HTTP, no database and no wire format in sight.
//!
//! - [`config`]: reading the project's TOML files with `file:line:column` diagnostics,
//!   and durations.
//! - [`workflow`]: the workflow definition language — TOML format, static validation,
//!   templates, graph rendering.
//! - [`engine`]: runs workflows, reaching agents, models and storage only through its
//!   traits (`AgentConnector`, `TextModel`, `RunStore`), which the application's
//!   adapters implement.

#![forbid(unsafe_code)]

pub mod config;
pub mod engine;
pub mod workflow;

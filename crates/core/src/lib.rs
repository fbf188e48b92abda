//! The orchestrator's core: the workflow language and the engine that runs it, with no
//! HTTP, no database and no wire format in sight.
//!
//! - [`access`]: who acts on runs ([`access::Actor`]) and who a workflow lets start
//!   it or answer it ([`access::Pattern`]).
//! - [`config`]: reading the project's TOML files with `file:line:column` diagnostics,
//!   and durations.
//! - [`workflow`]: the workflow definition language — TOML format, static validation,
//!   templates, graph rendering.
//! - [`engine`]: runs workflows, reaching agents, models and storage only through its
//!   traits (`AgentConnector`, `TextModel`, `RunStore`), which the application's
//!   adapters implement.

#![forbid(unsafe_code)]

pub mod access;
pub mod config;
pub mod engine;
pub mod workflow;

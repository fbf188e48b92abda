//! The downstream agents the orchestrator delegates to, as listed in `agents.toml`.
//!
//! Today this is the file's format and its checks ([`config`]); discovery of the agents'
//! cards, health and selection build on it.

pub mod config;

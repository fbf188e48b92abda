//! Reading the project's TOML files (workflows, `agents.toml`) with precise errors.
//!
//! Shared by every file format: a spanned reader that collects all problems instead of
//! stopping at the first, diagnostics rendered as `file:line:column` with a caret
//! snippet, and the duration syntax (`30s`, `2m`, `1h30m`).

pub mod diag;
pub mod duration;
pub mod file;
pub mod reader;

pub use diag::{Diagnostic, Severity, did_you_mean};
pub use duration::{format_duration, parse_duration};
pub use file::{MAX_FILE_BYTES, read_bytes, read_text};

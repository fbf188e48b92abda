//! Where the orchestrator keeps what must survive it: upstream tasks with their event
//! logs and push configs (the protocol layer's [`TaskStore`]) and runs with their
//! checkpoints (the engine's [`RunStore`]).
//!
//! Two implementations: [`MemoryStore`] (fast, gone at exit) and [`SqliteStore`] (an
//! embedded SQLite database in WAL mode, the default of `serve`). The engine and the
//! host see only the traits, so another database (PostgreSQL, for several replicas)
//! is one more implementation.

mod memory;
mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use futures::future::BoxFuture;

use crate::engine::RunStore;
use crate::protocol::server::{StoreError, TaskStore};

pub use memory::MemoryStore;
pub use sqlite::SqliteStore;

/// Both halves of a store, and what concerns both.
pub trait Store: TaskStore + RunStore {
    /// Whether what it holds outlives the process. Runs are journaled only into a store
    /// that does: a journal no restart can resume from is memory and work for nothing.
    fn durable(&self) -> bool;

    /// Removes terminal tasks and finished runs last changed before `before`; how many
    /// tasks were removed.
    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>>;

    /// Returns once every write queued before the call is stored: what a graceful stop
    /// calls last, so that no queued checkpoint is lost with the process.
    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }

    /// Returns once the store has taken a write (one that changes nothing), or why it
    /// cannot: what readiness asks of it.
    fn check_writable(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// Why a store could not be opened: where, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the store {location}: {kind}")]
pub struct OpenError {
    /// The store as the user named it (a path).
    pub location: String,
    pub kind: OpenErrorKind,
}

/// What is wrong with a store that could not be opened. Each says what to do about it
/// and keeps the underlying error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenErrorKind {
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("it is a directory")]
    IsDirectory,
    #[error(
        "{0} — the file is not a SQLite database or is corrupt; restore it from a backup or move it away (nothing was changed)"
    )]
    NotADatabase(sqlx::Error),
    #[error(
        "it was written by a newer version of a2a-orchestrator (schema version {found}; this one knows up to {known})"
    )]
    NewerSchema { found: i64, known: i64 },
    #[error(
        "it is a SQLite database of another program (it has tables but no a2a-orchestrator schema)"
    )]
    Foreign,
    #[error("migration {number} failed: {source}")]
    Migration { number: usize, source: sqlx::Error },
    #[error("{0}")]
    Database(sqlx::Error),
}

/// Where a store lives, as `--store` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    Memory,
    Sqlite(PathBuf),
}

/// The default of `serve`: a SQLite database under `data/`.
pub const DEFAULT_STORE: &str = "sqlite://data/orchestrator.db";

impl StoreSpec {
    /// `memory`, or `sqlite://PATH` (relative paths from the working directory;
    /// `sqlite:///abs/path` for an absolute one).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "memory" || s == "memory://" {
            return Ok(StoreSpec::Memory);
        }
        let path = s
            .strip_prefix("sqlite://")
            .or_else(|| s.strip_prefix("sqlite:"));
        match path {
            Some("") => Err("`sqlite://` needs a path, as in sqlite://data/orchestrator.db".into()),
            Some(p) => Ok(StoreSpec::Sqlite(PathBuf::from(p))),
            None => Err(format!(
                "unknown store {s:?}: use sqlite://PATH (for example {DEFAULT_STORE}) or memory"
            )),
        }
    }

    /// A relative SQLite path taken from `base` (a config file's directory).
    pub fn relative_to(self, base: &std::path::Path) -> Self {
        match self {
            StoreSpec::Sqlite(p) if p.is_relative() => StoreSpec::Sqlite(base.join(p)),
            other => other,
        }
    }

    /// Opens (creating if needed) the store. An unreadable, corrupt or foreign
    /// database is an error, never replaced by an empty one.
    pub async fn open(&self) -> Result<Arc<dyn Store>, OpenError> {
        Ok(match self {
            StoreSpec::Memory => Arc::new(MemoryStore::new()),
            StoreSpec::Sqlite(path) => Arc::new(SqliteStore::open(path).await?),
        })
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Memory => f.write_str("memory"),
            StoreSpec::Sqlite(p) => write!(f, "sqlite://{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(StoreSpec::parse("memory"), Ok(StoreSpec::Memory));
        assert_eq!(
            StoreSpec::parse("sqlite://data/x.db"),
            Ok(StoreSpec::Sqlite("data/x.db".into()))
        );
        assert_eq!(
            StoreSpec::parse("sqlite:///var/lib/o.db"),
            Ok(StoreSpec::Sqlite("/var/lib/o.db".into()))
        );
        assert!(
            StoreSpec::parse("postgres://x")
                .unwrap_err()
                .contains("unknown store")
        );
        assert!(StoreSpec::parse("sqlite://").is_err());
    }
}

//! Where the orchestrator keeps what must survive it: upstream tasks with their event
//! logs and push configs (the protocol layer's [`TaskStore`]) and runs with their
//! checkpoints (the engine's [`RunStore`]).
//!
//! Three implementations: [`MemoryStore`] (fast, gone at exit), [`SqliteStore`] (an
//! embedded SQLite database in WAL mode, the default of `serve`) and [`PostgresStore`]
//! (a PostgreSQL server several replicas share). The engine and the host see only the
//! traits. The durable two write the same tables and the same JSON (`rows` for runs,
//! A2A 0.3 JSON for tasks and events).

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod gate;
mod memory;
mod observe;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stats;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod write_error;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;

use a2a::store::{StoreError, TaskStore};
use orchestrator_core::engine::RunStore;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use gate::Gated;
pub use memory::MemoryStore;
pub use observe::{Observe, StoreObserver};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use stats::DatabaseStats;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use write_error::WriteError;

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

    /// The time the schedule `key` last fired at (its mark), if it ever has.
    fn schedule_mark<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<SystemTime>, StoreError>>;

    /// Moves the schedule `key`'s mark to `to` if it has none or an earlier one; whether
    /// this call moved it. Every process on the store sees one mark: of several that try
    /// to fire one time, exactly one moves it — and that one fires it.
    fn advance_schedule<'a>(
        &'a self,
        key: &'a str,
        to: SystemTime,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
}

/// Key of the metadata that marks a task a durable store lists by its columns alone,
/// its stored record unreadable (`"unreadable": true`).
pub const UNREADABLE_KEY: &str = "unreadable";

/// Why a store could not be opened: where, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the store {location}: {kind}")]
pub struct OpenError {
    /// The store as the user named it (a path).
    pub location: String,
    pub kind: OpenErrorKind,
}

impl OpenError {
    /// Whether trying again later may open the store: the database cannot be reached
    /// now, or is starting or stopping (not a wrong password, a missing database, or a
    /// file that is not one).
    pub fn may_pass(&self) -> bool {
        match &self.kind {
            #[cfg(feature = "postgres")]
            OpenErrorKind::Unreachable(e) => match e {
                // Nobody answers, or the connection broke: not a TLS failure (a
                // certificate refused is an I/O error too, and no wait mends it).
                sqlx::Error::Io(io) => {
                    use std::io::ErrorKind as K;
                    matches!(
                        io.kind(),
                        K::ConnectionRefused
                            | K::ConnectionReset
                            | K::ConnectionAborted
                            | K::NotConnected
                            | K::TimedOut
                            | K::HostUnreachable
                            | K::NetworkUnreachable
                            | K::AddrNotAvailable
                            | K::BrokenPipe
                            | K::UnexpectedEof
                    )
                }
                sqlx::Error::PoolTimedOut => true,
                sqlx::Error::Database(d) => d
                    .code()
                    .is_some_and(|c| c.starts_with("57P") || c.starts_with("08")),
                _ => false,
            },
            _ => false,
        }
    }
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
    #[cfg(feature = "sqlite")]
    #[error(
        "{0} — the file is not a SQLite database or is corrupt; restore it from a backup or move it away (nothing was changed)"
    )]
    NotADatabase(rusqlite::Error),
    #[error(
        "it was written by a newer version of a2a-orchestrator (schema version {found}; this one knows up to {known})"
    )]
    NewerSchema { found: i64, known: i64 },
    #[error(
        "it is a database of another program (it has tables but no a2a-orchestrator schema); give the orchestrator a database of its own"
    )]
    Foreign,
    #[cfg(feature = "postgres")]
    #[error(
        "cannot connect: {0} (is the server running, and are the URL's host, port, user, password and database right?)"
    )]
    Unreachable(sqlx::Error),
    #[cfg(feature = "postgres")]
    #[error(
        "the TLS connection failed: {0} (check the URL's sslmode and sslrootcert: the server's certificate must be signed by the CA in sslrootcert, and with verify-full name the URL's host)"
    )]
    Tls(sqlx::Error),
    #[error("migration {number} failed: {source}")]
    Migration {
        number: usize,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[cfg(feature = "postgres")]
    #[error("{0}")]
    Database(sqlx::Error),
    /// SQLite failed opening the file or reading its schema.
    #[cfg(feature = "sqlite")]
    #[error("{0}")]
    Sqlite(rusqlite::Error),
    /// The SQLite store's writing connection could not be opened or set up.
    #[cfg(feature = "sqlite")]
    #[error("cannot open it for writing: {0}")]
    Writer(rusqlite::Error),
    #[error(
        "this build of a2a-orchestrator has no {store} store: build it with the `{feature}` feature (on by default)"
    )]
    NotBuilt {
        store: &'static str,
        feature: &'static str,
    },
}

/// Where a store lives, as `--store` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    Memory,
    /// A SQLite file, and how long a write waits for another process's lock on it
    /// before it fails (and is tried again).
    Sqlite {
        path: PathBuf,
        busy_timeout: Duration,
    },
    /// A `postgres://` (or `postgresql://`) URL, as libpq takes it, and how long a
    /// replica's lease on the runs it runs lasts without renewal.
    Postgres {
        url: String,
        lease: Duration,
    },
}

/// How long a replica's lease lasts by default: a replica that dies has its runs taken
/// over within this (a third of it is the renewal period).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// How long a write to a SQLite store waits by default for another process's lock
/// (a backup, an `sqlite3` shell) before it fails and is tried again.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The default of `serve`: a SQLite database under `data/`.
pub const DEFAULT_STORE: &str = "sqlite://data/orchestrator.db";

impl StoreSpec {
    /// `memory`, `sqlite://PATH` (relative paths from the working directory;
    /// `sqlite:///abs/path` for an absolute one), or `postgres://user:password@host/db`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "memory" || s == "memory://" {
            return Ok(StoreSpec::Memory);
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres {
                url: s.to_owned(),
                lease: DEFAULT_LEASE,
            });
        }
        let path = s
            .strip_prefix("sqlite://")
            .or_else(|| s.strip_prefix("sqlite:"));
        match path {
            Some("") => Err("`sqlite://` needs a path, as in sqlite://data/orchestrator.db".into()),
            Some(p) => Ok(StoreSpec::sqlite(p)),
            None => Err(format!(
                "unknown store {s:?}: use sqlite://PATH (for example {DEFAULT_STORE}), postgres://USER:PASSWORD@HOST/DATABASE or memory"
            )),
        }
    }

    /// A SQLite store at `path`, waiting [`DEFAULT_BUSY_TIMEOUT`] for a lock.
    pub fn sqlite(path: impl Into<PathBuf>) -> Self {
        StoreSpec::Sqlite {
            path: path.into(),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }

    /// The same store with writes that wait `timeout` for another process's lock;
    /// only a SQLite file is locked so.
    pub fn with_busy_timeout(self, timeout: Duration) -> Result<Self, String> {
        match self {
            StoreSpec::Sqlite { path, .. } => Ok(StoreSpec::Sqlite {
                path,
                busy_timeout: timeout,
            }),
            other => Err(format!(
                "a busy timeout is for a sqlite:// store; {other} has no file lock to wait for"
            )),
        }
    }

    /// The same store with replicas' leases of `lease`; only a PostgreSQL store has
    /// them (one several replicas share).
    pub fn with_lease(self, lease: Duration) -> Result<Self, String> {
        match self {
            StoreSpec::Postgres { url, .. } => Ok(StoreSpec::Postgres { url, lease }),
            other => Err(format!(
                "a lease is for replicas sharing a postgres:// store; {other} is this process's alone"
            )),
        }
    }

    /// A relative SQLite path taken from `base` (a config file's directory).
    pub fn relative_to(self, base: &std::path::Path) -> Self {
        match self {
            StoreSpec::Sqlite { path, busy_timeout } if path.is_relative() => StoreSpec::Sqlite {
                path: base.join(path),
                busy_timeout,
            },
            other => other,
        }
    }

    /// Opens (creating if needed) the store. An unreadable, corrupt or foreign
    /// database is an error, never replaced by an empty one. A durable store comes
    /// behind its [`Gated`] gate: while its database is down, requests fail at once.
    pub async fn open(&self) -> Result<Arc<dyn Store>, OpenError> {
        self.open_observed(Observe::default()).await
    }

    /// [`StoreSpec::open`], reporting to `observe` as it works.
    pub async fn open_observed(&self, observe: Observe) -> Result<Arc<dyn Store>, OpenError> {
        #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
        let _ = observe;
        Ok(match self {
            StoreSpec::Memory => Arc::new(MemoryStore::new()),
            #[cfg(feature = "sqlite")]
            StoreSpec::Sqlite { path, busy_timeout } => Arc::new(Gated::new(Arc::new(
                SqliteStore::open(path, *busy_timeout, observe).await?,
            ))),
            #[cfg(feature = "postgres")]
            StoreSpec::Postgres { url, lease } => Arc::new(Gated::new(Arc::new(
                PostgresStore::open(url, &self.to_string(), *lease, observe).await?,
            ))),
            #[allow(unreachable_patterns)]
            StoreSpec::Sqlite { .. } | StoreSpec::Postgres { .. } => {
                let (store, feature) = match self {
                    StoreSpec::Sqlite { .. } => ("SQLite", "sqlite"),
                    _ => ("PostgreSQL", "postgres"),
                };
                return Err(OpenError {
                    location: self.to_string(),
                    kind: OpenErrorKind::NotBuilt { store, feature },
                });
            }
        })
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Memory => f.write_str("memory"),
            StoreSpec::Sqlite { path, .. } => write!(f, "sqlite://{}", path.display()),
            StoreSpec::Postgres { url, .. } => f.write_str(&without_password(url)),
        }
    }
}

/// A database URL with its password (if any) replaced by `***`: what logs and errors
/// show.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
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
            Ok(StoreSpec::sqlite("data/x.db"))
        );
        assert_eq!(
            StoreSpec::parse("sqlite:///var/lib/o.db"),
            Ok(StoreSpec::sqlite("/var/lib/o.db"))
        );
        assert!(
            StoreSpec::parse("mysql://x")
                .unwrap_err()
                .contains("postgres://")
        );
        let pg = StoreSpec::parse("postgres://orch:s3cr@t@db.internal:5432/orch?sslmode=require")
            .unwrap();
        assert_eq!(
            pg.to_string(),
            "postgres://orch:***@db.internal:5432/orch?sslmode=require",
            "the password never shows"
        );
        assert_eq!(
            StoreSpec::parse("postgresql://db/orch")
                .unwrap()
                .to_string(),
            "postgresql://db/orch"
        );
        assert!(StoreSpec::parse("sqlite://").is_err());
    }
}

//! What a durable store's writer answers a write with: shared by the SQLite and the
//! PostgreSQL writers, and said in the words of each trait at its edge.

use std::sync::Arc;

use a2a::store::StoreError;
use orchestrator_core::engine::RunStoreError;

/// Why a write or a read failed, before it is said in the words of the trait it was
/// made for.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum WriteError {
    /// The writer has ended: every handle to the store was dropped.
    #[error("the store's writer has stopped")]
    Closed,
    /// PostgreSQL failed (shared: a failed batch answers each of its writes).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Sql(Arc<sqlx::Error>),
    /// SQLite failed, said by the SQLite store's writer (shared likewise).
    #[cfg(feature = "sqlite")]
    #[error(transparent)]
    Sqlite(Arc<rusqlite::Error>),
    /// A value could not be turned into its stored JSON (SQLite's writes: PostgreSQL's
    /// are encoded before they are queued, and fail as a `StoreError` then).
    #[cfg(feature = "sqlite")]
    #[error("cannot encode a value to store: {0}")]
    Encode(Arc<serde_json::Error>),
}

#[cfg(feature = "postgres")]
impl From<sqlx::Error> for WriteError {
    fn from(e: sqlx::Error) -> Self {
        WriteError::Sql(Arc::new(e))
    }
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for WriteError {
    fn from(e: rusqlite::Error) -> Self {
        WriteError::Sqlite(Arc::new(e))
    }
}

/// Whether PostgreSQL refused the data itself: a data exception (SQLSTATE class 22: a
/// NUL in text, a value out of range) or a limit passed (class 54: an index entry too
/// large). Written again, it would be refused again; what waits for the write must not
/// wait for the database to come back.
#[cfg(feature = "postgres")]
fn refused(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|code| code.starts_with("22") || code.starts_with("54"))
}

impl From<WriteError> for StoreError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Closed => StoreError::Closed,
            #[cfg(feature = "postgres")]
            WriteError::Sql(e) if refused(&e) => StoreError::Refused(e),
            #[cfg(feature = "postgres")]
            WriteError::Sql(e) => StoreError::Backend(e),
            #[cfg(feature = "sqlite")]
            WriteError::Sqlite(e) => StoreError::Backend(e),
            #[cfg(feature = "sqlite")]
            WriteError::Encode(e) => StoreError::Refused(e),
        }
    }
}

impl From<WriteError> for RunStoreError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Closed => RunStoreError::Closed,
            #[cfg(feature = "postgres")]
            WriteError::Sql(e) if refused(&e) => RunStoreError::Refused(e),
            #[cfg(feature = "postgres")]
            WriteError::Sql(e) => RunStoreError::Backend(e),
            #[cfg(feature = "sqlite")]
            WriteError::Sqlite(e) => RunStoreError::Backend(e),
            #[cfg(feature = "sqlite")]
            WriteError::Encode(e) => RunStoreError::Refused(e),
        }
    }
}

//! What a store reports as it works, for the application to count (the orchestrator's
//! Prometheus metrics): the time each batch of writes took to commit, whether a shared
//! database's notices are heard, and each task whose stored record cannot be read. The
//! store names no metrics library; it reports to the [`StoreObserver`] it was opened
//! with ([`StoreSpec::open_observed`](crate::StoreSpec::open_observed)), and to nothing
//! otherwise.

use std::sync::Arc;
use std::time::Duration;

/// Receives what a store reports. Every method has an empty default.
pub trait StoreObserver: Send + Sync + 'static {
    /// A batch of writes was committed (or failed) after `took`.
    fn committed(&self, _took: Duration) {}
    /// The database's notices are heard (`true`), or are not and the store polls.
    fn listening(&self, _heard: bool) {}
    /// A stored task could not be read back, and was left out of what is resumed.
    fn unreadable_task(&self) {}
}

/// The observer a store reports to: none by default. Cheap to clone.
#[derive(Clone, Default)]
pub struct Observe(Option<Arc<dyn StoreObserver>>);

impl Observe {
    /// Reports to `observer`.
    pub fn new(observer: impl StoreObserver) -> Self {
        Self(Some(Arc::new(observer)))
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn committed(&self, took: Duration) {
        if let Some(o) = &self.0 {
            o.committed(took);
        }
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn listening(&self, heard: bool) {
        if let Some(o) = &self.0 {
            o.listening(heard);
        }
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn unreadable_task(&self) {
        if let Some(o) = &self.0 {
            o.unreadable_task();
        }
    }
}

impl std::fmt::Debug for Observe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Observe(set)"
        } else {
            "Observe(none)"
        })
    }
}

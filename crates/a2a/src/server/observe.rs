//! What the server reports as it serves, for the application embedding it to count
//! (the orchestrator turns it into Prometheus metrics). The protocol layer names no
//! metrics library: it calls the one [`Observer`] the process installed, and nothing
//! when none is.
//!
//! One observer per process, like the metrics registry an observer records into: a
//! server reports through whichever was installed first.

use std::sync::OnceLock;

/// One request the server answered.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The operation's name as the request gave it (`unknown` when it named none).
    pub method: &'a str,
    /// The binding: `JSONRPC` or `HTTP+JSON`.
    pub binding: &'a str,
    /// The protocol generation: `0.3` or `1.0`.
    pub version: &'a str,
    /// The error code the request was answered with (the JSON-RPC code, or the HTTP
    /// status of a refused request); `None` for a success.
    pub code: Option<i64>,
}

/// Receives what the server reports. Every method has an empty default.
pub trait Observer: Send + Sync + 'static {
    /// A request was answered.
    fn request(&self, _request: Request<'_>) {}
    /// A stream of a task's events opened (`true`) or closed (`false`).
    fn subscriber(&self, _open: bool) {}
}

static OBSERVER: OnceLock<Box<dyn Observer>> = OnceLock::new();

/// Installs the process's observer; `false` (and `observer` dropped) when one already
/// is.
pub fn install(observer: Box<dyn Observer>) -> bool {
    OBSERVER.set(observer).is_ok()
}

pub(crate) fn request(request: Request<'_>) {
    if let Some(observer) = OBSERVER.get() {
        observer.request(request);
    }
}

/// Counts an open stream until dropped.
pub(crate) struct Subscriber(());

impl Subscriber {
    pub(crate) fn open() -> Self {
        if let Some(observer) = OBSERVER.get() {
            observer.subscriber(true);
        }
        Subscriber(())
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        if let Some(observer) = OBSERVER.get() {
            observer.subscriber(false);
        }
    }
}

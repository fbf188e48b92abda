//! What the server reports as it serves, for the application embedding it to count
//! (the orchestrator turns it into Prometheus metrics). The protocol layer names no
//! metrics library: it reports to the [`Observer`] the server was given
//! ([`ServerConfig::observer`](super::ServerConfig::observer)), and to nothing when it
//! was given none.
//!
//! One layer around every binding does the reporting (`layer`): a binding says what a
//! response answered by marking it (`Answered`, an extension of the response; the gRPC
//! binding's status says it for gRPC), and the layer reports each marked response once,
//! as it leaves.

use std::sync::Arc;

use axum::extract::{Request as HttpRequest, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::{ErrorCode, Version};

/// One request the server answered.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The operation's name as the request gave it (`unknown` when it named none).
    pub method: &'a str,
    /// The binding: `JSONRPC`, `HTTP+JSON` or `GRPC`.
    pub binding: &'a str,
    /// The protocol generation: `0.3` or `1.0`.
    pub version: &'a str,
    /// The error code the request was answered with (the A2A or JSON-RPC code, or the
    /// HTTP status of a refused request); `None` for a success.
    pub code: Option<i64>,
}

/// Receives what the server reports. Every method has an empty default.
pub trait Observer: Send + Sync + 'static {
    /// A request was answered.
    fn request(&self, _request: Request<'_>) {}
    /// A stream of a task's events opened (`true`) or closed (`false`).
    fn subscriber(&self, _open: bool) {}
}

/// The observer a server reports to: none by default.
#[derive(Clone, Default)]
pub struct Observe(Option<Arc<dyn Observer>>);

impl Observe {
    /// Reports to `observer`.
    pub fn new(observer: impl Observer) -> Self {
        Self(Some(Arc::new(observer)))
    }

    /// Counts an open stream until the returned guard is dropped.
    pub(crate) fn subscriber(&self) -> Subscriber {
        if let Some(observer) = &self.0 {
            observer.subscriber(true);
        }
        Subscriber(self.0.clone())
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

/// What a response answered, as its binding says: read by `layer`. The method is one
/// of the protocol's names (or `unknown`), never what a client wrote.
#[derive(Debug, Clone)]
pub(crate) struct Answered {
    pub(crate) method: &'static str,
    pub(crate) binding: &'static str,
    pub(crate) version: Version,
    pub(crate) code: Option<i64>,
}

impl Answered {
    pub(crate) fn new(
        method: &'static str,
        binding: &'static str,
        version: Version,
        code: Option<ErrorCode>,
    ) -> Self {
        Self {
            method,
            binding,
            version,
            code: code.map(|c| c.0),
        }
    }

    /// A request refused with HTTP `status` before its method was read.
    pub(crate) fn refused(binding: &'static str, version: Version, status: u16) -> Self {
        Self {
            method: "unknown",
            binding,
            version,
            code: Some(i64::from(status)),
        }
    }

    /// `response`, marked as answering this.
    pub(crate) fn on(self, mut response: Response) -> Response {
        response.extensions_mut().insert(self);
        response
    }
}

/// Reports each response a binding marked ([`Answered`]) to the server's observer.
pub(crate) async fn layer(
    State(observe): State<Observe>,
    request: HttpRequest,
    next: Next,
) -> Response {
    let response = next.run(request).await;
    if let (Some(observer), Some(answered)) = (&observe.0, response.extensions().get::<Answered>())
    {
        observer.request(Request {
            method: answered.method,
            binding: answered.binding,
            version: answered.version.as_str(),
            code: answered.code,
        });
    }
    response
}

/// Counts an open stream until dropped.
pub(crate) struct Subscriber(Option<Arc<dyn Observer>>);

impl Drop for Subscriber {
    fn drop(&mut self) {
        if let Some(observer) = &self.0 {
            observer.subscriber(false);
        }
    }
}

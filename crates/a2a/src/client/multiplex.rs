//! One HTTP/2 connection per origin, held by the client itself, for the direct calls of
//! a client that speaks only HTTP/2 (agents marked `http2`): a call opens its stream on
//! that connection from the caller's own task, and reads its answer there. A pooled
//! client (hyper's, under reqwest) checks a connection out of a pool keyed by the
//! origin's hash, hands the request to the connection's task over a channel, and starts
//! a task for each request that waits for its answer and hands it back over another:
//! doing without them takes a tenth or more off the CPU a workflow run costs the
//! orchestrator (docs/benchmarks.md, "The client's two paths").
//!
//! A connection is opened at the first call to its origin (concurrent first calls wait
//! for the same one), and again after it closed or failed; a call that found it closed
//! before its request went out is sent on the new one. It lives while the client does:
//! the agent may close it when idle (the next call opens another), and TCP keep-alive
//! probes find an agent gone from under it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use h2::client::SendRequest;
use http::header::{self, HeaderValue};
use http::uri::{Authority, Scheme};
use http::{Request, Response, Uri};
use http_body::Frame;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tower_service::Service;

use super::send::{BoxError, MAX_REFUSED_RETRIES, unprocessed};

/// hyper's HTTP/2 defaults for a client, so that the agent sees what it saw from the
/// pool: windows of 2 MiB a stream and 5 MiB a connection, 16 KiB frames and header
/// lists, no server push.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;
const MAX_FRAME_SIZE: u32 = 16 * 1024;
const MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
/// Streams opened before the agent's settings say how many it takes (hyper's default,
/// the least RFC 9113 recommends that a server allow).
const INITIAL_MAX_SEND_STREAMS: usize = 100;

/// Most times a call opens a new connection because the one it found had closed before
/// its request went out.
const MAX_RECONNECTS: u32 = 2;

/// The longest an opening may take, TCP, TLS and HTTP/2's preface together: every call
/// to the origin waits for it, so an agent that accepts and then stalls must not hold
/// them past it (TCP alone gives up after 10 s, as reqwest's does).
const OPEN_TIMEOUT: Duration = Duration::from_secs(20);

/// The connections, one per origin.
pub(super) struct Multiplexed {
    connector: HttpsConnector<HttpConnector>,
    origins: Mutex<HashMap<Origin, Arc<Mutex<State>>>>,
}

/// Where a connection goes: `scheme://authority`, lowercased (see [`origin`]).
type Origin = String;

/// A connection's handle, as every caller may clone it.
type Sender = SendRequest<Bytes>;

/// An opening shared by every call that waits for it.
type Opening = Shared<BoxFuture<'static, Result<Sender, Arc<BoxError>>>>;

/// An origin's connection.
enum State {
    /// None open: the next call opens one.
    Closed,
    /// Being opened; `attempt` tells it from a later one.
    Opening { attempt: u64, opening: Opening },
    /// Open, as far as anyone knows.
    Open { attempt: u64, sender: Sender },
}

impl Multiplexed {
    pub(super) fn new(connector: HttpsConnector<HttpConnector>) -> Self {
        Self {
            connector,
            origins: Mutex::new(HashMap::new()),
        }
    }

    /// Sends `req` (an absolute URI: scheme and authority) on its origin's connection;
    /// the answer once its head has arrived.
    pub(super) async fn send(&self, req: Request<Bytes>) -> Result<Response<AnswerBody>, BoxError> {
        let (mut head, body) = req.into_parts();
        let (Some(scheme), Some(authority)) = (head.uri.scheme(), head.uri.authority()) else {
            return Err(format!("{} has no scheme or host", head.uri).into());
        };
        let origin = origin(scheme, authority);
        strip_connection_headers(&mut head.headers);
        if !body.is_empty() && !head.headers.contains_key(header::CONTENT_LENGTH) {
            head.headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        }
        let state = self.state(&origin);
        let (mut reconnects, mut refused) = (0, 0);
        loop {
            let (attempt, sender) = self.connection(&state, &head.uri).await?;
            let sent = match sender.ready().await {
                Ok(mut sender) => {
                    let mut request = Request::new(());
                    *request.method_mut() = head.method.clone();
                    *request.uri_mut() = head.uri.clone();
                    *request.version_mut() = http::Version::HTTP_2;
                    *request.headers_mut() = head.headers.clone();
                    sender.send_request(request, body.is_empty())
                }
                Err(e) => Err(e),
            };
            let (answer, mut stream) = match sent {
                Ok(sent) => sent,
                // Nothing went out: the connection had failed, or was going away.
                Err(e) if reconnects < MAX_RECONNECTS => {
                    tracing::debug!(error = %e, "the connection to {} had closed; opening another", shown(&head.uri));
                    forget(&state, attempt);
                    reconnects += 1;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            // Queued whole: h2 sends it as the agent's window allows. It fails only when
            // the stream is already over (the agent reset it), which the answer says.
            if !body.is_empty()
                && let Err(e) = stream.send_data(body.clone(), true)
            {
                tracing::debug!(error = %e, "a request's body to {} was not sent", shown(&head.uri));
            }
            match answer.await {
                Ok(answer) => return Ok(answer.map(|recv| AnswerBody { recv })),
                Err(e) if refused < MAX_REFUSED_RETRIES && unprocessed(&e) => refused += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The state of `origin`'s connection, made at its first call.
    fn state(&self, origin: &Origin) -> Arc<Mutex<State>> {
        let mut origins = self.origins.lock().expect("not poisoned");
        match origins.get(origin) {
            Some(state) => state.clone(),
            None => {
                let state = Arc::new(Mutex::new(State::Closed));
                origins.insert(origin.clone(), state.clone());
                state
            }
        }
    }

    /// The open connection of `state`, opened first if there is none; with its attempt.
    async fn connection(
        &self,
        state: &Arc<Mutex<State>>,
        uri: &Uri,
    ) -> Result<(u64, Sender), BoxError> {
        let (attempt, opening) = {
            let mut current = state.lock().expect("not poisoned");
            match &*current {
                State::Open { attempt, sender } => return Ok((*attempt, sender.clone())),
                State::Opening { attempt, opening } => (*attempt, opening.clone()),
                State::Closed => {
                    let attempt = next_attempt();
                    let opening = open(
                        self.connector.clone(),
                        uri.clone(),
                        Arc::downgrade(state),
                        attempt,
                    );
                    let opening = async move {
                        match tokio::time::timeout(OPEN_TIMEOUT, opening).await {
                            Ok(opened) => opened,
                            Err(_) => Err(Arc::new(BoxError::from(format!(
                                "no HTTP/2 connection within {} s",
                                OPEN_TIMEOUT.as_secs()
                            )))),
                        }
                    }
                    .boxed()
                    .shared();
                    *current = State::Opening {
                        attempt,
                        opening: opening.clone(),
                    };
                    (attempt, opening)
                }
            }
        };
        let opened = opening.await;
        let mut current = state.lock().expect("not poisoned");
        let settles = matches!(&*current, State::Opening { attempt: a, .. } if *a == attempt);
        match opened {
            Ok(sender) => {
                if settles {
                    *current = State::Open {
                        attempt,
                        sender: sender.clone(),
                    };
                }
                Ok((attempt, sender))
            }
            Err(e) => {
                if settles {
                    *current = State::Closed;
                }
                Err(Box::new(OpenFailed(e)))
            }
        }
    }
}

/// A fresh attempt's number.
fn next_attempt() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Marks `attempt`'s connection closed, if it is still the one `state` holds.
fn forget(state: &Mutex<State>, attempt: u64) {
    let mut current = state.lock().expect("not poisoned");
    let holds = match &*current {
        State::Open { attempt: a, .. } | State::Opening { attempt: a, .. } => *a == attempt,
        State::Closed => false,
    };
    if holds {
        *current = State::Closed;
    }
}

/// An origin's key: its text, lowercased (scheme and host compare without case). Text,
/// not the parsed parts: `Authority` hashes byte by byte, lowercasing each, which cost
/// some thousand instructions a call.
fn origin(scheme: &Scheme, authority: &Authority) -> Origin {
    let mut key = format!("{scheme}://{authority}");
    key.make_ascii_lowercase();
    key
}

/// `uri`'s host and port as logs show them: never a user and password it may carry.
fn shown(uri: &Uri) -> &str {
    let authority = uri.authority().map_or("", Authority::as_str);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

/// Opens a connection to `uri`'s origin (TCP, then TLS for `https://`, then HTTP/2's
/// preface and settings) and starts the task that drives it. The task ends when the
/// connection does: when it fails or the agent closes it (marking it closed in `state`,
/// if that still holds it), or once every handle and stream of it is gone.
async fn open(
    mut connector: HttpsConnector<HttpConnector>,
    uri: Uri,
    state: std::sync::Weak<Mutex<State>>,
    attempt: u64,
) -> Result<Sender, Arc<BoxError>> {
    let io = connector.call(uri).await.map_err(Arc::new)?;
    let (sender, connection) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_frame_size(MAX_FRAME_SIZE)
        .max_header_list_size(MAX_HEADER_LIST_SIZE)
        .initial_max_send_streams(INITIAL_MAX_SEND_STREAMS)
        .enable_push(false)
        .handshake::<_, Bytes>(TokioIo::new(io))
        .await
        .map_err(|e| Arc::new(BoxError::from(e)))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "an HTTP/2 connection to an agent failed");
        }
        if let Some(state) = state.upgrade() {
            forget(&state, attempt);
        }
    });
    Ok(sender)
}

/// Connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2), taken out as
/// hyper takes them out.
fn strip_connection_headers(headers: &mut http::HeaderMap) {
    for name in [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
        http::HeaderName::from_static("keep-alive"),
        http::HeaderName::from_static("proxy-connection"),
    ] {
        headers.remove(name);
    }
    if headers
        .get(header::TE)
        .is_some_and(|te| te.as_bytes() != b"trailers")
    {
        headers.remove(header::TE);
    }
}

/// An opening that failed, as every call that waited for it sees it.
#[derive(Debug)]
pub(crate) struct OpenFailed(Arc<BoxError>);

impl std::fmt::Display for OpenFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot connect: {}", self.0)
    }
}

impl std::error::Error for OpenFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&**self.0)
    }
}

/// An answer's body as it arrives on its stream; what is read is given back to the
/// agent's window at once, as hyper does.
pub(super) struct AnswerBody {
    recv: h2::RecvStream,
}

impl http_body::Body for AnswerBody {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        match self.recv.poll_data(cx) {
            Poll::Ready(Some(Ok(data))) => {
                // Fails only once the stream is gone, which the next read says.
                let _ = self.recv.flow_control().release_capacity(data.len());
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            // Trailers are not read: no caller reads them.
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_its_scheme_and_authority_without_case_and_logs_show_no_user() {
        let key = |u: &str| {
            let uri: Uri = u.parse().unwrap();
            origin(uri.scheme().unwrap(), uri.authority().unwrap())
        };
        assert_eq!(
            key("HTTP://Agent.Example:8080/a2a?x=1"),
            "http://agent.example:8080"
        );
        assert_eq!(
            key("https://agent.example/"),
            key("HTTPS://AGENT.example/v1")
        );
        assert_ne!(key("http://agent.example/"), key("https://agent.example/"));
        assert_ne!(
            key("http://agent.example:1/"),
            key("http://agent.example:2/")
        );
        let with_user: Uri = "http://me:secret@agent.example:9/a".parse().unwrap();
        assert_eq!(shown(&with_user), "agent.example:9");
        let plain: Uri = "http://agent.example:9/a?key=k".parse().unwrap();
        assert_eq!(shown(&plain), "agent.example:9");
    }
}

//! How a request reaches the agent, and its answer comes back: through reqwest, except
//! the calls of a client that speaks only HTTP/2 (agents marked `http2`) with no proxy
//! in the environment, no redirect to follow and no user info in the URL. Those go over
//! the connection to the agent the client holds itself (`multiplex`), with reqwest's
//! connection settings, its TLS (the public authorities or the agent's own, the agent's
//! client certificate, ALPN) and its retry of refused HTTP/2 streams. The calls to
//! agents are most of what a workflow run costs the orchestrator, and that path costs a
//! run a tenth less CPU or more than reqwest's pooled HTTP/2; over HTTP/1.1, hyper's
//! pool without reqwest's layers saved too little (4–9%) to be kept
//! (docs/benchmarks.md). Every call goes through reqwest when `A2A_HTTP_VIA_REQWEST` is
//! set. Either way the caller gets the same [`Response`].

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap};
use http::uri::Scheme;
use http::{Request, StatusCode, Uri};
use http_body::Body as _;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::client::legacy::connect::HttpConnector;

use super::multiplex::Multiplexed;

/// Any error of sending or of reading an answer, kept as it came for
/// [`super::ClientError::transport`] to say what kind it was.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a connection to an agent may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Silence on a connection before TCP probes the agent, and between probes.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How long an unused connection stays in the pool: less than servers keep one open.
/// Node's HTTP server (the JS SDK's agents, on Express) and uvicorn (the Python SDK's)
/// close a connection after 5 s without a request, ours after 60 s. A call sent on a
/// connection at the moment its server closes it fails with the connection closed
/// before the answer, and a POST cannot safely be sent again; so a connection is
/// given up first, as Node's own client (undici) does, at 4 s.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// The HTTP client the JSON-RPC and HTTP+JSON bindings and the card resolver send
/// through. Cheap to clone; clones share the connection pools.
#[derive(Clone)]
pub struct HttpClient(Arc<Clients>);

struct Clients {
    /// The calls of an HTTP/2-only client that need nothing of reqwest (see the
    /// module's comment): over one connection per origin held by the client.
    direct: Option<Multiplexed>,
    /// Every other call.
    general: reqwest::Client,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("direct", &self.0.direct.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// `general` for every call, or, with `direct` (the TLS of `https://` calls) and
    /// `http2`, for those the direct path takes: HTTP/2 without TLS from the first byte
    /// ("prior knowledge"), or over TLS by ALPN.
    pub(super) fn new(
        general: reqwest::Client,
        direct: Option<rustls::ClientConfig>,
        http2: bool,
    ) -> Self {
        let direct = direct.filter(|_| http2).map(|tls| {
            // reqwest's defaults, so that the two paths differ in nothing the agent or
            // the network sees: TCP keep-alive probes find a dead agent under a long
            // stream.
            let mut connector_tcp = HttpConnector::new();
            connector_tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
            connector_tcp.set_nodelay(true);
            connector_tcp.set_keepalive(Some(KEEPALIVE));
            connector_tcp.set_keepalive_interval(Some(KEEPALIVE));
            connector_tcp.set_keepalive_retries(Some(3));
            connector_tcp.enforce_http(false);
            let connector = HttpsConnectorBuilder::new()
                .with_tls_config(tls)
                .https_or_http()
                .enable_http2()
                .wrap_connector(connector_tcp);
            Multiplexed::new(connector)
        });
        Self(Arc::new(Clients { direct, general }))
    }

    /// The reqwest client behind, with the same TLS, proxies and redirects, for
    /// requests beside A2A's (the keys a card is signed with, say).
    pub fn reqwest(&self) -> &reqwest::Client {
        &self.0.general
    }

    /// Sends `req`; the answer once its head has arrived.
    pub(super) async fn send(&self, req: Request<Bytes>) -> Result<Response, BoxError> {
        if let Some(connections) = &self.0.direct
            && direct_ok(req.uri())
        {
            let (head, body) = connections.send(req).await?.into_parts();
            return Ok(Response {
                head,
                body: body.map_err(BoxError::from).boxed_unsync(),
                redirected: None,
            });
        }
        let req = reqwest::Request::try_from(req)?;
        let requested = req.url().clone();
        let resp = self.0.general.execute(req).await?;
        let redirected = (*resp.url() != requested).then(|| resp.url().to_string());
        let (head, body) = http::Response::from(resp).into_parts();
        Ok(Response {
            head,
            body: body.map_err(BoxError::from).boxed_unsync(),
            redirected,
        })
    }
}

/// Most times a request the agent refused unprocessed is sent again (reqwest's default).
pub(super) const MAX_REFUSED_RETRIES: u32 = 2;

/// Whether `e` (or what caused it) says the agent refused the request before
/// processing it.
pub(super) fn unprocessed(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(h2) = c.downcast_ref::<h2::Error>() {
            let go_away = h2.is_go_away() && h2.reason() == Some(h2::Reason::NO_ERROR);
            let refused = h2.is_reset() && h2.reason() == Some(h2::Reason::REFUSED_STREAM);
            return h2.is_remote() && (go_away || refused);
        }
        cause = c.source();
    }
    false
}

/// Whether the direct path takes `uri`: `http://` or `https://`, with no user info
/// (reqwest turns user info into basic credentials; hyper would send it on as it is).
fn direct_ok(uri: &Uri) -> bool {
    let scheme = uri.scheme();
    (scheme == Some(&Scheme::HTTP) || scheme == Some(&Scheme::HTTPS))
        && uri.authority().is_some_and(|a| !a.as_str().contains('@'))
}

/// `url` as a request's target, read as a browser would (WHATWG URL) and then as HTTP
/// carries it.
pub(super) fn parse_uri(url: &str) -> Result<Uri, String> {
    let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
    Uri::try_from(parsed.as_str()).map_err(|e| e.to_string())
}

/// An answer: its status and headers, and its body as it arrives.
pub(super) struct Response {
    head: http::response::Parts,
    body: UnsyncBoxBody<Bytes, BoxError>,
    /// Where same-origin redirects led, when they led away from the URL requested.
    redirected: Option<String>,
}

impl Response {
    pub(super) fn status(&self) -> StatusCode {
        self.head.status
    }

    pub(super) fn headers(&self) -> &HeaderMap {
        &self.head.headers
    }

    /// The body's length, when the answer declared it.
    pub(super) fn content_length(&self) -> Option<u64> {
        self.body.size_hint().exact().or_else(|| {
            self.head
                .headers
                .get(header::CONTENT_LENGTH)?
                .to_str()
                .ok()?
                .parse()
                .ok()
        })
    }

    /// The URL the answer came from, when redirects led away from the one requested.
    pub(super) fn redirected(&self) -> Option<&str> {
        self.redirected.as_deref()
    }

    /// The body's next piece; `None` at its end.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, BoxError> {
        std::future::poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// [`Self::chunk`] as a poll, for a stream that reads the body itself.
    pub(super) fn poll_chunk(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Option<Bytes>, BoxError>> {
        use std::task::Poll;
        loop {
            match std::pin::Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    // Trailers are passed over.
                    if let Ok(data) = frame.into_data() {
                        return Poll::Ready(Ok(Some(data)));
                    }
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(None) => return Poll::Ready(Ok(None)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// The body's first `max` bytes (about: whole pieces, cut at the end) as text,
    /// invalid UTF-8 replaced; what arrived before a failure, if it fails.
    pub(super) async fn text_up_to(mut self, max: usize) -> String {
        let mut text = Vec::new();
        while text.len() < max
            && let Ok(Some(piece)) = self.chunk().await
        {
            text.extend_from_slice(&piece);
        }
        text.truncate(max);
        String::from_utf8_lossy(&text).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::{direct_ok, parse_uri};

    #[test]
    fn http_and_https_without_user_info_go_direct() {
        let direct = |url: &str| direct_ok(&parse_uri(url).unwrap());
        assert!(direct("http://agent:8080/rpc"));
        assert!(
            direct("HTTP://Agent/"),
            "read as a browser would: scheme and host lowered"
        );
        assert!(direct("https://agent/rpc"));
        assert!(!direct("http://user:secret@agent/rpc"));
        assert!(!direct("https://user@agent/rpc"));
        assert!(parse_uri("agent/rpc").is_err());
    }
}

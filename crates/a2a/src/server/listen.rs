//! Accepting connections. `axum::serve` cannot set HTTP/2's limits, and a server whose
//! clients hold a stream per running task needs more than hyper's default of 200
//! concurrent streams on one connection; so this is our own small accept loop: HTTP/1.1
//! and HTTP/2 (h2c, prior knowledge; or over TLS, by ALPN) on one port, `TCP_NODELAY`,
//! every connection a tracked task, and a graceful shutdown that lets in-flight
//! responses finish (within a bound). A TLS handshake happens in the connection's own
//! task, within the header timeout: a slow one holds up nobody else.
//!
//! It bounds what a client can hold. A connection must send its first request within
//! `header_read_timeout` (hyper's own timer starts only at the first byte, so a
//! connection that sends nothing would otherwise be held forever), and one that has
//! nothing in flight is closed after `idle_timeout`. Connections are capped; at the cap
//! the idle ones (nothing in flight), longest idle first, are closed to make room for
//! new ones, so thousands of idle connections never keep a new client out — only
//! connections that are all busy with requests make new ones wait in the backlog. A new
//! connection asked to make room whose first bytes are already in its socket is served,
//! not cut off: its request was on its way.

use std::collections::HashMap;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, trace, warn};

/// What the accept loop allows a client.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub http2_max_streams: u32,
    /// Connections open at once; past it, idle ones are closed to make room, and new
    /// ones wait in the listen backlog while none is idle.
    pub max_connections: usize,
    /// Time for a new connection's first request, and for a request's headers to
    /// arrive (HTTP/1.1), and for an HTTP/2 connection's keep-alive ping to be answered.
    pub header_read_timeout: Duration,
    /// How long a connection with nothing in flight is kept open.
    pub idle_timeout: Duration,
    /// How long a stop waits for in-flight responses.
    pub drain: Duration,
}

/// How long a new connection that has sent nothing yet is spared when idle ones are
/// closed to make room: its client may be about to write. Longer than TCP's least
/// retransmission timeout (200 ms on Linux), so that a first request whose segment was
/// lost once is not cut off; short enough that a flood of silent connections is turned
/// over quickly (at the cap, new connections are let in at about the cap per grace).
const EVICT_GRACE: Duration = Duration::from_millis(500);

/// One open connection, as the accept loop sees it: how many requests it has in
/// flight, and when it was last busy.
struct Conn {
    in_flight: AtomicUsize,
    /// Milliseconds after the loop's epoch when a request last started or ended.
    last_active: AtomicU64,
    /// Whether a request ever started on it.
    used: AtomicBool,
    /// Whether its first bytes arrived: a request is on its way, and it is not closed
    /// to make room before that request started.
    arrived: AtomicBool,
    /// Fired to close it (graceful: what is in flight is answered first): a stop.
    close: CancellationToken,
    /// Fired to make room at the cap: a connection with nothing in flight is then
    /// dropped at once, one whose first request is arriving is spared.
    evict: CancellationToken,
    /// Told when a request ends, so that the idle deadline is counted from then.
    ended: tokio::sync::Notify,
}

impl Conn {
    /// A connection accepted now, `now_ms` after the loop's epoch, closed on `close`.
    fn new(now_ms: u64, close: CancellationToken) -> Conn {
        Conn {
            in_flight: AtomicUsize::new(0),
            last_active: AtomicU64::new(now_ms),
            used: AtomicBool::new(false),
            arrived: AtomicBool::new(false),
            close,
            evict: CancellationToken::new(),
            ended: tokio::sync::Notify::new(),
        }
    }

    fn idle_since(&self) -> Option<u64> {
        (self.in_flight.load(Ordering::Acquire) == 0)
            .then(|| self.last_active.load(Ordering::Acquire))
    }
}

/// The open connections, to find idle ones when the cap is reached.
struct Open {
    epoch: Instant,
    // A std mutex: held only to insert, remove or scan, never across an await.
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Open {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Asks up to `n` connections with nothing in flight, longest idle first, to close.
    /// Spared: a connection whose first request is arriving, and one accepted moments
    /// ago ([`EVICT_GRACE`]), whose first request may be on its way.
    fn evict_idle(&self, n: usize) -> Evicted {
        let now = self.now_ms();
        let grace = EVICT_GRACE.as_millis() as u64;
        let conns = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        let mut young: Option<u64> = None;
        let mut idle: Vec<(u64, &Arc<Conn>)> = conns
            .values()
            .filter(|c| !c.close.is_cancelled() && !c.evict.is_cancelled())
            .filter_map(|c| c.idle_since().map(|t| (t, c)))
            .filter(|(t, c)| {
                if c.used.load(Ordering::Acquire) {
                    return true;
                }
                if c.arrived.load(Ordering::Acquire) {
                    return false;
                }
                let age = now.saturating_sub(*t);
                if age < grace {
                    young = Some(young.map_or(grace - age, |y| y.min(grace - age)));
                }
                age >= grace
            })
            .collect();
        if idle.len() > n {
            idle.select_nth_unstable_by_key(n, |(t, _)| *t);
        }
        for (_, c) in idle.iter().take(n) {
            c.evict.cancel();
        }
        Evicted {
            asked: idle.len().min(n),
            next: young.map(|ms| Duration::from_millis(ms + 1)),
        }
    }
}

/// What [`Open::evict_idle`] did.
struct Evicted {
    /// Connections asked to close.
    asked: usize,
    /// When the first connection spared only for being new ([`EVICT_GRACE`]) can be
    /// closed, from now.
    next: Option<Duration>,
}

/// Connections the kernel queues for `accept` (Linux caps it at `net.core.somaxconn`,
/// 4096 by default). Tokio's `TcpListener::bind` asks for 1024: a burst of more
/// connections than that has the kernel drop new SYNs, and a client waits a second for
/// its retransmit, however fast the loop accepts.
pub const BACKLOG: u32 = 4096;

/// A listener on `addr` (the first of its addresses that binds) with a backlog of
/// [`BACKLOG`].
pub async fn bind(addr: &str) -> io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket = if a.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(a).and_then(|()| socket.listen(BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{addr} names no address"),
        )
    }))
}

/// A connection's bytes: plain, or over TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl tokio::io::AsyncRead for Stream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Serves `router` on `listener` (over TLS with `tls`) until `stop` completes; then
/// stops accepting, asks every connection to close once its in-flight requests are
/// answered, and waits for them (at most `limits.drain`).
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    tls: Option<Arc<rustls::ServerConfig>>,
    stop: impl Future<Output = ()>,
) {
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_streams)
        .keep_alive_interval(limits.header_read_timeout)
        .keep_alive_timeout(limits.header_read_timeout);
    let stopping = CancellationToken::new();
    let connections = TaskTracker::new();
    let open = Arc::new(Open {
        epoch: Instant::now(),
        conns: Mutex::new(HashMap::new()),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut next_id = 0u64;
    let mut stop = pin!(stop);
    loop {
        // A free slot first.
        let slot = loop {
            if let Ok(slot) = slots.clone().try_acquire_owned() {
                break Some(slot);
            }
            // At the cap: the longest idle connections make room (closed at once; a
            // batch, so that a burst costs a scan per batch, not per connection); with
            // none idle, new ones wait in the kernel's backlog for one to end or idle.
            let evicted = open.evict_idle(1 + limits.max_connections / 64);
            let wait = match evicted.next {
                // A slot is freed as soon as one asked closes; this only bounds the
                // wait when all of them were spared.
                _ if evicted.asked > 0 => Duration::from_millis(100),
                Some(next) => next,
                None => Duration::from_secs(1),
            };
            tokio::select! {
                slot = slots.clone().acquire_owned() => break slot.ok(),
                () = tokio::time::sleep(wait) => {}
                () = &mut stop => break None,
            }
        };
        let Some(slot) = slot else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_per_connection(&e) => continue,
            Err(e) => {
                // Out of file descriptors, say: make room and wait rather than spin.
                warn!(error = %e, "cannot accept a connection; retrying in 1 s");
                open.evict_idle(1 + limits.max_connections / 64);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    () = &mut stop => break,
                }
            }
        };
        // Without TCP_NODELAY, an SSE event written after the response head waits for
        // the client's delayed ACK (40 ms on Linux): every streamed call would pay it.
        if let Err(e) = tcp.set_nodelay(true) {
            debug!("cannot set TCP_NODELAY on a connection: {e}");
        }
        let id = next_id;
        next_id += 1;
        let conn = Arc::new(Conn::new(open.now_ms(), stopping.child_token()));
        open.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, conn.clone());
        let service = TowerToHyperService::new(Counted {
            router: router.clone(),
            conn: conn.clone(),
            open: open.clone(),
            peer: super::http::Peer {
                ip: peer.ip(),
                connection: id,
            },
        });
        let builder = builder.clone();
        let tls = tls.clone();
        let open = open.clone();
        connections.spawn(async move {
            // Nothing happens on a connection (no handshake, no buffers) until its
            // first bytes arrive.
            let arrived = first_bytes(&tcp, &conn, limits).await;
            let stream = match tls {
                _ if !arrived => None,
                None => Some(Stream::Plain(tcp)),
                Some(acceptor) => {
                    let handshake = acceptor.accept(tcp);
                    tokio::select! {
                        r = tokio::time::timeout(limits.header_read_timeout, handshake) => match r {
                            Ok(Ok(s)) => Some(Stream::Tls(Box::new(s))),
                            Ok(Err(e)) => {
                                debug!(%peer, "TLS handshake failed: {e}");
                                None
                            }
                            Err(_) => {
                                debug!(%peer, "TLS handshake took longer than the header timeout");
                                None
                            }
                        },
                        () = conn.close.cancelled() => None,
                    }
                }
            };
            if let Some(stream) = stream {
                let connection = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .into_owned();
                if let Err(e) = watch(connection, &conn, &open, limits).await {
                    trace!(%peer, "connection ended: {e}");
                }
            }
            open.conns
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            drop(slot);
        });
    }
    drop(listener);
    stopping.cancel();
    connections.close();
    if tokio::time::timeout(limits.drain, connections.wait())
        .await
        .is_err()
    {
        // The connection tasks end with the process; waiting longer would outlast the
        // grace.
        warn!("responses still in flight after the shutdown grace; closing their connections");
    }
}

/// Waits for a new connection's first bytes; whether to serve it. It is closed unserved
/// when nothing arrives within the header timeout, on a stop, and when it is asked to
/// make room with nothing in its socket. A request already in its socket when it is
/// asked is answered: the client sent it before the connection was chosen, and closing
/// would cut it off unanswered.
async fn first_bytes(tcp: &TcpStream, conn: &Conn, limits: Limits) -> bool {
    let mut byte = [0u8];
    let serve = tokio::select! {
        // A peek, not readiness: readiness may be reported with nothing to read.
        r = tcp.peek(&mut byte) => matches!(r, Ok(n) if n > 0),
        () = conn.close.cancelled() => false,
        () = conn.evict.cancelled() => has_bytes(tcp),
        () = tokio::time::sleep(limits.header_read_timeout) => false,
    };
    conn.arrived.store(serve, Ordering::Release);
    serve
}

/// Whether bytes wait in the socket's receive queue, asked of the kernel itself (the
/// runtime's readiness may not have caught up with it yet).
fn has_bytes(tcp: &TcpStream) -> bool {
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit()];
    matches!(socket2::SockRef::from(tcp).peek(&mut byte), Ok(n) if n > 0)
}

/// A connection as the accept loop serves it.
type Connection =
    auto::Connection<'static, TokioIo<Stream>, TowerToHyperService<Counted>, TokioExecutor>;

/// Drives one connection until it ends; closes it gracefully when it is told to (a
/// stop, an eviction), when it sent no request within the header timeout, or when it
/// had nothing in flight for the idle timeout. A connection told to close that does not
/// finish within the header timeout (or the stop's drain) is dropped.
async fn watch(
    connection: Connection,
    conn: &Conn,
    open: &Open,
    limits: Limits,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut connection = pin!(connection);
    let mut closing: Option<Instant> = None;
    // Asked to make room while its first request was arriving: left to its deadlines.
    let mut spared = false;
    let limit = || {
        if conn.used.load(Ordering::Acquire) {
            limits.idle_timeout
        } else {
            limits.header_read_timeout
        }
    };
    loop {
        let deadline = match closing {
            Some(since) => since + limits.header_read_timeout.max(limits.drain),
            None => {
                let idle_ms = conn.last_active.load(Ordering::Acquire);
                open.epoch + Duration::from_millis(idle_ms) + limit()
            }
        };
        tokio::select! {
            r = connection.as_mut() => return r,
            // A request ended: the deadline moves.
            () = conn.ended.notified(), if closing.is_none() => {}
            () = conn.close.cancelled(), if closing.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing = Some(Instant::now());
            }
            () = conn.evict.cancelled(), if closing.is_none() && !spared => {
                if !conn.used.load(Ordering::Acquire) {
                    spared = true;
                } else if conn.idle_since().is_some() {
                    // Making room at the cap, with nothing to answer: closed now.
                    return Ok(());
                } else {
                    connection.as_mut().graceful_shutdown();
                    closing = Some(Instant::now());
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                if closing.is_some() {
                    return Ok(());
                }
                // Idle past its limit, unless a request came in meanwhile (the deadline
                // is then computed again from its activity).
                if let Some(since) = conn.idle_since()
                    && open.now_ms().saturating_sub(since) >= limit().as_millis() as u64
                {
                    trace!("closing a connection idle for {:?}", limit());
                    if !conn.used.load(Ordering::Acquire) {
                        // It never sent a request: nothing to say goodbye to.
                        return Ok(());
                    }
                    connection.as_mut().graceful_shutdown();
                    closing = Some(Instant::now());
                }
            }
        }
    }
}

/// The router, counting a connection's requests in flight: a request is in flight
/// from its headers' arrival until its response body is done (a stream's, too).
#[derive(Clone)]
struct Counted {
    router: Router,
    conn: Arc<Conn>,
    open: Arc<Open>,
    /// Where the connection comes from: each request carries it (see `Peer`).
    peer: super::http::Peer,
}

impl<B> tower_service::Service<Request<B>> for Counted
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, std::convert::Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        req.extensions_mut().insert(self.peer);
        let guard = InFlight::start(self.conn.clone(), self.open.clone());
        let mut router = self.router.clone();
        Box::pin(async move {
            let response = tower_service::Service::call(&mut router, req.map(Body::new)).await?;
            Ok(response.map(|body| {
                Body::new(Guarded {
                    body,
                    _guard: guard,
                })
            }))
        })
    }
}

/// One request in flight on a connection; dropping it ends it.
struct InFlight {
    conn: Arc<Conn>,
    open: Arc<Open>,
}

impl InFlight {
    fn start(conn: Arc<Conn>, open: Arc<Open>) -> InFlight {
        conn.used.store(true, Ordering::Release);
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        conn.last_active.store(open.now_ms(), Ordering::Release);
        InFlight { conn, open }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn
            .last_active
            .store(self.open.now_ms(), Ordering::Release);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.conn.ended.notify_one();
    }
}

/// A response body that keeps its request in flight until it is done or dropped.
struct Guarded {
    body: Body,
    _guard: InFlight,
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Errors that concern one connection only (the peer gave up before it was accepted).
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected pair on loopback: the client's end, and the server's as accepted.
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (client, server)
    }

    fn limits() -> Limits {
        Limits {
            http2_max_streams: 100,
            max_connections: 1,
            header_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            drain: Duration::from_secs(1),
        }
    }

    /// Asked to make room with its request already in its socket, a new connection is
    /// served; with nothing there, it is closed.
    #[tokio::test]
    async fn a_new_connection_asked_to_make_room_is_served_only_if_its_request_is_there() {
        let (mut client, server) = pair().await;
        tokio::io::AsyncWriteExt::write_all(&mut client, b"GET / HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        // On loopback the bytes are in the server's socket once the peek sees them.
        while !has_bytes(&server) {
            tokio::task::yield_now().await;
        }
        let conn = Conn::new(0, CancellationToken::new());
        conn.evict.cancel();
        assert!(first_bytes(&server, &conn, limits()).await);
        assert!(conn.arrived.load(Ordering::Acquire));

        let (_client, server) = pair().await;
        let conn = Conn::new(0, CancellationToken::new());
        conn.evict.cancel();
        assert!(!first_bytes(&server, &conn, limits()).await);
        assert!(!conn.arrived.load(Ordering::Acquire));
    }

    /// Readiness alone is not a request: a silent connection waits, and one whose
    /// client hung up without a byte is not served.
    #[tokio::test]
    async fn first_bytes_waits_for_bytes_and_not_for_a_hang_up() {
        let (client, server) = pair().await;
        let conn = Conn::new(0, CancellationToken::new());
        let waiting = tokio::time::timeout(
            Duration::from_millis(200),
            first_bytes(&server, &conn, limits()),
        )
        .await;
        assert!(waiting.is_err(), "served a connection that sent nothing");
        drop(client);
        assert!(!first_bytes(&server, &conn, limits()).await);
    }

    /// The longest idle connections are asked first; a used one may go at once, a new
    /// silent one only after the grace, and one whose request is arriving not at all.
    #[test]
    fn eviction_takes_the_longest_idle_and_spares_the_new_and_the_arriving() {
        let grace = EVICT_GRACE.as_millis() as u64;
        let now = 10 * grace;
        let used = |t: u64| {
            let c = Conn::new(t, CancellationToken::new());
            c.used.store(true, Ordering::Release);
            c
        };
        let arriving = Conn::new(0, CancellationToken::new());
        arriving.arrived.store(true, Ordering::Release);
        let busy = used(0);
        busy.in_flight.store(1, Ordering::Release);
        let conns: Vec<Arc<Conn>> = [
            used(now - 1),                                        // 0: idle a moment
            used(now - 3 * grace),                                // 1: idle the longest
            used(now - 2 * grace),                                // 2
            Conn::new(now - grace / 2, CancellationToken::new()), // 3: new, silent
            arriving,                                             // 4
            busy,                                                 // 5
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        // The loop's clock reads `now`.
        let open = Open {
            epoch: Instant::now()
                .checked_sub(Duration::from_millis(now))
                .expect("the machine is up for longer than that"),
            conns: Mutex::new((0..).zip(conns.iter().cloned()).collect()),
        };
        let asked = |ids: &[usize]| {
            conns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.evict.is_cancelled())
                .map(|(id, _)| id)
                .eq(ids.iter().copied())
        };
        let first = open.evict_idle(2);
        assert_eq!(first.asked, 2);
        assert!(asked(&[1, 2]));
        let next = first.next.expect("the new connection is a later candidate");
        assert!(
            next <= EVICT_GRACE / 2 + Duration::from_millis(2),
            "{next:?}"
        );
        let second = open.evict_idle(10);
        assert_eq!(second.asked, 1);
        assert!(asked(&[0, 1, 2]));
    }
}

//! Accepting connections. `axum::serve` cannot set HTTP/2's limits, and a server whose
//! clients hold a stream per running task needs more than hyper's default of 200
//! concurrent streams on one connection; so this is our own small accept loop: HTTP/1.1
//! and HTTP/2 (h2c, prior knowledge) on one port, `TCP_NODELAY`, every connection a
//! tracked task, and a graceful shutdown that lets in-flight responses finish (within a
//! bound). It bounds what a client can hold: connections at once, and the time to send a
//! request's headers (a connection that dawdles is closed).

use std::io;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;
use tracing::{debug, trace, warn};

/// What the accept loop allows a client.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub http2_max_streams: u32,
    /// Connections open at once; past it, new ones wait in the listen backlog.
    pub max_connections: usize,
    /// Time for a request's headers to arrive (HTTP/1.1), and for an HTTP/2
    /// connection's keep-alive ping to be answered.
    pub header_read_timeout: Duration,
    /// How long a stop waits for in-flight responses.
    pub drain: Duration,
}

/// Serves `router` on `listener` until `stop` completes; then stops accepting, asks
/// every connection to close once its in-flight requests are answered, and waits for
/// them (at most `limits.drain`).
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
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
    let graceful = GracefulShutdown::new();
    let connections = TaskTracker::new();
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut stop = std::pin::pin!(stop);
    loop {
        // A free slot first: past the cap, connections wait in the kernel's backlog.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = &mut stop => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_per_connection(&e) => continue,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                warn!(error = %e, "cannot accept a connection; retrying in 1 s");
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
        let service = TowerToHyperService::new(router.clone());
        let connection = builder
            .serve_connection(TokioIo::new(tcp), service)
            .into_owned();
        let connection = graceful.watch(connection);
        connections.spawn(async move {
            if let Err(e) = connection.await {
                trace!(%peer, "connection ended: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, graceful.shutdown())
        .await
        .is_err()
    {
        warn!("responses still in flight after the shutdown grace; closing their connections");
    }
    connections.close();
    // The connection tasks end with the process; waiting longer would outlast the grace.
    let _ = tokio::time::timeout(Duration::from_secs(1), connections.wait()).await;
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

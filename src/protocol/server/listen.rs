//! Accepting connections. `axum::serve` cannot set HTTP/2's limits, and a server whose
//! clients hold a stream per running task needs more than hyper's default of 200
//! concurrent streams on one connection; so this is our own small accept loop: HTTP/1.1
//! and HTTP/2 (h2c, prior knowledge) on one port, `TCP_NODELAY`, every connection a
//! tracked task, and a graceful shutdown that lets in-flight responses finish.

use std::io;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;
use tracing::{debug, trace, warn};

/// Serves `router` on `listener` until `stop` completes; then stops accepting, asks
/// every connection to close once its in-flight requests are answered, and waits for
/// them.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    http2_max_streams: u32,
    stop: impl Future<Output = ()>,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http2().max_concurrent_streams(http2_max_streams);
    let graceful = GracefulShutdown::new();
    let connections = TaskTracker::new();
    let mut stop = std::pin::pin!(stop);
    loop {
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
        });
    }
    drop(listener);
    graceful.shutdown().await;
    connections.close();
    connections.wait().await;
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

//! While `serve` waits for its store at start (a PostgreSQL server that is starting,
//! restarting or not reachable yet): the port is open and answers the probes, so that
//! an orchestrator of containers sees a live process that is not ready, instead of one
//! that exits and is restarted in a loop. `/healthz` answers 200, `/readyz` 503 with
//! why; every other request 503 with `Retry-After`. In plain HTTP only: on a port with
//! TLS, nothing answers until the store opens (connections wait in the backlog).

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use tokio::net::TcpListener;

/// Answers the probes on `listener` for `wait`, saying the store is not open: `why`.
/// The connections it took are closed when it returns.
pub async fn answer_probes(listener: &TcpListener, why: &str, wait: Duration) {
    let why = why.to_owned();
    let unready = move || {
        let body = json!({ "status": "starting", "checks": { "store": why.clone() } });
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            axum::Json(body),
        )
            .into_response()
    };
    let ready = unready.clone();
    let router = Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(json!({ "status": "ok" })) }),
        )
        .route("/readyz", get(move || async move { ready() }))
        .fallback(move || async move { unready() });
    // Owned here: dropped, and so closed, with this future.
    let mut connections = tokio::task::JoinSet::new();
    let accepting = async {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let service = TowerToHyperService::new(router.clone());
            connections.spawn(async move {
                let _ = Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    };
    let _ = tokio::time::timeout(wait, accepting).await;
}

/// The waits between tries to open the store: 1 s, doubling, at most 30 s.
pub fn waits() -> impl Iterator<Item = Duration> {
    backoff::Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30))
        .with_jitter(backoff::Jitter::Up(0.1))
        .waits()
}

//! The A2A server for any [`AgentExecutor`] (its type erased at the builder): both generations (v1.0 and v0.3)
//! over JSON-RPC 2.0 and v1.0 over HTTP+JSON on one port, with SSE streaming, our own
//! accept loop, durable stores and replicas sharing one.
//!
//! This module turns HTTP requests into calls on the agent and the task manager, and
//! their results into JSON-RPC responses and SSE frames. It checks everything the spec
//! lets a client get wrong and answers with the spec's error code, naming the field:
//! malformed JSON, non-requests, unknown methods, bad params, unknown or finished tasks,
//! capabilities the card does not declare, media types the agent does not take.

mod agent;
mod auth;
mod card_keys;
mod cluster;
#[cfg(feature = "grpc")]
mod grpc;
mod handler;
mod http;
mod jsonrpc;
mod listen;
pub mod observe;
mod push;
mod request_handler;
mod rest;
mod sink_error;
mod stream;
mod streams;
mod task_manager;
mod tls;
#[cfg(feature = "v0_3")]
mod v0_3;
mod v1;
mod version;
pub use crate::version::Versions;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::routing::{get, post};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::warn;

use crate::store::{
    ClusterRequest, Forwarded, InMemoryTaskStore, LoggedEvent, StoreError, TaskStore, apply_event,
};
use agent::ErasedExecutor;
pub use agent::{
    AgentExecutor, CancelContext, EventSink, Queued, RequestContext, ResumeContext, SinkError,
};
pub use auth::{
    Access, Authorize, Caller, Credential, InboundAuth, OwnTasks, PresentedToken, Principal,
    Refusal, UNAUTHENTICATED, VerifyToken,
};
use axum::http::HeaderMap;
pub use card_keys::{CardKeys, JWKS_PATH};
use cluster::Placement;
use handler::store_error;
use http::{card, jwks};
use jsonrpc::rpc;
pub use listen::{BACKLOG, bind};
pub use push::{NOTIFICATION_TOKEN_HEADER, PushNotifier, check_webhook};
pub use request_handler::{RequestHandler, TaskEvents, WeakRequestHandler};
use rest::rest;
use stream::{ends_on, ends_stream, live_events};
use task_manager::{ActorHandle, Ending, Origin, Subscription, TaskManager, Until, Update};
pub use tls::{CertFiles, RECHECK_EVERY, TlsError};

use super::card::AgentCard;
use super::jsonrpc::{IncomingRequest, RequestId, Response as RpcResponse};

pub use crate::card::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};

/// Tunables of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Path of the JSON-RPC endpoint (the card's first interface should point here).
    pub rpc_path: String,
    /// Largest request body accepted; larger ones get HTTP 413 with a JSON-RPC error.
    pub max_body_bytes: usize,
    /// Interval of SSE keep-alive comments while a stream is idle.
    pub keep_alive: Duration,
    /// Timeout of one webhook POST.
    pub push_timeout: Duration,
    /// Allow webhooks on loopback, private and link-local addresses (refused by default,
    /// against server-side request forgery).
    pub allow_private_webhooks: bool,
    /// Credentials every JSON-RPC call must present; none when `None`. Declare them on
    /// the card with [`InboundAuth::card_security`].
    pub auth: Option<InboundAuth>,
    /// How long `tasks/cancel` waits for the agent to reach a terminal state.
    pub cancel_wait: Duration,
    /// How long shutdown waits for running agents after canceling them.
    pub shutdown_grace: Duration,
    /// Web origins (`https://app.example.com`) whose pages may call this server from a
    /// browser; a request from any other foreign origin is refused (403). A page the
    /// server serves itself is never foreign. Empty by default: no CORS.
    pub cors_origins: Vec<String>,
    /// Connections open at once. At the cap, connections with nothing in flight are
    /// closed (longest idle first) to make room; while none is idle, more wait in the
    /// listen backlog.
    pub max_connections: usize,
    /// How long a connection with nothing in flight is kept open (HTTP keep-alive).
    /// A new connection must send its first request within `header_read_timeout`.
    pub idle_timeout: Duration,
    /// Time a client has to send a request's headers (and to answer an HTTP/2 ping), and
    /// to send its body; a connection that dawdles is closed.
    pub header_read_timeout: Duration,
    /// Most parts one message may have.
    pub max_parts: usize,
    /// Most connections one caller may hold open with streams (streamed messages and
    /// subscriptions, on any binding) at once: its principal, or its address when it
    /// presents no credential. Over HTTP/1.1 each stream holds a connection until its
    /// task ends; streams on a connection it already streams on (HTTP/2) count once.
    pub max_streaming_connections_per_caller: usize,
    /// Most push notification configs one task may have (each event is delivered to
    /// each: more would make one task an amplifier of requests to anywhere).
    pub max_push_configs: usize,
    /// Most bytes of a message's or request's `metadata`, as JSON.
    pub max_metadata_bytes: usize,
    /// Most bytes of an id (task, context, message, push config).
    pub max_id_bytes: usize,
    /// Whether a message sent again with a `messageId` that already started a task is
    /// answered with that task (a retry after a lost response) — only when it is the
    /// same message (its parts and conversation) from the same caller; another message
    /// reusing the id is refused. On by default; off, every message starts a new task
    /// (what a conformance kit that reuses ids across tests expects).
    pub message_idempotency: bool,
    /// Serve the gRPC binding (`lf.a2a.v1.A2AService`) on the same port, and list it on
    /// the card (v1.0 only). On by default; a server built without the `grpc` feature
    /// serves none.
    pub grpc: bool,
    /// Most requests one HTTP/2 connection may have open at once. A streaming call
    /// holds its stream until the task ends, so a client multiplexing many running
    /// tasks over one connection needs room (hyper's own default is 200).
    pub http2_max_streams: u32,
    /// The A2A generations served (both by default; 1.0 alone, whatever this says, in
    /// a server built without the `v0_3` feature).
    pub generations: Versions,
    /// Serve over TLS with this certificate and key (reloaded when the files change);
    /// plain HTTP when `None`.
    pub tls: Option<Arc<CertFiles>>,
    /// Makes the trace context a request carries the parent of its span (a tracing
    /// setup's; none by default).
    pub trace_parent: TraceParent,
    /// Told of every request answered and every stream opened and closed (an
    /// application's metrics; none by default).
    pub observer: observe::Observe,
}

/// How a request's span adopts the trace context its headers carry (`traceparent`):
/// given by whoever exports traces, so that this layer needs no tracing backend.
#[derive(Clone, Default)]
pub struct TraceParent(Option<Arc<AdoptParent>>);

/// What [`TraceParent`] calls: the request's headers, and its span.
type AdoptParent = dyn Fn(&HeaderMap, &tracing::Span) + Send + Sync;

impl TraceParent {
    /// A hook that makes a request's span continue the trace its headers carry (`adopt`).
    pub fn new(adopt: impl Fn(&HeaderMap, &tracing::Span) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(adopt)))
    }

    pub(crate) fn adopt(&self, headers: &HeaderMap, span: &tracing::Span) {
        if let Some(f) = &self.0 {
            f(headers, span);
        }
    }
}

impl std::fmt::Debug for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "TraceParent(set)"
        } else {
            "TraceParent(none)"
        })
    }
}

impl ServerConfig {
    /// The application's rules of who reaches whose tasks ([`OwnTasks`] unless
    /// [`InboundAuth::authorize`] says).
    pub fn authorizer(&self) -> &dyn Authorize {
        self.auth
            .as_ref()
            .map_or(&OwnTasks, InboundAuth::authorizer)
    }

    /// Whether the gRPC binding is served: asked for, and v1.0 served (gRPC has no v0.3).
    pub fn serves_grpc(&self) -> bool {
        cfg!(feature = "grpc") && self.grpc && self.generations != Versions::V0_3
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            rpc_path: "/".to_owned(),
            max_body_bytes: 10 * 1024 * 1024,
            keep_alive: Duration::from_secs(15),
            push_timeout: Duration::from_secs(10),
            allow_private_webhooks: false,
            auth: None,
            cancel_wait: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            http2_max_streams: 1_000,
            cors_origins: Vec::new(),
            max_connections: 4_096,
            idle_timeout: Duration::from_secs(60),
            header_read_timeout: Duration::from_secs(10),
            max_parts: 1_000,
            max_push_configs: 10,
            max_streaming_connections_per_caller: 256,
            max_metadata_bytes: 64 * 1024,
            max_id_bytes: 256,
            message_idempotency: true,
            grpc: true,
            generations: Versions::Both,
            tls: None,
            trace_parent: TraceParent::default(),
            observer: observe::Observe::default(),
        }
    }
}

/// An A2A server for one agent. Cheap to clone.
#[derive(Clone)]
pub struct A2aServer {
    inner: Arc<Inner>,
}

struct Inner {
    agent: Arc<dyn ErasedExecutor>,
    /// The cards it publishes, replaced whole ([`A2aServer::replace_cards`]).
    cards: std::sync::RwLock<Arc<Cards>>,
    /// The key its cards are signed with, if they are ([`A2aServer::sign_cards_with`]).
    card_keys: std::sync::RwLock<Option<Arc<CardKeys>>>,
    manager: TaskManager,
    config: ServerConfig,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    /// Requests with a large body are handled one at a time: parsing one costs many
    /// times its size for a moment, and memory a process has grown to is seldom given
    /// back; one at a time, the peak is one large request's, whatever arrives at once.
    large_bodies: Arc<tokio::sync::Semaphore>,
    /// Push configs are stored one at a time, so the bound a task has on them holds
    /// (see `Inner::store_push_config`).
    push_writes: tokio::sync::Mutex<()>,
    /// The streams each caller holds open.
    streams: Arc<streams::OpenStreams>,
}

/// The cards a server publishes: the public one (and its bytes as served, with their
/// validators: a strong `ETag`, a digest of the bytes, and `Last-Modified`, when they
/// were built), and the authenticated extended one.
struct Cards {
    card: AgentCard,
    json: Bytes,
    validators: http::CardValidators,
    extended: Option<AgentCard>,
}

impl Cards {
    fn new(
        card: AgentCard,
        extended: Option<AgentCard>,
        config: &ServerConfig,
        keys: Option<&CardKeys>,
    ) -> Cards {
        let json = Bytes::from(http::published_card(&card, config, keys).to_string());
        let validators = http::CardValidators::of(&json);
        Cards {
            card,
            json,
            validators,
            extended,
        }
    }
}

impl Inner {
    /// The cards as published now.
    fn cards(&self) -> Arc<Cards> {
        self.cards.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The keys cards are signed with now, if they are.
    fn card_keys(&self) -> Option<Arc<CardKeys>> {
        self.card_keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Bodies past this many bytes take their turn (see `Inner::large_bodies`).
const LARGE_BODY: usize = 1 << 20;

/// Builds an [`A2aServer`].
pub struct A2aServerBuilder {
    agent: Arc<dyn ErasedExecutor>,
    card: AgentCard,
    extended_card: Option<AgentCard>,
    store: Option<Arc<dyn TaskStore>>,
    config: ServerConfig,
    card_keys: Option<CardKeys>,
}

impl A2aServerBuilder {
    /// The card served by `agent/getAuthenticatedExtendedCard` (the public card must set
    /// `capabilities.extendedAgentCard`).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Where tasks are kept (in memory by default).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Signs the cards it publishes with `keys` (and publishes their key set at
    /// [`JWKS_PATH`]).
    pub fn card_keys(mut self, keys: CardKeys) -> Self {
        self.card_keys = Some(keys);
        self
    }

    /// The server's settings.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// The server.
    pub fn build(mut self) -> A2aServer {
        self.config.generations = self.config.generations.built();
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(InMemoryTaskStore::new()));
        let shutdown = CancellationToken::new();
        let tracker = TaskTracker::new();
        let push = self.card.supports_push_notifications().then(|| {
            PushNotifier::new(
                store.clone(),
                self.config.push_timeout,
                self.config.allow_private_webhooks,
            )
        });
        let manager = TaskManager::new(store, push, tracker.clone(), shutdown.clone());
        let cards = Cards::new(
            self.card,
            self.extended_card,
            &self.config,
            self.card_keys.as_ref(),
        );
        A2aServer {
            inner: Arc::new(Inner {
                agent: self.agent,
                cards: std::sync::RwLock::new(Arc::new(cards)),
                card_keys: std::sync::RwLock::new(self.card_keys.map(Arc::new)),
                manager,
                config: self.config,
                shutdown,
                tracker,
                large_bodies: Arc::new(tokio::sync::Semaphore::new(1)),
                push_writes: tokio::sync::Mutex::new(()),
                streams: Arc::default(),
            }),
        }
    }
}

impl A2aServer {
    /// A server with default settings and an in-memory store.
    pub fn new(agent: impl AgentExecutor, card: AgentCard) -> Self {
        Self::builder(agent, card).build()
    }

    /// A server for `agent`: the one place its type is known; the server behind it is
    /// compiled once, whatever the agent.
    pub fn builder(agent: impl AgentExecutor, card: AgentCard) -> A2aServerBuilder {
        A2aServerBuilder {
            agent: Arc::new(agent),
            card,
            extended_card: None,
            store: None,
            config: ServerConfig::default(),
            card_keys: None,
        }
    }

    /// The public card, as published now.
    pub fn card(&self) -> AgentCard {
        self.inner.cards().card.clone()
    }

    /// Publishes `card` (and `extended`) from now on, in place of the cards before (the
    /// agent's skills changed, say). Requests in flight finish with the cards they
    /// started with; the card's validators change with its bytes.
    pub fn replace_cards(&self, card: AgentCard, extended: Option<AgentCard>) {
        let keys = self.inner.card_keys();
        let cards = Arc::new(Cards::new(
            card,
            extended,
            &self.inner.config,
            keys.as_deref(),
        ));
        *self.inner.cards.write().unwrap_or_else(|p| p.into_inner()) = cards;
    }

    /// The keys cards are signed with now, if they are.
    pub fn card_keys(&self) -> Option<Arc<CardKeys>> {
        self.inner.card_keys()
    }

    /// Signs the cards with `keys` from now on (a rotated key, say: see
    /// [`CardKeys::rotated`]), publishing them again.
    pub fn sign_cards_with(&self, keys: CardKeys) {
        *self
            .inner
            .card_keys
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(keys));
        let cards = self.inner.cards();
        self.replace_cards(cards.card.clone(), cards.extended.clone());
    }

    /// The server without a transport: every operation as a method (for calling the
    /// agent in process, testing it without a socket, or another transport).
    pub fn handler(&self) -> RequestHandler {
        RequestHandler {
            inner: self.inner.clone(),
        }
    }

    /// The axum router: both card paths and the card's signing keys, public; the
    /// JSON-RPC endpoint and the HTTP+JSON routes (and gRPC's) behind the layer that
    /// authenticates them; all behind the browser guard (foreign origins refused unless
    /// allowed, CORS for the allowed ones) and the observing layer. Mount it in an app
    /// of your own, or add layers (tracing, say) around it as needed.
    pub fn router(&self) -> Router {
        let origins = Arc::new(self.inner.config.cors_origins.clone());
        let bindings = Router::new().route(&self.inner.config.rpc_path, post(rpc));
        #[cfg(feature = "grpc")]
        let bindings = if self.inner.config.serves_grpc() {
            bindings.route(grpc::PATH, post(grpc::serve))
        } else {
            bindings
        };
        let bindings = bindings
            .fallback(rest)
            .layer(axum::middleware::from_fn_with_state(
                self.inner.clone(),
                http::authenticate,
            ));
        Router::new()
            .route(AGENT_CARD_PATH, get(card))
            .route(LEGACY_AGENT_CARD_PATH, get(card))
            .route(JWKS_PATH, get(jwks))
            .merge(bindings)
            .with_state(self.inner.clone())
            .layer(axum::middleware::from_fn_with_state(
                self.inner.config.observer.clone(),
                observe::layer,
            ))
            .layer(axum::middleware::from_fn(move |req, next| {
                http::browser_guard(origins.clone(), req, next)
            }))
    }

    /// Serves on `listener` until `signal` completes, then shuts down gracefully.
    /// HTTP/1.1 and HTTP/2 share the port: over TLS (ALPN) with
    /// [`ServerConfig::tls`], else in the clear (h2c).
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        signal: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let router = self.router();
        self.serve_router(listener, router, signal).await
    }

    /// Like [`A2aServer::serve`], serving `router`: this server's
    /// [`router`](A2aServer::router) with layers or routes of the caller's.
    pub async fn serve_router(
        self,
        listener: tokio::net::TcpListener,
        router: Router,
        signal: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let token = self.inner.shutdown.clone();
        let stop = async move {
            tokio::select! {
                () = signal => token.cancel(),
                () = token.cancelled() => {}
            }
        };
        let config = &self.inner.config;
        let limits = listen::Limits {
            http2_max_streams: config.http2_max_streams,
            max_connections: config.max_connections,
            header_read_timeout: config.header_read_timeout,
            idle_timeout: config.idle_timeout,
            drain: config.shutdown_grace,
        };
        let tls = config.tls.as_ref().map(|files| files.server_config());
        listen::serve(listener, router, limits, tls, stop).await;
        self.shutdown().await;
        Ok(())
    }

    /// Resumes the work of every unfinished task in the store (after a restart): each
    /// is handed to [`AgentExecutor::resume`] in a task of its own. Returns how many.
    /// On a store several servers share ([`TaskStore::cluster`]) it starts the loop
    /// that claims, as long as the server runs, the tasks nobody runs — resumed the
    /// same way — and returns 0.
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let inner = &self.inner;
        let store = inner.manager.store().clone();
        if store.cluster().is_some() {
            // Servers sharing the store: this one resumes what it claims, now and as
            // long as it runs (see `cluster`).
            self.inner
                .tracker
                .spawn(cluster::cluster_loop(self.inner.clone()));
            return Ok(0);
        }
        let unfinished = store.unfinished().await?;
        let n = unfinished.len();
        for (task, seq) in unfinished {
            inner.resume_task(task, seq).await?;
        }
        Ok(n)
    }

    /// Gives up this server's tasks to the other servers sharing its store, at once
    /// (after its executors have stopped, at a graceful stop); nothing for a store this
    /// server has to itself.
    pub async fn release(&self) -> Result<(), StoreError> {
        match self.inner.manager.store().cluster() {
            Some(cluster) => cluster.release().await,
            None => Ok(()),
        }
    }

    /// Removes terminal tasks last changed before `before` from the store.
    pub async fn prune(&self, before: std::time::SystemTime) -> Result<usize, StoreError> {
        self.inner.manager.store().prune(before).await
    }

    /// Cancels running agents and open streams, and waits (bounded) for them to end.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        if tokio::time::timeout(self.inner.config.shutdown_grace, self.inner.tracker.wait())
            .await
            .is_err()
        {
            warn!("agents still running after the shutdown grace period");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::types::media_type_matches;

    #[test]
    fn media_types_match_with_wildcards_and_parameters() {
        assert!(media_type_matches(
            "text/plain",
            "text/plain; charset=utf-8"
        ));
        assert!(media_type_matches("*/*", "image/png"));
        assert!(media_type_matches("image/*", "image/png"));
        assert!(media_type_matches("text", "text/plain"));
        assert!(!media_type_matches("image/png", "text/plain"));
        assert!(!media_type_matches("application/json", "text/plain"));
        assert!(media_type_matches("Text/PLAIN", " text/plain ;q=1"), "case");
        assert!(media_type_matches("image/png", "*"), "a bare wildcard");
        assert!(!media_type_matches("text/plain", "text/html"));
    }

    /// A server built without the `v0_3` feature serves A2A 1.0 alone, whatever its
    /// config asks: a 0.3 request is refused as a version it does not serve, and its
    /// card is 1.0's.
    #[cfg(not(feature = "v0_3"))]
    #[tokio::test]
    async fn a_server_without_v0_3_serves_1_0_alone() {
        use tower::ServiceExt;

        struct Idle;
        impl super::AgentExecutor for Idle {
            async fn execute(
                &self,
                _: super::RequestContext,
                _: super::EventSink,
            ) -> Result<(), crate::RpcError> {
                Ok(())
            }
        }
        let card = crate::card::AgentCard::new("Idle", "Does nothing", "http://127.0.0.1:1/");
        let server = super::A2aServer::new(Idle, card);
        let read = |method: &'static str, path: &'static str, body: &'static str| {
            let request = axum::http::Request::builder()
                .method(method)
                .uri(path)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body))
                .unwrap();
            let router = server.router();
            async move {
                let answer = router.oneshot(request).await.unwrap();
                let body = http_body_util::BodyExt::collect(answer.into_body()).await;
                serde_json::from_slice::<serde_json::Value>(&body.unwrap().to_bytes()).unwrap()
            }
        };
        let old = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}"#;
        let answer = read("POST", "/", old).await;
        assert_eq!(answer["error"]["code"], -32009, "{answer}");
        let card = read("GET", super::AGENT_CARD_PATH, "").await;
        assert!(card.get("protocolVersion").is_none(), "{card}");
        let interfaces = card["supportedInterfaces"].as_array().unwrap();
        assert!(
            interfaces.iter().all(|i| i["protocolVersion"] == "1.0"),
            "{card}"
        );
    }
}

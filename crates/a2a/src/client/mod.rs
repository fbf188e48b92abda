//! The A2A client: Agent Card discovery, the choice of interface, and every operation —
//! over A2A 0.3 JSON-RPC, A2A 1.0 JSON-RPC, HTTP+JSON or (with the `grpc` feature) gRPC,
//! behind one API on the model ([`crate::types`]: the proto's requests and answers,
//! whatever generation the agent speaks) — with the streaming ones as typed async
//! streams of events.
//!
//! Errors keep apart what a caller must handle differently: the agent could not be
//! reached or timed out ([`ClientError::Transport`], [`ClientError::Timeout`]), it
//! answered with an HTTP error status, it answered with a JSON-RPC error (code intact),
//! or it broke the protocol.

mod card;
mod check;
mod error;
mod events;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
#[cfg(feature = "server")]
mod in_process;
mod interface;
mod list;
mod multiplex;
mod rest;
mod rpc;
mod send;
mod transport;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use ::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use futures::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tracing::warn;

use crate::Version;
use crate::error::ErrorCode;
pub use crate::https::{ClientTls, TlsError};
use crate::proto::pb as v1t;
pub use card::{CardFetch, CardResolver, MAX_CARD_BYTES};
pub use error::ClientError;
pub use interface::{Binding, Choice, Interface, Preference, choose as choose_interfaces};
use rest::RequestLine;
pub use send::{HttpClient, POOL_IDLE_TIMEOUT};
pub use transport::Transport;
use transport::V1;
#[cfg(feature = "v0_3")]
use transport::V03;

use super::method::Method;
use crate::card::AgentCard;
use crate::types::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, SendMessageRequest, SendMessageResult, StreamEvent,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};

pub use crate::https::USER_AGENT;

/// A stream of events from `SendStreamingMessage` or `SubscribeToTask`.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ClientError>> + Send>>;

/// Credentials sent with every request.
#[derive(Clone)]
pub enum ClientAuth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// An API key in a header, e.g. `X-API-Key`.
    ApiKey {
        /// The header's name.
        header: String,
        /// The key.
        value: String,
    },
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientAuth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            ClientAuth::ApiKey { header, .. } => write!(f, "ApiKey({header}: <redacted>)"),
        }
    }
}

/// Options of an [`A2aClient`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Bound on one unary call, and on receiving a stream's response headers.
    pub timeout: Duration,
    /// Bound on the silence between two chunks of a stream (keep-alives count); `None`
    /// waits as long as the server keeps the connection open.
    pub stream_idle_timeout: Option<Duration>,
    /// Largest SSE event, or answer to a unary call, accepted.
    pub max_event_bytes: usize,
    /// Credentials sent with every call (`None`: none).
    pub auth: Option<ClientAuth>,
    /// Extra headers on every request.
    pub headers: Vec<(String, String)>,
    /// The TLS of gRPC calls over `https`: the authorities to trust instead of the
    /// public ones, and the certificate to present (`None`: the public authorities, no
    /// certificate). The other bindings take theirs from the HTTP client given.
    pub grpc_tls: Option<ClientTls>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            stream_idle_timeout: None,
            max_event_bytes: 16 * 1024 * 1024,
            auth: None,
            headers: Vec::new(),
            grpc_tls: None,
        }
    }
}

impl ClientConfig {
    /// The headers this config adds to every request.
    pub fn header_map(&self) -> Result<HeaderMap, ClientError> {
        let mut map = HeaderMap::new();
        let bad = |name: &str| ClientError::Config(format!("invalid header {name:?}"));
        for (k, v) in &self.headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad(k))?;
            let value = HeaderValue::from_str(v).map_err(|_| bad(k))?;
            map.insert(name, value);
        }
        match &self.auth {
            Some(ClientAuth::Bearer(token)) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| bad("Authorization"))?;
                v.set_sensitive(true);
                map.insert(header::AUTHORIZATION, v);
            }
            Some(ClientAuth::ApiKey { header, value }) => {
                let name = HeaderName::from_bytes(header.as_bytes()).map_err(|_| bad(header))?;
                let mut v = HeaderValue::from_str(value).map_err(|_| bad(header))?;
                v.set_sensitive(true);
                map.insert(name, v);
            }
            None => {}
        }
        Ok(map)
    }
}

/// A client of one agent: the interfaces it may call, best first, and the one it calls
/// now (it moves down the list when the agent answers VersionNotSupported). Cheap to
/// clone; clones share the choice.
#[derive(Clone)]
pub struct A2aClient {
    http: HttpClient,
    interfaces: Arc<[Interface]>,
    /// Each interface's URL parsed once (`None` if it does not parse: the call then
    /// reports it), so that a call does not parse it again.
    urls: Arc<[Option<::http::Uri>]>,
    current: Arc<AtomicUsize>,
    config: Arc<ClientConfig>,
    headers: Arc<HeaderMap>,
    next_id: Arc<AtomicI64>,
    /// When its calls must be answered by (sent as gRPC's `grpc-timeout`).
    deadline: Option<std::time::Instant>,
    /// A transport that takes the calls instead of the interfaces (a server of this
    /// process, or an application's own).
    transport: Option<Arc<dyn Transport>>,
    /// The gRPC connections, one per interface (made on first use).
    #[cfg(feature = "grpc")]
    channels: Arc<grpc::Channels>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("interface", self.interface())
            .finish_non_exhaustive()
    }
}

/// Which redirects a client follows. None by default: an agent (or whoever answers in
/// its place) must not be able to send a call, with its credentials and headers, to
/// another server — a cloud metadata address, say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Redirects {
    /// A 3xx is an error naming where it pointed ([`ClientError::Redirect`]).
    #[default]
    Never,
    /// Followed (at most [`MAX_REDIRECTS`]) while they stay on the origin (scheme, host
    /// and port) of the URL first requested; one to another origin is an error.
    SameOrigin,
}

/// Most redirects a [`Redirects::SameOrigin`] client follows for one request.
pub const MAX_REDIRECTS: usize = 5;

/// How an [`HttpClient`] is made: [`http_client_for`] takes it; the defaults are
/// [`http_client`]'s.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Speak only HTTP/2: over `http://` without an upgrade (h2c, "prior knowledge"),
    /// every call to one host sharing one connection, a stream each, so that a
    /// streaming call waiting on a slow task costs a stream, not a connection.
    pub http2: bool,
    /// Whether 3xx answers are followed.
    pub redirects: Redirects,
    /// How long an unused connection stays in the pool ([`POOL_IDLE_TIMEOUT`]): less
    /// than the servers called keep one open.
    pub pool_idle_timeout: Duration,
    /// The agent's own authorities and the client's certificate (`None`: the public
    /// authorities, no certificate).
    pub tls: Option<ClientTls>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            http2: false,
            redirects: Redirects::Never,
            pool_idle_timeout: send::POOL_IDLE_TIMEOUT,
            tls: None,
        }
    }
}

/// A shared HTTP client with this crate's user agent: HTTP/1.1, or HTTP/2 where TLS
/// negotiates it. It follows no redirect.
pub fn http_client() -> HttpClient {
    http_client_with(false, Redirects::Never)
}

/// A shared HTTP client following `redirects`; with `http2`, one that speaks only
/// HTTP/2 (see [`HttpOptions::http2`]).
pub fn http_client_with(http2: bool, redirects: Redirects) -> HttpClient {
    http_client_for(HttpOptions {
        http2,
        redirects,
        ..HttpOptions::default()
    })
    .expect("the HTTP client's TLS backend could not be initialized")
}

/// Like [`http_client_with`], with `tls`: the agent's own authorities and the client's
/// certificate. An error says which of them was refused, and why (a key that does not
/// parse, say).
pub fn http_client_tls(
    http2: bool,
    redirects: Redirects,
    tls: &ClientTls,
) -> Result<HttpClient, TlsError> {
    http_client_for(HttpOptions {
        http2,
        redirects,
        tls: Some(tls.clone()),
        ..HttpOptions::default()
    })
}

/// An HTTP client made as `options` say. Fails only on TLS material that is refused
/// (or a TLS backend that cannot be set up).
pub fn http_client_for(options: HttpOptions) -> Result<HttpClient, TlsError> {
    let builder = builder(
        options.tls.as_ref(),
        options.http2,
        options.pool_idle_timeout,
    )?;
    let builder = if options.http2 {
        builder.http2_prior_knowledge()
    } else {
        builder
    };
    let general = builder
        .redirect(redirect_policy(options.redirects))
        .build()
        .map_err(|e| TlsError::Backend(e.to_string()))?;
    let direct = match direct(options.redirects) {
        true => Some(crate::https::rustls_config(options.tls.as_ref())?),
        false => None,
    };
    Ok(HttpClient::new(general, direct, options.http2))
}

/// Set (to anything but empty), every call of a client built from then on goes through
/// reqwest: what `bench` compares the direct path against (docs/benchmarks.md).
pub const VIA_REQWEST_VAR: &str = "A2A_HTTP_VIA_REQWEST";

/// Whether calls may skip reqwest: when they follow no redirect, no proxy is set, and
/// [`VIA_REQWEST_VAR`] is not (see [`send`]).
fn direct(redirects: Redirects) -> bool {
    redirects == Redirects::Never
        && !proxy_in_env()
        && std::env::var_os(VIA_REQWEST_VAR).is_none_or(|v| v.is_empty())
}

fn redirect_policy(redirects: Redirects) -> reqwest::redirect::Policy {
    match redirects {
        Redirects::Never => reqwest::redirect::Policy::none(),
        Redirects::SameOrigin => reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !same || attempt.previous().len() > MAX_REDIRECTS {
                // Not followed: the 3xx itself reaches `check_status`, which names it.
                attempt.stop()
            } else {
                attempt.follow()
            }
        }),
    }
}

/// reqwest with our settings. Building fails only when the TLS backend cannot be set up
/// (reqwest's own `Client::new` panics then too); falling back to a default client would
/// silently drop the connect timeout and the user agent, so it is not done.
fn builder(
    tls: Option<&ClientTls>,
    http2_only: bool,
    pool_idle_timeout: Duration,
) -> Result<reqwest::ClientBuilder, TlsError> {
    let builder = crate::https::reqwest_builder(tls, http2_only)?
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(pool_idle_timeout);
    Ok(if proxy_in_env() {
        builder
    } else {
        // Exactly what reqwest would do, without asking an empty proxy list about every
        // request (about 1% of a workflow run's CPU).
        builder.no_proxy()
    })
}

/// The variables reqwest reads for a proxy (HTTP for `http://` URLs, HTTPS for
/// `https://`, ALL for both, either case). When one is set, calls go through that
/// proxy, except to the hosts `NO_PROXY` lists, as curl's do.
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Whether a client built now would send some calls through a proxy: a proxy variable
/// is set (on macOS and Windows the system's settings count too, so there it is
/// always assumed).
fn proxy_in_env() -> bool {
    cfg!(any(target_os = "macos", windows))
        || PROXY_VARS
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// Runs `$body` with `$at` bound to the client's current interface, moving on to the
/// next generation's when the agent turns the version down.
macro_rules! on_interface {
    ($self:ident, |$at:ident| $body:expr) => {{
        let mut i = $self.current.load(Ordering::Relaxed);
        loop {
            let $at = &$self.interfaces[i];
            let result = $body;
            match $self.fall_back(i, &result) {
                Some(next) => i = next,
                None => break result,
            }
        }
    }};
}

impl A2aClient {
    /// A client of the JSON-RPC endpoint at `endpoint`, speaking A2A 0.3 (1.0 in a
    /// client built without the `v0_3` feature); [`A2aClient::speaking`] picks another.
    pub fn new(endpoint: impl Into<String>, config: ClientConfig) -> Result<Self, ClientError> {
        Self::with_http(http_client(), endpoint, config)
    }

    /// Like [`A2aClient::new`], sharing an existing HTTP client (and its connection pool).
    pub fn with_http(
        http: HttpClient,
        endpoint: impl Into<String>,
        config: ClientConfig,
    ) -> Result<Self, ClientError> {
        let generation = match cfg!(feature = "v0_3") {
            true => Version::V0_3,
            false => Version::V1_0,
        };
        let at = Interface::jsonrpc(endpoint, generation);
        Self::with_interfaces(http, vec![at], config)
    }

    /// A client of `interfaces`, tried in order (see [`choose_interfaces`]).
    pub fn with_interfaces(
        http: HttpClient,
        interfaces: Vec<Interface>,
        config: ClientConfig,
    ) -> Result<Self, ClientError> {
        let urls = interfaces
            .iter()
            .map(|at| {
                send::parse_uri(&at.url)
                    .map(Some)
                    .map_err(|detail| ClientError::InvalidUrl {
                        url: at.url.clone(),
                        detail,
                    })
            })
            .collect::<Result<Arc<[_]>, _>>()?;
        if interfaces.is_empty() {
            return Err(ClientError::Config("no interface to call".into()));
        }
        // What this build does not speak is refused here, not at every call.
        #[cfg(not(feature = "v0_3"))]
        if let Some(at) = interfaces.iter().find(|at| at.protocol == Version::V0_3) {
            return Err(no_v0_3(&at.url));
        }
        #[cfg(not(feature = "grpc"))]
        if let Some(at) = interfaces.iter().find(|at| at.binding == Binding::Grpc) {
            return Err(no_grpc(at));
        }
        let headers = config.header_map()?;
        Ok(Self {
            http,
            interfaces: interfaces.into(),
            urls,
            current: Arc::new(AtomicUsize::new(0)),
            config: Arc::new(config),
            headers: Arc::new(headers),
            next_id: Arc::new(AtomicI64::new(1)),
            deadline: None,
            transport: None,
            #[cfg(feature = "grpc")]
            channels: Arc::default(),
        })
    }

    /// A client of `handler`, a server of this process, calling as `caller`: sends,
    /// streams, subscriptions, gets and cancels go to the handler with no socket (the
    /// other operations are not served in process). Its [`endpoint`](Self::endpoint)
    /// is `in-process:`.
    #[cfg(feature = "server")]
    pub fn in_process(
        handler: crate::server::RequestHandler,
        caller: crate::server::Caller,
    ) -> Self {
        Self::with_transport(Arc::new(in_process::InProcess { handler, caller }))
    }

    /// A client whose calls `transport` takes (see [`Transport`]). Its
    /// [`endpoint`](Self::endpoint) is the transport's.
    pub fn with_transport(transport: Arc<dyn Transport>) -> Self {
        let at = Interface {
            url: transport.endpoint().to_owned(),
            protocol: Version::V1_0,
            binding: Binding::JsonRpc,
            tenant: String::new(),
        };
        // It sends nothing over HTTP: one client of the process stands in, built once
        // (a client of its own would build a connection pool and TLS for nothing, at
        // every child run's call).
        static UNUSED: std::sync::OnceLock<HttpClient> = std::sync::OnceLock::new();
        Self {
            http: UNUSED.get_or_init(http_client).clone(),
            interfaces: vec![at].into(),
            urls: vec![None].into(),
            current: Arc::new(AtomicUsize::new(0)),
            config: Arc::new(ClientConfig::default()),
            headers: Arc::new(HeaderMap::new()),
            next_id: Arc::new(AtomicI64::new(1)),
            deadline: None,
            transport: Some(transport),
            #[cfg(feature = "grpc")]
            channels: Arc::default(),
        }
    }

    /// A client for the interface of the card [`choose_interfaces`] picks.
    pub fn from_card(card: &AgentCard, config: ClientConfig) -> Result<Self, ClientError> {
        let choice = choose_interfaces(card, Preference::default())?;
        Self::with_interfaces(http_client(), choice.interfaces, config)
    }

    /// The same client, speaking `protocol` over JSON-RPC at its current URL (its
    /// method names, shapes and `A2A-Version`); the methods of this type take and give
    /// the internal model whatever it speaks.
    pub fn speaking(self, protocol: Version) -> Self {
        let at = Interface::jsonrpc(self.endpoint(), protocol);
        self.only(at)
    }

    /// The same client, calling only `at`.
    pub fn only(mut self, at: Interface) -> Self {
        self.urls = vec![send::parse_uri(&at.url).ok()].into();
        self.interfaces = vec![at].into();
        self.current = Arc::new(AtomicUsize::new(0));
        self
    }

    /// The same client, its calls to be answered within `within` from now: on gRPC, each
    /// call's `grpc-timeout` says what is left of it (the server may stop the call past
    /// it, as it would its client's `timeout`).
    pub fn within(&self, within: std::time::Duration) -> Self {
        let mut client = self.clone();
        client.deadline = std::time::Instant::now().checked_add(within);
        client
    }

    /// The same client, sending `extra` headers too (a call's trace context, say).
    /// Invalid names or values are left out.
    pub fn with_headers(&self, extra: &[(String, String)]) -> Self {
        let mut client = self.clone();
        if extra.is_empty() {
            return client;
        }
        let mut headers = (*self.headers).clone();
        for (k, v) in extra {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(v),
            ) {
                headers.insert(name, value);
            }
        }
        client.headers = Arc::new(headers);
        client
    }

    /// The interface calls go to now.
    pub fn interface(&self) -> &Interface {
        &self.interfaces[self.current.load(Ordering::Relaxed)]
    }

    /// The generation this client speaks now.
    pub fn version(&self) -> Version {
        self.interface().protocol
    }

    /// Resolves the card under `base_url` (well-known path, then the legacy one) and
    /// returns a client for the interface it chooses, along with the card.
    pub async fn connect(
        base_url: &str,
        config: ClientConfig,
    ) -> Result<(Self, AgentCard), ClientError> {
        let http = http_client();
        let resolver = CardResolver::new(http.clone(), config.header_map()?, config.timeout);
        let card = resolver.resolve(base_url).await?;
        let choice = choose_interfaces(&card, Preference::default())?;
        let client = Self::with_interfaces(http, choice.interfaces, config)?;
        Ok((client, card))
    }

    /// The URL calls go to now.
    pub fn endpoint(&self) -> &str {
        &self.interface().url
    }

    /// After a call to interface `i`: the interface to try next, when the agent turned
    /// down the version (VersionNotSupported; or a v1.0 method it does not know, as an
    /// agent that speaks only v0.3 answers) and the card offers another generation.
    fn fall_back<T>(&self, i: usize, result: &Result<T, ClientError>) -> Option<usize> {
        let Err(ClientError::Rpc(e)) = result else {
            return None;
        };
        let from = &self.interfaces[i];
        let refused = e.code == ErrorCode::VERSION_NOT_SUPPORTED
            || (e.code == ErrorCode::METHOD_NOT_FOUND && from.protocol == Version::V1_0);
        if !refused {
            return None;
        }
        let next = (i + 1..self.interfaces.len())
            .find(|&j| self.interfaces[j].protocol != from.protocol)?;
        warn!(from = %from, to = %self.interfaces[next], error = %e, "the agent turned the version down; falling back");
        let _ = self
            .current
            .compare_exchange(i, next, Ordering::Relaxed, Ordering::Relaxed);
        Some(next)
    }

    /// The transport of interface `at`: A2A 0.3's JSON-RPC, or A2A 1.0 on its binding.
    fn wire<'a>(&'a self, at: &'a Interface) -> Box<dyn Transport + 'a> {
        match at.protocol {
            #[cfg(feature = "v0_3")]
            Version::V0_3 => Box::new(V03 { client: self, at }),
            // Refused by `with_interfaces`: no such client is made.
            #[cfg(not(feature = "v0_3"))]
            Version::V0_3 => unreachable!("a 0.3 interface in a client without A2A 0.3"),
            Version::V1_0 => Box::new(V1 { client: self, at }),
        }
    }

    /// A v1.0 unary call over `at`'s binding: `method` over JSON-RPC and gRPC, `line`
    /// (with `request` as its body when `with_body`) over HTTP+JSON.
    async fn v1<
        Req: Serialize + prost::Message,
        Resp: DeserializeOwned + prost::Message + Default,
    >(
        &self,
        at: &Interface,
        method: Method,
        request: &Req,
        line: RequestLine,
        with_body: bool,
    ) -> Result<Resp, ClientError> {
        match at.binding {
            Binding::JsonRpc => self.rpc(at, method.v1_name(), Some(request)).await,
            Binding::HttpJson => self.rest(at, line, with_body.then_some(request)).await,
            Binding::Grpc => self.grpc(at, method, request).await,
        }
    }

    /// A v1.0 streaming call over `at`'s binding, as [`A2aClient::v1`].
    async fn v1_stream<Req: Serialize + prost::Message>(
        &self,
        at: &Interface,
        method: Method,
        request: &Req,
        line: RequestLine,
        with_body: bool,
    ) -> Result<EventStream, ClientError> {
        match at.binding {
            Binding::JsonRpc => self.rpc_stream(at, method.v1_name(), request).await,
            Binding::HttpJson => {
                self.rest_stream(at, line, with_body.then_some(request))
                    .await
            }
            Binding::Grpc => self.grpc_stream(at, method, request).await,
        }
    }

    /// The v1.0 extended card at `at`, read as a card served at the well-known path is.
    async fn v1_extended_card(&self, at: &Interface) -> Result<AgentCard, ClientError> {
        let method = Method::GetAuthenticatedExtendedCard;
        let request = v1t::GetExtendedAgentCardRequest {
            tenant: at.tenant.clone(),
        };
        let card: Value = match at.binding {
            Binding::JsonRpc => self.rpc(at, method.v1_name(), Some(&request)).await?,
            Binding::HttpJson => {
                let line = RequestLine::get("extendedAgentCard");
                self.rest::<(), _>(at, line, None).await?
            }
            Binding::Grpc => self
                .grpc::<_, AgentCard>(at, method, &request)
                .await?
                .to_json(),
        };
        AgentCard::from_json(card).map_err(|e| {
            ClientError::protocol(&at.url, format!("its {} result: {e}", method.v1_name()))
        })
    }

    /// `SendMessage` (v0.3: `message/send`).
    pub async fn send_message(
        &self,
        request: &SendMessageRequest,
    ) -> Result<SendMessageResult, ClientError> {
        if let Some(t) = &self.transport {
            return t.send_message(request).await;
        }
        on_interface!(self, |at| self.wire(at).send_message(request).await)
    }

    /// `SendStreamingMessage` (v0.3: `message/stream`).
    pub async fn send_message_stream(
        &self,
        request: &SendMessageRequest,
    ) -> Result<EventStream, ClientError> {
        if let Some(t) = &self.transport {
            return t.send_message_stream(request).await;
        }
        on_interface!(self, |at| self.wire(at).send_message_stream(request).await)
    }

    /// `GetTask` (v0.3: `tasks/get`).
    pub async fn get_task(&self, request: &GetTaskRequest) -> Result<Task, ClientError> {
        if let Some(t) = &self.transport {
            return t.get_task(request).await;
        }
        on_interface!(self, |at| self.wire(at).get_task(request).await)
    }

    /// `CancelTask` (v0.3: `tasks/cancel`).
    pub async fn cancel_task(&self, request: &CancelTaskRequest) -> Result<Task, ClientError> {
        if let Some(t) = &self.transport {
            return t.cancel_task(request).await;
        }
        on_interface!(self, |at| self.wire(at).cancel_task(request).await)
    }

    /// `SubscribeToTask` (v0.3: `tasks/resubscribe`).
    pub async fn subscribe(
        &self,
        request: &SubscribeToTaskRequest,
    ) -> Result<EventStream, ClientError> {
        if let Some(t) = &self.transport {
            return t.subscribe(request).await;
        }
        on_interface!(self, |at| self.wire(at).subscribe(request).await)
    }

    /// `CreateTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/set`).
    pub async fn set_push_config(
        &self,
        config: &TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        if let Some(t) = &self.transport {
            return t.set_push_config(config).await;
        }
        on_interface!(self, |at| self.wire(at).set_push_config(config).await)
    }

    /// `GetTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/get`; a
    /// config id left empty means the task's default one, whose id is the task's).
    pub async fn get_push_config(
        &self,
        request: &GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        if let Some(t) = &self.transport {
            return t.get_push_config(request).await;
        }
        on_interface!(self, |at| self.wire(at).get_push_config(request).await)
    }

    /// `ListTaskPushNotificationConfigs` (v0.3: `tasks/pushNotificationConfig/list`,
    /// which has one page).
    pub async fn list_push_configs(
        &self,
        request: &ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        if let Some(t) = &self.transport {
            return t.list_push_configs(request).await;
        }
        on_interface!(self, |at| self.wire(at).list_push_configs(request).await)
    }

    /// `DeleteTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/delete`).
    pub async fn delete_push_config(
        &self,
        request: &DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), ClientError> {
        if let Some(t) = &self.transport {
            return t.delete_push_config(request).await;
        }
        on_interface!(self, |at| self.wire(at).delete_push_config(request).await)
    }

    /// `GetExtendedAgentCard` (v0.3: `agent/getAuthenticatedExtendedCard`).
    pub async fn get_authenticated_extended_card(&self) -> Result<AgentCard, ClientError> {
        if let Some(t) = &self.transport {
            return t.extended_card().await;
        }
        on_interface!(self, |at| self.wire(at).extended_card().await)
    }
}

/// A client built without the `grpc` feature speaks no gRPC: [`choose_interfaces`] never
/// picks a gRPC interface, and `with_interfaces` refuses one named by hand; these are
/// never called.
#[cfg(not(feature = "grpc"))]
impl A2aClient {
    async fn grpc<Req, Resp>(
        &self,
        at: &Interface,
        _: Method,
        _: &Req,
    ) -> Result<Resp, ClientError> {
        Err(no_grpc(at))
    }

    async fn grpc_stream<Req>(
        &self,
        at: &Interface,
        _: Method,
        _: &Req,
    ) -> Result<EventStream, ClientError> {
        Err(no_grpc(at))
    }
}

/// A client built without the `v0_3` feature speaks no A2A 0.3: [`choose_interfaces`]
/// never picks a 0.3 interface, and one named by hand is refused with this.
#[cfg(not(feature = "v0_3"))]
fn no_v0_3(url: &str) -> ClientError {
    ClientError::Config(format!(
        "{url} is an A2A 0.3 interface, and this client was built without the `v0_3` feature"
    ))
}

#[cfg(not(feature = "grpc"))]
fn no_grpc(at: &Interface) -> ClientError {
    ClientError::Config(format!(
        "{} is a gRPC interface, and this client was built without the `grpc` feature",
        at.url
    ))
}

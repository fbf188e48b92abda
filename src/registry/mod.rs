//! The downstream agents the orchestrator delegates to: `agents.toml` ([`config`]),
//! discovery of their Agent Cards, health, and selection of an agent for a step.
//!
//! [`Registry::discover`] fetches every card concurrently (each bounded by a timeout);
//! an agent that is down or serves an invalid card is recorded with the reason and does
//! not stop anything. A background task refreshes cards — conditionally, honouring
//! `ETag` and `Cache-Control` — with jitter, and retries unavailable agents with
//! exponential backoff. Calls go through a [`Lease`] that holds the agent's concurrency
//! permit and reports the outcome to its circuit breaker.

mod breaker;
pub mod card_trust;
pub mod config;
pub mod env;
pub mod oauth;
pub mod price;
mod select;
mod skills;
mod tls;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info_span, warn};

use a2a::card::AgentCard;
use a2a::client::{
    A2aClient, CardFetch, CardResolver, Choice, ClientError, HttpClient, Preference, Redirects,
    choose_interfaces, http_client_with,
};
use backoff::{self, Backoff, Jitter};
use breaker::{Breaker, BreakerState};
use config::{AgentEntry, AgentsFile};
use env::{Env, ResolvedAgent};
use orchestrator_core::workflow::AgentName;
pub use select::{Lease, Requirements, SelectError, Target};

/// Tunables of discovery, refresh and the circuit breakers.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// Bound on fetching one card.
    pub card_timeout: Duration,
    /// How often cards are fetched again (when the server gives no `max-age`).
    pub refresh_interval: Duration,
    /// First wait before retrying an unavailable agent (or a failed refresh); doubles
    /// up to `retry_max`.
    pub retry_initial: Duration,
    /// Longest wait between probes of an unavailable agent: one that comes back is
    /// noticed within it, however long it was down.
    pub retry_max: Duration,
    /// Consecutive failed calls that open an agent's circuit.
    pub breaker_threshold: u32,
    /// How long an open circuit keeps the agent out before a probe.
    pub breaker_cooldown: Duration,
    /// Bound on one call, for agents whose entry sets no `timeout`.
    pub call_timeout: Duration,
    /// Calls in flight per agent, for agents whose entry sets no `max_concurrent`.
    pub max_concurrent: usize,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self {
            card_timeout: Duration::from_secs(5),
            refresh_interval: Duration::from_secs(300),
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(10),
            breaker_threshold: 5,
            breaker_cooldown: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            max_concurrent: 64,
        }
    }
}

/// How an agent is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Health {
    Healthy,
    /// Usable, with a reason for concern (a failed refresh, recent call failures, …).
    Degraded(String),
    /// Not selected, and why.
    Unavailable(String),
}

impl Health {
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Health::Unavailable(_))
    }
}

impl std::fmt::Display for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Health::Healthy => f.write_str("healthy"),
            Health::Degraded(r) => write!(f, "degraded: {r}"),
            Health::Unavailable(r) => write!(f, "unavailable: {r}"),
        }
    }
}

/// What `agents` shows for one agent.
#[derive(Debug, Clone, Serialize)]
pub struct AgentStatus {
    pub name: String,
    /// Where its card is looked for.
    pub url: String,
    /// The URL of the interface it is called at.
    pub endpoint: Option<String>,
    /// The A2A version spoken at `endpoint` (`0.3`, `1.0`).
    pub protocol: Option<String>,
    /// The binding used at `endpoint` (`JSONRPC`, `HTTP+JSON`).
    pub binding: Option<String>,
    /// Why that interface was chosen.
    pub chosen_because: Option<String>,
    /// Its circuit breaker: `closed`, `open` or `half-open`.
    pub circuit: &'static str,
    #[serde(flatten)]
    pub health: Health,
    pub streaming: bool,
    pub push_notifications: bool,
    pub skills: Vec<String>,
    pub in_flight: usize,
    /// How its calls are authenticated (none, a static token or key, OAuth 2.0 client
    /// credentials and whether a token is held).
    pub auth: String,
    /// Whether its card is signed and by whom, and whether it must be.
    pub card: String,
}

/// What [`Registry::replace_agents`] changed, by agent name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentChanges {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

impl AgentChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// One agent's live state.
struct Agent {
    /// Its entry as `agents.toml` gave it (a reload keeps an agent whose entry is the same).
    entry: AgentEntry,
    name: AgentName,
    tags: Vec<String>,
    location: String,
    resolved: Result<ResolvedAgent, String>,
    state: Mutex<AgentState>,
    in_flight: AtomicUsize,
    permits: Arc<Semaphore>,
    /// Its own HTTP client, when its entry sets `tls`.
    own_tls: tls::OwnTransport,
    /// Checks its card's signature.
    checker: card_trust::CardChecker,
}

struct AgentState {
    card: Option<Arc<AgentCard>>,
    client: Option<A2aClient>,
    /// Why the client's interface was chosen.
    chosen_because: Option<String>,
    /// Where the card was last found (the well-known path or the legacy one).
    card_url: Option<String>,
    etag: Option<String>,
    /// Why the last discovery or refresh went wrong, if it did.
    problem: Option<String>,
    next_refresh: Instant,
    /// Card fetches that failed in a row (0 when the last one worked).
    failures: u32,
    breaker: Breaker,
    /// What the check of the card's signature found.
    signature: Option<String>,
}

impl Agent {
    fn new(e: &AgentEntry, env: &dyn Env, options: &RegistryOptions) -> Agent {
        let resolved = env::resolve(e, env, options.call_timeout);
        let location = resolved
            .as_ref()
            .map_or_else(|_| format!("{:?}", e.source), |r| r.card_location.clone());
        Agent {
            entry: e.clone(),
            name: e.name.clone(),
            tags: e.tags.clone(),
            location,
            resolved,
            state: Mutex::new(AgentState {
                card: None,
                client: None,
                chosen_because: None,
                card_url: None,
                etag: None,
                problem: None,
                next_refresh: Instant::now(),
                failures: 0,
                breaker: Breaker::new(options.breaker_threshold, options.breaker_cooldown),
                signature: None,
            }),
            in_flight: AtomicUsize::new(0),
            permits: Arc::new(Semaphore::new(
                e.max_concurrent.unwrap_or(options.max_concurrent),
            )),
            own_tls: Default::default(),
            checker: card_trust::CardChecker::new(e.card_trust.clone()),
        }
    }

    // The state lock is a std mutex held only to read or update fields, never across
    // an await.
    fn state(&self) -> std::sync::MutexGuard<'_, AgentState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn health(&self, now: Instant) -> Health {
        if let Err(reason) = &self.resolved {
            return Health::Unavailable(reason.clone());
        }
        let st = self.state();
        if st.card.is_none() {
            return Health::Unavailable(
                st.problem
                    .clone()
                    .unwrap_or_else(|| "not discovered yet".into()),
            );
        }
        match st.breaker.state {
            BreakerState::Open { until, failures } if now < until => {
                return Health::Unavailable(format!(
                    "circuit open after {failures} consecutive failed calls; a probe in {}s",
                    (until - now).as_secs() + 1
                ));
            }
            BreakerState::Open { .. } | BreakerState::HalfOpen { .. } => {
                return Health::Degraded("recovering: the next call is a probe".into());
            }
            BreakerState::Closed { failures } if failures > 0 => {
                return Health::Degraded(format!("{failures} consecutive failed call(s)"));
            }
            BreakerState::Closed { .. } => {}
        }
        match &st.problem {
            Some(p) => Health::Degraded(p.clone()),
            None => Health::Healthy,
        }
    }
}

/// The registry of downstream agents. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    /// The agents in file order; replaced whole when `agents.toml` is loaded again.
    agents: std::sync::RwLock<Arc<Vec<Arc<Agent>>>>,
    /// How agents are reached: over HTTP/1.1 (or HTTP/2 where TLS negotiates it) or,
    /// for agents marked `http2`, over HTTP/2 only; following no redirect, or (agents
    /// marked `follow_redirects = "same-origin"`) same-origin ones. Indexed by
    /// [`Inner::transport`].
    transports: [Transport; 4],
    options: RegistryOptions,
    /// Rotates the choice among equally loaded agents.
    turn: AtomicUsize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
}

impl Inner {
    /// The agents as loaded now.
    fn agents(&self) -> Arc<Vec<Arc<Agent>>> {
        self.agents
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn transport(&self, agent: &ResolvedAgent) -> &Transport {
        let follow = agent.redirects == Redirects::SameOrigin;
        &self.transports[usize::from(agent.http2) * 2 + usize::from(follow)]
    }
}

/// An HTTP client (one connection pool) and the card resolver that uses it; and, for an
/// agent with TLS settings of its own, the same settings for its gRPC calls.
struct Transport {
    http: HttpClient,
    resolver: CardResolver,
    grpc_tls: Option<a2a::client::ClientTls>,
}

impl Transport {
    fn new(http: HttpClient, card_timeout: Duration) -> Transport {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(USER_AGENT),
        );
        let resolver = CardResolver::new(http.clone(), headers, card_timeout);
        Transport {
            http,
            resolver,
            grpc_tls: None,
        }
    }
}

/// Refreshes are spread a tenth either way, so agents discovered together are not all
/// fetched again at the same moment.
const REFRESH_JITTER: Jitter = Jitter::Around(0.1);

/// The `User-Agent` of every call to an agent and every fetch of its card (the
/// protocol crate's own is `a2a-protocol/…`).
pub(crate) const USER_AGENT: &str = concat!("a2a-orchestrator/", env!("CARGO_PKG_VERSION"));

impl Registry {
    /// Builds the registry and fetches every card concurrently. Never fails: problems
    /// are recorded per agent.
    pub async fn discover(file: &AgentsFile, env: &dyn Env, options: RegistryOptions) -> Registry {
        let agents = file
            .agents
            .iter()
            .map(|e| Arc::new(Agent::new(e, env, &options)))
            .collect();
        let registry = Registry {
            inner: Arc::new(Inner {
                agents: std::sync::RwLock::new(Arc::new(agents)),
                transports: [(false, false), (false, true), (true, false), (true, true)].map(
                    |(http2, follow)| {
                        let redirects = if follow {
                            Redirects::SameOrigin
                        } else {
                            Redirects::Never
                        };
                        Transport::new(http_client_with(http2, redirects), options.card_timeout)
                    },
                ),
                options,
                turn: AtomicUsize::new(0),
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
            }),
        };
        registry.refresh_all().await;
        registry
    }

    /// Takes `file` in place of the agents loaded: an agent whose entry is unchanged is
    /// kept as it is (its card, its circuit, its calls in flight); a new or changed one
    /// is discovered before the swap, so no call finds it without its card; one no
    /// longer listed is dropped (calls it has in flight finish). What changed, by name.
    pub async fn replace_agents(&self, file: &AgentsFile, env: &(dyn Env + Sync)) -> AgentChanges {
        let before = self.inner.agents();
        let mut changes = AgentChanges::default();
        let mut fresh = Vec::new();
        let agents: Vec<Arc<Agent>> = file
            .agents
            .iter()
            .map(|e| match before.iter().find(|a| a.name == e.name) {
                Some(a) if a.entry == *e => a.clone(),
                old => {
                    let list = if old.is_some() {
                        &mut changes.changed
                    } else {
                        &mut changes.added
                    };
                    list.push(e.name.to_string());
                    let agent = Arc::new(Agent::new(e, env, &self.inner.options));
                    fresh.push(agent.clone());
                    agent
                }
            })
            .collect();
        changes.removed = before
            .iter()
            .filter(|a| !file.agents.iter().any(|e| e.name == a.name))
            .map(|a| a.name.to_string())
            .collect();
        futures::future::join_all(fresh.iter().map(|a| self.refresh(a))).await;
        *self.inner.agents.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(agents);
        changes
    }

    /// Fetches every card again now (conditionally where an ETag is known).
    pub async fn refresh_all(&self) {
        let agents = self.inner.agents();
        let all: Vec<_> = agents.iter().map(|a| self.refresh(a)).collect();
        futures::future::join_all(all).await;
    }

    /// Starts the background refresh; it stops at [`Registry::shutdown`].
    pub fn start_refresh(&self) {
        let this = self.clone();
        let tick = (self.inner.options.refresh_interval / 4)
            .clamp(Duration::from_millis(50), Duration::from_secs(1));
        self.inner.tracker.spawn(
            async move {
                loop {
                    tokio::select! {
                        () = this.inner.shutdown.cancelled() => break,
                        () = tokio::time::sleep(tick) => {}
                    }
                    let now = Instant::now();
                    let agents = this.inner.agents();
                    let due: Vec<_> = agents
                        .iter()
                        .filter(|a| a.resolved.is_ok() && a.state().next_refresh <= now)
                        .map(|a| this.refresh(a))
                        .collect();
                    futures::future::join_all(due).await;
                }
            }
            .instrument(info_span!("registry_refresh")),
        );
    }

    /// Stops the background refresh and waits for it.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }

    async fn refresh(&self, agent: &Arc<Agent>) {
        let Ok(resolved) = &agent.resolved else {
            return;
        };
        let (location, etag) = {
            let st = agent.state();
            (
                st.card_url
                    .clone()
                    .unwrap_or_else(|| resolved.card_location.clone()),
                st.etag.clone(),
            )
        };
        // An agent with TLS settings of its own has a client of its own; when its files
        // changed, the card is fetched whole so that its client is built again.
        let own;
        let (transport, etag) = match &resolved.tls {
            None => (self.inner.transport(resolved), etag),
            Some(files) => match agent.own_tls.get(
                files,
                resolved.http2,
                resolved.redirects,
                self.inner.options.card_timeout,
            ) {
                Ok((t, rebuilt)) => {
                    own = t;
                    (&*own, etag.filter(|_| !rebuilt))
                }
                Err(why) => {
                    let now = Instant::now();
                    let mut st = agent.state();
                    self.record_failure(agent, &mut st, why, now, true);
                    return;
                }
            },
        };
        let outcome = transport
            .resolver
            .resolve_conditional(&location, etag.as_deref())
            .await;
        // A new card's signature is checked before anything of it is used; a verified
        // card is used as signed (see card_trust).
        let mut signature = None;
        let outcome = match outcome {
            Ok(CardFetch::Fetched {
                card,
                document,
                url,
                etag,
                max_age,
            }) => {
                let checked = match agent
                    .checker
                    .check(transport.http.reqwest(), &document)
                    .await
                {
                    Ok(card_trust::Verdict::Verified { card, note }) => AgentCard::from_json(card)
                        .map(|c| (Box::new(c), note))
                        .map_err(|e| format!("its signed card: {e}")),
                    Ok(card_trust::Verdict::Unverified { note }) => Ok((card, note)),
                    Err(refusal) => Err(refusal),
                };
                match checked {
                    Ok((card, note)) => {
                        signature = Some(note);
                        Ok(CardFetch::Fetched {
                            card,
                            document,
                            url,
                            etag,
                            max_age,
                        })
                    }
                    Err(refusal) => {
                        let now = Instant::now();
                        let mut st = agent.state();
                        warn!(agent = %agent.name, reason = %refusal, "agent card refused");
                        st.signature = Some(refusal.clone());
                        self.record_failure(agent, &mut st, refusal, now, true);
                        return;
                    }
                }
            }
            other => other,
        };
        let options = &self.inner.options;
        let now = Instant::now();
        let mut st = agent.state();
        let ok_until = |max_age: Option<Duration>| {
            let wait = max_age.map_or(options.refresh_interval, |a| a.max(Duration::from_secs(1)));
            now + backoff::jitter(wait, REFRESH_JITTER)
        };
        match outcome {
            Ok(CardFetch::NotModified { max_age }) => {
                debug!(agent = %agent.name, "card not modified");
                st.problem = None;
                st.failures = 0;
                st.next_refresh = ok_until(max_age);
            }
            Ok(CardFetch::Fetched {
                card,
                url,
                etag,
                max_age,
                ..
            }) => match check_card(&card, resolved.interface) {
                Ok((choice, note)) => {
                    let mut config = resolved.client.clone();
                    config.grpc_tls = transport.grpc_tls.clone();
                    let client = A2aClient::with_interfaces(
                        transport.http.clone(),
                        choice.interfaces,
                        config,
                    );
                    match client {
                        Ok(client) => {
                            let doubtful = agent.checker.has_keys()
                                && signature
                                    .as_deref()
                                    .is_some_and(|n| !n.starts_with("signature verified"));
                            if doubtful && st.signature != signature {
                                warn!(agent = %agent.name, note = signature.as_deref().unwrap_or(""), "agent card not verified");
                            }
                            st.signature = signature;
                            st.card = Some(Arc::new(*card));
                            st.client = Some(client);
                            st.chosen_because = Some(choice.reason);
                            st.card_url = Some(url);
                            st.etag = etag;
                            st.problem = note;
                            st.failures = 0;
                            st.next_refresh = ok_until(max_age);
                        }
                        Err(e) => self.record_failure(
                            agent,
                            &mut st,
                            format!("invalid card: {e}"),
                            now,
                            true,
                        ),
                    }
                }
                Err(reason) => self.record_failure(agent, &mut st, reason, now, true),
            },
            Err(e) => {
                let mut reason = e.to_string();
                if resolved.http2 && matches!(e, ClientError::Transport { .. }) {
                    reason.push_str(
                        " (it is marked `http2 = true`: does it speak HTTP/2 without TLS? Most HTTP/1.1 servers, uvicorn among them, do not)",
                    );
                }
                self.record_failure(agent, &mut st, reason, now, false)
            }
        }
    }

    /// A failed fetch keeps a previously good card (the agent is degraded); an invalid
    /// card or a first failure makes the agent unavailable. Retries back off.
    fn record_failure(
        &self,
        agent: &Agent,
        st: &mut AgentState,
        reason: String,
        now: Instant,
        invalid: bool,
    ) {
        // Warn when an agent that was fine goes bad; repeats are for debugging.
        if st.card.is_some() && st.problem.is_none() {
            warn!(agent = %agent.name, %reason, "agent card problem");
        } else {
            debug!(agent = %agent.name, %reason, "agent card problem");
        }
        if invalid || st.card.is_none() {
            st.card = None;
            st.client = None;
            st.etag = None;
            st.problem = Some(reason);
        } else {
            st.problem = Some(format!(
                "card refresh failed ({reason}); using the card fetched before"
            ));
        }
        st.failures = st.failures.saturating_add(1);
        let options = &self.inner.options;
        let retry = Backoff::exponential(
            options.retry_initial,
            options.retry_max.min(options.refresh_interval),
        )
        .with_jitter(REFRESH_JITTER);
        st.next_refresh = now + retry.delay(st.failures);
    }

    /// The status of every agent, in file order.
    pub fn statuses(&self) -> Vec<AgentStatus> {
        let now = Instant::now();
        self.inner
            .agents()
            .iter()
            .map(|a| {
                let health = a.health(now);
                let st = a.state();
                let card = st.card.as_deref();
                AgentStatus {
                    name: a.name.to_string(),
                    url: a.location.clone(),
                    endpoint: st.client.as_ref().map(|c| c.endpoint().to_owned()),
                    protocol: st.client.as_ref().map(|c| c.version().as_str().to_owned()),
                    binding: st
                        .client
                        .as_ref()
                        .map(|c| c.interface().binding.as_str().to_owned()),
                    chosen_because: st.client.as_ref().and(st.chosen_because.clone()),
                    circuit: match st.breaker.state {
                        BreakerState::Closed { .. } => "closed",
                        BreakerState::Open { .. } => "open",
                        BreakerState::HalfOpen { .. } => "half-open",
                    },
                    health,
                    streaming: card.is_some_and(AgentCard::supports_streaming),
                    push_notifications: card.is_some_and(AgentCard::supports_push_notifications),
                    skills: card
                        .map(|c| c.skills.iter().map(|s| s.id.clone()).collect())
                        .unwrap_or_default(),
                    in_flight: a.in_flight.load(Ordering::Relaxed),
                    card: st.signature.clone().unwrap_or_else(|| {
                        if a.checker.required() {
                            "not fetched yet (must be signed)".to_owned()
                        } else {
                            "not fetched yet".to_owned()
                        }
                    }),
                    auth: match &a.resolved {
                        Err(_) => "unknown (its entry does not resolve)".to_owned(),
                        Ok(r) => match (&r.oauth, &r.client.auth) {
                            (Some(oauth), _) => oauth.describe(),
                            (None, Some(a2a::client::ClientAuth::Bearer(_))) => {
                                "a static bearer token".to_owned()
                            }
                            (None, Some(a2a::client::ClientAuth::ApiKey { header, .. })) => {
                                format!("a static API key in {header}")
                            }
                            (None, None) => "none".to_owned(),
                        },
                    },
                }
            })
            .collect()
    }

    /// Where each agent lives, by name (its card's location as `agents.toml` gives it).
    pub fn locations(&self) -> std::collections::HashMap<String, String> {
        self.inner
            .agents()
            .iter()
            .map(|a| (a.name.to_string(), a.location.clone()))
            .collect()
    }

    /// The client of a discovered agent, without taking a concurrency permit: for calls
    /// that must not wait behind others, such as `tasks/cancel`.
    pub fn client(&self, name: &str) -> Option<A2aClient> {
        self.inner
            .agents()
            .iter()
            .find(|a| a.name.as_str() == name)
            .and_then(|a| a.state().client.clone())
    }

    /// The client of an agent with the token its calls carry, when they carry one (a
    /// call outside a lease: canceling a downstream task).
    pub async fn authorized_client(&self, name: &str) -> Result<Option<A2aClient>, String> {
        let Some(agent) = self
            .inner
            .agents()
            .iter()
            .find(|a| a.name.as_str() == name)
            .cloned()
        else {
            return Ok(None);
        };
        let (client, card) = {
            let st = agent.state();
            (st.client.clone(), st.card.clone())
        };
        let Some(client) = client else {
            return Ok(None);
        };
        match agent.resolved.as_ref().ok().and_then(|r| r.oauth.clone()) {
            None => Ok(Some(client)),
            Some(oauth) => {
                // Outside a run: the orchestrator's own rights.
                let token = oauth
                    .token(Some(&oauth::Subject::Service), card.as_deref())
                    .await?;
                Ok(Some(client.with_headers(&[(
                    "authorization".to_owned(),
                    format!("Bearer {token}"),
                )])))
            }
        }
    }

    /// The card of an agent, if discovered.
    pub fn card(&self, name: &str) -> Option<Arc<AgentCard>> {
        self.inner
            .agents()
            .iter()
            .find(|a| a.name.as_str() == name)
            .and_then(|a| a.state().card.clone())
    }
}

/// Checks what the schema cannot: an interface to call, in a generation and binding
/// this orchestrator speaks and `want` allows, at a URL. Returns the interfaces to try
/// and a note for a degraded agent.
fn check_card(card: &AgentCard, want: Preference) -> Result<(Choice, Option<String>), String> {
    let choice = choose_interfaces(card, want).map_err(|e| format!("unusable card: {e}"))?;
    for at in &choice.interfaces {
        reqwest::Url::parse(&at.url).map_err(|e| {
            format!(
                "invalid card: its interface URL {:?} is not a URL ({e})",
                at.url
            )
        })?;
    }
    // An older 0.x agent is called as 0.3 is, and marked.
    let major_minor = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
    let first = &choice.interfaces[0];
    let note = card
        .supported_interfaces
        .iter()
        .filter(|i| i.url == first.url && i.protocol_binding == first.binding.as_str())
        .map(|i| major_minor(&i.protocol_version))
        .find(|v| !["0.3", "1.0", ""].contains(&v.as_str()))
        .map(|v| format!("its card declares A2A {v}; this orchestrator speaks 0.3 and 1.0"));
    Ok((choice, note))
}

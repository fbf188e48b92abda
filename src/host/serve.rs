//! The composition root of `serve`: the orchestrator assembled from its validated
//! settings and run. [`prepare`] loads and checks the files and opens the store
//! (everything that can refuse to start, before a port is taken); [`Prepared::build`]
//! discovers the agents and builds registry, engine, card and server; [`Host::run`]
//! serves until the shutdown signal and then stops in order.

use std::path::Path;
use std::sync::Arc;

use super::Orchestrator;
use super::availability::{self, Availability};
use crate::connect::A2aConnector;
use crate::registry::config::{self as agents_config, AgentsFile};
use crate::registry::env::ProcessEnv;
use crate::registry::{AgentStatus, Registry, RegistryOptions};
use a2a::card::{AgentCapabilities, AgentCard, AgentExtension, AgentProvider};
use a2a::server::{A2aServer, ServerConfig, TraceParent};
use orchestrator_core::config::Diagnostic;
use orchestrator_core::engine::{Engine, EngineOptions, TraceHooks};
use orchestrator_core::workflow::{self, Options, Workflow};
use orchestrator_store::{Store, StoreSpec};

/// What `serve` is given.
#[derive(Debug, Clone)]
pub struct HostConfig {
    pub name: String,
    pub description: String,
    pub workflows: std::path::PathBuf,
    pub agents: std::path::PathBuf,
    /// The protocol server's settings: inbound auth, webhooks, body limit.
    pub server: ServerConfig,
    /// Where tasks and runs are kept, and for how long once finished.
    pub store: StoreSpec,
    pub retention: std::time::Duration,
    /// The language model for routing, input extraction and llm steps; none: all
    /// deterministic.
    pub llm: Option<crate::llm::LlmConfig>,
    /// What the model's tokens cost (`[llm] price`), for runs' llm steps.
    pub llm_price: Option<crate::registry::price::Pricing>,
    /// Bounds on what agents send a run.
    pub limits: orchestrator_core::engine::OutputLimits,
    /// Whether `/readyz` also needs every workflow's agents available (by default it
    /// only reports them: one agent down must not take the orchestrator out of a load
    /// balancer).
    pub ready_requires_agents: bool,
    /// Load the workflow files and the agents file again when they change (`[server]
    /// reload_workflows`, on by default; SIGHUP loads them whatever this says).
    pub reload_workflows: bool,
    /// How often the files are looked at for changes, and the agents' availability
    /// for the cards (`[server] reload_interval`, [`RELOAD_EVERY`] by default).
    pub reload_interval: std::time::Duration,
    /// Serve workflows that say who may start or answer them with no credentials to
    /// hold callers to (`--insecure-open`): otherwise they are refused, at start and
    /// on a reload.
    pub insecure_open: bool,
    /// The key the cards are signed with (`[server] card_signing_key`), if they are.
    pub card_signing: Option<Arc<crate::host::card_signing::CardSigning>>,
}

/// Loads and checks the workflows and the agents file; every problem is returned.
pub fn load(config: &HostConfig) -> Result<(Vec<Arc<Workflow>>, AgentsFile), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let agents = match orchestrator_core::config::read_text(&config.agents) {
        Ok(text) => {
            let (file, diags) =
                agents_config::load_str(&config.agents.display().to_string(), &text);
            problems.extend(diags.into_iter().filter(Diagnostic::is_error));
            file
        }
        Err(e) => {
            problems.push(file_problem(
                &config.agents,
                &format!("cannot read the agents file: {e}"),
            ));
            None
        }
    };
    let names = agents.as_ref().map(AgentsFile::names);
    let (loaded, extra) = workflow::load_all(
        std::slice::from_ref(&config.workflows),
        Options {
            known_agents: names.as_ref(),
        },
    );
    problems.extend(extra);
    let mut workflows = Vec::new();
    for l in loaded {
        problems.extend(l.diagnostics.into_iter().filter(Diagnostic::is_error));
        if let Some(w) = l.workflow {
            workflows.push(Arc::new(w));
        }
    }
    if workflows.is_empty() && problems.is_empty() {
        problems.push(file_problem(
            &config.workflows,
            "no workflow found: add a *.toml workflow file",
        ));
    }
    let (named, guarded) = (principals(config), !no_credentials(config));
    for (file, problem) in (super::webhook::problems(&workflows, &named, guarded).into_iter())
        .chain(super::schedule::problems(&workflows, &named, guarded))
    {
        problems.push(file_problem(Path::new(&file), &problem));
    }
    if let Some(a) = &agents
        && let (Some(theirs), Some(its)) = (
            &a.currency,
            config.llm_price.as_ref().and_then(|l| l.currency.as_ref()),
        )
        && theirs != its
    {
        problems.push(file_problem(
            &config.agents,
            &format!("the agents are priced in {theirs}, the language model (`[llm] price`) in {its}: a run adds their costs together, so every price is in one currency"),
        ));
    }
    match agents {
        Some(a) if problems.is_empty() => Ok((workflows, a)),
        _ => Err(problems),
    }
}

/// The currency the prices name (the agents', else the language model's), which runs'
/// costs are shown in.
fn currency(config: &HostConfig, agents: &AgentsFile) -> Option<Arc<str>> {
    (agents.currency.as_deref())
        .or(config
            .llm_price
            .as_ref()
            .and_then(|l| l.currency.as_deref()))
        .map(Arc::from)
}

fn file_problem(path: &Path, message: &str) -> Diagnostic {
    Diagnostic::new(
        orchestrator_core::config::Severity::Error,
        &path.display().to_string(),
        "",
        0..0,
        message,
    )
}

/// The orchestrator's card: one skill per workflow, streaming and push notifications.
pub fn card(config: &HostConfig, url: &str, orchestrator: &Orchestrator) -> AgentCard {
    let mut card = AgentCard::new(&config.name, &config.description, url);
    card.version = env!("CARGO_PKG_VERSION").to_owned();
    card.capabilities = Some(AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        ..Default::default()
    });
    card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    card.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    card.skills = orchestrator.skills();
    if let Some(auth) = config.server.auth.as_ref().filter(|a| !a.is_empty()) {
        // A workflow only some may start is on the extended card of those who may.
        card.skills = orchestrator.public_skills();
        (card.security_schemes, card.security_requirements) = auth.card_security();
        // The extended card (skills with their input schemas) is for authenticated
        // callers: offered only when there are credentials to check.
        card.capabilities_mut().extended_agent_card = Some(true);
    }
    card.provider = Some(AgentProvider {
        organization: "a2a-orchestrator".into(),
        url: "https://github.com/a2a-orchestrator".into(),
    });
    card
}

/// Where the card extension carrying the workflows' sources is described.
pub const WORKFLOW_SOURCES_EXTENSION: &str =
    "https://github.com/a2a-orchestrator/a2a-orchestrator/blob/main/docs/runs.md#workflow-sources";

/// The card extension with each workflow's source and inputs: `{workflows: [{id,
/// version, file, source, inputSchema, availability, waitingFor}]}`, `version` the
/// SHA-256 a run's detail names as `workflowVersion`, `inputSchema` the JSON Schema of
/// its `[input]` (the web view's start form), `availability` whether its agents can be
/// called now (`available`, `degraded`, `unavailable`) and `waitingFor` why not.
fn workflow_sources(
    workflows: &[Arc<Workflow>],
    availability: &[(String, Availability)],
) -> AgentExtension {
    let list: Vec<serde_json::Value> = workflows
        .iter()
        .map(|w| {
            let now = availability
                .iter()
                .find(|(id, _)| id == w.id.as_str())
                .map_or(&Availability::Available, |(_, a)| a);
            serde_json::json!({
                "id": w.id.as_str(),
                "version": w.hash,
                "file": w.file,
                "source": &*w.source,
                "inputSchema": w.input_schema(),
                "availability": now.as_str(),
                "waitingFor": now.reasons(),
            })
        })
        .collect();
    AgentExtension {
        uri: WORKFLOW_SOURCES_EXTENSION.into(),
        description: "The source and input schema of each workflow, by the version runs name"
            .into(),
        required: false,
        params: Some(
            serde_json::Map::from_iter([("workflows".to_owned(), serde_json::Value::Array(list))])
                .into(),
        ),
    }
}

/// The running parts of a host, built from checked configuration.
pub struct Host {
    pub server: A2aServer,
    pub registry: Registry,
    pub store: Arc<dyn Store>,
    /// The orchestrator behind the server: its workflows as loaded now.
    pub orchestrator: Orchestrator,
    /// See [`HostConfig::ready_requires_agents`].
    pub ready_requires_agents: bool,
    /// What a reload of the workflows needs: the configuration and the server's URL.
    config: HostConfig,
    url: String,
    /// The files as they were just before the workflows served were read from them.
    loaded_from: FileStamps,
    /// SIGHUPs, listened to from [`prepare`] on, so that one sent while the server
    /// starts reloads rather than ends the process (else from [`Host::run`]).
    hangups: Option<tokio::signal::unix::Signal>,
    /// How the last reload went (for `/readyz` and `/metrics`).
    reloads: super::ops::LastReload,
}

impl Host {
    /// Serves on `listener` until `shutdown` completes, then stops in order: no new
    /// connections, requests in flight finished (bounded), the pruner and the
    /// registry's refresh stopped, the store flushed, and the replica's lease released so
    /// that replicas sharing the store take its runs over at once. A stop hands over,
    /// never cancels: unfinished runs stay in the store for the next server. Call
    /// [`A2aServer::recover`] on `self.server` first to resume what the store holds.
    pub async fn run(
        mut self,
        listener: tokio::net::TcpListener,
        options: RunOptions,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), StopError> {
        let pruner = tokio::spawn(prune_every(self.store.clone(), options.retention));
        let hangups = self.hangups.take().or_else(|| {
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
        });
        let reloader = Some(tokio::spawn(self.reload(hangups)));
        let availability = Some(tokio::spawn(self.mark_unavailable()));
        let key_watch = self
            .config
            .card_signing
            .clone()
            .map(|signing| tokio::spawn(signing.watch(self.server.clone())));
        let schedules = super::schedule::Schedules {
            orchestrator: self.orchestrator.clone(),
            store: self.store.clone(),
            starter: self.starter(),
        };
        let schedules = Some(tokio::spawn(schedules.run()));
        let ui = options.ui.then_some(options.sign_in);
        let router = self.router(options.metrics_token, ui);
        let served = self
            .server
            .clone()
            .serve_router(listener, router, shutdown)
            .await;
        pruner.abort();
        for task in [reloader, availability, key_watch, schedules]
            .into_iter()
            .flatten()
        {
            task.abort();
        }
        self.registry.shutdown().await;
        // What is queued is stored before the process ends, even after a failure.
        let flushed = self.store.flush().await.map_err(StopError::Flush);
        served?;
        flushed?;
        self.server.release().await.map_err(StopError::Release)
    }

    /// The A2A endpoints with the operations ones (`/healthz`, `/readyz`, `/metrics`,
    /// the last behind `metrics_token` when given) beside them, and with `ui` the web
    /// view at `/ui/` (signing its users in where `ui` says, if anywhere).
    pub fn router(
        &self,
        metrics_token: Option<String>,
        ui: Option<Option<super::ui::SignIn>>,
    ) -> axum::Router {
        let ops = super::ops::Ops {
            registry: self.registry.clone(),
            store: self.store.clone(),
            orchestrator: self.orchestrator.clone(),
            metrics_token,
            ready_requires_agents: self.ready_requires_agents,
            reloads: self.reloads.clone(),
            open: no_credentials(&self.config) && self.config.insecure_open,
        };
        let hooks = super::webhook::Webhooks {
            orchestrator: self.orchestrator.clone(),
            starter: self.starter(),
            url: self.url.clone(),
        };
        let router = self
            .server
            .router()
            .merge(super::ops::router(Arc::new(ops)))
            .merge(super::webhook::router(Arc::new(hooks)))
            .merge(super::inbox::router(Arc::new(super::inbox::Inbox {
                store: self.store.clone(),
                orchestrator: self.orchestrator.clone(),
                auth: self.config.server.auth.clone(),
            })));
        match ui {
            Some(sign_in) => router.merge(super::ui::router(sign_in)),
            None => router,
        }
    }
}

impl Host {
    /// What starts the runs the server starts of itself (webhooks, schedules).
    fn starter(&self) -> super::starter::Starter {
        super::starter::Starter {
            handler: self.server.handler().downgrade(),
            principals: Arc::new(principals(&self.config)),
            guarded: !no_credentials(&self.config),
        }
    }
}

/// Why `serve` did not start: nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration, workflows or agents file has problems (each located).
    #[error("the configuration has problems; nothing was started")]
    Config(Vec<Diagnostic>),
    /// The store cannot be opened: never a fresh one in its place.
    #[error(transparent)]
    Store(#[from] orchestrator_store::OpenError),
    /// Workflows say who may start or answer them, and no credentials are configured
    /// to hold callers to it (each workflow, with what it says).
    #[error("{}", unenforced(.0))]
    Open(Vec<String>),
}

/// What `serve` says of workflows whose rules it could not enforce.
fn unenforced(guarded: &[String]) -> String {
    format!(
        "{} say who may start or answer them, but no credentials are configured ([auth]), so anyone who reaches the server could: configure [auth] (docs/security.md), or pass --insecure-open ([server] insecure_open = true) to serve them with their rules not enforced",
        guarded.join(", ")
    )
}

/// The workflows that say who may start or answer them (`allow`, `approvers`,
/// `four_eyes`, `quorum`), each with what it says: rules that hold only for callers the
/// server knows.
pub fn guarded(workflows: &[Arc<Workflow>]) -> Vec<String> {
    workflows
        .iter()
        .filter_map(|w| {
            let mut says = Vec::new();
            if !w.allow.is_empty() {
                says.push("allow");
            }
            let steps = || w.steps.iter().map(|s| &s.answerers);
            if steps().any(|a| !a.approvers.is_empty()) {
                says.push("approvers");
            }
            if steps().any(|a| a.four_eyes) {
                says.push("four_eyes");
            }
            if steps().any(|a| a.quorum > 1) {
                says.push("quorum");
            }
            (!says.is_empty()).then(|| format!("`{}` ({})", w.id, says.join(", ")))
        })
        .collect()
}

/// Whether `config` names no credentials: every caller is anonymous.
/// The principals `[auth]` names (its tokens and keys), which webhooks may start runs as.
fn principals(config: &HostConfig) -> Vec<Arc<a2a::server::Principal>> {
    let Some(auth) = &config.server.auth else {
        return Vec::new();
    };
    (auth.bearer.iter())
        .chain(auth.api_key.iter().flat_map(|(_, keys)| keys.iter()))
        .map(|c| c.principal.clone())
        .collect()
}

fn no_credentials(config: &HostConfig) -> bool {
    config.server.auth.as_ref().is_none_or(|a| a.is_empty())
}

/// What a clean stop could not do; the server itself has stopped.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("serving failed: {0}")]
    Serve(#[from] std::io::Error),
    #[error("the store could not be flushed: {0}")]
    Flush(a2a::store::StoreError),
    #[error("the store's lease could not be released: {0}")]
    Release(a2a::store::StoreError),
}

/// The checked files and the open store, before anything is bound or started.
pub struct Prepared {
    pub config: HostConfig,
    pub workflows: Vec<Arc<Workflow>>,
    pub agents: AgentsFile,
    pub store: Arc<dyn Store>,
    /// The files as they were just before they were read.
    loaded_from: FileStamps,
    /// SIGHUPs from here on (see [`Host`]).
    hangups: Option<tokio::signal::unix::Signal>,
}

/// Loads and checks every file of `config`, then opens its store.
pub async fn prepare(config: HostConfig) -> Result<Prepared, StartError> {
    // Listened to from the start: a SIGHUP's default is to end the process.
    let hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let loaded_from = FileStamps::of(&config);
    let (workflows, agents) = load(&config).map_err(StartError::Config)?;
    for off in super::webhook::off(&workflows) {
        tracing::warn!("{off}");
    }
    // Who may start or answer is checked only against callers the server knows.
    let guarded = guarded(&workflows);
    if no_credentials(&config) && !guarded.is_empty() {
        if !config.insecure_open {
            return Err(StartError::Open(guarded));
        }
        tracing::warn!(
            "--insecure-open: {} say who may start or answer them, and no credentials are configured: anyone who reaches the server may",
            guarded.join(", ")
        );
    }
    let store = config
        .store
        .open_observed(orchestrator_store::Observe::new(StoreMetrics))
        .await?;
    Ok(Prepared {
        config,
        workflows,
        agents,
        store,
        loaded_from,
        hangups,
    })
}

impl Prepared {
    /// Discovers the agents and builds the orchestrator that serves at `url`.
    pub async fn build(self, url: &str) -> Host {
        let mut host = build(&self.config, self.workflows, &self.agents, url, self.store).await;
        host.loaded_from = self.loaded_from;
        host.hangups = self.hangups;
        host
    }
}

/// How [`Host::run`] serves.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `/metrics` takes this bearer token when set.
    pub metrics_token: Option<String>,
    /// Serve the web view at `/ui/`.
    pub ui: bool,
    /// Where the web view signs its users in (else it takes a pasted token).
    pub sign_in: Option<super::ui::SignIn>,
    /// Finished tasks and runs older than this are pruned.
    pub retention: std::time::Duration,
}

/// Discovers the agents and builds the server for `url`, keeping tasks and runs in
/// `store` (call [`A2aServer::recover`] to resume what it holds). The files of `config`
/// are taken to hold `workflows` and `agents` as they are now; [`Prepared::build`]
/// knows them as they were when read.
pub async fn build(
    config: &HostConfig,
    workflows: Vec<Arc<Workflow>>,
    agents: &AgentsFile,
    url: &str,
    store: Arc<dyn Store>,
) -> Host {
    let loaded_from = FileStamps::of(config);
    let registry = Registry::discover(agents, &ProcessEnv, RegistryOptions::default()).await;
    // Runs keep their trace context, so a run resumed after a restart links to it.
    let options = EngineOptions {
        trace: TraceHooks {
            capture: Some(crate::telemetry::current_traceparent),
            link: Some(crate::telemetry::link_to),
        },
        limits: config.limits,
        currency: currency(config, agents),
        ..EngineOptions::default()
    };
    // On whose behalf each run calls: the orchestrator records it, the connector reads it.
    let behalf = Arc::new(crate::connect::behalf::OnBehalf::default());
    let connector = A2aConnector::new(registry.clone()).with_on_behalf(behalf.clone());
    // Workflow steps run their workflows on this server, once it is built.
    let children = connector.children().clone();
    let mut engine = Engine::new(Arc::new(connector), options);
    if store.durable() {
        engine = engine.with_store(store.clone());
    }
    let llm = config.llm.clone().map(crate::llm::Llm::new);
    if let Some(llm) = &llm {
        tracing::info!(model = %llm.config().model, base_url = %llm.config().base_url, "a language model helps with routing, inputs and llm steps");
        engine = engine.with_model(Arc::new(crate::connect::model::Priced::new(
            llm.clone(),
            config.llm_price.as_ref().map(|p| p.price),
        )));
    }
    let orchestrator = Orchestrator::new(workflows.clone(), engine, llm)
        .with_agent_urls(registry.locations())
        .with_on_behalf(behalf);
    let (card, extended) = cards(config, url, &orchestrator, &registry.statuses());
    // Requests that carry a trace context continue that trace (when traces are on).
    let mut server_config = config.server.clone();
    if let Some(auth) = &mut server_config.auth {
        auth.authorize = Some(Arc::new(super::access::Rules));
    }
    server_config.trace_parent = TraceParent::new(crate::telemetry::adopt_parent);
    server_config.observer = orchestrator_metrics::server_observer();
    let mut server = A2aServer::builder(orchestrator.clone(), card)
        .config(server_config)
        .store(store.clone());
    if let Some(extended) = extended {
        server = server.extended_card(extended);
    }
    if let Some(signing) = &config.card_signing {
        server = server.card_keys(signing.keys());
    }
    let server = server.build();
    children.serve_on(server.handler());
    Host {
        server,
        registry,
        store,
        orchestrator,
        ready_requires_agents: config.ready_requires_agents,
        config: config.clone(),
        url: url.to_owned(),
        loaded_from,
        hangups: None,
        reloads: Default::default(),
    }
}

/// The public card and the extended one (when there are credentials to check) for the
/// workflows `orchestrator` has loaded now.
fn cards(
    config: &HostConfig,
    url: &str,
    orchestrator: &Orchestrator,
    agents: &[AgentStatus],
) -> (AgentCard, Option<AgentCard>) {
    let mut card = card(config, url, orchestrator);
    let mut extended = card.clone();
    extended.skills = orchestrator.detailed_skills();
    let offers_extended = card.supports_extended_card();
    // A workflow none of whose agents can be called now says so on its skill.
    let workflows = orchestrator.workflows();
    let availability: Vec<(String, Availability)> = workflows
        .iter()
        .map(|w| (w.id.to_string(), availability::of(w, agents)))
        .collect();
    for skill in card.skills.iter_mut().chain(extended.skills.iter_mut()) {
        if let Some((_, a @ Availability::Unavailable(_))) =
            availability.iter().find(|(id, _)| *id == skill.id)
        {
            skill.description = format!(
                "{}\n\nUnavailable now: {}.",
                skill.description,
                a.reasons().join("; ")
            );
            skill.tags.push("unavailable".into());
        }
    }
    // The workflows' sources, for a run's page: for authenticated callers when there
    // are credentials to check; on an open server, where anyone may read every task and
    // run anyway, on the card itself.
    let sources = workflow_sources(&workflows, &availability);
    let with_sources = if offers_extended {
        &mut extended
    } else {
        &mut card
    };
    with_sources.capabilities_mut().extensions.push(sources);
    // A caller may hold a run within what its own has left (docs/budgets.md).
    let bounds = a2a::card::AgentExtension {
        uri: crate::connect::bounds::EXTENSION.into(),
        description: "Message metadata a2a_orchestrator.budget ({cost, tokens, calls}) and a2a_orchestrator.timeout_ms lower the run's budget and deadline; a task reports what it used as gen_ai.usage.input_tokens, gen_ai.usage.output_tokens and a2a_orchestrator.usage.cost".into(),
        required: false,
        params: None,
    };
    for c in [&mut card, &mut extended] {
        c.capabilities_mut().extensions.push(bounds.clone());
    }
    (card, offers_extended.then_some(extended))
}

/// How often the workflow files are looked at for changes, by default.
pub const RELOAD_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// What the workflow files and the agents file hold: each file's path and a hash of its
/// bytes. Hashed rather than stat'ed: an edit that keeps a file's size within one tick
/// of the file system's clock leaves its size and time as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileStamps(Vec<(std::path::PathBuf, u64)>);

impl FileStamps {
    /// The files of `config` as they are now (a file that cannot be read is left out,
    /// so that it counts as changed once it can be).
    pub(crate) fn of(config: &HostConfig) -> Self {
        use std::hash::{Hash, Hasher};
        let stamp = |path: std::path::PathBuf| {
            let bytes = orchestrator_core::config::read_bytes(&path).ok()?;
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut hasher);
            Some((path, hasher.finish()))
        };
        let mut files: Vec<_> = std::fs::read_dir(&config.workflows)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter_map(stamp)
            .collect();
        files.sort();
        files.extend(stamp(config.agents.clone()));
        Self(files)
    }
}

/// The next SIGHUP (never, where there are no such signals or none can be listened to).
async fn hangup(signals: &mut Option<tokio::signal::unix::Signal>) {
    if let Some(s) = signals.as_mut()
        && s.recv().await.is_some()
    {
        return;
    }
    std::future::pending().await
}

/// What the background tasks that rebuild the cards hold: the configuration they are
/// built from, and the parts they read and replace.
#[derive(Clone)]
struct Published {
    config: HostConfig,
    url: String,
    orchestrator: Orchestrator,
    server: A2aServer,
    registry: Registry,
    reloads: super::ops::LastReload,
}

impl Published {
    /// The cards built again from the workflows loaded and the agents as `agents` says,
    /// and served from now on.
    fn publish(&self, agents: &[AgentStatus]) {
        let (card, extended) = cards(&self.config, &self.url, &self.orchestrator, agents);
        self.server.replace_cards(card, extended);
    }

    /// Why `workflows` may not be served, when they may not: rules no caller can be
    /// held to (see [`prepare`]).
    fn refused(&self, workflows: &[Arc<Workflow>]) -> Option<String> {
        let guarded = guarded(workflows);
        (no_credentials(&self.config) && !guarded.is_empty() && !self.config.insecure_open)
            .then(|| unenforced(&guarded))
    }

    /// Loads the files again: all or nothing (see [`Host::reload`]).
    async fn reload(&self, why: &str) {
        let (orchestrator, registry) = (&self.orchestrator, &self.registry);
        match load(&self.config) {
            Ok((workflows, _)) if self.refused(&workflows).is_some() => {
                let said: Vec<String> = self.refused(&workflows).into_iter().collect();
                tracing::error!(problems = %said.join("\n"), "{why}, but the files have problems: the workflows and agents loaded before stay");
                self.reloads.failed(said);
            }
            Ok((_, agents))
                if currency(&self.config, &agents).as_deref() != orchestrator.currency() =>
            {
                let said = vec![format!(
                    "{}: the prices are now in {}, and this server counts costs in {}: restart it to change the currency",
                    self.config.agents.display(),
                    currency(&self.config, &agents)
                        .as_deref()
                        .unwrap_or("no currency"),
                    orchestrator.currency().unwrap_or("no currency"),
                )];
                tracing::error!(problems = %said.join("\n"), "{why}, but the files have problems: the workflows and agents loaded before stay");
                self.reloads.failed(said);
            }
            Ok((workflows, agents)) => {
                let changes = registry.replace_agents(&agents, &ProcessEnv).await;
                if !changes.is_empty() {
                    orchestrator.replace_agent_urls(registry.locations());
                }
                let ids: Vec<String> = workflows.iter().map(|w| w.id.to_string()).collect();
                for problem in registry.skill_problems(workflows.iter().map(AsRef::as_ref)) {
                    tracing::warn!("{problem}");
                }
                for off in super::webhook::off(&workflows) {
                    tracing::warn!("{off}");
                }
                orchestrator.replace_workflows(workflows);
                self.publish(&registry.statuses());
                self.reloads.succeeded();
                tracing::info!(
                    workflows = %ids.join(", "),
                    agents_added = %changes.added.join(", "),
                    agents_changed = %changes.changed.join(", "),
                    agents_removed = %changes.removed.join(", "),
                    "{why}: the workflows and agents loaded again"
                );
            }
            Err(problems) => {
                let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
                tracing::error!(problems = %said.join("\n"), "{why}, but the files have problems: the workflows and agents loaded before stay");
                self.reloads.failed(said);
            }
        }
    }
}

impl Host {
    fn published(&self) -> Published {
        Published {
            config: self.config.clone(),
            url: self.url.clone(),
            orchestrator: self.orchestrator.clone(),
            server: self.server.clone(),
            registry: self.registry.clone(),
            reloads: self.reloads.clone(),
        }
    }

    /// Loads the workflow files and `agents.toml` again on each SIGHUP `signals` gives and, with
    /// `[server] reload_workflows`, when a file changes (looked at every
    /// [`HostConfig::reload_interval`]). All or nothing: when every file is valid (and every agent a
    /// workflow names is in the agents file), new runs start on the new set, new and
    /// changed agents are discovered before they are called, and the cards list the
    /// workflows; when one is not, its problems are logged and what was loaded stays.
    /// Runs going on keep the workflow version they started with.
    fn reload(
        &self,
        mut signals: Option<tokio::signal::unix::Signal>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let published = self.published();
        // Compared with the files as they were before they were loaded, so that a file
        // saved while the server started is loaded at the first look.
        let loaded_from = self.loaded_from.clone();
        async move {
            let watch = published.config.reload_workflows;
            let mut seen = loaded_from;
            loop {
                let asked = tokio::select! {
                    () = tokio::time::sleep(published.config.reload_interval), if watch => false,
                    () = hangup(&mut signals) => true,
                };
                let now = FileStamps::of(&published.config);
                if !asked && now == seen {
                    continue;
                }
                seen = now;
                published
                    .reload(if asked { "SIGHUP" } else { "the files changed" })
                    .await;
            }
        }
    }

    /// Keeps the cards true to the agents: looked at every
    /// [`HostConfig::reload_interval`], a workflow
    /// none of whose agents can be called is marked unavailable on its skill, and the
    /// mark is gone once one can be (the cards are rebuilt only when that changes).
    pub fn mark_unavailable(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let published = self.published();
        async move {
            let mut shown: Option<Vec<(String, &'static str)>> = None;
            let mut tick = tokio::time::interval(published.config.reload_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let agents = published.registry.statuses();
                let now: Vec<(String, &'static str)> = published
                    .orchestrator
                    .workflows()
                    .iter()
                    .map(|w| (w.id.to_string(), availability::of(w, &agents).as_str()))
                    .collect();
                // The first look rebuilds too: agents may have changed since the cards were
                // built.
                if shown.as_ref() != Some(&now) {
                    published.publish(&agents);
                    if shown.is_some() {
                        tracing::info!(workflows = ?now, "the workflows' availability changed: the cards say so");
                    }
                }
                shown = Some(now);
            }
        }
    }
}

/// Prunes finished tasks and runs older than `retention`, at a tenth of it (between
/// a second and an hour), until dropped.
pub async fn prune_every(store: Arc<dyn Store>, retention: std::time::Duration) {
    let period = (retention / 10).clamp(
        std::time::Duration::from_secs(1),
        std::time::Duration::from_secs(3600),
    );
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(before) = std::time::SystemTime::now().checked_sub(retention) else {
            continue;
        };
        match store.prune_finished(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(tasks = n, "pruned finished tasks and runs"),
            Err(e) => tracing::warn!(error = %e, "pruning the store failed"),
        }
    }
}

/// The store's reports (commits timed, notices heard, unreadable tasks), counted in the
/// process's metrics.
struct StoreMetrics;

impl orchestrator_store::StoreObserver for StoreMetrics {
    fn committed(&self, took: std::time::Duration) {
        orchestrator_metrics::get()
            .store_commit
            .observe(took.as_secs_f64());
    }

    fn listening(&self, heard: bool) {
        orchestrator_metrics::get()
            .store_listening
            .set(i64::from(heard));
    }

    fn unreadable_task(&self) {
        orchestrator_metrics::get().store_unreadable_tasks.inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_that_keeps_the_size_is_a_change() {
        let dir = std::env::temp_dir().join(format!("file-stamps-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("workflows")).unwrap();
        let config = HostConfig {
            name: String::new(),
            description: String::new(),
            workflows: dir.join("workflows"),
            agents: dir.join("agents.toml"),
            server: ServerConfig::default(),
            store: StoreSpec::Memory,
            retention: std::time::Duration::ZERO,
            llm: None,
            llm_price: None,
            limits: Default::default(),
            ready_requires_agents: false,
            reload_workflows: true,
            reload_interval: RELOAD_EVERY,
            insecure_open: false,
            card_signing: None,
        };
        let file = dir.join("workflows/a.toml");
        std::fs::write(&file, "message = \"hello\"").unwrap();
        let before = FileStamps::of(&config);
        assert_eq!(before, FileStamps::of(&config));
        // The same size, at once: within the file system clock's tick.
        std::fs::write(&file, "message = \"howdy\"").unwrap();
        assert_ne!(before, FileStamps::of(&config));
        // A file that is not a workflow's is no change; the agents file is one.
        std::fs::write(dir.join("workflows/notes.txt"), "x").unwrap();
        let now = FileStamps::of(&config);
        std::fs::write(dir.join("workflows/notes.txt"), "y").unwrap();
        assert_eq!(now, FileStamps::of(&config));
        std::fs::write(dir.join("agents.toml"), "").unwrap();
        assert_ne!(now, FileStamps::of(&config));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

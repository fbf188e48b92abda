//! The command-line front end: argument parsing and the user-facing output of each
//! subcommand. Library code never prints; this module does.

/// A [`BadInput`] error with the message `format!` makes (declared before the
/// modules, so every command has it).
macro_rules! bad_input {
    ($($arg:tt)*) => {
        anyhow::Error::from($crate::cli::BadInput(format!($($arg)*)))
    };
}

mod agents;
mod bench;
mod demo;
mod follow;
mod progress;
mod run;
mod runs;
mod send;
mod test;
mod workflows;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::host::settings::{self, Settings};
use a2a::client::{CardResolver, ClientConfig, choose_interfaces, http_client};

/// A multi-agent orchestrator for the Agent2Agent (A2A) protocol.
#[derive(Debug, Parser)]
#[command(name = "a2a-orchestrator", version, about)]
pub struct Cli {
    /// How log lines are written to stderr: `text`, or `json` (one object a line, with
    /// the fields of the spans it happened in: run, step, agent, task).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "A2A_LOG_FORMAT"
    )]
    pub log_format: LogFormat,
    /// Errors in full: each cause, with the protocol's error codes and data.
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// A mistake in what the user gave — a flag, an argument, a name, a variable — as
/// opposed to a failure of what the command did: it exits 2 (the README's exit codes).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// An error as the user reads it: the first cause that says what went wrong in their
/// terms. An A2A error from the orchestrator or an agent is given by its message, its
/// code and data only with `verbose` (which gives every cause).
pub fn describe(e: &anyhow::Error, verbose: bool) -> String {
    if verbose {
        return format!("{e:#}");
    }
    let rpc = e
        .chain()
        .find_map(|c| match c.downcast_ref::<a2a::client::ClientError>() {
            Some(a2a::client::ClientError::Rpc(rpc)) => Some(rpc),
            _ => c.downcast_ref::<a2a::RpcError>(),
        });
    let refused = e
        .chain()
        .find_map(|c| match c.downcast_ref::<a2a::client::ClientError>() {
            Some(a2a::client::ClientError::HttpStatus { url, status, body })
                if matches!(status, 401 | 403) =>
            {
                Some((url, *status, body))
            }
            _ => None,
        });
    if let Some((url, status, body)) = refused {
        // What the server said, not its JSON: a JSON-RPC or problem body's message.
        let said = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .or_else(|| v.pointer("/message"))
                    .or_else(|| v.pointer("/detail"))
                    .and_then(|m| m.as_str().map(str::to_owned))
            })
            .unwrap_or_else(|| body.lines().next().unwrap_or_default().to_owned());
        let hint = if status == 401 {
            "it needs credentials: name a variable holding a bearer token with --token-env VAR"
        } else {
            "these credentials may not do this"
        };
        return format!("{url} refused the call (HTTP {status}: {said}): {hint} (-v for details)");
    }
    match rpc {
        Some(rpc) => {
            let said = format!("{} (-v for details)", rpc.message);
            // The error itself, or the context a command put around it.
            let bare = e.chain().next().is_some_and(|outer| {
                outer.is::<a2a::client::ClientError>() || outer.is::<a2a::RpcError>()
            });
            if bare { said } else { format!("{e}: {said}") }
        }
        None => format!("{e:#}"),
    }
}

/// The exit code of a failed command: 2 for bad input, else 1.
pub fn exit_code(e: &anyhow::Error) -> ExitCode {
    if e.chain().any(|c| c.is::<BadInput>()) {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}

/// The log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fetch an agent's card (well-known path, then the legacy one) and print it as JSON.
    Card {
        /// The agent's base URL, or the card's own URL.
        url: String,
    },
    /// Check workflow files: every problem, with file:line:column.
    ///
    /// Exits 0 when all are valid, 1 when any has an error (or, with --strict, a warning).
    Validate {
        /// Workflow files or directories of them [default: workflows]
        paths: Vec<PathBuf>,
        /// The agents file whose names `agent = "..."` must use [default: agents.toml, if present]
        #[arg(long)]
        agents: Option<PathBuf>,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
        /// Do not discover the agents: `skill = "..."` is then not checked against their
        /// cards.
        #[arg(long)]
        offline: bool,
    },
    /// Discover the agents of agents.toml and show their status, streaming and push
    /// support, and skills.
    Agents {
        /// The agents file.
        #[arg(long, default_value = "agents.toml")]
        agents: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Exit 1 if any agent is unavailable.
        #[arg(long)]
        strict: bool,
    },
    /// Serve the orchestrator as one A2A agent: every workflow is a skill on its card.
    ///
    /// Settings come from the flags, then the --config file, then the defaults.
    Serve(Box<ServeArgs>),
    /// See it all work: start the example agents and the orchestrator on loopback, send
    /// the example request over A2A, and show the run live.
    Demo {
        /// Which demo.
        #[arg(value_enum, default_value = "travel")]
        which: DemoKind,
        /// Answer every question automatically (also when stdin is not a terminal).
        #[arg(long, short)]
        yes: bool,
        /// The example agents' think time before each answer.
        #[arg(long, default_value = "250ms", value_parser = orchestrator_core::config::parse_duration)]
        latency: std::time::Duration,
        /// Share of the agents' tasks that fail with a simulated outage (0 to 1), to see
        /// retries.
        #[arg(long, default_value_t = 0.0, value_parser = crate::agents::parse_rate)]
        failure_rate: f64,
        /// The A2A generations the example agents speak: both, 1.0, 0.3, or mixed (they
        /// take turns, so one run calls agents of both generations).
        #[arg(long, value_enum, default_value = "both")]
        protocol: crate::agents::Speaks,
        /// A language model for the orchestrator and the example agents (off by default).
        #[command(flatten)]
        llm: crate::llm::LlmArgs,
    },
    /// Run a workflow in-process against the agents of agents.toml, with live progress.
    Run(run::RunArgs),
    /// Test workflows: run each test file (*.test.toml) on scripted agents and virtual
    /// time, and check what the run came to.
    ///
    /// Exits 0 when all pass, 1 when a test fails, 2 when a test file is invalid.
    Test(test::TestArgs),
    /// See and steer the runs of a serving orchestrator, over A2A: list, show, watch,
    /// answer, approve, reject, cancel.
    Runs(runs::RunsArgs),
    /// Send a message to any A2A agent (the orchestrator included) and print the reply,
    /// or with --stream every event as it arrives.
    Send(send::SendArgs),
    /// Measure the orchestrator against calling the agents directly: overhead per step,
    /// fan-out, throughput, streaming relay latency and memory (build with --release).
    Bench(bench::BenchArgs),
    /// Render a workflow's DAG as Mermaid or Graphviz DOT.
    Graph {
        /// A workflow file, or the id of a workflow in --workflows.
        workflow: String,
        #[arg(long, value_enum, default_value = "mermaid")]
        format: GraphFormat,
        /// Where to look a workflow id up.
        #[arg(long, default_value = "workflows")]
        workflows: PathBuf,
    },
}

/// The demos.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DemoKind {
    /// Seed 004's international trip: flights, hotel, activities, currency and advice.
    Travel,
    /// Seed 004's new hire: HR, IT, facilities and the hiring manager.
    Onboarding,
}

/// The formats of `graph`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    Mermaid,
    Dot,
}

/// Runs the parsed command; returns the process exit code.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Card { url } => {
            let config = ClientConfig::default();
            let resolver = CardResolver::new(http_client(), config.header_map()?, config.timeout);
            let (card, document) = resolver.resolve_document(&url).await?;
            say!("{}", serde_json::to_string_pretty(&document)?)?;
            match choose_interfaces(&card, Default::default()) {
                Ok(choice) => eprintln!("would call {} ({})", choice.interfaces[0], choice.reason),
                Err(e) => eprintln!("warning: {e}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate {
            paths,
            agents,
            strict,
            offline,
        } => workflows::validate(&paths, agents.as_deref(), strict, offline).await,
        Command::Agents {
            agents: path,
            json,
            strict,
        } => agents::agents(&path, json, strict).await,
        Command::Serve(args) => serve(*args).await,
        Command::Demo {
            which,
            yes,
            latency,
            failure_rate,
            protocol,
            llm,
        } => {
            let set = match which {
                DemoKind::Travel => crate::agents::Set::Travel,
                DemoKind::Onboarding => crate::agents::Set::Onboarding,
            };
            let behaviour = crate::agents::Behaviour {
                latency,
                failure_rate,
                ..Default::default()
            };
            let llm = llm.config(None).map_err(|e| bad_input!("{e}"))?;
            demo::demo(set, behaviour, protocol, yes, llm).await
        }
        Command::Run(args) => run::run(args).await,
        Command::Test(args) => test::test(args).await,
        Command::Send(args) => send::send(args).await,
        Command::Runs(args) => runs::runs(args).await,
        Command::Bench(args) => bench::bench(args).await,
        Command::Graph {
            workflow,
            format,
            workflows: dir,
        } => {
            let format = match format {
                GraphFormat::Mermaid => orchestrator_core::workflow::graph::Format::Mermaid,
                GraphFormat::Dot => orchestrator_core::workflow::graph::Format::Dot,
            };
            workflows::graph(&workflow, &dir, format)
        }
    }
}

/// The flags of `serve`; each one given beats the --config file.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The `--config` file as read, once, by [`Cli::read_config`] (before the trace
    /// pipeline, which it configures, is set up).
    #[arg(skip)]
    read: Option<Box<Result<Settings, Vec<orchestrator_core::config::Diagnostic>>>>,
    /// A configuration file with [server], [auth] and [push] tables (see the README).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The agents file [default: agents.toml].
    #[arg(long)]
    agents: Option<PathBuf>,
    /// The directory of workflow files [default: workflows].
    #[arg(long)]
    workflows: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long)]
    listen: Option<String>,
    /// The URL clients reach the orchestrator at (its card's URL), if not http://LISTEN/.
    #[arg(long)]
    public_url: Option<String>,
    /// Serve HTTPS with this certificate chain (PEM), reloaded when the file changes;
    /// with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// The agent's name on its card [default: a2a-orchestrator].
    #[arg(long)]
    name: Option<String>,
    /// The agent's description on its card.
    #[arg(long)]
    description: Option<String>,
    /// Accept push-notification webhooks on loopback and private addresses
    /// (refused by default, against server-side request forgery).
    #[arg(long)]
    allow_private_webhooks: bool,
    /// Require `Authorization: Bearer <token>` on every JSON-RPC call, the token read
    /// from this environment variable (repeat for several tokens).
    #[arg(long, value_name = "VAR")]
    bearer_token_env: Vec<String>,
    /// Require an API key on every JSON-RPC call, read from this environment variable
    /// (repeat for several keys); sent in the --api-key-header header.
    #[arg(long, value_name = "VAR")]
    api_key_env: Vec<String>,
    /// The header API keys come in [default: X-API-Key].
    #[arg(long)]
    api_key_header: Option<String>,
    /// Where tasks and runs are kept: sqlite://PATH (survives restarts),
    /// postgres://USER:PASSWORD@HOST/DATABASE (a PostgreSQL server) or memory
    /// [default: sqlite://data/orchestrator.db].
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// How long finished tasks and runs are kept before they are pruned, e.g. 7d, 12h
    /// [default: 7d].
    #[arg(long, value_name = "DURATION")]
    retention: Option<String>,
    /// With a postgres:// store shared by replicas: how long a replica's lease lasts
    /// without renewal, so how soon the runs of one that died are taken over
    /// [default: 10s].
    #[arg(long, value_name = "DURATION")]
    lease: Option<String>,
    /// Do not serve the web view at /ui/.
    #[arg(long)]
    no_ui: bool,
    /// Serve workflows that say who may start or answer them (allow, approvers,
    /// four_eyes, quorum) although no credentials are configured: anyone who reaches
    /// the server may then start and answer them. Without it, `serve` refuses to.
    #[arg(long)]
    insecure_open: bool,
    #[command(flatten)]
    llm: crate::llm::LlmArgs,
}

impl ServeArgs {
    /// The settings the flags give (credentials read from the environment).
    fn settings(self) -> anyhow::Result<Settings> {
        let secret = |var: &String| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    bad_input!("the environment variable {var} (a credential for serve) is not set")
                })
        };
        let bearer_tokens = self
            .bearer_token_env
            .iter()
            .map(secret)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let keys = self
            .api_key_env
            .iter()
            .map(secret)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let header = self.api_key_header.unwrap_or_else(|| "X-API-Key".into());
        let auth = (!bearer_tokens.is_empty() || !keys.is_empty()).then(|| {
            crate::auth::unnamed(bearer_tokens, (!keys.is_empty()).then_some((header, keys)))
        });
        if let Some(l) = &self.listen {
            settings::check_listen(l).map_err(|e| bad_input!("--listen: {e}"))?;
        }
        if let Some(u) = &self.public_url {
            settings::check_public_url(u).map_err(|e| bad_input!("--public-url: {e}"))?;
        }
        let store = self
            .store
            .as_deref()
            .map(orchestrator_store::StoreSpec::parse)
            .transpose()
            .map_err(|e| bad_input!("--store: {e}"))?;
        let retention = self
            .retention
            .as_deref()
            .map(orchestrator_core::config::parse_duration)
            .transpose()
            .map_err(|e| bad_input!("--retention: {e}"))?
            .filter(|d| !d.is_zero());
        let lease = self
            .lease
            .as_deref()
            .map(orchestrator_core::config::parse_duration)
            .transpose()
            .map_err(|e| bad_input!("--lease: {e}"))?;
        if lease.is_some_and(|l| l < std::time::Duration::from_millis(300)) {
            return Err(bad_input!(
                "--lease: at least 300ms (a third of it is the renewal period)"
            ));
        }
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(std::sync::Arc::new(
                a2a::server::CertFiles::open(cert, key)
                    .map_err(|e| bad_input!("--tls-cert / --tls-key: {e}"))?,
            )),
            _ => None,
        };
        Ok(Settings {
            name: self.name,
            description: self.description,
            listen: self.listen,
            public_url: self.public_url,
            agents: self.agents,
            workflows: self.workflows,
            max_body_bytes: None,
            shutdown_grace: None,
            cors_origins: None,
            max_connections: None,
            max_streaming_connections_per_caller: None,
            header_read_timeout: None,
            idle_timeout: None,
            max_parts: None,
            max_metadata_bytes: None,
            max_id_bytes: None,
            ui: self.no_ui.then_some(false),
            ready_requires_agents: None,
            reload_workflows: None,
            reload_interval: None,
            insecure_open: self.insecure_open.then_some(true),
            grpc: None,
            protocols: None,
            message_idempotency: None,
            card_signing: None,
            tls,
            sign_in: None,
            auth,
            allow_private_webhooks: self.allow_private_webhooks.then_some(true),
            push_timeout: None,
            store,
            retention,
            lease,
            busy_timeout: None,
            llm: None,
            llm_price: None,
            metrics_token: None,
            step_output_bytes: None,
            run_output_bytes: None,
            step_artifacts: None,
            step_events: None,
            traces: Default::default(),
        })
    }
}

impl Cli {
    /// Reads `serve --config FILE` (the only read of it) and gives its trace settings
    /// (`[telemetry]`), so the first spans are exported too. A file with problems gives
    /// none here; `serve` reports them.
    pub fn read_config(&mut self) -> crate::telemetry::TraceSettings {
        match &mut self.command {
            Command::Serve(args) => {
                let Some(path) = &args.config else {
                    return Default::default();
                };
                let read = settings::load(path, &crate::registry::env::ProcessEnv);
                let traces = read.as_ref().map(|s| s.traces.clone()).unwrap_or_default();
                args.read = Some(Box::new(read));
                traces
            }
            _ => Default::default(),
        }
    }
}

/// `serve`: checks every file, binds, discovers the agents, serves until SIGINT/SIGTERM.
async fn serve(mut args: ServeArgs) -> anyhow::Result<ExitCode> {
    use crate::host::serve;
    let read = match (args.read.take(), &args.config) {
        (Some(read), _) => *read,
        (None, Some(path)) => settings::load(path, &crate::registry::env::ProcessEnv),
        (None, None) => Ok(Settings::default()),
    };
    let file = match read {
        Ok(s) => s,
        Err(problems) => return Ok(config_problems(problems)),
    };
    let llm = args
        .llm
        .config(file.llm.clone().flatten())
        .map_err(|e| bad_input!("{e}"))?;
    let mut flags = args.settings()?;
    flags.llm = Some(llm);
    let resolved = file.overridden_by(flags).resolve();
    let (mut config, listen, public_url) = (resolved.host, resolved.listen, resolved.public_url);
    if let Some(lease) = resolved.lease {
        match config.store.clone().with_lease(lease) {
            Ok(store) => config.store = store,
            Err(e) => {
                eprintln!("error: --lease / [store] lease: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    if let Some(timeout) = resolved.busy_timeout {
        match config.store.clone().with_busy_timeout(timeout) {
            Ok(store) => config.store = store,
            Err(e) => {
                eprintln!("error: [store] busy_timeout: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    if resolved.store_named
        && let Some(dir) = settings::missing_store_dir(&config.store)
    {
        eprintln!(
            "error: --store / [store]: the directory {} does not exist; create it first (a mistyped path would otherwise start an empty store and hide your runs)",
            dir.display()
        );
        return Ok(ExitCode::from(2));
    }
    let options = serve::RunOptions {
        metrics_token: resolved.metrics_token,
        ui: resolved.ui,
        sign_in: resolved.sign_in,
        retention: config.retention,
    };
    let store_name = config.store.to_string();
    let scheme = if config.server.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let bind = || async {
        a2a::server::bind(&listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))
    };
    // Made once: a stop asked for while the store is awaited ends the wait.
    let durable = !matches!(config.store, orchestrator_store::StoreSpec::Memory);
    let mut shutdown = Box::pin(shutdown_signal(durable));
    let mut early: Option<tokio::net::TcpListener> = None;
    let mut waits = crate::host::starting::waits();
    let prepared = loop {
        match serve::prepare(config.clone()).await {
            Ok(p) => break p,
            Err(serve::StartError::Config(problems)) => return Ok(config_problems(problems)),
            Err(e @ serve::StartError::Open(_)) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
            Err(serve::StartError::Store(e)) if e.may_pass() => {
                // The database may yet come: wait for it, the port answering the
                // probes meanwhile (/readyz 503), rather than exit.
                let listener = match &mut early {
                    Some(l) => l,
                    None => early.insert(bind().await?),
                };
                let wait = waits.next().unwrap_or(std::time::Duration::from_secs(30));
                // The probes are answered in plain HTTP: on a TLS port, none is (a
                // client's TLS handshake would only fail); the connections wait.
                let tls = config.server.tls.is_some();
                let probes = if tls {
                    String::new()
                } else {
                    format!(
                        " (on http://{}/, /readyz answers 503 meanwhile)",
                        listener.local_addr()?
                    )
                };
                eprintln!("warning: {e}; trying again in {wait:.0?}{probes}");
                let why = e.to_string();
                let waiting = async {
                    if tls {
                        tokio::time::sleep(wait).await;
                    } else {
                        crate::host::starting::answer_probes(listener, &why, wait).await;
                    }
                };
                tokio::select! {
                    () = waiting => {}
                    () = shutdown.as_mut() => {
                        let _ = writeln!(std::io::stdout(), "a2a-orchestrator stopped while waiting for its store");
                        return Ok(ExitCode::SUCCESS);
                    }
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    let listener = match early {
        Some(l) => l,
        None => bind().await?,
    };
    let addr = listener.local_addr()?;
    let url = public_url.unwrap_or_else(|| format!("{scheme}://{addr}/"));
    let host = prepared.build(&url).await;
    for s in host.registry.statuses() {
        if s.health.is_unavailable() {
            eprintln!("warning: agent `{}` {}", s.name, s.health);
        }
    }
    for problem in host
        .registry
        .skill_problems(host.orchestrator.workflows().iter().map(AsRef::as_ref))
    {
        eprintln!(
            "{problem}
"
        );
    }
    host.registry.start_refresh();
    match host.server.recover().await {
        Ok(0) => {}
        Ok(n) => writeln!(
            std::io::stdout(),
            "resuming {n} unfinished task(s) from {store_name}"
        )?,
        Err(e) => {
            eprintln!("error: cannot read the unfinished tasks of {store_name}: {e}");
            return Ok(ExitCode::from(2));
        }
    }
    let skills: Vec<String> = host
        .server
        .card()
        .skills
        .iter()
        .map(|s| s.id.clone())
        .collect();
    // One line: whoever waits for it may stop reading there.
    let view = if options.ui {
        format!("; web view: {}/ui/", url.trim_end_matches('/'))
    } else {
        String::new()
    };
    writeln!(
        std::io::stdout(),
        "a2a-orchestrator listening on {url} (workflows: {}{view})",
        skills.join(", ")
    )?;
    if let Err(e) = host.run(listener, options, shutdown).await {
        eprintln!("error: {e}");
        return Ok(ExitCode::FAILURE);
    }
    let _ = writeln!(std::io::stdout(), "a2a-orchestrator stopped");
    Ok(ExitCode::SUCCESS)
}

/// Prints every configuration problem; the exit code that says "nothing was started".
fn config_problems(problems: Vec<orchestrator_core::config::Diagnostic>) -> ExitCode {
    for p in problems {
        eprintln!("{p}\n");
    }
    eprintln!("error: the configuration has problems; nothing was started");
    ExitCode::from(2)
}

/// Completes on SIGINT or SIGTERM, saying what becomes of the runs (`durable`: a store
/// that outlives the process). The signals are caught from this call on, not from the
/// future's first poll: a SIGTERM sent as soon as `serve` says it listens is a graceful
/// stop, not the default's end of the process.
fn shutdown_signal(durable: bool) -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        let signal = tokio::select! {
            () = received(&mut interrupt) => "SIGINT",
            () = received(&mut terminate) => "SIGTERM",
        };
        #[cfg(not(unix))]
        let signal = {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        };
        // On stdout, beside the line that said where it listens; written, not printed: a
        // reader gone (the pipe closed) must not stop the stop.
        let runs = if durable {
            "runs stay in the store for the next server"
        } else {
            "the store is memory: unfinished runs end with this process"
        };
        let _ = writeln!(
            std::io::stdout(),
            "a2a-orchestrator stopping ({signal}): no new connections; requests in flight finish, {runs}"
        );
    }
}

/// The next of these signals; never, when they could not be caught.
#[cfg(unix)]
async fn received(signals: &mut Option<tokio::signal::unix::Signal>) {
    match signals {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::{BadInput, describe, exit_code};
    use a2a::RpcError;
    use a2a::client::ClientError;
    use std::process::ExitCode;

    #[test]
    fn errors_speak_the_users_terms_and_give_codes_with_verbose() {
        let refused = anyhow::Error::from(ClientError::Rpc(RpcError::invalid_params(
            "metadata.from",
            "no step `aprove` is waiting; waiting: approve",
        )))
        .context("cannot answer run r-1");
        let plain = describe(&refused, false);
        assert!(
            plain.starts_with("cannot answer run r-1: ") && plain.contains("approve"),
            "{plain}"
        );
        assert!(
            !plain.contains("-32602") && !plain.contains("JSON-RPC"),
            "{plain}"
        );
        let verbose = describe(&refused, true);
        assert!(verbose.contains("-32602"), "{verbose}");
        assert_eq!(exit_code(&refused), ExitCode::FAILURE);
        let bad = anyhow::Error::from(BadInput("--lease: not a duration".into()));
        assert_eq!(exit_code(&bad), ExitCode::from(2));
        assert_eq!(describe(&bad, false), "--lease: not a duration");
    }

    #[test]
    fn a_refused_call_says_what_the_server_said_not_its_json() {
        let e = anyhow::Error::from(ClientError::HttpStatus {
            url: "http://127.0.0.1:8080/".into(),
            status: 401,
            body: r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"missing credentials: send Authorization: Bearer"}}"#.into(),
        });
        let said = describe(&e, false);
        assert_eq!(
            said,
            "http://127.0.0.1:8080/ refused the call (HTTP 401: missing credentials: send Authorization: Bearer): it needs credentials: name a variable holding a bearer token with --token-env VAR (-v for details)"
        );
        assert!(describe(&e, true).contains("jsonrpc"), "-v shows all");
    }
}

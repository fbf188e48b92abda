//! The orchestrator's own configuration file (`serve --config FILE`), and how it meets
//! the command-line flags.
//!
//! ```toml
//! [server]
//! name = "Acme orchestrator"
//! description = "HR, IT and facilities workflows"
//! listen = "0.0.0.0:8080"
//! public_url = "https://agents.acme.example/"
//! agents = "agents.toml"          # relative to this file
//! workflows = "workflows"         # relative to this file
//! max_body_bytes = 10485760
//! shutdown_grace = "10s"          # on SIGTERM: how long requests in flight may finish
//! cors_origins = ["https://app.example.com"]   # web pages allowed to call (none by default)
//! max_connections = 4096          # connections at once; idle ones make room, else new ones wait
//! max_streaming_connections_per_caller = 256   # connections one caller (principal, else address) holds with streams
//! header_read_timeout = "10s"     # a new connection's first request, and a request's headers and body
//! idle_timeout = "60s"            # a connection with nothing in flight is closed after this
//! max_parts = 1000                # parts in one message
//! max_metadata_bytes = 65536      # a message's or request's metadata, as JSON
//! max_id_bytes = 256              # task, context and message ids
//! ui = true                       # the web view at /ui/ (on by default)
//! ready_requires_agents = false   # /readyz reports agents down; true: they make it 503
//! reload_workflows = true         # load the workflows and agents.toml again when they change (SIGHUP always does)
//! reload_interval = "2s"          # how often the files are looked at, and the agents' availability for the cards
//! insecure_open = false           # serve workflows that say who may start or answer them without [auth] (not enforced)
//! grpc = true                     # serve the gRPC binding on the same port (on by default)
//! protocols = "both"              # "1.0": a v1.0-only card, and v0.3 requests refused
//! message_idempotency = true      # a resent messageId answers with its task; false: each message is new
//! tls_cert = "tls/cert.pem"       # serve HTTPS (HTTP/2 and HTTP/1.1): the chain, PEM…
//! tls_key = "tls/key.pem"         # …and its key; both picked up again when they change
//! tls_client_ca = "tls/clients.pem"  # mutual TLS: clients present a certificate these signed
//! card_signing_key = "keys/card.pem"  # sign the Agent Cards (ES256 or EdDSA; PKCS#8 PEM or JWK); a new key file is picked up
//! card_retired_keys = ["keys/card-2025.pem"]  # keys signed with before: still published at /.well-known/jwks.json
//!
//! [auth]                          # every A2A call must present one of these
//! bearer_token_env = ["ORCH_TOKEN"]   # and named tokens, roles, OpenID Connect:
//! api_key_env = ["ORCH_KEY"]          # see crate::auth::config
//! api_key_header = "X-API-Key"
//!
//! [push]
//! allow_private_webhooks = false
//! timeout = "10s"
//!
//! [store]
//! url = "sqlite://data/orchestrator.db"   # or "postgres://…", "memory"; relative to this file
//! retention = "7d"                        # finished tasks and runs, then pruned
//! lease = "10s"                           # postgres: a dead replica's runs taken over within this
//! busy_timeout = "10s"                    # sqlite: how long a write waits for another process's lock
//!
//! [limits]                              # what agents may send a run (see docs/durability.md)
//! step_output_bytes = 4194304             # artifact bytes per step attempt (4 MiB)
//! run_output_bytes = 16777216             # artifact bytes per run, all steps (16 MiB)
//! step_artifacts = 1000                   # artifacts per step attempt
//! step_events = 100000                    # updates per step attempt
//!
//! [telemetry]
//! metrics_token_env = "METRICS_TOKEN"     # /metrics asks for this bearer token (open when absent)
//! otlp_endpoint = "http://collector:4318" # export traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT wins)
//! trace_sample_ratio = 0.1                # keep this share of new traces (OTEL_TRACES_SAMPLER wins)
//!
//! [llm]                           # optional: off when absent (or enabled = false)
//! base_url = "http://localhost:11434/v1"
//! model = "llama3.2"
//! api_key_env = "OPENAI_API_KEY"  # the variable holding the key, if one is needed
//! timeout = "30s"
//! max_tokens = 1024
//! routing_max_tokens = 512
//! temperature = 0.7
//! price = { input_per_million = 0.15, output_per_million = 0.6, currency = "USD" }  # llm steps' cost
//! ```
//!
//! Every setting is optional; a flag beats the file, the file beats the default. Secrets
//! never go in the file: `[auth]` names the environment variables that hold them, and a
//! variable that is not set is an error located at its name.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::llm::LlmConfig;
use crate::registry::env::Env;
use std::sync::Arc;

use a2a::server::{CertFiles, InboundAuth, ServerConfig};
use orchestrator_core::config::Diagnostic;
use orchestrator_core::config::reader::{Ctx, Sp, TableReader};
use orchestrator_core::engine::OutputLimits;
use orchestrator_store::{DEFAULT_STORE, StoreSpec};

use super::serve::HostConfig;

/// Defaults of the settings that have one.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_NAME: &str = "a2a-orchestrator";
pub const DEFAULT_DESCRIPTION: &str = "Runs multi-agent workflows; every workflow is a skill";
/// How long finished tasks and runs are kept.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// Settings from one source (the file, or the flags); `None` means "not given here".
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub name: Option<String>,
    pub description: Option<String>,
    pub listen: Option<String>,
    pub public_url: Option<String>,
    pub agents: Option<PathBuf>,
    pub workflows: Option<PathBuf>,
    pub max_body_bytes: Option<usize>,
    pub shutdown_grace: Option<Duration>,
    pub cors_origins: Option<Vec<String>>,
    pub max_connections: Option<usize>,
    pub max_streaming_connections_per_caller: Option<usize>,
    pub header_read_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub max_parts: Option<usize>,
    pub max_metadata_bytes: Option<usize>,
    pub max_id_bytes: Option<usize>,
    /// Serve the web view at `/ui/`.
    pub ui: Option<bool>,
    pub ready_requires_agents: Option<bool>,
    /// Load the workflow files again when they change.
    pub reload_workflows: Option<bool>,
    /// How often the files are looked at for changes (and the agents' availability).
    pub reload_interval: Option<Duration>,
    /// Serve workflows that say who may start or answer them with no credentials
    /// configured (their rules then not enforced).
    pub insecure_open: Option<bool>,
    /// Serve the gRPC binding beside the others.
    pub grpc: Option<bool>,
    /// The A2A generations served (`[server] protocols`): both, or v1.0 alone.
    pub protocols: Option<a2a::Versions>,
    /// A resent `messageId` answers with the task it made (on by default).
    pub message_idempotency: Option<bool>,
    /// The certificate and key `serve` presents (TLS), reloaded when they change.
    pub tls: Option<Arc<CertFiles>>,
    /// The key the cards are signed with (and the keys published beside it).
    pub card_signing: Option<Arc<crate::host::card_signing::CardSigning>>,
    pub auth: Option<InboundAuth>,
    /// Where the web view signs people in (`[auth.oidc] ui_client_id`).
    pub sign_in: Option<crate::auth::SignIn>,
    pub allow_private_webhooks: Option<bool>,
    pub push_timeout: Option<Duration>,
    pub store: Option<StoreSpec>,
    pub retention: Option<Duration>,
    /// Replicas' leases on a shared (PostgreSQL) store.
    pub lease: Option<Duration>,
    /// How long a write to a SQLite store waits for another process's lock.
    pub busy_timeout: Option<Duration>,
    /// `Some(None)`: the file turns the model off (`enabled = false`).
    pub llm: Option<Option<LlmConfig>>,
    /// `[llm] price`: what the model's tokens cost, for runs' llm steps.
    pub llm_price: Option<crate::registry::price::Pricing>,
    /// The bearer token `/metrics` asks for.
    pub metrics_token: Option<String>,
    /// `[limits]`: bounds on what agents send a run, each given one replacing the
    /// default.
    pub step_output_bytes: Option<u64>,
    pub run_output_bytes: Option<u64>,
    pub step_artifacts: Option<usize>,
    pub step_events: Option<usize>,
    /// Where traces are exported, and how many of them; read once at start-up, before
    /// the rest (see [`crate::cli::Cli::read_config`]).
    pub traces: crate::telemetry::TraceSettings,
}

/// What `serve` ends up with.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub host: HostConfig,
    pub listen: String,
    pub public_url: Option<String>,
    /// The bearer token `/metrics` asks for; none: open.
    pub metrics_token: Option<String>,
    /// Serve the web view at `/ui/`.
    pub ui: bool,
    /// Where the web view signs people in.
    pub sign_in: Option<crate::auth::SignIn>,
    /// Replicas' leases, when set (`--lease`, `[store] lease`): applied to the store
    /// by `StoreSpec::with_lease`, which says when the store has none.
    pub lease: Option<Duration>,
    /// A SQLite store's busy timeout, when set (`[store] busy_timeout`): applied by
    /// `StoreSpec::with_busy_timeout`, which says when the store is not SQLite.
    pub busy_timeout: Option<Duration>,
    /// The store was named (`--store`, `[store]`), not the default: a SQLite file's
    /// directory must then exist (see [`missing_store_dir`]).
    pub store_named: bool,
}

/// For a store the user named: the directory its SQLite file would be in, when that
/// does not exist. A typo in a path must not start an empty store in its place (and
/// hide every run of the real one); the default store's `data/` is created.
pub fn missing_store_dir(store: &StoreSpec) -> Option<std::path::PathBuf> {
    let StoreSpec::Sqlite { path, .. } = store else {
        return None;
    };
    let dir = path.parent()?;
    (!dir.as_os_str().is_empty() && !dir.is_dir()).then(|| dir.to_owned())
}

impl Settings {
    /// Each setting of `over` that is given replaces the one of `self`.
    pub fn overridden_by(self, over: Settings) -> Settings {
        Settings {
            name: over.name.or(self.name),
            description: over.description.or(self.description),
            listen: over.listen.or(self.listen),
            public_url: over.public_url.or(self.public_url),
            agents: over.agents.or(self.agents),
            workflows: over.workflows.or(self.workflows),
            max_body_bytes: over.max_body_bytes.or(self.max_body_bytes),
            shutdown_grace: over.shutdown_grace.or(self.shutdown_grace),
            cors_origins: over.cors_origins.or(self.cors_origins),
            max_connections: over.max_connections.or(self.max_connections),
            max_streaming_connections_per_caller: over
                .max_streaming_connections_per_caller
                .or(self.max_streaming_connections_per_caller),
            header_read_timeout: over.header_read_timeout.or(self.header_read_timeout),
            idle_timeout: over.idle_timeout.or(self.idle_timeout),
            max_parts: over.max_parts.or(self.max_parts),
            max_metadata_bytes: over.max_metadata_bytes.or(self.max_metadata_bytes),
            max_id_bytes: over.max_id_bytes.or(self.max_id_bytes),
            ui: over.ui.or(self.ui),
            ready_requires_agents: over.ready_requires_agents.or(self.ready_requires_agents),
            reload_workflows: over.reload_workflows.or(self.reload_workflows),
            reload_interval: over.reload_interval.or(self.reload_interval),
            insecure_open: over.insecure_open.or(self.insecure_open),
            grpc: over.grpc.or(self.grpc),
            protocols: over.protocols.or(self.protocols),
            message_idempotency: over.message_idempotency.or(self.message_idempotency),
            tls: over.tls.or(self.tls),
            card_signing: over.card_signing.or(self.card_signing),
            sign_in: if over.auth.is_some() {
                over.sign_in
            } else {
                self.sign_in
            },
            auth: over.auth.or(self.auth),
            allow_private_webhooks: over.allow_private_webhooks.or(self.allow_private_webhooks),
            push_timeout: over.push_timeout.or(self.push_timeout),
            store: over.store.or(self.store),
            retention: over.retention.or(self.retention),
            lease: over.lease.or(self.lease),
            busy_timeout: over.busy_timeout.or(self.busy_timeout),
            llm: over.llm.or(self.llm),
            llm_price: over.llm_price.or(self.llm_price),
            metrics_token: over.metrics_token.or(self.metrics_token),
            step_output_bytes: over.step_output_bytes.or(self.step_output_bytes),
            run_output_bytes: over.run_output_bytes.or(self.run_output_bytes),
            step_artifacts: over.step_artifacts.or(self.step_artifacts),
            step_events: over.step_events.or(self.step_events),
            traces: crate::telemetry::TraceSettings {
                otlp_endpoint: over.traces.otlp_endpoint.or(self.traces.otlp_endpoint),
                sample_ratio: over.traces.sample_ratio.or(self.traces.sample_ratio),
            },
        }
    }

    /// Fills in the defaults.
    pub fn resolve(self) -> Resolved {
        let defaults = ServerConfig::default();
        let server = ServerConfig {
            max_body_bytes: self.max_body_bytes.unwrap_or(defaults.max_body_bytes),
            push_timeout: self.push_timeout.unwrap_or(defaults.push_timeout),
            shutdown_grace: self.shutdown_grace.unwrap_or(defaults.shutdown_grace),
            cors_origins: self.cors_origins.unwrap_or_default(),
            max_connections: self.max_connections.unwrap_or(defaults.max_connections),
            max_streaming_connections_per_caller: self
                .max_streaming_connections_per_caller
                .unwrap_or(defaults.max_streaming_connections_per_caller),
            header_read_timeout: self
                .header_read_timeout
                .unwrap_or(defaults.header_read_timeout),
            idle_timeout: self.idle_timeout.unwrap_or(defaults.idle_timeout),
            max_parts: self.max_parts.unwrap_or(defaults.max_parts),
            max_metadata_bytes: self
                .max_metadata_bytes
                .unwrap_or(defaults.max_metadata_bytes),
            max_id_bytes: self.max_id_bytes.unwrap_or(defaults.max_id_bytes),
            allow_private_webhooks: self.allow_private_webhooks.unwrap_or(false),
            auth: self.auth.filter(|a| !a.is_empty()),
            tls: self.tls,
            grpc: self.grpc.unwrap_or(defaults.grpc),
            generations: self.protocols.unwrap_or(defaults.generations),
            message_idempotency: self
                .message_idempotency
                .unwrap_or(defaults.message_idempotency),
            ..defaults
        };
        let store_named = self.store.is_some();
        Resolved {
            host: HostConfig {
                name: self.name.unwrap_or_else(|| DEFAULT_NAME.to_owned()),
                description: self
                    .description
                    .unwrap_or_else(|| DEFAULT_DESCRIPTION.to_owned()),
                workflows: self.workflows.unwrap_or_else(|| "workflows".into()),
                agents: self.agents.unwrap_or_else(|| "agents.toml".into()),
                server,
                store: self.store.clone().unwrap_or_else(|| {
                    StoreSpec::parse(DEFAULT_STORE).unwrap_or(StoreSpec::Memory)
                }),
                retention: self.retention.unwrap_or(DEFAULT_RETENTION),
                llm: self.llm.flatten(),
                llm_price: self.llm_price,
                ready_requires_agents: self.ready_requires_agents.unwrap_or(false),
                reload_workflows: self.reload_workflows.unwrap_or(true),
                reload_interval: self
                    .reload_interval
                    .unwrap_or(crate::host::serve::RELOAD_EVERY),
                insecure_open: self.insecure_open.unwrap_or(false),
                card_signing: self.card_signing,
                limits: {
                    let d = OutputLimits::default();
                    OutputLimits {
                        step_bytes: self.step_output_bytes.unwrap_or(d.step_bytes),
                        run_bytes: self.run_output_bytes.unwrap_or(d.run_bytes),
                        step_artifacts: self.step_artifacts.unwrap_or(d.step_artifacts),
                        step_events: self.step_events.unwrap_or(d.step_events),
                        // What the protocol's readers take: a task holding more could
                        // not be read back.
                        artifact_parts: a2a::v0_3::MAX_PARTS,
                    }
                },
            },
            listen: self.listen.unwrap_or_else(|| DEFAULT_LISTEN.to_owned()),
            public_url: self.public_url,
            metrics_token: self.metrics_token,
            ui: self.ui.unwrap_or(true),
            sign_in: self.sign_in,
            lease: self.lease,
            busy_timeout: self.busy_timeout,
            store_named,
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "server",
    "auth",
    "push",
    "store",
    "llm",
    "telemetry",
    "limits",
];
const LIMITS_KEYS: &[&str] = &[
    "step_output_bytes",
    "run_output_bytes",
    "step_artifacts",
    "step_events",
];
const TELEMETRY_KEYS: &[&str] = &["metrics_token_env", "otlp_endpoint", "trace_sample_ratio"];
const LLM_KEYS: &[&str] = &[
    "enabled",
    "base_url",
    "model",
    "api_key_env",
    "timeout",
    "max_tokens",
    "routing_max_tokens",
    "temperature",
    "price",
];
const STORE_KEYS: &[&str] = &["url", "retention", "lease", "busy_timeout"];
const SERVER_KEYS: &[&str] = &[
    "name",
    "description",
    "listen",
    "public_url",
    "agents",
    "workflows",
    "max_body_bytes",
    "shutdown_grace",
    "cors_origins",
    "max_connections",
    "max_streaming_connections_per_caller",
    "header_read_timeout",
    "idle_timeout",
    "max_parts",
    "max_metadata_bytes",
    "max_id_bytes",
    "ui",
    "ready_requires_agents",
    "tls_cert",
    "tls_key",
    "tls_client_ca",
    "card_signing_key",
    "card_retired_keys",
    "reload_workflows",
    "reload_interval",
    "insecure_open",
    "grpc",
    "protocols",
    "message_idempotency",
];
const PUSH_KEYS: &[&str] = &["allow_private_webhooks", "timeout"];
const SECRET_KEYS: &[&str] = &["token", "tokens", "key", "keys", "api_key", "password"];

/// Reads the file at `path`; relative paths in it are taken from its directory.
pub fn load(path: &Path, env: &dyn Env) -> Result<Settings, Vec<Diagnostic>> {
    let name = path.display().to_string();
    let text = orchestrator_core::config::read_text(path).map_err(|e| {
        vec![Diagnostic::new(
            orchestrator_core::config::Severity::Error,
            &name,
            "",
            0..0,
            format!("cannot read the configuration file: {e}"),
        )]
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    load_str(&name, &text, base, env)
}

/// Parses and checks a configuration file's text; every problem is returned.
pub fn load_str(
    file: &str,
    source: &str,
    base: &Path,
    env: &dyn Env,
) -> Result<Settings, Vec<Diagnostic>> {
    let mut ctx = Ctx::new(file, source);
    let (doc, errors) = toml::de::DeTable::parse_recoverable(source);
    if let Some(e) = errors.first() {
        ctx.error(
            e.span().unwrap_or(0..0),
            format!("invalid TOML: {}", e.message().trim()),
        );
        return Err(ctx.diags);
    }
    let mut top = TableReader::new(doc.get_ref(), doc.span(), "the configuration file");
    let mut out = Settings::default();
    let path = |p: Sp<String>| -> PathBuf {
        let p = PathBuf::from(p.value);
        if p.is_absolute() { p } else { base.join(p) }
    };
    if let Some(mut s) = top.table_named(&mut ctx, "server", "[server]") {
        out.name = s.string(&mut ctx, "name").map(|v| v.value);
        out.description = s.string(&mut ctx, "description").map(|v| v.value);
        out.listen = s.string(&mut ctx, "listen").and_then(|v| {
            check_listen(&v.value)
                .map_err(|m| ctx.error(v.span.clone(), m))
                .ok()
                .map(|()| v.value)
        });
        out.public_url = s.string(&mut ctx, "public_url").and_then(|v| {
            check_public_url(&v.value)
                .map_err(|m| ctx.error(v.span.clone(), m))
                .ok()
                .map(|()| v.value)
        });
        out.agents = s.string(&mut ctx, "agents").map(path);
        out.workflows = s.string(&mut ctx, "workflows").map(path);
        out.max_body_bytes = s
            .int_at_least(&mut ctx, "max_body_bytes", 1024)
            .map(|n| n as usize);
        out.shutdown_grace = s.positive_duration(&mut ctx, "shutdown_grace");
        out.max_connections = s
            .int_at_least(&mut ctx, "max_connections", 1)
            .map(|n| n as usize);
        out.max_streaming_connections_per_caller = s
            .int_at_least(&mut ctx, "max_streaming_connections_per_caller", 1)
            .map(|n| n as usize);
        out.header_read_timeout = s.positive_duration(&mut ctx, "header_read_timeout");
        out.idle_timeout = s.positive_duration(&mut ctx, "idle_timeout");
        out.max_parts = s.int_at_least(&mut ctx, "max_parts", 1).map(|n| n as usize);
        out.max_metadata_bytes = s
            .int_at_least(&mut ctx, "max_metadata_bytes", 1024)
            .map(|n| n as usize);
        out.max_id_bytes = s
            .int_at_least(&mut ctx, "max_id_bytes", 36)
            .map(|n| n as usize);
        out.ui = s.bool(&mut ctx, "ui").map(|v| v.value);
        out.ready_requires_agents = s.bool(&mut ctx, "ready_requires_agents").map(|v| v.value);
        out.reload_workflows = s.bool(&mut ctx, "reload_workflows").map(|v| v.value);
        out.reload_interval = s.positive_duration(&mut ctx, "reload_interval");
        out.insecure_open = s.bool(&mut ctx, "insecure_open").map(|v| v.value);
        out.grpc = s.bool(&mut ctx, "grpc").map(|v| v.value);
        out.protocols = s
            .string(&mut ctx, "protocols")
            .and_then(|v| match v.value.as_str() {
                "both" => Some(a2a::Versions::Both),
                "1.0" => Some(a2a::Versions::V1_0),
                other => {
                    ctx.error(
                        v.span,
                        format!(
                            "`protocols` is \"both\" (A2A 1.0 and 0.3) or \"1.0\", not {other:?}"
                        ),
                    );
                    None
                }
            });
        out.message_idempotency = s.bool(&mut ctx, "message_idempotency").map(|v| v.value);
        let cert = s.string(&mut ctx, "tls_cert");
        let key = s.string(&mut ctx, "tls_key");
        let client_ca = s.string(&mut ctx, "tls_client_ca");
        if let (Some(ca), None) = (&client_ca, &cert) {
            ctx.error(ca.span.clone(), "`tls_client_ca` needs `tls_cert` and `tls_key`: clients present certificates over TLS");
        }
        match (cert, key) {
            (Some(cert), Some(key)) => match CertFiles::open(base.join(&cert.value), base.join(&key.value)) {
                Ok(files) => match client_ca {
                    None => out.tls = Some(Arc::new(files)),
                    Some(ca) => match files.requiring_client_certs(base.join(&ca.value)) {
                        Ok(files) => out.tls = Some(Arc::new(files)),
                        Err(e) => ctx.error(ca.span, format!("cannot require client certificates: {e}")),
                    },
                },
                Err(e) => ctx.error(cert.span, format!("cannot serve TLS: {e}")),
            },
            (Some(one), None) | (None, Some(one)) => ctx.error(
                one.span,
                "`tls_cert` and `tls_key` go together: the certificate chain and its private key, both PEM",
            ),
            (None, None) => {}
        }
        let signing_key = s.string(&mut ctx, "card_signing_key");
        let retired = s.strings(&mut ctx, "card_retired_keys");
        match (signing_key, retired) {
            (Some(key), retired) => {
                let retired: Vec<PathBuf> = retired
                    .map(|l| l.value.iter().map(|f| base.join(&f.value)).collect())
                    .unwrap_or_default();
                match crate::host::card_signing::CardSigning::open(base.join(&key.value), &retired) {
                    Ok(signing) => out.card_signing = Some(Arc::new(signing)),
                    Err(e) => ctx.error(key.span, format!("cannot sign the cards: {e}")),
                }
            }
            (None, Some(retired)) => ctx.error(
                retired.span,
                "`card_retired_keys` goes with `card_signing_key`: they are published beside the key that signs",
            ),
            (None, None) => {}
        }
        out.cors_origins = s.strings(&mut ctx, "cors_origins").map(|list| {
            let mut origins = Vec::new();
            for o in list.value {
                match reqwest::Url::parse(&o.value) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") && u.path() == "/" && u.query().is_none() => {
                        origins.push(o.value.trim_end_matches('/').to_owned())
                    }
                    _ => ctx.error(
                        o.span.clone(),
                        format!("{:?} is not an origin: write the scheme and host (and port), as in \"https://app.example.com\"", o.value),
                    ),
                }
            }
            origins
        });
        s.finish(&mut ctx, SERVER_KEYS);
    }
    if let Some(a) = top.table_named(&mut ctx, "auth", "[auth]") {
        let (auth, sign_in) = crate::auth::config::read(&mut ctx, a, env, base);
        out.auth = Some(auth);
        out.sign_in = sign_in;
    }
    if let Some(mut p) = top.table_named(&mut ctx, "push", "[push]") {
        out.allow_private_webhooks = p.bool(&mut ctx, "allow_private_webhooks").map(|v| v.value);
        out.push_timeout = p.positive_duration(&mut ctx, "timeout");
        p.finish(&mut ctx, PUSH_KEYS);
    }
    if let Some(mut t) = top.table_named(&mut ctx, "telemetry", "[telemetry]") {
        if let Some(name) = t.string(&mut ctx, "metrics_token_env") {
            match env.var(&name.value).filter(|v| !v.is_empty()) {
                Some(token) => out.metrics_token = Some(token),
                None => ctx.error(
                    name.span,
                    format!(
                        "the environment variable {} (named in `metrics_token_env`) is not set",
                        name.value
                    ),
                ),
            }
        }
        if let Some(url) = t.string(&mut ctx, "otlp_endpoint") {
            match reqwest::Url::parse(&url.value) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {
                    out.traces.otlp_endpoint = Some(url.value)
                }
                _ => ctx.error(
                    url.span,
                    format!(
                        "`otlp_endpoint` must be an http:// or https:// URL (the collector's OTLP/HTTP base, like http://localhost:4318), got `{}`",
                        url.value
                    ),
                ),
            }
        }
        if let Some(r) = t.number(&mut ctx, "trace_sample_ratio") {
            if (0.0..=1.0).contains(&r.value) {
                out.traces.sample_ratio = Some(r.value);
            } else {
                ctx.error(
                    r.span,
                    format!(
                        "`trace_sample_ratio` must be between 0 and 1 (the share of new traces kept), got {}",
                        r.value
                    ),
                );
            }
        }
        t.finish(&mut ctx, TELEMETRY_KEYS);
    }
    if let Some(mut st) = top.table_named(&mut ctx, "store", "[store]") {
        out.store = st.string(&mut ctx, "url").and_then(|v| {
            StoreSpec::parse(&v.value)
                .map_err(|m| ctx.error(v.span.clone(), m))
                .ok()
                .map(|spec| spec.relative_to(base))
        });
        out.retention = st.positive_duration(&mut ctx, "retention");
        out.lease = st.positive_duration(&mut ctx, "lease");
        out.busy_timeout = st.positive_duration(&mut ctx, "busy_timeout");
        st.finish(&mut ctx, STORE_KEYS);
    }
    if let Some(mut l) = top.table_named(&mut ctx, "limits", "[limits]") {
        out.step_output_bytes = l
            .int_at_least(&mut ctx, "step_output_bytes", 1024)
            .map(|n| n as u64);
        out.run_output_bytes = l
            .int_at_least(&mut ctx, "run_output_bytes", 1024)
            .map(|n| n as u64);
        out.step_artifacts = l
            .int_at_least(&mut ctx, "step_artifacts", 1)
            .map(|n| n as usize);
        out.step_events = l
            .int_at_least(&mut ctx, "step_events", 1)
            .map(|n| n as usize);
        l.finish(&mut ctx, LIMITS_KEYS);
    }
    if let Some(l) = top.table_named(&mut ctx, "llm", "[llm]") {
        let (llm, price) = llm_section(&mut ctx, l, env);
        out.llm = Some(llm);
        out.llm_price = price;
    }
    top.finish(&mut ctx, TOP_KEYS);
    if ctx.has_errors() {
        let mut diags = ctx.diags;
        diags.sort_by_key(|d| (d.line, d.column));
        Err(diags)
    } else {
        Ok(out)
    }
}

/// `[llm]`: the model's endpoint, `None` when `enabled = false` (or in error); and what
/// its tokens cost.
fn llm_section(
    ctx: &mut Ctx<'_>,
    mut l: TableReader<'_, '_>,
    env: &dyn Env,
) -> (Option<LlmConfig>, Option<crate::registry::price::Pricing>) {
    for secret in SECRET_KEYS {
        if let Some(v) = l.get(secret) {
            ctx.error(
                v.span(),
                "secrets do not go in the configuration file: put the key in an environment variable and name it in `api_key_env`",
            );
        }
    }
    let enabled = l.bool(ctx, "enabled").is_none_or(|v| v.value);
    let base_url = l.string(ctx, "base_url");
    let model = l.string(ctx, "model");
    let key_env = l.string(ctx, "api_key_env");
    let timeout = l.positive_duration(ctx, "timeout");
    let max_tokens = l.int_at_least(ctx, "max_tokens", 1);
    let routing_max_tokens = l.int_at_least(ctx, "routing_max_tokens", 1);
    let temperature = l.number(ctx, "temperature");
    let pricing = l.table(ctx, "price").map(|p| {
        let (price, currency) = crate::registry::price::read(ctx, p);
        crate::registry::price::Pricing {
            price,
            currency: currency.map(|c| c.value),
        }
    });
    let span = l.span.clone();
    let all: Vec<&str> = LLM_KEYS.iter().chain(SECRET_KEYS).copied().collect();
    l.finish(ctx, &all);
    if !enabled {
        return (None, None);
    }
    let base_url = match base_url {
        Some(u) => match reqwest::Url::parse(&u.value) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Some(u.value),
            _ => {
                ctx.error(
                    u.span,
                    format!("`base_url` must be an http or https URL such as http://localhost:11434/v1, not {:?}", u.value),
                );
                None
            }
        },
        None => {
            ctx.error(
                span.clone(),
                "[llm] needs `base_url`: the OpenAI-compatible API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1 (Ollama)",
            );
            None
        }
    };
    let model = match model {
        Some(m) if !m.value.trim().is_empty() => Some(m.value),
        Some(m) => {
            ctx.error(m.span, "`model` must not be empty");
            None
        }
        None => {
            ctx.error(
                span,
                "[llm] needs `model`: the model's name at that endpoint, e.g. gpt-4o-mini or llama3.2",
            );
            None
        }
    };
    let api_key = match key_env {
        Some(name) => match env.var(&name.value).filter(|v| !v.is_empty()) {
            Some(v) => Some(v),
            None => {
                ctx.error(
                    name.span,
                    format!(
                        "the environment variable {} (named in `api_key_env`) is not set",
                        name.value
                    ),
                );
                None
            }
        },
        None => None,
    };
    let temperature = match temperature {
        Some(t) if (0.0..=2.0).contains(&t.value) => Some(t.value as f32),
        Some(t) => {
            ctx.error(
                t.span,
                format!("`temperature` must be between 0 and 2, got {}", t.value),
            );
            None
        }
        None => None,
    };
    let (Some(base_url), Some(model)) = (base_url, model) else {
        return (None, pricing);
    };
    let mut config = LlmConfig::new(base_url, model);
    config.api_key = api_key;
    if let Some(t) = timeout {
        config.timeout = t;
    }
    if let Some(n) = max_tokens {
        config.max_tokens = n.min(u32::MAX as i64) as u32;
    }
    if let Some(n) = routing_max_tokens {
        config.routing_max_tokens = n.min(u32::MAX as i64) as u32;
    }
    config.temperature = temperature;
    (Some(config), pricing)
}

/// `host:port` with a numeric port.
pub fn check_listen(s: &str) -> Result<(), String> {
    let bad = || format!("`listen` must be host:port, e.g. 127.0.0.1:8080, not {s:?}");
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(())
}

/// An absolute http(s) URL.
pub fn check_public_url(s: &str) -> Result<(), String> {
    match reqwest::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        Ok(u) => Err(format!(
            "`public_url` must be an http or https URL, not {}",
            u.scheme()
        )),
        Err(e) => Err(format!("`public_url` {s:?} is not a URL: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env() -> HashMap<String, String> {
        HashMap::from([("ORCH_TOKEN".to_owned(), "t0k3n".to_owned())])
    }

    #[test]
    fn reads_every_section_and_resolves_paths_and_secrets() {
        let s = load_str(
            "orch.toml",
            r#"
[server]
name = "Acme"
listen = "0.0.0.0:9000"
agents = "conf/agents.toml"
workflows = "/srv/workflows"
shutdown_grace = "25s"
cors_origins = ["https://app.example.com"]
max_parts = 50
header_read_timeout = "3s"
idle_timeout = "90s"
ui = false
[auth]
bearer_token_env = ["ORCH_TOKEN"]
[push]
allow_private_webhooks = true
timeout = "3s"
[store]
url = "sqlite://state/o.db"
retention = "2h"
[limits]
step_output_bytes = 1048576
step_artifacts = 10
"#,
            Path::new("/etc/orch"),
            &env(),
        )
        .unwrap();
        let r = s.resolve();
        assert_eq!(r.host.name, "Acme");
        assert_eq!(r.host.description, DEFAULT_DESCRIPTION);
        assert_eq!(r.listen, "0.0.0.0:9000");
        assert_eq!(r.host.agents, Path::new("/etc/orch/conf/agents.toml"));
        assert_eq!(r.host.workflows, Path::new("/srv/workflows"));
        assert_eq!(r.host.server.auth.unwrap().bearer[0].secret, "t0k3n");
        assert!(r.host.server.allow_private_webhooks);
        assert_eq!(r.host.server.push_timeout, Duration::from_secs(3));
        assert_eq!(r.host.server.shutdown_grace, Duration::from_secs(25));
        assert_eq!(r.host.server.cors_origins, ["https://app.example.com"]);
        assert_eq!(r.host.server.max_parts, 50);
        assert_eq!(r.host.server.header_read_timeout, Duration::from_secs(3));
        assert_eq!(r.host.server.max_id_bytes, 256, "the default");
        assert!(!r.ui, "`ui = false` turns the web view off");
        assert!(Settings::default().resolve().ui, "on by default");
        assert_eq!(r.host.store, StoreSpec::sqlite("/etc/orch/state/o.db"));
        assert_eq!(r.host.retention, Duration::from_secs(7200));
        assert_eq!(r.host.server.idle_timeout, Duration::from_secs(90));
        let limits = r.host.limits;
        assert_eq!((limits.step_bytes, limits.step_artifacts), (1_048_576, 10));
        assert_eq!(
            limits.run_bytes,
            OutputLimits::default().run_bytes,
            "the default"
        );
    }

    #[test]
    fn llm_is_off_by_default_and_read_with_its_key_from_the_environment() {
        let none = load_str("o.toml", "[server]\n", Path::new(""), &env()).unwrap();
        assert!(none.resolve().host.llm.is_none());
        let s = load_str(
            "o.toml",
            "[llm]\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"llama3.2\"\napi_key_env = \"ORCH_TOKEN\"\ntimeout = \"5s\"\nmax_tokens = 300\ntemperature = 0.2\nprice = { input_per_million = 0.15, output_per_million = 0.6, currency = \"EUR\" }\n",
            Path::new(""),
            &env(),
        )
        .unwrap();
        let host = s.resolve().host;
        let pricing = host.llm_price.unwrap();
        assert_eq!(pricing.price.output_per_million, 0.6);
        assert_eq!(pricing.currency.as_deref(), Some("EUR"));
        let llm = host.llm.unwrap();
        assert_eq!(llm.base_url, "http://localhost:11434/v1");
        assert_eq!(llm.model, "llama3.2");
        assert_eq!(llm.api_key.as_deref(), Some("t0k3n"));
        assert_eq!(llm.timeout, Duration::from_secs(5));
        assert_eq!(llm.max_tokens, 300);
        assert_eq!(llm.temperature, Some(0.2));
        let off = load_str(
            "o.toml",
            "[llm]\nenabled = false\nbase_url = \"http://x/v1\"\nmodel = \"m\"\n",
            Path::new(""),
            &env(),
        )
        .unwrap();
        assert!(off.resolve().host.llm.is_none());
    }

    #[test]
    fn llm_problems_are_located() {
        let source = "[llm]\nbase_url = \"localhost:11434\"\napi_key = \"sk-1\"\napi_key_env = \"NOPE\"\ntemperature = 3\nmodle = \"x\"\n";
        let diags = load_str("o.toml", source, Path::new(""), &env()).unwrap_err();
        let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = all.join("\n");
        for expected in [
            "o.toml:1:1: error: [llm] needs `model`",
            "o.toml:2:12: error: `base_url` must be an http or https URL",
            "o.toml:3:11: error: secrets do not go in the configuration file",
            "o.toml:4:15: error: the environment variable NOPE",
            "o.toml:5:15: error: `temperature` must be between 0 and 2",
            "o.toml:6:1: error: unknown key `modle` in [llm] (did you mean `model`?)",
        ] {
            assert!(all.contains(expected), "{expected}\nin:\n{all}");
        }
    }

    #[test]
    fn named_tokens_roles_and_oidc_are_read() {
        let source = r#"[auth]
bearer_token_env = ["ORCH_TOKEN"]
[auth.tokens.ci]
env = "ORCH_TOKEN"
roles = ["viewer"]
groups = ["deploy"]
name = "CI pipeline"
[auth.roles]
operator = ["group:deploy"]
[auth.oidc]
issuer = "https://login.example.com/realms/acme"
audience = "a2a-orchestrator"
roles_claim = "realm_access.roles"
"#;
        let s = load_str("o.toml", source, Path::new(""), &env()).unwrap();
        let auth = s.auth.unwrap();
        let legacy = &auth.bearer[0].principal;
        assert!(legacy.id.starts_with("bearer:"), "{legacy:?}");
        assert_eq!(
            crate::auth::Grants::reach(legacy),
            crate::auth::Reach::SteerAll,
            "as before names"
        );
        let ci = &auth.bearer[1].principal;
        assert_eq!(
            (ci.id.as_str(), ci.name.as_str()),
            ("token:ci", "CI pipeline")
        );
        let grants = crate::auth::Grants::of(ci);
        assert_eq!(
            grants.roles,
            ["viewer", "operator"],
            "its own, then the rules'"
        );
        assert_eq!(grants.reach, crate::auth::Reach::SteerAll);
        assert!(auth.tokens.is_some());
    }

    #[test]
    fn auth_problems_are_located() {
        let source = r#"[auth.tokens.ci]
roles = ["boss"]
secret = "x"
[auth.roles]
viewer = ["auditors", "role:admin"]
owner = ["sub:x"]
[auth.oidc]
issuer = "http://login.example.com"
audience = "a"
[auth.tokens.cd]
env = "UNSET_VAR"
"#;
        let diags = load_str("o.toml", source, Path::new(""), &env()).unwrap_err();
        let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = all.join("\n");
        for expected in [
            "o.toml:1:14: error: [auth.tokens.ci] needs `env`",
            "o.toml:2:10: error: there is no role \"boss\"",
            "o.toml:3:10: error: secrets do not go in the configuration file",
            "o.toml:5:11: error: \"auditors\" names no one",
            "o.toml:5:23: error: a role is granted by group or subject",
            "o.toml:6:1: error: unknown key `owner` in [auth.roles]",
            "o.toml:8:10: error: `issuer` must be an https:// URL",
            "o.toml:11:7: error: the environment variable UNSET_VAR",
        ] {
            assert!(all.contains(expected), "{expected}\nin:\n{all}");
        }
    }

    #[test]
    fn flags_beat_the_file_and_the_file_beats_defaults() {
        let file = Settings {
            name: Some("from file".into()),
            listen: Some("127.0.0.1:1".into()),
            ..Default::default()
        };
        let flags = Settings {
            listen: Some("127.0.0.1:2".into()),
            ..Default::default()
        };
        let r = file.overridden_by(flags).resolve();
        assert_eq!(r.host.name, "from file");
        assert_eq!(r.listen, "127.0.0.1:2");
        assert_eq!(r.host.agents, Path::new("agents.toml"));
    }

    #[test]
    fn every_problem_is_located() {
        let source = r#"[server]
nmae = "x"
listen = "8080"
[auth]
token = "plain"
bearer_token_env = ["MISSING_VAR"]
[push]
timeout = "soon"
[storage]
"#;
        let diags = load_str("orch.toml", source, Path::new(""), &env()).unwrap_err();
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = text.join("\n");
        assert!(
            all.contains("orch.toml:2:1") && all.contains("did you mean `name`"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:3:10") && all.contains("host:port"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:5:9") && all.contains("secrets do not go"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:6:21") && all.contains("MISSING_VAR"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:8:11") && all.contains("invalid duration"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:9:2") && all.contains("unknown key `storage`"),
            "{all}"
        );
        assert_eq!(diags.len(), 6, "{all}");
    }

    #[test]
    fn protocols_and_idempotency_are_read_and_a_wrong_generation_is_located() {
        let source = "[server]\nprotocols = \"1.0\"\nmessage_idempotency = false\n";
        let r = load_str("orch.toml", source, Path::new(""), &env())
            .unwrap()
            .resolve();
        assert_eq!(r.host.server.generations, a2a::Versions::V1_0);
        assert!(!r.host.server.message_idempotency);
        let r = Settings::default().resolve();
        assert_eq!(r.host.server.generations, a2a::Versions::Both);
        assert!(r.host.server.message_idempotency);
        let source = "[server]\nprotocols = \"0.3\"\n";
        let diags = load_str("orch.toml", source, Path::new(""), &env()).unwrap_err();
        let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = all.join("\n");
        assert!(
            all.contains("orch.toml:2:13") && all.contains("`protocols` is \"both\""),
            "{all}"
        );
    }

    #[test]
    fn the_metrics_token_comes_from_the_named_variable() {
        let source = "[telemetry]\nmetrics_token_env = \"ORCH_TOKEN\"\n";
        let s = load_str("orch.toml", source, Path::new(""), &env()).unwrap();
        assert!(s.metrics_token.as_deref().is_some_and(|t| !t.is_empty()));
        let source = "[telemetry]\nmetrics_token_env = \"NOPE_VAR\"\nmetrics = true\n";
        let diags = load_str("orch.toml", source, Path::new(""), &env()).unwrap_err();
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = text.join("\n");
        assert!(
            all.contains("orch.toml:2:21") && all.contains("NOPE_VAR"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:3:1") && all.contains("unknown key `metrics`"),
            "{all}"
        );
    }

    #[test]
    fn traces_are_set_in_the_telemetry_table_and_checked_where_they_stand() {
        let source =
            "[telemetry]\notlp_endpoint = \"http://collector:4318/\"\ntrace_sample_ratio = 0.25\n";
        let s = load_str("orch.toml", source, Path::new(""), &env()).unwrap();
        assert_eq!(
            s.traces.otlp_endpoint.as_deref(),
            Some("http://collector:4318/")
        );
        assert_eq!(s.traces.sample_ratio, Some(0.25));
        let source = "[telemetry]\notlp_endpoint = \"collector:4318\"\ntrace_sample_ratio = 2\n";
        let diags = load_str("orch.toml", source, Path::new(""), &env()).unwrap_err();
        let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = all.join("\n");
        assert!(
            all.contains("orch.toml:2:17") && all.contains("http:// or https:// URL"),
            "{all}"
        );
        assert!(
            all.contains("orch.toml:3:22") && all.contains("between 0 and 1"),
            "{all}"
        );
    }
}

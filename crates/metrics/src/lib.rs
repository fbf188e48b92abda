//! Prometheus metrics: one process-wide set of typed families, recorded where things
//! happen (the protocol server, the connector, the host, the store) and rendered in the
//! text exposition format for `/metrics`. A leaf: it knows nothing of the crate, so
//! every layer may record into it; the protocol server (crate `a2a-protocol`, which names no
//! metrics library) reports through the observer it is given, [`server_observer`].
//!
//! Labels are bounded: workflow, step and agent names come from the operator's files,
//! methods from the protocol's list, error codes from the spec's; nothing a client makes
//! up becomes a label.

use std::sync::OnceLock;

use a2a::server::observe::{self, Observer};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A workflow.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WorkflowLabels {
    pub workflow: String,
}

/// A run's end.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RunEndLabels {
    pub workflow: String,
    pub state: String,
}

/// A step on an agent.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    pub workflow: String,
    pub step: String,
    pub agent: String,
}

/// A step's end.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepEndLabels {
    pub workflow: String,
    pub step: String,
    pub agent: String,
    pub state: String,
}

/// A call to a downstream agent.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    pub agent: String,
    /// `send`, `stream`, `get`, `resubscribe`, `cancel`.
    pub method: String,
    /// `ok`, or the kind of failure (`transport`, `timeout`, `http`, `a2a_error`,
    /// `protocol`).
    pub outcome: String,
}

/// A downstream agent.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AgentLabels {
    pub agent: String,
}

/// What a workflow's runs used of an agent.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SpendLabels {
    pub workflow: String,
    pub agent: String,
}

/// Tokens a workflow's runs used of an agent, read (`input`) or written (`output`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TokenLabels {
    pub workflow: String,
    pub agent: String,
    pub direction: String,
}

/// A request an upstream client made.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    /// The method's wire name (`message/send`, `SendMessage`, …), `unknown` otherwise.
    pub method: String,
    /// `JSONRPC` or `HTTP+JSON`.
    pub binding: String,
    /// `0.3` or `1.0`.
    pub version: String,
    /// `0` for success, else the A2A / JSON-RPC error code.
    pub code: String,
}

/// A human action on a run (the audit trail).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabels {
    /// `started`, `approved`, `rejected`, `answered`, `canceled` or `retried`.
    pub action: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric this process exports.
pub struct Metrics {
    pub runs_started: Family<WorkflowLabels, Counter>,
    pub runs_finished: Family<RunEndLabels, Counter>,
    pub run_duration: Histograms<WorkflowLabels>,
    pub steps_in_flight: Family<WorkflowLabels, Gauge>,
    pub step_duration: Histograms<StepEndLabels>,
    pub step_retries: Family<StepLabels, Counter>,
    pub downstream_calls: Family<CallLabels, Counter>,
    pub usage_tokens: Family<TokenLabels, Counter>,
    pub usage_cost: Family<SpendLabels, Counter<f64, std::sync::atomic::AtomicU64>>,
    pub agent_available: Family<AgentLabels, Gauge>,
    pub agent_circuit_open: Family<AgentLabels, Gauge>,
    pub workflow_agents_available: Family<WorkflowLabels, Gauge>,
    pub upstream_requests: Family<UpstreamLabels, Counter>,
    pub actions: Family<ActionLabels, Counter>,
    pub sse_subscribers: Gauge,
    pub store_commit: Histogram,
    pub store_listening: Gauge,
    pub store_unreadable_tasks: Counter,
    pub config_reload_failed: Gauge,
    pub questions_waiting: Gauge,
    pub oldest_question_seconds: Gauge,
    registry: Registry,
}

fn seconds() -> Histogram {
    // 1 ms to about 9 minutes.
    Histogram::new(exponential_buckets(0.001, 2.0, 20))
}

fn fast_seconds() -> Histogram {
    // 50 µs to about 1.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

impl Metrics {
    fn new() -> Self {
        let m = Metrics {
            runs_started: Family::default(),
            runs_finished: Family::default(),
            run_duration: Family::new_with_constructor(seconds),
            steps_in_flight: Family::default(),
            step_duration: Family::new_with_constructor(seconds),
            step_retries: Family::default(),
            downstream_calls: Family::default(),
            usage_tokens: Family::default(),
            usage_cost: Family::default(),
            agent_available: Family::default(),
            agent_circuit_open: Family::default(),
            workflow_agents_available: Family::default(),
            upstream_requests: Family::default(),
            actions: Family::default(),
            sse_subscribers: Gauge::default(),
            store_commit: fast_seconds(),
            store_listening: Gauge::default(),
            store_unreadable_tasks: Counter::default(),
            config_reload_failed: Gauge::default(),
            questions_waiting: Gauge::default(),
            oldest_question_seconds: Gauge::default(),
            registry: Registry::with_prefix("a2a_orchestrator"),
        };
        let mut r = Registry::with_prefix("a2a_orchestrator");
        r.register(
            "runs_started",
            "Workflow runs started",
            m.runs_started.clone(),
        );
        r.register(
            "usage_tokens",
            "Tokens the agents reported their tasks used, by workflow, agent and direction",
            m.usage_tokens.clone(),
        );
        r.register(
            "usage_cost",
            "What the agents' tasks cost, at the prices agents.toml gives, by workflow and agent",
            m.usage_cost.clone(),
        );
        r.register(
            "runs_finished",
            "Workflow runs finished, by final state",
            m.runs_finished.clone(),
        );
        r.register(
            "run_duration_seconds",
            "From a run's start to its end",
            m.run_duration.clone(),
        );
        r.register(
            "steps_in_flight",
            "Steps working, or waiting for an answer, now",
            m.steps_in_flight.clone(),
        );
        r.register(
            "step_duration_seconds",
            "From a step's start to its end (all its attempts), by final state",
            m.step_duration.clone(),
        );
        r.register(
            "step_retries",
            "Step attempts after the first",
            m.step_retries.clone(),
        );
        r.register(
            "downstream_calls",
            "Calls to downstream agents, by method and outcome",
            m.downstream_calls.clone(),
        );
        r.register(
            "agent_available",
            "1 when a downstream agent can be called (card known, circuit not open), else 0",
            m.agent_available.clone(),
        );
        r.register(
            "agent_circuit_open",
            "1 when a downstream agent's circuit breaker is open (or half-open), else 0",
            m.agent_circuit_open.clone(),
        );
        r.register(
            "workflow_agents_available",
            "1 when every agent a workflow's steps need can be called, else 0 (its runs would wait or fail)",
            m.workflow_agents_available.clone(),
        );
        r.register(
            "upstream_requests",
            "A2A requests from upstream clients, by method, binding, version and error code",
            m.upstream_requests.clone(),
        );
        r.register(
            "actions",
            "Human actions on runs (the audit trail), by action",
            m.actions.clone(),
        );
        r.register(
            "sse_subscribers",
            "Open SSE streams to upstream clients",
            m.sse_subscribers.clone(),
        );
        r.register(
            "store_commit_seconds",
            "Time to commit one batch of writes to the store",
            m.store_commit.clone(),
        );
        r.register(
            "store_listening",
            "1 while a PostgreSQL replica hears the others' notices (LISTEN), 0 while it polls",
            m.store_listening.clone(),
        );
        r.register(
            "store_unreadable_tasks",
            "Stored tasks found unreadable when read (listed or resumed): each is shown by its columns only, or left out of what is resumed; the log names it and the cause",
            m.store_unreadable_tasks.clone(),
        );
        r.register(
            "config_reload_failed",
            "The problems found by the last reload of the workflows and agents when it failed (what was loaded before is served), 0 once a reload succeeds",
            m.config_reload_failed.clone(),
        );
        r.register(
            "questions_waiting",
            "Questions of runs waiting for an answer (approvals, inputs, agents' questions), as the task store holds them when the metrics are read",
            m.questions_waiting.clone(),
        );
        r.register(
            "oldest_question_seconds",
            "How long the oldest of them has waited, in seconds (0 when none waits)",
            m.oldest_question_seconds.clone(),
        );
        Metrics { registry: r, ..m }
    }

    /// Every metric in the Prometheus text exposition format (OpenMetrics text, which
    /// Prometheus reads).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The process's metrics.
pub fn get() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// Records what the protocol server reports: each upstream request, and the SSE
/// streams open.
struct ServerMetrics;

impl Observer for ServerMetrics {
    fn request(&self, request: observe::Request<'_>) {
        get()
            .upstream_requests
            .get_or_create(&UpstreamLabels {
                method: request.method.to_owned(),
                binding: request.binding.to_owned(),
                version: request.version.to_owned(),
                code: request.code.unwrap_or(0).to_string(),
            })
            .inc();
    }

    fn subscriber(&self, open: bool) {
        if open {
            get().sse_subscribers.inc();
        } else {
            get().sse_subscribers.dec();
        }
    }
}

/// What a protocol server reports to, to record into these metrics
/// (`ServerConfig::observer`).
pub fn server_observer() -> observe::Observe {
    observe::Observe::new(ServerMetrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family_with_its_help_and_the_prefix() {
        let m = Metrics::new();
        m.runs_started
            .get_or_create(&WorkflowLabels {
                workflow: "w".into(),
            })
            .inc();
        let text = m.render();
        assert!(
            text.contains("# HELP a2a_orchestrator_runs_started Workflow runs started"),
            "{text}"
        );
        assert!(
            text.contains("a2a_orchestrator_runs_started_total{workflow=\"w\"} 1"),
            "{text}"
        );
        assert!(text.contains("# TYPE a2a_orchestrator_store_commit_seconds histogram"));
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}

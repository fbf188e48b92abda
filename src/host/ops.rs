//! What operators and their platforms ask of a running orchestrator, beside A2A:
//! `/healthz` (the process answers), `/readyz` (this replica can serve: the store takes
//! writes and the workflows are loaded; the agents each workflow needs, and a failed
//! reload's problems, are reported, and agents make it unready only when the operator
//! asks for that) and `/metrics`
//! (Prometheus). Probes answer without credentials, as
//! Kubernetes sends none; `/metrics` takes a bearer token when one is configured.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::registry::Registry;
use orchestrator_store::Store;

/// Bound on the store's answer to the readiness write.
const STORE_WAIT: Duration = Duration::from_secs(2);

/// What the endpoints look at.
pub struct Ops {
    pub registry: Registry,
    pub store: Arc<dyn Store>,
    /// The workflows, as loaded now.
    pub orchestrator: super::Orchestrator,
    /// The bearer token `/metrics` asks for; none: open.
    pub metrics_token: Option<String>,
    /// Whether agents that are down make `/readyz` unready (by default they are only
    /// reported: one agent down must not take the whole orchestrator — approvals,
    /// status, other workflows — out of its load balancer).
    pub ready_requires_agents: bool,
    /// How the last reload of the files went.
    pub reloads: LastReload,
    /// Served with `--insecure-open` and no credentials: the workflows' rules on who
    /// may start or answer them are not enforced.
    pub open: bool,
}

/// The problems of the last reload of the workflows and agents, while it stands
/// failed (until one succeeds): `/readyz`'s body says them, and the
/// `config_reload_failed` gauge counts them. The replica stays ready: it serves what
/// it loaded before.
#[derive(Clone, Default)]
pub struct LastReload(Arc<std::sync::Mutex<Vec<String>>>);

impl LastReload {
    /// A reload refused for `problems`.
    pub fn failed(&self, problems: Vec<String>) {
        orchestrator_metrics::get()
            .config_reload_failed
            .set(problems.len() as i64);
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = problems;
    }

    /// A reload that loaded the files.
    pub fn succeeded(&self) {
        orchestrator_metrics::get().config_reload_failed.set(0);
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// `/readyz`'s check: never required.
    fn check(&self) -> Value {
        let problems = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if problems.is_empty() {
            json!({ "ok": true, "required": false })
        } else {
            json!({
                "ok": false,
                "required": false,
                "reason": "the last reload found problems in the files: the workflows and agents loaded before are served",
                "problems": problems,
            })
        }
    }
}

/// `/healthz`, `/readyz` and `/metrics`.
pub fn router(ops: Arc<Ops>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(ops)
}

async fn healthz() -> Response {
    json_body(StatusCode::OK, &json!({ "status": "ok" }))
}

fn json_body(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Each check with what it found; ready when all pass.
async fn readyz(State(ops): State<Arc<Ops>>) -> Response {
    let (ready, checks) = ops.readiness().await;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if ready { "ready" } else { "unready" },
        "checks": checks,
    });
    json_body(status, &body)
}

impl Ops {
    /// Whether the replica is ready, and each check's finding.
    pub async fn readiness(&self) -> (bool, Value) {
        let store = match tokio::time::timeout(STORE_WAIT, self.store.check_writable()).await {
            Ok(Ok(())) => json!({ "ok": true }),
            Ok(Err(e)) => json!({ "ok": false, "reason": format!("the store cannot write: {e}") }),
            Err(_) => json!({
                "ok": false,
                "reason": format!("the store did not take a write within {}s", STORE_WAIT.as_secs()),
            }),
        };
        let (missing, unavailable) = self.missing_agents();
        let loaded = self.orchestrator.workflows();
        let workflows = json!({
            "ok": !loaded.is_empty(),
            "loaded": loaded.len(),
            "waiting_for_agents": unavailable,
        });
        let agents = if missing.is_empty() {
            json!({ "ok": true, "required": self.ready_requires_agents })
        } else {
            json!({ "ok": false, "required": self.ready_requires_agents, "reason": missing.join("; ") })
        };
        let needed: &[&Value] = if self.ready_requires_agents {
            &[&store, &workflows, &agents]
        } else {
            &[&store, &workflows]
        };
        let ready = needed.iter().all(|c| c["ok"] == Value::Bool(true));
        let mut checks = json!({
            "store": store,
            "workflows": workflows,
            "agents": agents,
            "reload": self.reloads.check(),
        });
        let guarded = super::serve::guarded(&loaded);
        if self.open && !guarded.is_empty() {
            checks["auth"] = json!({
                "ok": false,
                "required": false,
                "reason": format!(
                    "--insecure-open and no credentials configured: {} say who may start or answer them, and anyone who reaches the server may",
                    guarded.join(", ")
                ),
            });
        }
        (ready, checks)
    }

    /// Each agent (or skill) some workflow step needs that cannot be called now: why,
    /// and which steps need it; and the workflows with such a step. Sets each
    /// workflow's `workflow_agents_available` gauge on the way.
    fn missing_agents(&self) -> (Vec<String>, Vec<String>) {
        let statuses = self.registry.statuses();
        // In the order first met: (what is missing, the steps needing it).
        let mut missing: Vec<(String, Vec<String>)> = Vec::new();
        let mut waiting = Vec::new();
        let m = orchestrator_metrics::get();
        for w in self.orchestrator.workflows().iter() {
            let before = missing.iter().map(|(_, s)| s.len()).sum::<usize>();
            let (_, problems) = super::availability::step_problems(w, &statuses);
            for (problem, step) in problems {
                let needed = format!("{}.{}", w.id, step);
                match missing.iter_mut().find(|(p, _)| *p == problem) {
                    Some((_, steps)) => steps.push(needed),
                    None => missing.push((problem, vec![needed])),
                }
            }
            let all_there = missing.iter().map(|(_, s)| s.len()).sum::<usize>() == before;
            if !all_there {
                waiting.push(w.id.to_string());
            }
            m.workflow_agents_available
                .get_or_create(&orchestrator_metrics::WorkflowLabels {
                    workflow: w.id.to_string(),
                })
                .set(i64::from(all_there));
        }
        let missing = missing
            .into_iter()
            .map(|(problem, steps)| format!("{problem} (needed by {})", steps.join(", ")))
            .collect();
        (missing, waiting)
    }
}

async fn metrics(State(ops): State<Arc<Ops>>, headers: HeaderMap) -> Response {
    if let Some(token) = &ops.metrics_token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_str()) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "the metrics need `Authorization: Bearer <token>`\n",
            )
                .into_response();
        }
    }
    // Refreshes the workflows' availability gauges, and the questions waiting.
    let _ = ops.missing_agents();
    let m = orchestrator_metrics::get();
    let store: Arc<dyn a2a::store::TaskStore> = ops.store.clone();
    let (waiting, oldest) = super::inbox::waiting(&*store, &ops.orchestrator).await;
    m.questions_waiting.set(waiting as i64);
    m.oldest_question_seconds.set(oldest);
    for s in ops.registry.statuses() {
        let agent = orchestrator_metrics::AgentLabels { agent: s.name };
        m.agent_available
            .get_or_create(&agent)
            .set(i64::from(!s.health.is_unavailable()));
        m.agent_circuit_open
            .get_or_create(&agent)
            .set(i64::from(s.circuit != "closed"));
    }
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.render(),
    )
        .into_response()
}

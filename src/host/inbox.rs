//! The inbox: every question waiting for an answer that the caller may give, across
//! runs, oldest first — `GET /inbox`, authenticated as the A2A endpoints are, read by
//! `runs inbox` and the web view's inbox page. Each says which run and step asks, what,
//! since when and until when, who started the run, and how to answer it.
//!
//! A child run's question (a workflow step's) is listed once, as the child's: its
//! approvers and four-eyes rule are the child's, and it names the parent's run and step
//! it holds up. The parent's task shows it too, for its client to answer, but the
//! inbox does not list it twice.

use std::sync::Arc;

use a2a::server::{Caller, InboundAuth};
use a2a::store::{TaskQuery, TaskStore};
use a2a::types::{TaskId, TaskState};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use orchestrator_core::engine::detail::{PendingQuestion, QuestionType};
use orchestrator_core::workflow::StepKind;

use super::RunSummary;

/// Most tasks the inbox reads (pages of [`PAGE`]).
const MAX_TASKS: usize = 2_000;
const PAGE: usize = 200;

/// What the inbox reads: the tasks and their runs, and who may ask.
#[derive(Clone)]
pub struct Inbox {
    pub store: Arc<dyn TaskStore>,
    pub orchestrator: super::Orchestrator,
    pub auth: Option<InboundAuth>,
}

/// The questions of `task` a caller may answer that are its run's own: not those a
/// child run asks through one of its workflow steps (listed as the child's). Which
/// steps those are, the run's workflow says (as loaded now).
async fn own_questions(
    orchestrator: &super::Orchestrator,
    task: &a2a::store::StoredTask,
    caller: &Caller,
) -> (Vec<PendingQuestion>, Option<RunSummary>) {
    let mut questions = super::access::answerable(task, caller);
    if questions.is_empty() {
        return (questions, None);
    }
    let summary = orchestrator.run_summary(&TaskId::new(&task.id)).await;
    let workflow = (summary.as_ref()).and_then(|s| orchestrator.workflow(&s.workflow));
    let relays = |step: &str| {
        (workflow.as_ref().and_then(|w| w.step(step)))
            .is_some_and(|s| matches!(s.kind, StepKind::Workflow { .. }))
    };
    questions.retain(|q| !relays(&q.step));
    (questions, summary)
}

/// One waiting question, as the inbox lists it (`header`: its run's, when stored).
fn entry(task: &a2a::types::Task, q: &PendingQuestion, summary: Option<&RunSummary>) -> Value {
    let run = task.id.as_str();
    let step = &q.step;
    let at = match q.item {
        Some(i) => format!("{step}[{i}]"),
        None => step.clone(),
    };
    let answer = match q.kind {
        QuestionType::Approval => {
            format!("a2a-orchestrator runs approve {run} --step {step}   (or reject)")
        }
        _ => format!("a2a-orchestrator runs answer {run} \"…\" --step {step}"),
    };
    let parent = summary.and_then(|s| s.parent.as_ref());
    json!({
        "run": run,
        "parent": parent.map(|p| json!({ "run": p.run, "step": p.step, "item": p.item })),
        "workflow": summary.map(|s| s.workflow.clone()),
        "step": step,
        "item": q.item,
        "at": at,
        "kind": q.kind,
        "prompt": q.prompt,
        "askedAt": q.asked_at,
        "until": q.until,
        "approvers": q.approvers,
        "startedBy": summary.and_then(|s| s.started_by.clone()),
        "answer": answer,
    })
}

/// `GET /inbox`: `{ "questions": […], "count": N }`, oldest first.
pub async fn list(State(inbox): State<Arc<Inbox>>, headers: HeaderMap) -> Response {
    let caller = match &inbox.auth {
        Some(auth) if !auth.is_empty() => match auth.authenticate(&headers).await {
            Ok(c) => c,
            Err(_) => {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    axum::Json(json!({ "error": "the inbox needs the credentials the A2A endpoints take" })),
                )
                    .into_response();
            }
        },
        _ => Caller::anonymous(),
    };
    let mut questions = Vec::new();
    let mut query = TaskQuery {
        state: Some(TaskState::InputRequired),
        limit: PAGE,
        tenant: caller.tenant().map(str::to_owned),
        ..TaskQuery::default()
    };
    let mut read = 0;
    loop {
        let page = match inbox.store.list(&query).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "the inbox could not list the tasks");
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    axum::Json(json!({ "error": "the task store failed" })),
                )
                    .into_response();
            }
        };
        read += page.tasks.len();
        for task in &page.tasks {
            let (mine, summary) = own_questions(&inbox.orchestrator, task, &caller).await;
            for q in mine {
                questions.push(entry(task, &q, summary.as_ref()));
            }
        }
        match page.next {
            Some(next) if read < MAX_TASKS => query.after = Some(next),
            _ => break,
        }
    }
    // Oldest first; questions a run stored before their time was kept, last.
    questions.sort_by(|a, b| {
        let at = |v: &Value| v["askedAt"].as_str().map(str::to_owned);
        match (at(a), at(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    });
    let count = questions.len();
    axum::Json(json!({ "questions": questions, "count": count })).into_response()
}

/// Every question waiting now, whoever may answer it: how many, and how long the
/// oldest has waited (seconds; 0 when none), for the metrics.
pub async fn waiting(store: &dyn TaskStore, orchestrator: &super::Orchestrator) -> (usize, i64) {
    let mut query = TaskQuery {
        state: Some(TaskState::InputRequired),
        limit: PAGE,
        ..TaskQuery::default()
    };
    let (mut count, mut oldest, mut read) = (0, None::<time::OffsetDateTime>, 0);
    while let Ok(page) = store.list(&query).await {
        read += page.tasks.len();
        for task in &page.tasks {
            for q in own_questions(orchestrator, task, &Caller::anonymous())
                .await
                .0
            {
                count += 1;
                let at = (q.asked_at.as_deref()).and_then(|t| {
                    time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                        .ok()
                });
                if let Some(at) = at {
                    oldest = Some(oldest.map_or(at, |o: time::OffsetDateTime| o.min(at)));
                }
            }
        }
        match page.next {
            Some(next) if read < MAX_TASKS => query.after = Some(next),
            _ => break,
        }
    }
    let age = oldest.map_or(0, |o| {
        (time::OffsetDateTime::now_utc() - o).whole_seconds().max(0)
    });
    (count, age)
}

/// The inbox's route, `GET /inbox`.
pub fn router(inbox: Arc<Inbox>) -> axum::Router {
    axum::Router::new()
        .route("/inbox", axum::routing::get(list))
        .with_state(inbox)
}

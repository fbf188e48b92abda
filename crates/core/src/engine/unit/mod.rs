//! One unit of work — a step, or one item of a fan-out — run in its own task: render
//! the message, then attempts with retries, per-attempt timeouts, the step's deadline,
//! questions to the upstream client, and cancellation (which cancels the downstream
//! task and stops forwarding its artifacts).
//!
//! Split by kind of step: [`agent`] (the common one), [`llm`] and [`question`]
//! (approvals and inputs, and the questions any step asks).

mod agent;
mod llm;
mod question;

pub use question::approval;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::journal::{Checkpoint, Journal};
use super::record::Record;
use super::types::{AgentConnector, Answer, Prompt, QuestionKind, RunEvent, StepState, TextModel};
use crate::access::{Decision, Pattern};
use crate::workflow::{StepKind, Workflow};
use backoff::Jitter;

/// Bound on a `tasks/cancel` call.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait for an answer when nothing else bounds it.
const DEFAULT_ANSWER_WAIT: Duration = Duration::from_secs(24 * 3600);
/// Retries wait up to a fifth longer than the step's policy says, never shorter.
const RETRY_JITTER: Jitter = Jitter::Up(0.2);

impl Unit {
    /// How its retries' waits are spread.
    fn jitter(&self) -> Jitter {
        match self.retry_jitter {
            true => RETRY_JITTER,
            false => Jitter::None,
        }
    }
}

/// A question for the run loop to put to the client.
pub struct Ask {
    pub step: usize,
    pub item: Option<usize>,
    pub kind: QuestionKind,
    pub prompt: String,
    /// Who may answer it (empty: anyone who may steer the run).
    pub approvers: Vec<Pattern>,
    /// When the wait for the answer ends.
    pub until: tokio::time::Instant,
    pub reply: oneshot::Sender<Answered>,
}

/// The answer a question got, and who gave it (several people for an approval that
/// needs a quorum).
pub struct Answered {
    pub answer: Answer,
    pub decisions: Vec<Decision>,
}

/// Everything a unit needs.
pub struct Unit {
    pub workflow: Arc<Workflow>,
    pub step: usize,
    pub item: Option<usize>,
    /// The template context, with `item` and `index` set for a fan-out item. Taken (and
    /// dropped) once the step's templates are rendered: a waiting step does not hold it.
    pub context: Value,
    pub run_id: String,
    pub connector: Arc<dyn AgentConnector>,
    /// Writes `kind = "llm"` steps, when one is configured.
    pub model: Option<Arc<dyn TextModel>>,
    pub events: mpsc::Sender<Box<RunEvent>>,
    pub ask: mpsc::Sender<Box<Ask>>,
    pub cancel: CancellationToken,
    /// Where checkpoints go, when the run is durable.
    pub journal: Option<Journal>,
    /// The checkpoint to go on from (a `Sent`), after a restart.
    pub resume: Option<Checkpoint>,
    /// When the unit started (RFC 3339): now, or as its checkpoint says after a restart.
    pub started_at: String,
    /// The run's span, the parent of each attempt's (which is not the step's: a trace
    /// shows run → attempt → call, one level fewer to export).
    pub run_span: Option<tracing::Id>,
    /// The run's bounds on what its agents send, and its bytes so far.
    pub budget: Arc<super::limits::OutputBudget>,
    /// Whether a retry waits a random part longer than its schedule.
    pub retry_jitter: bool,
}

/// How an attempt ended, when not completed.
enum Failure {
    /// Worth another attempt.
    Retry(String),
    /// Final: the step ends in this state.
    Final(StepState, String),
    Canceled(String),
    Deadline,
    /// A question's wait ran out again after it was escalated to these approvers.
    Escalated(String),
}

impl Unit {
    fn id(&self) -> &crate::workflow::StepId {
        &self.workflow.steps[self.step].id
    }

    async fn emit(&self, event: RunEvent) {
        // The receiver only goes away when the run is being torn down.
        let _ = self.events.send(Box::new(event)).await;
    }

    /// Counts what the unit used in its attempt `attempt`: against the run's budget
    /// (which the run watches), and in the run's detail.
    async fn used(&self, added: crate::engine::usage::Usage, attempt: u32) {
        if added.is_zero() {
            return;
        }
        self.budget.spend.add(self.id().as_str(), self.item, &added);
        let step = self.id().clone();
        self.emit(RunEvent::Usage {
            step,
            item: self.item,
            attempt,
            added,
            model: None,
        })
        .await;
    }

    /// Says which model the unit's agent reports it used, in attempt `attempt`.
    async fn used_model(&self, model: String, attempt: u32) {
        self.emit(RunEvent::Usage {
            step: self.id().clone(),
            item: self.item,
            attempt,
            added: Default::default(),
            model: Some(model),
        })
        .await;
    }

    async fn state(
        &self,
        state: StepState,
        attempt: u32,
        agent: Option<&str>,
        task: Option<&str>,
        message: Option<String>,
    ) {
        self.emit(RunEvent::Step {
            step: self.id().clone(),
            item: self.item,
            state,
            attempt,
            agent: agent.map(str::to_owned),
            task_id: task.map(str::to_owned),
            message,
        })
        .await;
    }

    /// Runs the unit to its end. Its future lives as long as the step and is as large as
    /// its largest state: the kinds other than the common agent step are boxed, and it is
    /// not an `async fn`, which would hold `self` twice (as passed and as bound).
    #[allow(clippy::manual_async_fn)] // see above
    pub fn run(mut self) -> impl std::future::Future<Output = Record> + Send + 'static {
        async move {
            let context = std::mem::take(&mut self.context);
            let step = &self.workflow.steps[self.step];
            let deadline = step.deadline.map(|d| Instant::now() + d);
            match &step.kind {
                StepKind::Agent {
                    target,
                    message,
                    data,
                } => {
                    let text = match message {
                        Some(t) => match self.workflow.templates.render(t, &context) {
                            Ok(s) => Some(s),
                            Err(e) => return failed(e.to_string()),
                        },
                        None => None,
                    };
                    let data = match data {
                        Some(d) => match self.workflow.templates.render_data(d, &context) {
                            Ok(Value::Object(m)) => Some(m),
                            Ok(other) => Some(Map::from_iter([("value".to_owned(), other)])),
                            Err(e) => return failed(e.to_string()),
                        },
                        None => None,
                    };
                    drop(context);
                    self.agent_step(target.clone(), text, data, deadline).await
                }
                StepKind::Workflow {
                    workflow, input, ..
                } => {
                    let input = match input {
                        Some(d) => match self.workflow.templates.render_data(d, &context) {
                            Ok(Value::Object(m)) => m,
                            Ok(other) => Map::from_iter([("value".to_owned(), other)]),
                            Err(e) => return failed(e.to_string()),
                        },
                        None => Map::new(),
                    };
                    drop(context);
                    let target = crate::workflow::AgentTarget::Workflow(workflow.clone());
                    self.agent_step(target, None, Some(input), deadline).await
                }
                StepKind::Approval { prompt } | StepKind::Input { prompt, .. } => {
                    let mut prompt = match self.workflow.templates.render(prompt, &context) {
                        Ok(p) => p,
                        Err(e) => return failed(e.to_string()),
                    };
                    // The approval a run asks when it passes its budget says why.
                    if let Some(why) = context.get(BUDGET_EXCEEDED).and_then(Value::as_str) {
                        prompt = format!("{why}. {prompt}");
                    }
                    drop(context);
                    Box::pin(self.question_step(prompt, deadline)).await
                }
                StepKind::Llm {
                    prompt,
                    system,
                    fallback,
                } => {
                    let render = |t: &crate::workflow::template::Template| {
                        self.workflow.templates.render(t, &context)
                    };
                    let prompt = match (render(prompt), system.as_ref().map(render).transpose()) {
                        (Ok(user), Ok(system)) => Prompt { system, user },
                        (Err(e), _) | (_, Err(e)) => return failed(e.to_string()),
                    };
                    let fallback = match fallback.as_ref().map(render).transpose() {
                        Ok(f) => f,
                        Err(e) => return failed(e.to_string()),
                    };
                    drop(context);
                    Box::pin(self.llm_step(prompt, fallback, deadline)).await
                }
            }
        }
    }

    /// Says that attempt `attempt` failed and waits until `resume` for the next one;
    /// false when the unit is canceled meanwhile.
    async fn before_retry(
        &self,
        attempt: u32,
        agent: Option<&str>,
        reason: &str,
        resume: Instant,
    ) -> bool {
        let wait = resume.saturating_duration_since(Instant::now());
        self.state(
            StepState::Working,
            attempt,
            agent,
            None,
            Some(format!(
                "attempt {attempt} failed: {reason}; retrying in {}ms",
                wait.as_millis()
            )),
        )
        .await;
        tokio::select! {
            () = sleep_until(resume) => true,
            () = self.cancel.cancelled() => false,
        }
    }
}

/// The key of a unit's template context saying why the run asks to extend its budget
/// (no template can name it: it is not an identifier templates know).
pub(crate) const BUDGET_EXCEEDED: &str = "budget exceeded";

fn with_state(state: StepState, error: String) -> Record {
    let mut r = Record::new(state);
    r.error = Some(error);
    r
}

fn failed(error: String) -> Record {
    with_state(StepState::Failed, error)
}

//! The run loop: one task per run owning all of the run's state — no locks. It starts a
//! unit as soon as its step's needs have finished (no stage barriers), up to
//! `max_parallel`; evaluates triggers and `when`; fans out `for_each` items; routes
//! questions and answers; applies the failure policy; cancels; renders the output.
//!
//! [`engine`] is the public face (start, resume, control); this file is the loop and the
//! run's state; [`schedule`] decides and starts steps; [`questions`] routes answers.

mod budget;
mod engine;
mod passes;
mod questions;
mod schedule;
mod told;

use engine::Command;
pub use engine::{Engine, EngineOptions, RunControl, RunEvents, RunHandle, TraceHooks};
use questions::Pending;
pub use told::Told;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::journal::{Checkpoint, Journal, RunEnd, RunHeader, SavedRun};
use super::record::Record;
use super::types::{AgentConnector, RunEvent, RunState, StepState, TextModel};
use super::unit::Ask;
use crate::workflow::{StepId, Workflow};

#[derive(Default)]
struct Slot {
    state: Option<StepState>,
    /// The unit was spawned (for a plain step).
    spawned: bool,
    fan: Option<Fan>,
    /// A looping step's passes so far (boxed: few steps loop).
    passes: Option<Box<passes::Passes>>,
    /// When each of its running units started (RFC 3339; by item for a fan-out), for
    /// its record.
    starts: Vec<(Option<usize>, String)>,
}

struct Fan {
    items: Vec<Value>,
    /// Items not started yet, in order.
    queue: std::collections::VecDeque<usize>,
    running: usize,
    max: usize,
    results: Vec<Option<Record>>,
}

struct Run {
    journal: Option<Journal>,
    /// The stored run this one goes on with; taken at start (boxed: the run's future
    /// holds its `Run` as long as it runs).
    saved: Option<Box<SavedRun>>,
    /// Checkpoints of the stored run not consumed yet.
    restore: std::collections::HashMap<(String, Option<usize>), Checkpoint>,
    /// A new run's steps finished by another run (a retry): written down with the new
    /// run, then restored as a resumed run's are.
    seed: std::collections::HashMap<(String, Option<usize>), Checkpoint>,
    workflow: Arc<Workflow>,
    run_id: String,
    connector: Arc<dyn AgentConnector>,
    model: Option<Arc<dyn TextModel>>,
    events: mpsc::Sender<Box<RunEvent>>,
    ask_tx: mpsc::Sender<Box<Ask>>,
    ask_rx: mpsc::Receiver<Box<Ask>>,
    commands: mpsc::Receiver<Box<Command>>,
    /// Fired by `RunControl::cancel`.
    cancel: CancellationToken,
    /// Cancels every running unit that is not an `always` step.
    work: CancellationToken,
    /// Cancels `always` steps when the grace period ends.
    always: CancellationToken,
    units: JoinSet<(usize, Option<usize>, Record)>,
    /// Units running (fan-out items count one each).
    running: usize,
    questions: Vec<Pending>,
    /// A resumed run's questions that waited when it stopped, until it asks them again
    /// (boxed: only a resumed run that was asking has them).
    reasking: Option<Box<questions::Reasking>>,
    slots: Vec<Slot>,
    /// Per step: its needs, the steps needing it, and how many needs are unfinished.
    needs: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    waiting: Vec<usize>,
    /// Steps whose needs have all finished, to decide (in workflow order).
    ready: std::collections::BTreeSet<usize>,
    /// Started steps with units left to spawn.
    active: std::collections::BTreeSet<usize>,
    finished_count: usize,
    /// The run's inputs (defaults filled in).
    inputs: Map<String, Value>,
    /// The finished steps' records, by id: what templates and the result may use. A
    /// record's template form (`steps.<id>`) is made when a template context asks for
    /// it, as a copy of it was before: most steps are used by no template (and a
    /// workflow without `[output]` reads its result off the records), so making it for
    /// every step that settled was work thrown away.
    settled: rustc_hash::FxHashMap<String, Record>,
    stopping: bool,
    canceled: bool,
    /// The first failure, which the run's end reports.
    failure: Option<Failure>,
    /// When the run's deadline (`[workflow] deadline`) passes, until it has.
    deadline: Option<tokio::time::Instant>,
    state: RunState,
    grace: Duration,
    grace_until: Option<tokio::time::Instant>,
    /// What the run's agents may still send, shared by its units.
    budget: Arc<crate::engine::limits::OutputBudget>,
    /// Gives the trace context written with the run (see [`TraceHooks`]).
    trace_capture: Option<fn() -> Option<String>>,
    /// Who started the run, where (boxed: every run's future holds its `Run`).
    origin: Option<Box<crate::access::Origin>>,
    /// Whether its units' retries wait a random part longer (see `EngineOptions`).
    retry_jitter: bool,
    /// The approval asked when the budget is passed, if the workflow has one (boxed:
    /// few workflows do).
    on_budget: Option<Box<budget::BudgetAsk>>,
}

/// Longest step text a workflow without `[output]` repeats in its result; a longer one
/// is named by its artifacts instead.
const RESULT_INLINE_MAX: usize = 64 * 1024;

/// What is left of `deadline` for a run that started at `started_at` (RFC 3339; the
/// whole of it when unknown).
pub(super) fn remaining(deadline: Duration, started_at: Option<&str>) -> Duration {
    let Some(started) = started_at.and_then(|s| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
    }) else {
        return deadline;
    };
    let elapsed = time::OffsetDateTime::now_utc() - started;
    Duration::try_from(elapsed).map_or(deadline, |e| deadline.saturating_sub(e))
}

/// Why a run failed.
enum Failure {
    /// A step failed (and had no `continue_on_error`).
    Step(StepFailure),
    /// The run's deadline passed with these steps still running.
    Deadline {
        after: Duration,
        running: Vec<String>,
    },
    /// The run spent past its budget (why, and at which step).
    Budget(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Step(s) => s.fmt(f),
            Failure::Budget(why) => f.write_str(why),
            Failure::Deadline { after, running } => {
                write!(
                    f,
                    "the run's deadline of {} passed",
                    crate::config::format_duration(*after)
                )?;
                if running.is_empty() {
                    Ok(())
                } else {
                    write!(f, " with {} still running (canceled)", running.join(", "))
                }
            }
        }
    }
}

/// A step that failed (and had no `continue_on_error`): why the run failed.
struct StepFailure {
    step: StepId,
    /// The agent (or model) it last reached, if any.
    agent: Option<String>,
    reason: String,
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step `{}`", self.step)?;
        if let Some(a) = &self.agent {
            write!(f, " (agent {a})")?;
        }
        write!(f, " failed: {}", self.reason)
    }
}

impl Run {
    async fn emit(&self, event: RunEvent) {
        let _ = self.events.send(Box::new(event)).await;
    }

    /// The template context of step `step` (everything, for the output): only the steps
    /// and inputs its templates use are put in, so starting a step costs no more as a
    /// run or its inputs grow.
    fn context(&self, step: Option<usize>, item: Option<(usize, &Value)>) -> Value {
        // A step whose templates have no tag renders the same without one.
        if step.is_some_and(|i| self.workflow.steps[i].kind.renders_plainly()) {
            return Value::Null;
        }
        // Built each time rather than kept: a waiting run holds no template context.
        let mut ctx = json!({
            "workflow": { "id": self.workflow.id.as_str(), "name": self.workflow.name },
            "run": { "id": self.run_id },
        });
        let uses_inputs = step.and_then(|i| self.workflow.steps[i].uses_inputs.as_ref());
        ctx["input"] = match uses_inputs {
            Some(names) => Value::Object(
                names
                    .iter()
                    .filter_map(|n| self.inputs.get(n).map(|v| (n.clone(), v.clone())))
                    .collect(),
            ),
            None => Value::Object(self.inputs.clone()),
        };
        ctx["steps"] = match step {
            Some(i) => Value::Object(
                self.workflow.steps[i]
                    .uses
                    .iter()
                    .filter_map(|u| {
                        self.settled
                            .get(u.as_str())
                            .map(|r| (u.to_string(), r.to_json()))
                    })
                    .collect(),
            ),
            None => Value::Object(
                self.settled
                    .iter()
                    .map(|(id, r)| (id.clone(), r.to_json()))
                    .collect(),
            ),
        };
        if let Some((index, item)) = item {
            ctx["item"] = item.clone();
            ctx["index"] = json!(index);
        }
        ctx
    }

    // The run's future lives as long as the run and is as large as its largest state: the
    // occasional steps (starting, scheduling, handling an event, finishing) are boxed so
    // that it holds only the loop's wait — memory every in-flight run holds.
    // Not an `async fn`: its argument would be kept twice in the future (once as passed,
    // once as bound); an `async move` block holds `self` once.
    #[allow(clippy::manual_async_fn)] // see above: an async fn would hold its arguments twice
    fn run(mut self) -> impl std::future::Future<Output = ()> + Send + 'static {
        async move {
            if !Box::pin(self.start()).await {
                return;
            }
            loop {
                Box::pin(self.schedule()).await;
                if self.running == 0 && self.finished_count == self.slots.len() {
                    // Passed by the last step to end: asked, if the workflow asks.
                    if self.budget.spend.is_over() && !self.stopping && self.asks_budget() {
                        Box::pin(self.budget_passed()).await;
                        continue;
                    }
                    break;
                }
                Box::pin(self.update_run_state()).await;
                // One timer for the grace of `always` steps and the run's deadline.
                let budget = self.budget.clone();
                let wake = match (self.grace_until, self.deadline) {
                    (Some(g), Some(d)) => Some(g.min(d)),
                    (g, d) => g.or(d),
                };
                // In order: the cancel (its token's lock, a waiter added and removed)
                // and the timer are looked at only while nothing before them is ready.
                // Nothing starves them: units, questions and commands each yield after
                // tokio's budget.
                tokio::select! {
                    biased;
                    Some(done) = self.units.join_next() => {
                        self.running -= 1;
                        match done {
                            Ok((step, item, record)) => Box::pin(self.unit_done(step, item, record)).await,
                            Err(e) => debug!(error = %e, "a unit task ended abnormally"),
                        }
                    }
                    Some(ask) = self.ask_rx.recv() => Box::pin(self.asked(*ask)).await,
                    Some(cmd) = self.commands.recv() => Box::pin(self.command(*cmd)).await,
                    () = self.cancel.cancelled(), if !self.canceled => Box::pin(self.cancel_run()).await,
                    () = budget.spend.passed(), if !self.stopping && !self.asking_budget() => Box::pin(self.budget_passed()).await,
                    () = async { tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)).await }, if wake.is_some() => {
                        let now = tokio::time::Instant::now();
                        if self.deadline.is_some_and(|d| d <= now) {
                            Box::pin(self.deadline_passed()).await;
                        }
                        if self.grace_until.is_some_and(|g| g <= now) {
                            self.always.cancel();
                            self.grace_until = None;
                        }
                    }
                }
            }
            Box::pin(self.finish()).await;
        }
    }

    /// Writes the run down (or restores it); false when a restored run had already ended
    /// (its end reported again).
    async fn start(&mut self) -> bool {
        match self.saved.take() {
            None => {
                if let Some(j) = &self.journal {
                    let header = RunHeader {
                        run_id: self.run_id.clone(),
                        workflow_id: self.workflow.id.to_string(),
                        workflow_file: self.workflow.file.clone(),
                        workflow_source: self.workflow.source.to_string(),
                        workflow_hash: self.workflow.hash.clone(),
                        inputs: self.inputs.clone(),
                        // Inside the run's span: the context of the run itself.
                        trace: self.trace_capture.and_then(|capture| capture()),
                        started_at: Some(super::journal::wall_clock()),
                        initiator: self.origin.as_ref().and_then(|o| o.initiator.clone()),
                        tenant: self.origin.as_ref().and_then(|o| o.tenant.clone()),
                        retry_of: self.origin.as_ref().and_then(|o| o.retry_of.clone()),
                        held: super::journal::Held::of(&self.workflow),
                        parent: self.origin.as_ref().and_then(|o| o.parent.clone()),
                    };
                    j.create(&header).await;
                }
                if let Some(j) = &self.journal {
                    for ((step, item), checkpoint) in &self.seed {
                        j.unit(step, *item, checkpoint).await;
                    }
                }
                self.restore = std::mem::take(&mut self.seed);
                self.deadline = self
                    .workflow
                    .deadline
                    .map(|d| tokio::time::Instant::now() + d);
                if let Some(d) = self.deadline {
                    let _ = self.budget.deadline.set(d);
                }
            }
            Some(saved) => {
                let saved = *saved;
                if let Some(end) = saved.end {
                    self.report_end(end).await;
                    return false;
                }
                // The deadline counts from the run's start, not from the restart.
                self.deadline = self.workflow.deadline.map(|d| {
                    tokio::time::Instant::now() + remaining(d, saved.header.started_at.as_deref())
                });
                if let Some(d) = self.deadline {
                    let _ = self.budget.deadline.set(d);
                }
                let asked: Vec<(String, Option<usize>)> = saved
                    .units
                    .iter()
                    .filter(|(_, c)| {
                        matches!(
                            c,
                            Checkpoint::Asked { .. } | Checkpoint::Sent { asking: true, .. }
                        )
                    })
                    .map(|(key, _)| key.clone())
                    .collect();
                if !asked.is_empty() {
                    self.reasking = Some(Box::new(questions::Reasking::new(asked)));
                }
                // Extensions approved before, then the account goes on from what its
                // finished steps used (a fan-out step's items are counted, not the
                // step besides).
                self.restore_budget(&saved.units);
                for ((step, item), c) in &saved.units {
                    if let Checkpoint::Done(r) = c
                        && r.items.is_none()
                        && let Some(u) = r.usage.as_deref()
                    {
                        self.budget.spend.add(step, *item, u);
                    }
                }
                self.restore = saved.units;
                if saved.canceled {
                    self.cancel.cancel();
                }
            }
        }
        self.emit(RunEvent::Run {
            state: RunState::Working,
            message: None,
        })
        .await;
        true
    }

    async fn update_run_state(&mut self) {
        let waiting = self.questions.len();
        let state = if waiting > 0 && waiting >= self.running {
            RunState::InputRequired
        } else {
            RunState::Working
        };
        if state != self.state {
            self.state = state;
            self.emit(RunEvent::Run {
                state,
                message: None,
            })
            .await;
        }
    }

    /// The run's deadline passed: what still runs is canceled (`always` steps after the
    /// grace), and the run fails saying so.
    async fn deadline_passed(&mut self) {
        self.deadline = None;
        let Some(after) = self.workflow.deadline else {
            return;
        };
        let running: Vec<String> = self
            .slots
            .iter()
            .zip(&self.workflow.steps)
            .filter(|(slot, _)| slot.state == Some(StepState::Working))
            .map(|(_, step)| format!("`{}`", step.id))
            .collect();
        if self.failure.is_none() {
            self.failure = Some(Failure::Deadline { after, running });
        }
        self.stopping = true;
        self.work.cancel();
        self.grace_until
            .get_or_insert(tokio::time::Instant::now() + self.grace);
    }

    /// The run spent past its budget: it asks to extend it, when the workflow says so;
    /// else it fails saying so, and what still runs is canceled (`always` steps after
    /// the grace), as at its deadline.
    async fn budget_passed(&mut self) {
        if self.asks_budget() {
            return self.ask_budget().await;
        }
        let why = self.budget.spend.over();
        self.stop_over_budget(why);
    }

    /// Fails the run on its budget (`why`), canceling what still runs.
    fn stop_over_budget(&mut self, why: Option<String>) {
        if let Some(why) = why
            && !matches!(self.failure, Some(Failure::Budget(_)))
        {
            self.failure = Some(Failure::Budget(why));
        }
        self.stopping = true;
        self.work.cancel();
        self.grace_until
            .get_or_insert(tokio::time::Instant::now() + self.grace);
    }

    async fn cancel_run(&mut self) {
        if let Some(j) = &self.journal {
            j.canceled().await;
        }
        self.canceled = true;
        self.stopping = true;
        self.work.cancel();
        self.grace_until = Some(tokio::time::Instant::now() + self.grace);
    }

    async fn finish(mut self) {
        // Passed by the last step to end: the run fails all the same.
        if let Some(why) = self.budget.spend.over()
            && !self.canceled
            && !matches!(self.failure, Some(Failure::Budget(_)))
        {
            self.failure = Some(Failure::Budget(why));
        }
        Box::pin(self.budget_step_ends()).await;
        let (state, message) = if self.canceled {
            (RunState::Canceled, Some("the run was canceled".to_owned()))
        } else if let Some(failure) = self.failure.take() {
            (RunState::Failed, Some(failure.to_string()))
        } else {
            (RunState::Completed, None)
        };
        let mut end = RunEnd {
            state,
            message,
            output_text: None,
            output_data: None,
        };
        if state == RunState::Completed {
            match self.output() {
                Ok((text, data)) => {
                    end.output_text = text;
                    end.output_data = data;
                }
                Err(e) => {
                    end.state = RunState::Failed;
                    end.message = Some(format!("the output could not be rendered: {e}"));
                }
            }
        }
        if let Some(j) = &self.journal {
            j.finish(&end).await;
        }
        self.report_end(end).await;
    }

    /// Emits a run's end: its output (when completed), then its final state.
    async fn report_end(&self, end: RunEnd) {
        if end.state == RunState::Completed {
            self.emit(RunEvent::Output {
                text: end.output_text,
                data: end.output_data,
            })
            .await;
        }
        // The run's span (see `Engine::launch`) says how it ended.
        tracing::Span::current().record("a2a.task.state", end.state.as_str());
        self.emit(RunEvent::Run {
            state: end.state,
            message: end.message,
        })
        .await;
    }

    fn output(&self) -> Result<(Option<String>, Option<Value>), String> {
        let t = &self.workflow.templates;
        match &self.workflow.output {
            Some(o) => {
                // Built only for an `[output]` to render: it copies every step's output.
                let ctx = self.context(None, None);
                let text = o
                    .text
                    .as_ref()
                    .map(|x| t.render(x, &ctx))
                    .transpose()
                    .map_err(|e| e.to_string())?;
                let data = o
                    .data
                    .as_ref()
                    .map(|x| t.render_data(x, &ctx))
                    .transpose()
                    .map_err(|e| e.to_string())?;
                Ok((text, data))
            }
            None => {
                // Each completed step's text; a large one is named, not repeated: the
                // step's artifacts already hold it (relayed as `step/artifactId`), and a
                // second copy would double what the task keeps and stores.
                let texts: Vec<String> = self
                    .workflow
                    .steps
                    .iter()
                    .filter_map(|s| Some((s, self.settled.get(s.id.as_str())?)))
                    .filter(|(_, r)| r.state == StepState::Completed)
                    .filter_map(|(s, r)| {
                        let text = r.text();
                        if text.is_empty() {
                            return None;
                        }
                        if text.len() <= RESULT_INLINE_MAX {
                            return Some(text);
                        }
                        let ids: Vec<String> = r
                            .outputs
                            .artifacts
                            .iter()
                            .map(|(a, _, _)| format!("{}/{a}", s.id))
                            .collect();
                        Some(format!(
                            "(the output of step `{}`, {} KiB, is in its artifact{} {})",
                            s.id,
                            text.len() / 1024,
                            if ids.len() == 1 { "" } else { "s" },
                            ids.join(", ")
                        ))
                    })
                    .collect();
                Ok((Some(texts.join("\n\n")), None))
            }
        }
    }
}

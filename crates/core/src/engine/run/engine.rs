//! The engine's public face: [`Engine`] starts and resumes runs, each in its own task
//! (a [`Run`]), and hands back a [`RunHandle`] — its [`RunControl`] (answers, cancel,
//! the run's detail) and its [`RunEvents`].

use super::super::detail::RunDetail;
use super::super::journal::{Checkpoint, Journal, RunStore, RunStoreError, SavedRun, wall_clock};
use super::told::{self, Locations, OnItsWay, Told};
use super::{Run, Slot};
use crate::access::{Actor, Origin};
use crate::engine::{AgentConnector, Answer, AnswerError, RunEvent, RunState, Taken, TextModel};
use crate::workflow::Workflow;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, info_span};

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// How long `always` steps may run after a cancel or a cancelling failure.
    pub grace: Duration,
    /// Events buffered per run before the run waits for its reader.
    pub event_buffer: usize,
    /// Keeps a run's trace across a restart (none: nothing kept).
    pub trace: TraceHooks,
    /// Bounds on what agents send a run.
    pub limits: crate::engine::OutputLimits,
    /// Waits before retries up to a fifth longer than their schedule, at random, so
    /// that many runs retrying one agent do not all call it at once. Off for runs that
    /// must repeat exactly (`test`).
    pub retry_jitter: bool,
    /// The currency the agents' prices name, shown with costs (none: costs are bare
    /// numbers).
    pub currency: Option<Arc<str>>,
}

/// How a run's trace context outlives the process, for whoever exports traces: the
/// engine writes the string `capture` gives with the run and, when it resumes the run
/// after a restart, hands it to `link` with the resumed run's span. The engine knows
/// nothing of the string's format (a W3C `traceparent`, as set up by `serve`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceHooks {
    /// The trace context of the current span, or none.
    pub capture: Option<fn() -> Option<String>>,
    /// Links a span to a context `capture` gave.
    pub link: Option<fn(&tracing::Span, &str)>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(30),
            event_buffer: 1024,
            trace: TraceHooks::default(),
            limits: Default::default(),
            retry_jitter: true,
            currency: None,
        }
    }
}

/// Runs workflows. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    connector: Arc<dyn AgentConnector>,
    /// Writes `kind = "llm"` steps; without one they use their `fallback`.
    model: Option<Arc<dyn TextModel>>,
    options: EngineOptions,
    tracker: TaskTracker,
    /// Where runs are written down, when they should survive the process.
    store: Option<Arc<dyn RunStore>>,
    /// Where each agent is found, for the runs' detail; replaced on a reload (a run
    /// keeps those known when it started).
    locations: Arc<RwLock<Arc<Locations>>>,
}

pub(super) enum Command {
    Answer {
        step: Option<String>,
        item: Option<usize>,
        answer: Answer,
        reply: tokio::sync::oneshot::Sender<Result<Taken, AnswerError>>,
    },
}

/// Controls a running run, and reads its detail. Cheap to clone.
#[derive(Clone)]
pub struct RunControl {
    commands: mpsc::Sender<Box<Command>>,
    /// Shared: every waiting run's reader holds a control, so it is kept small.
    shared: Arc<Shared>,
}

/// What a run's control and its events share.
struct Shared {
    cancel: CancellationToken,
    /// Fired by `RunControl::halt`, or by the journal when the store refuses a write
    /// because another process now runs the run. Only a journaled run has one: a run
    /// kept nowhere is never taken over, and ends with its process.
    halt: Option<CancellationToken>,
    /// The run's detail: the one place a live run's is kept.
    told: Mutex<Told>,
}

impl RunControl {
    /// Routes an answer to the pending question of `step` (and `item`), or to the only
    /// pending question when `step` is `None`. Until the run says whether it took it,
    /// the question does not wait for the client ([`Told::waiting`]); once taken, it
    /// leaves the detail's pending questions.
    pub async fn answer(
        &self,
        step: Option<&str>,
        item: Option<usize>,
        answer: Answer,
    ) -> Result<Taken, AnswerError> {
        let on_its_way = OnItsWay::new(&self.shared.told, step, item);
        let (reply, result) = tokio::sync::oneshot::channel();
        let cmd = Command::Answer {
            step: step.map(str::to_owned),
            item,
            answer,
            reply,
        };
        self.commands
            .send(Box::new(cmd))
            .await
            .map_err(|_| AnswerError::Finished)?;
        let taken = result.await.map_err(|_| AnswerError::Finished)?;
        on_its_way.end(|detail| {
            // The run routed the answer the same way: to the step named, or to the only
            // question.
            if let Ok(Taken::Answered) = &taken {
                detail.answered(step, item);
            }
        });
        taken
    }

    /// The run's detail, and the questions waiting for the client, as `read` sees them.
    pub fn read<R>(&self, read: impl FnOnce(&Told) -> R) -> R {
        read(&told::lock(&self.shared.told))
    }

    /// Cancels the run: no new steps, every running downstream task canceled, `always`
    /// steps run within the grace period, the run ends `canceled`. The detail's audit
    /// trail records `by`, when known.
    pub fn cancel_by(&self, by: Option<&Actor>) {
        if let Some(by) = by {
            let mut told = told::lock(&self.shared.told);
            told.detail_mut()
                .audited("canceled", by, wall_clock(), None, None);
        }
        self.cancel();
    }

    /// Cancels the run, as [`RunControl::cancel_by`] someone unknown.
    pub fn cancel(&self) {
        self.shared.cancel.cancel();
    }

    /// Stops the run where it stands, writing nothing more and sending nothing more:
    /// for a run this process no longer runs (it stops, or another process took the
    /// run over). What the store holds is left for whoever resumes it.
    pub fn halt(&self) {
        if let Some(halt) = &self.shared.halt {
            halt.cancel();
        }
    }
}

/// A started run: its control and its events (ending with the final `Run` event).
pub struct RunHandle {
    pub run_id: String,
    pub control: RunControl,
    pub events: RunEvents,
}

/// A run's events, in order, ending with the final `Run` event. Each event taken moves
/// the run's detail on (see [`RunControl::read`]).
///
/// Each waits in the channel boxed: a channel allocates its slots in blocks of 32, and a
/// block of boxes is a twentieth of a block of events — memory every run holds.
pub struct RunEvents {
    events: mpsc::Receiver<Box<RunEvent>>,
    shared: Arc<Shared>,
    /// Where the run's agents were found when it started.
    locations: Arc<Locations>,
}

impl RunEvents {
    /// The next event, the run's detail moved on by it (see [`Told::at`]); `None` once
    /// the run has ended and every event was taken.
    pub async fn recv(&mut self) -> Option<RunEvent> {
        let event = *self.events.recv().await?;
        // Artifacts and the output do not move the detail: no clock read for them.
        if !matches!(event, RunEvent::Artifact { .. } | RunEvent::Output { .. }) {
            let locations = &self.locations;
            told::lock(&self.shared.told)
                .take(&event, &wall_clock(), |agent| locations.get(agent).cloned());
        }
        Some(event)
    }
}

impl Engine {
    pub fn new(connector: Arc<dyn AgentConnector>, options: EngineOptions) -> Self {
        Self {
            connector,
            model: None,
            options,
            tracker: TaskTracker::new(),
            store: None,
            locations: Default::default(),
        }
    }

    /// Takes `locations` (each agent's name → where it is found) as the agents' for the
    /// runs that start from now on; the detail names them (`agentUrl`).
    pub fn set_agent_locations(&self, locations: HashMap<String, String>) {
        *self.locations.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(locations);
    }

    fn locations(&self) -> Arc<Locations> {
        self.locations
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A saved run's detail, rebuilt from what it saved of its steps, on `workflow` (the
    /// version it started with): what it resumes from, and how a run no process holds
    /// is shown.
    pub fn saved_detail(&self, workflow: &Workflow, saved: &SavedRun) -> RunDetail {
        let h = &saved.header;
        let now = wall_clock();
        // The run's start as it was written down (the restart's time for runs stored
        // before starts were kept).
        let mut detail = RunDetail::new(
            workflow,
            h.inputs.clone(),
            h.started_at.clone().unwrap_or_else(|| now.clone()),
        );
        if let Some(by) = &h.initiator {
            detail.started(by);
        }
        detail.currency = self.options.currency.as_deref().map(str::to_owned);
        detail.retry_of.clone_from(&h.retry_of);
        detail.parent.clone_from(&h.parent);
        let locations = self.locations();
        detail.restore(&saved.units, &now, |a| locations.get(a).cloned());
        detail
    }

    /// The currency costs are shown in, if the prices name one.
    pub fn currency(&self) -> Option<&str> {
        self.options.currency.as_deref()
    }

    /// Writes `kind = "llm"` steps with `model`.
    pub fn with_model(mut self, model: Arc<dyn TextModel>) -> Self {
        self.model = Some(model);
        self
    }

    /// Writes every run down in `store`, so that [`Engine::resume`] can go on with it
    /// after a restart.
    pub fn with_store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// A run as stored (none without a store, or for an unknown id).
    pub async fn saved_run(&self, run_id: &str) -> Result<Option<SavedRun>, RunStoreError> {
        match &self.store {
            Some(store) => store.load_run(run_id).await,
            None => Ok(None),
        }
    }

    /// Checks the inputs, then starts the run. The error lists every input problem.
    pub fn start(
        &self,
        workflow: Arc<Workflow>,
        inputs: &Map<String, Value>,
        run_id: String,
    ) -> Result<RunHandle, Vec<String>> {
        self.start_by(workflow, inputs, run_id, Origin::default())
    }

    /// Like [`Engine::start`], for a run started from `origin`: the run records who
    /// started it where, and its four-eyes steps refuse the initiator's answers.
    pub fn start_by(
        &self,
        workflow: Arc<Workflow>,
        inputs: &Map<String, Value>,
        run_id: String,
        origin: Origin,
    ) -> Result<RunHandle, Vec<String>> {
        let inputs = workflow.check_inputs(inputs)?;
        Ok(self.launch(workflow, inputs, run_id, None, Default::default(), origin))
    }

    /// Starts a new run that begins with the results of steps another run finished
    /// (`seed`: `Done` checkpoints by step and fan-out item): those steps are not run
    /// again, the others run as in any run. How a run is retried.
    pub fn start_seeded(
        &self,
        workflow: Arc<Workflow>,
        inputs: &Map<String, Value>,
        run_id: String,
        seed: HashMap<(String, Option<usize>), Checkpoint>,
        origin: Origin,
    ) -> Result<RunHandle, Vec<String>> {
        let inputs = workflow.check_inputs(inputs)?;
        let seed = seed
            .into_iter()
            .filter(|(_, c)| matches!(c, Checkpoint::Done(_)))
            .collect();
        Ok(self.launch(workflow, inputs, run_id, None, seed, origin))
    }

    /// The detail a run starts with: every step pending, or as saved for a resumed run;
    /// a retry's kept steps as the run it retries left them.
    fn first_detail(
        &self,
        workflow: &Workflow,
        inputs: &Map<String, Value>,
        saved: Option<&SavedRun>,
        seed: &HashMap<(String, Option<usize>), Checkpoint>,
        origin: &Origin,
    ) -> RunDetail {
        if let Some(saved) = saved {
            return self.saved_detail(workflow, saved);
        }
        let now = wall_clock();
        let mut detail = RunDetail::new(workflow, inputs.clone(), now.clone());
        if let Some(by) = &origin.initiator {
            detail.started(by);
        }
        detail.currency = self.options.currency.as_deref().map(str::to_owned);
        detail.parent.clone_from(&origin.parent);
        if let Some(of) = &origin.retry_of {
            let locations = self.locations();
            detail.restore(seed, &now, |a| locations.get(a).cloned());
            for s in &mut detail.steps {
                if seed.contains_key(&(s.step.clone(), s.item)) {
                    s.message = Some(format!("kept from run {of}"));
                }
            }
            detail.retry_of = Some(of.clone());
            if let Some(by) = &origin.initiator {
                detail.audited("retried", by, now, None, None);
            }
        }
        detail
    }

    /// Goes on with a stored run (after a restart) on `workflow` — the version the run
    /// started with. Finished steps keep their results and are not run again; a step
    /// whose downstream task is known follows that task again; a message whose fate is
    /// unknown is sent again with the same message id; questions are asked again. A run
    /// that had ended reports its end again.
    pub fn resume(&self, workflow: Arc<Workflow>, saved: SavedRun) -> RunHandle {
        // Held again to the budget and deadline it started with (a caller's, when lower
        // than the workflow's).
        let workflow = match saved.header.held {
            Some(held) if (held.budget, held.deadline) != (workflow.budget, workflow.deadline) => {
                let mut w = (*workflow).clone();
                w.budget = held.budget;
                w.deadline = held.deadline;
                Arc::new(w)
            }
            _ => workflow,
        };
        let inputs = saved.header.inputs.clone();
        let run_id = saved.header.run_id.clone();
        let origin = Origin {
            initiator: saved.header.initiator.clone(),
            tenant: saved.header.tenant.clone(),
            retry_of: saved.header.retry_of.clone(),
            parent: saved.header.parent.clone(),
        };
        self.launch(
            workflow,
            inputs,
            run_id,
            Some(saved),
            Default::default(),
            origin,
        )
    }

    fn launch(
        &self,
        workflow: Arc<Workflow>,
        inputs: Map<String, Value>,
        run_id: String,
        saved: Option<SavedRun>,
        seed: HashMap<(String, Option<usize>), Checkpoint>,
        origin: Origin,
    ) -> RunHandle {
        // Named after the OpenTelemetry GenAI conventions, for whoever exports spans.
        let span = info_span!(
            "run",
            run_id = %run_id,
            otel.name = %format!("invoke_workflow {}", workflow.id),
            "gen_ai.operation.name" = "invoke_workflow",
            "a2a.task.id" = %run_id,
            "a2a.task.state" = tracing::field::Empty,
            workflow = %workflow.id,
        );
        // A resumed run's trace starts here, linked to the trace it started in.
        if let (Some(link), Some(trace)) = (
            self.options.trace.link,
            saved.as_ref().and_then(|s| s.header.trace.as_deref()),
        ) {
            link(&span, trace);
        }
        let detail = self.first_detail(&workflow, &inputs, saved.as_ref(), &seed, &origin);
        let (mut run, handle) = self.prepare(workflow, inputs, run_id, saved, detail);
        run.seed = seed;
        run.origin = (origin != Origin::default()).then(|| Box::new(origin));
        match handle.control.shared.halt.clone() {
            // Halted, the run's future is dropped where it stands, and its units with it.
            Some(halt) => {
                let run = run.run();
                self.tracker.spawn(
                    async move {
                        tokio::select! {
                            () = run => {}
                            () = halt.cancelled() => tracing::info!("the run is halted: left as stored"),
                        }
                    }
                    .instrument(span),
                );
            }
            None => {
                self.tracker.spawn(run.run().instrument(span));
            }
        }
        handle
    }

    /// A run's state and its handle, not started yet.
    fn prepare(
        &self,
        workflow: Arc<Workflow>,
        inputs: Map<String, Value>,
        run_id: String,
        saved: Option<SavedRun>,
        detail: RunDetail,
    ) -> (Run, RunHandle) {
        let (events_tx, events) = mpsc::channel(self.options.event_buffer);
        let (commands, commands_rx) = mpsc::channel(16);
        let cancel = CancellationToken::new();
        let (ask_tx, ask_rx) = mpsc::channel(64);
        let budget = workflow.budget;
        let n = workflow.steps.len();
        let needs: Vec<Vec<usize>> = workflow
            .steps
            .iter()
            .map(|s| {
                s.needs
                    .iter()
                    .filter_map(|n| workflow.steps.iter().position(|x| x.id == *n))
                    .collect()
            })
            .collect();
        let mut dependents = vec![Vec::new(); n];
        for (i, ns) in needs.iter().enumerate() {
            for &j in ns {
                dependents[j].push(i);
            }
        }
        let waiting: Vec<usize> = needs.iter().map(Vec::len).collect();
        // The approval asked when the budget is passed is no step of the graph: never
        // ready, and finished from the start as far as the run's end is concerned.
        let on_budget = workflow.on_budget.as_ref().and_then(|o| {
            let step = workflow.steps.iter().position(|s| s.id == o.step)?;
            Some(Box::new(super::budget::BudgetAsk::new(step, o.extend)))
        });
        let asked_apart = on_budget.as_ref().map(|a| a.step);
        let ready = (0..n)
            .filter(|&i| waiting[i] == 0 && Some(i) != asked_apart)
            .collect();
        let halt = self.store.as_ref().map(|_| CancellationToken::new());
        let journal = self
            .store
            .as_ref()
            .zip(halt.clone())
            .map(|(store, halt)| Journal {
                store: store.clone(),
                run_id: run_id.clone(),
                halt,
            });
        let run = Run {
            journal,
            saved: saved.map(Box::new),
            restore: Default::default(),
            seed: Default::default(),
            needs,
            dependents,
            waiting,
            ready,
            active: Default::default(),
            finished_count: usize::from(asked_apart.is_some()),
            settled: Default::default(),
            inputs,
            slots: (0..n).map(|_| Slot::default()).collect(),
            workflow,
            run_id: run_id.clone(),
            connector: self.connector.clone(),
            model: self.model.clone(),
            events: events_tx,
            ask_tx,
            ask_rx,
            commands: commands_rx,
            cancel: cancel.clone(),
            work: CancellationToken::new(),
            always: CancellationToken::new(),
            units: JoinSet::new(),
            running: 0,
            questions: Vec::new(),
            reasking: None,
            stopping: false,
            canceled: false,
            failure: None,
            deadline: None,
            state: RunState::Working,
            grace: self.options.grace,
            budget: Arc::new(
                crate::engine::limits::OutputBudget::new(self.options.limits, budget)
                    .in_currency(self.options.currency.clone()),
            ),
            origin: None,
            retry_jitter: self.options.retry_jitter,
            trace_capture: self.options.trace.capture,
            grace_until: None,
            on_budget,
        };
        let shared = Arc::new(Shared {
            cancel,
            halt,
            told: Mutex::new(Told::new(detail)),
        });
        let handle = RunHandle {
            run_id,
            control: RunControl {
                commands,
                shared: shared.clone(),
            },
            events: RunEvents {
                events,
                shared,
                locations: self.locations(),
            },
        };
        (run, handle)
    }

    /// Waits for every run to end (after canceling them, if `cancel`).
    pub async fn shutdown(&self) {
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests {
    //! The futures every in-flight run holds for as long as it runs. Their size is memory
    //! per run (`bench`'s `bytes_per_inflight_run`): rarely taken branches are boxed and
    //! the long-lived futures are `async move` blocks, not `async fn`s, to keep them
    //! small. These bounds fail when a change undoes that (an unboxed branch, an
    //! `async fn`), before the benchmark would show it.

    use super::super::super::testing::Silent;
    use super::super::super::unit::Unit;
    use super::*;
    use crate::workflow::{Options, load_str};

    /// A shipped workflow: the futures' sizes do not depend on which one.
    const WORKFLOW: &str = include_str!("../../../../../workflows/travel-planning.toml");

    /// Bytes of the run loop's future: the run's whole life. (1,448 until a settled
    /// unit's record carried its start and end, which the run holds while it writes the
    /// record down: 48 bytes, for times that survive a restart; then 16 for the run's
    /// deadline, which shares the grace's timer.)
    const RUN_FUTURE_MAX: usize = 1_520;
    /// Bytes of a unit's future: a step's whole life. (2,900 until units kept when they
    /// started and their records when they started and ended: 4% more, for times that
    /// survive a restart; 3,050 until records kept who decided, a vector each, 3% more
    /// for the audit trail; 3,150 until a unit knew whether its retries jitter, 8 bytes
    /// for runs that repeat exactly in `test`; 3,160 until its requests carried what
    /// the run has left of its budget and time, a pointer each; 3,176 until records
    /// kept what their steps used, a pointer each, for accounts that survive restarts;
    /// 3,208 until its requests carried who answered a question, a pointer each, so that
    /// a child run's approvers judge who answered its question upstream; 3,224 until it
    /// passed on the model its agent says it used, and kept each attempt's usage.)
    const UNIT_FUTURE_MAX: usize = 3_232;

    #[test]
    fn the_futures_a_run_holds_stay_small() {
        let (workflow, diags) = load_str("travel-planning.toml", WORKFLOW, Options::default());
        let workflow = Arc::new(workflow.unwrap_or_else(|| panic!("{diags:?}")));
        let engine = Engine::new(Arc::new(Silent), EngineOptions::default());
        let detail = RunDetail::new(&workflow, Map::new(), String::new());
        let (run, handle) = engine.prepare(workflow.clone(), Map::new(), "r".into(), None, detail);
        let run = run.run();
        let run_size = std::mem::size_of_val(&run);
        let (ask, _asks) = mpsc::channel(1);
        let (events, _events) = mpsc::channel(1);
        let unit = Unit {
            workflow,
            step: 0,
            item: None,
            started_at: String::new(),
            context: Value::Null,
            run_id: handle.run_id.clone(),
            connector: Arc::new(Silent),
            model: None,
            events,
            ask,
            cancel: CancellationToken::new(),
            journal: None,
            resume: None,
            run_span: None,
            budget: Arc::new(crate::engine::limits::OutputBudget::new(
                Default::default(),
                None,
            )),
            retry_jitter: true,
        }
        .run();
        let unit_size = std::mem::size_of_val(&unit);
        assert!(
            run_size <= RUN_FUTURE_MAX,
            "the run future grew to {run_size} bytes (bound {RUN_FUTURE_MAX}): box the branch that grew it"
        );
        assert!(
            unit_size <= UNIT_FUTURE_MAX,
            "the unit future grew to {unit_size} bytes (bound {UNIT_FUTURE_MAX}): box the branch that grew it"
        );
        eprintln!("run future {run_size} B, unit future {unit_size} B");
    }
}

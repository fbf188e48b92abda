//! The run loop: one task per run owning all of the run's state — no locks. It starts a
//! unit as soon as its step's needs have finished (no stage barriers), up to
//! `max_parallel`; evaluates triggers and `when`; fans out `for_each` items; routes
//! questions and answers; applies the failure policy; cancels; renders the output.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info_span};

use super::journal::{Checkpoint, Journal, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun};
use super::record::Record;
use super::types::*;
use super::unit::{Ask, Unit, approval};
use crate::workflow::{OnFailure, StepKind, Trigger, Workflow, check_inputs};

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// How long `always` steps may run after a cancel or a cancelling failure.
    pub grace: Duration,
    /// Events buffered per run before the run waits for its reader.
    pub event_buffer: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(30),
            event_buffer: 1024,
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
}

enum Command {
    Answer {
        step: Option<String>,
        item: Option<usize>,
        answer: Answer,
        reply: tokio::sync::oneshot::Sender<Result<(), AnswerError>>,
    },
}

/// Controls a running run. Cheap to clone.
#[derive(Clone)]
pub struct RunControl {
    commands: mpsc::Sender<Box<Command>>,
    cancel: CancellationToken,
}

impl RunControl {
    /// Routes an answer to the pending question of `step` (and `item`), or to the only
    /// pending question when `step` is `None`.
    pub async fn answer(
        &self,
        step: Option<&str>,
        item: Option<usize>,
        answer: Answer,
    ) -> Result<(), AnswerError> {
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
        result.await.map_err(|_| AnswerError::Finished)?
    }

    /// Cancels the run: no new steps, every running downstream task canceled, `always`
    /// steps run within the grace period, the run ends `canceled`.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

/// A started run: its control and its events (ending with the final `Run` event).
pub struct RunHandle {
    pub run_id: String,
    pub control: RunControl,
    pub events: RunEvents,
}

/// A run's events, in order, ending with the final `Run` event.
///
/// Each waits in the channel boxed: a channel allocates its slots in blocks of 32, and a
/// block of boxes is a twentieth of a block of events — memory every run holds.
pub struct RunEvents(mpsc::Receiver<Box<RunEvent>>);

impl RunEvents {
    /// The next event; `None` once the run has ended and every event was taken.
    pub async fn recv(&mut self) -> Option<RunEvent> {
        self.0.recv().await.map(|e| *e)
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
        }
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
        let inputs = workflow.check_inputs(inputs)?;
        Ok(self.launch(workflow, inputs, run_id, None))
    }

    /// Goes on with a stored run (after a restart) on `workflow` — the version the run
    /// started with. Finished steps keep their results and are not run again; a step
    /// whose downstream task is known follows that task again; a message whose fate is
    /// unknown is sent again with the same message id; questions are asked again. A run
    /// that had ended reports its end again.
    pub fn resume(&self, workflow: Arc<Workflow>, saved: SavedRun) -> RunHandle {
        let inputs = saved.header.inputs.clone();
        let run_id = saved.header.run_id.clone();
        self.launch(workflow, inputs, run_id, Some(saved))
    }

    fn launch(
        &self,
        workflow: Arc<Workflow>,
        inputs: Map<String, Value>,
        run_id: String,
        saved: Option<SavedRun>,
    ) -> RunHandle {
        let (events_tx, events) = mpsc::channel(self.options.event_buffer);
        let (commands, commands_rx) = mpsc::channel(16);
        let cancel = CancellationToken::new();
        let (ask_tx, ask_rx) = mpsc::channel(64);
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
        let ready = (0..n).filter(|&i| waiting[i] == 0).collect();
        let journal = self.store.as_ref().map(|store| Journal {
            store: store.clone(),
            run_id: run_id.clone(),
        });
        let run = Run {
            journal,
            saved,
            restore: Default::default(),
            needs,
            dependents,
            waiting,
            ready,
            active: Default::default(),
            finished_count: 0,
            context_steps: Map::new(),
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
            stopping: false,
            canceled: false,
            failure: None,
            state: RunState::Working,
            grace: self.options.grace,
            grace_until: None,
        };
        let span = info_span!("run", run_id = %run_id);
        self.tracker.spawn(run.run().instrument(span));
        RunHandle {
            run_id,
            control: RunControl { commands, cancel },
            events: RunEvents(events),
        }
    }

    /// Waits for every run to end (after canceling them, if `cancel`).
    pub async fn shutdown(&self) {
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[derive(Default)]
struct Slot {
    state: Option<StepState>,
    /// The unit was spawned (for a plain step).
    spawned: bool,
    fan: Option<Fan>,
}

struct Fan {
    items: Vec<Value>,
    /// Items not started yet, in order.
    queue: std::collections::VecDeque<usize>,
    running: usize,
    max: usize,
    results: Vec<Option<Record>>,
}

struct Pending {
    step: usize,
    item: Option<usize>,
    kind: QuestionKind,
    reply: tokio::sync::oneshot::Sender<Answer>,
}

struct Run {
    journal: Option<Journal>,
    /// The stored run this one goes on with; taken at start.
    saved: Option<SavedRun>,
    /// Checkpoints of the stored run not consumed yet.
    restore: std::collections::HashMap<(String, Option<usize>), Checkpoint>,
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
    context_steps: Map<String, Value>,
    stopping: bool,
    canceled: bool,
    /// The first failure: step, agent, reason.
    failure: Option<(String, Option<String>, String)>,
    state: RunState,
    grace: Duration,
    grace_until: Option<tokio::time::Instant>,
}

/// What a trigger decides once all needs have finished.
enum Decision {
    Run,
    Skip,
    UpstreamFailed,
}

fn succeeded(state: StepState, continue_on_error: bool) -> bool {
    state == StepState::Completed
        || (continue_on_error && matches!(state, StepState::Failed | StepState::Rejected))
}

fn failed_like(state: StepState, continue_on_error: bool) -> bool {
    matches!(
        state,
        StepState::Failed | StepState::Rejected | StepState::Canceled | StepState::UpstreamFailed
    ) && !succeeded(state, continue_on_error)
}

impl Run {
    async fn emit(&self, event: RunEvent) {
        let _ = self.events.send(Box::new(event)).await;
    }

    /// The template context of step `step` (everything, for the output): only the steps
    /// and inputs its templates use are put in, so starting a step costs no more as a
    /// run or its inputs grow.
    fn context(&self, step: Option<usize>, item: Option<(usize, &Value)>) -> Value {
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
                        self.context_steps
                            .get(u.as_str())
                            .map(|v| (u.to_string(), v.clone()))
                    })
                    .collect(),
            ),
            None => Value::Object(self.context_steps.clone()),
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
                    break;
                }
                Box::pin(self.update_run_state()).await;
                let grace = self.grace_until;
                tokio::select! {
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
                    () = async { tokio::time::sleep_until(grace.unwrap_or_else(tokio::time::Instant::now)).await }, if grace.is_some() => {
                        self.always.cancel();
                        self.grace_until = None;
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
                    };
                    j.create(&header).await;
                }
            }
            Some(saved) => {
                if let Some(end) = saved.end {
                    self.report_end(end).await;
                    return false;
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

    async fn cancel_run(&mut self) {
        if let Some(j) = &self.journal {
            j.canceled().await;
        }
        self.canceled = true;
        self.stopping = true;
        self.work.cancel();
        self.grace_until = Some(tokio::time::Instant::now() + self.grace);
    }

    /// Decides every ready step and starts what can start, until nothing changes.
    async fn schedule(&mut self) {
        loop {
            while let Some(i) = self.ready.pop_first() {
                let needs = std::mem::take(&mut self.needs[i]);
                self.decide(i, &needs).await;
                self.needs[i] = needs;
            }
            if !self.spawn_units() && self.ready.is_empty() {
                break;
            }
        }
    }

    async fn decide(&mut self, i: usize, needs: &[usize]) {
        let step = &self.workflow.steps[i];
        // A step that finished before a restart keeps its result.
        let key = (step.id.to_string(), None);
        if matches!(self.restore.get(&key), Some(Checkpoint::Done(_)))
            && let Some(Checkpoint::Done(record)) = self.restore.remove(&key)
        {
            return self.settle(i, record);
        }
        // On a canceled run, nothing but `always` steps starts, whatever its needs did.
        if self.canceled && step.trigger != Trigger::Always {
            let mut r = Record::new(StepState::Canceled);
            r.error = Some("not started: the run was canceled".into());
            return self.close(i, r).await;
        }
        let states: Vec<(StepState, bool)> = needs
            .iter()
            .map(|&n| {
                (
                    self.slots[n].state.unwrap_or(StepState::Pending),
                    self.workflow.steps[n].continue_on_error,
                )
            })
            .collect();
        let any_failed = states.iter().any(|&(s, c)| failed_like(s, c));
        let all_ok = states.iter().all(|&(s, c)| succeeded(s, c));
        let any_ok = states.iter().any(|&(s, c)| succeeded(s, c));
        let decision = match step.trigger {
            Trigger::AllSuccess if all_ok => Decision::Run,
            Trigger::AllSuccess | Trigger::OneSuccess
                if any_failed && !(step.trigger == Trigger::OneSuccess && any_ok) =>
            {
                Decision::UpstreamFailed
            }
            Trigger::AllSuccess => Decision::Skip,
            Trigger::OneSuccess if any_ok => Decision::Run,
            Trigger::OneSuccess => Decision::Skip,
            Trigger::NoneFailed if any_failed => Decision::UpstreamFailed,
            Trigger::NoneFailed | Trigger::AllDone | Trigger::Always => Decision::Run,
        };
        match decision {
            Decision::Skip => return self.close(i, Record::new(StepState::Skipped)).await,
            Decision::UpstreamFailed => {
                return self.close(i, Record::new(StepState::UpstreamFailed)).await;
            }
            Decision::Run => {}
        }
        if self.stopping && step.trigger != Trigger::Always {
            let mut r = Record::new(StepState::Skipped);
            r.error = Some("not started: the run is stopping after a failure".into());
            return self.close(i, r).await;
        }
        // `when` and `for_each` may use anything upstream: the whole context, built only
        // for the steps that have them.
        let ctx = if step.when.is_some() || step.for_each.is_some() {
            self.context(None, None)
        } else {
            Value::Null
        };
        if let Some(when) = &step.when {
            match self.workflow.templates.eval_bool(when, &ctx) {
                Ok(true) => {}
                Ok(false) => return self.close(i, Record::new(StepState::Skipped)).await,
                Err(e) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(e.to_string());
                    return self.close(i, r).await;
                }
            }
        }
        if let Some(fan) = &step.for_each {
            let items = match self.workflow.templates.eval(&fan.items, &ctx) {
                Ok(Value::Array(items)) => items,
                Ok(other) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(format!(
                        "{}: `for_each` must yield a list, got {other}",
                        fan.items.site
                    ));
                    return self.close(i, r).await;
                }
                Err(e) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(e.to_string());
                    return self.close(i, r).await;
                }
            };
            if items.is_empty() {
                let mut r = Record::new(StepState::Completed);
                r.items = Some(Vec::new());
                return self.close(i, r).await;
            }
            let n = items.len();
            // Items that finished before a restart keep their results.
            let mut results = vec![None; n];
            let mut queue = std::collections::VecDeque::with_capacity(n);
            for (k, slot) in results.iter_mut().enumerate() {
                match self.restore.remove(&(step.id.to_string(), Some(k))) {
                    Some(Checkpoint::Done(r)) => *slot = Some(r),
                    Some(other) => {
                        self.restore.insert((step.id.to_string(), Some(k)), other);
                        queue.push_back(k);
                    }
                    None => queue.push_back(k),
                }
            }
            let all_done = queue.is_empty();
            self.slots[i].fan = Some(Fan {
                items,
                queue,
                running: 0,
                max: fan.max_parallel.unwrap_or(usize::MAX),
                results,
            });
            if all_done {
                self.slots[i].state = Some(StepState::Working);
                return self.fan_close(i).await;
            }
        }
        self.slots[i].state = Some(StepState::Working);
        self.active.insert(i);
    }

    /// Spawns units of started steps, in workflow order, while there is room; returns
    /// whether it did.
    fn spawn_units(&mut self) -> bool {
        let mut spawned = false;
        let active: Vec<usize> = self.active.iter().copied().collect();
        for i in active {
            if self.running >= self.workflow.max_parallel {
                break;
            }
            spawned |= self.spawn_step(i);
        }
        spawned
    }

    /// Spawns what one step can: its unit, or its items up to its own `max_parallel`.
    fn spawn_step(&mut self, i: usize) -> bool {
        let mut spawned = false;
        while self.running < self.workflow.max_parallel {
            let slot = &mut self.slots[i];
            let (item, value) = match &mut slot.fan {
                None if !slot.spawned => {
                    slot.spawned = true;
                    self.active.remove(&i);
                    (None, None)
                }
                Some(fan) if !fan.queue.is_empty() && fan.running < fan.max => {
                    let Some(k) = fan.queue.pop_front() else {
                        break;
                    };
                    fan.running += 1;
                    if fan.queue.is_empty() {
                        self.active.remove(&i);
                    }
                    (Some(k), Some(fan.items[k].clone()))
                }
                _ => break,
            };
            self.spawn_unit(i, item, value);
            spawned = true;
        }
        spawned
    }

    fn spawn_unit(&mut self, i: usize, item: Option<usize>, value: Option<Value>) {
        let always = self.workflow.steps[i].trigger == Trigger::Always;
        let context = self.context(Some(i), item.zip(value.as_ref()));
        let token = if always {
            self.always.child_token()
        } else {
            self.work.child_token()
        };
        let resume = match self
            .restore
            .remove(&(self.workflow.steps[i].id.to_string(), item))
        {
            Some(c @ Checkpoint::Sent { .. }) => Some(c),
            _ => None,
        };
        let unit = Unit {
            journal: self.journal.clone(),
            resume,
            workflow: self.workflow.clone(),
            step: i,
            item,
            context,
            run_id: self.run_id.clone(),
            connector: self.connector.clone(),
            model: self.model.clone(),
            events: self.events.clone(),
            ask: self.ask_tx.clone(),
            cancel: token,
        };
        let span = info_span!("step", step = %self.workflow.steps[i].id, item = ?item);
        self.units.spawn(
            futures::FutureExt::map(unit.run(), move |record| (i, item, record)).instrument(span),
        );
        self.running += 1;
    }

    async fn unit_done(&mut self, i: usize, item: Option<usize>, record: Record) {
        self.questions.retain(|q| !(q.step == i && q.item == item));
        let Some(k) = item else {
            return self.close(i, record).await;
        };
        if let Some(j) = &self.journal {
            let done = Checkpoint::Done(record.clone());
            // Not waited for: the run's next waited write (a message's checkpoint, its
            // end) stores it; a crash before then resumes the item from its last one.
            j.queue_unit(self.workflow.steps[i].id.as_str(), Some(k), &done)
                .await;
        }
        self.emit(RunEvent::Step {
            step: self.workflow.steps[i].id.clone(),
            item: Some(k),
            state: record.state,
            attempt: record.attempts,
            agent: record.agent.clone(),
            task_id: None,
            message: record.error.clone(),
        })
        .await;
        let Some(fan) = self.slots[i].fan.as_mut() else {
            return;
        };
        fan.running -= 1;
        fan.results[k] = Some(record);
        if !fan.queue.is_empty() || fan.running > 0 {
            return;
        }
        self.fan_close(i).await;
    }

    /// Closes a fan-out step whose items have all finished.
    async fn fan_close(&mut self, i: usize) {
        let Some(fan) = self.slots[i].fan.as_mut() else {
            return;
        };
        let items: Vec<Record> = fan
            .results
            .iter_mut()
            .map(|r| r.take().unwrap_or_else(|| Record::new(StepState::Canceled)))
            .collect();
        let done = items
            .iter()
            .filter(|r| r.state == StepState::Completed)
            .count();
        let need = self.workflow.steps[i]
            .for_each
            .as_ref()
            .and_then(|f| f.min_success)
            .unwrap_or(items.len());
        let mut r = Record::new(if done >= need {
            StepState::Completed
        } else {
            StepState::Failed
        });
        if done < need {
            r.error = Some(format!(
                "{done} of {} items completed; {need} needed",
                items.len()
            ));
        }
        if self.canceled && done < need {
            r.state = StepState::Canceled;
        }
        r.items = Some(items);
        self.close(i, r).await;
    }

    /// Records a step's final state (in the journal first: no step that needs it starts
    /// before it is written), emits it, and settles it.
    async fn close(&mut self, i: usize, record: Record) {
        let step = &self.workflow.steps[i];
        if let Some(j) = &self.journal {
            // Not waited for: the run's next waited write (a message's checkpoint, its
            // end) stores it; a crash before then resumes the step from its last one.
            j.queue_unit(step.id.as_str(), None, &Checkpoint::Done(record.clone()))
                .await;
        }
        self.emit(RunEvent::Step {
            step: step.id.clone(),
            item: None,
            state: record.state,
            attempt: record.attempts,
            agent: record.agent.clone(),
            task_id: None,
            message: record.error.clone(),
        })
        .await;
        self.settle(i, record);
    }

    /// Takes a finished step into account: its dependents, the failure policy, and the
    /// template context.
    fn settle(&mut self, i: usize, record: Record) {
        let step = &self.workflow.steps[i];
        self.slots[i].state = Some(record.state);
        self.active.remove(&i);
        self.finished_count += 1;
        for &d in &self.dependents[i] {
            self.waiting[d] -= 1;
            if self.waiting[d] == 0 {
                self.ready.insert(d);
            }
        }
        let failed = matches!(record.state, StepState::Failed | StepState::Rejected)
            && !step.continue_on_error;
        if failed && self.failure.is_none() {
            self.failure = Some((
                step.id.to_string(),
                record.agent.clone(),
                record
                    .error
                    .clone()
                    .unwrap_or_else(|| record.state.to_string()),
            ));
        }
        if failed && !self.canceled {
            match self.workflow.on_failure {
                OnFailure::Continue => {}
                OnFailure::Stop => self.stopping = true,
                OnFailure::Cancel => {
                    self.stopping = true;
                    self.work.cancel();
                    self.grace_until
                        .get_or_insert(tokio::time::Instant::now() + self.grace);
                }
            }
        }
        self.context_steps
            .insert(step.id.to_string(), record.to_json());
    }

    async fn asked(&mut self, ask: Ask) {
        self.emit(RunEvent::Question {
            step: self.workflow.steps[ask.step].id.clone(),
            item: ask.item,
            kind: ask.kind.clone(),
            prompt: ask.prompt,
        })
        .await;
        self.questions.push(Pending {
            step: ask.step,
            item: ask.item,
            kind: ask.kind,
            reply: ask.reply,
        });
    }

    async fn command(&mut self, cmd: Command) {
        let Command::Answer {
            step,
            item,
            answer,
            reply,
        } = cmd;
        let _ = reply.send(self.route_answer(step, item, answer));
    }

    fn route_answer(
        &mut self,
        step: Option<String>,
        item: Option<usize>,
        answer: Answer,
    ) -> Result<(), AnswerError> {
        let matches: Vec<usize> = self
            .questions
            .iter()
            .enumerate()
            .filter(|(_, q)| {
                step.as_deref()
                    .is_none_or(|s| self.workflow.steps[q.step].id.as_str() == s)
                    && (item.is_none() || q.item == item)
            })
            .map(|(k, _)| k)
            .collect();
        let k = match (matches.as_slice(), &step) {
            ([k], _) => *k,
            ([], Some(s)) => return Err(AnswerError::NoQuestion(s.clone())),
            ([], None) => return Err(AnswerError::NoQuestion("(any)".into())),
            (many, _) => {
                let names: Vec<String> = many
                    .iter()
                    .map(|&k| {
                        let q = &self.questions[k];
                        let id = &self.workflow.steps[q.step].id;
                        q.item
                            .map_or_else(|| id.to_string(), |i| format!("{id}[{i}]"))
                    })
                    .collect();
                return Err(AnswerError::Ambiguous(names.join(", ")));
            }
        };
        let q = &self.questions[k];
        let answer = match &q.kind {
            QuestionKind::Approval => approval(&answer).map_err(AnswerError::Invalid)?,
            QuestionKind::Input { .. } => {
                let StepKind::Input { fields, .. } = &self.workflow.steps[q.step].kind else {
                    return Err(AnswerError::Invalid("not an input step".into()));
                };
                let mut data = answer.data.clone().unwrap_or_default();
                if data.is_empty()
                    && let (Some(t), [only]) = (&answer.text, fields.as_slice())
                {
                    data.insert(only.name.clone(), json!(t));
                }
                let checked =
                    check_inputs(fields, &data).map_err(|p| AnswerError::Invalid(p.join("; ")))?;
                Answer {
                    text: answer.text.clone(),
                    data: Some(checked),
                }
            }
            QuestionKind::Downstream { .. } => answer,
        };
        let q = self.questions.remove(k);
        let _ = q.reply.send(answer);
        Ok(())
    }

    async fn finish(mut self) {
        let (state, message) = if self.canceled {
            (RunState::Canceled, Some("the run was canceled".to_owned()))
        } else if let Some((step, agent, reason)) = self.failure.take() {
            let by = agent.map(|a| format!(" (agent {a})")).unwrap_or_default();
            (
                RunState::Failed,
                Some(format!("step `{step}`{by} failed: {reason}")),
            )
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
        self.emit(RunEvent::Run {
            state: end.state,
            message: end.message,
        })
        .await;
    }

    fn output(&self) -> Result<(Option<String>, Option<Value>), String> {
        let ctx = self.context(None, None);
        let t = &self.workflow.templates;
        match &self.workflow.output {
            Some(o) => {
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
                let texts: Vec<String> = self
                    .workflow
                    .steps
                    .iter()
                    .filter_map(|s| self.context_steps.get(s.id.as_str()))
                    .filter(|v| v["state"] == "completed")
                    .filter_map(|v| v["text"].as_str().map(str::to_owned))
                    .filter(|t| !t.is_empty())
                    .collect();
                Ok((Some(texts.join("\n\n")), None))
            }
        }
    }
}

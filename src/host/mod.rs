//! The orchestrator as one A2A agent: an [`AgentExecutor`] whose skills are the loaded
//! workflows. A new message is routed to a workflow and its inputs are checked (asking
//! for what is missing); the run's events become the upstream task's status and
//! artifact updates; answers to the run's questions arrive as messages on the same task.
//!
//! With a language model configured (`crate::llm`), a free-text request that names no
//! workflow is routed by the model and its inputs are extracted by it; whatever the
//! model does, the deterministic routing and the usual input checks stay in charge.
//!
//! It adapts the engine to the protocol layer and is the only place that knows both.
//! This file holds the executor (execute, resume, cancel); `conversation` what happens
//! on a task before and between runs; `relay` how a run's events reach the task.

mod access;
mod audit;
pub mod availability;
pub mod card_signing;
mod conversation;
pub mod detail;
pub mod inbox;
mod meter;
pub mod ops;
mod relay;
mod retry;
mod route;
mod schedule;
pub mod serve;
pub mod settings;
mod starter;
pub mod starting;
pub mod ui;
pub mod webhook;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::llm::Llm;
use a2a::RpcError;
use a2a::card::{AgentCard, AgentSkill};
use a2a::server::{
    AgentExecutor, Caller, CancelContext, EventSink, RequestContext, ResumeContext, SinkError,
};
use a2a::store::StoredTask;
use a2a::types::{Message, Part, Role, StreamEvent, Task, TaskId, TaskState, Timestamp};
use orchestrator_core::access::{Actor, Origin};
use orchestrator_core::engine::{Answer, Engine, RunControl};
use orchestrator_core::workflow::Workflow;
pub use route::{WorkflowMatch, inputs_from, match_workflow};

/// Where an upstream task's conversation stands.
enum Conversation {
    /// Asked which workflow to run.
    Choosing,
    /// Asked for inputs of this workflow; what was given so far.
    Inputs {
        workflow: Arc<Workflow>,
        given: Map<String, Value>,
    },
    /// A run is going on: its control reads its detail. `asks_again` while a resumed
    /// run has yet to ask again the questions its task waited on (answers wait for it).
    Running {
        control: RunControl,
        asks_again: bool,
    },
}

/// A run at a glance, for a list: its workflow, who started it, and its parent run.
pub(super) struct RunSummary {
    pub workflow: String,
    pub started_by: Option<String>,
    pub parent: Option<orchestrator_core::engine::ParentRun>,
}

/// The orchestrator's agent. Cheap to clone.
#[derive(Clone)]
pub struct Orchestrator {
    inner: Arc<Inner>,
}

struct Inner {
    /// The loaded workflows, replaced whole when the files change (a run keeps the
    /// version it started with).
    workflows: std::sync::RwLock<Arc<Vec<Arc<Workflow>>>>,
    engine: Engine,
    llm: Option<Llm>,
    // A std mutex: only map lookups and inserts under it, never an await.
    tasks: Mutex<HashMap<TaskId, Conversation>>,
    /// Told when a run is registered in `tasks` (a resumed run, after a restart).
    registered: tokio::sync::Notify,
    /// On whose behalf each run calls its agents (shared with the connector).
    behalf: Arc<crate::connect::behalf::OnBehalf>,
}

impl Orchestrator {
    /// With `llm`, free-text requests are routed and their inputs extracted by it.
    pub fn new(workflows: Vec<Arc<Workflow>>, engine: Engine, llm: Option<Llm>) -> Self {
        Self {
            inner: Arc::new(Inner {
                workflows: std::sync::RwLock::new(Arc::new(workflows)),
                engine,
                llm,
                tasks: Mutex::new(HashMap::new()),
                registered: tokio::sync::Notify::new(),
                behalf: Default::default(),
            }),
        }
    }

    /// Records on whose behalf each run calls in `behalf` (the connector's). Call
    /// before the orchestrator is cloned.
    pub fn with_on_behalf(mut self, behalf: Arc<crate::connect::behalf::OnBehalf>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.behalf = behalf;
        }
        self
    }

    /// Names each agent's location (`name` → URL), for the run detail's `agentUrl`.
    pub fn with_agent_urls(self, urls: HashMap<String, String>) -> Self {
        self.replace_agent_urls(urls);
        self
    }

    /// Takes `urls` in place of the agents' locations known (after a reload).
    pub fn replace_agent_urls(&self, urls: HashMap<String, String>) {
        self.inner.engine.set_agent_locations(urls);
    }

    /// The card's skills: one per workflow.
    pub fn skills(&self) -> Vec<AgentSkill> {
        self.workflows()
            .iter()
            .map(|w| AgentSkill {
                examples: w.examples.clone(),
                input_modes: vec!["text/plain".into(), "application/json".into()],
                output_modes: vec!["text/plain".into(), "application/json".into()],
                ..AgentSkill::new(w.id.to_string(), &w.name, &w.description, w.tags.clone())
            })
            .collect()
    }

    /// The workflows loaded now.
    pub fn workflows(&self) -> Arc<Vec<Arc<Workflow>>> {
        self.inner
            .workflows
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The workflow of the run task `task_id` holds, who started it, and the parent run
    /// whose workflow step started it: from the run this process holds, else as the run
    /// was stored.
    pub(super) async fn run_summary(&self, task_id: &TaskId) -> Option<RunSummary> {
        let live = match self.tasks().get(task_id) {
            Some(Conversation::Running { control, .. }) => Some(control.clone()),
            _ => None,
        };
        if let Some(control) = live {
            return Some(control.read(|told| {
                let d = told.detail();
                RunSummary {
                    workflow: d.workflow.clone(),
                    started_by: d.started_by.as_ref().map(|p| p.name.clone()),
                    parent: d.parent.clone(),
                }
            }));
        }
        let saved = self.inner.engine.saved_run(task_id.as_str()).await.ok()??;
        let h = saved.header;
        Some(RunSummary {
            workflow: h.workflow_id,
            started_by: h.initiator.map(|a| a.name),
            parent: h.parent,
        })
    }

    /// The workflow loaded now whose id is `id`.
    pub fn workflow(&self, id: &str) -> Option<Arc<Workflow>> {
        self.workflows()
            .iter()
            .find(|w| w.id.as_str() == id)
            .cloned()
    }

    /// The currency runs' costs are shown in, if the prices name one.
    pub fn currency(&self) -> Option<&str> {
        self.inner.engine.currency()
    }

    /// Takes `workflows` in place of those loaded: new runs start on them; runs going
    /// on keep the version they started with.
    pub fn replace_workflows(&self, workflows: Vec<Arc<Workflow>>) {
        *self
            .inner
            .workflows
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Arc::new(workflows);
    }

    /// The skills of the workflows any caller may start (no `allow`).
    pub fn public_skills(&self) -> Vec<AgentSkill> {
        self.skills()
            .into_iter()
            .zip(self.workflows().iter())
            .filter(|(_, w)| w.allow.is_empty())
            .map(|(s, _)| s)
            .collect()
    }

    /// The skills with each workflow's steps and the agents behind them, for the
    /// authenticated extended card.
    pub fn detailed_skills(&self) -> Vec<AgentSkill> {
        let mut skills = self.skills();
        for (skill, w) in skills.iter_mut().zip(self.workflows().iter()) {
            let steps: Vec<String> = w
                .steps
                .iter()
                .map(|s| match &s.kind {
                    orchestrator_core::workflow::StepKind::Agent { target, .. } => {
                        format!("{} ({target})", s.id)
                    }
                    other => format!("{} ({})", s.id, other.name()),
                })
                .collect();
            skill.description = format!("{}\n\nSteps: {}.", skill.description, steps.join(", "));
        }
        skills
    }

    /// Starts a run of `workflow` for the request of `ctx`, recording who started it.
    /// Not async, so that nothing of it stays in the execute future.
    fn start_run(
        &self,
        ctx: &RequestContext,
        workflow: &Arc<Workflow>,
        inputs: Map<String, Value>,
    ) -> Result<relay::Relayed, RpcError> {
        let by = actor_of(&ctx.caller);
        // Started by another run's workflow step: linked to it, and no deeper than allowed.
        let parent =
            (ctx.message.metadata.as_ref()).and_then(|m| crate::connect::child::parent_of(m));
        if let Some(p) = &parent
            && p.depth > orchestrator_core::workflow::MAX_DEPTH
        {
            return Err(RpcError::invalid_params(
                "message.metadata",
                format!(
                    "the run would be {} workflows deep; at most {} may be",
                    p.depth,
                    orchestrator_core::workflow::MAX_DEPTH
                ),
            ));
        }
        // Before the run starts: its first step may call an agent at once.
        self.calls_on_behalf_of(
            ctx.task_id.as_str(),
            &ctx.caller,
            parent.as_ref().map_or(0, |p| p.depth),
        );
        // Within what the caller's own run has left, when it says (an orchestrator
        // above this one).
        let mut bounds = (ctx.message.metadata.as_ref())
            .map(|m| crate::connect::bounds::read(m))
            .unwrap_or_default();
        // A gRPC call's own deadline (`grpc-timeout`) holds the run too.
        if let Some(d) = ctx.caller.deadline() {
            let left = d.saturating_duration_since(std::time::Instant::now());
            bounds.within = Some(bounds.within.map_or(left, |w| w.min(left)));
        }
        let held = crate::connect::bounds::within(workflow, &bounds);
        let run = self
            .inner
            .engine
            .start_by(
                held,
                &inputs,
                ctx.task_id.as_str().to_owned(),
                Origin {
                    parent,
                    ..origin_of(&ctx.caller)
                },
            )
            .map_err(|p| {
                self.inner.behalf.end(ctx.task_id.as_str());
                RpcError::invalid_params("message", p.join("; "))
            })?;
        let meter = Box::new(meter::RunMeter::started(workflow.id.as_str()));
        if let Some(by) = &by {
            audit::action("started", by, ctx.task_id.as_str(), None);
        }
        Ok(relay::Relayed::started(run, meter))
    }

    /// The detail of a run this server does not hold, as its steps are saved; none when
    /// the task has no saved run or it cannot be read (the task is then shown as
    /// stored).
    async fn stored_detail(&self, task_id: &str) -> Option<detail::RunDetail> {
        let saved = match self.inner.engine.saved_run(task_id).await {
            Ok(saved) => saved?,
            Err(e) => {
                tracing::debug!(task_id, error = %e, "reading a run to describe its task failed");
                return None;
            }
        };
        // Quietly: this runs at every read of the task.
        let (workflow, _) = self.stored_version(&saved.header).ok()?;
        Some(self.inner.engine.saved_detail(&workflow, &saved))
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Conversation>> {
        self.inner.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The workflow version a stored run started with: the loaded one when unchanged
    /// (`Ok(.., true)`), else the run's own copy of the file (the file changed or went
    /// away since), or that copy's problems when it no longer loads.
    fn stored_version(
        &self,
        h: &orchestrator_core::engine::RunHeader,
    ) -> Result<(Arc<Workflow>, bool), Vec<orchestrator_core::config::Diagnostic>> {
        let current = self
            .workflows()
            .iter()
            .find(|w| w.id.as_str() == h.workflow_id && w.hash == h.workflow_hash)
            .cloned();
        if let Some(w) = current {
            return Ok((w, true));
        }
        let (w, diags) = orchestrator_core::workflow::load_str(
            &h.workflow_file,
            &h.workflow_source,
            orchestrator_core::workflow::Options::default(),
        );
        w.map(|w| (Arc::new(w), false)).ok_or(diags)
    }

    /// [`Self::stored_version`] for a run about to go on, saying which it is.
    fn version_of(
        &self,
        h: &orchestrator_core::engine::RunHeader,
    ) -> Result<Arc<Workflow>, RpcError> {
        match self.stored_version(h) {
            Ok((w, true)) => Ok(w),
            Ok((w, false)) => {
                tracing::info!(run_id = %h.run_id, workflow = %h.workflow_id, "the workflow changed since this run started; using its original version");
                Ok(w)
            }
            Err(diags) => {
                let why: Vec<String> = diags.iter().map(ToString::to_string).collect();
                tracing::warn!(run_id = %h.run_id, workflow = %h.workflow_id, problems = %why.join("; "), "the workflow version this run started with no longer loads");
                Err(RpcError::internal(format!(
                    "the version of workflow `{}` this run started with no longer loads",
                    h.workflow_id
                )))
            }
        }
    }
}

/// A task's event not taken: the cause is logged by the conversion, not sent.
fn sink_error(e: SinkError) -> RpcError {
    RpcError::from(e)
}

/// An agent message with text and, optionally, a data part.
fn agent_message(text: &str, data: Option<Value>) -> Message {
    let mut parts = vec![Part::text(text)];
    if let Some(Value::Object(d)) = data {
        parts.push(Part::data(d));
    }
    Message::new(Role::Agent, parts)
}

/// Sends a status update with metadata.
async fn status(
    events: &EventSink,
    state: TaskState,
    message: Option<Message>,
    metadata: Option<Map<String, Value>>,
) -> Result<(), RpcError> {
    events
        .send(status_event(
            events,
            state,
            message,
            metadata,
            Timestamp::now(),
        ))
        .await
        .map_err(sink_error)
}

/// A status update for the task of `events`, with metadata, stamped `at`.
fn status_event(
    events: &EventSink,
    state: TaskState,
    message: Option<Message>,
    metadata: Option<Map<String, Value>>,
    at: Timestamp,
) -> StreamEvent {
    let mut update = events.status_update_at(state, message, at);
    update.metadata = metadata.map(Into::into);
    StreamEvent::StatusUpdate(update)
}

/// The answer a message carries (its text and its data parts merged), from `by`.
fn answer_of(message: &Message, by: Option<Actor>) -> Answer {
    let text = message.text();
    let mut data = Map::new();
    for d in message.parts.iter().filter_map(Part::as_object) {
        data.extend(d.clone());
    }
    Answer {
        text: (!text.trim().is_empty()).then_some(text),
        data: (!data.is_empty()).then_some(data),
        by,
    }
}

/// Who sent a request, in the engine's terms.
fn actor_of(caller: &Caller) -> Option<Actor> {
    caller.principal().map(|p| crate::auth::actor(p))
}

impl Orchestrator {
    /// Run `run_id`'s agents are called on behalf of `caller`: with its token when a
    /// verifier vouched for it, else with the orchestrator's own rights.
    /// Its child runs are started as `caller`, `depth` runs deep.
    fn calls_on_behalf_of(&self, run_id: &str, caller: &Caller, depth: usize) {
        use crate::connect::behalf::{Acting, Subject};
        let subject = match caller.principal().and_then(|p| p.token.clone()) {
            Some(token) => Subject::Token(token),
            None => Subject::Service,
        };
        self.inner.behalf.start_as(
            run_id,
            Acting {
                subject: Some(subject),
                caller: caller.clone(),
                depth,
            },
        );
    }
}

/// Who starts a run, where, in the engine's terms.
fn origin_of(caller: &Caller) -> Origin {
    Origin {
        initiator: actor_of(caller),
        tenant: caller.tenant().map(str::to_owned),
        retry_of: None,
        parent: None,
    }
}

impl AgentExecutor for Orchestrator {
    // The execute future lives as long as the upstream task and is as large as its
    // largest state: everything but following the run (routing, the model, questions,
    // answers, relaying one event) is boxed, so it holds little more than the wait.
    // Not an `async fn`, which would keep `ctx` twice (as passed and as bound).
    #[allow(clippy::manual_async_fn)] // see above: an async fn would hold its arguments twice
    fn execute(
        &self,
        ctx: RequestContext,
        events: EventSink,
    ) -> impl std::future::Future<Output = Result<(), RpcError>> + Send {
        async move {
            // A new task that retries a run.
            if ctx.task.is_none()
                && let Some((of, from)) = retry::retry_request(&ctx)
            {
                return Box::pin(self.retry(&ctx, &events, of, from)).await;
            }
            let prior = {
                let mut tasks = self.tasks();
                match tasks.get(&ctx.task_id) {
                    Some(Conversation::Running {
                        control,
                        asks_again: false,
                    }) => Some(Err(control.clone())),
                    // A resumed run asking again: the answer waits below.
                    Some(Conversation::Running { .. }) => None,
                    Some(_) => tasks.remove(&ctx.task_id).map(Ok),
                    None => None,
                }
            };
            let prior = match (prior, &ctx.task) {
                // A message on a task whose run is being resumed after a restart: wait for
                // the run to be back rather than take the message for a new request.
                (None, Some(_)) => Box::pin(self.resumed_run(&ctx.task_id)).await.map(Err),
                (p, _) => p,
            };
            // After a restart the conversation is gone from memory, not from the task: its
            // history says which workflow was chosen and what was given.
            let prior = match (prior, &ctx.task) {
                (None, Some(task)) => self.conversation_in_history(task).map(Ok),
                (p, _) => p,
            };
            let (workflow, mut given) = match prior {
                Some(Err(control)) => {
                    return Box::pin(self.answer(&ctx, &events, control)).await;
                }
                Some(Ok(Conversation::Inputs { workflow, given })) => (workflow, given),
                Some(Ok(_)) | None => {
                    match Box::pin(self.route(&ctx.message, ctx.metadata.as_ref())).await {
                        WorkflowMatch::Found(w) => (w, Map::new()),
                        WorkflowMatch::Unclear {
                            mut candidates,
                            reason,
                        } => {
                            // Only what the caller may start is offered.
                            candidates.retain(|w| access::may_start(w, &ctx.caller));
                            let list: Vec<String> = candidates
                                .iter()
                                .map(|w| format!("- {} ({}): {}", w.id, w.name, w.description))
                                .collect();
                            let data = json!({ "workflows": candidates.iter().map(|w| json!({
                            "id": w.id.as_str(), "name": w.name, "description": w.description, "inputSchema": w.input_schema(),
                        })).collect::<Vec<_>>() });
                            let text = format!(
                                "{reason}. Which workflow should I run? Answer with its id:\n{}",
                                list.join("\n")
                            );
                            return Box::pin(self.ask(
                                &events,
                                Conversation::Choosing,
                                &text,
                                data,
                            ))
                            .await;
                        }
                    }
                }
            };
            if !access::may_start(&workflow, &ctx.caller) {
                return Err(access::start_refused("start", &workflow, &ctx.caller));
            }
            given.extend(Box::pin(self.extracted(&ctx.message, &workflow)).await);
            given.extend(inputs_from(&ctx.message, &workflow));
            let inputs = match workflow.check_inputs(&given) {
                Ok(i) => i,
                Err(problems) => {
                    let text = format!(
                        "To run `{}` I need: {}. Reply with `name: value` lines or a data part.",
                        workflow.id,
                        problems.join("; ")
                    );
                    let data = json!({ "workflow": workflow.id.as_str(), "problems": problems, "inputSchema": workflow.input_schema() });
                    // Unknown keys would fail every later check: keep only declared inputs.
                    given.retain(|k, _| workflow.inputs.iter().any(|i| &i.name == k));
                    return Box::pin(self.ask(
                        &events,
                        Conversation::Inputs { workflow, given },
                        &text,
                        data,
                    ))
                    .await;
                }
            };
            let relayed = self.start_run(&ctx, &workflow, inputs)?;
            self.follow(
                &ctx.task_id,
                (&ctx.cancel, &ctx.shutdown),
                &events,
                &workflow,
                relayed,
            )
            .await
        }
    }

    async fn resume(&self, ctx: ResumeContext, events: EventSink) -> Result<(), RpcError> {
        let task = ctx.task;
        // A store that fails for a reason that may pass is asked again: it never ends
        // the run (a server that stops meanwhile leaves the task for the next one).
        let mut waits = backoff::STORE.waits();
        let saved = loop {
            match self.inner.engine.saved_run(task.id.as_str()).await {
                Ok(saved) => break saved,
                Err(e) if e.is_transient() => {
                    tracing::warn!(task_id = %task.id, error = %e, "reading the task's run failed; trying again");
                    let wait = waits.next().unwrap_or(backoff::STORE.max);
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = ctx.shutdown.cancelled() => return Ok(()),
                    }
                }
                Err(e) => {
                    tracing::warn!(task_id = %task.id, error = %e, "reading the task's run failed");
                    return Err(RpcError::internal("the run store failed"));
                }
            }
        };
        let Some(saved) = saved else {
            // No run was started: the task was choosing a workflow or giving inputs, and
            // its next message starts over; unless it was being worked on, which is lost.
            if matches!(task.state(), TaskState::Submitted | TaskState::Working) {
                events
                    .fail("the orchestrator restarted before this task's run was saved; send the message again")
                    .await
                    .map_err(sink_error)?;
            }
            return Ok(());
        };
        let h = &saved.header;
        let workflow = self.version_of(h)?;
        tracing::info!(task_id = %task.id, workflow = %workflow.id, "resuming a run");
        // A run a signed-in user started lost their token with the process that
        // started it; one a static credential (or nobody) started goes on as before.
        // Its child runs are started as its initiator, as its record names them.
        let lost = h.initiator.as_ref().is_some_and(|a| a.id.contains('#'));
        let caller = match &h.initiator {
            Some(a) => Caller::known(Arc::new(crate::auth::principal_of(a))),
            None => Caller::anonymous(),
        }
        .in_tenant(h.tenant.as_deref(), &crate::auth::ByRole)
        .unwrap_or_else(|_| Caller::anonymous());
        self.inner.behalf.start_as(
            task.id.as_str(),
            crate::connect::behalf::Acting {
                subject: (!lost).then_some(crate::connect::behalf::Subject::Service),
                caller,
                depth: h.parent.as_ref().map_or(0, |p| p.depth),
            },
        );
        let run = self.inner.engine.resume(workflow.clone(), saved);
        let meter = Box::new(meter::RunMeter::resumed(workflow.id.as_str()));
        let relayed = relay::Relayed {
            run,
            meter,
            asks_again: task.state() == TaskState::InputRequired,
        };
        self.follow(
            &TaskId::new(&task.id),
            (&ctx.cancel, &ctx.shutdown),
            &events,
            &workflow,
            relayed,
        )
        .await
    }

    fn admit(&self, task: &StoredTask, message: &Message, caller: &Caller) -> Result<(), RpcError> {
        access::admit(task, message, caller)
    }

    fn tailor_extended_card(&self, card: &mut AgentCard, caller: &Caller) {
        access::tailor(card, &self.workflows(), caller);
    }

    /// A running run's detail as it stands now: the status updates carry it only when
    /// the run itself moves (it starts, waits, ends) and on questions, since a copy with
    /// every step's move would cost a large fan-out its square. A run this server does
    /// not hold (another replica runs it, or none does yet after a crash) is described
    /// as its saved steps stand, as the replica that takes it over would resume it.
    async fn describe(&self, task: &mut Task) {
        let ended = task.state().is_terminal();
        let live = match self.tasks().get(task.id.as_str()) {
            Some(Conversation::Running { control, .. }) => Some(control.read(|told| {
                let d = told.detail();
                if d.state.is_terminal() && !ended {
                    // The run's end is told before the task's end is stored: until it
                    // is, the run reads as going on, as the task does (a client never
                    // sees a working task with an ended run).
                    let mut going = d.clone();
                    going.state = orchestrator_core::engine::RunState::Working;
                    going.ended_at = None;
                    going.to_value()
                } else {
                    d.to_value()
                }
            })),
            _ => None,
        };
        let detail = match live {
            Some(detail) => detail,
            // A run waiting for its client (or ended) said all of it with that move.
            None if matches!(task.state(), TaskState::Working | TaskState::Submitted) => {
                match self.stored_detail(task.id.as_str()).await {
                    Some(detail) => detail.to_value(),
                    None => return,
                }
            }
            None => return,
        };
        task.metadata
            .get_or_insert_with(Default::default)
            .insert(detail::RUN_KEY.to_owned(), detail);
    }

    async fn cancel(&self, ctx: CancelContext, events: EventSink) -> Result<(), RpcError> {
        let by = actor_of(&ctx.caller);
        if let Some(by) = &by {
            audit::action("canceled", by, ctx.task.id.as_str(), None);
        }
        // The guard ends with this block: nothing below may run while it is held.
        let control = {
            let tasks = self.tasks();
            match tasks.get(ctx.task.id.as_str()) {
                Some(Conversation::Running { control, .. }) => Some(control.clone()),
                _ => None,
            }
        };
        match control {
            // The relay reports `canceled` once the run has canceled its steps.
            // The run's end carries who canceled it in its detail.
            Some(control) => {
                control.cancel_by(by.as_ref());
                Ok(())
            }
            None => events
                .status(TaskState::Canceled, None)
                .await
                .map_err(sink_error),
        }
    }
}

/// The workflow `toml` defines, for the host's unit tests; panics with its diagnostics.
#[cfg(test)]
fn test_workflow(toml: &str) -> Workflow {
    let (w, diags) = orchestrator_core::workflow::load_str(
        "w.toml",
        toml,
        orchestrator_core::workflow::Options::default(),
    );
    w.unwrap_or_else(|| panic!("{diags:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::v0_3::ContextId;
    use orchestrator_core::engine::testing::Silent;
    use tokio_util::sync::CancellationToken;

    /// Bytes of the execute future, which every upstream task holds while its run goes
    /// on: everything but following the run is boxed and it is an `async move` block,
    /// not an `async fn`. Fails when a change undoes that. (1,400: v1.0's messages hold
    /// a status's message inline, and a status update is 248 bytes where v0.3's was 176.)
    const EXECUTE_FUTURE_MAX: usize = 1_400;

    #[tokio::test]
    async fn the_execute_future_stays_small() {
        let engine = Engine::new(
            Arc::new(Silent),
            orchestrator_core::engine::EngineOptions::default(),
        );
        let orchestrator = Orchestrator::new(Vec::new(), engine, None);
        let message = Message::user_text("hello");
        let ctx = RequestContext {
            task_id: TaskId::new("t"),
            context_id: ContextId::new("c"),
            message: message.clone(),
            task: None,
            configuration: None,
            metadata: None,
            caller: a2a::server::Caller::anonymous(),
            cancel: CancellationToken::new(),
            shutdown: CancellationToken::new(),
        };
        let events = EventSink::detached(message);
        let size = std::mem::size_of_val(&orchestrator.execute(ctx, events));
        eprintln!("execute future {size} B");
        assert!(
            size <= EXECUTE_FUTURE_MAX,
            "the orchestrator's execute future grew to {size} bytes (bound {EXECUTE_FUTURE_MAX})"
        );
    }
}

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

mod route;
pub mod serve;
pub mod settings;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::engine::{Answer, Engine, QuestionKind, RunControl, RunEvent, RunHandle, RunState};
use crate::llm::{Choice, Llm};
use crate::protocol::RpcError;
use crate::protocol::server::{
    AgentExecutor, CancelContext, EventSink, RequestContext, ResumeContext,
};
use crate::protocol::server::{Queued, SinkError};
use crate::protocol::types::*;
use crate::workflow::Workflow;
pub use route::{Route, inputs_from, route};
use tokio_util::sync::CancellationToken;

/// Where an upstream task's conversation stands.
enum Conversation {
    /// Asked which workflow to run.
    Choosing,
    /// Asked for inputs of this workflow; what was given so far.
    Inputs {
        workflow: Arc<Workflow>,
        given: Map<String, Value>,
    },
    /// A run is going on.
    Running {
        control: RunControl,
        view: Arc<Mutex<View>>,
    },
}

/// What the relay knows of a run, for answering follow-up messages.
#[derive(Default)]
struct View {
    state: Option<RunState>,
    /// (step, item, prompt) of each pending question.
    questions: Vec<(String, Option<usize>, String)>,
}

/// The orchestrator's agent. Cheap to clone.
#[derive(Clone)]
pub struct Orchestrator {
    inner: Arc<Inner>,
}

struct Inner {
    workflows: Vec<Arc<Workflow>>,
    engine: Engine,
    llm: Option<Llm>,
    // A std mutex: only map lookups and inserts under it, never an await.
    tasks: Mutex<HashMap<TaskId, Conversation>>,
    /// Told when a run is registered in `tasks` (a resumed run, after a restart).
    registered: tokio::sync::Notify,
}

impl Orchestrator {
    /// With `llm`, free-text requests are routed and their inputs extracted by it.
    pub fn new(workflows: Vec<Arc<Workflow>>, engine: Engine, llm: Option<Llm>) -> Self {
        Self {
            inner: Arc::new(Inner {
                workflows,
                engine,
                llm,
                tasks: Mutex::new(HashMap::new()),
                registered: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The card's skills: one per workflow.
    pub fn skills(&self) -> Vec<AgentSkill> {
        self.inner
            .workflows
            .iter()
            .map(|w| AgentSkill {
                id: w.id.to_string(),
                name: w.name.clone(),
                description: w.description.clone(),
                tags: w.tags.clone(),
                examples: (!w.examples.is_empty()).then(|| w.examples.clone()),
                input_modes: Some(vec!["text/plain".into(), "application/json".into()]),
                output_modes: Some(vec!["text/plain".into(), "application/json".into()]),
                security: None,
            })
            .collect()
    }

    /// The skills with each workflow's steps and the agents behind them, for the
    /// authenticated extended card.
    pub fn detailed_skills(&self) -> Vec<AgentSkill> {
        let mut skills = self.skills();
        for (skill, w) in skills.iter_mut().zip(&self.inner.workflows) {
            let steps: Vec<String> = w
                .steps
                .iter()
                .map(|s| match &s.kind {
                    crate::workflow::StepKind::Agent { target, .. } => {
                        format!("{} ({target})", s.id)
                    }
                    other => format!("{} ({})", s.id, other.name()),
                })
                .collect();
            skill.description = format!("{}\n\nSteps: {}.", skill.description, steps.join(", "));
        }
        skills
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Conversation>> {
        self.inner.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn sink_error(e: crate::protocol::server::SinkError) -> RpcError {
    RpcError::internal(e.to_string())
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
        .send(status_event(events, state, message, metadata))
        .await
        .map_err(sink_error)
}

/// A status update for the task of `events`, with metadata.
fn status_event(
    events: &EventSink,
    state: TaskState,
    message: Option<Message>,
    metadata: Option<Map<String, Value>>,
) -> StreamEvent {
    let mut update = events.status_update(state, message);
    update.metadata = metadata;
    StreamEvent::StatusUpdate(update)
}

/// The answer a message carries: its text and its data parts merged.
fn answer_of(message: &Message) -> Answer {
    let text = message.text();
    let mut data = Map::new();
    for p in &message.parts {
        if let Part::Data(d) = p {
            data.extend(d.data.clone());
        }
    }
    Answer {
        text: (!text.trim().is_empty()).then_some(text),
        data: (!data.is_empty()).then_some(data),
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
            let prior = {
                let mut tasks = self.tasks();
                match tasks.get(&ctx.task_id) {
                    Some(Conversation::Running { control, view }) => {
                        Some(Err((control.clone(), view.clone())))
                    }
                    Some(_) => tasks.remove(&ctx.task_id).map(Ok),
                    None => None,
                }
            };
            let prior = match prior {
                // A message on a task whose run is being resumed after a restart: wait for
                // the run to be back rather than take the message for a new request.
                None if ctx.task.is_some() => {
                    Box::pin(self.resumed_run(&ctx.task_id)).await.map(Err)
                }
                p => p,
            };
            // After a restart the conversation is gone from memory, not from the task: its
            // history says which workflow was chosen and what was given.
            let prior = match (prior, &ctx.task) {
                (None, Some(task)) => self.conversation_in_history(task).map(Ok),
                (p, _) => p,
            };
            let (workflow, mut given) = match prior {
                Some(Err((control, view))) => {
                    return Box::pin(self.answer(&ctx, &events, control, view)).await;
                }
                Some(Ok(Conversation::Inputs { workflow, given })) => (workflow, given),
                Some(Ok(_)) | None => {
                    match Box::pin(self.route(&ctx.message, ctx.metadata.as_ref())).await {
                        Route::Found(w) => (w, Map::new()),
                        Route::Unclear { candidates, reason } => {
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
            let run = self
                .inner
                .engine
                .start(workflow.clone(), &inputs, ctx.task_id.to_string())
                .map_err(|p| RpcError::invalid_params("message", p.join("; ")))?;
            self.follow(&ctx.task_id, &ctx.cancel, &events, &workflow, run)
                .await
        }
    }

    async fn resume(&self, ctx: ResumeContext, events: EventSink) -> Result<(), RpcError> {
        let task = ctx.task;
        let saved = self
            .inner
            .engine
            .saved_run(task.id.as_str())
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?;
        let Some(saved) = saved else {
            // No run was started: the task was choosing a workflow or giving inputs, and
            // its next message starts over; unless it was being worked on, which is lost.
            if matches!(task.status.state, TaskState::Submitted | TaskState::Working) {
                events
                    .fail("the orchestrator restarted before this task's run was saved; send the message again")
                    .await
                    .map_err(sink_error)?;
            }
            return Ok(());
        };
        let h = &saved.header;
        let current = self
            .inner
            .workflows
            .iter()
            .find(|w| w.id.as_str() == h.workflow_id && w.hash == h.workflow_hash);
        let workflow = match current {
            Some(w) => w.clone(),
            None => {
                // The file changed (or went away) since the run started: the run goes on
                // with the version it started with.
                tracing::info!(task_id = %task.id, workflow = %h.workflow_id, "the workflow changed since this run started; resuming it on its original version");
                let (w, diags) = crate::workflow::load_str(
                    &h.workflow_file,
                    &h.workflow_source,
                    crate::workflow::Options::default(),
                );
                match w {
                    Some(w) => Arc::new(w),
                    None => {
                        let why: Vec<String> = diags.iter().map(ToString::to_string).collect();
                        return Err(RpcError::internal(format!(
                            "the version of workflow `{}` this run started with no longer loads: {}",
                            h.workflow_id,
                            why.join("; ")
                        )));
                    }
                }
            }
        };
        tracing::info!(task_id = %task.id, workflow = %workflow.id, "resuming a run");
        let run = self.inner.engine.resume(workflow.clone(), saved);
        self.follow(&task.id, &ctx.cancel, &events, &workflow, run)
            .await
    }

    async fn cancel(&self, ctx: CancelContext, events: EventSink) -> Result<(), RpcError> {
        // The guard ends with this block: nothing below may run while it is held.
        let control = {
            let tasks = self.tasks();
            match tasks.get(&ctx.task.id) {
                Some(Conversation::Running { control, .. }) => Some(control.clone()),
                _ => None,
            }
        };
        match control {
            // The relay reports `canceled` once the run has canceled its steps.
            Some(control) => {
                control.cancel();
                Ok(())
            }
            None => events
                .status(TaskState::Canceled, None)
                .await
                .map_err(sink_error),
        }
    }
}

impl Orchestrator {
    /// Routes a new message. A message that names its workflow, or a choice of one
    /// workflow, needs no model; otherwise the model chooses, when there is one and the
    /// message has text. A model that fails leaves it to the deterministic match.
    async fn route(&self, message: &Message, request: Option<&Metadata>) -> Route {
        let workflows = &self.inner.workflows;
        let text = match &self.inner.llm {
            Some(_) if workflows.len() > 1 && !route::names_workflow(message, request) => {
                message.text()
            }
            _ => String::new(),
        };
        if let Some(llm) = &self.inner.llm
            && !text.trim().is_empty()
        {
            let choices: Vec<Choice> = workflows
                .iter()
                .map(|w| Choice {
                    id: w.id.to_string(),
                    name: w.name.clone(),
                    description: w.description.clone(),
                    examples: w.examples.clone(),
                })
                .collect();
            match llm.choose(&text, &choices).await {
                Ok(Some(id)) => {
                    if let Some(w) = workflows.iter().find(|w| w.id.as_str() == id) {
                        tracing::debug!(workflow = %id, "the language model chose the workflow");
                        return Route::Found(w.clone());
                    }
                }
                Ok(None) => {
                    return Route::Unclear {
                        candidates: workflows.clone(),
                        reason: "I could not tell which workflow you want".into(),
                    };
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the language model could not route the request; matching its words instead");
                }
            }
        }
        route(workflows, message, request)
    }

    /// The inputs the model reads in the message's text (when there is a model, and the
    /// message is words rather than a data part). Values for unknown inputs and nulls
    /// are dropped; the rest go through the workflow's usual input check, so a wrong
    /// value is asked for again, never passed on. A model that fails gives nothing.
    async fn extracted(&self, message: &Message, workflow: &Workflow) -> Map<String, Value> {
        let Some(llm) = &self.inner.llm else {
            return Map::new();
        };
        let text = message.text();
        let structured = message.parts.iter().any(|p| matches!(p, Part::Data(_)));
        if workflow.inputs.is_empty() || structured || text.trim().is_empty() {
            return Map::new();
        }
        match llm.extract(&text, &workflow.input_schema()).await {
            Ok(values) => values
                .into_iter()
                .filter(|(k, v)| !v.is_null() && workflow.inputs.iter().any(|i| &i.name == k))
                .collect(),
            Err(e) => {
                tracing::warn!(workflow = %workflow.id, error = %e, "the language model could not extract the inputs; asking for what is missing");
                Map::new()
            }
        }
    }

    /// The conversation a task's history shows: the workflow its latest routable user
    /// message names, and the inputs all of them gave.
    fn conversation_in_history(&self, task: &Task) -> Option<Conversation> {
        let users: Vec<&Message> = task
            .history
            .iter()
            .filter(|m| m.role == Role::User)
            .collect();
        let workflow =
            users
                .iter()
                .rev()
                .find_map(|m| match route(&self.inner.workflows, m, None) {
                    Route::Found(w) => Some(w),
                    Route::Unclear { .. } => None,
                })?;
        let mut given = Map::new();
        for m in &users {
            given.extend(inputs_from(m, &workflow));
        }
        given.retain(|k, _| workflow.inputs.iter().any(|i| &i.name == k));
        Some(Conversation::Inputs { workflow, given })
    }

    /// The run of `task_id` once it is registered, if the store has it unfinished (it is
    /// being resumed); waits up to 10 seconds.
    async fn resumed_run(&self, task_id: &TaskId) -> Option<(RunControl, Arc<Mutex<View>>)> {
        let saved = self.inner.engine.saved_run(task_id.as_str()).await.ok()??;
        if saved.end.is_some() {
            return None;
        }
        let until = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let notified = self.inner.registered.notified();
            if let Some(Conversation::Running { control, view }) = self.tasks().get(task_id) {
                return Some((control.clone(), view.clone()));
            }
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return None;
            }
        }
    }

    /// Relays a run's events to the upstream task until the run ends; answers to its
    /// questions reach it through the task's entry in `tasks`.
    async fn follow(
        &self,
        task_id: &TaskId,
        cancel: &CancellationToken,
        events: &EventSink,
        workflow: &Workflow,
        mut run: RunHandle,
    ) -> Result<(), RpcError> {
        let view = Arc::new(Mutex::new(View::default()));
        self.tasks().insert(
            task_id.clone(),
            Conversation::Running {
                control: run.control.clone(),
                view: view.clone(),
            },
        );
        self.inner.registered.notify_waiters();
        let mut canceled = false;
        // Events are queued, not sent one at a time: the task stores those that wait
        // together in one write, so a durable store's commits do not pace the run.
        let mut unsettled: VecDeque<Queued> = VecDeque::new();
        let mut refused = false;
        let mut refuse = |e: SinkError, control: &RunControl| {
            if !std::mem::replace(&mut refused, true) {
                tracing::debug!(error = %e, "the upstream task no longer takes events; canceling the run");
                control.cancel();
            }
        };
        loop {
            let event = tokio::select! {
                e = run.events.recv() => e,
                () = cancel.cancelled(), if !canceled => {
                    canceled = true;
                    run.control.cancel();
                    continue;
                }
            };
            let Some(event) = event else { break };
            let end = matches!(&event, RunEvent::Run { state, .. } if state.is_terminal());
            while let Some(outcome) = unsettled.front_mut().and_then(Queued::try_outcome) {
                unsettled.pop_front();
                if let Err(e) = outcome {
                    refuse(e, &run.control);
                }
            }
            // Boxed: queuing is brief, and inline its future would double what every
            // waiting run's relay holds.
            match Box::pin(events.queue(translate(events, &view, workflow, event))).await {
                Ok(queued) => unsettled.push_back(queued),
                Err(e) => refuse(e, &run.control),
            }
            if end {
                break;
            }
        }
        // Done once every event is stored (or refused).
        for queued in unsettled {
            if let Err(e) = queued.outcome().await {
                refuse(e, &run.control);
            }
        }
        self.tasks().remove(task_id);
        Ok(())
    }

    /// Remembers what the task waits for, and asks the client (input-required).
    async fn ask(
        &self,
        events: &EventSink,
        waiting: Conversation,
        text: &str,
        data: Value,
    ) -> Result<(), RpcError> {
        self.tasks().insert(events.task_id().clone(), waiting);
        status(
            events,
            TaskState::InputRequired,
            Some(agent_message(text, Some(data))),
            None,
        )
        .await
    }

    /// A message on a task whose run is going: an answer to one of its questions.
    async fn answer(
        &self,
        ctx: &RequestContext,
        events: &EventSink,
        control: RunControl,
        view: Arc<Mutex<View>>,
    ) -> Result<(), RpcError> {
        let meta = ctx.message.metadata.as_ref().or(ctx.metadata.as_ref());
        let step = meta.and_then(|m| m.get("step")).and_then(Value::as_str);
        let item = meta
            .and_then(|m| m.get("item"))
            .and_then(Value::as_u64)
            .map(|i| i as usize);
        match control.answer(step, item, answer_of(&ctx.message)).await {
            Ok(()) => {
                let taken = format!(
                    "answer taken{}",
                    step.map(|s| format!(" for step `{s}`")).unwrap_or_default()
                );
                status(
                    events,
                    TaskState::Working,
                    Some(agent_message(&taken, None)),
                    None,
                )
                .await
            }
            Err(e) => {
                // Nothing is lost: the run and its questions stay as they were.
                let (state, pending) = {
                    let v = view.lock().unwrap_or_else(|p| p.into_inner());
                    (
                        v.state,
                        v.questions
                            .iter()
                            .map(|(s, i, p)| pending_json(s, *i, p))
                            .collect::<Vec<_>>(),
                    )
                };
                let text = format!("Your answer was not taken: {e}.");
                let data = Some(json!({ "error": e.to_string(), "pendingQuestions": pending }));
                let st = if state == Some(RunState::InputRequired) {
                    TaskState::InputRequired
                } else {
                    TaskState::Working
                };
                status(events, st, Some(agent_message(&text, data)), None).await
            }
        }
    }
}

fn pending_json(step: &str, item: Option<usize>, prompt: &str) -> Value {
    json!({ "step": step, "item": item, "prompt": prompt })
}

/// Turns one run event into the upstream task's events.
fn translate(
    events: &EventSink,
    view: &Mutex<View>,
    workflow: &Workflow,
    event: RunEvent,
) -> StreamEvent {
    match event {
        RunEvent::Run { state, message } => {
            let pending: Vec<Value> = {
                let mut v = view.lock().unwrap_or_else(|p| p.into_inner());
                v.state = Some(state);
                v.questions
                    .iter()
                    .map(|(s, i, p)| pending_json(s, *i, p))
                    .collect()
            };
            let (st, msg) = match state {
                RunState::Working => (TaskState::Working, None),
                RunState::InputRequired => {
                    let prompts: Vec<String> = pending
                        .iter()
                        .map(|q| {
                            format!(
                                "- {}: {}",
                                q["step"].as_str().unwrap_or(""),
                                q["prompt"].as_str().unwrap_or("")
                            )
                        })
                        .collect();
                    let text = if pending.len() == 1 {
                        pending[0]["prompt"].as_str().unwrap_or("").to_owned()
                    } else {
                        format!(
                            "Several questions are waiting; answer one at a time with metadata {{\"step\": ...}}:\n{}",
                            prompts.join("\n")
                        )
                    };
                    (
                        TaskState::InputRequired,
                        Some(agent_message(
                            &text,
                            Some(json!({ "pendingQuestions": pending })),
                        )),
                    )
                }
                RunState::Completed => (
                    TaskState::Completed,
                    Some(agent_message(
                        &format!("`{}` completed.", workflow.id),
                        None,
                    )),
                ),
                RunState::Failed => (
                    TaskState::Failed,
                    Some(agent_message(
                        message.as_deref().unwrap_or("the run failed"),
                        None,
                    )),
                ),
                RunState::Canceled => (
                    TaskState::Canceled,
                    message.map(|m| agent_message(&m, None)),
                ),
            };
            status_event(events, st, msg, None)
        }
        RunEvent::Step {
            step,
            item,
            state,
            attempt,
            agent,
            task_id,
            message,
        } => {
            let mut meta = Map::new();
            meta.insert("step".into(), json!(step.as_str()));
            meta.insert("item".into(), json!(item));
            meta.insert("state".into(), json!(state.as_str()));
            meta.insert("attempt".into(), json!(attempt));
            meta.insert("agent".into(), json!(agent));
            meta.insert("downstreamTaskId".into(), json!(task_id));
            let label = item.map_or_else(|| format!("`{step}`"), |i| format!("`{step}`[{i}]"));
            let text = match &message {
                Some(m) => format!("{label} {state}: {m}"),
                None => format!("{label} {state}"),
            };
            let st = if view.lock().unwrap_or_else(|p| p.into_inner()).state
                == Some(RunState::InputRequired)
            {
                TaskState::InputRequired
            } else {
                TaskState::Working
            };
            status_event(events, st, Some(agent_message(&text, None)), Some(meta))
        }
        RunEvent::Artifact {
            step,
            item,
            agent,
            chunk,
        } => {
            let id = match item {
                Some(i) => format!("{step}[{i}]/{}", chunk.artifact_id),
                None => format!("{step}/{}", chunk.artifact_id),
            };
            let mut artifact =
                Artifact::new(ArtifactId::new(id), chunk.parts.iter().map(part).collect());
            artifact.name = chunk.name.clone();
            let mut meta = Map::new();
            meta.insert("step".into(), json!(step.as_str()));
            meta.insert("item".into(), json!(item));
            meta.insert("agent".into(), json!(agent));
            meta.insert("artifactId".into(), json!(chunk.artifact_id));
            artifact.metadata = Some(meta);
            events
                .artifact_update(artifact, chunk.append, chunk.last_chunk)
                .into()
        }
        RunEvent::Question {
            step,
            item,
            prompt,
            kind,
        } => {
            let pending: Vec<Value> = {
                let mut v = view.lock().unwrap_or_else(|p| p.into_inner());
                v.questions.push((step.to_string(), item, prompt.clone()));
                v.questions
                    .iter()
                    .map(|(s, i, p)| pending_json(s, *i, p))
                    .collect()
            };
            let mut meta = Map::new();
            meta.insert("pendingQuestions".into(), Value::Array(pending));
            if let QuestionKind::Input { schema } = kind {
                meta.insert("inputSchema".into(), schema);
            }
            status_event(events, TaskState::Working, None, Some(meta))
        }
        RunEvent::Output { text, data } => {
            let mut parts = Vec::new();
            if let Some(t) = text {
                parts.push(Part::text(t));
            }
            if let Some(Value::Object(d)) = data {
                parts.push(Part::data(d));
            } else if let Some(other) = data.filter(|d| !d.is_null()) {
                parts.push(Part::data(Map::from_iter([("value".to_owned(), other)])));
            }
            let artifact =
                Artifact::new(ArtifactId::new("result"), parts).with_name(workflow.name.clone());
            events.artifact_update(artifact, false, true).into()
        }
    }
}

fn part(c: &crate::engine::Content) -> Part {
    use crate::engine::Content;
    match c {
        Content::Text(t) => Part::text(t.clone()),
        Content::Data(d) => Part::data(d.clone()),
        Content::File {
            name,
            mime_type,
            uri,
            bytes,
        } => Part::File(FilePart {
            file: FileContent {
                name: name.clone(),
                mime_type: mime_type.clone(),
                source: match (uri, bytes) {
                    (Some(u), _) => FileSource::Uri(u.clone()),
                    (None, b) => FileSource::Bytes(b.clone().unwrap_or_default()),
                },
            },
            metadata: None,
        }),
    }
}

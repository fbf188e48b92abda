//! The conversation on an upstream task before and between runs: which workflow a
//! message asks for (the rules of `route.rs`, or the model for free text), the inputs it
//! gives (extracted by the model when there is one), what the task waits for after a
//! restart, and questions asked and answered on the task.

use super::relay::{run_metadata, waiting_message};
use super::route::{WorkflowMatch, inputs_from, match_workflow};
use super::{Conversation, Orchestrator, agent_message, answer_of, status};
use crate::llm::Choice;
use a2a::RpcError;
use a2a::server::{EventSink, RequestContext};
use a2a::types::{Message, Metadata, Role, Task, TaskId, TaskState};
use orchestrator_core::engine::{RunControl, RunState, Taken};
use orchestrator_core::workflow::Workflow;
use serde_json::{Map, Value, json};

impl Orchestrator {
    /// Routes a new message. A message that names its workflow, or a choice of one
    /// workflow, needs no model; otherwise the model chooses, when there is one and the
    /// message has text. A model that fails leaves it to the deterministic match.
    pub(super) async fn route(
        &self,
        message: &Message,
        request: Option<&Metadata>,
    ) -> WorkflowMatch {
        let workflows = &*self.workflows();
        let text = match &self.inner.llm {
            Some(_) if workflows.len() > 1 && !super::route::names_workflow(message, request) => {
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
                        return WorkflowMatch::Found(w.clone());
                    }
                }
                Ok(None) => {
                    return WorkflowMatch::Unclear {
                        candidates: workflows.to_vec(),
                        reason: "I could not tell which workflow you want".into(),
                    };
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the language model could not route the request; matching its words instead");
                }
            }
        }
        match_workflow(workflows, message, request)
    }

    /// The inputs the model reads in the message's text (when there is a model, and the
    /// message is words rather than a data part). Values for unknown inputs and nulls
    /// are dropped; the rest go through the workflow's usual input check, so a wrong
    /// value is asked for again, never passed on. A model that fails gives nothing.
    pub(super) async fn extracted(
        &self,
        message: &Message,
        workflow: &Workflow,
    ) -> Map<String, Value> {
        let Some(llm) = &self.inner.llm else {
            return Map::new();
        };
        let text = message.text();
        let structured = message.parts.iter().any(|p| p.as_data().is_some());
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
    pub(super) fn conversation_in_history(&self, task: &Task) -> Option<Conversation> {
        let users: Vec<&Message> = task
            .history
            .iter()
            .filter(|m| m.role() == Role::User)
            .collect();
        let workflow =
            users
                .iter()
                .rev()
                .find_map(|m| match match_workflow(&self.workflows(), m, None) {
                    WorkflowMatch::Found(w) => Some(w),
                    WorkflowMatch::Unclear { .. } => None,
                })?;
        let mut given = Map::new();
        for m in &users {
            given.extend(inputs_from(m, &workflow));
        }
        given.retain(|k, _| workflow.inputs.iter().any(|i| &i.name == k));
        Some(Conversation::Inputs { workflow, given })
    }

    /// The run of `task_id` once it is registered and has asked again what its task
    /// waited on (see `follow`), if the store has it unfinished (it is being resumed);
    /// waits up to 10 seconds.
    pub(super) async fn resumed_run(&self, task_id: &TaskId) -> Option<RunControl> {
        let saved = self.inner.engine.saved_run(task_id.as_str()).await.ok()??;
        if saved.end.is_some() {
            return None;
        }
        let until = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let notified = self.inner.registered.notified();
            if let Some(Conversation::Running {
                control,
                asks_again: false,
            }) = self.tasks().get(task_id)
            {
                return Some(control.clone());
            }
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return None;
            }
        }
    }

    /// Remembers what the task waits for, and asks the client (input-required).
    pub(super) async fn ask(
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
    pub(super) async fn answer(
        &self,
        ctx: &RequestContext,
        events: &EventSink,
        control: RunControl,
    ) -> Result<(), RpcError> {
        let meta = ctx.message.metadata.as_ref().or(ctx.metadata.as_ref());
        let step = meta.and_then(|m| m.get("step")).and_then(Value::as_str);
        let item = meta
            .and_then(|m| m.get("item"))
            .and_then(Value::as_u64)
            .map(|i| i as usize);
        let answer = answer_of(&ctx.message, super::actor_of(&ctx.caller));
        // Until the run says whether it took the answer, the relay does not report the
        // question as waiting (a step moving meanwhile would say `input-required`).
        match control.answer(step, item, answer).await {
            Ok(Taken::Counted { left }) => {
                // An approval towards its quorum: the question waits for the others.
                let (pending, meta) = control.read(|t| {
                    let d = t.detail();
                    (d.pending_questions.clone(), run_metadata(d))
                });
                let text = format!(
                    "Approval counted; {left} more approval{} from someone else needed",
                    if left == 1 { " is" } else { "s are" }
                );
                let mut waiting = waiting_message(&pending);
                waiting
                    .parts
                    .insert(0, a2a::types::Part::text(format!("{text}.\n")));
                status(events, TaskState::InputRequired, Some(waiting), Some(meta)).await
            }
            Ok(Taken::Answered) => {
                // The answered question has left the list; those with answers of their
                // own on the way do not wait either.
                let (remaining, meta) = control.read(|t| {
                    let waiting = t.waiting().cloned().collect::<Vec<_>>();
                    (waiting, run_metadata(t.detail()))
                });
                if !remaining.is_empty() {
                    // Other questions still wait: the task says so, and lists only them.
                    return status(
                        events,
                        TaskState::InputRequired,
                        Some(waiting_message(&remaining)),
                        Some(meta),
                    )
                    .await;
                }
                let taken = format!(
                    "answer taken{}",
                    step.map(|s| format!(" for step `{s}`")).unwrap_or_default()
                );
                status(
                    events,
                    TaskState::Working,
                    Some(agent_message(&taken, None)),
                    Some(meta),
                )
                .await
            }
            Err(e) => {
                // Nothing is lost: the run and its questions stay as they were.
                let (state, pending) = control.read(|t| {
                    let d = t.detail();
                    (d.state, d.pending_questions.clone())
                });
                let text = format!("Your answer was not taken: {e}.");
                let data = Some(json!({ "error": e.to_string(), "pendingQuestions": pending }));
                let st = if state == RunState::InputRequired {
                    TaskState::InputRequired
                } else {
                    TaskState::Working
                };
                status(events, st, Some(agent_message(&text, data)), None).await
            }
        }
    }
}

//! Workflow steps: a workflow of this orchestrator run as a child run — a task of its own
//! on this server, started through the server's transport-free request handler as the
//! parent run's initiator, and followed as any agent's task is (the same
//! `Conversation`): its questions become the parent's, a cancel or a deadline of the
//! parent reaches it, its usage counts in the parent's. Its first message names the
//! workflow and its inputs, the parent (run, step, item), how deep the chain is, and
//! what the parent has left (see [`super::bounds`]).

use std::sync::{Arc, OnceLock};

use a2a::client::A2aClient;
use a2a::server::{Caller, RequestHandler, WeakRequestHandler};
use a2a::types::{CancelTaskRequest, Message, Part, Role, SendMessageRequest, TaskId};
use orchestrator_core::engine::{AgentError, AgentErrorKind, SendRequest, Updates};
use orchestrator_core::workflow::{AgentTarget, CHILD_PREFIX, MAX_DEPTH, child_agent};
use serde_json::{Map, Value, json};

use super::behalf::OnBehalf;
use super::conversation::{Conversation, Streamed, updates};

/// `{ "run": …, "step": …, "item": … }`: the run and step a child run was started by.
pub const PARENT: &str = "a2a_orchestrator.parent";
/// How many runs above a child run started it (1: a client's run did).
pub const DEPTH: &str = "a2a_orchestrator.depth";

/// The server whose workflows the steps run, once it is built. Held weakly: the server
/// holds the engine that holds this.
#[derive(Clone, Default)]
pub struct Children {
    handler: Arc<OnceLock<WeakRequestHandler>>,
}

impl Children {
    /// Workflow steps run their workflows on `handler` (this orchestrator's server).
    pub fn serve_on(&self, handler: RequestHandler) {
        let _ = self.handler.set(handler.downgrade());
    }

    fn client(&self, caller: Caller) -> Result<A2aClient, AgentError> {
        let handler = (self.handler.get())
            .and_then(WeakRequestHandler::upgrade)
            .ok_or_else(|| {
                AgentError::new(
                    AgentErrorKind::Unavailable,
                    "this orchestrator runs no workflows in process (it is not serving)",
                )
            })?;
        Ok(A2aClient::in_process(handler, caller))
    }

    /// Who run `run_id`'s children are started as, and how deep they are.
    fn acting(behalf: &OnBehalf, run_id: &str) -> (Caller, usize) {
        match behalf.acting(run_id) {
            Some(a) => (a.caller, a.depth + 1),
            None => (Caller::anonymous(), 1),
        }
    }

    /// Sends `req` to the child run of workflow `workflow`: a new run, or (with a task)
    /// the answer to its question.
    pub fn send(
        &self,
        behalf: &OnBehalf,
        workflow: &str,
        req: SendRequest,
    ) -> Result<Updates, AgentError> {
        let (mut caller, depth) = Self::acting(behalf, &req.run_id);
        // An answer to the child's question is given as whoever answered it upstream:
        // the child's own rules (approvers, four eyes) judge them.
        if let Some(by) = &req.answered_by {
            let tenant = caller.tenant().map(str::to_owned);
            caller = Caller::known(std::sync::Arc::new(crate::auth::principal_of(by)))
                .in_tenant(tenant.as_deref(), &crate::auth::ByRole)
                .unwrap_or(caller);
        }
        if depth > MAX_DEPTH {
            return Err(AgentError::new(
                AgentErrorKind::Refused,
                format!(
                    "workflow `{workflow}` would run {depth} workflows deep; at most {MAX_DEPTH} may"
                ),
            ));
        }
        let client = self.client(caller)?;
        let agent = child_agent(workflow);
        let answering = req.task_id.is_some();
        let mut parts = Vec::new();
        let mut meta = Map::new();
        if answering {
            if let Some(t) = req.text {
                parts.push(Part::text(t));
            }
            if let Some(d) = req.data {
                parts.push(Part::data(d));
            }
        } else {
            let input = Value::Object(req.data.unwrap_or_default());
            let start = json!({ "workflow": workflow, "input": input });
            if let Value::Object(m) = start {
                parts.push(Part::data(m));
            }
            meta.insert(
                PARENT.into(),
                json!({ "run": req.run_id, "step": req.step.as_str(), "item": req.item }),
            );
            meta.insert(DEPTH.into(), json!(depth));
        }
        if let Some(b) = &req.bounds {
            super::bounds::write(b, &mut meta);
        }
        let mut message = Message::with_id(req.message_id, Role::User, parts);
        message.metadata = Some(meta.into());
        match req.task_id {
            Some(t) => message.task_id = t,
            None => message.context_id = format!("{}:{agent}", req.run_id),
        }
        let conversation = Conversation::in_process(client, agent, answering);
        let phase = Streamed::Send(Box::new(SendMessageRequest::new(message)));
        Ok(Box::pin(updates(conversation, phase)))
    }

    /// Follows child run `task_id` of run `run_id` again (after a restart).
    pub fn attach(
        &self,
        behalf: &OnBehalf,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> Result<Updates, AgentError> {
        let (caller, _) = Self::acting(behalf, run_id);
        let conversation = Conversation::in_process(self.client(caller)?, agent.to_owned(), false);
        let phase = Streamed::Attach(TaskId::new(task_id));
        Ok(Box::pin(updates(conversation, phase)))
    }

    /// Watches child run `task_id` of run `run_id` while it waits for input: a status
    /// once it goes on (answered on its own task, or canceled), and nothing before.
    pub fn watch(
        &self,
        behalf: &OnBehalf,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> Result<Updates, AgentError> {
        let (caller, _) = Self::acting(behalf, run_id);
        let conversation =
            Conversation::in_process(self.client(caller)?, agent.to_owned(), false).watching();
        let phase = Streamed::Attach(TaskId::new(task_id));
        Ok(Box::pin(updates(conversation, phase)))
    }

    /// Cancels child run `task_id` of run `run_id`.
    pub async fn cancel(
        &self,
        behalf: &OnBehalf,
        run_id: &str,
        task_id: &str,
    ) -> Result<(), AgentError> {
        let (caller, _) = Self::acting(behalf, run_id);
        let client = self.client(caller)?;
        client
            .cancel_task(&CancelTaskRequest::new(task_id))
            .await
            .map(|_| ())
            .map_err(super::agent_error)
    }
}

/// The parent a message that starts a child run names (`a2a_orchestrator.parent` and
/// `a2a_orchestrator.depth`), read defensively: none unless both read.
pub fn parent_of(meta: &Map<String, Value>) -> Option<orchestrator_core::engine::ParentRun> {
    let p = meta.get(PARENT)?.as_object()?;
    let text = |k: &str| {
        p.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.len() <= 256)
            .map(str::to_owned)
    };
    Some(orchestrator_core::engine::ParentRun {
        run: text("run")?,
        step: text("step")?,
        item: p.get("item").and_then(Value::as_u64).map(|i| i as usize),
        depth: meta.get(DEPTH)?.as_u64().map(|d| d.min(1 << 16) as usize)?,
    })
}

/// The workflow a request's target names, when it is a child run: a workflow step's
/// first message, or an answer to its child's question (`workflow:<id>`).
pub fn workflow_of(target: &AgentTarget) -> Option<&str> {
    match target {
        AgentTarget::Workflow(w) => Some(w.as_str()),
        AgentTarget::Named(a) => a.as_str().strip_prefix(CHILD_PREFIX),
        AgentTarget::Skill(_) => None,
    }
}

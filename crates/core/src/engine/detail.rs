//! A run's detail as people read it, in typed schemas shared by everything that shows
//! a run: [`StepUpdate`], one step's move, and [`RunDetail`], the whole run at a glance
//! (steps, attempts, agents, questions, audit, times). The engine builds a run's detail,
//! in one place, from the run's events as its reader takes them (and from its saved
//! units when it resumes or is retried); `serve` carries it in the upstream task's
//! metadata, `run --json` and `runs show` print it, the web view draws it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::collections::HashMap;

use super::{Checkpoint, QuestionKind, RunEvent, RunState, StepState, Usage};
use crate::access::Actor;
use crate::workflow::Workflow;

/// The key a [`RunDetail`] goes under in the metadata that carries it (the upstream
/// task's, for `serve`).
pub const RUN_KEY: &str = "run";

/// A step (or fan-out item) moved: its state, which attempt, which agent and which
/// downstream task. JSON keys in camelCase, as A2A's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepUpdate {
    pub step: String,
    /// The fan-out item, for a step over a list.
    pub item: Option<usize>,
    /// As the task states are written on the A2A 0.3 wire (`input-required`), plus
    /// `skipped` and `upstream_failed`.
    #[serde(with = "state_name")]
    pub state: StepState,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The agent that took the step, once one did.
    pub agent: Option<String>,
    /// The agent's task for the step, once it made one.
    pub downstream_task_id: Option<String>,
    /// Why the step ended as it did, or what it is waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StepUpdate {
    /// The update a step event makes; none for other events.
    pub fn of(event: &RunEvent) -> Option<StepUpdate> {
        match event {
            RunEvent::Step {
                step,
                item,
                state,
                attempt,
                agent,
                task_id,
                message,
            } => Some(StepUpdate {
                step: step.as_str().to_owned(),
                item: *item,
                state: *state,
                attempt: *attempt,
                agent: agent.clone(),
                downstream_task_id: task_id.clone(),
                message: message.clone(),
            }),
            _ => None,
        }
    }

    /// As a JSON object (for task metadata): what its `Serialize` writes, built
    /// directly, its strings moved rather than copied (every step's every move is one).
    pub fn into_map(self) -> Map<String, Value> {
        // In the keys' order: each lands at the end of the map's B-tree node, where a
        // key out of order moves every entry after it.
        let text = |s: Option<String>| s.map_or(Value::Null, Value::String);
        let mut map = Map::new();
        map.insert("agent".to_owned(), text(self.agent));
        map.insert("attempt".to_owned(), Value::from(self.attempt));
        map.insert("downstreamTaskId".to_owned(), text(self.downstream_task_id));
        map.insert(
            "item".to_owned(),
            self.item.map_or(Value::Null, Value::from),
        );
        if let Some(message) = self.message {
            map.insert("message".to_owned(), Value::String(message));
        }
        map.insert("state".to_owned(), Value::from(self.state.as_str()));
        map.insert("step".to_owned(), Value::String(self.step));
        map
    }
}

/// A run at a glance: its workflow and version, inputs, state and timings, each step
/// (and fan-out item) with its agent, attempts, timings, downstream task and error, and
/// the questions it waits on. JSON keys in camelCase; times are RFC 3339.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    /// The workflow's id.
    pub workflow: String,
    /// The SHA-256 (hex) of the workflow file the run started with.
    pub workflow_version: String,
    /// The checked inputs (defaults filled in).
    pub inputs: Map<String, Value>,
    #[serde(with = "run_state_name")]
    pub state: RunState,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why the run failed or was canceled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run this one retries (its steps that completed are kept, not run again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
    /// Every step in the workflow's order, each fan-out item after its step.
    pub steps: Vec<StepDetail>,
    /// In the workflow's order of their steps.
    #[serde(default)]
    pub pending_questions: Vec<PendingQuestion>,
    /// Who started the run (on a server that knows its callers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<Person>,
    /// Every human action on the run, oldest first: started, approved, rejected,
    /// answered, canceled, retried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<AuditEntry>,
    /// What its steps used, together (calls, tokens, cost).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub usage: Usage,
    /// The currency its cost is in, when the prices name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// The run whose workflow step started this one, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<crate::engine::ParentRun>,
    /// The child runs its workflow steps started, in the order they started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRun>,
}

/// A child run a workflow step started (its fan-out item or loop pass).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChildRun {
    pub step: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    pub run: String,
}

/// Someone who acted on a run, as the detail names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// The principal's id (`{issuer}#{subject}`, or `token:NAME`).
    pub id: String,
    pub name: String,
}

impl From<&Actor> for Person {
    fn from(a: &Actor) -> Self {
        Person {
            id: a.id.clone(),
            name: a.name.clone(),
        }
    }
}

/// One human action on a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// `started`, `approved`, `rejected`, `answered`, `canceled` or `retried`.
    pub action: String,
    pub by: Person,
    /// When (RFC 3339).
    pub at: String,
    /// The step it concerned, for answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
}

/// One step, or one item of a step over a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepDetail {
    pub step: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    /// The steps it waits for (on a step, not its items).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<String>,
    #[serde(with = "state_name")]
    pub state: StepState,
    /// Attempts made so far (0 before the first).
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Where the agent was found (its card's location in `agents.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why it ended as it did, or what it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What it used: calls to its agent, and the tokens and cost the agent reported
    /// (a fan-out step: its items together).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub usage: Usage,
    /// What each attempt used, in order, when it made more than one.
    #[serde(default, skip_serializing_if = "more_than_one_not")]
    pub usage_by_attempt: Vec<Usage>,
    /// The model its agent says it used (`gen_ai.request.model`), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A question a run waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    pub step: String,
    pub item: Option<usize>,
    pub prompt: String,
    /// `approval` (yes or no), `input` (values for `inputSchema`) or `agent` (a
    /// downstream agent asks).
    pub kind: QuestionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// Who may answer (`group:…`, `sub:…`, `role:…`); none listed: whoever may steer
    /// the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
    /// The run's initiator may not answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub four_eyes: bool,
    /// When it was asked (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_at: Option<String>,
    /// When the wait for its answer ends, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

/// What kind of answer a question wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    Approval,
    Input,
    Agent,
}

impl StepDetail {
    /// A step (or item) not started.
    fn pending(step: String, item: Option<usize>, needs: Vec<String>) -> StepDetail {
        StepDetail {
            step,
            item,
            needs,
            state: StepState::Pending,
            attempts: 0,
            agent: None,
            agent_url: None,
            downstream_task_id: None,
            started_at: None,
            ended_at: None,
            message: None,
            usage: Usage::default(),
            usage_by_attempt: Vec::new(),
            model: None,
        }
    }

    /// As a JSON value: what its `Serialize` writes (see [`RunDetail::to_value`]).
    fn to_value(&self) -> Value {
        let mut map = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        };
        let text = |s: &Option<String>| s.as_deref().map(Value::from);
        // In the keys' order (see `StepUpdate::into_map`).
        put("agent", text(&self.agent));
        put("agentUrl", text(&self.agent_url));
        put("attempts", Some(Value::from(self.attempts)));
        put("downstreamTaskId", text(&self.downstream_task_id));
        put("endedAt", text(&self.ended_at));
        put("item", self.item.map(Value::from));
        put("message", text(&self.message));
        put("model", text(&self.model));
        if !self.needs.is_empty() {
            let needs = self.needs.iter().map(|n| Value::from(n.as_str())).collect();
            put("needs", Some(Value::Array(needs)));
        }
        put("startedAt", text(&self.started_at));
        put("state", Some(Value::from(self.state.as_str())));
        put("step", Some(Value::from(self.step.as_str())));
        put("usage", usage_value(&self.usage));
        if self.usage_by_attempt.len() > 1 {
            put(
                "usageByAttempt",
                serde_json::to_value(&self.usage_by_attempt).ok(),
            );
        }
        Value::Object(map)
    }
}

/// Whether a list of attempts' usage is not worth saying (one attempt, or none).
fn more_than_one_not(v: &[Usage]) -> bool {
    v.len() < 2
}

/// A usage as the detail's JSON holds it; none when nothing was used.
fn usage_value(u: &Usage) -> Option<Value> {
    (!u.is_zero()).then(|| serde_json::to_value(u).unwrap_or(Value::Null))
}

impl RunDetail {
    /// A run of `workflow` starting now: every step pending.
    pub fn new(workflow: &Workflow, inputs: Map<String, Value>, now: String) -> RunDetail {
        RunDetail {
            workflow: workflow.id.as_str().to_owned(),
            workflow_version: workflow.hash.clone(),
            inputs,
            state: RunState::Working,
            started_at: now,
            ended_at: None,
            error: None,
            retry_of: None,
            steps: workflow
                .steps
                .iter()
                .map(|s| {
                    let needs = s.needs.iter().map(ToString::to_string).collect();
                    StepDetail::pending(s.id.as_str().to_owned(), None, needs)
                })
                .collect(),
            pending_questions: Vec::new(),
            started_by: None,
            audit: Vec::new(),
            usage: Usage::default(),
            currency: None,
            parent: None,
            children: Vec::new(),
        }
    }

    /// Records a human action on the run.
    pub fn audited(
        &mut self,
        action: &str,
        by: &Actor,
        at: String,
        step: Option<String>,
        item: Option<usize>,
    ) {
        self.audit.push(AuditEntry {
            action: action.to_owned(),
            by: by.into(),
            at,
            step,
            item,
        });
    }

    /// Records who started the run, and when.
    pub fn started(&mut self, by: &Actor) {
        self.started_by = Some(by.into());
        let at = self.started_at.clone();
        self.audited("started", by, at, None, None);
    }

    /// The detail a task's metadata holds, if it holds one that reads.
    pub fn of_metadata(metadata: Option<&Map<String, Value>>) -> Option<RunDetail> {
        serde_json::from_value(metadata?.get(RUN_KEY)?.clone()).ok()
    }

    /// As a JSON value (for task metadata): what its `Serialize` writes (a test holds the
    /// two together), built directly — serde's way into a `Value` costs more a field,
    /// and a run's end builds one for every step; the questions, the initiator and the
    /// audit trail, rarely there, through serde.
    pub fn to_value(&self) -> Value {
        fn serde<T: Serialize + ?Sized>(v: &T) -> Value {
            serde_json::to_value(v).unwrap_or(Value::Null)
        }
        let mut map = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        };
        let text = |s: &Option<String>| s.as_deref().map(Value::from);
        // In the keys' order (see `StepUpdate::into_map`).
        put(
            "audit",
            (!self.audit.is_empty()).then(|| serde(&self.audit)),
        );
        put(
            "children",
            (!self.children.is_empty()).then(|| serde(&self.children)),
        );
        put("currency", text(&self.currency));
        put("endedAt", text(&self.ended_at));
        put("error", text(&self.error));
        put("inputs", Some(Value::Object(self.inputs.clone())));
        put("parent", self.parent.as_ref().map(serde));
        put("pendingQuestions", Some(serde(&self.pending_questions)));
        put("retryOf", text(&self.retry_of));
        put("startedAt", Some(Value::from(self.started_at.as_str())));
        put("startedBy", self.started_by.as_ref().map(serde));
        put("state", Some(Value::from(run_state_name::name(self.state))));
        let steps = self.steps.iter().map(StepDetail::to_value).collect();
        put("steps", Some(Value::Array(steps)));
        put("usage", usage_value(&self.usage));
        put("workflow", Some(Value::from(self.workflow.as_str())));
        put(
            "workflowVersion",
            Some(Value::from(self.workflow_version.as_str())),
        );
        Value::Object(map)
    }

    /// The step (or item) entry, made when an item is first seen (after its step and
    /// the items before it).
    fn entry(&mut self, step: &str, item: Option<usize>) -> &mut StepDetail {
        let found = self
            .steps
            .iter()
            .position(|s| s.step == step && s.item == item);
        let at = match found {
            Some(i) => i,
            None => {
                let after = self
                    .steps
                    .iter()
                    .rposition(|s| s.step == step && s.item.is_none_or(|i| Some(i) < item))
                    .map_or(self.steps.len(), |i| i + 1);
                let entry = StepDetail::pending(step.to_owned(), item, Vec::new());
                self.steps.insert(after, entry);
                after
            }
        };
        &mut self.steps[at]
    }

    /// Moves the detail on by one run event, at `now`; `agent_url` says where a named
    /// agent lives.
    pub fn apply(
        &mut self,
        event: &RunEvent,
        now: &str,
        agent_url: impl Fn(&str) -> Option<String>,
    ) {
        match event {
            RunEvent::Run { state, message } => {
                self.state = *state;
                if state.is_terminal() {
                    self.ended_at.get_or_insert_with(|| now.to_owned());
                    self.pending_questions.clear();
                    if *state != RunState::Completed {
                        self.error.clone_from(message);
                    }
                }
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
                if !matches!(state, StepState::InputRequired | StepState::AuthRequired) {
                    self.pending_questions
                        .retain(|q| !(q.step == step.as_str() && q.item == *item));
                }
                let e = self.entry(step.as_str(), *item);
                e.state = *state;
                e.attempts = e.attempts.max(*attempt);
                if agent.is_some() && *agent != e.agent {
                    e.agent_url = agent.as_deref().and_then(&agent_url);
                    e.agent.clone_from(agent);
                }
                if task_id.is_some() {
                    e.downstream_task_id.clone_from(task_id);
                }
                e.message.clone_from(message);
                let started = *state != StepState::Pending && *state != StepState::Skipped;
                if started {
                    e.started_at.get_or_insert_with(|| now.to_owned());
                }
                if state.is_finished() {
                    e.ended_at = Some(now.to_owned());
                } else {
                    e.ended_at = None;
                }
                // A workflow step's task is a child run of this orchestrator.
                if let (Some(a), Some(t)) = (agent, task_id)
                    && a.starts_with(crate::workflow::CHILD_PREFIX)
                    && !self.children.iter().any(|c| c.run == *t)
                {
                    self.children.push(ChildRun {
                        step: step.as_str().to_owned(),
                        item: *item,
                        run: t.clone(),
                    });
                }
                // A step over a list started with its first item.
                if started && item.is_some() {
                    self.entry(step.as_str(), None)
                        .started_at
                        .get_or_insert_with(|| now.to_owned());
                }
            }
            RunEvent::Question {
                step,
                item,
                kind,
                prompt,
                answerers,
                until,
            } => {
                let (kind, input_schema) = match kind {
                    QuestionKind::Approval => (QuestionType::Approval, None),
                    QuestionKind::Input { schema } => (QuestionType::Input, Some(schema.clone())),
                    QuestionKind::Downstream { .. } => (QuestionType::Agent, None),
                };
                self.pending_questions
                    .retain(|q| !(q.step == step.as_str() && q.item == *item));
                self.pending_questions.push(PendingQuestion {
                    step: step.as_str().to_owned(),
                    item: *item,
                    prompt: prompt.clone(),
                    kind,
                    input_schema,
                    approvers: answerers
                        .approvers
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    four_eyes: answerers.four_eyes,
                    asked_at: Some(now.to_owned()),
                    until: until.clone(),
                });
                // In the workflow's order, whichever was asked first.
                let steps = &self.steps;
                let order = |q: &PendingQuestion| {
                    steps
                        .iter()
                        .position(|s| s.step == q.step && s.item == q.item)
                        .unwrap_or(usize::MAX)
                };
                self.pending_questions.sort_by_key(order);
            }
            RunEvent::Usage {
                step,
                item,
                attempt,
                added,
                model,
            } => {
                self.usage.add(added);
                let e = self.entry(step.as_str(), *item);
                if model.is_some() {
                    e.model.clone_from(model);
                }
                e.usage.add(added);
                let k = (*attempt).max(1) as usize - 1;
                if k < 64 {
                    if e.usage_by_attempt.len() <= k {
                        e.usage_by_attempt.resize(k + 1, Usage::default());
                    }
                    e.usage_by_attempt[k].add(added);
                }
                if item.is_some() {
                    self.entry(step.as_str(), None).usage.add(added);
                }
            }
            RunEvent::Answered {
                step,
                item,
                decision,
            } => self.audited(
                &decision.action,
                &decision.by,
                decision.at.clone(),
                Some(step.to_string()),
                *item,
            ),
            RunEvent::Artifact { .. } | RunEvent::Output { .. } => {}
        }
    }

    /// Brings the detail up to what a saved run's units say (on resume: the task's
    /// stored detail is as of the run's last own move, and steps that finished since are
    /// restored by the engine without events).
    pub fn restore(
        &mut self,
        units: &HashMap<(String, Option<usize>), Checkpoint>,
        now: &str,
        agent_url: impl Fn(&str) -> Option<String>,
    ) {
        let mut keys: Vec<&(String, Option<usize>)> = units.keys().collect();
        keys.sort();
        let mut decisions = Vec::new();
        for key in keys {
            let e = self.entry(&key.0, key.1);
            let (agent, attempts) = match &units[key] {
                Checkpoint::Done(record) => {
                    for d in &record.decisions {
                        decisions.push(AuditEntry {
                            action: d.action.clone(),
                            by: (&d.by).into(),
                            at: d.at.clone(),
                            step: Some(key.0.clone()),
                            item: key.1,
                        });
                    }
                    e.state = record.state;
                    e.message.clone_from(&record.error);
                    if let Some(u) = record.usage.as_deref() {
                        e.usage = *u;
                    }
                    if let Some(u) = record.usage.as_deref() {
                        e.usage = *u;
                    }
                    if let Some(t) = &record.ended_at {
                        e.ended_at = Some(t.clone());
                    }
                    e.ended_at.get_or_insert_with(|| now.to_owned());
                    if let Some(t) = &record.started_at {
                        e.started_at = Some(t.clone());
                    }
                    (record.agent.clone(), record.attempts)
                }
                Checkpoint::Sent {
                    attempt,
                    agent,
                    task_id,
                    started_at,
                    ..
                } => {
                    if !e.state.is_finished() {
                        e.state = StepState::Working;
                    }
                    if task_id.is_some() {
                        e.downstream_task_id.clone_from(task_id);
                    }
                    if let Some(t) = started_at {
                        e.started_at = Some(t.clone());
                    }
                    (agent.clone(), *attempt)
                }
                Checkpoint::Asked { started_at } => {
                    if !e.state.is_finished() {
                        e.state = StepState::InputRequired;
                    }
                    e.started_at = Some(started_at.clone());
                    (None, 1)
                }
            };
            e.attempts = e.attempts.max(attempts);
            if e.state != StepState::Skipped {
                // Runs stored before times were kept: the restart's time.
                e.started_at.get_or_insert_with(|| now.to_owned());
            }
            if agent.is_some() && agent != e.agent {
                e.agent_url = agent.as_deref().and_then(&agent_url);
                e.agent = agent;
            }
        }
        // The child runs its workflow steps' tasks are.
        for e in &self.steps {
            if let (Some(a), Some(t)) = (&e.agent, &e.downstream_task_id)
                && a.starts_with(crate::workflow::CHILD_PREFIX)
                && !self.children.iter().any(|c| c.run == *t)
            {
                self.children.push(ChildRun {
                    step: e.step.clone(),
                    item: e.item,
                    run: t.clone(),
                });
            }
        }
        // The answers the run recorded with its steps join the audit, in time order.
        for d in decisions {
            if !self.audit.contains(&d) {
                self.audit.push(d);
            }
        }
        self.audit.sort_by(|a, b| a.at.cmp(&b.at));
        // What the finished steps used, together (a fan-out step's items are in its own).
        self.usage = Usage::default();
        for s in self.steps.iter().filter(|s| s.item.is_none()) {
            self.usage.add(&s.usage);
        }
    }

    /// Takes the question an answer went to off the list: the step's (and item's, when
    /// named), or the only one.
    pub fn answered(&mut self, step: Option<&str>, item: Option<usize>) {
        match step {
            Some(s) => self
                .pending_questions
                .retain(|q| !(q.step == s && item.is_none_or(|i| q.item == Some(i)))),
            None if self.pending_questions.len() == 1 => self.pending_questions.clear(),
            None => {}
        }
    }

    /// Steps (items not counted) done — completed, or skipped by their condition —
    /// and all steps; as the web view counts them.
    pub fn progress(&self) -> (usize, usize) {
        let steps = self.steps.iter().filter(|s| s.item.is_none());
        let done = steps
            .clone()
            .filter(|s| matches!(s.state, StepState::Completed | StepState::Skipped))
            .count();
        (done, steps.count())
    }

    /// `0/2 steps done (2 canceled)`: [`RunDetail::progress`], and how many steps ended
    /// otherwise, by how — so a canceled run does not read as all done.
    pub fn progress_text(&self) -> String {
        let (done, total) = self.progress();
        let ended: Vec<String> = [
            StepState::Failed,
            StepState::Canceled,
            StepState::Rejected,
            StepState::UpstreamFailed,
        ]
        .iter()
        .filter_map(|state| {
            let n = self
                .steps
                .iter()
                .filter(|s| s.item.is_none() && s.state == *state)
                .count();
            (n > 0).then(|| format!("{n} {}", state.as_str().replace('_', " ")))
        })
        .collect();
        if ended.is_empty() {
            format!("{done}/{total} steps done")
        } else {
            format!("{done}/{total} steps done ({})", ended.join(", "))
        }
    }
}

/// A run state by the names the step states use (`input-required`).
mod run_state_name {
    use super::RunState;
    use serde::{Deserialize, Deserializer, Serializer};

    const ALL: [RunState; 5] = [
        RunState::Working,
        RunState::InputRequired,
        RunState::Completed,
        RunState::Failed,
        RunState::Canceled,
    ];

    pub fn name(state: RunState) -> &'static str {
        match state {
            RunState::InputRequired => "input-required",
            other => other.as_str(),
        }
    }

    pub fn serialize<S: Serializer>(state: &RunState, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(name(*state))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RunState, D::Error> {
        let n = String::deserialize(d)?;
        ALL.into_iter()
            .find(|s| name(*s) == n)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown run state `{n}`")))
    }
}

/// A run state's name in a [`RunDetail`] (`working`, `input-required`, `completed`, …).
pub fn run_state_name(state: RunState) -> &'static str {
    run_state_name::name(state)
}

/// A step state by the name [`StepState::as_str`] gives it.
mod state_name {
    use super::StepState;
    use serde::{Deserialize, Deserializer, Serializer};

    const ALL: [StepState; 10] = [
        StepState::Pending,
        StepState::Working,
        StepState::InputRequired,
        StepState::AuthRequired,
        StepState::Completed,
        StepState::Failed,
        StepState::Canceled,
        StepState::Rejected,
        StepState::Skipped,
        StepState::UpstreamFailed,
    ];

    pub fn serialize<S: Serializer>(state: &StepState, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(state.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StepState, D::Error> {
        let name = String::deserialize(d)?;
        ALL.into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown step state `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_update_reads_back_what_it_writes_with_the_wire_names() {
        let update = StepUpdate {
            step: "hotel".into(),
            item: Some(2),
            state: StepState::InputRequired,
            attempt: 1,
            agent: Some("hotels".into()),
            downstream_task_id: Some("t-9".into()),
            message: None,
        };
        let map = update.clone().into_map();
        assert_eq!(map["state"], "input-required");
        assert_eq!(map["downstreamTaskId"], "t-9");
        assert!(!map.contains_key("message"));
        let back: StepUpdate = serde_json::from_value(map.into()).unwrap();
        assert_eq!(back, update);
        let bad = serde_json::json!({"step": "s", "item": null, "state": "input_required",
            "attempt": 1, "agent": null, "downstreamTaskId": null});
        let e = serde_json::from_value::<StepUpdate>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown step state `input_required`"), "{e}");
    }

    #[test]
    fn a_step_update_as_a_map_is_what_it_serializes_to() {
        for (item, agent, task, message) in [
            (None, None, None, None),
            (Some(0), Some("hotels"), Some("t-1"), Some("no rooms")),
        ] {
            let update = StepUpdate {
                step: "hotel".into(),
                item,
                state: StepState::Failed,
                attempt: 3,
                agent: agent.map(str::to_owned),
                downstream_task_id: task.map(str::to_owned),
                message: message.map(str::to_owned),
            };
            let serialized = serde_json::to_value(&update).unwrap();
            assert_eq!(Value::Object(update.into_map()), serialized);
        }
    }

    #[test]
    fn the_detail_as_a_value_is_what_it_serializes_to() {
        let bare = StepDetail::pending("plan".into(), None, Vec::new());
        let full = StepDetail {
            step: "each".into(),
            item: Some(1),
            needs: vec!["plan".into(), "list".into()],
            state: StepState::UpstreamFailed,
            attempts: 2,
            agent: Some("one".into()),
            agent_url: Some("http://one/".into()),
            downstream_task_id: Some("t-1".into()),
            started_at: Some("2026-11-28T10:00:00Z".into()),
            ended_at: Some("2026-11-28T10:00:01Z".into()),
            message: Some("no rooms".into()),
            usage: Usage {
                input_tokens: 120,
                output_tokens: 30,
                calls: 2,
                cost: 0.25,
            },
            usage_by_attempt: vec![Usage::CALL, Usage::CALL],
            model: Some("gpt-4o-mini".into()),
        };
        let person = Person {
            id: "issuer#sub".into(),
            name: "Ada".into(),
        };
        let mut detail = RunDetail {
            workflow: "w".into(),
            workflow_version: "abc".into(),
            inputs: Map::from_iter([("city".to_owned(), Value::from("Paris"))]),
            state: RunState::InputRequired,
            started_at: "2026-11-28T10:00:00Z".into(),
            ended_at: None,
            error: None,
            retry_of: None,
            steps: vec![bare, full],
            pending_questions: Vec::new(),
            started_by: None,
            audit: Vec::new(),
            usage: Usage {
                calls: 3,
                ..Usage::default()
            },
            currency: None,
            parent: None,
            children: Vec::new(),
        };
        assert_eq!(detail.to_value(), serde_json::to_value(&detail).unwrap());
        detail.currency = Some("USD".into());
        detail.parent = Some(crate::engine::ParentRun {
            run: "p".into(),
            step: "s".into(),
            item: Some(1),
            depth: 1,
        });
        detail.children = vec![ChildRun {
            step: "c".into(),
            item: None,
            run: "r-c".into(),
        }];
        detail.ended_at = Some("2026-11-28T10:00:02Z".into());
        detail.error = Some("it failed".into());
        detail.retry_of = Some("r-0".into());
        detail.pending_questions = vec![PendingQuestion {
            step: "each".into(),
            item: Some(1),
            prompt: "ok?".into(),
            kind: QuestionType::Approval,
            input_schema: None,
            approvers: vec!["group:hr".into()],
            four_eyes: true,
            asked_at: Some("2026-11-28T10:00:01Z".into()),
            until: None,
        }];
        detail.started_by = Some(person.clone());
        detail.audit = vec![AuditEntry {
            action: "started".into(),
            by: person,
            at: "2026-11-28T10:00:00Z".into(),
            step: None,
            item: None,
        }];
        assert_eq!(detail.to_value(), serde_json::to_value(&detail).unwrap());
    }

    fn step(step: &str, item: Option<usize>, state: StepState, attempt: u32) -> RunEvent {
        RunEvent::Step {
            step: crate::workflow::StepId::new(step),
            item,
            state,
            attempt,
            agent: Some("one".into()),
            task_id: Some(format!("t-{step}-{item:?}")),
            message: None,
        }
    }

    fn question(step: &str) -> RunEvent {
        RunEvent::Question {
            step: crate::workflow::StepId::new(step),
            item: None,
            kind: QuestionKind::Approval,
            prompt: format!("{step}?"),
            answerers: Default::default(),
            until: None,
        }
    }

    #[test]
    fn the_detail_follows_a_run_items_after_their_step_questions_in_step_order() {
        let toml = r#"
[workflow]
id = "w"
description = "fan-out and approvals"
[steps.list]
agent = "one"
message = "list"
[steps.each]
agent = "one"
needs = ["list"]
for_each = "steps.list.data.items"
message = "{{ item }}"
[steps.a]
kind = "approval"
prompt = "a?"
[steps.b]
kind = "approval"
prompt = "b?"
"#;
        let (w, diags) =
            crate::workflow::load_str("w.toml", toml, crate::workflow::Options::default());
        let w = w.unwrap_or_else(|| panic!("{diags:?}"));
        let mut d = RunDetail::new(&w, Map::new(), "t0".into());
        assert_eq!(d.progress(), (0, 4));
        let url = |a: &str| Some(format!("http://{a}/"));
        d.apply(&step("list", None, StepState::Working, 1), "t1", url);
        d.apply(&step("list", None, StepState::Failed, 1), "t2", url);
        d.apply(&step("list", None, StepState::Working, 2), "t3", url);
        d.apply(&step("list", None, StepState::Completed, 2), "t4", url);
        let list = &d.steps[0];
        assert_eq!((list.state, list.attempts), (StepState::Completed, 2));
        assert_eq!(
            list.started_at.as_deref(),
            Some("t1"),
            "the first attempt's start"
        );
        assert_eq!(list.ended_at.as_deref(), Some("t4"));
        assert_eq!(list.agent_url.as_deref(), Some("http://one/"));
        // Items, in whatever order they move, stand after their step in item order.
        d.apply(&step("each", Some(1), StepState::Working, 1), "t5", url);
        d.apply(&step("each", Some(0), StepState::Working, 1), "t5", url);
        let order: Vec<(&str, Option<usize>)> =
            d.steps.iter().map(|s| (s.step.as_str(), s.item)).collect();
        assert_eq!(
            order,
            [
                ("list", None),
                ("each", None),
                ("each", Some(0)),
                ("each", Some(1)),
                ("a", None),
                ("b", None)
            ]
        );
        assert_eq!(d.progress(), (1, 4), "items are not counted as steps");
        assert_eq!(d.progress_text(), "1/4 steps done");
        // Questions in the workflow's order whichever came first; an answer takes its own.
        d.apply(&question("b"), "t6", url);
        d.apply(&question("a"), "t6", url);
        let asked: Vec<&str> = d
            .pending_questions
            .iter()
            .map(|q| q.step.as_str())
            .collect();
        assert_eq!(asked, ["a", "b"]);
        d.answered(Some("b"), None);
        assert_eq!(d.pending_questions.len(), 1);
        d.answered(None, None);
        assert!(d.pending_questions.is_empty(), "the only one is answered");
        d.apply(
            &RunEvent::Run {
                state: RunState::Failed,
                message: Some("`each`[1] failed".into()),
            },
            "t9",
            url,
        );
        assert_eq!(d.ended_at.as_deref(), Some("t9"));
        assert_eq!(d.error.as_deref(), Some("`each`[1] failed"));
        // What it writes it reads back, under its key in task metadata.
        let meta = Map::from_iter([(RUN_KEY.to_owned(), d.to_value())]);
        assert_eq!(meta["run"]["state"], "failed");
        assert_eq!(RunDetail::of_metadata(Some(&meta)), Some(d.clone()));

        // A restart: what the saved units say wins over a stale detail.
        let mut stale = RunDetail::new(&w, Map::new(), "t0".into());
        let mut units = HashMap::new();
        let mut record = crate::engine::Record::new(StepState::Completed);
        record.agent = Some("one".into());
        record.attempts = 1;
        record.started_at = Some("t1".into());
        record.ended_at = Some("t2".into());
        units.insert(("list".to_owned(), None), Checkpoint::Done(record));
        units.insert(
            ("each".to_owned(), Some(0)),
            Checkpoint::Sent {
                attempt: 1,
                turn: 0,
                message_id: "m".into(),
                agent: Some("one".into()),
                task_id: Some("t-9".into()),
                text: None,
                data: None,
                started_at: Some("t3".into()),
                asking: false,
            },
        );
        stale.restore(&units, "t5", url);
        assert_eq!(stale.steps[0].state, StepState::Completed);
        // The times the journal kept, not the restart's.
        assert_eq!(stale.steps[0].started_at.as_deref(), Some("t1"));
        assert_eq!(stale.steps[0].ended_at.as_deref(), Some("t2"));
        assert_eq!(stale.steps[2].started_at.as_deref(), Some("t3"));
        assert_eq!(stale.steps[0].agent_url.as_deref(), Some("http://one/"));
        let item = &stale.steps[2];
        assert_eq!((item.step.as_str(), item.item), ("each", Some(0)));
        assert_eq!(item.state, StepState::Working);
        assert_eq!(item.downstream_task_id.as_deref(), Some("t-9"));
    }
}

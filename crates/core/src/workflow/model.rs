//! The validated workflow model: what the engine runs.
//!
//! Everything here has been checked: ids are newtypes, durations are parsed, templates
//! are compiled, `needs` name real steps and form no cycle, and `steps` are in a
//! topological order. Nothing here knows about TOML, HTTP or A2A.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use super::template::{DataTemplate, Expr, Template, Templates};

/// A name the workflow's author wrote, shared: it goes into every event and record of
/// its step or agent, and a copy is a count raised, not a string copied.
macro_rules! name_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::sync::Arc<str>);

        impl $name {
            pub fn new(s: impl Into<std::sync::Arc<str>>) -> Self {
                Self(s.into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_type!(
    /// A workflow's id: the skill id on the orchestrator's card.
    WorkflowId
);
name_type!(
    /// A step's id, unique within its workflow.
    StepId
);
name_type!(
    /// The name of an agent in `agents.toml`.
    AgentName
);

/// What a run may spend, all its steps together: its agents' cost (in the currency of
/// their prices), tokens (in and out), and calls to agents (each attempt, each answer
/// sent back). Each bound is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
}

/// `[webhook]`: a request signed as the Standard Webhooks specification says, posted to
/// `/webhooks/<path>`, starts a run with the inputs its templates take from the JSON
/// body (`body.…`), as the principal `as` names.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub path: String,
    /// The environment variable holding the secret (`whsec_…`).
    pub secret_env: String,
    /// Who the run is started as: a named principal of `serve`'s `[auth]`.
    pub as_principal: Option<String>,
    pub input: Option<DataTemplate>,
}

/// An approval step asked when the run passes its budget: it is no step of the graph;
/// each approval adds `extend` to the budget and the run goes on, a refusal fails it.
#[derive(Debug, Clone, PartialEq)]
pub struct OnBudget {
    pub step: StepId,
    pub extend: Budget,
}

/// A loaded, validated workflow.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub id: WorkflowId,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    pub examples: Vec<String>,
    /// Most steps (and fan-out items) running at once.
    pub max_parallel: usize,
    pub on_failure: OnFailure,
    /// How long the whole run may take (`[workflow] deadline`): past it the run fails,
    /// naming what was still running, which is canceled.
    pub deadline: Option<std::time::Duration>,
    /// Who may start it (`[workflow] allow`); empty: anyone who may call the server.
    pub allow: Vec<crate::access::Pattern>,
    /// What a run may spend (`[workflow] budget`): past it the run fails, and what
    /// still runs is canceled — unless it asks to extend it.
    pub budget: Option<Budget>,
    /// The approval asked when the run passes its budget (its step with
    /// `on_budget = "ask"`), instead of failing.
    pub on_budget: Option<OnBudget>,
    /// A signed HTTP request that starts a run (`[webhook]`).
    pub webhook: Option<Box<Webhook>>,
    /// Runs started at a cron pattern's times (`[[schedule]]`).
    pub schedules: Vec<super::schedule::Schedule>,
    /// Declared inputs, in file order.
    pub inputs: Vec<InputSpec>,
    /// Steps in a topological order (file order among independent steps).
    pub steps: Vec<Step>,
    pub output: Option<Output>,
    pub templates: Templates,
    /// Where the workflow was loaded from.
    pub file: String,
    /// The file's text, and its SHA-256 (hex): a run keeps the version it started with.
    pub source: std::sync::Arc<str>,
    pub hash: String,
}

impl Workflow {
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id.as_str() == id)
    }

    /// Checks a run's inputs against `[input]`: every problem, in one list; on success
    /// the inputs with defaults filled in.
    pub fn check_inputs(
        &self,
        given: &serde_json::Map<String, Value>,
    ) -> Result<serde_json::Map<String, Value>, Vec<String>> {
        check_inputs(&self.inputs, given)
    }

    /// A JSON Schema (draft 2020-12 subset) of the workflow's inputs.
    pub fn input_schema(&self) -> Value {
        inputs_schema(&self.inputs)
    }
}

/// Checks values against input specs (`[input]`, or an input step's `fields`).
pub fn check_inputs(
    specs: &[InputSpec],
    given: &serde_json::Map<String, Value>,
) -> Result<serde_json::Map<String, Value>, Vec<String>> {
    let mut problems = Vec::new();
    let mut out = serde_json::Map::new();
    for spec in specs {
        match given.get(&spec.name).map(|v| spec.canonical(v)) {
            Some(v) => match spec.check(&v) {
                Ok(()) => {
                    out.insert(spec.name.clone(), v);
                }
                Err(e) => problems.push(e),
            },
            None => match &spec.default {
                Some(d) => {
                    out.insert(spec.name.clone(), d.clone());
                }
                None if spec.required => problems.push(format!(
                    "`{}` is required{}",
                    spec.name,
                    spec.description
                        .as_ref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                )),
                None => {}
            },
        }
    }
    for name in given.keys() {
        if !specs.iter().any(|s| &s.name == name) {
            let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            problems.push(format!(
                "`{name}` is not an input (inputs: {})",
                known.join(", ")
            ));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// A JSON Schema object for a list of input specs.
pub fn inputs_schema(inputs: &[InputSpec]) -> Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for i in inputs {
        let mut p = serde_json::Map::new();
        p.insert("type".into(), json!(i.ty.as_str()));
        if let Some(d) = &i.description {
            p.insert("description".into(), json!(d));
        }
        if let Some(e) = &i.allowed {
            p.insert("enum".into(), Value::Array(e.clone()));
        }
        if let Some(d) = &i.default {
            p.insert("default".into(), d.clone());
        }
        properties.insert(i.name.clone(), Value::Object(p));
        if i.required {
            required.push(json!(i.name));
        }
    }
    // A JSON object's keys have no order (ours are written sorted, a protobuf Struct's
    // in any): `x-order` keeps the file's, so a form asks in the order the author wrote.
    let order: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false, "x-order": order })
}

/// What the run does when a step fails (and is not `continue_on_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// Independent branches go on; dependants of the failed step are `upstream_failed`.
    Continue,
    /// Schedule nothing new; let running steps finish.
    Stop,
    /// Cancel every running step.
    Cancel,
}

impl OnFailure {
    pub const NAMES: [&'static str; 3] = ["continue", "stop", "cancel"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "continue" => OnFailure::Continue,
            "stop" => OnFailure::Stop,
            "cancel" => OnFailure::Cancel,
            _ => return None,
        })
    }
}

/// What an approval or input step does when nobody answers within its `timeout`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OnTimeout {
    /// The step fails.
    #[default]
    Fail,
    /// The step ends `rejected`: silence is a no.
    Reject,
    /// The question is asked again, addressed to these approvers, for another
    /// `timeout`; then the step fails.
    Escalate(Vec<crate::access::Pattern>),
}

impl OnTimeout {
    pub const NAMES: [&'static str; 3] = ["fail", "reject", "escalate"];
}

/// A typed input.
#[derive(Debug, Clone, PartialEq)]
pub struct InputSpec {
    pub name: String,
    pub ty: InputType,
    pub description: Option<String>,
    pub required: bool,
    pub default: Option<Value>,
    /// `enum`: the only values allowed.
    pub allowed: Option<Vec<Value>>,
}

impl InputSpec {
    /// `v` as this spec spells it: a text that is one of the `enum` texts but for
    /// letter case (`Engineer` for `engineer`) becomes that one; a whole number written
    /// as a float (`5.0`: every number of a protobuf `Value`, so of an A2A v1.0 data
    /// part from a protobuf-based SDK) is the integer an `integer` input takes; anything
    /// else as given.
    pub fn canonical(&self, v: &Value) -> Value {
        if self.ty == InputType::Integer
            && let Some(f) = v.as_f64().filter(|_| v.is_f64())
            && f.fract() == 0.0
            && f.abs() < 9_007_199_254_740_992.0
        {
            return Value::from(f as i64);
        }
        if let (Value::String(given), Some(allowed)) = (v, &self.allowed)
            && !allowed.contains(v)
            && let Some(one) = allowed
                .iter()
                .find(|a| a.as_str().is_some_and(|a| a.eq_ignore_ascii_case(given)))
        {
            return one.clone();
        }
        v.clone()
    }

    /// Checks a value against this spec; the error says what is wrong.
    pub fn check(&self, v: &Value) -> Result<(), String> {
        if !self.ty.matches(v) {
            return Err(format!(
                "`{}` must be {}, got {}",
                self.name,
                self.ty.article(),
                json_kind(v)
            ));
        }
        if let Some(allowed) = &self.allowed
            && !allowed.contains(v)
        {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            return Err(format!(
                "`{}` must be one of {}, got {v}",
                self.name,
                list.join(", ")
            ));
        }
        Ok(())
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The type of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

impl InputType {
    pub const NAMES: [&'static str; 6] =
        ["string", "integer", "number", "boolean", "array", "object"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => InputType::String,
            "integer" => InputType::Integer,
            "number" => InputType::Number,
            "boolean" => InputType::Boolean,
            "array" => InputType::Array,
            "object" => InputType::Object,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn article(self) -> &'static str {
        match self {
            InputType::String => "a string",
            InputType::Integer => "an integer",
            InputType::Number => "a number",
            InputType::Boolean => "a boolean",
            InputType::Array => "an array",
            InputType::Object => "an object",
        }
    }

    pub fn matches(self, v: &Value) -> bool {
        match self {
            InputType::String => v.is_string(),
            InputType::Integer => v.is_i64() || v.is_u64(),
            InputType::Number => v.is_number(),
            InputType::Boolean => v.is_boolean(),
            InputType::Array => v.is_array(),
            InputType::Object => v.is_object(),
        }
    }
}

/// One node of the DAG.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: StepId,
    pub kind: StepKind,
    /// Steps that must finish before this one starts.
    pub needs: Vec<StepId>,
    /// Run only when this is true (else `skipped`).
    pub when: Option<Expr>,
    pub trigger: Trigger,
    /// A failure of this step does not fail the run or its dependants.
    pub continue_on_error: bool,
    /// Bound on one attempt.
    pub timeout: Option<Duration>,
    /// Bound on the whole step, retries included.
    pub deadline: Option<Duration>,
    /// For approval and input steps: what silence past `timeout` does.
    pub on_timeout: OnTimeout,
    /// Who may answer its questions (approval and input steps, and agent steps whose
    /// agent asks).
    pub answerers: crate::access::Answerers,
    pub retry: RetryPolicy,
    pub for_each: Option<FanOut>,
    /// A bounded loop (`repeat_until`, `max_repeats`): the step runs pass after pass.
    pub repeat: Option<Box<Repeat>>,
    /// Approval and input steps: the agent their question is sent to when it is asked
    /// (a chat or mail agent), besides the run's client.
    pub announce_to: Option<AgentName>,
    /// The steps its message, data and prompt use (`steps.<id>`), sorted: all a run
    /// puts in the template context of the step's units. (`when` and `for_each` are
    /// evaluated by the run with the whole context.)
    pub uses: Vec<StepId>,
    /// The inputs they use (`input.<name>`), sorted; `None` when they use `input` whole.
    pub uses_inputs: Option<Vec<String>>,
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum StepKind {
    /// Delegates a message to a downstream agent.
    Agent {
        target: AgentTarget,
        message: Option<Template>,
        data: Option<DataTemplate>,
    },
    /// Asks the upstream client to approve; the answer is `data.approved`.
    Approval { prompt: Template },
    /// Asks the upstream client for values; the answers are `data`.
    Input {
        prompt: Template,
        fields: Vec<InputSpec>,
    },
    /// Runs another workflow as a run of its own (a child run), with these inputs, and
    /// takes its result.
    Workflow {
        workflow: WorkflowId,
        input: Option<DataTemplate>,
        /// Where the file names the workflow, and each input key: for the checks made
        /// once every workflow is loaded.
        sites: Box<ChildSites>,
    },
    /// Written by the orchestrator's language model from the rendered prompt, streamed
    /// as it is written; `fallback` is rendered instead when no model is configured or
    /// the model fails.
    Llm {
        prompt: Template,
        system: Option<Template>,
        fallback: Option<Template>,
    },
}

impl StepKind {
    /// Whether its message, data and prompts render the same whatever the run's
    /// context: none of them has a tag (a unit of such a step needs no context).
    pub fn renders_plainly(&self) -> bool {
        match self {
            StepKind::Agent { message, data, .. } => {
                message.as_ref().is_none_or(Template::is_plain)
                    && data.as_ref().is_none_or(DataTemplate::is_plain)
            }
            StepKind::Approval { prompt } | StepKind::Input { prompt, .. } => prompt.is_plain(),
            StepKind::Workflow { input, .. } => input.as_ref().is_none_or(DataTemplate::is_plain),
            StepKind::Llm {
                prompt,
                system,
                fallback,
            } => [Some(prompt), system.as_ref(), fallback.as_ref()]
                .into_iter()
                .flatten()
                .all(Template::is_plain),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Agent { .. } => "agent",
            StepKind::Approval { .. } => "approval",
            StepKind::Input { .. } => "input",
            StepKind::Workflow { .. } => "workflow",
            StepKind::Llm { .. } => "llm",
        }
    }
}

/// Where a workflow step's file names its workflow and gives its inputs.
#[derive(Debug, Clone, Default)]
pub struct ChildSites {
    /// The `workflow` value's span.
    pub workflow: std::ops::Range<usize>,
    /// Each `input` key, and its span.
    pub inputs: Vec<(String, std::ops::Range<usize>)>,
    /// The step's own span.
    pub step: std::ops::Range<usize>,
}

/// The agent name a workflow step's child run goes by in events and the run's detail:
/// `workflow:<id>` (agents.toml names cannot hold a `:`).
pub fn child_agent(workflow: &str) -> String {
    format!("{CHILD_PREFIX}{workflow}")
}

/// See [`child_agent`].
pub const CHILD_PREFIX: &str = "workflow:";

/// Most workflows deep a chain of workflow steps may go (a workflow running one that
/// runs one …).
pub const MAX_DEPTH: usize = 8;

/// How a step's agent is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentTarget {
    /// A name from `agents.toml`.
    Named(AgentName),
    /// Any healthy agent whose card offers this skill id.
    Skill(String),
    /// A workflow of this orchestrator, run as a child run.
    Workflow(WorkflowId),
}

impl fmt::Display for AgentTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentTarget::Named(a) => write!(f, "agent {a}"),
            AgentTarget::Skill(s) => write!(f, "skill {s}"),
            AgentTarget::Workflow(w) => write!(f, "workflow {w}"),
        }
    }
}

/// When a step runs, given the final states of its needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Every need completed (the default). A failed need makes this step
    /// `upstream_failed`; a skipped one makes it `skipped`.
    AllSuccess,
    /// No need failed; skipped needs are fine.
    NoneFailed,
    /// At least one need completed.
    OneSuccess,
    /// Every need finished, whatever its state.
    AllDone,
    /// Whatever happens, even when the run fails or is canceled (cleanup, reporting).
    Always,
}

impl Trigger {
    pub const NAMES: [&'static str; 5] = [
        "all_success",
        "none_failed",
        "one_success",
        "all_done",
        "always",
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "all_success" => Trigger::AllSuccess,
            "none_failed" => Trigger::NoneFailed,
            "one_success" => Trigger::OneSuccess,
            "all_done" => Trigger::AllDone,
            "always" => Trigger::Always,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Retries of a step's attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub max_attempts: u32,
    pub backoff: Backoff,
    /// Wait before the second attempt.
    pub initial: Duration,
    /// Longest wait between attempts.
    pub max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 1,
            backoff: Backoff::Exponential,
            initial: Duration::from_secs(1),
            max: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `n` (2 for the first retry), without jitter.
    pub fn delay_before(&self, attempt: u32) -> Duration {
        self.schedule().base(attempt.saturating_sub(1))
    }

    /// The policy's waits as the shared schedule (without jitter).
    pub fn schedule(&self) -> backoff::Backoff {
        match self.backoff {
            Backoff::Fixed => backoff::Backoff::fixed(self.initial.min(self.max)),
            Backoff::Exponential => backoff::Backoff::exponential(self.initial, self.max),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    Fixed,
    Exponential,
}

/// `for_each`: one downstream task per item of a list.
#[derive(Debug, Clone)]
pub struct FanOut {
    /// Yields the list; `item` and `index` are set in the step's templates.
    pub items: Expr,
    /// Most items running at once (bounded by the workflow's `max_parallel` too).
    pub max_parallel: Option<usize>,
    /// Items that must complete for the step to complete; all of them when `None`.
    pub min_success: Option<usize>,
}

/// `repeat_until`: the step runs again, pass after pass, until `until` is true of the
/// pass that just ended (`steps.<id>` in it), `max` passes at most.
#[derive(Debug, Clone)]
pub struct Repeat {
    pub until: Expr,
    pub max: u32,
    /// What reaching `max` with `until` still false does: fail the step, or complete it
    /// with its last pass (`on_max_repeats = "continue"`).
    pub continue_at_max: bool,
}

/// Most passes a loop may have.
pub const MAX_REPEATS: u32 = 1000;

/// The run's final result.
#[derive(Debug, Clone)]
pub struct Output {
    pub text: Option<Template>,
    pub data: Option<DataTemplate>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_is_capped() {
        let r = RetryPolicy {
            max_attempts: 5,
            backoff: Backoff::Exponential,
            initial: Duration::from_secs(1),
            max: Duration::from_secs(5),
        };
        let waits: Vec<u64> = (2..=6).map(|a| r.delay_before(a).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 5, 5]);
    }

    #[test]
    fn inputs_check_type_and_enum() {
        let spec = InputSpec {
            name: "role".into(),
            ty: InputType::String,
            description: None,
            required: true,
            default: None,
            allowed: Some(vec![json!("engineer"), json!("sales")]),
        };
        assert!(spec.check(&json!("engineer")).is_ok());
        assert_eq!(
            spec.check(&json!(3)).unwrap_err(),
            "`role` must be a string, got an integer"
        );
        assert!(spec.check(&json!("chef")).unwrap_err().contains("one of"));
        // Letter case aside, an enum text is the one the spec spells.
        assert_eq!(spec.canonical(&json!("Engineer")), json!("engineer"));
        assert_eq!(spec.canonical(&json!("chef")), json!("chef"));
        let nights = InputSpec {
            name: "nights".into(),
            ty: InputType::Integer,
            description: None,
            required: true,
            default: None,
            allowed: None,
        };
        assert_eq!(nights.canonical(&json!(5.0)), json!(5));
        assert_eq!(nights.canonical(&json!(5.5)), json!(5.5));
        assert!(nights.check(&nights.canonical(&json!(5.5))).is_err());
        let given = serde_json::Map::from_iter([("role".to_owned(), json!("ENGINEER"))]);
        let specs = std::slice::from_ref(&spec);
        assert_eq!(
            check_inputs(specs, &given).unwrap()["role"],
            json!("engineer")
        );
    }
}

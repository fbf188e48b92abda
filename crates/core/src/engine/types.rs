//! The engine's vocabulary: what it sends to agents and hears back, the states of runs
//! and steps, the events it emits, and the answers it takes.
//!
//! These are the engine's own types, not A2A's: the connector (`crate::connect`) and the
//! host translate. Nothing here is serialized on any wire; what a run store keeps
//! (contents, states) is serialized with serde for it.

use std::fmt;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::access::{Actor, Decision};
use crate::workflow::{AgentTarget, StepId};

/// A block of content from an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Content {
    Text(String),
    Data(Map<String, Value>),
    /// A file, by URI or inline (base64); kept as it came.
    File {
        name: Option<String>,
        mime_type: Option<String>,
        uri: Option<String>,
        bytes: Option<String>,
    },
}

/// An artifact, or a chunk of one, as an agent sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactChunk {
    pub artifact_id: String,
    pub name: Option<String>,
    pub parts: Vec<Content>,
    /// These parts extend the artifact of the same id.
    pub append: bool,
    pub last_chunk: bool,
}

/// A downstream task's state, as far as the engine cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteState {
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
}

/// What an agent connection reports during one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// The agent chosen and the downstream task it created (none for a direct reply).
    Started {
        agent: String,
        task_id: Option<String>,
    },
    Status {
        state: RemoteState,
        message: Option<String>,
    },
    Artifact(ArtifactChunk),
    /// A direct reply (a message, no task): the attempt completed with these parts.
    Reply(Vec<Content>),
    /// What the downstream task used so far (its tokens, its cost), as its agent
    /// reports it: each report the task's total, the last one counting.
    Usage(crate::engine::Usage),
    /// What the message itself costs (an agent's price per call): added as is, once.
    Charged(crate::engine::Usage),
    /// The model the task says it used (OpenTelemetry GenAI's `gen_ai.request.model`).
    Model(String),
}

/// Why a call to an agent failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    pub kind: AgentErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentErrorKind {
    /// No agent could be chosen (down, circuit open, none offers the skill).
    Unavailable,
    /// Transport failure or timeout talking to the agent.
    Transport,
    /// The agent broke the protocol.
    Protocol,
    /// The agent refused the request (a JSON-RPC error for a bad request): retrying
    /// would not help.
    Refused,
}

impl AgentError {
    pub fn new(kind: AgentErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    pub fn retryable(&self) -> bool {
        self.kind != AgentErrorKind::Refused
    }
}

/// One message to an agent.
#[derive(Debug, Clone)]
pub struct SendRequest {
    pub run_id: String,
    /// The step (and fan-out item) sending it.
    pub step: StepId,
    pub item: Option<usize>,
    /// Who should get it; for a continuation, the agent that has the task.
    pub target: AgentTarget,
    /// Deterministic per (run, step, item, attempt, turn): a resend is recognisable.
    pub message_id: String,
    /// Continue this downstream task (answering its question).
    pub task_id: Option<String>,
    pub text: Option<String>,
    pub data: Option<Map<String, Value>>,
    /// What the run has left for the agent to work within, set as it goes out (boxed:
    /// a unit holds its requests).
    pub bounds: Option<Box<Bounds>>,
    /// Who gave the answer a continuation carries (the agent's question was put to the
    /// run's client): a child run of this orchestrator takes it as theirs.
    pub answered_by: Option<Box<crate::access::Actor>>,
}

/// What a run has left when it sends a message: of its budget, and of time (the
/// earliest of the attempt's timeout, the step's deadline and the run's). An agent
/// that is an orchestrator holds the run it starts within them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    pub budget: Option<crate::workflow::Budget>,
    pub within: Option<std::time::Duration>,
}

/// The updates of one attempt, in order. The stream ends after a terminal or
/// interrupted state, a reply, or an error.
pub type Updates = BoxStream<'static, Result<Update, AgentError>>;

/// How the engine reaches agents. Implemented over A2A by `crate::connect`, and by
/// scripted agents in tests.
pub trait AgentConnector: Send + Sync + 'static {
    /// Sends a message (a new task, or a continuation) and streams what follows.
    fn send(&self, request: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>>;
    /// Follows an existing downstream task of run `run_id` again (after a restart): its
    /// current state and artifacts (as whole artifacts), then what follows. The default
    /// cannot.
    fn attach(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let _ = run_id;
        let message = format!("cannot follow task {task_id} of agent {agent} again");
        Box::pin(async move { Err(AgentError::new(AgentErrorKind::Unavailable, message)) })
    }
    /// Watches a downstream task of run `run_id` that waits for input: says nothing
    /// while it waits, then its state once it goes on without an answer from this run
    /// (answered elsewhere, canceled). The default cannot: an agent's task is answered
    /// through the run that asked.
    fn watch(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let _ = (run_id, agent, task_id);
        Box::pin(async { Err(AgentError::new(AgentErrorKind::Unavailable, "not watched")) })
    }
    /// Cancels a downstream task of run `run_id`.
    fn cancel(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>>;
}

/// Why a language model gave no (or no complete) answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

/// What a `kind = "llm"` step asks a language model.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// Instructions (the system message), if the step gives them.
    pub system: Option<String>,
    /// The rendered prompt (the user message).
    pub user: String,
}

/// A piece of a model's answer: text as it is written, or what the answer used so far
/// (its tokens and their cost, the last report counting).
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Used(crate::engine::Usage),
}

/// An answer, piece by piece as the model writes it.
pub type Tokens = BoxStream<'static, Result<Piece, ModelError>>;

/// How the engine reaches a language model for `kind = "llm"` steps. Implemented over
/// an OpenAI-compatible API (`crate::llm`, adapted in `crate::connect`), and by scripted
/// models in tests.
pub trait TextModel: Send + Sync + 'static {
    /// How the model is named in step events (`llm:<model>`).
    fn name(&self) -> &str;
    /// Starts an answer; the stream ends when the answer is complete.
    fn stream(&self, prompt: Prompt) -> BoxFuture<'static, Result<Tokens, ModelError>>;
}

/// A run's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Working,
    /// Questions are pending and nothing else runs.
    InputRequired,
    Completed,
    Failed,
    Canceled,
}

impl RunState {
    /// Its name as serialized (`working`, `input_required`, `completed`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Working => "working",
            RunState::InputRequired => "input_required",
            RunState::Completed => "completed",
            RunState::Failed => "failed",
            RunState::Canceled => "canceled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunState::Completed | RunState::Failed | RunState::Canceled
        )
    }
}

/// A step's (or fan-out item's) state: the A2A states plus `skipped` and
/// `upstream_failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Pending,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
    Skipped,
    UpstreamFailed,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Working => "working",
            StepState::InputRequired => "input-required",
            StepState::AuthRequired => "auth-required",
            StepState::Completed => "completed",
            StepState::Failed => "failed",
            StepState::Canceled => "canceled",
            StepState::Rejected => "rejected",
            StepState::Skipped => "skipped",
            StepState::UpstreamFailed => "upstream_failed",
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            StepState::Completed
                | StepState::Failed
                | StepState::Canceled
                | StepState::Rejected
                | StepState::Skipped
                | StepState::UpstreamFailed
        )
    }
}

impl fmt::Display for StepState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a question asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum QuestionKind {
    /// Yes or no.
    Approval,
    /// Values for these fields (a JSON Schema).
    Input { schema: Value },
    /// A downstream agent asks (`input-required` or `auth-required`).
    Downstream { agent: String, auth: bool },
}

/// Everything the engine reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    Run {
        state: RunState,
        message: Option<String>,
    },
    Step {
        step: StepId,
        item: Option<usize>,
        state: StepState,
        attempt: u32,
        agent: Option<String>,
        task_id: Option<String>,
        message: Option<String>,
    },
    Artifact {
        step: StepId,
        item: Option<usize>,
        agent: String,
        chunk: ArtifactChunk,
    },
    Question {
        step: StepId,
        item: Option<usize>,
        kind: QuestionKind,
        prompt: String,
        /// Who may answer it (boxed: every run's future holds events).
        answerers: Box<crate::access::Answerers>,
        /// When the wait for the answer ends (RFC 3339), if it does.
        until: Option<String>,
    },
    Output {
        text: Option<String>,
        data: Option<Value>,
    },
    /// Someone answered a question of the step (the audit trail); for an approval that
    /// needs a quorum, one event per approver.
    Answered {
        step: StepId,
        item: Option<usize>,
        decision: Box<Decision>,
    },
    /// The step used this much more (a call made, tokens and cost its agent reported),
    /// in its attempt `attempt`.
    Usage {
        step: StepId,
        item: Option<usize>,
        attempt: u32,
        added: crate::engine::Usage,
        /// The model the step's agent says it used, when it says.
        model: Option<String>,
    },
}

/// An answer from the upstream client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub text: Option<String>,
    pub data: Option<Map<String, Value>>,
    /// Who answered (none on a server that does not authenticate its callers).
    pub by: Option<Actor>,
}

impl Answer {
    /// An answer in words (`yes`, a choice, a value).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }
}

/// What became of an answer that was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// It answered the question.
    Answered,
    /// It counted towards the approval's quorum; `left` more approvals are needed.
    Counted { left: usize },
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("no question is pending for step `{0}`")]
    NoQuestion(String),
    #[error("several questions are pending ({0}); say which step the answer is for")]
    Ambiguous(String),
    #[error("{0}")]
    Invalid(String),
    /// The one answering may not answer this question (not among its approvers, the
    /// run's initiator under four eyes, or already counted towards its quorum).
    #[error("{0}")]
    NotAllowed(String),
    #[error("the run has finished")]
    Finished,
}

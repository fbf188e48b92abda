//! Scripted agents: the engine's [`AgentConnector`] answering from a test's replies, in
//! process. Each message a step sends takes the next reply of its fan-out item's script
//! (`book_tours[1]`), else of its step's, else of its agent's (the last reply answering
//! every message after it), and becomes what
//! an A2A agent would send back: a task started, artifact chunks, a status that ends it
//! or asks. Every message is written down, for the test's `sent` paths.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use orchestrator_core::engine::{
    AgentConnector, AgentError, AgentErrorKind, ArtifactChunk, Content, RemoteState, SendRequest,
    Update, Updates,
};
use orchestrator_core::workflow::AgentTarget;

use super::file::{Act, Reply, TestCase};

/// A message an agent was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub agent: String,
    pub step: String,
    pub item: Option<usize>,
    pub text: Option<String>,
    pub data: Option<Map<String, Value>>,
    /// The task it continues (an answer to the agent's question).
    pub task_id: Option<String>,
}

impl Sent {
    pub fn to_json(&self) -> Value {
        json!({
            "step": self.step, "item": self.item, "text": self.text,
            "data": self.data, "task_id": self.task_id,
        })
    }
}

/// A script and how far it has been read.
#[derive(Debug)]
struct Script {
    replies: Vec<Reply>,
    next: usize,
}

impl Script {
    fn new(replies: &[Reply]) -> Self {
        Script {
            replies: replies.to_vec(),
            next: 0,
        }
    }

    /// The next reply; the last once they are all given.
    fn take(&mut self) -> Option<Reply> {
        let i = self.next.min(self.replies.len().checked_sub(1)?);
        self.next += 1;
        Some(self.replies[i].clone())
    }
}

#[derive(Debug, Default)]
struct State {
    by_step: BTreeMap<String, Script>,
    by_agent: BTreeMap<String, Script>,
    sent: Vec<Sent>,
    tasks: usize,
}

/// The agents of one test.
#[derive(Clone)]
pub struct ScriptedAgents {
    /// Skill → the agent offering it (the first, by name).
    skills: BTreeMap<String, String>,
    state: Arc<Mutex<State>>,
    /// The child runs of its workflow steps (those it does not script).
    pub children: Arc<super::child::ChildRuns>,
}

impl ScriptedAgents {
    pub fn new(case: &TestCase) -> Self {
        let mut skills = BTreeMap::new();
        for (name, a) in &case.agents {
            for s in &a.skills {
                skills.entry(s.clone()).or_insert_with(|| name.clone());
            }
        }
        let state = State {
            by_step: (case.steps.iter())
                .map(|(k, r)| (k.clone(), Script::new(r)))
                .collect(),
            by_agent: (case.agents.iter())
                .map(|(k, a)| (k.clone(), Script::new(&a.replies)))
                .collect(),
            ..State::default()
        };
        ScriptedAgents {
            children: Arc::new(super::child::ChildRuns::new(
                case.children.clone(),
                case.starter.clone(),
            )),
            skills,
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every message sent, by agent, in the order sent.
    pub fn sent(&self) -> BTreeMap<String, Vec<Sent>> {
        let mut out: BTreeMap<String, Vec<Sent>> = BTreeMap::new();
        for s in &self.lock().sent {
            out.entry(s.agent.clone()).or_default().push(s.clone());
        }
        out
    }

    /// The agent a request goes to, its reply, and the task it makes or continues.
    fn answer(&self, request: &SendRequest) -> Result<(String, Reply, String), AgentError> {
        let agent = match &request.target {
            AgentTarget::Named(a) => a.to_string(),
            AgentTarget::Skill(s) => self
                .skills
                .get(s)
                .cloned()
                .unwrap_or_else(|| format!("skill:{s}")),
            AgentTarget::Workflow(w) => orchestrator_core::workflow::child_agent(w.as_str()),
        };
        let mut state = self.lock();
        let step = request.step.as_str();
        // The item's own script, the step's, then the agent's.
        let item = request.item.map(|i| format!("{step}[{i}]"));
        let key = item
            .filter(|k| state.by_step.contains_key(k))
            .or_else(|| state.by_step.contains_key(step).then(|| step.to_owned()));
        let reply = match key {
            Some(k) => state.by_step.get_mut(&k).and_then(Script::take),
            None => state.by_agent.get_mut(&agent).and_then(Script::take),
        };
        state.sent.push(Sent {
            agent: agent.clone(),
            step: step.to_owned(),
            item: request.item,
            text: request.text.clone(),
            data: request.data.clone(),
            task_id: request.task_id.clone(),
        });
        let Some(reply) = reply else {
            // The file's check makes this unreachable for a named agent; said plainly if not.
            let why = format!("the test scripts no reply for step `{step}` (agent `{agent}`)");
            return Err(AgentError::new(AgentErrorKind::Refused, why));
        };
        let task = match &request.task_id {
            Some(t) => t.clone(),
            None => {
                state.tasks += 1;
                format!("{agent}-task-{}", state.tasks)
            }
        };
        Ok((agent, reply, task))
    }
}

/// The updates an agent would send for `reply`.
fn updates(agent: String, task: String, act: Act) -> Vec<Result<Update, AgentError>> {
    let started = Update::Started {
        agent,
        task_id: Some(task),
    };
    let status = |state, message: Option<String>| Update::Status { state, message };
    match act {
        Act::Complete { text, stream, data } => {
            let mut out = vec![Ok(started)];
            let mut chunks: Vec<Vec<Content>> = match text {
                Some(t) => vec![vec![Content::Text(t)]],
                None => stream.into_iter().map(|t| vec![Content::Text(t)]).collect(),
            };
            if let Some(d) = data {
                match chunks.last_mut() {
                    Some(last) => last.push(Content::Data(d)),
                    None => chunks.push(vec![Content::Data(d)]),
                }
            }
            let n = chunks.len();
            for (i, parts) in chunks.into_iter().enumerate() {
                out.push(Ok(Update::Artifact(ArtifactChunk {
                    artifact_id: "result".into(),
                    name: Some("result".into()),
                    parts,
                    append: i > 0,
                    last_chunk: i + 1 == n,
                })));
            }
            out.push(Ok(status(RemoteState::Completed, None)));
            out
        }
        Act::Fail(why) => vec![Ok(started), Ok(status(RemoteState::Failed, Some(why)))],
        Act::Reject(why) => vec![Ok(started), Ok(status(RemoteState::Rejected, Some(why)))],
        Act::Cancel(why) => vec![Ok(started), Ok(status(RemoteState::Canceled, Some(why)))],
        Act::Ask(q) => vec![Ok(started), Ok(status(RemoteState::InputRequired, Some(q)))],
        Act::Down(_) => unreachable!("a reply that is down sends nothing"),
    }
}

impl ScriptedAgents {
    /// The workflow a request runs as a child run, when the test does not script its
    /// step (or item).
    fn child_of(&self, request: &SendRequest) -> Option<String> {
        let workflow = match &request.target {
            AgentTarget::Workflow(w) => w.as_str(),
            AgentTarget::Named(a) => a
                .as_str()
                .strip_prefix(orchestrator_core::workflow::CHILD_PREFIX)?,
            AgentTarget::Skill(_) => return None,
        };
        let step = request.step.as_str();
        let item = request.item.map(|i| format!("{step}[{i}]"));
        let state = self.lock();
        let scripted = state.by_step.contains_key(step)
            || item.is_some_and(|k| state.by_step.contains_key(&k));
        (!scripted).then(|| workflow.to_owned())
    }
}

impl AgentConnector for ScriptedAgents {
    fn send(&self, request: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        if let Some(workflow) = self.child_of(&request) {
            self.lock().sent.push(Sent {
                agent: orchestrator_core::workflow::child_agent(&workflow),
                step: request.step.to_string(),
                item: request.item,
                text: request.text.clone(),
                data: request.data.clone(),
                task_id: request.task_id.clone(),
            });
            let started = self.children.send(&workflow, request);
            return Box::pin(async move { started });
        }
        let answered = self.answer(&request);
        Box::pin(async move {
            let (agent, reply, task) = answered?;
            if let Some(d) = reply.delay {
                tokio::time::sleep(d).await;
            }
            if let Act::Down(why) = reply.act {
                let why = if why.is_empty() {
                    format!("cannot reach agent `{agent}`")
                } else {
                    why
                };
                return Err(AgentError::new(AgentErrorKind::Transport, why));
            }
            let mut said = updates(agent, task, reply.act);
            if let Some(u) = reply.usage {
                // After the task's start, before its end.
                said.insert(1.min(said.len()), Ok(Update::Usage(u)));
            }
            let stream: Updates = Box::pin(futures::stream::iter(said));
            Ok(stream)
        })
    }

    fn cancel(
        &self,
        _run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        if agent.starts_with(orchestrator_core::workflow::CHILD_PREFIX) {
            self.children.cancel(task_id);
        }
        Box::pin(async { Ok(()) })
    }
}

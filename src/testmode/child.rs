//! Workflow steps in a test: the child workflow runs for real, on the test's engine and
//! its scripted agents, as a child run (as `serve` runs it, but without a server): its
//! questions become the parent step's (answered by `[answers]` for that step), its
//! result the step's, a cancel of the parent step cancels it. A step the test scripts
//! (`[steps.ID]`) is answered from its replies instead.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use orchestrator_core::access::{Actor, Origin};
use orchestrator_core::engine::{
    AgentError, AgentErrorKind, Answer, ArtifactChunk, Content, Engine, ParentRun, RemoteState,
    RunControl, RunEvent, RunEvents, RunState, SendRequest, Update, Updates, Usage,
};
use orchestrator_core::workflow::{Workflow, child_agent};

/// A child run under way.
struct Child {
    control: RunControl,
    /// Its events, while no stream reads them (between a question and its answer).
    events: Option<RunEvents>,
    /// What it used so far (each report the total).
    used: Usage,
}

/// The child runs of one test.
#[derive(Default)]
pub struct ChildRuns {
    /// The test's engine, while the test runs (cleared after: the engine holds the
    /// agents that hold this).
    engine: Mutex<Option<Engine>>,
    /// The workflows the test's workflow runs, by id.
    workflows: BTreeMap<String, Arc<Workflow>>,
    starter: Option<Actor>,
    runs: Mutex<HashMap<String, Child>>,
    started: Mutex<usize>,
}

impl ChildRuns {
    pub fn new(workflows: BTreeMap<String, Arc<Workflow>>, starter: Option<Actor>) -> Self {
        ChildRuns {
            workflows,
            starter,
            ..ChildRuns::default()
        }
    }

    /// Child runs start on `engine` (`None`: the test is over).
    pub fn bind(&self, engine: Option<Engine>) {
        *self.engine.lock().unwrap_or_else(|p| p.into_inner()) = engine;
    }

    fn refused(why: String) -> AgentError {
        AgentError::new(AgentErrorKind::Refused, why)
    }

    /// Starts workflow `workflow` as a child run of `req`'s run, or (with a task) gives
    /// its question the answer `req` carries; what follows, as updates.
    pub fn send(self: &Arc<Self>, workflow: &str, req: SendRequest) -> Result<Updates, AgentError> {
        let agent = child_agent(workflow);
        if let Some(task) = req.task_id {
            let control = {
                let runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
                runs.get(&task).map(|c| c.control.clone())
            };
            let control = control.ok_or_else(|| Self::refused(format!("no child run {task}")))?;
            let answer = Answer {
                text: req.text,
                data: req.data,
                by: req.answered_by.map(|b| *b).or_else(|| self.starter.clone()),
            };
            let this = self.clone();
            let stream = futures::stream::once(async move {
                match control.answer(None, None, answer).await {
                    Ok(_) => Ok(this.follow(task, agent, false)),
                    Err(e) => Err(Self::refused(e.to_string())),
                }
            });
            return Ok(Box::pin(futures::StreamExt::flat_map(
                stream,
                |r| match r {
                    Ok(updates) => updates,
                    Err(e) => Box::pin(futures::stream::iter([Err(e)])),
                },
            )));
        }
        let child = (self.workflows.get(workflow).cloned())
            .ok_or_else(|| Self::refused(format!("workflow `{workflow}` is not loaded")))?;
        let engine = (self
            .engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone())
        .ok_or_else(|| Self::refused("the test is over".into()))?;
        let id = {
            let mut n = self.started.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            format!("{workflow}-run-{n}")
        };
        let origin = Origin {
            initiator: self.starter.clone(),
            parent: Some(ParentRun {
                run: req.run_id.clone(),
                step: req.step.to_string(),
                item: req.item,
                depth: 1,
            }),
            ..Origin::default()
        };
        let input = req.data.unwrap_or_default();
        let handle = engine
            .start_by(child, &input, id.clone(), origin)
            .map_err(|p| {
                Self::refused(format!(
                    "workflow `{workflow}` refused its input: {}",
                    p.join("; ")
                ))
            })?;
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).insert(
            id.clone(),
            Child {
                control: handle.control,
                events: Some(handle.events),
                used: Usage::default(),
            },
        );
        Ok(self.follow(id, agent, true))
    }

    /// Cancels child run `task`.
    pub fn cancel(&self, task: &str) {
        if let Some(c) = self
            .runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(task)
        {
            c.control.cancel();
        }
    }

    /// The child run's events as updates, until it asks or ends.
    fn follow(self: &Arc<Self>, id: String, agent: String, first: bool) -> Updates {
        let mut said = VecDeque::new();
        if first {
            said.push_back(Update::Started {
                agent,
                task_id: Some(id.clone()),
            });
        }
        let this = self.clone();
        let events = {
            let mut runs = this.runs.lock().unwrap_or_else(|p| p.into_inner());
            runs.get_mut(&id).and_then(|c| c.events.take())
        };
        let state = (this, id, events, said, false);
        Box::pin(futures::stream::unfold(
            state,
            |(this, id, mut events, mut said, mut done)| async move {
                loop {
                    if let Some(u) = said.pop_front() {
                        return Some((Ok(u), (this, id, events, said, done)));
                    }
                    if done {
                        return None;
                    }
                    let next = events.as_mut()?.recv().await?;
                    match next {
                        RunEvent::Question { prompt, .. } => {
                            said.push_back(Update::Status {
                                state: RemoteState::InputRequired,
                                message: Some(prompt),
                            });
                            // Read again once it is answered.
                            let mut runs = this.runs.lock().unwrap_or_else(|p| p.into_inner());
                            if let Some(c) = runs.get_mut(&id) {
                                c.events = events.take();
                            }
                            done = true;
                        }
                        RunEvent::Usage { added, .. } => {
                            let mut runs = this.runs.lock().unwrap_or_else(|p| p.into_inner());
                            if let Some(c) = runs.get_mut(&id) {
                                c.used.add(&added);
                                said.push_back(Update::Usage(c.used));
                            }
                        }
                        RunEvent::Output { text, data } => {
                            let mut parts = Vec::new();
                            if let Some(t) = text {
                                parts.push(Content::Text(t));
                            }
                            if let Some(serde_json::Value::Object(d)) = data {
                                parts.push(Content::Data(d));
                            }
                            said.push_back(Update::Artifact(ArtifactChunk {
                                artifact_id: "result".into(),
                                name: Some("result".into()),
                                parts,
                                append: false,
                                last_chunk: true,
                            }));
                        }
                        RunEvent::Run { state, message } if state.is_terminal() => {
                            let state = match state {
                                RunState::Completed => RemoteState::Completed,
                                RunState::Canceled => RemoteState::Canceled,
                                _ => RemoteState::Failed,
                            };
                            said.push_back(Update::Status { state, message });
                            done = true;
                        }
                        _ => {}
                    }
                }
            },
        ))
    }
}

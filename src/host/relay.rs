//! The relay: a run's events, as the engine reports them, become the upstream task's
//! status and artifact updates — each step's state with its metadata, every agent's
//! artifacts as `step/artifactId`, questions as `input-required`, the result at the end.

use super::detail::StepUpdate;
use super::*;
use crate::engine::StepState;

impl Orchestrator {
    /// Relays a run's events to the upstream task until the run ends; answers to its
    /// questions reach it through the task's entry in `tasks`. A client's cancel
    /// (`stop.0`) cancels the run; a server's stop (`stop.1`) only ends the relay: the
    /// run is left as it stands in the store, for the next server to resume, and no
    /// cancel reaches any agent. `meter` (boxed: every waiting run holds this future)
    /// counts the run's events in the metrics.
    pub(super) async fn follow(
        &self,
        task_id: &TaskId,
        stop: (&CancellationToken, &CancellationToken),
        events: &EventSink,
        workflow: &Workflow,
        mut run: RunHandle,
        mut meter: Box<super::meter::RunMeter>,
    ) -> Result<(), RpcError> {
        let (cancel, shutdown) = stop;
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
                () = shutdown.cancelled() => {
                    tracing::info!(task_id = %task_id, "the server is stopping; the run is left for the next one to resume");
                    break;
                }
            };
            let Some(event) = event else { break };
            let end = matches!(&event, RunEvent::Run { state, .. } if state.is_terminal());
            meter.observe(&event);
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
}

pub(super) fn pending_json(step: &str, item: Option<usize>, prompt: &str) -> Value {
    json!({ "step": step, "item": item, "prompt": prompt })
}

/// What the task says while questions wait: the one question's prompt, or each step's
/// with how to answer one at a time; and the `pendingQuestions` metadata.
pub(super) fn waiting_message(pending: &[Value]) -> Message {
    let text = if pending.len() == 1 {
        pending[0]["prompt"].as_str().unwrap_or("").to_owned()
    } else {
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
        format!(
            "Several questions are waiting; answer one at a time with metadata {{\"step\": ...}}:\n{}",
            prompts.join("\n")
        )
    };
    agent_message(&text, Some(json!({ "pendingQuestions": pending })))
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
                    (TaskState::InputRequired, Some(waiting_message(&pending)))
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
            let meta = StepUpdate {
                step: step.to_string(),
                item,
                state,
                attempt,
                agent,
                downstream_task_id: task_id,
                message: message.clone(),
            }
            .to_map();
            if !matches!(state, StepState::InputRequired | StepState::AuthRequired) {
                // The step moved on: its question, if it had one, is answered or gone.
                view.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .questions
                    .retain(|(s, i, _)| !(s == step.as_str() && *i == item));
            }
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

//! The relay: a run's events, as the engine reports them, become the upstream task's
//! status and artifact updates — each step's state with its metadata, every agent's
//! artifacts as `step/artifactId`, questions as `input-required`, the result at the end.

use super::detail::{PendingQuestion, RUN_KEY, RunDetail, StepUpdate};
use super::{Conversation, Orchestrator, agent_message, audit, status_event};
use a2a::RpcError;
use a2a::server::{EventSink, Queued, SinkError};
use a2a::store::StoreError;
use a2a::types::{Artifact, Message, Part, StreamEvent, TaskId, TaskState, Timestamp};
use orchestrator_core::engine::{RunControl, RunEvent, RunHandle, RunState, Told};
use orchestrator_core::workflow::Workflow;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use tokio_util::sync::CancellationToken;

/// A run as the relay takes it: its handle (its events, and its control, which reads its
/// detail); its meter, which counts its events in the metrics (boxed: every waiting run
/// holds the relay's future).
pub(super) struct Relayed {
    pub run: RunHandle,
    pub meter: Box<super::meter::RunMeter>,
    /// A resumed run whose task waited for its client: its questions are asked again.
    pub asks_again: bool,
}

impl Relayed {
    /// A run just started (or retried), with `meter`.
    pub fn started(run: RunHandle, meter: Box<super::meter::RunMeter>) -> Relayed {
        Relayed {
            run,
            meter,
            asks_again: false,
        }
    }
}

/// How long a resumed run's answers wait for it to ask again before they are let in
/// all the same (and told, if it has not, that no question waits).
const ASKING_AGAIN: std::time::Duration = std::time::Duration::from_secs(5);

impl Orchestrator {
    /// Relays a run's events to the upstream task until the run ends; answers to its
    /// questions reach it through the task's entry in `tasks`. A client's cancel
    /// (`stop.0`) cancels the run; a server's stop (`stop.1`) only ends the relay: the
    /// run is left as it stands in the store, for the next server to resume, and no
    /// cancel reaches any agent.
    pub(super) async fn follow(
        &self,
        task_id: &TaskId,
        stop: (&CancellationToken, &CancellationToken),
        events: &EventSink,
        workflow: &Workflow,
        relayed: Relayed,
    ) -> Result<(), RpcError> {
        let Relayed {
            mut run,
            mut meter,
            asks_again,
        } = relayed;
        let (cancel, shutdown) = stop;
        // Answers reach the run through its entry: a resumed run whose task waited for
        // its client is marked until it has asked again (or ended), so that an answer
        // sent meanwhile waits for its question (see `resumed_run`); at the latest when
        // `asking_again` ends (made only then: a timer would cost every run).
        self.register(task_id, &run.control, asks_again);
        let mut asking_again = asks_again.then(|| Box::pin(tokio::time::sleep(ASKING_AGAIN)));
        let mut canceled = false;
        // Events are queued, not sent one at a time: the task stores those that wait
        // together in one write, so a durable store's commits do not pace the run.
        let mut unsettled: VecDeque<Queued> = VecDeque::new();
        let mut refused = false;
        let mut refuse = |e: SinkError, control: &RunControl| {
            if let SinkError::TooLarge(why) = &e {
                // The engine's bounds (`artifact_parts`) keep a run's artifacts within
                // what a task may hold; an event past them is left out of the task,
                // and the run goes on.
                tracing::warn!(task_id = %task_id, "an event was left out of the task: {why}");
                return;
            }
            if std::mem::replace(&mut refused, true) {
                return;
            }
            if matches!(e, SinkError::Store(StoreError::Fenced(_))) {
                // Another replica runs the task now: this one stops where it stands,
                // canceling nothing (the run is that replica's to go on with).
                tracing::info!("another replica took this task over; halting its run here");
                control.halt();
            } else if matches!(e, SinkError::Store(_) | SinkError::Closed) {
                // The store failed for good, or the server is stopping: never a reason
                // to cancel anybody's run. It halts where it stands, as after a crash,
                // for a restart (or another replica) to resume from the store.
                tracing::warn!(error = %e, "the task store cannot take the run's events; halting the run (it resumes from the store)");
                control.halt();
            } else {
                tracing::debug!(error = %e, "the upstream task no longer takes events; canceling the run");
                control.cancel();
            }
        };
        // Made once, not at every event (each would add a waiter to the token's list
        // and take it out again); boxed, as the relay's future is held by every run.
        let mut canceling = Box::pin(cancel.cancelled());
        let mut stopping = Box::pin(shutdown.cancelled());
        // The state of the last status update sent: a step's move that would leave it
        // as it is, with nothing to say, goes to followers only (see `translate`).
        let mut state = None;
        loop {
            // The run's events first: the cancel and the shutdown are looked at (each
            // token's lock taken) only while none is ready. A run's events cannot
            // starve them: the channel yields after tokio's budget of receives.
            let event = tokio::select! {
                biased;
                e = run.events.recv() => e,
                () = async { if let Some(by) = asking_again.as_mut() { by.await } }, if asking_again.is_some() => {
                    asking_again = None;
                    self.register(task_id, &run.control, false);
                    continue;
                }
                () = canceling.as_mut(), if !canceled => {
                    canceled = true;
                    run.control.cancel();
                    continue;
                }
                () = stopping.as_mut() => {
                    tracing::info!(task_id = %task_id, "the server is stopping or handing the task over; the run is left for the next one to resume");
                    run.control.halt();
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
            // Usage moves the detail only: the run's end carries its totals.
            if matches!(event, RunEvent::Usage { .. }) {
                continue;
            }
            // Someone answered: the audit trail (the log, the counter; the detail
            // has it); the task learns of it with the run's next move.
            if let RunEvent::Answered { step, decision, .. } = &event {
                audit::action(
                    &decision.action,
                    &decision.by,
                    task_id.as_str(),
                    Some(step.as_str()),
                );
                continue;
            }
            // What the detail says of the event, read under its lock: artifacts and the
            // output need nothing of it.
            let said = (!matches!(event, RunEvent::Artifact { .. } | RunEvent::Output { .. }))
                .then(|| run.control.read(|told| Said::of(told, &event)));
            let Some(event) = translate(events, workflow, event, said.unwrap_or_default(), state)
            else {
                continue;
            };
            if let StreamEvent::StatusUpdate(update) = &event {
                state = Some(update.status().state());
            }
            match Box::pin(events.queue(event)).await {
                Ok(queued) => unsettled.push_back(queued),
                Err(e) => refuse(e, &run.control),
            }
            if asking_again.is_some() && (end || run.control.read(|t| t.waiting().next().is_some()))
            {
                asking_again = None;
                self.register(task_id, &run.control, false);
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
        self.inner.behalf.end(task_id.as_str());
        Ok(())
    }
}

impl Orchestrator {
    /// The run of `task_id` as answers and readers reach it (see [`Conversation`]).
    fn register(&self, task_id: &TaskId, control: &RunControl, asks_again: bool) {
        self.tasks().insert(
            task_id.clone(),
            Conversation::Running {
                control: control.clone(),
                asks_again,
            },
        );
        self.inner.registered.notify_waiters();
    }
}

/// What the task says while questions wait: the one question's prompt, or each step's
/// with how to answer one at a time; the questions again in a data part.
pub(super) fn waiting_message(pending: &[PendingQuestion]) -> Message {
    let text = if let [only] = pending {
        only.prompt.clone()
    } else {
        let prompts: Vec<String> = pending
            .iter()
            .map(|q| format!("- {}: {}", q.step, q.prompt))
            .collect();
        format!(
            "Several questions are waiting; answer one at a time with metadata {{\"step\": ...}}:\n{}",
            prompts.join("\n")
        )
    };
    agent_message(&text, Some(json!({ "pendingQuestions": pending })))
}

/// A status update's metadata: the run's detail as it now stands.
pub(super) fn run_metadata(detail: &RunDetail) -> Map<String, Value> {
    let mut meta = Map::from_iter([(RUN_KEY.to_owned(), detail.to_value())]);
    // What the run used so far, as an agent reports it: an orchestrator calling this
    // one adds it to its own run's (cost across hops).
    crate::connect::usage::write(&detail.usage, &mut meta);
    meta
}

/// What the run's detail says as an event is taken: whether questions wait for the
/// client, the detail for the status's metadata (on the run's waits and end, and on
/// questions), the questions to list (when the run asks), and the time it records.
#[derive(Default)]
struct Said {
    asks: bool,
    meta: Map<String, Value>,
    pending: Vec<PendingQuestion>,
    at: Timestamp,
}

impl Said {
    fn of(told: &Told, event: &RunEvent) -> Said {
        // The detail rides on the run's waits and its end, and on questions (few per
        // run, and what a restart resumes from); a step's move carries only its
        // update, and a reader of a running task gets the rest from `describe`.
        let carries_detail = match event {
            RunEvent::Run { state, .. } => *state != RunState::Working,
            RunEvent::Question { .. } => true,
            _ => false,
        };
        let asking = matches!(
            event,
            RunEvent::Run {
                state: RunState::InputRequired,
                ..
            }
        );
        Said {
            // Questions whose answers are on their way to the run do not wait for the
            // client: were they said to, a client could take its turn as over.
            asks: told.detail().state == RunState::InputRequired && told.waiting().next().is_some(),
            meta: match carries_detail {
                true => run_metadata(told.detail()),
                false => Map::new(),
            },
            pending: match asking {
                true => told.waiting().cloned().collect(),
                false => Vec::new(),
            },
            // The time the detail records, to the nanosecond it keeps.
            at: Timestamp::parse(told.at()).unwrap_or_else(|_| Timestamp::now()),
        }
    }
}

/// Turns one run event, just taken, into the upstream task's event, with what the
/// detail `said` of it; the run's and the questions' status updates carry the run's
/// detail as it stands after the event. None for a step's move that nobody would read:
/// with no follower yet (see [`EventSink::followed`]), one with nothing to say (no
/// message) that leaves the task in the state it was last said to be in (`state`) — it
/// would change nothing in the task but its status time. The run's detail records it
/// all the same.
fn translate(
    events: &EventSink,
    workflow: &Workflow,
    event: RunEvent,
    said: Said,
    state: Option<TaskState>,
) -> Option<StreamEvent> {
    let Said {
        asks,
        mut meta,
        pending,
        at: now,
    } = said;
    // While questions wait the task stays `input-required`, whatever else moves.
    let waiting = if asks {
        TaskState::InputRequired
    } else {
        TaskState::Working
    };
    if let RunEvent::Step { message: None, .. } = &event
        && state == Some(waiting)
        && !events.followed()
    {
        return None;
    }
    if let Some(update) = StepUpdate::of(&event) {
        // The step's move is the update's metadata; the run's detail is not copied
        // into every step's update (readers of a live task get it from `describe`).
        // Only a move with something to say (why a step failed, what it waits for) is
        // a message too: a message per move would be a history entry per move, and
        // most moves (working, completed) say nothing the metadata does not.
        let text = update.message.as_ref().map(|m| {
            let label = match update.item {
                Some(i) => format!("`{}`[{i}]", update.step),
                None => format!("`{}`", update.step),
            };
            agent_message(&format!("{label} {}: {m}", update.state), None)
        });
        meta = update.into_map();
        return Some(status_event(events, waiting, text, Some(meta), now));
    }
    Some(match event {
        RunEvent::Run { state, message } => {
            let (st, msg) = match state {
                RunState::Working => (TaskState::Working, None),
                // Every question it waited for was answered meanwhile (the answers are
                // on their way to the run): nothing waits for the client.
                RunState::InputRequired if pending.is_empty() => (TaskState::Working, None),
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
            status_event(events, st, msg, Some(meta), now)
        }
        // (A step event was taken above; an answer and usage are taken by the relay.)
        RunEvent::Step { .. }
        | RunEvent::Question { .. }
        | RunEvent::Answered { .. }
        | RunEvent::Usage { .. } => status_event(events, TaskState::Working, None, Some(meta), now),
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
            let mut artifact = Artifact::new(id, chunk.parts.iter().map(part).collect());
            artifact.name = chunk.name.clone().unwrap_or_default();
            // In the keys' order (see `StepUpdate::into_map`).
            let mut meta = Map::new();
            meta.insert("agent".into(), Value::from(agent));
            meta.insert("artifactId".into(), json!(chunk.artifact_id));
            meta.insert("item".into(), json!(item));
            meta.insert("step".into(), json!(step.as_str()));
            artifact.metadata = Some(meta.into());
            events
                .artifact_update(artifact, chunk.append, chunk.last_chunk)
                .into()
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
            let artifact = Artifact::new("result", parts).with_name(workflow.name.clone());
            events.artifact_update(artifact, false, true).into()
        }
    })
}

fn part(c: &orchestrator_core::engine::Content) -> Part {
    use orchestrator_core::engine::Content;
    match c {
        Content::Text(t) => Part::text(t.clone()),
        Content::Data(d) => Part::data(d.clone()),
        Content::File {
            name,
            mime_type,
            uri,
            bytes,
        } => {
            let media_type = mime_type.clone().unwrap_or_default();
            let part = match (uri, bytes) {
                (Some(u), _) => Part::url(u.clone(), media_type),
                // The engine keeps a file's bytes as base64 (as they came): undone here.
                (None, b) => {
                    let text = b.as_deref().unwrap_or_default();
                    let bytes = a2a::types::decode_base64(text).unwrap_or_else(|_| {
                        tracing::warn!(file = ?name, "a file's bytes are not base64; sent empty");
                        Vec::new()
                    });
                    Part::raw(bytes, media_type)
                }
            };
            part.with_filename(name.clone().unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::types::Message;
    use orchestrator_core::engine::{QuestionKind, StepState};
    use orchestrator_core::workflow::StepId;
    use std::sync::Mutex;

    fn question(step: &str) -> RunEvent {
        RunEvent::Question {
            step: StepId::new(step),
            item: None,
            kind: QuestionKind::Approval,
            prompt: format!("{step}?"),
            answerers: Default::default(),
            until: None,
        }
    }

    fn moved(step: &str) -> RunEvent {
        RunEvent::Step {
            step: StepId::new(step),
            item: None,
            state: StepState::Working,
            attempt: 1,
            agent: Some("one".into()),
            task_id: None,
            message: None,
        }
    }

    fn asking() -> RunEvent {
        RunEvent::Run {
            state: RunState::InputRequired,
            message: None,
        }
    }

    fn state(event: StreamEvent) -> TaskState {
        match event {
            StreamEvent::StatusUpdate(u) => u.status().state(),
            other => panic!("not a status update: {other:?}"),
        }
    }

    /// While questions wait, the task is `input-required` whatever step moves; once
    /// the run has taken their answers (or answers are on their way to it, see
    /// `Told::waiting`), a step that moves says `working`.
    #[tokio::test]
    async fn the_task_waits_while_questions_wait_for_the_client() {
        let toml = r#"
[workflow]
id = "w"
description = "two approvals and an agent"
[steps.a]
kind = "approval"
prompt = "a?"
[steps.b]
kind = "approval"
prompt = "b?"
[steps.c]
agent = "one"
message = "c"
"#;
        let w = super::super::test_workflow(toml);
        let events = EventSink::detached(Message::user_text("go"));
        let told = Mutex::new(Told::new(RunDetail::new(&w, Map::new(), "t0".into())));
        let relay = |e: RunEvent| {
            let mut t = told.lock().unwrap();
            t.take(&e, "t1", |_| None);
            let said = Said::of(&t, &e);
            state(translate(&events, &w, e, said, None).unwrap())
        };

        relay(question("a"));
        relay(question("b"));
        assert_eq!(relay(asking()), TaskState::InputRequired);
        assert_eq!(relay(moved("c")), TaskState::InputRequired);
        taken(&told, "a");
        assert_eq!(relay(moved("c")), TaskState::InputRequired, "`b` waits");
        taken(&told, "b");
        assert_eq!(relay(moved("c")), TaskState::Working);
        assert_eq!(relay(asking()), TaskState::Working, "nothing waits");
    }

    /// A step's status update is stamped with the time the run's detail records for
    /// that move, and the run's end with its end.
    #[tokio::test]
    async fn a_status_bears_the_time_the_detail_records() {
        let w = super::super::test_workflow(
            "[workflow]\nid = \"w\"\ndescription = \"d\"\n[steps.c]\nagent = \"one\"\nmessage = \"c\"\n",
        );
        let events = EventSink::detached(Message::user_text("go"));
        let told = Mutex::new(Told::new(RunDetail::new(&w, Map::new(), "t0".into())));
        let stamp = |e: RunEvent, at: &str| match take(&told, &e, at, |t| {
            translate(&events, &w, e.clone(), Said::of(t, &e), None)
        }) {
            Some(StreamEvent::StatusUpdate(u)) => (u.status().timestamp)
                .and_then(|t| t.to_rfc3339().ok())
                .expect("a status time"),
            other => panic!("not a status update: {other:?}"),
        };
        let moved_at = stamp(moved("c"), "2026-12-05T10:00:00Z");
        let ended_at = stamp(
            RunEvent::Run {
                state: RunState::Completed,
                message: None,
            },
            "2026-12-05T10:00:01Z",
        );
        let t = told.lock().unwrap();
        assert_eq!(t.detail().steps[0].started_at.as_ref(), Some(&moved_at));
        assert_eq!(t.detail().ended_at.as_ref(), Some(&ended_at));
    }

    /// Nobody following the task, a step's move with nothing to say that leaves the task
    /// as it was is not sent, and the run's detail records it all the same; a move that
    /// says something, or that moves the task, is sent.
    #[tokio::test]
    async fn a_silent_move_goes_to_followers_only() {
        let w = super::super::test_workflow(
            "[workflow]\nid = \"w\"\ndescription = \"d\"\n[steps.c]\nagent = \"one\"\nmessage = \"c\"\n",
        );
        let events = EventSink::detached(Message::user_text("go"));
        assert!(!events.followed());
        let told = Mutex::new(Told::new(RunDetail::new(&w, Map::new(), "t0".into())));
        let relay = |e: RunEvent, state| {
            take(&told, &e, "t1", |t| {
                translate(&events, &w, e.clone(), Said::of(t, &e), state)
            })
        };
        let working = Some(TaskState::Working);
        assert!(relay(moved("c"), working).is_none());
        assert_eq!(
            told.lock().unwrap().detail().steps[0].state,
            StepState::Working
        );
        assert!(relay(moved("c"), None).is_some(), "the task's first status");
        let asking = Some(TaskState::InputRequired);
        assert!(relay(moved("c"), asking).is_some(), "the task works again");
        let failed = RunEvent::Step {
            step: StepId::new("c"),
            item: None,
            state: StepState::Failed,
            attempt: 1,
            agent: Some("one".into()),
            task_id: None,
            message: Some("the agent is down".into()),
        };
        let Some(StreamEvent::StatusUpdate(said)) = relay(failed, working) else {
            panic!("a move with something to say is sent");
        };
        assert!(said.status().message.is_some());
        assert_eq!(
            told.lock().unwrap().detail().steps[0].state,
            StepState::Failed
        );
    }

    /// What the run does when it takes an answer: the question leaves the detail.
    fn taken(told: &Mutex<Told>, step: &str) {
        told.lock().unwrap().detail_mut().answered(Some(step), None);
    }

    /// The detail moved on by `event` at `at`, then `then` on it.
    fn take<R>(told: &Mutex<Told>, event: &RunEvent, at: &str, then: impl FnOnce(&Told) -> R) -> R {
        let mut t = told.lock().unwrap();
        t.take(event, at, |_| None);
        then(&t)
    }
}

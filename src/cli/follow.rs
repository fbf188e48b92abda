//! Following an orchestrator's task from the terminal, for `demo`, `send --watch` and
//! `runs watch`: its steps drawn live from the status updates' [`StepUpdate`]s, each
//! agent's artifacts printed as they complete, its questions asked at the terminal (or
//! answered automatically) and answered on the same task, to the end of the run. A
//! stream that ends (or breaks) with the run still going — the server restarted, or
//! handed the run to another replica — is subscribed to again, with backoff, for up to
//! [`RECONNECT_FOR`].

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use backoff::Backoff;

use anyhow::Context as _;
use futures::StreamExt;
use serde_json::{Map, Value, json};

use super::progress::{Asker, Progress, label, print_result};
use crate::host::detail::{RunDetail, StepUpdate};
use a2a::client::{A2aClient, ClientError};
use a2a::types::{
    Artifact, GetTaskRequest, Message, Part, SendMessageRequest, StreamEvent,
    SubscribeToTaskRequest, Task, TaskState, TaskStatus,
};

/// How long a follower tries to reach the orchestrator again after its stream ended
/// with the run still going, before it gives up (a restart, a handover to another
/// replica, take seconds).
pub const RECONNECT_FOR: Duration = Duration::from_secs(120);

/// The waits between those tries.
const RECONNECT_WAITS: Backoff =
    Backoff::exponential(Duration::from_millis(250), Duration::from_secs(5));

/// Whether `e` says the orchestrator could not be reached for now (down, restarting,
/// its proxy answering for it), not that it refused.
fn out_of_reach(e: &ClientError) -> bool {
    match e {
        ClientError::Transport { .. } | ClientError::Timeout { .. } => true,
        ClientError::HttpStatus { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

/// Where following starts.
#[derive(Debug)]
pub enum Start {
    /// Streams a new message.
    Send(Box<SendMessageRequest>),
    /// Subscribes to a task already going.
    Watch(String),
}

/// Prints the outcome; the exit code.
pub fn report(state: TaskState, result: Option<&Artifact>) -> std::io::Result<ExitCode> {
    if let Some(r) = result {
        let text: String = r.parts.iter().filter_map(Part::as_text).collect();
        let mut data = Map::new();
        for p in &r.parts {
            if let Some(d) = p.as_object() {
                data.extend(d.clone());
            }
        }
        let name = Some(r.name.as_str()).filter(|n| !n.is_empty());
        print_result(
            name.unwrap_or("result"),
            Some(&text),
            (!data.is_empty()).then_some(Value::Object(data)).as_ref(),
        )?;
    }
    say!("\nworkflow {}", state.as_str())?;
    Ok(if state == TaskState::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// An artifact being received, chunk by chunk.
#[derive(Default)]
struct Assembling {
    text: String,
    step: Option<String>,
    agent: Option<String>,
}

/// Follows a task of the orchestrator at `url` to its end (streaming a new message, or
/// subscribing to a task already going), answering questions on the same task. Returns
/// the final state and the result artifact.
pub async fn drive(
    client: &A2aClient,
    url: &str,
    start: Start,
    asker: Asker,
) -> anyhow::Result<(TaskState, Option<Artifact>)> {
    let mut progress = Progress::new();
    let mut artifacts: HashMap<String, Assembling> = HashMap::new();
    let mut result: Option<Artifact> = None;
    let mut next = Some(start);
    // The last question answered, to notice one asked again.
    let mut repeated: Option<(Option<String>, String)> = None;
    // Whether the task was looked at again after a question came back once.
    let mut looked_again = false;
    // A question shown but left to someone else to answer: the subscription waits on.
    let mut awaiting: Option<(Option<String>, String)> = None;
    // Since when the orchestrator is being reached again, and how often it was tried.
    let mut lost: Option<(Instant, u32)> = None;
    loop {
        if let Some((since, tries)) = lost.as_mut() {
            if since.elapsed() > RECONNECT_FOR {
                progress.finish();
                anyhow::bail!(
                    "lost the orchestrator: it could not be reached for {}s with the run still going (it goes on there; `runs watch` follows it again)",
                    RECONNECT_FOR.as_secs()
                );
            }
            *tries += 1;
            tokio::time::sleep(RECONNECT_WAITS.delay(*tries)).await;
        }
        let watching = matches!(next, Some(Start::Watch(_)));
        let (mut events, mut task_id) = match next.take() {
            Some(Start::Send(request)) => match client.send_message_stream(&request).await {
                Ok(events) => (events, answered_task(&request)),
                Err(e) => {
                    // An answer that arrived after the task ended (its questions were
                    // answered already, by this watcher or another): the task's end is
                    // what there is to show.
                    if let Some(id) = answered_task(&request)
                        && matches!(e, ClientError::Rpc(_))
                        && client
                            .get_task(&GetTaskRequest::new(&id))
                            .await
                            .is_ok_and(|t| t.state().is_terminal())
                    {
                        next = Some(Start::Watch(id.clone()));
                        continue;
                    }
                    return Err(e.into());
                }
            },
            Some(Start::Watch(id)) => {
                // A task that has ended has nothing to stream: its snapshot says it all.
                let task = match client.get_task(&GetTaskRequest::new(&id)).await {
                    Ok(task) => task,
                    Err(e) if lost.is_some() && out_of_reach(&e) => {
                        next = Some(Start::Watch(id));
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                if task.state().is_terminal() {
                    show_detail(&mut progress, &task);
                    let result = task
                        .artifacts
                        .iter()
                        .find(|a| a.artifact_id == "result")
                        .cloned();
                    progress.finish();
                    return Ok((task.state(), result));
                }
                match client.subscribe(&SubscribeToTaskRequest::new(&id)).await {
                    Ok(events) => (events, Some(id)),
                    Err(e) if lost.is_some() && out_of_reach(&e) => {
                        next = Some(Start::Watch(id));
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            None => anyhow::bail!("nothing to follow"),
        };
        let mut last: Option<TaskStatus> = None;
        // The stream broke (the server went away mid-stream).
        let mut broke: Option<ClientError> = None;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) if out_of_reach(&e) || matches!(e, ClientError::Protocol { .. }) => {
                    broke = Some(e);
                    break;
                }
                Err(e) => return Err(e.into()),
            };
            if lost.take().is_some() {
                progress.note("(following the run again)");
            }
            match event {
                StreamEvent::Task(t) => {
                    show_detail(&mut progress, &t);
                    task_id = Some(t.id.clone());
                    let interrupted = t.state().is_interrupted();
                    last = t.status;
                    // A subscription to a waiting task may stay open: what it waits
                    // for is asked now — unless it is the question already shown and
                    // left to others. (A new message's first snapshot may still show
                    // the question it answers, so only a subscription stops here.)
                    let shown = last.as_ref().is_some_and(|s| {
                        let (prompt, step, _) = question(s.message.as_ref());
                        awaiting.as_ref() == Some(&(step, prompt))
                    });
                    if watching && interrupted && !shown {
                        break;
                    }
                }
                StreamEvent::Message(m) => progress.note(&m.text()),
                StreamEvent::StatusUpdate(u) => {
                    task_id = Some(u.task_id.clone());
                    if let Some(meta) = &u.metadata {
                        step_update(&mut progress, meta);
                    }
                    let state = u.status().state();
                    let done = state.is_terminal() || state.is_interrupted();
                    last = u.status;
                    if done {
                        break;
                    }
                }
                StreamEvent::ArtifactUpdate(u) => {
                    let Some(a) = u.artifact else { continue };
                    let id = a.artifact_id.clone();
                    if id == "result" {
                        result = Some(a);
                        continue;
                    }
                    let meta = a.metadata.clone().unwrap_or_default();
                    let step = meta.get("step").and_then(Value::as_str);
                    let item = meta.get("item").and_then(Value::as_u64).map(|i| i as usize);
                    if let Some(step) = step {
                        progress.chunk(step, item);
                    }
                    let entry = artifacts.entry(id.clone()).or_default();
                    if !u.append {
                        entry.text.clear();
                    }
                    entry.step = step.map(|s| label(s, item));
                    entry.agent = meta.get("agent").and_then(Value::as_str).map(str::to_owned);
                    entry
                        .text
                        .push_str(&a.parts.iter().filter_map(Part::as_text).collect::<String>());
                    if u.last_chunk {
                        let done = artifacts.remove(&id).unwrap_or_default();
                        let body: Vec<String> = done
                            .text
                            .trim()
                            .lines()
                            .map(|l| format!("    {l}"))
                            .collect();
                        progress.note(&format!(
                            "── {} · {} ──\n{}",
                            done.step.unwrap_or(id),
                            done.agent.unwrap_or_default(),
                            body.join("\n")
                        ));
                    }
                }
            }
        }
        let going = last
            .as_ref()
            .is_none_or(|s| !s.state().is_terminal() && !s.state().is_interrupted());
        if going && let Some(id) = task_id.clone() {
            // Ended (or broke) with the run still going: the server stopped, or handed
            // the run over. Followed again, from a new snapshot.
            if lost.is_none() {
                let why = broke.map(|e| format!(": {e}")).unwrap_or_default();
                progress.note(&format!(
                    "(the stream ended with the run still going{why}; following it again)"
                ));
                lost = Some((Instant::now(), 0));
            }
            next = Some(Start::Watch(id));
            continue;
        }
        if let Some(e) = broke {
            return Err(e.into());
        }
        let status = last.context("the stream ended before the task had a state")?;
        match status.state() {
            TaskState::InputRequired | TaskState::AuthRequired => {
                let task_id = task_id.context("input-required without a task id")?;
                let (prompt, step, item) = question(status.message.as_ref());
                // An automatic answer the task did not take would be given forever.
                if asker.unattended(step.as_deref())
                    && repeated.as_ref() == Some(&(step.clone(), prompt.clone()))
                {
                    // The answer's stream can end on an update the run sent before the
                    // answer reached it: the task is looked at once more before that.
                    if !looked_again {
                        looked_again = true;
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        next = Some(Start::Watch(task_id));
                        continue;
                    }
                    progress.finish();
                    anyhow::bail!(
                        "the automatic answer was not taken, and the task asks again: {prompt}"
                    );
                }
                if repeated.as_ref() != Some(&(step.clone(), prompt.clone())) {
                    looked_again = false;
                }
                repeated = Some((step.clone(), prompt.clone()));
                let Some(answer) = asker.answer(&progress, step.as_deref(), &prompt) else {
                    // Not this watcher's to decide: shown once, with how to answer it,
                    // and followed until someone does.
                    if awaiting.as_ref() != Some(&(step.clone(), prompt.clone())) {
                        let who = step
                            .as_deref()
                            .map(|s| format!(" ({s})"))
                            .unwrap_or_default();
                        let flag = step
                            .as_deref()
                            .map(|s| format!(" --step {s}"))
                            .unwrap_or_default();
                        let given = step.as_deref().unwrap_or("STEP");
                        progress.note(&format!(
                            "? {prompt}{who}\n  → waiting for an answer (stdin is not a terminal, so none is given from here). Answer it with:\n      a2a-orchestrator runs answer {task_id} ANSWER{flag} --url {url}\n    or watch with --answer {given}=ANSWER, or --yes to answer every question automatically."
                        ));
                    }
                    awaiting = Some((step, prompt));
                    repeated = None;
                    next = Some(Start::Watch(task_id));
                    continue;
                };
                awaiting = None;
                let mut m = Message::user_text(answer);
                m.task_id = task_id;
                if let Some(step) = step {
                    let mut meta = Map::new();
                    meta.insert("step".into(), json!(step));
                    if let Some(i) = item {
                        meta.insert("item".into(), json!(i));
                    }
                    m.metadata = Some(meta.into());
                }
                next = Some(Start::Send(Box::new(SendMessageRequest::new(m))));
            }
            s if s.is_terminal() => {
                let elapsed = progress.finish();
                if let Some(m) = status
                    .message
                    .as_ref()
                    .filter(|_| s != TaskState::Completed)
                {
                    say!("{}", m.text())?;
                }
                say!("(in {:.1}s)", elapsed.as_secs_f64())?;
                return Ok((s, result));
            }
            other => anyhow::bail!("the stream ended with the task still {}", other.as_str()),
        }
    }
}

/// The task a message answers, if it names one.
fn answered_task(request: &SendMessageRequest) -> Option<String> {
    let id = &request.message.as_ref()?.task_id;
    (!id.is_empty()).then(|| id.clone())
}

/// A step's status update (its metadata a [`StepUpdate`]), shown on the step's line.
fn step_update(progress: &mut Progress, meta: &Map<String, Value>) {
    if !meta.contains_key("step") {
        return;
    }
    let Ok(update) = serde_json::from_value::<StepUpdate>(Value::Object(meta.clone())) else {
        return;
    };
    progress.step(
        &update.step,
        update.item,
        update.state.as_str(),
        update.agent.as_deref(),
        update.attempt,
        update.message.as_deref(),
    );
}

/// The steps a task's run detail shows as started, drawn before its updates arrive.
fn show_detail(progress: &mut Progress, task: &Task) {
    let Some(detail) = RunDetail::of_metadata(task.metadata.as_deref()) else {
        return;
    };
    for s in detail.steps.iter().filter(|s| s.started_at.is_some()) {
        progress.step(
            &s.step,
            s.item,
            s.state.as_str(),
            s.agent.as_deref(),
            s.attempts.max(1),
            s.message.as_deref(),
        );
    }
}

/// The first pending question of an input-required status: (prompt, step, item).
fn question(message: Option<&Message>) -> (String, Option<String>, Option<usize>) {
    let Some(m) = message else {
        return ("The orchestrator needs input".into(), None, None);
    };
    let pending = m.parts.iter().find_map(|p| {
        p.as_object()?
            .get("pendingQuestions")
            .and_then(Value::as_array)
            .and_then(|q| q.first())
            .cloned()
    });
    match pending {
        Some(q) => (
            q["prompt"].as_str().unwrap_or_default().to_owned(),
            q["step"].as_str().map(str::to_owned),
            q["item"].as_u64().map(|i| i as usize),
        ),
        None => (m.text(), None, None),
    }
}

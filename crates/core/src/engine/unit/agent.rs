//! An agent step: attempts with retries, each one a message sent (checkpointed first)
//! and its downstream task followed to a final state — artifacts forwarded, the agent's
//! questions put to the client, the step's timeout and deadline enforced by canceling
//! the downstream task — and, after a restart, the task followed again instead of sent.

use super::super::journal::Checkpoint;
use super::super::record::{Outputs, Record};
use super::{CANCEL_TIMEOUT, DEFAULT_ANSWER_WAIT, Failure, Unit, with_state};
use crate::engine::limits::{Exceeded, Tally};
use crate::engine::usage::Usage;
use crate::engine::{
    ArtifactChunk, Content, QuestionKind, RemoteState, RunEvent, SendRequest, StepState, Update,
};
use crate::workflow::{AgentName, AgentTarget};
use futures::StreamExt;
use serde_json::{Map, Value};
use tokio::time::{Instant, sleep_until};

/// What one attempt at an agent step sends, and where it goes on from.
struct Attempt {
    /// Its number, from 1.
    number: u32,
    target: AgentTarget,
    text: Option<String>,
    data: Option<Map<String, Value>>,
    /// The step's deadline, if it has one.
    deadline: Option<Instant>,
    /// The checkpoint (a `Sent`) to go on from, after a restart.
    resume: Option<Checkpoint>,
    /// The message id to send again, when the attempt before may have delivered its
    /// message without telling which task it made (see [`Unit::agent_step`]).
    again: Option<String>,
}

/// The agent an attempt reached, and its task once the agent has said which.
#[derive(Debug, Clone, Default)]
struct Downstream {
    agent: String,
    task_id: Option<String>,
}

/// What ends a send before its agent does.
enum Over {
    /// The attempt's timeout (the step's `timeout`).
    Attempt,
    /// The step's deadline.
    Step,
    /// The run's cancel.
    Canceled,
}

impl Unit {
    /// The id of the message of attempt `attempt`, turn `turn` (0 for the step's own
    /// message, then one per answer sent to the agent's questions): stable, so that a
    /// restart sends the same message with the same id.
    /// What the run has left, for a message going out now: of its budget, and of time
    /// until `until` (the attempt's or the step's end) or the run's deadline.
    fn bounds(&self, until: Instant) -> Option<Box<crate::engine::Bounds>> {
        let budget = self.budget.spend.remaining();
        let end = match self.budget.deadline.get() {
            Some(d) => until.min(*d),
            None => until,
        };
        let far = Instant::now() + DEFAULT_ANSWER_WAIT / 2;
        let within = (end < far).then(|| end.saturating_duration_since(Instant::now()));
        (budget.is_some() || within.is_some())
            .then(|| Box::new(crate::engine::Bounds { budget, within }))
    }

    fn message_id(&self, attempt: u32, turn: u32) -> String {
        use std::fmt::Write;
        // Written piece by piece: `format!` with the item's own `to_string` cost a few
        // thousand instructions for every message sent.
        let (run, step) = (self.run_id.as_str(), self.id().as_str());
        let mut id = String::with_capacity(run.len() + step.len() + 16);
        id.push_str(run);
        id.push(':');
        id.push_str(step);
        let _ = match self.item {
            Some(i) => write!(id, ":{i}:{attempt}:{turn}"),
            None => write!(id, ":-:{attempt}:{turn}"),
        };
        id
    }

    /// Writes a checkpoint, if the run is durable: stored before it returns, or (with
    /// `wait` false) only queued, stored with the run's next write that is waited for.
    async fn checkpoint(
        &self,
        request: &SendRequest,
        attempt: u32,
        turn: u32,
        downstream: &Option<Downstream>,
        wait: bool,
        asking: bool,
    ) {
        let Some(j) = &self.journal else { return };
        let (name, task) = downstream.clone().map(|d| (d.agent, d.task_id)).unzip();
        let c = Checkpoint::Sent {
            attempt,
            turn,
            message_id: request.message_id.clone(),
            agent: name,
            task_id: request.task_id.clone().or(task.flatten()),
            text: request.text.clone(),
            data: request.data.clone(),
            started_at: Some(self.started_at.clone()),
            asking,
        };
        if wait {
            j.unit(self.id().as_str(), self.item, &c).await;
        } else {
            j.queue_unit(self.id().as_str(), self.item, &c).await;
        }
        if j.halted() {
            // Another process runs the run now: nothing is sent from here. The run's
            // task drops this unit where it waits.
            std::future::pending::<()>().await;
        }
    }

    pub(super) async fn agent_step(
        &self,
        target: AgentTarget,
        text: Option<String>,
        data: Option<Map<String, Value>>,
        deadline: Option<Instant>,
    ) -> Record {
        let step = &self.workflow.steps[self.step];
        let policy = step.retry;
        let mut resume = self.resume.clone();
        let mut attempt = match &resume {
            Some(Checkpoint::Sent { attempt, .. }) => *attempt,
            _ => 1,
        };
        // A retry after an unknown outcome — the connection dropped, or the attempt
        // timed out, before the agent said which task the message made — sends the same
        // message id again: an agent that keeps message ids (every agent served by this
        // crate) answers with the task it made instead of running the step twice. Once
        // the task is known, a retry is a new message.
        let mut again: Option<String> = None;
        loop {
            let mut downstream = None;
            let first_id = again.clone().unwrap_or_else(|| self.message_id(attempt, 0));
            let plan = Attempt {
                number: attempt,
                target: target.clone(),
                text: text.clone(),
                data: data.clone(),
                deadline,
                resume: resume.take(),
                again: again.take(),
            };
            // One span per attempt, named after the OpenTelemetry GenAI conventions.
            let agent_name = match &target {
                AgentTarget::Named(a) => a.as_str(),
                AgentTarget::Skill(s) => s.as_str(),
                AgentTarget::Workflow(w) => w.as_str(),
            };
            let span = tracing::info_span!(
                parent: self.run_span.clone(),
                "attempt",
                otel.name = %format!("invoke_agent {agent_name}"),
                otel.kind = "client",
                "gen_ai.operation.name" = "invoke_agent",
                "gen_ai.agent.name" = agent_name,
                step = %step.id,
                attempt = i64::from(attempt),
            );
            let outcome =
                tracing::Instrument::instrument(self.attempt(plan, &mut downstream), span.clone())
                    .await;
            // Logged in the attempt's span: the line carries its step, agent and trace.
            let failed = match &outcome {
                Err(Failure::Retry(why) | Failure::Final(_, why)) => Some(why.as_str()),
                Err(Failure::Deadline) => Some("the step's deadline passed"),
                _ => None,
            };
            if let Some(why) = failed {
                span.in_scope(|| tracing::info!(error = why, "the step's attempt failed"));
            }
            drop(span);
            if downstream.as_ref().is_none_or(|d| d.task_id.is_none()) {
                again = Some(first_id);
            }
            let agent_name = downstream.map(|d| d.agent);
            let mut record = match outcome {
                Ok(outputs) => {
                    let mut r = Record::new(StepState::Completed);
                    r.outputs = outputs;
                    r
                }
                Err(Failure::Retry(reason)) if attempt < policy.max_attempts => {
                    let resume = Instant::now()
                        + policy.schedule().with_jitter(self.jitter()).delay(attempt);
                    if deadline.is_some_and(|d| d <= resume) {
                        with_state(
                            StepState::Failed,
                            format!("{reason}; no time for another attempt before the deadline"),
                        )
                    } else {
                        if !self
                            .before_retry(attempt, agent_name.as_deref(), &reason, resume)
                            .await
                        {
                            return with_state(StepState::Canceled, "canceled".into());
                        }
                        attempt += 1;
                        continue;
                    }
                }
                Err(Failure::Retry(reason)) => {
                    let tries = if attempt > 1 {
                        format!(" (after {attempt} attempts)")
                    } else {
                        String::new()
                    };
                    with_state(StepState::Failed, format!("{reason}{tries}"))
                }
                Err(Failure::Final(state, reason)) => with_state(state, reason),
                Err(Failure::Escalated(reason)) => with_state(StepState::Failed, reason),
                Err(Failure::Canceled(reason)) => with_state(StepState::Canceled, reason),
                Err(Failure::Deadline) => with_state(
                    StepState::Failed,
                    format!(
                        "the step's deadline of {} passed",
                        crate::config::format_duration(step.deadline.unwrap_or_default())
                    ),
                ),
            };
            record.agent = agent_name;
            record.attempts = attempt;
            return record;
        }
    }

    /// One attempt: send, then follow the updates until a final state; `agent` says
    /// which agent (and task) it reached, also when it fails. With `resume` (a `Sent`
    /// checkpoint), the attempt goes on where it was: following the downstream task
    /// again if it is known (and sending the answer it was being sent again if the task
    /// still waits for it), else sending the same message again.
    async fn attempt(
        &self,
        plan: Attempt,
        agent: &mut Option<Downstream>,
    ) -> Result<Outputs, Failure> {
        let Attempt {
            number: attempt,
            target,
            text,
            data,
            deadline,
            resume,
            again,
        } = plan;
        let step = &self.workflow.steps[self.step];
        let mut turn = 0;
        let message_id = |turn: u32| match (&again, turn) {
            (Some(id), 0) => id.clone(),
            _ => self.message_id(attempt, turn),
        };
        let mut outputs = Outputs::default();
        // Boxed: the attempt's future lives as long as the step.
        let mut tally = Box::<Tally>::default();
        let mut last_message: Option<String> = None;
        let mut request = SendRequest {
            run_id: self.run_id.clone(),
            step: self.id().clone(),
            item: self.item,
            target: target.clone(),
            message_id: message_id(turn),
            task_id: None,
            text,
            data,
            bounds: None,
            answered_by: None,
        };
        // After a restart: the downstream task to follow again, and the answer that may
        // not have reached it.
        let mut reattach: Option<(String, String)> = None;
        let mut unsent_answer: Option<SendRequest> = None;
        if let Some(Checkpoint::Sent {
            turn: t,
            message_id,
            agent: name,
            task_id,
            text,
            data,
            asking,
            ..
        }) = resume
        {
            turn = t;
            let continued = SendRequest {
                run_id: self.run_id.clone(),
                step: self.id().clone(),
                item: self.item,
                target: match &name {
                    Some(n) => AgentTarget::Named(AgentName::new(n.clone())),
                    None => target.clone(),
                },
                message_id,
                task_id: if t > 0 { task_id.clone() } else { None },
                text,
                data,
                bounds: None,
                answered_by: None,
            };
            if let (Some(n), Some(task)) = (name, task_id) {
                *agent = Some(Downstream {
                    agent: n.clone(),
                    task_id: Some(task.clone()),
                });
                reattach = Some((n, task));
                // A task that asked again after the last answer had that answer.
                if t > 0 && !asking {
                    unsent_answer = Some(continued.clone());
                }
            }
            request = continued;
        }
        let far = Instant::now() + DEFAULT_ANSWER_WAIT;
        let mut attempt_until = step.timeout.map_or(far, |t| Instant::now() + t);
        let step_until = deadline.unwrap_or(far);
        'send: loop {
            // The first send of a step is announced by its `Started` update; a retry or an
            // answer going back is announced here, before the agent has answered.
            if attempt > 1 || turn > 0 {
                Box::pin(self.state(
                    StepState::Working,
                    attempt,
                    agent.as_ref().map(|a| a.agent.as_str()),
                    None,
                    None,
                ))
                .await;
            }
            let connect = match reattach.take() {
                Some((name, task)) => self.connector.attach(&self.run_id, &name, &task),
                None => {
                    // Each message a call; a new task's reports start from nothing (an
                    // answer's task goes on counting from its own).
                    if request.task_id.is_none() {
                        tally.reported = Usage::default();
                    }
                    // Stored before the message goes out: a restart knows it may have.
                    // (One boxed wait for both: a second wait here grew every unit.)
                    Box::pin(async {
                        self.checkpoint(&request, attempt, turn, agent, true, false)
                            .await;
                        self.used(Usage::CALL, attempt).await;
                    })
                    .await;
                    let mut outgoing = request.clone();
                    outgoing.bounds = self.bounds(attempt_until.min(step_until));
                    self.connector.send(outgoing)
                }
            };
            // The attempt's end, the step's and the run's cancel, made once a send and
            // polled again at every event: made anew for each, a timer would be put in
            // tokio's wheel and taken out again, and a waiter added to the cancel's list
            // and removed, per event. One timer, at the earlier of the two ends (mostly
            // both the same far default): a deadline the step has wins a tie, as a retry
            // after it would end at once; without one, the far default ends the attempt.
            // Boxed: the unit's future is held by every step in flight.
            let canceled = self.cancel.clone().cancelled_owned();
            let has_deadline = deadline.is_some();
            let mut over = Box::pin(async move {
                tokio::select! {
                    () = sleep_until(attempt_until.min(step_until)) => {
                        if has_deadline && step_until <= attempt_until {
                            Over::Step
                        } else {
                            Over::Attempt
                        }
                    }
                    () = canceled => Over::Canceled,
                }
            });
            let sent = tokio::select! {
                r = connect => r,
                o = over.as_mut() => return Err(match o {
                    Over::Attempt => Failure::Retry(self.timed_out(step)),
                    Over::Step => Failure::Deadline,
                    Over::Canceled => Failure::Canceled("canceled".into()),
                }),
            };
            let mut updates = match sent {
                Ok(u) => u,
                Err(e) if e.retryable() => return Err(Failure::Retry(e.message)),
                Err(e) => return Err(Failure::Final(StepState::Failed, e.message)),
            };
            loop {
                let next = tokio::select! {
                    u = updates.next() => u,
                    o = over.as_mut() => {
                        // A message on its way may have made a task the attempt does
                        // not know yet: it is learnt (briefly) so as to be canceled too.
                        if Box::pin(learn_task(&mut updates, agent)).await
                            && let Some(a) = agent.as_ref()
                        {
                            // Said, so that the run's detail names the task canceled.
                            Box::pin(self.state(
                                StepState::Working,
                                attempt,
                                Some(&a.agent),
                                a.task_id.as_deref(),
                                None,
                            ))
                            .await;
                        }
                        let note = Box::pin(self.cancel_downstream(agent)).await;
                        return Err(match o {
                            Over::Attempt => Failure::Retry(self.timed_out(step)),
                            Over::Step => Failure::Deadline,
                            Over::Canceled => {
                                Failure::Canceled(note.unwrap_or_else(|| "canceled".into()))
                            }
                        });
                    }
                };
                if let Some(Ok(u)) = &next
                    && !matches!(u, Update::Artifact(_))
                    && let Err(over) = tally.take(&self.budget, None)
                {
                    return Err(Box::pin(self.refuse_output(agent, over)).await);
                }
                if let Some(Ok(Update::Status { state, .. })) = &next
                    && !matches!(
                        state,
                        RemoteState::InputRequired | RemoteState::AuthRequired
                    )
                {
                    // The task moved on: the answer had reached it.
                    unsent_answer = None;
                }
                match next {
                    Some(Ok(Update::Started { agent: a, task_id })) => {
                        *agent = Some(Downstream {
                            agent: a.clone(),
                            task_id: task_id.clone(),
                        });
                        // The downstream task is known: a restart follows it again. Not
                        // waited for: lost in a crash, the message goes again with its
                        // id, which the agent knows.
                        if task_id.is_some() {
                            Box::pin(self.checkpoint(&request, attempt, turn, agent, false, false))
                                .await;
                        }
                        Box::pin(self.state(
                            StepState::Working,
                            attempt,
                            Some(&a),
                            task_id.as_deref(),
                            None,
                        ))
                        .await;
                    }
                    Some(Ok(Update::Artifact(chunk))) => {
                        if let Err(over) = tally.take(&self.budget, Some(&chunk)) {
                            return Err(Box::pin(self.refuse_output(agent, over)).await);
                        }
                        outputs.apply(&chunk);
                        let name = agent.as_ref().map_or_else(String::new, |a| a.agent.clone());
                        self.emit(RunEvent::Artifact {
                            step: self.id().clone(),
                            item: self.item,
                            agent: name,
                            chunk,
                        })
                        .await;
                    }
                    Some(Ok(Update::Usage(now))) => {
                        Box::pin(self.used(tally.report(now), attempt)).await;
                    }
                    Some(Ok(Update::Charged(added))) => {
                        Box::pin(self.used(added, attempt)).await;
                    }
                    Some(Ok(Update::Model(model))) => {
                        Box::pin(self.used_model(model, attempt)).await;
                    }
                    Some(Ok(Update::Reply(parts))) => {
                        outputs.apply(&ArtifactChunk {
                            artifact_id: "reply".into(),
                            name: None,
                            parts,
                            append: false,
                            last_chunk: true,
                        });
                        return Ok(outputs);
                    }
                    Some(Ok(Update::Status { state, message })) => match state {
                        RemoteState::Working => {
                            if message.is_some() && message != last_message {
                                Box::pin(self.state(
                                    StepState::Working,
                                    attempt,
                                    agent.as_ref().map(|a| a.agent.as_str()),
                                    agent.as_ref().and_then(|a| a.task_id.as_deref()),
                                    message.clone(),
                                ))
                                .await;
                            }
                            last_message = message;
                        }
                        RemoteState::Completed => {
                            if outputs.is_empty()
                                && let Some(m) = message
                            {
                                // An agent that answers only in its final status message.
                                outputs.apply(&ArtifactChunk {
                                    artifact_id: "status-message".into(),
                                    name: None,
                                    parts: vec![Content::Text(m)],
                                    append: false,
                                    last_chunk: true,
                                });
                            }
                            return Ok(outputs);
                        }
                        RemoteState::Failed => {
                            return Err(Failure::Retry(format!(
                                "the agent reported failure{}",
                                message.map(|m| format!(": {m}")).unwrap_or_default()
                            )));
                        }
                        RemoteState::Rejected => {
                            return Err(Failure::Final(
                                StepState::Rejected,
                                format!(
                                    "the agent rejected the task{}",
                                    message.map(|m| format!(": {m}")).unwrap_or_default()
                                ),
                            ));
                        }
                        RemoteState::Canceled => {
                            return Err(Failure::Final(
                                StepState::Failed,
                                format!(
                                    "the agent canceled the task{}",
                                    message.map(|m| format!(": {m}")).unwrap_or_default()
                                ),
                            ));
                        }
                        RemoteState::InputRequired | RemoteState::AuthRequired
                            if unsent_answer.is_some() =>
                        {
                            // The task still waits for the answer sent before the restart.
                            if let Some(answer) = unsent_answer.take() {
                                request = answer;
                            }
                            attempt_until = step.timeout.map_or(far, |t| Instant::now() + t);
                            continue 'send;
                        }
                        RemoteState::InputRequired | RemoteState::AuthRequired => {
                            let Downstream {
                                agent: name,
                                task_id,
                            } = agent.clone().unwrap_or_default();
                            let auth = state == RemoteState::AuthRequired;
                            let st = if auth {
                                StepState::AuthRequired
                            } else {
                                StepState::InputRequired
                            };
                            let prompt = message.unwrap_or_else(|| {
                                format!(
                                    "the agent {name} needs {}",
                                    if auth { "authorization" } else { "more input" }
                                )
                            });
                            Box::pin(self.state(
                                st,
                                attempt,
                                Some(&name),
                                task_id.as_deref(),
                                Some(prompt.clone()),
                            ))
                            .await;
                            // Boxed: the wait is rare, and the answer large. Canceled or
                            // out of time while it waits: so is the downstream task.
                            let answer = Box::pin(async {
                                // Stored before the client is asked: a run resumed
                                // after a crash holds an answer that comes early.
                                self.checkpoint(&request, attempt, turn, agent, true, true)
                                    .await;
                                let kind = QuestionKind::Downstream {
                                    agent: name.clone(),
                                    auth,
                                };
                                let approvers = step.answerers.approvers.clone();
                                let moved_on = self.moved_on(&name, task_id.as_deref());
                                match (self
                                    .ask_unless(kind, prompt, approvers, step_until, moved_on))
                                .await
                                {
                                    Ok(a) => Ok(a.map(|a| a.answer)),
                                    Err(f) => {
                                        self.cancel_downstream(agent).await;
                                        Err(f)
                                    }
                                }
                            })
                            .await?;
                            let Some(answer) = answer else {
                                // Answered elsewhere: the task is followed again from
                                // where it stands.
                                if let Some(task) = task_id {
                                    reattach = Some((name, task));
                                }
                                continue 'send;
                            };
                            // The answer goes to the same downstream task; the wait did not
                            // count against the attempt's timeout.
                            turn += 1;
                            request = SendRequest {
                                run_id: self.run_id.clone(),
                                step: self.id().clone(),
                                item: self.item,
                                target: AgentTarget::Named(AgentName::new(name)),
                                message_id: message_id(turn),
                                task_id,
                                text: answer.text,
                                data: answer.data,
                                bounds: None,
                                answered_by: answer.by.map(Box::new),
                            };
                            attempt_until = step.timeout.map_or(far, |t| Instant::now() + t);
                            continue 'send;
                        }
                    },
                    Some(Err(e)) if e.retryable() => return Err(Failure::Retry(e.message)),
                    Some(Err(e)) => return Err(Failure::Final(StepState::Failed, e.message)),
                    None => {
                        return Err(Failure::Retry(
                            "the agent's stream ended before the task finished".into(),
                        ));
                    }
                }
            }
        }
    }

    /// Completes when downstream task `task_id` of `agent`, waiting for an answer, goes
    /// on without the one this run would give — a child run's question answered on
    /// the child's own task, say. Followed as long as the agent streams it; never
    /// completes when it cannot be followed.
    async fn moved_on(&self, agent: &str, task_id: Option<&str>) {
        let watched = match task_id {
            Some(task) => self.connector.watch(&self.run_id, agent, task).await.ok(),
            None => None,
        };
        if let Some(mut updates) = watched {
            while let Some(Ok(u)) = updates.next().await {
                if let Update::Status { state, .. } = u
                    && !matches!(
                        state,
                        RemoteState::InputRequired | RemoteState::AuthRequired
                    )
                {
                    return;
                }
            }
        }
        std::future::pending().await
    }

    fn timed_out(&self, step: &crate::workflow::Step) -> String {
        format!(
            "the attempt timed out after {}",
            crate::config::format_duration(step.timeout.unwrap_or_default())
        )
    }

    /// What an attempt past one of the run's bounds on agents' output ends with: its
    /// downstream task canceled, and a failure naming the agent and the bound (retried
    /// unless it is the run's own bound).
    async fn refuse_output(&self, agent: &Option<Downstream>, over: Exceeded) -> Failure {
        let name = agent.as_ref().map_or_else(
            || "the agent".to_owned(),
            |a| format!("agent `{}`", a.agent),
        );
        Box::pin(self.cancel_downstream(agent)).await;
        tracing::warn!(step = %self.id(), %over, "{name} sent too much; its task was canceled");
        let message = format!("{name} sent {over}; its task was canceled");
        if over.retryable() {
            Failure::Retry(message)
        } else {
            Failure::Final(StepState::Failed, message)
        }
    }

    /// Cancels the attempt's downstream task, if it has one. Returns a note when the
    /// agent did not cancel.
    async fn cancel_downstream(&self, agent: &Option<Downstream>) -> Option<String> {
        let Downstream {
            agent: name,
            task_id: Some(task),
        } = agent.as_ref()?
        else {
            return None;
        };
        match tokio::time::timeout(
            CANCEL_TIMEOUT,
            self.connector.cancel(&self.run_id, name, task),
        )
        .await
        {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!(
                "canceled; the agent {name} did not cancel its task {task}: {e}"
            )),
            Err(_) => Some(format!(
                "canceled; the agent {name} did not answer the cancel of task {task}"
            )),
        }
    }
}

/// Reads `updates` until they name the downstream task (or end), for at most
/// [`CANCEL_TIMEOUT`], when `agent` does not know it yet: a message sent just before a
/// cancel may have started a task whose id has not come back. Whether it learnt it.
async fn learn_task(updates: &mut crate::engine::Updates, agent: &mut Option<Downstream>) -> bool {
    if agent.as_ref().is_some_and(|a| a.task_id.is_some()) {
        return false;
    }
    let learnt = tokio::time::timeout(CANCEL_TIMEOUT, async {
        while let Some(Ok(u)) = updates.next().await {
            if let Update::Started {
                agent: a,
                task_id: Some(t),
            } = u
            {
                *agent = Some(Downstream {
                    agent: a,
                    task_id: Some(t),
                });
                return true;
            }
        }
        false
    })
    .await;
    learnt.unwrap_or(false)
}

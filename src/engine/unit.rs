//! One unit of work — a step, or one item of a fan-out — run in its own task: render
//! the message, then attempts with retries, per-attempt timeouts, the step's deadline,
//! questions to the upstream client, and cancellation (which cancels the downstream
//! task and stops forwarding its artifacts).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::journal::{Checkpoint, Journal};
use super::record::{Outputs, Record};
use super::types::*;
use crate::workflow::{StepKind, Workflow, inputs_schema};

/// Bound on a `tasks/cancel` call.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait for an answer when nothing else bounds it.
const DEFAULT_ANSWER_WAIT: Duration = Duration::from_secs(24 * 3600);

/// A question for the run loop to put to the client.
pub struct Ask {
    pub step: usize,
    pub item: Option<usize>,
    pub kind: QuestionKind,
    pub prompt: String,
    pub reply: oneshot::Sender<Answer>,
}

/// Everything a unit needs.
pub struct Unit {
    pub workflow: Arc<Workflow>,
    pub step: usize,
    pub item: Option<usize>,
    /// The template context, with `item` and `index` set for a fan-out item. Taken (and
    /// dropped) once the step's templates are rendered: a waiting step does not hold it.
    pub context: Value,
    pub run_id: String,
    pub connector: Arc<dyn AgentConnector>,
    /// Writes `kind = "llm"` steps, when one is configured.
    pub model: Option<Arc<dyn TextModel>>,
    pub events: mpsc::Sender<Box<RunEvent>>,
    pub ask: mpsc::Sender<Box<Ask>>,
    pub cancel: CancellationToken,
    /// Where checkpoints go, when the run is durable.
    pub journal: Option<Journal>,
    /// The checkpoint to go on from (a `Sent`), after a restart.
    pub resume: Option<Checkpoint>,
}

/// How an attempt ended, when not completed.
enum Failure {
    /// Worth another attempt.
    Retry(String),
    /// Final: the step ends in this state.
    Final(StepState, String),
    Canceled(String),
    Deadline,
}

/// A small random fraction in [0, 0.2) for backoff jitter.
fn jitter_factor() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
        % 1000;
    r as f64 / 5000.0
}

impl Unit {
    fn id(&self) -> &crate::workflow::StepId {
        &self.workflow.steps[self.step].id
    }

    async fn emit(&self, event: RunEvent) {
        // The receiver only goes away when the run is being torn down.
        let _ = self.events.send(Box::new(event)).await;
    }

    async fn state(
        &self,
        state: StepState,
        attempt: u32,
        agent: Option<&str>,
        task: Option<&str>,
        message: Option<String>,
    ) {
        self.emit(RunEvent::Step {
            step: self.id().clone(),
            item: self.item,
            state,
            attempt,
            agent: agent.map(str::to_owned),
            task_id: task.map(str::to_owned),
            message,
        })
        .await;
    }

    /// Runs the unit to its end. Its future lives as long as the step and is as large as
    /// its largest state: the kinds other than the common agent step are boxed, and it is
    /// not an `async fn`, which would hold `self` twice (as passed and as bound).
    #[allow(clippy::manual_async_fn)] // see above
    pub fn run(mut self) -> impl std::future::Future<Output = Record> + Send + 'static {
        async move {
            let context = std::mem::take(&mut self.context);
            let step = &self.workflow.steps[self.step];
            let deadline = step.deadline.map(|d| Instant::now() + d);
            match &step.kind {
                StepKind::Agent {
                    target,
                    message,
                    data,
                } => {
                    let text = match message {
                        Some(t) => match self.workflow.templates.render(t, &context) {
                            Ok(s) => Some(s),
                            Err(e) => return failed(e.to_string()),
                        },
                        None => None,
                    };
                    let data = match data {
                        Some(d) => match self.workflow.templates.render_data(d, &context) {
                            Ok(Value::Object(m)) => Some(m),
                            Ok(other) => Some(Map::from_iter([("value".to_owned(), other)])),
                            Err(e) => return failed(e.to_string()),
                        },
                        None => None,
                    };
                    drop(context);
                    self.agent_step(target.clone(), text, data, deadline).await
                }
                StepKind::Approval { prompt } | StepKind::Input { prompt, .. } => {
                    let prompt = match self.workflow.templates.render(prompt, &context) {
                        Ok(p) => p,
                        Err(e) => return failed(e.to_string()),
                    };
                    drop(context);
                    Box::pin(self.question_step(prompt, deadline)).await
                }
                StepKind::Llm {
                    prompt,
                    system,
                    fallback,
                } => {
                    let render = |t: &crate::workflow::template::Template| {
                        self.workflow.templates.render(t, &context)
                    };
                    let prompt = match (render(prompt), system.as_ref().map(render).transpose()) {
                        (Ok(user), Ok(system)) => Prompt { system, user },
                        (Err(e), _) | (_, Err(e)) => return failed(e.to_string()),
                    };
                    let fallback = match fallback.as_ref().map(render).transpose() {
                        Ok(f) => f,
                        Err(e) => return failed(e.to_string()),
                    };
                    drop(context);
                    Box::pin(self.llm_step(prompt, fallback, deadline)).await
                }
            }
        }
    }

    /// Streams the model's answer as one artifact, token by token; on no model, or a
    /// model that fails every attempt, the rendered `fallback` replaces it.
    async fn llm_step(
        &self,
        prompt: Prompt,
        fallback: Option<String>,
        deadline: Option<Instant>,
    ) -> Record {
        let step = &self.workflow.steps[self.step];
        let Some(model) = self.model.clone() else {
            return match fallback {
                Some(text) => self.fallback(text, None, 0).await,
                None => failed(
                    "no language model is configured (`[llm]` in the orchestrator's configuration) and the step has no `fallback`"
                        .into(),
                ),
            };
        };
        let name = model.name().to_owned();
        let policy = step.retry;
        let mut attempt = 1;
        loop {
            Box::pin(self.state(StepState::Working, attempt, Some(&name), None, None)).await;
            let until = step
                .timeout
                .map(|t| Instant::now() + t)
                .into_iter()
                .chain(deadline)
                .min();
            let reason = match self.generate(&*model, &name, prompt.clone(), until).await {
                Ok(outputs) => {
                    let mut r = Record::new(StepState::Completed);
                    r.outputs = outputs;
                    r.agent = Some(name);
                    r.attempts = attempt;
                    return r;
                }
                Err(Failure::Canceled(m)) => return with_state(StepState::Canceled, m),
                Err(Failure::Deadline) => "the model did not finish in time".to_owned(),
                Err(Failure::Retry(m) | Failure::Final(_, m)) => m,
            };
            let wait = policy.delay_before(attempt + 1);
            let wait = wait + wait.mul_f64(jitter_factor());
            let resume = Instant::now() + wait;
            if attempt < policy.max_attempts && deadline.is_none_or(|d| d > resume) {
                if !self
                    .before_retry(attempt, Some(&name), &reason, resume)
                    .await
                {
                    return with_state(StepState::Canceled, "canceled".into());
                }
                attempt += 1;
                continue;
            }
            tracing::warn!(step = %step.id, model = %name, error = %reason, "the language model failed; using the step's fallback");
            return match fallback {
                Some(text) => self.fallback(text, Some((&name, reason)), attempt).await,
                None => {
                    let mut r = failed(format!("the language model failed: {reason}"));
                    r.agent = Some(name);
                    r.attempts = attempt;
                    r
                }
            };
        }
    }

    /// Says that attempt `attempt` failed and waits until `resume` for the next one;
    /// false when the unit is canceled meanwhile.
    async fn before_retry(
        &self,
        attempt: u32,
        agent: Option<&str>,
        reason: &str,
        resume: Instant,
    ) -> bool {
        let wait = resume.saturating_duration_since(Instant::now());
        self.state(
            StepState::Working,
            attempt,
            agent,
            None,
            Some(format!(
                "attempt {attempt} failed: {reason}; retrying in {}ms",
                wait.as_millis()
            )),
        )
        .await;
        tokio::select! {
            () = sleep_until(resume) => true,
            () = self.cancel.cancelled() => false,
        }
    }

    /// The artifact of an llm step: one per unit, named after the step.
    fn llm_artifact(&self, parts: Vec<Content>, append: bool, last_chunk: bool) -> ArtifactChunk {
        ArtifactChunk {
            artifact_id: "text".into(),
            name: Some(self.id().to_string()),
            parts,
            append,
            last_chunk,
        }
    }

    /// Completes an llm step with its fallback text, replacing what a failed model
    /// (`failed`: its name and why it failed) wrote, if anything.
    async fn fallback(
        &self,
        text: String,
        failed: Option<(&str, String)>,
        attempts: u32,
    ) -> Record {
        let (agent, message) = match failed {
            Some((model, why)) => (
                model,
                format!("the language model failed ({why}); writing the fallback"),
            ),
            None => (
                "fallback",
                "no language model is configured; writing the fallback".to_owned(),
            ),
        };
        Box::pin(self.state(
            StepState::Working,
            attempts.max(1),
            Some(agent),
            None,
            Some(message),
        ))
        .await;
        let chunk = self.llm_artifact(vec![Content::Text(text)], false, true);
        let mut r = Record::new(StepState::Completed);
        r.outputs.apply(&chunk);
        self.emit(RunEvent::Artifact {
            step: self.id().clone(),
            item: self.item,
            agent: agent.to_owned(),
            chunk,
        })
        .await;
        r.agent = Some(agent.to_owned());
        r.attempts = attempts;
        r
    }

    /// One attempt at the model: each piece of text is forwarded as soon as the next
    /// one arrives (so that the last can say it is the last).
    async fn generate(
        &self,
        model: &dyn TextModel,
        name: &str,
        prompt: Prompt,
        until: Option<Instant>,
    ) -> Result<Outputs, Failure> {
        let far = Instant::now() + DEFAULT_ANSWER_WAIT;
        let until = until.unwrap_or(far);
        let mut tokens = tokio::select! {
            t = model.stream(prompt) => t.map_err(|e| Failure::Retry(e.to_string()))?,
            () = sleep_until(until) => return Err(Failure::Deadline),
            () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
        };
        let mut outputs = Outputs::default();
        let mut held: Option<String> = None;
        loop {
            let next = tokio::select! {
                n = tokens.next() => n,
                () = sleep_until(until) => return Err(Failure::Deadline),
                () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
            };
            match next {
                Some(Ok(t)) if t.is_empty() => {}
                Some(Ok(t)) => {
                    if let Some(before) = held.replace(t) {
                        self.forward(&mut outputs, name, before, false).await;
                    }
                }
                Some(Err(e)) => return Err(Failure::Retry(e.to_string())),
                None => match held.take() {
                    Some(before) => {
                        self.forward(&mut outputs, name, before, true).await;
                        return Ok(outputs);
                    }
                    None => return Err(Failure::Retry("the model returned no text".into())),
                },
            }
        }
    }

    /// Sends one piece of an llm step's text on, and keeps it.
    async fn forward(&self, outputs: &mut Outputs, model: &str, text: String, last: bool) {
        let chunk = self.llm_artifact(vec![Content::Text(text)], !outputs.is_empty(), last);
        outputs.apply(&chunk);
        self.emit(RunEvent::Artifact {
            step: self.id().clone(),
            item: self.item,
            agent: model.to_owned(),
            chunk,
        })
        .await;
    }

    async fn question_step(&self, prompt: String, deadline: Option<Instant>) -> Record {
        let step = &self.workflow.steps[self.step];
        let kind = match &step.kind {
            StepKind::Input { fields, .. } => QuestionKind::Input {
                schema: inputs_schema(fields),
            },
            _ => QuestionKind::Approval,
        };
        Box::pin(self.state(
            StepState::InputRequired,
            1,
            None,
            None,
            Some(prompt.clone()),
        ))
        .await;
        let wait = step.timeout.unwrap_or(DEFAULT_ANSWER_WAIT);
        let until = deadline.map_or(Instant::now() + wait, |d| d.min(Instant::now() + wait));
        match self.ask(kind, prompt, until).await {
            Ok(answer) => {
                let mut r = Record::new(StepState::Completed);
                r.data = Some(answer.data.unwrap_or_default());
                if let Some(t) = answer.text {
                    r.outputs.apply(&ArtifactChunk {
                        artifact_id: "answer".into(),
                        name: None,
                        parts: vec![Content::Text(t)],
                        append: false,
                        last_chunk: true,
                    });
                }
                r
            }
            Err(Failure::Canceled(m)) => with_state(StepState::Canceled, m),
            Err(_) => failed(format!(
                "no answer within {}",
                crate::config::format_duration(wait)
            )),
        }
    }

    /// Asks the client through the run loop and waits (bounded) for the answer.
    async fn ask(
        &self,
        kind: QuestionKind,
        prompt: String,
        until: Instant,
    ) -> Result<Answer, Failure> {
        let (reply, answer) = oneshot::channel();
        let ask = Ask {
            step: self.step,
            item: self.item,
            kind,
            prompt,
            reply,
        };
        if self.ask.send(Box::new(ask)).await.is_err() {
            return Err(Failure::Canceled("the run ended".into()));
        }
        tokio::select! {
            a = answer => a.map_err(|_| Failure::Canceled("the run ended".into())),
            () = sleep_until(until) => Err(Failure::Deadline),
            () = self.cancel.cancelled() => Err(Failure::Canceled("canceled".into())),
        }
    }

    /// Writes a checkpoint, if the run is durable: stored before it returns, or (with
    /// `wait` false) only queued, stored with the run's next write that is waited for.
    async fn checkpoint(
        &self,
        request: &SendRequest,
        attempt: u32,
        turn: u32,
        agent: &Option<(String, Option<String>)>,
        wait: bool,
    ) {
        let Some(j) = &self.journal else { return };
        let (name, task) = agent.clone().unzip();
        let c = Checkpoint::Sent {
            attempt,
            turn,
            message_id: request.message_id.clone(),
            agent: name,
            task_id: request.task_id.clone().or(task.flatten()),
            text: request.text.clone(),
            data: request.data.clone(),
        };
        if wait {
            j.unit(self.id().as_str(), self.item, &c).await;
        } else {
            j.queue_unit(self.id().as_str(), self.item, &c).await;
        }
    }

    async fn agent_step(
        &self,
        target: crate::workflow::AgentTarget,
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
        loop {
            let mut agent = None;
            let outcome = self
                .attempt(
                    attempt,
                    &target,
                    text.clone(),
                    data.clone(),
                    deadline,
                    &mut agent,
                    resume.take(),
                )
                .await;
            let agent_name = agent
                .as_ref()
                .map(|(a, _): &(String, Option<String>)| a.clone());
            let mut record = match outcome {
                Ok(outputs) => {
                    let mut r = Record::new(StepState::Completed);
                    r.outputs = outputs;
                    r
                }
                Err(Failure::Retry(reason)) if attempt < policy.max_attempts => {
                    let wait = policy.delay_before(attempt + 1);
                    let wait = wait + wait.mul_f64(jitter_factor());
                    let resume = Instant::now() + wait;
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

    /// One attempt: send, then follow the updates until a final state. With `resume` (a
    /// `Sent` checkpoint), the attempt goes on where it was: following the downstream
    /// task again if it is known (and sending the answer it was being sent again if the
    /// task still waits for it), else sending the same message again.
    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        &self,
        attempt: u32,
        target: &crate::workflow::AgentTarget,
        text: Option<String>,
        data: Option<Map<String, Value>>,
        deadline: Option<Instant>,
        agent: &mut Option<(String, Option<String>)>,
        resume: Option<Checkpoint>,
    ) -> Result<Outputs, Failure> {
        let step = &self.workflow.steps[self.step];
        let item = self.item.map_or_else(|| "-".to_owned(), |i| i.to_string());
        let mut turn = 0;
        let message_id =
            |turn: u32| format!("{}:{}:{item}:{attempt}:{turn}", self.run_id, self.id());
        let mut outputs = Outputs::default();
        let mut last_message: Option<String> = None;
        let mut request = SendRequest {
            run_id: self.run_id.clone(),
            target: target.clone(),
            message_id: message_id(turn),
            task_id: None,
            text,
            data,
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
            ..
        }) = resume
        {
            turn = t;
            let continued = SendRequest {
                run_id: self.run_id.clone(),
                target: match &name {
                    Some(n) => crate::workflow::AgentTarget::Named(
                        crate::workflow::AgentName::new(n.clone()),
                    ),
                    None => target.clone(),
                },
                message_id,
                task_id: if t > 0 { task_id.clone() } else { None },
                text,
                data,
            };
            if let (Some(n), Some(task)) = (name, task_id) {
                *agent = Some((n.clone(), Some(task.clone())));
                reattach = Some((n, task));
                if t > 0 {
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
                    agent.as_ref().map(|a| a.0.as_str()),
                    None,
                    None,
                ))
                .await;
            }
            let connect = match reattach.take() {
                Some((name, task)) => self.connector.attach(&name, &task),
                None => {
                    // Stored before the message goes out: a restart knows it may have.
                    Box::pin(self.checkpoint(&request, attempt, turn, agent, true)).await;
                    self.connector.send(request.clone())
                }
            };
            let sent = tokio::select! {
                r = connect => r,
                () = sleep_until(attempt_until) => return Err(Failure::Retry(self.timed_out(step))),
                () = sleep_until(step_until) => return Err(Failure::Deadline),
                () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
            };
            let mut updates = match sent {
                Ok(u) => u,
                Err(e) if e.retryable() => return Err(Failure::Retry(e.message)),
                Err(e) => return Err(Failure::Final(StepState::Failed, e.message)),
            };
            loop {
                let next = tokio::select! {
                    u = updates.next() => u,
                    () = sleep_until(attempt_until) => {
                        Box::pin(self.cancel_downstream(agent)).await;
                        return Err(Failure::Retry(self.timed_out(step)));
                    }
                    () = sleep_until(step_until) => {
                        Box::pin(self.cancel_downstream(agent)).await;
                        return Err(Failure::Deadline);
                    }
                    () = self.cancel.cancelled() => {
                        let note = Box::pin(self.cancel_downstream(agent)).await;
                        return Err(Failure::Canceled(note.unwrap_or_else(|| "canceled".into())));
                    }
                };
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
                        *agent = Some((a.clone(), task_id.clone()));
                        // The downstream task is known: a restart follows it again. Not
                        // waited for: lost in a crash, the message goes again with its
                        // id, which the agent knows.
                        if task_id.is_some() {
                            Box::pin(self.checkpoint(&request, attempt, turn, agent, false)).await;
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
                        outputs.apply(&chunk);
                        let name = agent.as_ref().map_or_else(String::new, |a| a.0.clone());
                        self.emit(RunEvent::Artifact {
                            step: self.id().clone(),
                            item: self.item,
                            agent: name,
                            chunk,
                        })
                        .await;
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
                                let (a, t) = agent.clone().unzip();
                                Box::pin(self.state(
                                    StepState::Working,
                                    attempt,
                                    a.as_deref(),
                                    t.flatten().as_deref(),
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
                                "the agent canceled the task".into(),
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
                            let (name, task_id) = agent.clone().unwrap_or_default();
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
                            let answer = self
                                .ask(
                                    QuestionKind::Downstream {
                                        agent: name.clone(),
                                        auth,
                                    },
                                    prompt,
                                    step_until,
                                )
                                .await?;
                            // The answer goes to the same downstream task; the wait did not
                            // count against the attempt's timeout.
                            turn += 1;
                            request = SendRequest {
                                run_id: self.run_id.clone(),
                                target: crate::workflow::AgentTarget::Named(
                                    crate::workflow::AgentName::new(name),
                                ),
                                message_id: message_id(turn),
                                task_id,
                                text: answer.text,
                                data: answer.data,
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

    fn timed_out(&self, step: &crate::workflow::Step) -> String {
        format!(
            "the attempt timed out after {}",
            crate::config::format_duration(step.timeout.unwrap_or_default())
        )
    }

    /// Sends `tasks/cancel` for the attempt's downstream task, if it has one. Returns a
    /// note when the agent did not cancel.
    async fn cancel_downstream(&self, agent: &Option<(String, Option<String>)>) -> Option<String> {
        let (name, Some(task)) = agent.as_ref()? else {
            return None;
        };
        match tokio::time::timeout(CANCEL_TIMEOUT, self.connector.cancel(name, task)).await {
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

fn with_state(state: StepState, error: String) -> Record {
    let mut r = Record::new(state);
    r.error = Some(error);
    r
}

fn failed(error: String) -> Record {
    with_state(StepState::Failed, error)
}

/// Parses an approval: `data.approved` (a boolean), or a yes/no text.
pub fn approval(answer: &Answer) -> Result<Answer, String> {
    let from_data = answer
        .data
        .as_ref()
        .and_then(|d| d.get("approved"))
        .map(|v| v.as_bool().ok_or("`approved` must be true or false"));
    let approved = match from_data {
        Some(r) => r?,
        None => {
            let text = answer
                .text
                .as_deref()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            let first = text.split_whitespace().next().unwrap_or("");
            match first.trim_matches(|c: char| !c.is_alphanumeric()) {
                "yes" | "y" | "approve" | "approved" | "ok" | "true" => true,
                "no" | "n" | "deny" | "denied" | "reject" | "rejected" | "false" => false,
                _ => return Err("answer yes or no (or send {\"approved\": true|false})".into()),
            }
        }
    };
    let mut data = Map::new();
    data.insert("approved".into(), json!(approved));
    if let Some(t) = &answer.text {
        data.insert("comment".into(), json!(t));
    }
    Ok(Answer {
        text: answer.text.clone(),
        data: Some(data),
    })
}

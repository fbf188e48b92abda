//! A `kind = "llm"` step: the model's answer streamed as one artifact, token by token,
//! with retries; its `fallback` written instead when there is no model or it fails
//! every attempt.

use super::super::record::{Outputs, Record};
use super::{DEFAULT_ANSWER_WAIT, Failure, Unit, failed, with_state};
use crate::engine::{ArtifactChunk, Content, Piece, Prompt, RunEvent, StepState, TextModel, Usage};
use futures::StreamExt;
use tokio::time::{Instant, sleep_until};

impl Unit {
    /// Streams the model's answer as one artifact, token by token; on no model, or a
    /// model that fails every attempt, the rendered `fallback` replaces it.
    pub(super) async fn llm_step(
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
            let reason = match self
                .generate(&*model, &name, prompt.clone(), until, attempt)
                .await
            {
                Ok(outputs) => {
                    let mut r = Record::new(StepState::Completed);
                    r.outputs = outputs;
                    r.agent = Some(name);
                    r.attempts = attempt;
                    return r;
                }
                Err(Failure::Canceled(m)) => return with_state(StepState::Canceled, m),
                Err(Failure::Deadline) => "the model did not finish in time".to_owned(),
                Err(Failure::Retry(m) | Failure::Final(_, m) | Failure::Escalated(m)) => m,
            };
            let resume =
                Instant::now() + policy.schedule().with_jitter(self.jitter()).delay(attempt);
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
        attempt: u32,
    ) -> Result<Outputs, Failure> {
        let far = Instant::now() + DEFAULT_ANSWER_WAIT;
        let until = until.unwrap_or(far);
        // Each attempt a call, as a message to an agent is.
        Box::pin(self.used(Usage::CALL, attempt)).await;
        let mut tokens = tokio::select! {
            t = model.stream(prompt) => t.map_err(|e| Failure::Retry(e.to_string()))?,
            () = sleep_until(until) => return Err(Failure::Deadline),
            () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
        };
        let mut outputs = Outputs::default();
        let mut held: Option<String> = None;
        // What the answer reported it used so far: each report its total.
        let mut reported = Usage::default();
        loop {
            let next = tokio::select! {
                n = tokens.next() => n,
                () = sleep_until(until) => return Err(Failure::Deadline),
                () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
            };
            match next {
                Some(Ok(Piece::Used(now))) => {
                    Box::pin(self.used(reported.since(&now), attempt)).await;
                    reported = now;
                }
                Some(Ok(Piece::Text(t))) if t.is_empty() => {}
                Some(Ok(Piece::Text(t))) => {
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
}

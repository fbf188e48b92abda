//! Approval and input steps, and the questions every kind of step puts to the client
//! through the run loop; parsing an approval's answer.

use super::super::journal::Checkpoint;
use super::super::record::Record;
use super::super::run::remaining;
use super::{Answered, Ask, DEFAULT_ANSWER_WAIT, Failure, Unit, failed, with_state};
use crate::access::{Pattern, describe};
use crate::engine::{Answer, ArtifactChunk, Content, QuestionKind, StepState};
use crate::workflow::{OnTimeout, StepKind, inputs_schema};
use serde_json::{Map, json};
use tokio::sync::oneshot;
use tokio::time::{Instant, sleep_until};

impl Unit {
    pub(super) async fn question_step(&self, prompt: String, deadline: Option<Instant>) -> Record {
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
        let until = |now: Instant| deadline.map_or(now + wait, |d| d.min(now + wait));
        let waited = crate::config::format_duration(wait);
        // Its start is kept, so that a restart neither restarts its clock nor its
        // timeout (asked again, it waits what was left).
        let first = match (&self.resume, &self.journal) {
            (Some(Checkpoint::Asked { .. }), _) => {
                let left = remaining(wait, Some(&self.started_at));
                let now = Instant::now();
                deadline.map_or(now + left, |d| d.min(now + left))
            }
            (_, Some(j)) => {
                let asked = Checkpoint::Asked {
                    started_at: self.started_at.clone(),
                };
                // Stored before the question goes out (questions are few, and a human
                // may act on one at once).
                j.unit(self.id().as_str(), self.item, &asked).await;
                until(Instant::now())
            }
            (_, None) => until(Instant::now()),
        };
        let mut asked = self
            .ask(
                kind.clone(),
                prompt.clone(),
                step.answerers.approvers.clone(),
                first,
            )
            .await;
        if let (Err(Failure::Deadline), OnTimeout::Escalate(to)) = (&asked, &step.on_timeout)
            && deadline.is_none_or(|d| d > Instant::now())
        {
            // Asked again, of the approvers it escalates to, for another `timeout`.
            let named = describe(to);
            asked = self
                .ask(
                    kind,
                    format!("Escalated to {named} (no answer within {waited}): {prompt}"),
                    to.clone(),
                    until(Instant::now()),
                )
                .await
                .map_err(|e| match e {
                    Failure::Deadline => Failure::Escalated(named),
                    other => other,
                });
        }
        match asked {
            Ok(Answered { answer, decisions }) => {
                let mut r = Record::new(StepState::Completed);
                let mut data = answer.data.unwrap_or_default();
                if matches!(step.kind, StepKind::Approval { .. }) && !decisions.is_empty() {
                    // Who approved, for templates and whoever reads the run.
                    let names: Vec<&str> = decisions.iter().map(|d| d.by.name.as_str()).collect();
                    data.insert("approved_by".into(), json!(names));
                }
                r.data = Some(data);
                r.decisions = decisions;
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
            Err(Failure::Escalated(to)) => failed(format!(
                "no answer within {waited}, nor within {waited} more after escalating to {to}"
            )),
            Err(_) if step.on_timeout == OnTimeout::Reject => with_state(
                StepState::Rejected,
                format!("no answer within {waited}: rejected, as its on_timeout says"),
            ),
            Err(_) => failed(format!("no answer within {waited}")),
        }
    }

    /// Asks the client through the run loop and waits (bounded) for the answer, which
    /// only `approvers` may give (anyone who may steer the run, when empty).
    pub(super) async fn ask(
        &self,
        kind: QuestionKind,
        prompt: String,
        approvers: Vec<Pattern>,
        until: Instant,
    ) -> Result<Answered, Failure> {
        let never = std::future::pending::<()>();
        (self.ask_unless(kind, prompt, approvers, until, never).await)
            .map(|a| a.expect("only `moved_on` takes the question back"))
    }

    /// [`Unit::ask`], unless `moved_on` completes first — the question was answered
    /// elsewhere (a downstream task that went on without the answer): then `None`, and
    /// the question is no longer pending.
    pub(super) async fn ask_unless(
        &self,
        kind: QuestionKind,
        prompt: String,
        approvers: Vec<Pattern>,
        until: Instant,
        moved_on: impl std::future::Future<Output = ()>,
    ) -> Result<Option<Answered>, Failure> {
        let (reply, mut answer) = oneshot::channel();
        // Sent to the step's `announce_to` agent too, while the run waits.
        let mut announcing = (self.workflow.steps[self.step].announce_to.clone())
            .map(|agent| Box::pin(self.announce(agent, &kind, &prompt, &approvers)));
        let ask = Ask {
            step: self.step,
            item: self.item,
            kind,
            prompt,
            approvers,
            until,
            reply,
        };
        if self.ask.send(Box::new(ask)).await.is_err() {
            return Err(Failure::Canceled("the run ended".into()));
        }
        let mut moved_on = std::pin::pin!(moved_on);
        loop {
            tokio::select! {
                a = &mut answer => return a.map(Some).map_err(|_| Failure::Canceled("the run ended".into())),
                // Dropping `answer` closes the question: the run loop lets it go.
                () = &mut moved_on => return Ok(None),
                () = sleep_until(until) => return Err(Failure::Deadline),
                () = self.cancel.cancelled() => return Err(Failure::Canceled("canceled".into())),
                () = async { if let Some(a) = announcing.as_mut() { a.await } }, if announcing.is_some() => {
                    announcing = None;
                }
            }
        }
    }

    /// Sends the question to `agent` (a chat or mail agent, say): what is asked, of whom,
    /// and how to answer it. Best effort: a failure is logged, never the step's.
    fn announce(
        &self,
        agent: crate::workflow::AgentName,
        kind: &QuestionKind,
        prompt: &str,
        approvers: &[Pattern],
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        use futures::StreamExt;
        let step = self.id().to_string();
        let at = match self.item {
            Some(i) => format!("{step}[{i}]"),
            None => step.clone(),
        };
        let how = match kind {
            QuestionKind::Approval => format!(
                "a2a-orchestrator runs approve {} --step {step}",
                self.run_id
            ),
            _ => format!(
                "a2a-orchestrator runs answer {} \"…\" --step {step}",
                self.run_id
            ),
        };
        let text = format!(
            "{prompt}\n\n(run {}, step {at}; answer with `{how}`, or in the web view)",
            self.run_id
        );
        let mut data = Map::new();
        data.insert("run".into(), json!(self.run_id));
        data.insert("step".into(), json!(step));
        data.insert("item".into(), json!(self.item));
        data.insert("prompt".into(), json!(prompt));
        data.insert("approvers".into(), json!(describe(approvers)));
        // One message id per question asked (an escalation asks anew).
        let id = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            prompt.hash(&mut h);
            format!("{}:{at}:announce:{:x}", self.run_id, h.finish())
        };
        let request = crate::engine::SendRequest {
            run_id: self.run_id.clone(),
            step: self.id().clone(),
            item: self.item,
            target: crate::workflow::AgentTarget::Named(agent.clone()),
            message_id: id,
            task_id: None,
            text: Some(text),
            data: Some(data),
            bounds: None,
            answered_by: None,
        };
        async move {
            self.used(crate::engine::Usage::CALL, 1).await;
            match self.connector.send(request).await {
                Ok(mut updates) => {
                    while let Some(u) = updates.next().await {
                        if let Err(e) = u {
                            tracing::warn!(step = %at, agent = %agent, error = %e, "announcing the question failed");
                            break;
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(step = %at, agent = %agent, error = %e, "announcing the question failed");
                }
            }
        }
    }
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
        by: answer.by.clone(),
    })
}

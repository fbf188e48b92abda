//! Questions the run's steps ask and the answers the client sends back: each answer is
//! routed to the one pending question it names (step, item) and checked as that
//! question's kind says (an approval, a step's inputs, or passed on to an agent).

use super::super::unit::{Ask, approval};
use super::Run;
use super::engine::Command;
use crate::engine::{Answer, AnswerError, QuestionKind, RunEvent};
use crate::workflow::{StepKind, check_inputs};
use serde_json::json;

/// A question put to the client and not answered yet.
pub(super) struct Pending {
    pub(super) step: usize,
    pub(super) item: Option<usize>,
    kind: QuestionKind,
    reply: tokio::sync::oneshot::Sender<Answer>,
}

impl Run {
    pub(super) async fn asked(&mut self, ask: Ask) {
        // A question its unit stopped waiting for (its wait ran out) is no longer
        // pending: a question asked again (escalated) replaces it.
        self.questions.retain(|q| !q.reply.is_closed());
        self.emit(RunEvent::Question {
            step: self.workflow.steps[ask.step].id.clone(),
            item: ask.item,
            kind: ask.kind.clone(),
            prompt: ask.prompt,
        })
        .await;
        self.questions.push(Pending {
            step: ask.step,
            item: ask.item,
            kind: ask.kind,
            reply: ask.reply,
        });
    }

    pub(super) async fn command(&mut self, cmd: Command) {
        let Command::Answer {
            step,
            item,
            answer,
            reply,
        } = cmd;
        self.questions.retain(|q| !q.reply.is_closed());
        let _ = reply.send(self.route_answer(step, item, answer));
    }

    fn route_answer(
        &mut self,
        step: Option<String>,
        item: Option<usize>,
        answer: Answer,
    ) -> Result<(), AnswerError> {
        let matches: Vec<usize> = self
            .questions
            .iter()
            .enumerate()
            .filter(|(_, q)| {
                step.as_deref()
                    .is_none_or(|s| self.workflow.steps[q.step].id.as_str() == s)
                    && (item.is_none() || q.item == item)
            })
            .map(|(k, _)| k)
            .collect();
        let k = match (matches.as_slice(), &step) {
            ([k], _) => *k,
            ([], Some(s)) => return Err(AnswerError::NoQuestion(s.clone())),
            ([], None) => return Err(AnswerError::NoQuestion("(any)".into())),
            (many, _) => {
                let names: Vec<String> = many
                    .iter()
                    .map(|&k| {
                        let q = &self.questions[k];
                        let id = &self.workflow.steps[q.step].id;
                        q.item
                            .map_or_else(|| id.to_string(), |i| format!("{id}[{i}]"))
                    })
                    .collect();
                return Err(AnswerError::Ambiguous(names.join(", ")));
            }
        };
        let q = &self.questions[k];
        let answer = match &q.kind {
            QuestionKind::Approval => approval(&answer).map_err(AnswerError::Invalid)?,
            QuestionKind::Input { .. } => {
                let StepKind::Input { fields, .. } = &self.workflow.steps[q.step].kind else {
                    return Err(AnswerError::Invalid("not an input step".into()));
                };
                let mut data = answer.data.clone().unwrap_or_default();
                if data.is_empty()
                    && let (Some(t), [only]) = (&answer.text, fields.as_slice())
                {
                    data.insert(only.name.clone(), json!(t));
                }
                let checked =
                    check_inputs(fields, &data).map_err(|p| AnswerError::Invalid(p.join("; ")))?;
                Answer {
                    text: answer.text.clone(),
                    data: Some(checked),
                }
            }
            QuestionKind::Downstream { .. } => answer,
        };
        let q = self.questions.remove(k);
        let _ = q.reply.send(answer);
        Ok(())
    }
}

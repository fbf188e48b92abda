//! Questions the run's steps ask and the answers the client sends back: each answer is
//! routed to the one pending question it names (step, item), checked against who may
//! give it (the step's approvers, four eyes, a quorum of different approvers), then as
//! the question's kind says (an approval, a step's inputs, or passed on to an agent).
//! Every answer taken is an [`RunEvent::Answered`]: the run's audit trail.

use super::super::journal::wall_clock;
use super::super::unit::{Answered, Ask, approval};
use super::Run;
use super::engine::Command;
use crate::access::{Actor, Answerers, Decision, Pattern, allowed, describe};
use crate::engine::{Answer, AnswerError, QuestionKind, RunEvent, Taken};
use crate::workflow::{StepId, StepKind, check_inputs};
use serde_json::json;

/// Most answers a resumed run holds for questions it has not asked again; past them an
/// answer is refused as if nothing were asked (a client answers once, and the run asks
/// again within moments of resuming).
const MAX_HELD: usize = 64;

/// A resumed run's questions that were waiting for the client when the run stopped, until
/// its steps ask them again, and the answers that came for them meanwhile: a client
/// answering right after a restart answers the question it saw, not one the run has not
/// asked yet.
pub(super) struct Reasking {
    /// Each by step id and item.
    questions: Vec<(String, Option<usize>)>,
    /// Answers held until their question is asked again (or its step ends).
    held: Vec<Command>,
}

impl Reasking {
    pub(super) fn new(questions: Vec<(String, Option<usize>)>) -> Self {
        Reasking {
            questions,
            held: Vec::new(),
        }
    }

    /// Whether an answer naming `step` (and `item`) is for a question still to be asked
    /// again; naming none, whether any is.
    fn awaits(&self, step: Option<&str>, item: Option<usize>) -> bool {
        self.questions
            .iter()
            .any(|(s, i)| step.is_none_or(|step| s == step) && (item.is_none() || *i == item))
    }
}

/// A question put to the client and not answered yet.
pub(super) struct Pending {
    pub(super) step: usize,
    pub(super) item: Option<usize>,
    kind: QuestionKind,
    approvers: Vec<Pattern>,
    /// Approvals counted so far towards the step's quorum.
    votes: Vec<Decision>,
    reply: tokio::sync::oneshot::Sender<Answered>,
}

impl Run {
    pub(super) async fn asked(&mut self, ask: Ask) {
        // A question its unit stopped waiting for (its wait ran out) is no longer
        // pending: a question asked again (escalated) replaces it.
        self.questions.retain(|q| !q.reply.is_closed());
        let step = &self.workflow.steps[ask.step];
        // The wait's end on the wall clock (far ends are no end: the default wait).
        let left = ask
            .until
            .saturating_duration_since(tokio::time::Instant::now());
        let until = (left < std::time::Duration::from_secs(365 * 24 * 3600))
            .then(|| time::OffsetDateTime::now_utc() + left)
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            });
        let question = RunEvent::Question {
            step: step.id.clone(),
            item: ask.item,
            kind: ask.kind.clone(),
            prompt: ask.prompt,
            answerers: Box::new(Answerers {
                approvers: ask.approvers.clone(),
                ..step.answerers.clone()
            }),
            until,
        };
        self.questions.push(Pending {
            step: ask.step,
            item: ask.item,
            kind: ask.kind,
            approvers: ask.approvers,
            votes: Vec::new(),
            reply: ask.reply,
        });
        // Asked again after a restart: an answer held for it (one that came before the
        // run was back) is taken first, and a question it answered is not put to the
        // client again — said, it would read as waiting while its answer is on the way.
        self.reasked(ask.step, ask.item).await;
        let (i, item) = (ask.step, ask.item);
        if self
            .questions
            .iter()
            .any(|q| q.step == i && q.item == item && !q.reply.is_closed())
        {
            self.emit(question).await;
        }
    }

    /// The question of step `i` (and `item`) was asked again, or the step ended: the
    /// answers held for it are taken now.
    pub(super) async fn reasked(&mut self, i: usize, item: Option<usize>) {
        let Some(reasking) = &mut self.reasking else {
            return;
        };
        let id = self.workflow.steps[i].id.as_str();
        reasking.questions.retain(|(s, k)| !(s == id && *k == item));
        let held = std::mem::take(&mut reasking.held);
        if reasking.questions.is_empty() {
            self.reasking = None;
        }
        for cmd in held {
            Box::pin(self.command(cmd)).await;
        }
    }

    pub(super) async fn command(&mut self, cmd: Command) {
        let Command::Answer {
            step,
            item,
            answer,
            reply,
        } = cmd;
        self.questions.retain(|q| !q.reply.is_closed());
        // No question it names waits yet, but one will be asked again: held until then.
        if let Some(reasking) = &mut self.reasking
            && reasking.held.len() < MAX_HELD
            && reasking.awaits(step.as_deref(), item)
            && !self.questions.iter().any(|q| {
                step.as_deref()
                    .is_none_or(|s| self.workflow.steps[q.step].id.as_str() == s)
                    && (item.is_none() || q.item == item)
            })
        {
            reasking.held.push(Command::Answer {
                step,
                item,
                answer,
                reply,
            });
            return;
        }
        match self.route_answer(step, item, answer) {
            Ok((taken, Some((step, item, decision)))) => {
                let _ = reply.send(Ok(taken));
                self.emit(RunEvent::Answered {
                    step,
                    item,
                    decision: Box::new(decision),
                })
                .await;
            }
            Ok((taken, None)) => {
                let _ = reply.send(Ok(taken));
            }
            Err(e) => {
                let _ = reply.send(Err(e));
            }
        }
    }

    /// Whether `by` may answer question `k`: one of its approvers, not the run's
    /// initiator when the step wants four eyes, not an approver counted already.
    fn may_answer(&self, k: usize, by: &Actor) -> Result<(), AnswerError> {
        let q = &self.questions[k];
        let step = &self.workflow.steps[q.step];
        if !allowed(&q.approvers, by) {
            return Err(AnswerError::NotAllowed(format!(
                "{} may not answer step `{}`: it is for {}",
                by.name,
                step.id,
                describe(&q.approvers)
            )));
        }
        if step.answerers.four_eyes
            && self
                .origin
                .as_ref()
                .and_then(|o| o.initiator.as_ref())
                .is_some_and(|i| i.id == by.id)
        {
            return Err(AnswerError::NotAllowed(format!(
                "{} started this run, and step `{}` needs someone else to answer (four eyes)",
                by.name, step.id
            )));
        }
        if q.votes.iter().any(|v| v.by.id == by.id) {
            let left = step.answerers.quorum as usize - q.votes.len();
            return Err(AnswerError::NotAllowed(format!(
                "{} has already approved step `{}`; it needs {left} more approval{} from someone else",
                by.name,
                step.id,
                if left == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }

    /// Routes an answer: what became of it, and the decision to record (none on a
    /// server that does not know who answers).
    #[allow(clippy::type_complexity)]
    fn route_answer(
        &mut self,
        step: Option<String>,
        item: Option<usize>,
        answer: Answer,
    ) -> Result<(Taken, Option<(StepId, Option<usize>, Decision)>), AnswerError> {
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
        if let Some(by) = &answer.by {
            self.may_answer(k, by)?;
        }
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
                    by: answer.by.clone(),
                }
            }
            QuestionKind::Downstream { .. } => answer,
        };
        let approved = answer
            .data
            .as_ref()
            .and_then(|d| d.get("approved"))
            .and_then(|v| v.as_bool());
        let decision = answer.by.clone().map(|by| Decision {
            by,
            at: wall_clock(),
            action: match approved {
                Some(true) => "approved",
                Some(false) => "rejected",
                None => "answered",
            }
            .to_owned(),
        });
        let step_id = self.workflow.steps[q.step].id.clone();
        let item = q.item;
        let quorum = self.workflow.steps[q.step].answerers.quorum as usize;
        let q = &mut self.questions[k];
        if let Some(d) = &decision {
            q.votes.push(d.clone());
        }
        // An approval waits for its quorum of different approvers; a rejection ends it.
        if approved == Some(true) && decision.is_some() && q.votes.len() < quorum {
            let left = quorum - q.votes.len();
            return Ok((
                Taken::Counted { left },
                decision.map(|d| (step_id, item, d)),
            ));
        }
        let q = self.questions.remove(k);
        let _ = q.reply.send(Answered {
            answer,
            decisions: q.votes,
        });
        Ok((Taken::Answered, decision.map(|d| (step_id, item, d))))
    }
}

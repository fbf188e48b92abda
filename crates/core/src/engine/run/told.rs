//! A live run's detail, kept in one place. [`RunEvents`](super::RunEvents) moves it on
//! with each event it hands the run's reader, so it says what the reader has been told,
//! in the order it was told; [`RunControl`](super::RunControl) reads it, and lists the
//! answers on their way to the run: the questions they answer no longer wait for the
//! client, though the run has not taken the answers yet.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::super::detail::{PendingQuestion, RunDetail};
use super::super::types::RunEvent;

/// A run's detail as told, and the answers on their way to it.
#[derive(Debug)]
pub struct Told {
    detail: RunDetail,
    /// When the last event that moved the detail was taken (RFC 3339).
    at: String,
    answering: Vec<Answering>,
    /// The next [`Answering::id`].
    answers: u64,
}

/// An answer on its way to the run, as its message named the question.
#[derive(Debug)]
struct Answering {
    id: u64,
    step: Option<String>,
    item: Option<usize>,
}

impl Answering {
    /// Whether it answers the question of `step` (and `item`), among `pending` ones.
    fn answers(&self, step: &str, item: Option<usize>, pending: usize) -> bool {
        match &self.step {
            Some(s) => s == step && self.item.is_none_or(|i| item == Some(i)),
            // An answer naming no step goes to the only question.
            None => pending == 1,
        }
    }
}

impl Told {
    /// A run's detail as told so far, no answer on its way (the engine makes one for
    /// every run it starts; tests make their own).
    pub fn new(detail: RunDetail) -> Told {
        Told {
            detail,
            at: String::new(),
            answering: Vec::new(),
            answers: 0,
        }
    }

    /// The run's detail as its events have been taken.
    pub fn detail(&self) -> &RunDetail {
        &self.detail
    }

    /// When the last event that moved the detail was taken: the time the detail records
    /// for it (artifacts and the output do not move it).
    pub fn at(&self) -> &str {
        &self.at
    }

    /// The detail, to record what the run's events do not say (who canceled it).
    pub fn detail_mut(&mut self) -> &mut RunDetail {
        &mut self.detail
    }

    /// The questions that wait for the client: pending, with no answer on its way.
    pub fn waiting(&self) -> impl Iterator<Item = &PendingQuestion> {
        let pending = self.detail.pending_questions.len();
        self.detail.pending_questions.iter().filter(move |q| {
            !self
                .answering
                .iter()
                .any(|a| a.answers(&q.step, q.item, pending))
        })
    }

    /// Moves the detail on by `event`, taken at `now`; `agent_url` says where a named
    /// agent lives. ([`RunEvents`](super::RunEvents) does it with every event it hands
    /// out.)
    pub fn take(
        &mut self,
        event: &RunEvent,
        now: &str,
        agent_url: impl Fn(&str) -> Option<String>,
    ) {
        if let RunEvent::Question { step, item, .. } = event {
            // An answer still listed for that step was taken before the run asked
            // again, and must not hide the new question.
            let pending = self.detail.pending_questions.len();
            self.answering
                .retain(|a| a.step.is_some() && !a.answers(step.as_str(), *item, pending));
        }
        self.detail.apply(event, now, agent_url);
        now.clone_into(&mut self.at);
    }
}

/// Locks `told`, whatever a panic elsewhere left in it (the detail is only ever moved
/// on whole, under the lock).
pub(super) fn lock(told: &Mutex<Told>) -> MutexGuard<'_, Told> {
    told.lock().unwrap_or_else(|p| p.into_inner())
}

/// An answer on its way to the run, listed in [`Told`] until it ends (or is dropped,
/// when whoever sent it stops waiting).
pub(super) struct OnItsWay<'a> {
    told: &'a Mutex<Told>,
    id: u64,
}

impl<'a> OnItsWay<'a> {
    pub(super) fn new(told: &'a Mutex<Told>, step: Option<&str>, item: Option<usize>) -> Self {
        let mut t = lock(told);
        let id = t.answers;
        t.answers += 1;
        t.answering.push(Answering {
            id,
            step: step.map(str::to_owned),
            item,
        });
        OnItsWay { told, id }
    }

    /// Ends it, with `then` done on the detail under the same lock: whoever reads it
    /// next sees both or neither.
    pub(super) fn end(self, then: impl FnOnce(&mut RunDetail)) {
        let mut t = lock(self.told);
        t.answering.retain(|a| a.id != self.id);
        then(&mut t.detail);
    }
}

impl Drop for OnItsWay<'_> {
    fn drop(&mut self) {
        lock(self.told).answering.retain(|a| a.id != self.id);
    }
}

/// Where each agent is found (its name → its card's location), for the detail's
/// `agentUrl`.
pub(crate) type Locations = HashMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::QuestionKind;
    use crate::workflow::StepId;
    use serde_json::Map;

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

    fn waiting(told: &Mutex<Told>) -> Vec<String> {
        lock(told).waiting().map(|q| q.step.clone()).collect()
    }

    /// While an answer is on its way to the run, the question it answers does not wait
    /// for the client; refused, it waits again; a question the run asks again of that
    /// step waits at once; an answer that names no step goes to the only question.
    #[test]
    fn a_question_whose_answer_is_on_its_way_does_not_wait_for_the_client() {
        let (w, diags) = crate::workflow::load_str(
            "w.toml",
            "[workflow]\nid = \"w\"\ndescription = \"d\"\n[steps.a]\nkind = \"approval\"\nprompt = \"a?\"\n[steps.b]\nkind = \"approval\"\nprompt = \"b?\"\n",
            crate::workflow::Options::default(),
        );
        let w = w.unwrap_or_else(|| panic!("{diags:?}"));
        let told = Mutex::new(Told::new(RunDetail::new(&w, Map::new(), "t0".into())));
        let ask = |step| lock(&told).take(&question(step), "t1", |_| None);
        ask("a");
        ask("b");
        assert_eq!(waiting(&told), ["a", "b"]);
        let a = OnItsWay::new(&told, Some("a"), None);
        assert_eq!(waiting(&told), ["b"]);
        let b = OnItsWay::new(&told, Some("b"), None);
        assert!(waiting(&told).is_empty());

        // `a`'s answer is refused: `a` waits again.
        a.end(|_| ());
        assert_eq!(waiting(&told), ["a"]);
        // The run took `b`'s answer and asks `b` again before the answer's end is seen.
        lock(&told).detail_mut().answered(Some("b"), None);
        ask("b");
        assert_eq!(waiting(&told), ["a", "b"]);
        b.end(|d| d.answered(Some("a"), None));
        assert_eq!(waiting(&told), ["b"]);
        // An answer that names no step goes to the only question; dropped, it is gone.
        let only = OnItsWay::new(&told, None, None);
        assert!(waiting(&told).is_empty());
        drop(only);
        assert_eq!(waiting(&told), ["b"]);
    }
}

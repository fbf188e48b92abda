//! The approval a run asks when it passes its budget (`on_budget = "ask"`), instead of
//! failing: nothing new starts while it waits (what runs goes on); an approval adds the
//! step's `extend` to the budget and the run goes on, asking again if it is still past
//! it; a refusal (or no answer in time) fails the run on its budget. Each time it is
//! asked is a pass of the step, an item of its own (`step[0]`, `step[1]`, …), stored as
//! any item is: a restart resumes a question waiting, and keeps the approvals given.

use serde_json::{Value, json};

use super::super::journal::Checkpoint;
use super::super::record::Record;
use super::Run;
use crate::engine::{RunEvent, StepState};
use crate::workflow::Budget;

/// Where a run stands with the approval of its budget.
pub(super) struct BudgetAsk {
    /// The step's index.
    pub(super) step: usize,
    /// What each approval adds.
    extend: Budget,
    /// Times it was asked (the next pass's item).
    passes: usize,
    /// Whether it waits for an answer now.
    pub(super) asking: bool,
    /// The last pass's state.
    last: Option<StepState>,
}

impl BudgetAsk {
    pub(super) fn new(step: usize, extend: Budget) -> Self {
        BudgetAsk {
            step,
            extend,
            passes: 0,
            asking: false,
            last: None,
        }
    }
}

/// Whether an approval's record approves.
fn approves(record: &Record) -> bool {
    record.state == StepState::Completed
        && record
            .data
            .as_ref()
            .and_then(|d| d.get("approved"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

impl Run {
    /// Whether the workflow asks to extend its budget when it is passed.
    pub(super) fn asks_budget(&self) -> bool {
        self.on_budget.is_some()
    }

    /// Whether it is asking now.
    pub(super) fn asking_budget(&self) -> bool {
        self.on_budget.as_ref().is_some_and(|a| a.asking)
    }

    /// Asks the budget's approval (a new pass), saying why in its prompt.
    pub(super) async fn ask_budget(&mut self) {
        let Some(ask) = self.on_budget.as_deref_mut() else {
            return;
        };
        if ask.asking {
            return;
        }
        ask.asking = true;
        let (i, pass) = (ask.step, ask.passes);
        ask.passes += 1;
        let why = (self.budget.spend.over()).unwrap_or_else(|| "budget exceeded".to_owned());
        let step = self.workflow.steps[i].id.clone();
        self.slots[i].state = Some(StepState::Working);
        self.emit(RunEvent::Step {
            step,
            item: None,
            state: StepState::InputRequired,
            attempt: 1,
            agent: None,
            task_id: None,
            message: Some(why.clone()),
        })
        .await;
        let mut context = match self.context(Some(i), None) {
            Value::Object(m) => Value::Object(m),
            _ => json!({}),
        };
        // Read by the approval unit: its prompt says why it is asked.
        context[crate::engine::unit::BUDGET_EXCEEDED] = Value::String(why);
        self.spawn_unit_in(i, Some(pass), context);
    }

    /// A pass of the budget's approval ended with `record`: the budget is extended and
    /// the run goes on (asking again if it is still past it), or the run fails on it.
    pub(super) async fn budget_answered(&mut self, pass: usize, mut record: Record) {
        let Some(ask) = self.on_budget.as_deref_mut() else {
            return;
        };
        ask.asking = false;
        ask.last = Some(record.state);
        let (i, extend) = (ask.step, ask.extend);
        let step = self.workflow.steps[i].id.clone();
        let why = self.budget.spend.over();
        let approved = approves(&record);
        let still_over = approved && self.budget.spend.extend(&extend);
        if approved && let Some(b) = self.budget.spend.budget() {
            // Kept with the pass: a restart holds the run to the budget as extended.
            let data = record.data.get_or_insert_with(Default::default);
            data.insert(
                "budget".into(),
                serde_json::to_value(b).unwrap_or(Value::Null),
            );
        }
        record
            .ended_at
            .get_or_insert_with(super::super::journal::wall_clock);
        // Stored before the run goes on: a restart keeps the extension.
        self.item_ended(i, pass, &record, true).await;
        let state = if approved {
            StepState::Completed
        } else if record.state == StepState::Completed {
            StepState::Rejected
        } else {
            record.state
        };
        self.emit(RunEvent::Step {
            step,
            item: None,
            state,
            attempt: u32::try_from(pass + 1).unwrap_or(u32::MAX),
            agent: None,
            task_id: None,
            message: None,
        })
        .await;
        if approved {
            if still_over {
                Box::pin(self.ask_budget()).await;
            }
            return;
        }
        let not = match record.state {
            StepState::Completed => "it was not approved".to_owned(),
            _ => record
                .error
                .clone()
                .unwrap_or_else(|| format!("its approval was {}", record.state)),
        };
        let why = why.unwrap_or_else(|| "budget exceeded".to_owned());
        self.stop_over_budget(Some(format!("{why}; the budget was not extended: {not}")));
    }

    /// Approvals given before a restart: the budget as they extended it, and the next
    /// pass's number (a question that waited is asked again as that pass).
    pub(super) fn restore_budget(
        &mut self,
        units: &std::collections::HashMap<(String, Option<usize>), Checkpoint>,
    ) {
        let Some(ask) = self.on_budget.as_deref_mut() else {
            return;
        };
        let id = self.workflow.steps[ask.step].id.as_str();
        let mut extensions = 0;
        for ((step, item), c) in units {
            let Some(pass) = item.filter(|_| step == id) else {
                continue;
            };
            match c {
                Checkpoint::Done(r) => {
                    ask.passes = ask.passes.max(pass + 1);
                    if approves(r) {
                        extensions += 1;
                    }
                }
                _ => ask.passes = ask.passes.max(pass),
            }
        }
        for _ in 0..extensions {
            self.budget.spend.extend(&ask.extend);
        }
    }

    /// At the run's end: the approval never asked is skipped (the budget was never
    /// passed).
    pub(super) async fn budget_step_ends(&mut self) {
        let Some(ask) = self.on_budget.as_deref() else {
            return;
        };
        if ask.last.is_some() || ask.passes > 0 {
            return;
        }
        let step = self.workflow.steps[ask.step].id.clone();
        self.emit(RunEvent::Step {
            step,
            item: None,
            state: StepState::Skipped,
            attempt: 0,
            agent: None,
            task_id: None,
            message: Some("the budget was not passed".into()),
        })
        .await;
    }
}

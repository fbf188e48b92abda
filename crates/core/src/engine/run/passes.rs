//! Bounded loops (`repeat_until`, `max_repeats`): a step that runs pass after pass. Each
//! pass is an item of the step (`draft[0]`, `draft[1]`, …), stored and shown as a
//! fan-out's items are, and sees `iteration` (1 for the first pass) and the pass before
//! as `steps.<id>`. After each, `repeat_until` is evaluated with the pass that ended as
//! `steps.<id>`: true ends the step with that pass's result (all passes under
//! `steps.<id>.passes`); false starts the next, up to `max_repeats` — past it the step
//! fails saying so, or completes with its last pass (`on_max_repeats = "continue"`). A
//! pass that does not complete ends the step as it ended.

use serde_json::{Value, json};

use super::super::journal::Checkpoint;
use super::super::record::Record;
use super::Run;
use crate::engine::StepState;

/// A looping step's passes so far.
#[derive(Default)]
pub(super) struct Passes {
    /// Those that ended, in order.
    pub(super) done: Vec<Record>,
    /// Whether one runs now.
    pub(super) running: bool,
}

impl Run {
    /// Starts a looping step: its passes that ended before a restart are kept, and what
    /// follows them is decided as after any pass.
    pub(super) async fn start_passes(&mut self, i: usize) {
        let id = self.workflow.steps[i].id.as_str().to_owned();
        let mut done = Vec::new();
        while let Some(Checkpoint::Done(_)) = self.restore.get(&(id.clone(), Some(done.len()))) {
            if let Some(Checkpoint::Done(r)) = self.restore.remove(&(id.clone(), Some(done.len())))
            {
                done.push(r);
            }
        }
        let restored = !done.is_empty();
        self.slots[i].passes = Some(Box::new(Passes {
            done,
            running: false,
        }));
        self.slots[i].state = Some(StepState::Working);
        if restored {
            Box::pin(self.after_pass(i)).await;
        } else {
            self.active.insert(i);
        }
    }

    /// Spawns pass `pass` of looping step `i`, with `iteration` and the pass before in its
    /// template context.
    pub(super) fn spawn_pass(&mut self, i: usize, pass: usize) {
        let mut context = self.context(Some(i), None);
        if let Value::Object(ctx) = &mut context {
            ctx.insert("iteration".into(), json!(pass + 1));
            // The pass before; none (null) on the first.
            let before = self.loop_json(i).unwrap_or(Value::Null);
            let id = self.workflow.steps[i].id.as_str().to_owned();
            match ctx.get_mut("steps") {
                Some(Value::Object(steps)) => {
                    steps.insert(id, before);
                }
                _ => {
                    ctx.insert("steps".into(), json!({ id: before }));
                }
            }
        }
        self.spawn_unit_in(i, Some(pass), context);
    }

    /// The step as templates see it so far: its last pass, with every pass under
    /// `passes`; none before the first pass ends.
    fn loop_json(&self, i: usize) -> Option<Value> {
        let passes = self.slots[i].passes.as_deref()?;
        let last = passes.done.last()?;
        let mut v = last.to_json();
        v["passes"] = Value::Array(passes.done.iter().map(Record::to_json).collect());
        Some(v)
    }

    /// Pass `pass` of looping step `i` ended with `record`.
    pub(super) async fn pass_done(&mut self, i: usize, pass: usize, record: Record) {
        self.item_ended(i, pass, &record, false).await;
        if let Some(p) = self.slots[i].passes.as_deref_mut() {
            p.running = false;
            p.done.push(record);
        }
        Box::pin(self.after_pass(i)).await;
    }

    /// After a pass of looping step `i`: the step ends, or its next pass is due.
    async fn after_pass(&mut self, i: usize) {
        let Some(repeat) = self.workflow.steps[i].repeat.clone() else {
            return;
        };
        let Some(last) = self.slots[i].passes.as_deref().and_then(|p| p.done.last()) else {
            return;
        };
        let n = self.slots[i].passes.as_deref().map_or(0, |p| p.done.len());
        if last.state != StepState::Completed {
            let why = last.error.clone().unwrap_or_else(|| last.state.to_string());
            let state = last.state;
            return self
                .end_loop(i, state, Some(format!("pass {n}: {why}")))
                .await;
        }
        let mut ctx = self.context(None, None);
        if let (Value::Object(c), Some(this)) = (&mut ctx, self.loop_json(i)) {
            c.insert("iteration".into(), json!(n));
            if let Some(Value::Object(steps)) = c.get_mut("steps") {
                steps.insert(self.workflow.steps[i].id.to_string(), this);
            }
        }
        match self.workflow.templates.eval_bool(&repeat.until, &ctx) {
            Ok(true) => self.end_loop(i, StepState::Completed, None).await,
            Ok(false) if n < repeat.max as usize => {
                if self.stopping
                    && self.workflow.steps[i].trigger != crate::workflow::Trigger::Always
                {
                    let why = "no more passes: the run is stopping".to_owned();
                    self.end_loop(i, StepState::Canceled, Some(why)).await;
                } else {
                    self.active.insert(i);
                }
            }
            Ok(false) if repeat.continue_at_max => {
                self.end_loop(i, StepState::Completed, None).await;
            }
            Ok(false) => {
                let why = format!(
                    "`repeat_until` was still false after {n} passes (`max_repeats = {}`)",
                    repeat.max
                );
                self.end_loop(i, StepState::Failed, Some(why)).await;
            }
            Err(e) => {
                self.end_loop(i, StepState::Failed, Some(e.to_string()))
                    .await
            }
        }
    }

    /// Ends looping step `i` in `state`: its last pass's result, with every pass.
    async fn end_loop(&mut self, i: usize, state: StepState, error: Option<String>) {
        let passes = self.slots[i]
            .passes
            .take()
            .map(|p| p.done)
            .unwrap_or_default();
        let mut r = passes.last().cloned().unwrap_or_else(|| Record::new(state));
        r.state = state;
        if error.is_some() {
            r.error = error;
        }
        r.started_at = passes.first().and_then(|p| p.started_at.clone());
        r.ended_at = None;
        let mut used = crate::engine::Usage::default();
        for p in passes.iter().filter_map(|p| p.usage.as_deref()) {
            used.add(p);
        }
        r.usage = (!used.is_zero()).then(|| Box::new(used));
        r.items = Some(passes);
        r.passes = true;
        self.close(i, r).await;
    }
}

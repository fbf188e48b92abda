//! The scheduler: which ready step runs, is skipped or fails upstream (triggers,
//! `when`), how many units start (`max_parallel`, fan-outs), and what a finished unit or
//! step changes — its dependents, the failure policy and the template context.

use super::super::journal::{Checkpoint, wall_clock};
use super::super::record::Record;
use super::super::unit::Unit;
use super::{Failure, Fan, Run, StepFailure};
use crate::engine::{RunEvent, StepState};
use crate::workflow::{OnFailure, Trigger};
use serde_json::Value;
use tracing::{Instrument, info_span};

/// What a trigger decides once all needs have finished.
enum Decision {
    Run,
    Skip,
    UpstreamFailed,
}

fn succeeded(state: StepState, continue_on_error: bool) -> bool {
    state == StepState::Completed
        || (continue_on_error && matches!(state, StepState::Failed | StepState::Rejected))
}

fn failed_like(state: StepState, continue_on_error: bool) -> bool {
    matches!(
        state,
        StepState::Failed | StepState::Rejected | StepState::Canceled | StepState::UpstreamFailed
    ) && !succeeded(state, continue_on_error)
}

impl Run {
    /// Decides every ready step and starts what can start, until nothing changes.
    pub(super) async fn schedule(&mut self) {
        // Past its budget, nothing new starts: the run stops, or asks to extend it and
        // waits for the answer.
        if !self.stopping && !self.asking_budget() && self.budget.spend.is_over() {
            Box::pin(self.budget_passed()).await;
        }
        if self.asking_budget() {
            return;
        }
        loop {
            while let Some(i) = self.ready.pop_first() {
                let needs = std::mem::take(&mut self.needs[i]);
                self.decide(i, &needs).await;
                self.needs[i] = needs;
            }
            if !self.spawn_units() && self.ready.is_empty() {
                break;
            }
        }
    }

    pub(super) async fn decide(&mut self, i: usize, needs: &[usize]) {
        let step = &self.workflow.steps[i];
        // A step that finished before a restart keeps its result.
        let key = (step.id.as_str().to_owned(), None);
        if matches!(self.restore.get(&key), Some(Checkpoint::Done(_)))
            && let Some(Checkpoint::Done(record)) = self.restore.remove(&key)
        {
            return self.settle(i, record);
        }
        // On a canceled run, nothing but `always` steps starts, whatever its needs did.
        if self.canceled && step.trigger != Trigger::Always {
            let mut r = Record::new(StepState::Canceled);
            r.error = Some("not started: the run was canceled".into());
            return self.close(i, r).await;
        }
        let states: Vec<(StepState, bool)> = needs
            .iter()
            .map(|&n| {
                (
                    self.slots[n].state.unwrap_or(StepState::Pending),
                    self.workflow.steps[n].continue_on_error,
                )
            })
            .collect();
        let any_failed = states.iter().any(|&(s, c)| failed_like(s, c));
        let all_ok = states.iter().all(|&(s, c)| succeeded(s, c));
        let any_ok = states.iter().any(|&(s, c)| succeeded(s, c));
        let decision = match step.trigger {
            Trigger::AllSuccess if all_ok => Decision::Run,
            Trigger::AllSuccess | Trigger::OneSuccess
                if any_failed && !(step.trigger == Trigger::OneSuccess && any_ok) =>
            {
                Decision::UpstreamFailed
            }
            Trigger::AllSuccess => Decision::Skip,
            Trigger::OneSuccess if any_ok => Decision::Run,
            Trigger::OneSuccess => Decision::Skip,
            Trigger::NoneFailed if any_failed => Decision::UpstreamFailed,
            Trigger::NoneFailed | Trigger::AllDone | Trigger::Always => Decision::Run,
        };
        match decision {
            Decision::Skip => return self.close(i, Record::new(StepState::Skipped)).await,
            Decision::UpstreamFailed => {
                return self.close(i, Record::new(StepState::UpstreamFailed)).await;
            }
            Decision::Run => {}
        }
        if self.stopping && step.trigger != Trigger::Always {
            let mut r = Record::new(StepState::Skipped);
            r.error = Some("not started: the run is stopping after a failure".into());
            return self.close(i, r).await;
        }
        // `when` and `for_each` may use anything upstream: the whole context, built only
        // for the steps that have them.
        let ctx = if step.when.is_some() || step.for_each.is_some() {
            self.context(None, None)
        } else {
            Value::Null
        };
        if let Some(when) = &step.when {
            match self.workflow.templates.eval_bool(when, &ctx) {
                Ok(true) => {}
                Ok(false) => return self.close(i, Record::new(StepState::Skipped)).await,
                Err(e) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(e.to_string());
                    return self.close(i, r).await;
                }
            }
        }
        if step.repeat.is_some() {
            return Box::pin(self.start_passes(i)).await;
        }
        if let Some(fan) = &step.for_each {
            let items = match self.workflow.templates.eval(&fan.items, &ctx) {
                Ok(Value::Array(items)) => items,
                Ok(other) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(format!(
                        "{}: `for_each` must yield a list, got {other}",
                        fan.items.site
                    ));
                    return self.close(i, r).await;
                }
                Err(e) => {
                    let mut r = Record::new(StepState::Failed);
                    r.error = Some(e.to_string());
                    return self.close(i, r).await;
                }
            };
            if items.is_empty() {
                let mut r = Record::new(StepState::Completed);
                r.items = Some(Vec::new());
                return self.close(i, r).await;
            }
            let n = items.len();
            // Items that finished before a restart keep their results.
            let mut results = vec![None; n];
            let mut queue = std::collections::VecDeque::with_capacity(n);
            for (k, slot) in results.iter_mut().enumerate() {
                match self.restore.remove(&(step.id.to_string(), Some(k))) {
                    Some(Checkpoint::Done(r)) => *slot = Some(r),
                    Some(other) => {
                        self.restore.insert((step.id.to_string(), Some(k)), other);
                        queue.push_back(k);
                    }
                    None => queue.push_back(k),
                }
            }
            let all_done = queue.is_empty();
            self.slots[i].fan = Some(Fan {
                items,
                queue,
                running: 0,
                max: fan.max_parallel.unwrap_or(usize::MAX),
                results,
            });
            if all_done {
                self.slots[i].state = Some(StepState::Working);
                return self.fan_close(i).await;
            }
        }
        self.slots[i].state = Some(StepState::Working);
        self.active.insert(i);
    }

    /// Spawns units of started steps, in workflow order, while there is room; returns
    /// whether it did.
    fn spawn_units(&mut self) -> bool {
        let mut spawned = false;
        let active: Vec<usize> = self.active.iter().copied().collect();
        for i in active {
            if self.running >= self.workflow.max_parallel {
                break;
            }
            spawned |= self.spawn_step(i);
        }
        spawned
    }

    /// Spawns what one step can: its unit, or its items up to its own `max_parallel`.
    fn spawn_step(&mut self, i: usize) -> bool {
        let mut spawned = false;
        while self.running < self.workflow.max_parallel {
            let slot = &mut self.slots[i];
            if let Some(p) = slot.passes.as_mut() {
                // A loop: one pass at a time, the next once the last has ended.
                if p.running {
                    break;
                }
                p.running = true;
                let pass = p.done.len();
                self.active.remove(&i);
                self.spawn_pass(i, pass);
                spawned = true;
                break;
            }
            let (item, value) = match &mut slot.fan {
                None if !slot.spawned => {
                    slot.spawned = true;
                    self.active.remove(&i);
                    (None, None)
                }
                Some(fan) if !fan.queue.is_empty() && fan.running < fan.max => {
                    let Some(k) = fan.queue.pop_front() else {
                        break;
                    };
                    fan.running += 1;
                    if fan.queue.is_empty() {
                        self.active.remove(&i);
                    }
                    (Some(k), Some(fan.items[k].clone()))
                }
                _ => break,
            };
            self.spawn_unit(i, item, value);
            spawned = true;
        }
        spawned
    }

    fn spawn_unit(&mut self, i: usize, item: Option<usize>, value: Option<Value>) {
        let context = self.context(Some(i), item.zip(value.as_ref()));
        self.spawn_unit_in(i, item, context);
    }

    /// Spawns a unit of step `i` (its `item`) with this template context.
    pub(super) fn spawn_unit_in(&mut self, i: usize, item: Option<usize>, context: Value) {
        let always = self.workflow.steps[i].trigger == Trigger::Always;
        let token = if always {
            self.always.child_token()
        } else {
            self.work.child_token()
        };
        let resume = match self
            .restore
            .remove(&(self.workflow.steps[i].id.as_str().to_owned(), item))
        {
            Some(c @ (Checkpoint::Sent { .. } | Checkpoint::Asked { .. })) => Some(c),
            _ => None,
        };
        let started_at = match &resume {
            Some(
                Checkpoint::Sent {
                    started_at: Some(t),
                    ..
                }
                | Checkpoint::Asked { started_at: t },
            ) => t.clone(),
            _ => wall_clock(),
        };
        self.slots[i].starts.push((item, started_at.clone()));
        let unit = Unit {
            started_at,
            journal: self.journal.clone(),
            resume,
            workflow: self.workflow.clone(),
            step: i,
            item,
            context,
            run_id: self.run_id.clone(),
            // Units are started from the run's own task, inside its span.
            run_span: tracing::Span::current().id(),
            connector: self.connector.clone(),
            model: self.model.clone(),
            events: self.events.clone(),
            ask: self.ask_tx.clone(),
            cancel: token,
            budget: self.budget.clone(),
            retry_jitter: self.retry_jitter,
        };
        let id = &self.workflow.steps[i].id;
        let span = match item {
            None => info_span!("step", step = %id, item = ?item, otel.name = %format!("step {id}")),
            Some(n) => {
                info_span!("step", step = %id, item = ?item, otel.name = %format!("step {id}[{n}]"))
            }
        };
        // Boxed: a unit's future is large, and spawning moves what it is given several
        // times on its way to the heap.
        self.units.spawn(
            futures::FutureExt::map(Box::pin(unit.run()), move |record| (i, item, record))
                .instrument(span),
        );
        self.running += 1;
    }

    pub(super) async fn unit_done(&mut self, i: usize, item: Option<usize>, mut record: Record) {
        self.questions.retain(|q| !(q.step == i && q.item == item));

        if self.reasking.is_some() {
            // It will not ask again: what was held for it is answered as it stands.
            Box::pin(self.reasked(i, item)).await;
        }
        let starts = &mut self.slots[i].starts;
        if let Some(at) = starts.iter().position(|(k, _)| *k == item) {
            let (_, started) = starts.swap_remove(at);
            record.started_at.get_or_insert(started);
        }
        record.ended_at.get_or_insert_with(wall_clock);
        let used = (self.budget.spend).of_unit(self.workflow.steps[i].id.as_str(), item);
        record.usage = (!used.is_zero()).then(|| Box::new(used));
        if let (Some(ask), Some(pass)) = (&self.on_budget, item)
            && ask.step == i
        {
            return Box::pin(self.budget_answered(pass, record)).await;
        }
        if let (Some(pass), Some(_)) = (item, &self.workflow.steps[i].repeat) {
            return Box::pin(self.pass_done(i, pass, record)).await;
        }
        let Some(k) = item else {
            return self.close(i, record).await;
        };
        self.item_ended(i, k, &record, false).await;
        let Some(fan) = self.slots[i].fan.as_mut() else {
            return;
        };
        fan.running -= 1;
        fan.results[k] = Some(record);
        if !fan.queue.is_empty() || fan.running > 0 {
            return;
        }
        self.fan_close(i).await;
    }

    /// Records the end of item `k` of step `i` (a fan-out item, a loop's pass, an ask of
    /// the budget's approval) and says it. Written down before the run goes on when
    /// `stored` (the run's account depends on it); else queued: the run's next waited
    /// write stores it, and a crash before then resumes the item from its last one.
    pub(super) async fn item_ended(&mut self, i: usize, k: usize, record: &Record, stored: bool) {
        let step = self.workflow.steps[i].id.clone();
        if let Some(j) = &self.journal {
            let done = Checkpoint::Done(record.clone());
            if stored {
                j.unit(step.as_str(), Some(k), &done).await;
            } else {
                j.queue_unit(step.as_str(), Some(k), &done).await;
            }
        }
        self.emit(RunEvent::Step {
            step,
            item: Some(k),
            state: record.state,
            attempt: record.attempts,
            agent: record.agent.clone(),
            task_id: None,
            message: record.error.clone(),
        })
        .await;
    }

    /// Closes a fan-out step whose items have all finished.
    async fn fan_close(&mut self, i: usize) {
        let Some(fan) = self.slots[i].fan.as_mut() else {
            return;
        };
        let items: Vec<Record> = fan
            .results
            .iter_mut()
            .map(|r| r.take().unwrap_or_else(|| Record::new(StepState::Canceled)))
            .collect();
        let done = items
            .iter()
            .filter(|r| r.state == StepState::Completed)
            .count();
        let need = self.workflow.steps[i]
            .for_each
            .as_ref()
            .and_then(|f| f.min_success)
            .unwrap_or(items.len());
        let mut r = Record::new(if done >= need {
            StepState::Completed
        } else {
            StepState::Failed
        });
        if done < need {
            r.error = Some(format!(
                "{done} of {} items completed; {need} needed",
                items.len()
            ));
        }
        if self.canceled && done < need {
            r.state = StepState::Canceled;
        }
        let mut used = crate::engine::Usage::default();
        for it in items.iter().filter_map(|it| it.usage.as_deref()) {
            used.add(it);
        }
        r.usage = (!used.is_zero()).then(|| Box::new(used));
        r.items = Some(items);
        self.close(i, r).await;
    }

    /// Records a step's final state (in the journal first: no step that needs it starts
    /// before it is written), emits it, and settles it.
    pub(super) async fn close(&mut self, i: usize, mut record: Record) {
        let step = &self.workflow.steps[i];
        if record.started_at.is_none() {
            // A fan-out started with its first item.
            record.started_at = record
                .items
                .iter()
                .flatten()
                .filter_map(|r| r.started_at.clone())
                .min();
        }
        record.ended_at.get_or_insert_with(wall_clock);
        if let Some(j) = &self.journal {
            // Not waited for: the run's next waited write (a message's checkpoint, its
            // end) stores it; a crash before then resumes the step from its last one.
            j.queue_unit(step.id.as_str(), None, &Checkpoint::Done(record.clone()))
                .await;
        }
        self.emit(RunEvent::Step {
            step: step.id.clone(),
            item: None,
            state: record.state,
            attempt: record.attempts,
            agent: record.agent.clone(),
            task_id: None,
            message: record.error.clone(),
        })
        .await;
        self.settle(i, record);
    }

    /// Takes a finished step into account: its dependents, the failure policy, and the
    /// template context.
    fn settle(&mut self, i: usize, record: Record) {
        let step = &self.workflow.steps[i];
        self.slots[i].state = Some(record.state);
        self.active.remove(&i);
        self.finished_count += 1;
        for &d in &self.dependents[i] {
            self.waiting[d] -= 1;
            if self.waiting[d] == 0 {
                self.ready.insert(d);
            }
        }
        let failed = matches!(record.state, StepState::Failed | StepState::Rejected)
            && !step.continue_on_error;
        if failed && self.failure.is_none() {
            self.failure = Some(Failure::Step(StepFailure {
                step: step.id.clone(),
                agent: record.agent.clone(),
                reason: record
                    .error
                    .clone()
                    .unwrap_or_else(|| record.state.to_string()),
            }));
        }
        if failed && !self.canceled {
            match self.workflow.on_failure {
                OnFailure::Continue => {}
                OnFailure::Stop => self.stopping = true,
                OnFailure::Cancel => {
                    self.stopping = true;
                    self.work.cancel();
                    self.grace_until
                        .get_or_insert(tokio::time::Instant::now() + self.grace);
                }
            }
        }
        self.settled.insert(step.id.as_str().to_owned(), record);
    }
}

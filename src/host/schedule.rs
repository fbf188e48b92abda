//! Schedules that start runs: each workflow's `[[schedule]]`s, fired at their times
//! by every `serve` that has them, once across all. Whichever process moves the
//! schedule's mark in the store to a time ([`Store::advance_schedule`]) starts that
//! time's run; the others find the mark there already. The run's first message is
//! named after the schedule and the time, so the run says what started it.
//!
//! A schedule seen for the first time is marked at that moment, so it does not make up
//! times from before it existed. A process that starts finds the times it missed by the
//! mark: with `missed = "once"` the last of them fires at once (`schedule.late` true),
//! with `"skip"` none does. Times are read off the workflows loaded now, so a reload
//! that adds, changes or removes a schedule is followed at the next wake.
//!
//! What it cannot promise: a process killed in the instant between moving the mark
//! and starting the run loses that time's run (the mark says it fired).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use orchestrator_core::workflow::Workflow;
use orchestrator_core::workflow::schedule::{Missed, Schedule};
use orchestrator_store::Store;
use serde_json::{Map, Value, json};

use super::Orchestrator;
use super::starter::{Starter, principal_problem};

/// The longest sleep between two looks at the schedules (a reload's new ones, a store
/// that failed a read).
const LOOK_EVERY: Duration = Duration::from_secs(30);

/// What the schedules need: the workflows as loaded now, the store their marks are in,
/// and what starts their runs.
pub struct Schedules {
    pub orchestrator: Orchestrator,
    pub store: Arc<dyn Store>,
    pub starter: Starter,
}

/// One schedule as this process follows it.
struct Followed {
    /// Its next time not yet handled.
    next: Option<SystemTime>,
    /// The version of the workflow its times were found from: a reload that changes
    /// a named schedule's pattern keeps its key, and its next time is found anew.
    hash: String,
}

impl Schedules {
    /// Fires the schedules until the task is dropped.
    pub async fn run(self) {
        let mut followed: HashMap<String, Followed> = HashMap::new();
        loop {
            // A store that failed is asked again after a pause, not at once.
            let mut failed = false;
            let now = SystemTime::now();
            let workflows = self.orchestrator.workflows();
            let current: Vec<(&Arc<Workflow>, &Schedule)> = workflows
                .iter()
                .flat_map(|w| w.schedules.iter().map(move |s| (w, s)))
                .collect();
            followed.retain(|key, _| current.iter().any(|(_, s)| s.key == *key));
            for (workflow, schedule) in &current {
                match followed.get_mut(&schedule.key) {
                    Some(f) => {
                        if let Some(due) = f.next.filter(|d| *d <= now) {
                            // A late wake (a suspended process) fires the latest time due.
                            let at = schedule.last_until(now).unwrap_or(due).max(due);
                            if self.fire(workflow, schedule, at, false).await.is_err() {
                                failed = true;
                                continue;
                            }
                            f.next = schedule.next_after(now);
                        }
                        if f.hash != workflow.hash {
                            f.hash = workflow.hash.clone();
                            f.next = schedule.next_after(now);
                        }
                    }
                    None => match self.begin(workflow, schedule, now).await {
                        Ok(next) => {
                            followed.insert(
                                schedule.key.clone(),
                                Followed {
                                    next,
                                    hash: workflow.hash.clone(),
                                },
                            );
                        }
                        Err(()) => failed = true,
                    },
                }
            }
            let wake = (followed.values())
                .filter_map(|f| f.next)
                .min()
                .and_then(|t| t.duration_since(SystemTime::now()).ok())
                .unwrap_or_default()
                .min(LOOK_EVERY);
            let least = if failed {
                Duration::from_secs(1)
            } else {
                Duration::from_millis(20)
            };
            tokio::time::sleep(wake.max(least)).await;
        }
    }

    /// Starts following `schedule`: marks it if it never was, fires the last time it
    /// missed if it says so; its next time after `now`. `Err` when the store failed
    /// (said; tried again at the next wake).
    async fn begin(
        &self,
        workflow: &Workflow,
        schedule: &Schedule,
        now: SystemTime,
    ) -> Result<Option<SystemTime>, ()> {
        let mark = self.store.schedule_mark(&schedule.key).await.map_err(|e| {
            tracing::error!(workflow = %workflow.id, schedule = %schedule.key, "the schedule's mark cannot be read: {e}");
        })?;
        match mark {
            None => {
                self.store
                    .advance_schedule(&schedule.key, now)
                    .await
                    .map_err(|e| {
                        tracing::error!(workflow = %workflow.id, schedule = %schedule.key, "the schedule cannot be marked: {e}");
                    })?;
            }
            Some(mark) if schedule.missed == Missed::Once => {
                if let Some(missed) = schedule.last_until(now).filter(|t| *t > mark) {
                    self.fire(workflow, schedule, missed, true).await?;
                }
            }
            Some(_) => {}
        }
        let next = schedule.next_after(now);
        if let Some(t) = next {
            tracing::info!(workflow = %workflow.id, "{} next fires at {}", schedule.label(), schedule.local(t));
        }
        Ok(next)
    }

    /// Fires `schedule` for the time `at` if no process has: moves its mark, then
    /// starts the run. `Err` when the store could not say (tried again later).
    async fn fire(
        &self,
        workflow: &Workflow,
        schedule: &Schedule,
        at: SystemTime,
        late: bool,
    ) -> Result<(), ()> {
        let ours = self
            .store
            .advance_schedule(&schedule.key, at)
            .await
            .map_err(|e| {
                tracing::error!(workflow = %workflow.id, schedule = %schedule.key, "the schedule's mark cannot be moved; its time is tried again: {e}");
            })?;
        if !ours {
            return Ok(());
        }
        let time = schedule.local(at);
        let context = json!({ "schedule": {
            "time": time,
            "name": schedule.name.as_deref().unwrap_or(""),
            "late": late,
        }});
        let input = match &schedule.input {
            Some(t) => match workflow.templates.render_data(t, &context) {
                Ok(Value::Object(m)) => m,
                Ok(_) => Map::new(),
                Err(e) => {
                    tracing::error!(workflow = %workflow.id, "{} at {time} started no run: its input: {e}", schedule.label());
                    return Ok(());
                }
            },
            None => Map::new(),
        };
        let unix = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let message_id = format!("schedule:{}:{unix}", schedule.key);
        let started = async {
            let itself = format!("schedule:{}", schedule.key);
            let named = format!("{} of {}", schedule.label(), workflow.id);
            let caller =
                (self.starter).caller(schedule.as_principal.as_deref(), (&itself, &named))?;
            (self.starter)
                .start(&caller, workflow.id.as_str(), message_id, input)
                .await
        };
        match started.await {
            Ok(task) => {
                tracing::info!(workflow = %workflow.id, run = %task.id, late, "{} fired for {time}", schedule.label());
            }
            Err(e) => {
                tracing::error!(workflow = %workflow.id, "{} at {time} started no run: {e}", schedule.label());
            }
        }
        Ok(())
    }
}

/// What keeps the schedules of `workflows` from starting runs on a server whose named
/// principals are `principals` (see `principal_problem`).
pub fn problems(
    workflows: &[Arc<Workflow>],
    principals: &[Arc<a2a::server::Principal>],
    guarded: bool,
) -> Vec<(String, String)> {
    (workflows.iter())
        .flat_map(|w| w.schedules.iter().map(move |s| (w, s)))
        .filter_map(|(w, s)| {
            principal_problem(
                &s.label(),
                s.as_principal.as_deref(),
                principals,
                guarded,
                !w.allow.is_empty(),
            )
            .map(|p| (w.file.clone(), p))
        })
        .collect()
}

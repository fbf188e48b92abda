//! The run and step metrics, read off a run's events as the relay passes them on: runs
//! started and finished, their durations, steps in flight, step durations and retries.
//! The engine reports what happens; this is where it is counted, so the engine stays
//! free of any exporter.

use std::collections::HashMap;
use std::time::Instant;

use orchestrator_core::engine::{RunEvent, StepState};
use orchestrator_metrics::{RunEndLabels, StepEndLabels, StepLabels, WorkflowLabels};

/// One step (or `for_each` item) this process has seen working.
struct Started {
    at: Instant,
    agent: String,
    attempt: u32,
}

/// Counts one run's events. Dropping it before the run ends (the server stopped and
/// left the run for the next one) takes its steps out of the in-flight gauge.
pub(super) struct RunMeter {
    workflow: String,
    /// When this process started the run; `None` for a run it resumed (its start is
    /// another process's).
    started: Option<Instant>,
    steps: HashMap<(String, Option<usize>), Started>,
}

impl RunMeter {
    /// A run this process starts now: counted as started.
    pub(super) fn started(workflow: &str) -> Self {
        orchestrator_metrics::get()
            .runs_started
            .get_or_create(&WorkflowLabels {
                workflow: workflow.to_owned(),
            })
            .inc();
        Self {
            workflow: workflow.to_owned(),
            started: Some(Instant::now()),
            steps: HashMap::new(),
        }
    }

    /// A run this process resumes from the store.
    pub(super) fn resumed(workflow: &str) -> Self {
        Self {
            workflow: workflow.to_owned(),
            started: None,
            steps: HashMap::new(),
        }
    }

    fn in_flight(&self) -> prometheus_client::metrics::gauge::Gauge {
        orchestrator_metrics::get()
            .steps_in_flight
            .get_or_create(&WorkflowLabels {
                workflow: self.workflow.clone(),
            })
            .clone()
    }

    pub(super) fn observe(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Run { state, .. } if state.is_terminal() => {
                let m = orchestrator_metrics::get();
                m.runs_finished
                    .get_or_create(&RunEndLabels {
                        workflow: self.workflow.clone(),
                        state: state.as_str().to_owned(),
                    })
                    .inc();
                if let Some(at) = self.started {
                    m.run_duration
                        .get_or_create(&WorkflowLabels {
                            workflow: self.workflow.clone(),
                        })
                        .observe(at.elapsed().as_secs_f64());
                }
            }
            RunEvent::Step {
                step,
                item,
                state,
                attempt,
                agent,
                ..
            } => {
                let key = (step.as_str().to_owned(), *item);
                let agent = agent.clone().unwrap_or_default();
                if is_final(*state) {
                    if let Some(s) = self.steps.remove(&key) {
                        self.in_flight().dec();
                        orchestrator_metrics::get()
                            .step_duration
                            .get_or_create(&StepEndLabels {
                                workflow: self.workflow.clone(),
                                step: key.0,
                                agent: if agent.is_empty() { s.agent } else { agent },
                                state: state.as_str().to_owned(),
                            })
                            .observe(s.at.elapsed().as_secs_f64());
                    }
                    return;
                }
                if *state == StepState::Pending {
                    return;
                }
                let retried = match self.steps.get_mut(&key) {
                    None => {
                        self.in_flight().inc();
                        self.steps.insert(
                            key.clone(),
                            Started {
                                at: Instant::now(),
                                agent: agent.clone(),
                                attempt: *attempt,
                            },
                        );
                        *attempt > 1
                    }
                    Some(s) => {
                        let retried = *attempt > s.attempt;
                        s.attempt = s.attempt.max(*attempt);
                        if !agent.is_empty() {
                            s.agent = agent.clone();
                        }
                        retried
                    }
                };
                if retried {
                    let agent = match self.steps.get(&key) {
                        Some(s) if agent.is_empty() => s.agent.clone(),
                        _ => agent,
                    };
                    orchestrator_metrics::get()
                        .step_retries
                        .get_or_create(&StepLabels {
                            workflow: self.workflow.clone(),
                            step: key.0,
                            agent,
                        })
                        .inc();
                }
            }
            _ => {}
        }
    }
}

fn is_final(state: StepState) -> bool {
    matches!(
        state,
        StepState::Completed
            | StepState::Failed
            | StepState::Canceled
            | StepState::Rejected
            | StepState::Skipped
            | StepState::UpstreamFailed
    )
}

impl Drop for RunMeter {
    fn drop(&mut self) {
        if !self.steps.is_empty() {
            self.in_flight().dec_by(self.steps.len() as i64);
        }
    }
}

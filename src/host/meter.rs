//! The run and step metrics, read off a run's events as the relay passes them on: runs
//! started and finished, their durations, steps in flight, step durations and retries.
//! The engine reports what happens; this is where it is counted, so the engine stays
//! free of any exporter.

use std::time::Instant;

use orchestrator_core::engine::{RunEvent, StepState};
use orchestrator_metrics::{RunEndLabels, StepEndLabels, StepLabels, WorkflowLabels};
use prometheus_client::metrics::gauge::Gauge;

/// One step (or `for_each` item) this process has seen working.
struct Started {
    step: String,
    item: Option<usize>,
    at: Instant,
    agent: String,
    attempt: u32,
}

pub(super) struct RunMeter {
    workflow: String,
    started: Option<Instant>,
    /// The workflow's steps-in-flight gauge, looked up once.
    in_flight: Gauge,
    /// The run's steps (and items) in flight: a few, searched in place, so that an
    /// event about one allocates nothing.
    steps: Vec<Started>,
}

impl RunMeter {
    pub(super) fn started(workflow: &str) -> Self {
        orchestrator_metrics::get()
            .runs_started
            .get_or_create(&WorkflowLabels {
                workflow: workflow.to_owned(),
            })
            .inc();
        let mut meter = Self::resumed(workflow);
        meter.started = Some(Instant::now());
        meter
    }

    pub(super) fn resumed(workflow: &str) -> Self {
        let in_flight = orchestrator_metrics::get()
            .steps_in_flight
            .get_or_create(&WorkflowLabels {
                workflow: workflow.to_owned(),
            })
            .clone();
        Self {
            workflow: workflow.to_owned(),
            started: None,
            in_flight,
            steps: Vec::new(),
        }
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
                let agent = agent.as_deref().unwrap_or_default();
                let at = self
                    .steps
                    .iter()
                    .position(|s| s.step == step.as_str() && s.item == *item);
                if is_final(*state) {
                    if let Some(s) = at.map(|i| self.steps.swap_remove(i)) {
                        self.in_flight.dec();
                        orchestrator_metrics::get()
                            .step_duration
                            .get_or_create(&StepEndLabels {
                                workflow: self.workflow.clone(),
                                step: s.step,
                                agent: if agent.is_empty() {
                                    s.agent
                                } else {
                                    agent.to_owned()
                                },
                                state: state.as_str().to_owned(),
                            })
                            .observe(s.at.elapsed().as_secs_f64());
                    }
                    return;
                }
                if *state == StepState::Pending {
                    return;
                }
                let retried = match at.map(|i| &mut self.steps[i]) {
                    None => {
                        self.in_flight.inc();
                        self.steps.push(Started {
                            step: step.as_str().to_owned(),
                            item: *item,
                            at: Instant::now(),
                            agent: agent.to_owned(),
                            attempt: *attempt,
                        });
                        *attempt > 1
                    }
                    Some(s) => {
                        let retried = *attempt > s.attempt;
                        s.attempt = s.attempt.max(*attempt);
                        if !agent.is_empty() && s.agent != agent {
                            agent.clone_into(&mut s.agent);
                        }
                        retried
                    }
                };
                if retried {
                    let agent = match agent {
                        "" => self
                            .steps
                            .iter()
                            .find(|s| s.step == step.as_str() && s.item == *item)
                            .map(|s| s.agent.clone())
                            .unwrap_or_default(),
                        named => named.to_owned(),
                    };
                    orchestrator_metrics::get()
                        .step_retries
                        .get_or_create(&StepLabels {
                            workflow: self.workflow.clone(),
                            step: step.as_str().to_owned(),
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
            self.in_flight.dec_by(self.steps.len() as i64);
        }
    }
}

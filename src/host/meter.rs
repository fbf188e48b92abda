//! The run and step metrics, read off a run's events as the relay passes them on: runs
//! started and finished, their durations, steps in flight, step durations and retries.
//! The engine reports what happens; this is where it is counted, so the engine stays
//! free of any exporter.

use std::time::Instant;

use rustc_hash::FxHashMap;

use orchestrator_core::engine::{RunEvent, StepState};
use orchestrator_metrics::{
    RunEndLabels, SpendLabels, StepEndLabels, StepLabels, TokenLabels, WorkflowLabels,
};
use prometheus_client::metrics::gauge::Gauge;

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
    /// The workflow's steps-in-flight gauge, looked up once.
    in_flight: Gauge,
    /// The steps in flight by id, then their items: looked up by the event's own
    /// `&str`, so that an event about a step already seen allocates nothing.
    /// Fx-hashed: the keys are the workflow's own step ids, not a caller's.
    steps: FxHashMap<String, FxHashMap<Option<usize>, Started>>,
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
        let mut meter = Self::resumed(workflow);
        meter.started = Some(Instant::now());
        meter
    }

    /// A run this process resumes from the store.
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
            steps: FxHashMap::default(),
        }
    }

    pub(super) fn observe(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Usage {
                step, item, added, ..
            } if added.tokens() > 0 || added.cost > 0.0 => {
                let agent = (self.steps.get(step.as_str()))
                    .and_then(|items| items.get(item))
                    .map_or_else(|| agent_label(""), |s| agent_label(&s.agent));
                let m = orchestrator_metrics::get();
                for (direction, n) in [
                    ("input", added.input_tokens),
                    ("output", added.output_tokens),
                ] {
                    if n > 0 {
                        let labels = TokenLabels {
                            workflow: self.workflow.clone(),
                            agent: agent.clone(),
                            direction: direction.to_owned(),
                        };
                        m.usage_tokens.get_or_create(&labels).inc_by(n);
                    }
                }
                if added.cost > 0.0 {
                    let labels = SpendLabels {
                        workflow: self.workflow.clone(),
                        agent,
                    };
                    m.usage_cost.get_or_create(&labels).inc_by(added.cost);
                }
            }
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
                let step = step.as_str();
                let agent = agent.as_deref().unwrap_or_default();
                if is_final(*state) {
                    let Some(items) = self.steps.get_mut(step) else {
                        return;
                    };
                    let Some(s) = items.remove(item) else {
                        return;
                    };
                    if items.is_empty() {
                        self.steps.remove(step);
                    }
                    self.in_flight.dec();
                    orchestrator_metrics::get()
                        .step_duration
                        .get_or_create(&StepEndLabels {
                            workflow: self.workflow.clone(),
                            step: step.to_owned(),
                            agent: agent_label(if agent.is_empty() { &s.agent } else { agent }),
                            state: state.as_str().to_owned(),
                        })
                        .observe(s.at.elapsed().as_secs_f64());
                    return;
                }
                if *state == StepState::Pending {
                    return;
                }
                if !self.steps.contains_key(step) {
                    self.steps.insert(step.to_owned(), FxHashMap::default());
                }
                let items = self.steps.get_mut(step).expect("inserted above");
                let (retried, agent) = match items.get_mut(item) {
                    None => {
                        self.in_flight.inc();
                        items.insert(
                            *item,
                            Started {
                                at: Instant::now(),
                                agent: agent.to_owned(),
                                attempt: *attempt,
                            },
                        );
                        (*attempt > 1, agent)
                    }
                    Some(s) => {
                        let retried = *attempt > s.attempt;
                        s.attempt = s.attempt.max(*attempt);
                        if !agent.is_empty() && s.agent != agent {
                            agent.clone_into(&mut s.agent);
                        }
                        (retried, s.agent.as_str())
                    }
                };
                if retried {
                    orchestrator_metrics::get()
                        .step_retries
                        .get_or_create(&StepLabels {
                            workflow: self.workflow.clone(),
                            step: step.to_owned(),
                            agent: agent_label(agent),
                        })
                        .inc();
                }
            }
            _ => {}
        }
    }
}

/// An agent as a metric's label: `unknown` while no agent was chosen yet (an attempt
/// that failed before one was), never an empty value.
fn agent_label(agent: &str) -> String {
    if agent.is_empty() {
        "unknown".to_owned()
    } else {
        agent.to_owned()
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
        let in_flight: usize = self.steps.values().map(FxHashMap::len).sum();
        if in_flight > 0 {
            self.in_flight.dec_by(in_flight as i64);
        }
    }
}

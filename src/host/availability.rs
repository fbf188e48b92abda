//! Whether each workflow's agents can be called now, from the registry's view of them:
//! one answer for `/readyz`, `/metrics` and the cards (a workflow none of whose agents
//! can be called is marked unavailable on them).

use orchestrator_core::workflow::{AgentTarget, StepKind, Workflow};

use crate::registry::AgentStatus;

/// What a workflow's agents allow now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Every agent it calls can be called (or it calls none).
    Available,
    /// Some of the agents it calls cannot be: why, a reason an agent (or skill).
    Degraded(Vec<String>),
    /// None of them can be.
    Unavailable(Vec<String>),
}

impl Availability {
    pub fn as_str(&self) -> &'static str {
        match self {
            Availability::Available => "available",
            Availability::Degraded(_) => "degraded",
            Availability::Unavailable(_) => "unavailable",
        }
    }

    /// Why, for a workflow not available.
    pub fn reasons(&self) -> &[String] {
        match self {
            Availability::Available => &[],
            Availability::Degraded(r) | Availability::Unavailable(r) => r,
        }
    }
}

/// Each agent step of `workflow` whose agent (or skill) cannot be called now: why, and
/// the step; with the number of agent steps it has.
pub fn step_problems(
    workflow: &Workflow,
    statuses: &[AgentStatus],
) -> (usize, Vec<(String, String)>) {
    let mut steps = 0;
    let mut problems = Vec::new();
    for step in &workflow.steps {
        let StepKind::Agent { target, .. } = &step.kind else {
            continue;
        };
        steps += 1;
        let problem = match target {
            AgentTarget::Named(name) => statuses
                .iter()
                .find(|s| s.name == name.as_str())
                .filter(|s| s.health.is_unavailable())
                .map(|s| format!("agent `{name}` is {}", s.health)),
            AgentTarget::Skill(skill) => (!statuses
                .iter()
                .any(|s| !s.health.is_unavailable() && s.skills.iter().any(|k| k == skill)))
            .then(|| format!("no available agent offers skill `{skill}`")),
            AgentTarget::Workflow(_) => None,
        };
        if let Some(problem) = problem {
            problems.push((problem, step.id.to_string()));
        }
    }
    (steps, problems)
}

/// What `workflow`'s agents allow now.
pub fn of(workflow: &Workflow, statuses: &[AgentStatus]) -> Availability {
    let (steps, problems) = step_problems(workflow, statuses);
    if problems.is_empty() {
        return Availability::Available;
    }
    let mut reasons: Vec<String> = Vec::new();
    for (problem, _) in &problems {
        if !reasons.contains(problem) {
            reasons.push(problem.clone());
        }
    }
    if problems.len() == steps {
        Availability::Unavailable(reasons)
    } else {
        Availability::Degraded(reasons)
    }
}

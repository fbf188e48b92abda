//! The audit trail's other two copies: one structured log line per human action on a
//! run (target `audit`, always on; `audit = true`, with the principal, the action, the
//! run and the step), and a counter per action in `/metrics`. The third copy is the run's detail on its task.

use orchestrator_core::access::Actor;
use orchestrator_metrics::ActionLabels;

/// Logs and counts `action` by `by` on run `run` (and `step`).
pub(super) fn action(action: &str, by: &Actor, run: &str, step: Option<&str>) {
    tracing::info!(
        target: crate::telemetry::AUDIT_TARGET,
        audit = true,
        action,
        principal = %by.id,
        name = %by.name,
        run,
        step = step.unwrap_or(""),
        "audit: {} {action} run {run}{}",
        by.name,
        step.map(|s| format!(" at step `{s}`")).unwrap_or_default()
    );
    orchestrator_metrics::get()
        .actions
        .get_or_create(&ActionLabels {
            action: action.to_owned(),
        })
        .inc();
}

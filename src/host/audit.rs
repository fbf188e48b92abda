//! The audit trail's other two copies: one structured log line per human action on a
//! run (target `audit`, always on; `audit = true`, with the principal, the action, the
//! run and the step), and a counter per action in `/metrics`. The third copy is the run's detail on its task.
//! A refused action (a start, an answer, a retry the caller may not make) is a line
//! and a count too (`{action}_refused`), with why; it changes no run.

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
    count(action);
}

/// Logs (at warning level) and counts `action` refused to `by` on `on` (a run, or the
/// workflow a start was for) and `step`, for `why`.
pub(super) fn refused(
    action: &str,
    by: Option<&a2a::server::Principal>,
    on: &str,
    step: Option<&str>,
    why: &str,
) {
    let (id, name) = by.map_or(("", "an anonymous caller"), |p| {
        (p.id.as_str(), p.name.as_str())
    });
    tracing::warn!(
        target: crate::telemetry::AUDIT_TARGET,
        audit = true,
        refused = true,
        action,
        principal = %id,
        name = %name,
        on,
        step = step.unwrap_or(""),
        reason = %why,
        "audit: {name} was refused: {action} on {on}{}: {why}",
        step.map(|s| format!(" at step `{s}`")).unwrap_or_default()
    );
    count(&format!("{action}_refused"));
}

fn count(action: &str) {
    orchestrator_metrics::get()
        .actions
        .get_or_create(&ActionLabels {
            action: action.to_owned(),
        })
        .inc();
}

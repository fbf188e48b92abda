//! Retrying a run, as `argo retry` does: a new run (a new task) of the same workflow
//! version and inputs that begins with the results of the steps the old run completed
//! — they are not sent again — and runs the failed, canceled and skipped ones and what
//! depends on them; with `from`, that step and what depends on it run again too. A
//! request asks for it with `{"retryOf": RUN, "from": STEP}` in its metadata; the new
//! run's detail names the old one (`retryOf`).

use super::{audit, meter};
use std::collections::{HashMap, HashSet};

use super::Orchestrator;
use super::detail::{FROM_KEY, RETRY_OF_KEY};
use crate::host::relay;
use a2a::RpcError;
use a2a::server::{Access, EventSink, RequestContext};
use orchestrator_core::access::Origin;
use orchestrator_core::engine::{Checkpoint, StepState};
use orchestrator_core::workflow::Workflow;
use serde_json::Value;

/// Checkpoints of a run by step and fan-out item.
type Units = HashMap<(String, Option<usize>), Checkpoint>;

/// The run a request asks to retry, and from which step: from the message's metadata,
/// else the request's.
pub(super) fn retry_request(ctx: &RequestContext) -> Option<(String, Option<String>)> {
    let meta = [ctx.message.metadata.as_ref(), ctx.metadata.as_ref()]
        .into_iter()
        .flatten()
        .find(|m| m.contains_key(RETRY_OF_KEY))?;
    let of = meta.get(RETRY_OF_KEY)?.as_str()?.to_owned();
    let from = meta
        .get(FROM_KEY)
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((of, from))
}

/// What a retry keeps of the old run's units: the completed steps (and completed items
/// of a step over a list) that neither are `from` nor depend, directly or not, on a
/// step that runs again.
pub(super) fn kept(workflow: &Workflow, units: &Units, from: Option<&str>) -> Units {
    let completed = |step: &str, item: Option<usize>| matches!(units.get(&(step.to_owned(), item)), Some(Checkpoint::Done(r)) if r.state == StepState::Completed);
    // Steps are in a topological order: a step's needs are decided before it.
    let mut again: HashSet<&str> = HashSet::new();
    let mut tainted: HashSet<&str> = HashSet::new();
    for s in &workflow.steps {
        let id = s.id.as_str();
        if s.needs.iter().any(|n| again.contains(n.as_str())) {
            tainted.insert(id);
        }
        if tainted.contains(id) || from == Some(id) || !completed(id, None) {
            again.insert(id);
        }
    }
    units
        .iter()
        .filter(|((step, item), _)| {
            let s = step.as_str();
            match item {
                // A step over a list that runs again keeps its completed items, unless
                // it runs again because of what came before it.
                Some(_) => completed(s, *item) && !tainted.contains(s) && from != Some(s),
                None => !again.contains(s),
            }
        })
        .map(|(k, c)| (k.clone(), c.clone()))
        .collect()
}

impl Orchestrator {
    /// Starts the retry of run `of` on the task of `ctx`. Errors before the run starts
    /// answer the request (the field named).
    pub(super) async fn retry(
        &self,
        ctx: &RequestContext,
        events: &EventSink,
        of: String,
        from: Option<String>,
    ) -> Result<(), RpcError> {
        let field = format!("metadata.{RETRY_OF_KEY}");
        let saved = self.inner.engine.saved_run(&of).await.map_err(|e| {
            tracing::warn!(run_id = %of, error = %e, "reading the run to retry failed");
            RpcError::internal("the run store failed")
        })?;
        // Another principal's run is not there for this caller (issue 35).
        let saved = saved.filter(|s| {
            let owner = s.header.initiator.as_ref().map(|a| a.id.as_str());
            let rules = &super::access::Rules;
            // Steered by its initiator or who steers every run (no approver steers).
            (ctx.caller).may(
                owner,
                s.header.tenant.as_deref(),
                Access::Steer,
                rules,
                None,
            )
        });
        let Some(saved) = saved else {
            return Err(RpcError::invalid_params(
                &field,
                format!(
                    "no run `{of}` is stored here (runs are kept for retries only in a durable store: `--store sqlite://...`)"
                ),
            ));
        };
        if saved.end.is_none() {
            return Err(RpcError::invalid_params(
                &field,
                format!(
                    "run `{of}` has not ended: cancel it, or let it finish, before retrying it"
                ),
            ));
        }
        let workflow = self.version_of(&saved.header)?;
        if !super::access::may_start(&workflow, &ctx.caller) {
            return Err(super::access::start_refused(
                "retry",
                &workflow,
                &ctx.caller,
            ));
        }
        if let Some(f) = from.as_deref().filter(|f| workflow.step(f).is_none()) {
            return Err(RpcError::invalid_params(
                &format!("metadata.{FROM_KEY}"),
                format!("workflow `{}` has no step `{f}`", workflow.id),
            ));
        }
        let seed = kept(&workflow, &saved.units, from.as_deref());
        let inputs = saved.header.inputs.clone();
        tracing::info!(task_id = %ctx.task_id, retry_of = %of, kept = seed.len(), "retrying a run");
        let by = ctx.caller.principal().map(|p| crate::auth::actor(p));
        self.calls_on_behalf_of(ctx.task_id.as_str(), &ctx.caller, 0);
        if let Some(by) = &by {
            audit::action("retried", by, &of, None);
        }
        let run = self
            .inner
            .engine
            .start_seeded(
                workflow.clone(),
                &inputs,
                ctx.task_id.to_string(),
                seed,
                Origin {
                    retry_of: Some(of.clone()),
                    ..super::origin_of(&ctx.caller)
                },
            )
            .map_err(|p| {
                self.inner.behalf.end(ctx.task_id.as_str());
                RpcError::invalid_params(&field, p.join("; "))
            })?;
        let meter = Box::new(meter::RunMeter::started(workflow.id.as_str()));
        let relayed = relay::Relayed::started(run, meter);
        self.follow(
            &ctx.task_id,
            (&ctx.cancel, &ctx.shutdown),
            events,
            &workflow,
            relayed,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestrator_core::engine::Record;

    #[test]
    fn a_retry_keeps_what_completed_and_nothing_downstream_of_what_runs_again() {
        let toml = r#"
[workflow]
id = "w"
description = "a chain, a fan-out and a side branch"
[steps.a]
agent = "x"
message = "a"
[steps.b]
agent = "x"
needs = ["a"]
message = "b"
[steps.each]
agent = "x"
needs = ["a"]
for_each = "steps.a.data.items"
message = "{{ item }}"
[steps.c]
agent = "x"
needs = ["b"]
message = "c"
[steps.side]
agent = "x"
message = "side"
"#;
        let w = super::super::test_workflow(toml);
        let done = |state| Checkpoint::Done(Record::new(state));
        let mut units: Units = HashMap::new();
        for (s, state) in [
            ("a", StepState::Completed),
            ("b", StepState::Failed),
            ("each", StepState::Failed),
            ("c", StepState::UpstreamFailed),
            ("side", StepState::Completed),
        ] {
            units.insert((s.to_owned(), None), done(state));
        }
        units.insert(("each".into(), Some(0)), done(StepState::Completed));
        units.insert(("each".into(), Some(1)), done(StepState::Failed));
        let keys = |u: &Units| {
            let mut k: Vec<(String, Option<usize>)> = u.keys().cloned().collect();
            k.sort();
            k
        };
        let k = |s: &str, i: Option<usize>| (s.to_owned(), i);
        assert_eq!(
            keys(&kept(&w, &units, None)),
            [k("a", None), k("each", Some(0)), k("side", None)],
            "the failed steps run again, the completed item of the fan-out stays"
        );
        assert_eq!(
            keys(&kept(&w, &units, Some("a"))),
            [k("side", None)],
            "from `a`: everything after it runs again, items too"
        );
        assert_eq!(
            keys(&kept(&w, &units, Some("side"))),
            [k("a", None), k("each", Some(0))]
        );
    }
}

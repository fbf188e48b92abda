//! Who may do what with the orchestrator's runs, beyond the A2A server's rule that a
//! task is its initiator's: who may start a workflow (`allow`), which skills a caller
//! sees on the extended card, and who else may reach a run — the approvers its pending
//! questions name, who may read it and answer them, and only them.
//!
//! What a run waits for is read off the task itself (the pending questions its status
//! message lists), so a replica that does not run the task decides the same way.

use a2a::RpcError;
use a2a::card::AgentCard;
use a2a::server::{Access, Authorize, Caller, Principal};
use a2a::store::StoredTask as Task;
use a2a::types::{Message, TaskState};
use orchestrator_core::access::{Pattern, describe};
use orchestrator_core::workflow::Workflow;
use serde_json::Value;

use super::detail::PendingQuestion;
use crate::auth::{ByRole, Grants, names};

/// Whether `principal` is named by one of `patterns` (an empty list names everyone).
fn named(patterns: &[Pattern], principal: &Principal) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| names(p, principal))
}

/// Whether `caller` may start `workflow`: anyone on a server without credentials.
pub(super) fn may_start(workflow: &Workflow, caller: &Caller) -> bool {
    caller.principal().is_none_or(|p| named(&workflow.allow, p))
}

/// The refusal of a start (`action`: `start` or `retry`) `caller` may not make; on
/// the audit trail.
pub(super) fn start_refused(action: &str, workflow: &Workflow, caller: &Caller) -> RpcError {
    let who = caller.principal().map_or("you", |p| p.name.as_str());
    let why = format!("it is for {}", describe(&workflow.allow));
    super::audit::refused(
        action,
        caller.principal().map(|p| &**p),
        &format!("workflow `{}`", workflow.id),
        None,
        &why,
    );
    RpcError::permission_denied(format!(
        "{who} may not start workflow `{}`: {why}",
        workflow.id
    ))
    .with_data(serde_json::json!({ "workflow": workflow.id.as_str() }))
}

/// The questions a task waits on, as its status message lists them.
fn pending(task: &Task) -> Vec<PendingQuestion> {
    if task.state() != TaskState::InputRequired {
        return Vec::new();
    }
    let Some(message) = &task.status().message else {
        return Vec::new();
    };
    message
        .parts
        .iter()
        .find_map(|p| p.as_object()?.get("pendingQuestions").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The questions `task` waits on that `caller` may answer: it may answer the task (its
/// own, or one its roles or an approver's place let it), the question's approvers
/// name it, and four eyes do not keep the run's initiator from it. Every question, on a
/// server without credentials.
pub(super) fn answerable(task: &Task, caller: &Caller) -> Vec<PendingQuestion> {
    let questions = pending(task);
    let Some(principal) = caller.principal() else {
        return questions;
    };
    let initiator = task.initiator.as_deref();
    if !caller.may(
        initiator,
        task.tenant.as_deref(),
        Access::Answer,
        &Rules,
        Some(task),
    ) {
        return Vec::new();
    }
    (questions.into_iter())
        .filter(|q| named(&approvers(q), principal))
        .filter(|q| !(q.four_eyes && initiator == Some(principal.id.as_str())))
        .collect()
}

/// A question's approvers, read back (a pattern that does not read names nobody).
fn approvers(q: &PendingQuestion) -> Vec<Pattern> {
    q.approvers
        .iter()
        .filter_map(|p| Pattern::parse(p).ok())
        .collect()
}

/// The orchestrator's rules of who reaches a run besides who started it, in the run's
/// tenant: the roles' ([`ByRole`]), and an approver of one of its pending questions,
/// who may read it and answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules;

impl Authorize for Rules {
    fn lets(&self, caller: &Caller, task: Option<&Task>, access: Access) -> bool {
        ByRole.lets(caller, task, access)
            || (caller.principal()).is_some_and(|p| task.is_some_and(|t| approves(t, p, access)))
    }

    fn joins(&self, principal: &Principal, tenant: &str) -> bool {
        ByRole.joins(principal, tenant)
    }
}

/// Whether `principal` is an approver of one of `task`'s pending questions, who may
/// read the task and answer (`access`).
fn approves(task: &Task, principal: &Principal, access: Access) -> bool {
    matches!(access, Access::Read | Access::Answer)
        && pending(task).iter().any(|q| {
            let list = approvers(q);
            !list.is_empty() && named(&list, principal)
        })
}

/// Checks an answer before the task takes it: the question it is for (the step its
/// metadata names, or the only one) must be one `caller` may answer.
pub(super) fn admit(task: &Task, message: &Message, caller: &Caller) -> Result<(), RpcError> {
    let Some(principal) = caller.principal() else {
        return Ok(());
    };
    let questions = pending(task);
    let meta = message.metadata.as_ref();
    let step = meta.and_then(|m| m.get("step")).and_then(Value::as_str);
    let item = meta
        .and_then(|m| m.get("item"))
        .and_then(Value::as_u64)
        .map(|i| i as usize);
    let targeted: Vec<&PendingQuestion> = questions
        .iter()
        .filter(|q| step.is_none_or(|s| q.step == s) && item.is_none_or(|i| q.item == Some(i)))
        .collect();
    // None or several: the run says which (and refuses what it cannot route).
    let [q] = targeted.as_slice() else {
        return Ok(());
    };
    let list = approvers(q);
    let why = if !named(&list, principal) {
        format!("it is for {}", describe(&list))
    } else if q.four_eyes && task.initiator.as_deref() == Some(principal.id.as_str()) {
        "they started this run, and it needs someone else to answer (four eyes)".to_owned()
    } else {
        return Ok(());
    };
    super::audit::refused(
        "answer",
        Some(principal),
        &format!("run {}", task.id),
        Some(&q.step),
        &why,
    );
    Err(RpcError::permission_denied(format!(
        "{} may not answer step `{}`: {why}",
        principal.name, q.step
    ))
    .with_data(serde_json::json!({ "step": q.step })))
}

/// Where the extended card's extension naming its caller is described.
pub const CALLER_EXTENSION: &str =
    "https://github.com/a2a-orchestrator/a2a-orchestrator/blob/main/docs/security.md#the-caller";

/// Keeps on the extended card only the workflows `caller` may start (their skills and
/// their sources), and says who the caller is (`{id, subject, name, groups, roles}`:
/// what the web view needs to offer only what its user may do).
pub(super) fn tailor(
    card: &mut AgentCard,
    workflows: &[std::sync::Arc<Workflow>],
    caller: &Caller,
) {
    if let Some(p) = caller.principal() {
        let g = Grants::of(p);
        let who = serde_json::json!({
            "id": p.id, "subject": p.subject, "name": p.name,
            "groups": g.groups, "roles": g.roles,
        });
        card.capabilities_mut()
            .extensions
            .push(a2a::card::AgentExtension {
                uri: CALLER_EXTENSION.into(),
                description: "Who asked for this card".into(),
                required: false,
                params: who.as_object().cloned().map(Into::into),
            });
    }
    let startable: Vec<&str> = workflows
        .iter()
        .filter(|w| may_start(w, caller))
        .map(|w| w.id.as_str())
        .collect();
    card.skills.retain(|s| startable.contains(&s.id.as_str()));
    for ext in &mut card.capabilities_mut().extensions {
        if let Some(Value::Array(list)) = ext.params.as_mut().and_then(|p| p.get_mut("workflows")) {
            list.retain(|w| {
                w.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| startable.contains(&id))
            });
        }
    }
}

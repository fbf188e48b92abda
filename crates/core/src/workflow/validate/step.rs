//! Checks of one step's own fields — its kind, agent or skill, message, question,
//! options, timeouts, retries and `for_each` — before the graph or templates are known.

use super::super::raw::RawStep;
use super::super::template::Expr;
use super::{Pending, Validator, is_identifier, is_skill_id, placeholder};
use crate::access::Answerers;
use crate::config::diag::did_you_mean;
use crate::config::reader::Sp;
use crate::workflow::{
    AgentName, AgentTarget, FanOut, OnTimeout, RetryPolicy, Step, StepId, StepKind, Trigger,
};
use std::time::Duration;

impl Validator<'_, '_, '_> {
    /// Checks everything about one step that does not need the graph or templates.
    pub(super) fn step(
        &mut self,
        s: &RawStep,
        defaults: &(Option<Duration>, Option<Duration>, RetryPolicy),
        ids: &[String],
    ) -> Pending {
        let id = &s.id.value;
        // Every step stays in the graph analysis even with errors (they are already
        // reported), so that no later check meets a `needs` naming an unknown step.
        if !is_identifier(id) {
            let hint = if id.contains('-') {
                format!(" — try `{}`", id.replace('-', "_"))
            } else {
                String::new()
            };
            self.ctx.error(
                s.id.span.clone(),
                format!("step id `{id}` must be an identifier (letters, digits, `_`) so templates can use `steps.<id>`{hint}"),
            );
        }
        let kind = s.kind.as_ref().map_or("agent", |k| k.value.as_str());
        let not_for = |this: &mut Self, field: &Option<Sp<String>>, name: &str| {
            if let Some(f) = field {
                this.ctx.error(
                    f.span.clone(),
                    format!("`{name}` does not apply to a step of kind \"{kind}\""),
                );
            }
        };
        let target = match kind {
            "agent" => {
                not_for(self, &s.prompt, "prompt");
                not_for(self, &s.system, "system");
                not_for(self, &s.fallback, "fallback");
                if let Some(f) = &s.fields {
                    let span = f.first().map_or(s.span.clone(), |f| f.span.clone());
                    self.ctx
                        .error(span, "`fields` applies only to steps of kind \"input\"");
                }
                match (&s.agent, &s.skill) {
                    (Some(a), None) => {
                        if let Some(known) = self.options.known_agents
                            && !known.contains(&a.value)
                        {
                            let hint =
                                match did_you_mean(&a.value, known.iter().map(String::as_str)) {
                                    Some(m) => format!(" (did you mean `{m}`?)"),
                                    None => format!(
                                        " (agents.toml has: {})",
                                        known.iter().cloned().collect::<Vec<_>>().join(", ")
                                    ),
                                };
                            self.ctx.error(
                                a.span.clone(),
                                format!("agent `{}` is not in agents.toml{hint}", a.value),
                            );
                        }
                        Some(AgentTarget::Named(AgentName::new(a.value.clone())))
                    }
                    (None, Some(k)) if is_skill_id(&k.value) => {
                        Some(AgentTarget::Skill(k.value.clone()))
                    }
                    (None, Some(k)) => {
                        self.ctx.error(
                            k.span.clone(),
                            format!(
                                "skill id `{}` may contain only letters, digits, `-`, `_` and `.`",
                                k.value
                            ),
                        );
                        None
                    }
                    (Some(_), Some(k)) => {
                        self.ctx.error(
                            k.span.clone(),
                            format!("step `{id}` has both `agent` and `skill`: give one (an agent name, or a skill any agent may serve)"),
                        );
                        None
                    }
                    (None, None) => {
                        self.ctx.error(
                            s.id.span.clone(),
                            format!("step `{id}` has neither `agent` nor `skill`; give one, or a `kind` that needs no agent (\"approval\", \"input\", \"llm\")"),
                        );
                        None
                    }
                }
            }
            "workflow" => {
                for (name, field) in [
                    ("agent", &s.agent),
                    ("skill", &s.skill),
                    ("message", &s.message),
                    ("prompt", &s.prompt),
                    ("system", &s.system),
                    ("fallback", &s.fallback),
                ] {
                    not_for(self, field, name);
                }
                if let Some(d) = &s.data {
                    self.ctx.error(
                        d.span.clone(),
                        "`data` does not apply to a step of kind \"workflow\": give the child workflow's inputs in `input`",
                    );
                }
                if let Some(f) = &s.fields {
                    let span = f.first().map_or(s.span.clone(), |f| f.span.clone());
                    self.ctx
                        .error(span, "`fields` applies only to steps of kind \"input\"");
                }
                match &s.workflow {
                    None => self.ctx.error(
                        s.id.span.clone(),
                        format!(
                            "workflow step `{id}` has no `workflow`: the id of the workflow it runs"
                        ),
                    ),
                    Some(w) if !is_skill_id(&w.value) => self.ctx.error(
                        w.span.clone(),
                        format!(
                            "workflow id `{}` may contain only letters, digits, `-`, `_` and `.`",
                            w.value
                        ),
                    ),
                    Some(_) => {}
                }
                if let Some(i) = &s.input
                    && !matches!(i.value, super::super::raw::RawData::Object(_))
                {
                    self.ctx.error(
                        i.span.clone(),
                        "`input` must be a table of the child workflow's inputs, such as { name = \"{{ input.name }}\" }",
                    );
                }
                None
            }
            "approval" | "input" | "llm" => {
                not_for(self, &s.agent, "agent");
                not_for(self, &s.skill, "skill");
                not_for(self, &s.message, "message");
                if let Some(d) = &s.data {
                    self.ctx.error(
                        d.span.clone(),
                        format!("`data` does not apply to a step of kind \"{kind}\""),
                    );
                }
                if kind != "llm" {
                    not_for(self, &s.system, "system");
                    not_for(self, &s.fallback, "fallback");
                }
                if kind != "input"
                    && let Some(f) = &s.fields
                {
                    let span = f.first().map_or(s.span.clone(), |f| f.span.clone());
                    self.ctx
                        .error(span, "`fields` applies only to steps of kind \"input\"");
                }
                if s.prompt.is_none() {
                    self.ctx.error(
                        s.id.span.clone(),
                        if kind == "llm" {
                            format!(
                                "llm step `{id}` has no `prompt`: say what the model should write"
                            )
                        } else {
                            format!(
                                "{kind} step `{id}` has no `prompt`: say what the client is asked"
                            )
                        },
                    );
                }
                None
            }
            other => {
                let span = s.kind.as_ref().map_or(s.span.clone(), |k| k.span.clone());
                self.ctx.error(
                    span,
                    format!("unknown step kind \"{other}\" (expected \"agent\", \"approval\", \"input\", \"llm\" or \"workflow\")"),
                );
                None
            }
        };
        if kind != "workflow" {
            not_for(self, &s.workflow, "workflow");
            if let Some(i) = &s.input {
                self.ctx.error(
                    i.span.clone(),
                    format!("`input` does not apply to a step of kind \"{kind}\" (it gives a workflow step's child its inputs)"),
                );
            }
        }
        if kind == "agent" && s.message.is_none() && s.data.is_none() {
            self.ctx.error(
                s.id.span.clone(),
                format!("step `{id}` sends nothing: give it a `message`, a `data` table, or both"),
            );
        }
        let mut needs = Vec::new();
        for n in s.needs.iter().flat_map(|n| n.value.iter()) {
            if n.value == *id {
                self.ctx
                    .error(n.span.clone(), format!("step `{id}` needs itself"));
            } else if !ids.contains(&n.value) {
                let hint = did_you_mean(&n.value, ids.iter().map(String::as_str))
                    .map(|m| format!(" (did you mean `{m}`?)"))
                    .unwrap_or_default();
                self.ctx.error(
                    n.span.clone(),
                    format!(
                        "step `{id}` needs `{}`, which is not a step of this workflow{hint}",
                        n.value
                    ),
                );
            } else if needs.iter().any(|x: &Sp<String>| x.value == n.value) {
                self.ctx.error(
                    n.span.clone(),
                    format!("`{}` is listed twice in the needs of step `{id}`", n.value),
                );
            } else {
                needs.push(n.clone());
            }
        }
        let trigger = self
            .choice(
                &s.trigger,
                |v| format!("unknown `trigger` \"{v}\""),
                &Trigger::NAMES,
                Trigger::parse,
            )
            .map_or(Trigger::AllSuccess, |t| t.unwrap_or(Trigger::AllSuccess));
        // `[defaults]` are for calls to agents and models: a child run (a workflow step)
        // has the bounds and retries its own keys give, and its workflow's.
        let child = kind == "workflow";
        let timeout = (self.duration(&s.timeout, "timeout")).or(defaults.0.filter(|_| !child));
        let deadline = (self.duration(&s.deadline, "deadline")).or(defaults.1.filter(|_| !child));
        if let (Some(t), Some(d)) = (timeout, deadline)
            && d < t
            && s.deadline.is_some()
        {
            let span = s
                .deadline
                .as_ref()
                .map_or(s.span.clone(), |d| d.span.clone());
            self.ctx.warn(span, format!("step `{id}` has a deadline shorter than one attempt's timeout; the deadline wins"));
        }
        let retry = self.retry(
            if child {
                Default::default()
            } else {
                defaults.2
            },
            &s.retry,
        );
        let positive =
            |this: &mut Self, v: &Option<Sp<i64>>, name: &str, min: i64| -> Option<usize> {
                let v = v.as_ref()?;
                if s.for_each.is_none() {
                    this.ctx.error(
                        v.span.clone(),
                        format!("`{name}` applies only to steps with `for_each`"),
                    );
                    return None;
                }
                if v.value < min {
                    this.ctx.error(
                        v.span.clone(),
                        format!("`{name}` must be at least {min}, got {}", v.value),
                    );
                    return None;
                }
                Some(v.value as usize)
            };
        let max_parallel = positive(self, &s.max_parallel, "max_parallel", 1);
        let min_success = positive(self, &s.min_success, "min_success", 0);
        if s.for_each.is_some() && !matches!(kind, "agent" | "workflow") {
            let span = s
                .for_each
                .as_ref()
                .map_or(s.span.clone(), |f| f.span.clone());
            self.ctx
                .error(span, "`for_each` applies only to agent and workflow steps");
        }
        let on_timeout = self.on_timeout(s, kind);
        let answerers = self.answerers(s, kind);
        let kind_model = match (kind, target) {
            ("agent", Some(target)) => StepKind::Agent {
                target,
                message: None,
                data: None,
            },
            ("input", _) => StepKind::Input {
                prompt: placeholder(),
                fields: Vec::new(),
            },
            ("workflow", _) if s.workflow.is_some() => {
                let w = s
                    .workflow
                    .as_ref()
                    .map(|w| (w.value.clone(), w.span.clone()));
                let (name, span) = w.unwrap_or_default();
                let inputs = match s.input.as_ref().map(|i| &i.value) {
                    Some(super::super::raw::RawData::Object(entries)) => entries
                        .iter()
                        .map(|(k, v)| (k.clone(), v.span.clone()))
                        .collect(),
                    _ => Vec::new(),
                };
                StepKind::Workflow {
                    workflow: crate::workflow::WorkflowId::new(name),
                    input: None,
                    sites: Box::new(crate::workflow::ChildSites {
                        workflow: span,
                        inputs,
                        step: s.id.span.clone(),
                    }),
                }
            }
            ("llm", _) => StepKind::Llm {
                prompt: placeholder(),
                system: None,
                fallback: None,
            },
            // An approval, or a step whose kind or target is in error (already reported).
            _ => StepKind::Approval {
                prompt: placeholder(),
            },
        };
        let step = Step {
            id: StepId::new(id.clone()),
            kind: kind_model,
            needs: needs.iter().map(|n| StepId::new(n.value.clone())).collect(),
            when: None,
            trigger,
            continue_on_error: s.continue_on_error.as_ref().is_some_and(|b| b.value),
            timeout,
            deadline,
            on_timeout,
            answerers,
            retry,
            for_each: s.for_each.as_ref().map(|_| FanOut {
                items: Expr {
                    site: String::new(),
                    source: String::new(),
                },
                max_parallel,
                min_success,
            }),
            repeat: self.repeat(s, kind),
            announce_to: self.announce_to(s, kind),
            uses: Vec::new(),
            uses_inputs: Some(Vec::new()),
        };
        let on_budget = self.asks_budget(s, kind);
        Pending {
            raw_span: s.span.clone(),
            has_when: s.when.is_some(),
            id: s.id.clone(),
            step,
            needs,
            on_budget,
        }
    }

    /// `on_budget = "ask"` and `extend`: an approval asked when the run passes its
    /// budget, outside the graph (no `needs`, `when`, `trigger` or `for_each`).
    fn asks_budget(
        &mut self,
        s: &RawStep,
        kind: &str,
    ) -> Option<(std::ops::Range<usize>, Option<crate::workflow::Budget>)> {
        let extend = s.extend.as_ref().map(|b| self.budget(b, "extend"));
        let Some(on) = &s.on_budget else {
            if let Some(e) = &s.extend {
                self.ctx.error(
                    e.span.clone(),
                    "`extend` goes with `on_budget = \"ask\"`: what an approval adds to the budget",
                );
            }
            return None;
        };
        if on.value != "ask" {
            self.ctx.error(
                on.span.clone(),
                format!(
                    "unknown `on_budget` value \"{}\" (expected \"ask\")",
                    on.value
                ),
            );
            return None;
        }
        if kind != "approval" {
            self.ctx.error(
                on.span.clone(),
                format!(
                    "`on_budget` applies only to approval steps, not to a step of kind \"{kind}\""
                ),
            );
            return None;
        }
        for (name, span) in [
            ("needs", s.needs.as_ref().map(|v| v.span.clone())),
            ("when", s.when.as_ref().map(|v| v.span.clone())),
            ("trigger", s.trigger.as_ref().map(|v| v.span.clone())),
        ] {
            if let Some(span) = span {
                self.ctx.error(
                    span,
                    format!("`{name}` does not apply to the approval asked when the budget is passed (`on_budget`): it is asked then, not scheduled"),
                );
            }
        }
        Some((on.span.clone(), extend))
    }

    /// `announce_to`: an agent of agents.toml, for approval and input steps.
    fn announce_to(&mut self, s: &RawStep, kind: &str) -> Option<AgentName> {
        let a = s.announce_to.as_ref()?;
        if !matches!(kind, "approval" | "input") {
            self.ctx.error(
                a.span.clone(),
                format!("`announce_to` applies to approval and input steps (whose question it sends an agent), not to a step of kind \"{kind}\""),
            );
            return None;
        }
        if let Some(known) = self.options.known_agents
            && !known.contains(&a.value)
        {
            let hint = match did_you_mean(&a.value, known.iter().map(String::as_str)) {
                Some(m) => format!(" (did you mean `{m}`?)"),
                None => format!(
                    " (agents.toml has: {})",
                    known.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            };
            self.ctx.error(
                a.span.clone(),
                format!("agent `{}` is not in agents.toml{hint}", a.value),
            );
            return None;
        }
        Some(AgentName::new(a.value.clone()))
    }

    /// `repeat_until`, `max_repeats` and `on_max_repeats`: a bounded loop of agent, llm
    /// and workflow steps (the expression compiled with the step's templates).
    fn repeat(&mut self, s: &RawStep, kind: &str) -> Option<Box<crate::workflow::Repeat>> {
        let Some(until) = &s.repeat_until else {
            for (name, span) in [
                (
                    "max_repeats",
                    s.max_repeats.as_ref().map(|v| v.span.clone()),
                ),
                (
                    "on_max_repeats",
                    s.on_max_repeats.as_ref().map(|v| v.span.clone()),
                ),
            ] {
                if let Some(span) = span {
                    self.ctx
                        .error(span, format!("`{name}` goes with `repeat_until`"));
                }
            }
            return None;
        };
        if matches!(kind, "approval" | "input") {
            self.ctx.error(
                until.span.clone(),
                format!("`repeat_until` applies to agent, llm and workflow steps, not to a step of kind \"{kind}\""),
            );
        }
        if let Some(f) = &s.for_each {
            self.ctx.error(
                f.span.clone(),
                "a step with `repeat_until` cannot also have `for_each`: loop a workflow step whose workflow fans out",
            );
        }
        let continue_at_max = match &s.on_max_repeats {
            None => false,
            Some(v) if v.value == "fail" => false,
            Some(v) if v.value == "continue" => true,
            Some(v) => {
                self.ctx.error(
                    v.span.clone(),
                    format!(
                        "unknown `on_max_repeats` value \"{}\" (expected \"fail\" or \"continue\")",
                        v.value
                    ),
                );
                false
            }
        };
        let max = match &s.max_repeats {
            None => {
                self.ctx.error(
                    until.span.clone(),
                    format!("`repeat_until` needs `max_repeats`: the most passes the step may make (1 to {})", crate::workflow::MAX_REPEATS),
                );
                return None;
            }
            Some(m) if !(1..=i64::from(crate::workflow::MAX_REPEATS)).contains(&m.value) => {
                self.ctx.error(
                    m.span.clone(),
                    format!(
                        "`max_repeats` must be from 1 to {}, got {}",
                        crate::workflow::MAX_REPEATS,
                        m.value
                    ),
                );
                return None;
            }
            Some(m) => m.value as u32,
        };
        Some(Box::new(crate::workflow::Repeat {
            until: Expr {
                site: String::new(),
                source: String::new(),
            },
            max,
            continue_at_max,
        }))
    }

    /// `approvers`, `four_eyes` and `quorum`: who may answer the step's questions.
    fn answerers(&mut self, s: &RawStep, kind: &str) -> Answerers {
        if kind == "llm" {
            for (name, span) in [
                ("approvers", s.approvers.as_ref().map(|v| v.span.clone())),
                ("four_eyes", s.four_eyes.as_ref().map(|v| v.span.clone())),
            ] {
                if let Some(span) = span {
                    self.ctx.error(
                        span,
                        format!("`{name}` applies to steps that ask questions (approval, input and agent steps), not to llm steps"),
                    );
                }
            }
        }
        let quorum = match &s.quorum {
            None => 1,
            Some(q) if kind != "approval" => {
                self.ctx
                    .error(q.span.clone(), "`quorum` applies only to approval steps");
                1
            }
            Some(q) if !(1..=100).contains(&q.value) => {
                self.ctx.error(
                    q.span.clone(),
                    format!("`quorum` must be between 1 and 100, got {}", q.value),
                );
                1
            }
            Some(q) => q.value as u32,
        };
        Answerers {
            approvers: self.patterns(&s.approvers),
            four_eyes: s.four_eyes.as_ref().is_some_and(|b| b.value),
            quorum,
        }
    }

    /// `on_timeout` and `escalate_to`, for approval and input steps: what silence past
    /// the step's `timeout` does.
    fn on_timeout(&mut self, s: &RawStep, kind: &str) -> OnTimeout {
        if !matches!(kind, "approval" | "input") {
            for (name, span) in [
                ("on_timeout", s.on_timeout.as_ref().map(|v| v.span.clone())),
                (
                    "escalate_to",
                    s.escalate_to.as_ref().map(|v| v.span.clone()),
                ),
            ] {
                if let Some(span) = span {
                    self.ctx.error(
                        span,
                        format!("`{name}` applies only to approval and input steps"),
                    );
                }
            }
            return OnTimeout::Fail;
        }
        let to = self.patterns(&s.escalate_to);
        let chosen = self.choice(
            &s.on_timeout,
            |v| format!("unknown `on_timeout` value \"{v}\""),
            &OnTimeout::NAMES,
            |v| match v {
                "fail" => Some(OnTimeout::Fail),
                "reject" => Some(OnTimeout::Reject),
                "escalate" => Some(OnTimeout::Escalate(Vec::new())),
                _ => None,
            },
        );
        match chosen {
            // (A list whose names are all in error was reported name by name.)
            Some(Ok(OnTimeout::Escalate(_)))
                if s.escalate_to.as_ref().is_none_or(|l| l.value.is_empty()) =>
            {
                let span = s
                    .on_timeout
                    .as_ref()
                    .map_or(s.span.clone(), |v| v.span.clone());
                self.ctx.error(
                    span,
                    "`on_timeout = \"escalate\"` needs `escalate_to`: the approvers the question goes to next",
                );
                OnTimeout::Fail
            }
            Some(Ok(OnTimeout::Escalate(_))) => OnTimeout::Escalate(to),
            Some(Ok(other)) => {
                if let Some(e) = &s.escalate_to {
                    self.ctx.error(
                        e.span.clone(),
                        "`escalate_to` goes with `on_timeout = \"escalate\"`",
                    );
                }
                other
            }
            _ => {
                if s.on_timeout.is_none()
                    && let Some(e) = &s.escalate_to
                {
                    self.ctx.error(
                        e.span.clone(),
                        "`escalate_to` goes with `on_timeout = \"escalate\"`",
                    );
                }
                OnTimeout::Fail
            }
        }
    }
}

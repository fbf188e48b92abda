//! Checks of the fields of a workflow that stand alone: the `[workflow]` header, the
//! `[input]` declarations, durations, retry policies and the workflow-wide defaults.
//! Nothing here needs the graph or the templates.

use super::super::raw::{RawInput, RawRetry, RawWorkflow};
use super::{Header, Validator, choices, is_identifier, is_skill_id};
use crate::access::Pattern;
use crate::config::duration::parse_duration;
use crate::config::reader::Sp;
use crate::workflow::{Backoff, InputSpec, InputType, OnFailure, RetryPolicy, WorkflowId};
use std::time::Duration;

impl Validator<'_, '_, '_> {
    pub(super) fn header(&mut self, raw: &RawWorkflow) -> Option<Header> {
        let Some(h) = &raw.header else {
            self.ctx.error(
                0..0,
                "missing the `[workflow]` table (with at least `id` and `description`)",
            );
            return None;
        };
        let id = match &h.id {
            None => {
                self.ctx.error(h.span.clone(), "[workflow] is missing `id`");
                None
            }
            Some(id) if !is_skill_id(&id.value) => {
                self.ctx.error(
                    id.span.clone(),
                    format!(
                        "workflow id `{}` may contain only letters, digits, `-`, `_` and `.`",
                        id.value
                    ),
                );
                None
            }
            Some(id) => Some(WorkflowId::new(id.value.clone())),
        };
        let description = match &h.description {
            Some(d) if !d.value.trim().is_empty() => Some(d.value.clone()),
            Some(d) => {
                self.ctx.error(
                    d.span.clone(),
                    "`description` must not be empty: it describes the workflow's skill to callers",
                );
                None
            }
            None => {
                self.ctx.error(
                    h.span.clone(),
                    "[workflow] is missing `description`: it describes the workflow's skill to callers",
                );
                None
            }
        };
        let max_parallel = match &h.max_parallel {
            None => Some(8),
            Some(n) if n.value >= 1 => Some(n.value as usize),
            Some(n) => {
                self.ctx.error(
                    n.span.clone(),
                    format!("`max_parallel` must be at least 1, got {}", n.value),
                );
                None
            }
        };
        let on_failure = match self.choice(
            &h.on_failure,
            |v| format!("unknown `on_failure` value \"{v}\""),
            &OnFailure::NAMES,
            OnFailure::parse,
        ) {
            None => Some(OnFailure::Stop),
            Some(r) => r.ok(),
        };
        let list = |l: &Option<Sp<Vec<Sp<String>>>>| {
            l.as_ref()
                .map(|l| l.value.iter().map(|s| s.value.clone()).collect())
                .unwrap_or_default()
        };
        let deadline = self.duration(&h.deadline, "deadline");
        if h.deadline.is_some() && deadline.is_none() {
            return None;
        }
        let allow = self.patterns(&h.allow);
        let budget = h.budget.as_ref().map(|b| self.budget(b, "budget"));
        let id = id?;
        let name = h
            .name
            .as_ref()
            .map_or_else(|| id.to_string(), |n| n.value.clone());
        Some(Header {
            id,
            name,
            description: description?,
            tags: list(&h.tags),
            examples: list(&h.examples),
            max_parallel: max_parallel?,
            on_failure: on_failure?,
            deadline,
            allow,
            budget,
        })
    }

    /// A budget (`[workflow] budget`, an approval's `extend`, named `key`): each bound
    /// greater than zero, and at least one.
    pub(super) fn budget(
        &mut self,
        b: &crate::workflow::raw::RawBudget,
        name: &str,
    ) -> crate::workflow::Budget {
        let mut positive = |n: Option<&Sp<i64>>, key: &str| match n {
            Some(n) if n.value > 0 => Some(n.value as u64),
            Some(n) => {
                self.ctx.error(
                    n.span.clone(),
                    format!("`{name}.{key}` must be more than 0, got {}", n.value),
                );
                None
            }
            None => None,
        };
        let tokens = positive(b.tokens.as_ref(), "tokens");
        let calls = positive(b.calls.as_ref(), "calls");
        let cost = match &b.cost {
            Some(c) if c.value > 0.0 && c.value.is_finite() => Some(c.value),
            Some(c) => {
                self.ctx.error(
                    c.span.clone(),
                    format!("`{name}.cost` must be more than 0, got {}", c.value),
                );
                None
            }
            None => None,
        };
        if b.cost.is_none() && b.tokens.is_none() && b.calls.is_none() {
            self.ctx.error(
                b.span.clone(),
                format!("`{name}` bounds nothing: give `cost`, `tokens` or `calls`"),
            );
        }
        crate::workflow::Budget {
            cost,
            tokens,
            calls,
        }
    }

    /// A list of who-patterns (`group:hr`, `sub:alice`, `role:operator`, `*`), each
    /// problem located.
    pub(super) fn patterns(&mut self, list: &Option<Sp<Vec<Sp<String>>>>) -> Vec<Pattern> {
        let mut out = Vec::new();
        for p in list.iter().flat_map(|l| &l.value) {
            match Pattern::parse(&p.value) {
                Ok(pattern) => out.push(pattern),
                Err(why) => self.ctx.error(p.span.clone(), why),
            }
        }
        out
    }

    pub(super) fn inputs(&mut self, raw: &[RawInput]) -> Vec<InputSpec> {
        let mut out = Vec::new();
        for r in raw {
            let name = &r.name.value;
            if !is_identifier(name) {
                self.ctx.error(
                    r.name.span.clone(),
                    format!("input name `{name}` must be an identifier (letters, digits, `_`) so templates can use `input.{name}`"),
                );
                continue;
            }
            // An input in error stays declared (as the type it can be), so that its
            // uses do not report a misleading "not a declared input" as well.
            let ty = self
                .choice(
                    &r.ty,
                    |v| format!("unknown type \"{v}\" for input `{name}`"),
                    &InputType::NAMES,
                    InputType::parse,
                )
                .map_or(InputType::String, |t| t.unwrap_or(InputType::String));
            let mut spec = InputSpec {
                name: name.clone(),
                ty,
                description: r.description.as_ref().map(|d| d.value.clone()),
                required: r.required.as_ref().is_some_and(|b| b.value),
                default: None,
                allowed: None,
            };
            if let Some(allowed) = &r.allowed {
                for v in &allowed.value {
                    if !ty.matches(&v.value) {
                        self.ctx.error(
                            v.span.clone(),
                            format!(
                                "`enum` value {} of input `{name}` is not a {}",
                                v.value,
                                ty.as_str()
                            ),
                        );
                    }
                }
                if allowed.value.is_empty() {
                    self.ctx.error(
                        allowed.span.clone(),
                        format!("`enum` of input `{name}` is empty"),
                    );
                }
                spec.allowed = Some(allowed.value.iter().map(|v| v.value.clone()).collect());
            }
            if let Some(d) = &r.default {
                if let Err(e) = spec.check(&d.value) {
                    self.ctx
                        .error(d.span.clone(), format!("the default of input {e}"));
                }
                if spec.required
                    && let Some(req) = &r.required
                {
                    self.ctx.error(
                        req.span.clone(),
                        format!("input `{name}` is required and has a default; a required input has none — drop one of them"),
                    );
                }
                spec.default = Some(d.value.clone());
            }
            out.push(spec);
        }
        out
    }

    /// One of a fixed set of names: `None` when absent, `Some(Err(()))` when unknown
    /// (reported, with the names allowed).
    pub(super) fn choice<T>(
        &mut self,
        v: &Option<Sp<String>>,
        unknown: impl FnOnce(&str) -> String,
        names: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Option<Result<T, ()>> {
        let v = v.as_ref()?;
        Some(parse(&v.value).ok_or_else(|| {
            self.ctx.error(
                v.span.clone(),
                format!("{} (expected one of {})", unknown(&v.value), choices(names)),
            );
        }))
    }

    pub(super) fn duration(&mut self, d: &Option<Sp<String>>, what: &str) -> Option<Duration> {
        let d = d.as_ref()?;
        match parse_duration(&d.value) {
            Ok(x) if x.is_zero() => {
                self.ctx
                    .error(d.span.clone(), format!("`{what}` must be longer than zero"));
                None
            }
            Ok(x) => Some(x),
            Err(e) => {
                self.ctx.error(d.span.clone(), format!("`{what}`: {e}"));
                None
            }
        }
    }

    pub(super) fn retry(&mut self, base: RetryPolicy, r: &Option<RawRetry>) -> RetryPolicy {
        let Some(r) = r else { return base };
        let mut p = base;
        if let Some(n) = &r.max_attempts {
            if (1..=100).contains(&n.value) {
                p.max_attempts = n.value as u32;
            } else {
                self.ctx.error(
                    n.span.clone(),
                    format!(
                        "`max_attempts` must be between 1 and 100 (1 means no retry), got {}",
                        n.value
                    ),
                );
            }
        }
        if let Some(b) = &r.backoff {
            match b.value.as_str() {
                "fixed" => p.backoff = Backoff::Fixed,
                "exponential" => p.backoff = Backoff::Exponential,
                other => self.ctx.error(
                    b.span.clone(),
                    format!(
                        "unknown `backoff` \"{other}\" (expected \"fixed\" or \"exponential\")"
                    ),
                ),
            }
        }
        if let Some(d) = self.duration(&r.initial, "retry.initial") {
            p.initial = d;
        }
        if let Some(d) = self.duration(&r.max, "retry.max") {
            p.max = d;
        }
        if p.max < p.initial {
            let span = r
                .max
                .as_ref()
                .or(r.initial.as_ref())
                .map_or(r.span.clone(), |s| s.span.clone());
            self.ctx
                .error(span, "`retry.max` is shorter than `retry.initial`");
        }
        p
    }

    pub(super) fn defaults(
        &mut self,
        raw: &RawWorkflow,
    ) -> (Option<Duration>, Option<Duration>, RetryPolicy) {
        let d = &raw.defaults;
        let timeout = self.duration(&d.timeout, "timeout");
        let deadline = self.duration(&d.deadline, "deadline");
        let retry = self.retry(RetryPolicy::default(), &d.retry);
        (timeout, deadline, retry)
    }
}

//! Stage two of loading: raw structs into a checked [`Workflow`], reporting every
//! problem at once — unknown or repeated `needs`, cycles, bad durations and retries,
//! templates that do not compile, references to undeclared inputs or to steps that are
//! not upstream, unknown agents — and warning about outputs used where the step that
//! produces them may not have completed.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::time::Duration;

use petgraph::graphmap::DiGraphMap;
use serde_json::Value;

use super::model::*;
use super::raw::{self, RawData, RawInput, RawRetry, RawStep, RawWorkflow};
use super::template::{
    CompileError, DataTemplate, Expr, Template, TemplateBuilder, is_template, sole_expression,
};
use crate::config::diag::{Diagnostic, did_you_mean};
use crate::config::duration::parse_duration;
use crate::config::reader::{Ctx, Sp};

/// What the validator may check beyond the file itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct Options<'a> {
    /// Agent names from `agents.toml`; when given, `agent = "..."` must name one.
    pub known_agents: Option<&'a BTreeSet<String>>,
}

/// Fields of `steps.<id>` a template may use.
pub const STEP_FIELDS: &[&str] = &[
    "state",
    "text",
    "data",
    "artifacts",
    "items",
    "error",
    "agent",
];
/// Fields that exist only when the step completed.
const OUTPUT_FIELDS: &[&str] = &["text", "data", "artifacts", "items"];
/// Names minijinja defines itself.
const GLOBALS: &[&str] = &["range", "dict", "namespace", "debug"];

/// The SHA-256 of a workflow's source, in hex: which version of a workflow a run uses.
pub fn content_hash(source: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(source.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Loads a workflow from TOML text. Returns the workflow when there is no error, and
/// every diagnostic (errors and warnings) either way.
pub fn load_str(
    file: &str,
    source: &str,
    options: Options<'_>,
) -> (Option<Workflow>, Vec<Diagnostic>) {
    let mut ctx = Ctx::new(file, source);
    let Some(raw) = raw::read(&mut ctx) else {
        return (None, ctx.diags);
    };
    let workflow = Validator {
        ctx: &mut ctx,
        options,
        templates: TemplateBuilder::default(),
    }
    .run(raw);
    let mut diags = ctx.diags;
    diags.sort_by_key(|d| (d.line, d.column));
    let ok = !diags.iter().any(Diagnostic::is_error);
    (workflow.filter(|_| ok), diags)
}

struct Validator<'c, 's, 'o> {
    ctx: &'c mut Ctx<'s>,
    options: Options<'o>,
    templates: TemplateBuilder,
}

/// What a template or expression referred to, for the checks after the graph is known.
struct Uses {
    /// (site span, referenced step, field) for every `steps.<id>.<field>`.
    steps: Vec<(Range<usize>, String, Option<String>, String)>,
    /// (site span, name) for every `input.<name>` (`None` for `input` used whole).
    inputs: Vec<(Range<usize>, Option<String>)>,
}

/// A step on its way into the model, with the raw parts later checks need.
struct Pending {
    raw_span: Range<usize>,
    has_when: bool,
    id: Sp<String>,
    step: Step,
    needs: Vec<Sp<String>>,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_skill_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn choices(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Validator<'_, '_, '_> {
    fn run(mut self, raw: RawWorkflow) -> Option<Workflow> {
        let header = self.header(&raw);
        let inputs = self.inputs(&raw.inputs);
        let defaults = self.defaults(&raw);
        let ids: Vec<String> = raw.steps.iter().map(|s| s.id.value.clone()).collect();
        // One pending step per raw step, in the same order.
        let pending: Vec<Pending> = raw
            .steps
            .iter()
            .map(|s| self.step(s, &defaults, &ids))
            .collect();
        if raw.steps.is_empty() {
            let span = raw.header.as_ref().map_or(0..0, |h| h.span.clone());
            self.ctx.error(
                span,
                "the workflow has no steps: add at least one `[steps.<id>]` table",
            );
        }
        // With a cycle there is no order; templates are still checked (all but the
        // upstream rule, which needs the order), so every problem is reported at once.
        let order = self.graph(&pending);
        let ancestors = match &order {
            Some(order) => ancestors(&pending, order),
            None => vec![vec![true; pending.len()]; pending.len()],
        };
        let index: HashMap<&str, usize> = pending
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.value.as_str(), i))
            .collect();

        // Templates, now that we know what is upstream of what.
        let refs = Refs {
            inputs: &inputs,
            pending: &pending,
            index: &index,
            ancestors: &ancestors,
        };
        let mut uses = Uses {
            steps: Vec::new(),
            inputs: Vec::new(),
        };
        let mut compiled: Vec<Option<Step>> = Vec::with_capacity(pending.len());
        for (i, (p, raw_step)) in pending.iter().zip(&raw.steps).enumerate() {
            let scope = Scope {
                step: Some(i),
                label: format!("step `{}`", p.id.value),
                fan_out: raw_step.for_each.is_some(),
            };
            let before = uses.steps.len();
            let inputs_before = uses.inputs.len();
            let mut step = self.step_templates(raw_step, p.step.clone(), &scope, &refs, &mut uses);
            if let Some(step) = step.as_mut() {
                // What the step's own message, data and prompt use: `when` and
                // `for_each` are evaluated by the run, not by the step's units.
                let run_only: Vec<Range<usize>> = [&raw_step.when, &raw_step.for_each]
                    .into_iter()
                    .flatten()
                    .map(|e| e.span.clone())
                    .collect();
                let mut used: Vec<StepId> = uses.steps[before..]
                    .iter()
                    .filter(|(span, ..)| !run_only.contains(span))
                    .map(|(_, target, _, _)| StepId::new(target.clone()))
                    .collect();
                used.sort();
                used.dedup();
                step.uses = used;
                let named: Option<Vec<String>> = uses.inputs[inputs_before..]
                    .iter()
                    .filter(|(span, _)| !run_only.contains(span))
                    .map(|(_, n)| n.clone())
                    .collect();
                step.uses_inputs = named.map(|mut n| {
                    n.sort();
                    n.dedup();
                    n
                });
            }
            compiled.push(step);
        }
        let output = raw.output.as_ref().and_then(|o| {
            let scope = Scope {
                step: None,
                label: "[output]".to_owned(),
                fan_out: false,
            };
            self.output(o, &scope, &refs, &mut uses)
        });
        let order = order?;
        self.unguarded(&pending, &index, &uses);

        let (id, name, description, tags, examples, max_parallel, on_failure) = header?;
        let mut by_id: HashMap<String, Step> = HashMap::new();
        for s in compiled.into_iter().flatten() {
            by_id.insert(s.id.as_str().to_owned(), s);
        }
        let steps: Vec<Step> = order
            .iter()
            .filter_map(|&i| by_id.remove(&pending[i].id.value))
            .collect();
        if self.ctx.has_errors() {
            return None;
        }
        Some(Workflow {
            id,
            name,
            description,
            tags,
            examples,
            max_parallel,
            on_failure,
            inputs,
            steps,
            output,
            templates: std::mem::take(&mut self.templates).finish(),
            file: self.ctx.file.to_owned(),
            source: self.ctx.source.into(),
            hash: content_hash(self.ctx.source),
        })
    }

    #[allow(clippy::type_complexity)]
    fn header(
        &mut self,
        raw: &RawWorkflow,
    ) -> Option<(
        WorkflowId,
        String,
        String,
        Vec<String>,
        Vec<String>,
        usize,
        OnFailure,
    )> {
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
        let id = id?;
        let name = h
            .name
            .as_ref()
            .map_or_else(|| id.to_string(), |n| n.value.clone());
        Some((
            id,
            name,
            description?,
            list(&h.tags),
            list(&h.examples),
            max_parallel?,
            on_failure?,
        ))
    }

    fn inputs(&mut self, raw: &[RawInput]) -> Vec<InputSpec> {
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
    fn choice<T>(
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

    fn duration(&mut self, d: &Option<Sp<String>>, what: &str) -> Option<Duration> {
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

    fn retry(&mut self, base: RetryPolicy, r: &Option<RawRetry>) -> RetryPolicy {
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

    fn defaults(&mut self, raw: &RawWorkflow) -> (Option<Duration>, Option<Duration>, RetryPolicy) {
        let d = &raw.defaults;
        let timeout = self.duration(&d.timeout, "timeout");
        let deadline = self.duration(&d.deadline, "deadline");
        let retry = self.retry(RetryPolicy::default(), &d.retry);
        (timeout, deadline, retry)
    }

    /// Checks everything about one step that does not need the graph or templates.
    fn step(
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
                    format!("unknown step kind \"{other}\" (expected \"agent\", \"approval\", \"input\" or \"llm\")"),
                );
                None
            }
        };
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
        let timeout = self.duration(&s.timeout, "timeout").or(defaults.0);
        let deadline = self.duration(&s.deadline, "deadline").or(defaults.1);
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
        let retry = self.retry(defaults.2, &s.retry);
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
        if s.for_each.is_some() && kind != "agent" {
            let span = s
                .for_each
                .as_ref()
                .map_or(s.span.clone(), |f| f.span.clone());
            self.ctx
                .error(span, "`for_each` applies only to agent steps");
        }
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
            retry,
            for_each: s.for_each.as_ref().map(|_| FanOut {
                items: Expr {
                    site: String::new(),
                    source: String::new(),
                },
                max_parallel,
                min_success,
            }),
            uses: Vec::new(),
            uses_inputs: Some(Vec::new()),
        };
        Pending {
            raw_span: s.span.clone(),
            has_when: s.when.is_some(),
            id: s.id.clone(),
            step,
            needs,
        }
    }

    /// Finds cycles (reporting each with its path) and returns a topological order:
    /// file order among steps that are ready at the same time.
    fn graph(&mut self, pending: &[Pending]) -> Option<Vec<usize>> {
        let index: HashMap<&str, usize> = pending
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.value.as_str(), i))
            .collect();
        let mut g: DiGraphMap<usize, ()> = DiGraphMap::new();
        for i in 0..pending.len() {
            g.add_node(i);
        }
        for (i, p) in pending.iter().enumerate() {
            for n in &p.needs {
                if let Some(&j) = index.get(n.value.as_str()) {
                    g.add_edge(j, i, ());
                }
            }
        }
        let mut cyclic = false;
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() < 2 {
                continue;
            }
            cyclic = true;
            let members: BTreeSet<usize> = scc.iter().copied().collect();
            let start = *members.iter().next().expect("an SCC is never empty");
            let path = cycle_path(&g, start, &members);
            let names: Vec<&str> = path.iter().map(|&i| pending[i].id.value.as_str()).collect();
            // Point at the need that closes the cycle: `start` needing the last step.
            let last = path[path.len() - 2];
            let span = pending[start]
                .needs
                .iter()
                .find(|n| n.value == pending[last].id.value)
                .map_or(pending[start].raw_span.clone(), |n| n.span.clone());
            self.ctx.error(
                span,
                format!(
                    "the steps form a cycle through their `needs`: {}",
                    names.join(" → ")
                ),
            );
        }
        if cyclic {
            return None;
        }
        // Kahn's algorithm, taking the earliest ready step in file order each time.
        let mut indegree: Vec<usize> = (0..pending.len()).map(|i| pending[i].needs.len()).collect();
        let mut ready: BTreeSet<usize> = (0..pending.len()).filter(|&i| indegree[i] == 0).collect();
        let mut order = Vec::with_capacity(pending.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for j in g.neighbors(i) {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.insert(j);
                }
            }
        }
        Some(order)
    }

    fn step_templates(
        &mut self,
        raw: &RawStep,
        mut step: Step,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Step> {
        let id = raw.id.value.clone();
        let no_item = Scope {
            fan_out: false,
            ..scope.clone()
        };
        if let Some(w) = &raw.when {
            step.when = self.expr(&format!("steps.{id}.when"), w, &no_item, refs, uses);
        }
        if let (Some(f), Some(fan)) = (&raw.for_each, step.for_each.as_mut()) {
            fan.items = self.expr(&format!("steps.{id}.for_each"), f, &no_item, refs, uses)?;
        }
        match &mut step.kind {
            StepKind::Agent { message, data, .. } => {
                if let Some(m) = &raw.message {
                    *message = Some(self.template(
                        &format!("steps.{id}.message"),
                        m,
                        scope,
                        refs,
                        uses,
                    )?);
                }
                if let Some(d) = &raw.data {
                    *data = Some(self.data(&format!("steps.{id}.data"), d, scope, refs, uses)?);
                }
            }
            StepKind::Approval { prompt } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
            }
            StepKind::Input { prompt, fields } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
                *fields = self.inputs(raw.fields.as_deref().unwrap_or_default());
            }
            StepKind::Llm {
                prompt,
                system,
                fallback,
            } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
                if let Some(t) = &raw.system {
                    *system =
                        Some(self.template(&format!("steps.{id}.system"), t, scope, refs, uses)?);
                }
                if let Some(t) = &raw.fallback {
                    *fallback = Some(self.template(
                        &format!("steps.{id}.fallback"),
                        t,
                        scope,
                        refs,
                        uses,
                    )?);
                }
            }
        }
        Some(step)
    }

    fn output(
        &mut self,
        o: &raw::RawOutput,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Output> {
        if o.text.is_none() && o.data.is_none() {
            self.ctx
                .error(o.span.clone(), "[output] needs `text`, `data`, or both");
            return None;
        }
        let text = match &o.text {
            Some(t) => Some(self.template("output.text", t, scope, refs, uses)?),
            None => None,
        };
        let data = match &o.data {
            Some(d) => Some(self.data("output.data", d, scope, refs, uses)?),
            None => None,
        };
        Some(Output { text, data })
    }

    /// The file span of a part of a template whose source sits at `span`.
    fn sub_span(
        &self,
        span: &Range<usize>,
        source: &str,
        range: Option<Range<usize>>,
    ) -> Range<usize> {
        let raw = &self.ctx.source[span.clone()];
        match (raw.find(source), range) {
            (Some(off), Some(r)) => span.start + off + r.start..span.start + off + r.end,
            _ => span.clone(),
        }
    }

    /// Compiles a template or expression with `compile`, checks its references, and
    /// reports a compile error at its place in the file.
    #[allow(clippy::too_many_arguments)]
    fn compile<T>(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
        failure: &str,
        compile: Compile<T>,
    ) -> Option<T> {
        match compile(&mut self.templates, site, &s.value) {
            Ok((t, found)) => {
                self.check_refs(&found, s, scope, refs, uses);
                Some(t)
            }
            Err(e) => {
                let span = self.sub_span(&s.span, &s.value, e.range);
                self.ctx
                    .error(span, format!("`{site}` {failure}: {}", e.message));
                None
            }
        }
    }

    fn template(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Template> {
        self.compile(
            site,
            s,
            scope,
            refs,
            uses,
            "does not compile",
            TemplateBuilder::template,
        )
    }

    fn expr(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Expr> {
        self.compile(
            site,
            s,
            scope,
            refs,
            uses,
            "is not a valid expression",
            TemplateBuilder::expression,
        )
    }

    fn data(
        &mut self,
        site: &str,
        d: &Sp<RawData>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<DataTemplate> {
        Some(match &d.value {
            RawData::Literal(v) => DataTemplate::Literal(v.clone()),
            RawData::Str(s) => {
                let sp = Sp::new(s.clone(), d.span.clone());
                if let Some(e) = sole_expression(s) {
                    let inner = Sp::new(e.to_owned(), d.span.clone());
                    DataTemplate::Value(self.expr(site, &inner, scope, refs, uses)?)
                } else if is_template(s) {
                    DataTemplate::Text(self.template(site, &sp, scope, refs, uses)?)
                } else {
                    DataTemplate::Literal(Value::String(s.clone()))
                }
            }
            RawData::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    out.push(self.data(&format!("{site}[{i}]"), item, scope, refs, uses)?);
                }
                DataTemplate::Array(out)
            }
            RawData::Object(fields) => {
                let mut out = Vec::new();
                for (k, v) in fields {
                    out.push((
                        k.clone(),
                        self.data(&format!("{site}.{k}"), v, scope, refs, uses)?,
                    ));
                }
                DataTemplate::Object(out)
            }
        })
    }

    /// Checks the variables a template or expression uses.
    fn check_refs(
        &mut self,
        found: &BTreeSet<String>,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) {
        for r in found {
            let parts: Vec<&str> = r.split('.').collect();
            let span = self.ref_span(s, &parts);
            let here = &scope.label;
            match parts[0] {
                "input" => {
                    uses.inputs
                        .push((s.span.clone(), parts.get(1).map(|n| n.to_string())));
                    if let Some(name) = parts.get(1)
                        && !refs.inputs.iter().any(|i| i.name == *name)
                    {
                        let hint = did_you_mean(name, refs.inputs.iter().map(|i| i.name.as_str()))
                            .map(|m| format!(" (did you mean `input.{m}`?)"))
                            .unwrap_or_else(|| " (declare it in [input])".to_owned());
                        self.ctx.error(
                            span,
                            format!(
                                "{here} uses `input.{name}`, which is not a declared input{hint}"
                            ),
                        );
                    }
                }
                "steps" => {
                    let Some(target) = parts.get(1) else {
                        if scope.step.is_some() {
                            self.ctx.error(span, format!("{here} uses `steps` as a whole; refer to one step, as `steps.<id>`"));
                        }
                        continue;
                    };
                    let Some(&t) = refs.index.get(target) else {
                        let hint = did_you_mean(target, refs.index.keys().copied())
                            .map(|m| format!(" (did you mean `steps.{m}`?)"))
                            .unwrap_or_default();
                        self.ctx.error(span, format!("{here} uses `steps.{target}`, which is not a step of this workflow{hint}"));
                        continue;
                    };
                    if let Some(cur) = scope.step {
                        if cur == t {
                            self.ctx.error(span, format!("{here} uses its own outputs (`steps.{target}`), which do not exist yet"));
                            continue;
                        }
                        if !refs.ancestors[cur][t] {
                            self.ctx.error(
                                span,
                                format!("{here} uses `steps.{target}`, which is not upstream of it: add \"{target}\" to its `needs`"),
                            );
                            continue;
                        }
                    }
                    if let Some(field) = parts.get(2) {
                        if !STEP_FIELDS.contains(field) {
                            let hint = did_you_mean(field, STEP_FIELDS.iter().copied())
                                .map(|m| format!("did you mean `{m}`? "))
                                .unwrap_or_default();
                            self.ctx.error(
                                span,
                                format!("`steps.{target}.{field}` is not a step field ({hint}a step has: {})", STEP_FIELDS.join(", ")),
                            );
                            continue;
                        }
                        if *field == "items" && refs.pending[t].step.for_each.is_none() {
                            self.ctx.error(
                                span,
                                format!(
                                    "`steps.{target}.items` exists only for steps with `for_each`"
                                ),
                            );
                            continue;
                        }
                    }
                    uses.steps.push((
                        s.span.clone(),
                        target.to_string(),
                        parts.get(2).map(|f| f.to_string()),
                        scope.label.clone(),
                    ));
                }
                "workflow" => {
                    if let Some(f) = parts.get(1)
                        && !["id", "name"].contains(f)
                    {
                        self.ctx.error(
                            span,
                            format!("`workflow.{f}` is not defined (workflow has: id, name)"),
                        );
                    }
                }
                "run" => {
                    if let Some(f) = parts.get(1)
                        && !["id"].contains(f)
                    {
                        self.ctx
                            .error(span, format!("`run.{f}` is not defined (run has: id)"));
                    }
                }
                "item" | "index" if scope.fan_out => {}
                "item" | "index" => {
                    self.ctx.error(
                        span,
                        format!("{here} uses `{}`, which is defined only in the templates of a step with `for_each`", parts[0]),
                    );
                }
                g if GLOBALS.contains(&g) => {}
                other => {
                    let mut known = vec!["input", "steps", "workflow", "run"];
                    if scope.fan_out {
                        known.extend(["item", "index"]);
                    }
                    let hint = did_you_mean(other, known.iter().copied())
                        .map(|m| format!("did you mean `{m}`? "))
                        .unwrap_or_default();
                    self.ctx.error(span, format!("{here} uses an unknown variable `{other}` ({hint}templates can use {})", known.join(", ")));
                }
            }
        }
    }

    /// The span of `parts[0].parts[1]` inside a template's span, or the whole span.
    fn ref_span(&self, s: &Sp<String>, parts: &[&str]) -> Range<usize> {
        let needle = parts.iter().take(2).copied().collect::<Vec<_>>().join(".");
        let raw = &self.ctx.source[s.span.clone()];
        match raw.find(&needle) {
            Some(off) => s.span.start + off..s.span.start + off + needle.len(),
            None => s.span.clone(),
        }
    }

    /// Warns about outputs of a step used where that step may not have completed.
    fn unguarded(&mut self, pending: &[Pending], index: &HashMap<&str, usize>, uses: &Uses) {
        let may_skip = may_skip(pending);
        let mut warned = BTreeSet::new();
        for (span, target, field, label) in &uses.steps {
            let Some(field) = field else { continue };
            if !OUTPUT_FIELDS.contains(&field.as_str()) {
                continue;
            }
            let guarded =
                uses.steps.iter().any(|(sp, t, f, _)| {
                    sp == span && t == target && f.as_deref() == Some("state")
                }) || {
                    let text = &self.ctx.source[span.clone()];
                    text.contains("default") || text.contains("is defined")
                };
            if guarded {
                continue;
            }
            let a = index[target.as_str()];
            let (reason, consumer) = match label
                .strip_prefix("step `")
                .and_then(|l| l.strip_suffix('`'))
            {
                Some(s_id) => {
                    let s = index[s_id];
                    let skip = may_skip[a]
                        && !propagates(pending, index, a, s, &[Trigger::AllSuccess], false);
                    let fail = pending[a].step.continue_on_error
                        || !propagates(
                            pending,
                            index,
                            a,
                            s,
                            &[Trigger::AllSuccess, Trigger::NoneFailed],
                            true,
                        );
                    let why = if skip {
                        format!("`{target}` may be skipped and `{s_id}` still run")
                    } else if fail {
                        format!("`{target}` may fail and `{s_id}` still run")
                    } else {
                        continue;
                    };
                    (why, format!("step `{s_id}`"))
                }
                None => {
                    let why = if may_skip[a] {
                        format!("`{target}` may be skipped")
                    } else if pending[a].step.continue_on_error {
                        format!("`{target}` may fail (it has continue_on_error)")
                    } else {
                        continue;
                    };
                    (why, "[output]".to_owned())
                }
            };
            if !warned.insert((span.start, target.clone(), field.clone())) {
                continue;
            }
            let needle = format!("steps.{target}.{field}");
            let at = match self.ctx.source[span.clone()].find(&needle) {
                Some(off) => span.start + off..span.start + off + needle.len(),
                None => span.clone(),
            };
            self.ctx.warn(
                at,
                format!(
                    "{consumer} uses `steps.{target}.{field}`, but {reason}; guard it, e.g. {{% if steps.{target}.state == \"completed\" %}}…{{% endif %}}"
                ),
            );
        }
    }
}

/// A `TemplateBuilder` method compiling a template or an expression.
type Compile<T> =
    fn(&mut TemplateBuilder, &str, &str) -> Result<(T, BTreeSet<String>), CompileError>;

/// Where a reference is checked from.
#[derive(Clone)]
struct Scope {
    /// The referencing step (`None` for the output).
    step: Option<usize>,
    label: String,
    /// `item` and `index` are defined.
    fan_out: bool,
}

struct Refs<'a> {
    inputs: &'a [InputSpec],
    pending: &'a [Pending],
    index: &'a HashMap<&'a str, usize>,
    ancestors: &'a [Vec<bool>],
}

fn placeholder() -> Template {
    Template {
        site: String::new(),
        source: String::new(),
    }
}

/// A path around the cycle through `start` within `members`, ending at `start` again.
fn cycle_path(g: &DiGraphMap<usize, ()>, start: usize, members: &BTreeSet<usize>) -> Vec<usize> {
    // Depth-first search for a way back to `start`, staying inside the component.
    let mut stack = vec![(start, vec![start])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        let mut next: Vec<usize> = g.neighbors(node).filter(|n| members.contains(n)).collect();
        next.sort_unstable_by(|a, b| b.cmp(a));
        for n in next {
            if n == start {
                let mut p = path.clone();
                p.push(start);
                return p;
            }
            if seen.insert(n) {
                let mut p = path.clone();
                p.push(n);
                stack.push((n, p));
            }
        }
    }
    vec![start, start]
}

/// `ancestors[i][j]`: step j is upstream of step i.
fn ancestors(pending: &[Pending], order: &[usize]) -> Vec<Vec<bool>> {
    let index: HashMap<&str, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.value.as_str(), i))
        .collect();
    let n = pending.len();
    let mut anc = vec![vec![false; n]; n];
    for &i in order {
        for need in &pending[i].needs {
            let j = index[need.value.as_str()];
            anc[i][j] = true;
            let (a, b) = if i < j {
                let (lo, hi) = anc.split_at_mut(j);
                (&mut lo[i], &hi[0])
            } else {
                let (lo, hi) = anc.split_at_mut(i);
                (&mut hi[0], &lo[j])
            };
            for k in 0..n {
                a[k] |= b[k];
            }
        }
    }
    anc
}

/// Whether each step may end `skipped`: it has a `when`, or a need that may be skipped
/// makes it skipped too.
fn may_skip(pending: &[Pending]) -> Vec<bool> {
    let index: HashMap<&str, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.value.as_str(), i))
        .collect();
    let mut memo: Vec<Option<bool>> = vec![None; pending.len()];
    fn go(
        i: usize,
        pending: &[Pending],
        index: &HashMap<&str, usize>,
        memo: &mut Vec<Option<bool>>,
    ) -> bool {
        if let Some(v) = memo[i] {
            return v;
        }
        let p = &pending[i];
        let inherits = matches!(p.step.trigger, Trigger::AllSuccess | Trigger::OneSuccess);
        let v = p.has_when
            || (inherits
                && p.needs
                    .iter()
                    .any(|n| go(index[n.value.as_str()], pending, index, memo)));
        memo[i] = Some(v);
        v
    }
    (0..pending.len())
        .map(|i| go(i, pending, &index, &mut memo))
        .collect()
}

/// Whether a skip (or failure) of step `a` always stops step `s`: `s`'s trigger is one
/// of `triggers` and one of its needs is `a` or is stopped by `a` in turn.
fn propagates(
    pending: &[Pending],
    index: &HashMap<&str, usize>,
    a: usize,
    s: usize,
    triggers: &[Trigger],
    failure: bool,
) -> bool {
    fn go(
        pending: &[Pending],
        index: &HashMap<&str, usize>,
        a: usize,
        s: usize,
        triggers: &[Trigger],
        failure: bool,
        memo: &mut [Option<bool>],
    ) -> bool {
        if let Some(v) = memo[s] {
            return v;
        }
        let v = triggers.contains(&pending[s].step.trigger)
            && pending[s].needs.iter().any(|n| {
                let j = index[n.value.as_str()];
                if j == a {
                    !(failure && pending[a].step.continue_on_error)
                } else {
                    go(pending, index, a, j, triggers, failure, memo)
                }
            });
        memo[s] = Some(v);
        v
    }
    let mut memo = vec![None; pending.len()];
    go(pending, index, a, s, triggers, failure, &mut memo)
}

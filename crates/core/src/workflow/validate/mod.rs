//! Stage two of loading: raw structs into a checked [`Workflow`], reporting every
//! problem at once — unknown or repeated `needs`, cycles, bad durations and retries,
//! templates that do not compile, references to undeclared inputs or to steps that are
//! not upstream, unknown agents — and warning about outputs used where the step that
//! produces them may not have completed.
//!
//! The checks are split by what they look at: [`fields`] (header, inputs, durations,
//! retries), [`step`] (one step's own fields), [`graph`] (needs, cycles, the order),
//! [`templates`] and [`refs`] (compiling templates and what they refer to), and
//! [`guards`] (outputs used where their step may not have completed). [`Validator::run`]
//! calls them in that order.

mod fields;
mod graph;
mod guards;
mod refs;
mod starts;
mod step;
mod templates;

use graph::ancestors;

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use super::model::{InputSpec, OnFailure, Step, StepId, Workflow, WorkflowId};
use super::raw::{self, RawWorkflow};
use super::template::{Template, TemplateBuilder};
use crate::config::diag::Diagnostic;
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
    "passes",
    "error",
    "agent",
];
/// Fields that exist only when the step completed.
const OUTPUT_FIELDS: &[&str] = &["text", "data", "artifacts", "items", "passes"];
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

/// A `skill = "…"` a step of a workflow file asks for, and where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillAsked {
    pub step: String,
    pub skill: String,
    pub span: Range<usize>,
}

/// The skills a workflow file's steps ask for by name, read from its TOML alone: what
/// can be checked against the agents' cards when the file has other errors too. A step
/// that names an agent as well, or a skill id that is not one, is left out (that is
/// its error); none when the file is not TOML.
pub fn skills_asked(file: &str, source: &str) -> Vec<SkillAsked> {
    let mut ctx = Ctx::new(file, source);
    let Some(raw) = raw::read(&mut ctx) else {
        return Vec::new();
    };
    raw.steps
        .into_iter()
        .filter_map(|s| match (s.agent, s.skill) {
            (None, Some(k)) if is_skill_id(&k.value) => {
                // The skill itself, inside its quotes (a skill id needs no escapes).
                let quoted = source
                    .get(k.span.clone())
                    .is_some_and(|t| t.len() == k.value.len() + 2 && t.starts_with(['"', '\'']));
                let span = if quoted {
                    k.span.start + 1..k.span.end - 1
                } else {
                    k.span
                };
                Some(SkillAsked {
                    step: s.id.value,
                    skill: k.value,
                    span,
                })
            }
            _ => None,
        })
        .collect()
}

struct Validator<'c, 's, 'o> {
    ctx: &'c mut Ctx<'s>,
    options: Options<'o>,
    templates: TemplateBuilder,
}

/// What a template or expression referred to, for the checks after the graph is known.
struct Uses {
    /// Every `steps.<id>[.<field>]`.
    steps: Vec<StepUse>,
    /// Every `input[.<name>]`.
    inputs: Vec<InputUse>,
}

/// One `steps.<id>[.<field>]` in a template or expression.
struct StepUse {
    /// The span of the template or expression it appears in.
    site: Range<usize>,
    /// The step referred to.
    step: String,
    /// The field, when one is named (`steps.a.text`).
    field: Option<String>,
    /// The step whose template it is (by index), or `None` for `[output]`.
    user: Option<usize>,
}

/// One `input[.<name>]` in a template or expression.
struct InputUse {
    /// The span of the template or expression it appears in.
    site: Range<usize>,
    /// The input named, or `None` for `input` used whole.
    name: Option<String>,
}

/// The `[workflow]` table, checked.
struct Header {
    id: WorkflowId,
    name: String,
    description: String,
    tags: Vec<String>,
    examples: Vec<String>,
    max_parallel: usize,
    on_failure: OnFailure,
    deadline: Option<std::time::Duration>,
    allow: Vec<crate::access::Pattern>,
    budget: Option<crate::workflow::Budget>,
}

/// A step on its way into the model, with the raw parts later checks need.
struct Pending {
    raw_span: Range<usize>,
    has_when: bool,
    id: Sp<String>,
    step: Step,
    needs: Vec<Sp<String>>,
    /// `on_budget = "ask"`: where it is said, and the step's `extend` if it gives one.
    on_budget: Option<(Range<usize>, Option<crate::workflow::Budget>)>,
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
                repeats: raw_step.repeat_until.is_some(),
                only: None,
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
                    .filter(|u| !run_only.contains(&u.site))
                    .map(|u| StepId::new(u.step.clone()))
                    .collect();
                used.sort();
                used.dedup();
                step.uses = used;
                let named: Option<Vec<String>> = uses.inputs[inputs_before..]
                    .iter()
                    .filter(|u| !run_only.contains(&u.site))
                    .map(|u| u.name.clone())
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
                repeats: false,
                only: None,
            };
            self.output(o, &scope, &refs, &mut uses)
        });
        let webhook =
            (raw.webhook.as_ref()).and_then(|w| self.webhook(w, &inputs, &refs, &mut uses));
        let schedules = self.schedules(
            header.as_ref().map(|h| h.id.as_str()),
            &raw.schedules,
            &inputs,
            &refs,
            &mut uses,
        );
        let order = order?;
        self.unguarded(&pending, &index, &uses);
        let on_budget = self.on_budget(&pending, header.as_ref().and_then(|h| h.budget));

        let Header {
            id,
            name,
            description,
            tags,
            examples,
            max_parallel,
            on_failure,
            deadline,
            allow,
            budget,
        } = header?;
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
            deadline,
            allow,
            budget,
            on_budget,
            webhook,
            schedules,
            inputs,
            steps,
            output,
            templates: std::mem::take(&mut self.templates).finish(),
            file: self.ctx.file.to_owned(),
            source: self.ctx.source.into(),
            hash: content_hash(self.ctx.source),
        })
    }
}

impl Validator<'_, '_, '_> {
    /// The approval asked when the budget is passed: one at most, in a workflow with a
    /// budget, needed by no step (it is asked, not scheduled).
    fn on_budget(
        &mut self,
        pending: &[Pending],
        budget: Option<crate::workflow::Budget>,
    ) -> Option<crate::workflow::OnBudget> {
        let mut asks = pending
            .iter()
            .filter_map(|p| Some((p, p.on_budget.as_ref()?)));
        let (first, (span, extend)) = asks.next()?;
        for (other, (span, _)) in asks {
            self.ctx.error(
                span.clone(),
                format!(
                    "step `{}` is the second with `on_budget = \"ask\"` (`{}` is the first): one approval extends the budget",
                    other.id.value, first.id.value
                ),
            );
        }
        let Some(budget) = budget else {
            self.ctx.error(
                span.clone(),
                "`on_budget = \"ask\"` needs a budget to extend: give `[workflow] budget`",
            );
            return None;
        };
        for p in pending {
            if let Some(n) = p.needs.iter().find(|n| n.value == first.id.value) {
                self.ctx.error(
                    n.span.clone(),
                    format!(
                        "step `{}` needs `{}`, which is asked only when the run passes its budget (`on_budget`): no step can wait for it",
                        p.id.value, first.id.value
                    ),
                );
            }
        }
        if let Some(e) = extend {
            for (name, adds, bounded) in [
                ("cost", e.cost.is_some(), budget.cost.is_some()),
                ("tokens", e.tokens.is_some(), budget.tokens.is_some()),
                ("calls", e.calls.is_some(), budget.calls.is_some()),
            ] {
                if adds && !bounded {
                    self.ctx.error(
                        span.clone(),
                        format!(
                            "`extend` adds to `{name}`, which `[workflow] budget` does not bound"
                        ),
                    );
                }
            }
        }
        Some(crate::workflow::OnBudget {
            step: first.step.id.clone(),
            extend: extend.unwrap_or(budget),
        })
    }
}

/// Where a reference is checked from.
#[derive(Clone)]
struct Scope {
    /// The referencing step (`None` for the output).
    step: Option<usize>,
    label: String,
    /// `item` and `index` are defined.
    fan_out: bool,
    /// The step loops (`repeat_until`): `iteration` is defined, and the step may use its
    /// own outputs (`steps.<id>`: the pass before, or the pass that just ended).
    repeats: bool,
    /// A webhook's or a schedule's `input`: one variable is all there is.
    only: Option<starts::Only>,
}

/// What references are checked against.
struct Refs<'a> {
    inputs: &'a [InputSpec],
    pending: &'a [Pending],
    index: &'a HashMap<&'a str, usize>,
    ancestors: &'a [Vec<bool>],
}

/// A template that stands in until the real one is compiled.
fn placeholder() -> Template {
    Template {
        site: String::new(),
        source: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::skills_asked;

    #[test]
    fn each_skill_is_found_inside_its_quotes_in_its_own_step() {
        let src = "[steps.a]\nskill = \"flights\"\n[steps.b]\nskill = 'flights'\n[steps.c]\nagent = \"x\"\nskill = \"hotels\"\n";
        let asked = skills_asked("w.toml", src);
        let found: Vec<(&str, &str)> = asked
            .iter()
            .map(|a| (a.step.as_str(), &src[a.span.clone()]))
            .collect();
        // `c` names an agent too: that is its own error, not a skill to look for.
        assert_eq!(found, [("a", "flights"), ("b", "flights")]);
        assert!(asked[1].span.start > src.find("[steps.b]").unwrap());
        assert!(skills_asked("w.toml", "not toml [").is_empty());
    }
}

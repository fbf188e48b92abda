//! What a template may refer to: declared inputs, steps upstream of the one using them
//! and their fields, `workflow`, `run`, `item`/`index` in fan-outs. Every reference is
//! recorded in [`Uses`] for the guard check after the graph is known.

use super::{GLOBALS, InputUse, Refs, STEP_FIELDS, Scope, StepUse, Uses, Validator};
use crate::config::diag::did_you_mean;
use crate::config::reader::Sp;
use std::collections::BTreeSet;
use std::ops::Range;

impl Validator<'_, '_, '_> {
    /// Checks the variables a template or expression uses.
    pub(super) fn check_refs(
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
            if let Some(only) = scope.only {
                if parts[0] != only.var && !GLOBALS.contains(&parts[0]) {
                    self.ctx
                        .error(span, format!("{here} uses `{}`: {}", parts[0], only.says));
                }
                continue;
            }
            match parts[0] {
                "input" => {
                    uses.inputs.push(InputUse {
                        site: s.span.clone(),
                        name: parts.get(1).map(|n| n.to_string()),
                    });
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
                        if cur == t && scope.repeats {
                            // A loop's own passes: the run puts them in its context.
                            continue;
                        }
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
                        if *field == "passes" && refs.pending[t].step.repeat.is_none() {
                            self.ctx.error(
                                span,
                                format!("`steps.{target}.passes` exists only for steps with `repeat_until`"),
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
                    uses.steps.push(StepUse {
                        site: s.span.clone(),
                        step: target.to_string(),
                        field: parts.get(2).map(|f| f.to_string()),
                        user: scope.step,
                    });
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
                "iteration" if scope.repeats => {}
                "iteration" => {
                    self.ctx.error(
                        span,
                        format!("{here} uses `iteration`, which is defined only in the templates of a step with `repeat_until`"),
                    );
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
                    if scope.repeats {
                        known.push("iteration");
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
}

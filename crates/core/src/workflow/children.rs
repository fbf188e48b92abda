//! Checks across workflows, once all are loaded: each workflow step's workflow exists,
//! is given only inputs it declares and every one it requires, and no chain of
//! workflow steps comes back to a workflow it started from or goes deeper than
//! [`MAX_DEPTH`]. Each problem is located at the step's `workflow` (or `input` key).

use std::collections::{BTreeMap, BTreeSet};

use super::{MAX_DEPTH, StepKind, Workflow};
use crate::config::diag::{Diagnostic, Severity, did_you_mean};

/// An edge of the graph of workflows: `from` runs `to` in step `step`.
struct Edge<'a> {
    from: &'a Workflow,
    step: usize,
    to: &'a str,
}

fn error(w: &Workflow, span: std::ops::Range<usize>, message: String) -> Diagnostic {
    Diagnostic::new(Severity::Error, &w.file, &w.source, span, message)
}

fn site(e: &Edge<'_>) -> std::ops::Range<usize> {
    match &e.from.steps[e.step].kind {
        StepKind::Workflow { sites, .. } => sites.workflow.clone(),
        _ => 0..0,
    }
}

/// Every problem of the workflow steps of `workflows`.
pub fn check(workflows: &[&Workflow]) -> Vec<Diagnostic> {
    let by_id: BTreeMap<&str, &Workflow> = workflows.iter().map(|w| (w.id.as_str(), *w)).collect();
    let mut diags = Vec::new();
    let mut edges: Vec<Edge<'_>> = Vec::new();
    for w in workflows {
        for (i, s) in w.steps.iter().enumerate() {
            let StepKind::Workflow {
                workflow, sites, ..
            } = &s.kind
            else {
                continue;
            };
            let Some(child) = by_id.get(workflow.as_str()) else {
                let hint = did_you_mean(workflow.as_str(), by_id.keys().copied())
                    .map(|m| format!(" (did you mean `{m}`?)"))
                    .unwrap_or_else(|| {
                        format!(
                            " (loaded: {})",
                            by_id.keys().copied().collect::<Vec<_>>().join(", ")
                        )
                    });
                diags.push(error(
                    w,
                    sites.workflow.clone(),
                    format!(
                        "step `{}` runs workflow `{workflow}`, which is not loaded{hint}",
                        s.id
                    ),
                ));
                continue;
            };
            for (name, span) in &sites.inputs {
                if !child.inputs.iter().any(|i| i.name == *name) {
                    let hint = did_you_mean(name, child.inputs.iter().map(|i| i.name.as_str()))
                        .map(|m| format!(" (did you mean `{m}`?)"))
                        .unwrap_or_default();
                    diags.push(error(
                        w,
                        span.clone(),
                        format!("step `{}` gives workflow `{workflow}` the input `{name}`, which it does not declare{hint}", s.id),
                    ));
                }
            }
            let missing: Vec<&str> = (child.inputs.iter())
                .filter(|i| i.required && i.default.is_none())
                .filter(|i| !sites.inputs.iter().any(|(n, _)| *n == i.name))
                .map(|i| i.name.as_str())
                .collect();
            if !missing.is_empty() {
                diags.push(error(
                    w,
                    sites.workflow.clone(),
                    format!(
                        "step `{}` runs workflow `{workflow}` without its required input(s) {}: give them in `input`",
                        s.id,
                        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            edges.push(Edge {
                from: w,
                step: i,
                to: child.id.as_str(),
            });
        }
    }
    diags.extend(cycles_and_depth(workflows, &edges));
    diags
}

/// The chains of workflow steps that come back where they started, each reported once
/// at the step that closes it, and the workflows whose chains go deeper than allowed.
fn cycles_and_depth(workflows: &[&Workflow], edges: &[Edge<'_>]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut reported: BTreeSet<Vec<String>> = BTreeSet::new();
    // Depth-first from each workflow along its path; a workflow met again on the path
    // closes a cycle.
    fn walk<'a>(
        id: &'a str,
        path: &mut Vec<&'a Edge<'a>>,
        out: &dyn Fn(&str) -> Vec<&'a Edge<'a>>,
        found: &mut Vec<Vec<&'a Edge<'a>>>,
        deepest: &mut usize,
    ) {
        *deepest = (*deepest).max(path.len());
        if path.len() > MAX_DEPTH {
            return;
        }
        for e in out(id) {
            if let Some(at) = path.iter().position(|p| p.from.id.as_str() == e.to) {
                let mut cycle: Vec<&Edge<'_>> = path[at..].to_vec();
                cycle.push(e);
                found.push(cycle);
                continue;
            }
            if e.from.id.as_str() == e.to {
                found.push(vec![e]);
                continue;
            }
            path.push(e);
            walk(e.to, path, out, found, deepest);
            path.pop();
        }
    }
    let collect = |id: &str| {
        (edges.iter())
            .filter(|e| e.from.id.as_str() == id)
            .collect::<Vec<_>>()
    };
    for w in workflows {
        let mut found = Vec::new();
        let mut deepest = 0;
        walk(
            w.id.as_str(),
            &mut Vec::new(),
            &collect,
            &mut found,
            &mut deepest,
        );
        for cycle in found {
            let mut names: Vec<String> = cycle.iter().map(|e| e.from.id.to_string()).collect();
            let mut key = names.clone();
            key.sort();
            if !reported.insert(key) {
                continue;
            }
            names.push(cycle[0].from.id.to_string());
            let closing = cycle[cycle.len() - 1];
            diags.push(error(
                closing.from,
                site(closing),
                format!(
                    "step `{}` runs workflow `{}`, which leads back to it: a workflow cannot run itself ({})",
                    closing.from.steps[closing.step].id,
                    closing.to,
                    names.join(" → ")
                ),
            ));
        }
        if deepest > MAX_DEPTH
            && let Some(first) = collect(w.id.as_str()).first().copied()
        {
            diags.push(error(
                w,
                site(first),
                format!(
                    "workflow `{}` runs workflows more than {MAX_DEPTH} deep through its workflow steps: at most {MAX_DEPTH} may be",
                    w.id
                ),
            ));
        }
    }
    diags
}

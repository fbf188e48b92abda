//! Renders a workflow's DAG as Mermaid or Graphviz DOT: steps labelled with their agent
//! or skill; approvals, inputs, conditional steps and fan-outs drawn distinctly; edges
//! into steps with a non-default trigger labelled with it.

use std::fmt::Write;

use super::model::{StepKind, Trigger, Workflow};

/// The output formats of `graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Mermaid,
    Dot,
}

fn target(kind: &StepKind) -> String {
    match kind {
        StepKind::Agent { target, .. } => target.to_string(),
        StepKind::Approval { .. } => "approval".to_owned(),
        StepKind::Input { .. } => "input from the client".to_owned(),
        StepKind::Llm { .. } => "written by the LLM".to_owned(),
        StepKind::Workflow { workflow, .. } => format!("workflow {workflow}"),
    }
}

/// The lines under a step's id in its node.
fn details(w: &Workflow, i: usize) -> Vec<String> {
    let s = &w.steps[i];
    let mut lines = vec![target(&s.kind)];
    if let Some(f) = &s.for_each {
        lines.push(format!("for each: {}", f.items.source));
    }
    if let Some(c) = &s.when {
        lines.push(format!("when: {}", c.source));
    }
    if let Some(r) = &s.repeat {
        lines.push(format!("until: {} (at most {})", r.until.source, r.max));
    }
    lines
}

/// Renders the graph.
pub fn render(w: &Workflow, format: Format) -> String {
    match format {
        Format::Mermaid => mermaid(w),
        Format::Dot => dot(w),
    }
}

fn mermaid_text(s: &str) -> String {
    s.replace('&', "#amp;")
        .replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

fn mermaid(w: &Workflow) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "---\ntitle: {}\n---\nflowchart TD",
        mermaid_text(&w.name)
    );
    for (i, s) in w.steps.iter().enumerate() {
        let mut label = format!("<b>{}</b>", s.id);
        for d in details(w, i) {
            let _ = write!(label, "<br/>{}", mermaid_text(&d));
        }
        let (open, close) = match (&s.kind, s.for_each.is_some()) {
            (StepKind::Approval { .. }, _) => ("{{\"", "\"}}"),
            (StepKind::Input { .. }, _) => ("[/\"", "\"/]"),
            (StepKind::Llm { .. }, _) => ("(\"", "\")"),
            (_, true) => ("[[\"", "\"]]"),
            _ => ("[\"", "\"]"),
        };
        let _ = writeln!(out, "    {}{open}{label}{close}", s.id);
        if s.when.is_some() {
            let _ = writeln!(out, "    class {} conditional", s.id);
        }
    }
    for s in &w.steps {
        for n in &s.needs {
            match s.trigger {
                Trigger::AllSuccess => {
                    let _ = writeln!(out, "    {n} --> {}", s.id);
                }
                t => {
                    let _ = writeln!(out, "    {n} -.->|{}| {}", t.as_str(), s.id);
                }
            }
        }
    }
    out.push_str("    classDef conditional stroke-dasharray: 5 5\n");
    out
}

fn dot_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn dot(w: &Workflow) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_text(w.id.as_str()));
    let _ = writeln!(
        out,
        "    label=\"{}\";\n    rankdir=TB;\n    node [shape=box, style=rounded];",
        dot_text(&w.name)
    );
    for (i, s) in w.steps.iter().enumerate() {
        let mut label = s.id.to_string();
        for d in details(w, i) {
            label.push('\n');
            label.push_str(&d);
        }
        let mut attrs = vec![format!("label=\"{}\"", dot_text(&label))];
        match s.kind {
            StepKind::Approval { .. } => attrs.push("shape=diamond".into()),
            StepKind::Input { .. } => attrs.push("shape=parallelogram".into()),
            StepKind::Llm { .. } => attrs.push("shape=box, style=rounded".into()),
            StepKind::Workflow { .. } => attrs.push("shape=box3d".into()),
            StepKind::Agent { .. } => {}
        }
        if s.for_each.is_some() {
            attrs.push("peripheries=2".into());
        }
        if s.when.is_some() {
            attrs.push("style=\"rounded,dashed\"".into());
        }
        let _ = writeln!(
            out,
            "    \"{}\" [{}];",
            dot_text(s.id.as_str()),
            attrs.join(", ")
        );
    }
    for s in &w.steps {
        for n in &s.needs {
            let attrs = match s.trigger {
                Trigger::AllSuccess => String::new(),
                t => format!(" [label=\"{}\", style=dashed]", t.as_str()),
            };
            let _ = writeln!(
                out,
                "    \"{}\" -> \"{}\"{attrs};",
                dot_text(n.as_str()),
                dot_text(s.id.as_str())
            );
        }
    }
    out.push_str("}\n");
    out
}

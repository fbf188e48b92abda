//! Workflows: the TOML definition language, its static checks, and templates.
//!
//! A workflow is a DAG of steps; each step delegates a message to a downstream agent
//! (named, or chosen by skill), or asks the upstream client for an approval or input.
//! Loading is two-staged: `raw` reads the file's shape with spans, `validate` checks
//! its meaning and builds the [`Workflow`] model, reporting every problem at once as a
//! [`Diagnostic`] with `file:line:column`.
//!
//! **Architecture invariant:** this module knows nothing about HTTP, JSON-RPC or the A2A
//! wire format; the engine and host adapt it.

mod children;
pub mod graph;
pub mod model;
mod raw;
pub mod schedule;
pub mod template;
mod validate;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use crate::config::diag::{Diagnostic, Severity};
pub use model::*;
pub use validate::{Options, STEP_FIELDS, SkillAsked, content_hash, load_str, skills_asked};

/// The outcome of loading one file.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    /// The workflow, when the file has no error.
    pub workflow: Option<Workflow>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads one workflow file.
pub fn load_file(path: &Path, options: Options<'_>) -> Loaded {
    let file = path.display().to_string();
    match crate::config::read_text(path) {
        Ok(source) => {
            let (workflow, diagnostics) = load_str(&file, &source, options);
            Loaded {
                path: path.to_owned(),
                workflow,
                diagnostics,
            }
        }
        Err(e) => Loaded {
            path: path.to_owned(),
            workflow: None,
            diagnostics: vec![Diagnostic::new(
                Severity::Error,
                &file,
                "",
                0..0,
                format!("cannot read the file: {e}"),
            )],
        },
    }
}

/// The workflow files a list of paths names: files as they are, directories by their
/// `*.toml` files but tests (`*.test.toml`), sorted. Missing paths are reported as
/// errors.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    collect_matching(paths, |f| {
        f.extension().is_some_and(|x| x == "toml") && !f.to_string_lossy().ends_with(".test.toml")
    })
}

/// The files a list of paths names: files as they are, directories by their files
/// `keep` takes (sorted, not descending). Missing paths are reported as errors.
pub fn collect_matching(
    paths: &[PathBuf],
    keep: impl Fn(&Path) -> bool,
) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.is_dir() {
            match std::fs::read_dir(p) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> = entries
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|f| keep(f) && f.is_file())
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => errors.push(Diagnostic::new(
                    Severity::Error,
                    &p.display().to_string(),
                    "",
                    0..0,
                    format!("cannot read the directory: {e}"),
                )),
            }
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            errors.push(Diagnostic::new(
                Severity::Error,
                &p.display().to_string(),
                "",
                0..0,
                "no such file or directory",
            ));
        }
    }
    (files, errors)
}

/// Loads every workflow in `paths`, and checks that workflow ids are unique.
pub fn load_all(paths: &[PathBuf], options: Options<'_>) -> (Vec<Loaded>, Vec<Diagnostic>) {
    let (files, mut extra) = collect_files(paths);
    let loaded: Vec<Loaded> = files.iter().map(|f| load_file(f, options)).collect();
    let mut seen: BTreeSet<(&str, &Path)> = BTreeSet::new();
    for l in &loaded {
        if let Some(w) = &l.workflow {
            if let Some((_, first)) = seen.iter().find(|(id, _)| *id == w.id.as_str()) {
                extra.push(Diagnostic::new(
                    Severity::Error,
                    &l.path.display().to_string(),
                    "",
                    0..0,
                    format!(
                        "workflow id `{}` is already used by {}; ids must be unique (they are the skills of the orchestrator's card)",
                        w.id,
                        first.display()
                    ),
                ));
            } else {
                seen.insert((w.id.as_str(), l.path.as_path()));
            }
        }
    }
    let workflows: Vec<&Workflow> = loaded.iter().filter_map(|l| l.workflow.as_ref()).collect();
    extra.extend(children::check(&workflows));
    (loaded, extra)
}

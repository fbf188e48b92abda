//! `validate` and `graph`: the workflow author's commands.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::registry::config::{self as agents_config, AgentsFile};
use orchestrator_core::config::Diagnostic;
use orchestrator_core::workflow::graph::{self, Format};
use orchestrator_core::workflow::{self, Options, Workflow};

/// Reads `agents.toml`: the given path (which must exist), or the default one if present.
fn agents(path: Option<&Path>, diags: &mut Vec<Diagnostic>) -> anyhow::Result<Option<AgentsFile>> {
    let (path, required) = match path {
        Some(p) => (p.to_owned(), true),
        None => (PathBuf::from("agents.toml"), false),
    };
    if !required && !path.exists() {
        return Ok(None);
    }
    let text = orchestrator_core::config::read_text(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let (file, d) = agents_config::load_str(&path.display().to_string(), &text);
    diags.extend(d);
    Ok(file)
}

/// `validate [PATH]... [--agents FILE] [--strict] [--offline]`. With an agents file
/// (given, or `agents.toml` found), the agents are discovered too (unless `--offline`)
/// and every `skill = "…"` checked against their cards: a skill no card offers is an
/// error when every agent answered, a warning while some could not be reached.
pub async fn validate(
    paths: &[PathBuf],
    agents_path: Option<&Path>,
    strict: bool,
    offline: bool,
) -> anyhow::Result<ExitCode> {
    let mut diags = Vec::new();
    let agents = agents(agents_path, &mut diags)?;
    let names = agents.as_ref().map(AgentsFile::names);
    let options = Options {
        known_agents: names.as_ref(),
    };
    let default = [PathBuf::from("workflows")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    // Test files (`*.test.toml`) named, or in a directory named or its `tests/`, are
    // checked as tests, against the workflows of the directory named (or `workflows`).
    let (tests, paths): (Vec<PathBuf>, Vec<PathBuf>) = paths
        .iter()
        .cloned()
        .partition(|p| crate::testmode::is_test_file(p));
    let mut test_paths = tests;
    for p in paths.iter().filter(|p| p.is_dir()) {
        test_paths.push(p.clone());
        if p.join("tests").is_dir() {
            test_paths.push(p.join("tests"));
        }
    }
    let workflows_dir = paths
        .iter()
        .find(|p| p.is_dir())
        .cloned()
        .unwrap_or_else(|| PathBuf::from("workflows"));
    let (test_files, _) = crate::testmode::collect(&test_paths);
    let (loaded, extra) = workflow::load_all(&paths, options);
    let mut out = std::io::stdout().lock();
    for l in &loaded {
        diags.extend(l.diagnostics.iter().cloned());
        if let Some(w) = &l.workflow {
            let warnings = l.diagnostics.len();
            let note = if warnings > 0 {
                format!(", {warnings} warning(s)")
            } else {
                String::new()
            };
            writeln!(
                out,
                "ok    {} — `{}`, {} steps{note}",
                l.path.display(),
                w.id,
                w.steps.len()
            )?;
        } else {
            writeln!(out, "FAIL  {}", l.path.display())?;
        }
    }
    diags.extend(extra);
    for f in &test_files {
        let (case, d) = crate::testmode::file::load(f, &workflows_dir);
        match case {
            Some(c) => writeln!(out, "ok    {} — test of `{}`", f.display(), c.workflow.id)?,
            None => writeln!(out, "FAIL  {}", f.display())?,
        }
        diags.extend(d);
    }
    if let Some(file) = agents.as_ref().filter(|_| !offline) {
        let registry = crate::registry::Registry::discover(
            file,
            &crate::registry::env::ProcessEnv,
            crate::registry::RegistryOptions::default(),
        )
        .await;
        let checked: Vec<&Workflow> = loaded.iter().filter_map(|l| l.workflow.as_ref()).collect();
        diags.extend(registry.skill_problems(checked));
        // A file with errors still has its skills checked: all its problems at once.
        for l in loaded.iter().filter(|l| l.workflow.is_none()) {
            if let Ok(source) = std::fs::read_to_string(&l.path) {
                let file = l.path.display().to_string();
                let asked = workflow::skills_asked(&file, &source);
                diags.extend(registry.skill_problems_in(&file, &source, &asked));
            }
        }
        let statuses = registry.statuses();
        let down: Vec<&str> = statuses
            .iter()
            .filter(|s| s.health.is_unavailable())
            .map(|s| s.name.as_str())
            .collect();
        writeln!(
            out,
            "{} agent(s) discovered{}",
            statuses.len() - down.len(),
            if down.is_empty() {
                String::new()
            } else {
                format!(", not reached: {}", down.join(", "))
            }
        )?;
        registry.shutdown().await;
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    let mut err = std::io::stderr().lock();
    for d in &diags {
        writeln!(err, "{d}\n")?;
    }
    writeln!(
        out,
        "{} workflow file(s){} checked: {errors} error(s), {warnings} warning(s)",
        loaded.len(),
        match test_files.len() {
            0 => String::new(),
            n => format!(" and {n} test file(s)"),
        }
    )?;
    let failed =
        errors > 0 || (strict && warnings > 0) || (loaded.is_empty() && test_files.is_empty());
    if loaded.is_empty() && test_files.is_empty() {
        writeln!(
            err,
            "error: no workflow files found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Finds a workflow by path, or by id among the files of `dir`.
pub(super) fn find(
    workflow: &str,
    dir: &Path,
    options: Options<'_>,
) -> anyhow::Result<Result<Workflow, Vec<Diagnostic>>> {
    let as_path = Path::new(workflow);
    if as_path.is_file() {
        let l = workflow::load_file(as_path, options);
        return Ok(l.workflow.ok_or(l.diagnostics));
    }
    let (loaded, _) = workflow::load_all(&[dir.to_owned()], options);
    let mut ids = Vec::new();
    for l in loaded {
        match l.workflow {
            Some(w) if w.id.as_str() == workflow => return Ok(Ok(w)),
            Some(w) => ids.push(w.id.to_string()),
            None => {
                // A broken file might be the one asked for: say so if its name matches.
                if l.path.file_stem().is_some_and(|s| s == workflow) {
                    return Ok(Err(l.diagnostics));
                }
            }
        }
    }
    Err(bad_input!(
        "no workflow file or id `{workflow}` (workflows in {}: {})",
        dir.display(),
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        }
    ))
}

/// `graph WORKFLOW [--format mermaid|dot]`.
pub fn graph(workflow: &str, dir: &Path, format: Format) -> anyhow::Result<ExitCode> {
    match find(workflow, dir, Options::default())? {
        Ok(w) => {
            say_part!("{}", graph::render(&w, format))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            for d in diags {
                eprintln!("{d}\n");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

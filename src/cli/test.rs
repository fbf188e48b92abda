//! `test [PATH]... [--workflows DIR] [--filter TEXT] [--junit FILE]`: runs workflow
//! tests (`*.test.toml`) on scripted agents and virtual time, one line per test.
//! Exits 0 when all pass, 1 when one fails, 2 when a test file is invalid.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::testmode::{self, report, run};

/// What `test` was asked.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Test files (`*.test.toml`) or directories of them [default: WORKFLOWS/tests]
    pub paths: Vec<PathBuf>,
    /// Where the workflows the tests name are.
    #[arg(long, default_value = "workflows")]
    pub workflows: PathBuf,
    /// Run only the tests whose name contains this.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print what each run came to (the document the expectations' paths read), as
    /// JSON: to see what to expect.
    #[arg(long)]
    pub show: bool,
}

pub async fn test(args: TestArgs) -> anyhow::Result<ExitCode> {
    let paths = match args.paths.is_empty() {
        true => vec![args.workflows.join("tests")],
        false => args.paths.clone(),
    };
    let (files, mut diags) = testmode::collect(&paths);
    let missing = diags.len();
    let (cases, problems, invalid) = testmode::load_all(&files, &args.workflows);
    diags.extend(problems);
    let invalid = invalid + missing;
    let mut err = std::io::stderr().lock();
    for d in &diags {
        writeln!(err, "{d}\n")?;
    }
    drop(err);
    let chosen: Vec<_> = cases
        .into_iter()
        .filter(|c| args.filter.as_deref().is_none_or(|f| c.name.contains(f)))
        .collect();
    let mut outcomes = Vec::with_capacity(chosen.len());
    for case in &chosen {
        let outcome = run::run(case.clone()).await;
        say!("{}", report::line(case, &outcome))?;
        if args.show {
            say!("{}", serde_json::to_string_pretty(&outcome.doc)?)?;
        }
        outcomes.push(outcome);
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let passed = outcomes.len() - failed;
    let mut summary = format!(
        "{} test(s): {passed} passed, {failed} failed",
        outcomes.len()
    );
    if invalid > 0 {
        summary.push_str(&format!("; {invalid} test file(s) invalid"));
    }
    if files.is_empty() && invalid == 0 {
        summary = format!(
            "no test files (*.test.toml) in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    say!("{summary}")?;
    if let Some(path) = &args.junit {
        let results: Vec<_> = chosen.iter().map(|c| &**c).zip(&outcomes).collect();
        std::fs::write(path, report::junit(&results))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(if invalid > 0 || files.is_empty() {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

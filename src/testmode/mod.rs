//! `a2a-orchestrator test`: workflows tested like code. A test file (`*.test.toml`)
//! names a workflow, its inputs and who starts it, scripts what each agent answers
//! (`file.rs`), and says what the run must come to (`expect.rs`); the run is the
//! engine's own, on scripted agents in process and virtual time (`script.rs`, `run.rs`),
//! so it needs no network or database and comes out the same every time. Results as
//! one line per test and JUnit XML (`report.rs`).

pub mod child;
pub mod expect;
pub mod file;
pub mod record;
pub mod report;
pub mod run;
pub mod script;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use orchestrator_core::config::Diagnostic;

/// The test files `paths` name: files as they are, directories by their `*.test.toml`
/// files (sorted, not descending). A path that does not exist is a problem.
pub fn collect(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    orchestrator_core::workflow::collect_matching(paths, is_test_file)
}

/// Whether `path` is named as a test file (`*.test.toml`).
pub fn is_test_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".test.toml"))
}

/// Reads every test file: the tests, and the problems of the files that are not.
pub fn load_all(
    files: &[PathBuf],
    workflows: &Path,
) -> (Vec<Arc<file::TestCase>>, Vec<Diagnostic>, usize) {
    let mut cases = Vec::new();
    let mut diags = Vec::new();
    let mut invalid = 0;
    for f in files {
        let (case, d) = file::load(f, workflows);
        match case {
            Some(case) => cases.push(Arc::new(case)),
            None => invalid += 1,
        }
        diags.extend(d);
    }
    (cases, diags, invalid)
}

//! The full suite's passes run on the test binaries plain `cargo test` built, each test
//! timed, and the slowest named at the end: the next slow test is visible in every CI
//! log, not found by bisecting one.
//!
//! Each test's time is libtest's own (`--report-time`). That option is still unstable,
//! so the test binaries — only they, never the compiler — run with `RUSTC_BOOTSTRAP=1`,
//! which lets a stable toolchain's libtest take it; cargo is not in between (it would
//! count that variable as a change and build everything again).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A test binary cargo built, and the package directory it runs in (as `cargo test`
/// runs it).
pub struct TestBinary {
    pub path: PathBuf,
    pub dir: PathBuf,
}

/// The test binaries of the workspace's `--tests` targets, built by `cargo` (fresh after
/// plain `cargo test`: nothing is built again).
pub fn binaries(cargo: &mut Command) -> Result<Vec<TestBinary>, String> {
    let out = cargo
        .args(["test", "--tests", "--no-run", "--message-format=json"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building the tests failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let found = text
        .lines()
        .filter(|l| l.contains(r#""reason":"compiler-artifact""#) && test_harness(l))
        .filter_map(|l| {
            let path = string_field(l, "executable")?;
            let manifest = string_field(l, "manifest_path")?;
            Some(TestBinary {
                path: PathBuf::from(path),
                dir: Path::new(&manifest).parent()?.to_owned(),
            })
        })
        .collect();
    Ok(found)
}

/// Whether a compiler artifact is a test harness (its profile's `test`), not a binary
/// built for the tests to run (`CARGO_BIN_EXE_…`), which has an executable too.
fn test_harness(line: &str) -> bool {
    line.find(r#""profile":{"#)
        .and_then(|at| {
            let profile = &line[at..];
            profile
                .find('}')
                .map(|end| profile[..end].contains(r#""test":true"#))
        })
        .unwrap_or(false)
}

/// The string value of `"key":"…"` in a line of cargo's JSON (paths: no quotes or
/// escapes in them on the systems the suite runs on).
fn string_field(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let len = line[start..].find('"')?;
    Some(line[start..start + len].replace("\\\\", "\\"))
}

/// Runs `binary` with `args` and `envs`, its output passed on; each test that ended,
/// with its time.
pub fn run(
    binary: &TestBinary,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<Vec<(String, Duration)>, String> {
    let mut child = Command::new(&binary.path)
        .args(args)
        .args(["-Z", "unstable-options", "--report-time"])
        .envs(envs.iter().copied())
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(&binary.dir)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.path.display()))?;
    let mut times = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(timed) = test_time(&line) {
                times.push(timed);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("{}: {e}", binary.path.display()))?;
    if !status.success() {
        return Err(format!("{} failed ({status})", binary.path.display()));
    }
    Ok(times)
}

/// `test NAME ... ok <1.234s>`: the test and its time.
fn test_time(line: &str) -> Option<(String, Duration)> {
    let rest = line.strip_prefix("test ")?;
    let (name, outcome) = rest.split_once(" ... ")?;
    let secs = outcome.split_once('<')?.1.strip_suffix("s>")?;
    Some((name.to_owned(), Duration::from_secs_f64(secs.parse().ok()?)))
}

/// The `n` slowest of `times`, one a line.
pub fn slowest(mut times: Vec<(String, Duration)>, n: usize) -> String {
    times.sort_by_key(|t| std::cmp::Reverse(t.1));
    times
        .iter()
        .take(n)
        .map(|(name, t)| format!("{:>8.1}s  {name}", t.as_secs_f64()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtests_lines_and_cargos_messages_are_read() {
        assert_eq!(
            test_time("test host::a_test ... ok <1.913s>"),
            Some(("host::a_test".to_owned(), Duration::from_millis(1913)))
        );
        assert_eq!(test_time("test host::a_test ... ignored"), None);
        assert_eq!(test_time("running 3 tests"), None);
        let line = r#"{"reason":"compiler-artifact","manifest_path":"/r/Cargo.toml","executable":"/r/target/debug/deps/tests-1"}"#;
        assert_eq!(
            string_field(line, "executable").unwrap(),
            "/r/target/debug/deps/tests-1"
        );
        assert_eq!(
            string_field(line, "manifest_path").unwrap(),
            "/r/Cargo.toml"
        );
        let harness = r#"{"reason":"compiler-artifact","target":{"test":true},"profile":{"opt_level":"0","test":true},"executable":"/r/t"}"#;
        let bin = r#"{"reason":"compiler-artifact","target":{"test":true},"profile":{"opt_level":"0","test":false},"executable":"/r/b"}"#;
        assert!(test_harness(harness) && !test_harness(bin));
        let none = r#"{"reason":"compiler-artifact","executable":null}"#;
        assert_eq!(string_field(none, "executable"), None);
        let times = vec![
            ("a".to_owned(), Duration::from_secs(1)),
            ("b".to_owned(), Duration::from_secs(3)),
        ];
        assert_eq!(slowest(times, 1), "     3.0s  b");
    }
}

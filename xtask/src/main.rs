//! The project's own tasks, in Rust so that they need nothing but cargo (the xtask
//! pattern).
//!
//! - `cargo xtask prepare` installs what the full test suite needs beyond Rust: Debian's
//!   PostgreSQL, Chromium and openssl (with apt-get, as root; otherwise it says what to
//!   install), two Python venvs with the official `a2a-sdk` (0.3 and 1.x, pinned in
//!   `tests/python/`) and the official JavaScript SDK with playwright-core (`npm ci` from
//!   `tests/js/package-lock.json`). What is already there and current is left alone.
//! - `cargo xtask test [ARGS]` prepares, then runs the full suite on the build plain
//!   `cargo test` made (no feature, nothing built again), with `A2A_FULL_SUITE` set:
//!   without ARGS, the tests plain `cargo test` leaves out as ignored (they need these
//!   tools — among them the `read_by_the_sdk` twins of the tests whose answers the
//!   official SDK's parser reads as well), the replicas' multi-process tests (short
//!   leases) after the rest, on their own; each test timed, the ten slowest named at
//!   the end (`timed`). No test runs in both tiers. With ARGS, `cargo test ARGS`.
//!
//! Plain `cargo test` needs none of it: the tests that need these tools are marked
//! `#[ignore = "needs …"]`, and the tests themselves never install anything.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod timed;

/// The Debian packages the full suite uses, and a file each installs.
const PACKAGES: &[(&str, &str)] = &[
    ("postgresql", "/usr/lib/postgresql"),
    ("chromium", "/usr/bin/chromium"),
    ("openssl", "/usr/bin/openssl"),
];

/// The venvs: directory under `target/`, requirements under `tests/python/`.
const VENVS: &[(&str, &str)] = &[
    ("py-venv", "requirements.txt"),
    ("py1-venv", "requirements-v1.txt"),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("prepare") => prepare(),
        Some("test") => prepare().and_then(|()| test(&args[1..])),
        _ => {
            eprintln!(
                "usage: cargo xtask prepare            install what the full test suite needs\n       cargo xtask test [ARGS]         prepare, then run the full suite (A2A_FULL_SUITE=1 cargo test ARGS; without ARGS, what plain cargo test leaves out)"
            );
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The project's root (xtask's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn prepare() -> Result<(), String> {
    system_packages()?;
    for (dir, requirements) in VENVS {
        venv(dir, requirements)?;
    }
    js()?;
    Ok(())
}

/// The tests that run several `serve` processes on one PostgreSQL database with short
/// leases: the full suite runs them after the rest, so that a machine loaded by
/// everything else at once does not stall a replica past its lease.
const REPLICA_TESTS: &str = "replicas::";

fn test(args: &[String]) -> Result<(), String> {
    if args.is_empty() {
        // What plain `cargo test` left out, but the replicas' tests; then those alone;
        // each test timed. (`--tests`: no doctests, which plain `cargo test` ran.)
        let binaries = timed::binaries(&mut cargo())?;
        // One PostgreSQL cluster for the passes together (tests/util/postgres.rs).
        let suite = std::process::id().to_string();
        let envs = [("A2A_FULL_SUITE", "1"), ("A2A_SUITE_PID", suite.as_str())];
        let mut times = Vec::new();
        say(
            "running the full suite: the tests plain `cargo test` left out (--ignored), the replicas' apart",
        );
        // Most of these wait on servers, processes and browsers: twice as many at once
        // as cores. The replicas' tests keep libtest's default.
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get() * 2)
            .to_string();
        for b in &binaries {
            times.extend(timed::run(
                b,
                &[
                    "--ignored",
                    "--skip",
                    REPLICA_TESTS,
                    "--test-threads",
                    &threads,
                ],
                &envs,
            )?);
        }
        say("running the full suite: the replicas' tests, on their own");
        for b in &binaries {
            times.extend(timed::run(b, &["--ignored", REPLICA_TESTS], &envs)?);
        }
        if times.is_empty() {
            return Err("no test's time was read: has libtest's --report-time line changed? (`cargo test -p xtask`)".into());
        }
        say(&format!(
            "the full suite passed: {} tests; the slowest:\n{}",
            times.len(),
            timed::slowest(times, 10)
        ));
        return Ok(());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cargo_test(&args)
}

/// `cargo test ARGS` with `A2A_FULL_SUITE` set.
fn cargo_test(args: &[&str]) -> Result<(), String> {
    let mut cargo = cargo();
    cargo
        .arg("test")
        .args(args)
        .env("A2A_FULL_SUITE", "1")
        .current_dir(root());
    say(&format!(
        "running the full suite: A2A_FULL_SUITE=1 cargo test {}",
        args.join(" ")
    ));
    run(&mut cargo, "the full suite")
}

/// `cargo`, in the project's root, without what `cargo run` set for this process.
fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    // What `cargo run` set for this process is not the suite's: build scripts that
    // watch these would see a change and build their crates again (and again at the
    // next plain `cargo test`).
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
            ]
            .contains(&name.as_ref())
        {
            cargo.env_remove(name.as_ref());
        }
    }
    cargo.current_dir(root());
    cargo
}

fn say(what: &str) {
    eprintln!("xtask: {what}");
}

/// Runs `cmd`; an error naming `what` when it cannot start or fails.
fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{what} failed ({s})")),
        Err(e) => Err(format!("{what}: cannot run {:?}: {e}", cmd.get_program())),
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|ids| ids.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false)
}

/// PostgreSQL, Chromium and openssl from Debian's packages: installed with apt-get when
/// missing and we are root; otherwise what to install is said.
fn system_packages() -> Result<(), String> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(_, file)| !Path::new(file).exists())
        .map(|(package, _)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    if !is_root() || !Path::new("/usr/bin/apt-get").exists() {
        return Err(format!(
            "the full suite needs {list} (the PostgreSQL tests, the browser test, the TLS test's certificates); install them (Debian: `apt-get install {list}`) or run this as root on Debian, where it runs apt-get itself"
        ));
    }
    say(&format!("installing {list} with apt-get"));
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    // The package lists may be missing or stale on a fresh machine.
    if !install() {
        run(Command::new("apt-get").arg("update"), "apt-get update")?;
        run(
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends"])
                .args(&missing)
                .env("DEBIAN_FRONTEND", "noninteractive"),
            &format!("apt-get install {list}"),
        )?;
    }
    Ok(())
}

/// `target/<dir>`: a venv with `tests/python/<requirements>` installed, made again when
/// the requirements changed (the tests compare the marker with the file).
fn venv(dir: &str, requirements: &str) -> Result<(), String> {
    let root = root();
    let venv = root.join("target").join(dir);
    let file = root.join("tests/python").join(requirements);
    let wanted = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let marker = venv.join(".a2a-requirements");
    let python = venv.join("bin/python");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) && python.exists()
    {
        return Ok(());
    }
    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    say(&format!(
        "creating target/{dir} with {base} and installing tests/python/{requirements} with pip"
    ));
    std::fs::create_dir_all(root.join("target")).map_err(|e| e.to_string())?;
    run(
        Command::new(&base)
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        &format!(
            "`{base} -m venv` (the full suite needs Python 3.10+ with venv; set PYTHON to choose the interpreter)"
        ),
    )?;
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
            ])
            .arg(&file),
        &format!("pip install -r tests/python/{requirements} (the official a2a-sdk)"),
    )?;
    std::fs::write(&marker, &wanted).map_err(|e| e.to_string())
}

/// `target/js`: the packages of `tests/js/package-lock.json` (`npm ci`), installed again
/// when the lock changed.
fn js() -> Result<(), String> {
    let root = root();
    let source = root.join("tests/js");
    let dir = root.join("target/js");
    let lock = source.join("package-lock.json");
    let wanted = std::fs::read_to_string(&lock).map_err(|e| format!("{}: {e}", lock.display()))?;
    let marker = dir.join(".installed-lock");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str())
        && dir.join("node_modules/@a2a-js/sdk").exists()
    {
        return Ok(());
    }
    say("installing tests/js (the official @a2a-js/sdk, playwright-core) with npm ci");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(source.join(file), dir.join(file))
            .map_err(|e| format!("copying tests/js/{file}: {e}"))?;
    }
    run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir),
        "npm ci in target/js (the full suite needs Node 20+ with npm)",
    )?;
    std::fs::write(&marker, &wanted).map_err(|e| e.to_string())
}

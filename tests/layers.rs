//! The layering within the application crate (ARCHITECTURE.md), checked on the source:
//! what the example agents and the model client may name of this crate and the
//! workspace's, and which I/O crates they may use. (Between crates, the compiler and
//! `tests/crates.rs` hold the rules.) Comments are skipped; every other line that names
//! such a path counts.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, recursively.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every path into this crate (`crate::<module>`), the workspace's other crates
/// (`orchestrator_core::<module>`, `a2a`, ...) and the I/O crates outside comments in
/// `layer`, as (file:line, name).
fn references(layer: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let mut found = Vec::new();
    for file in sources(&root) {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let at = format!("{}:{}", file.display(), n + 1);
            for name in ["crate", "orchestrator_core", "a2a"] {
                for (i, _) in paths(code, name) {
                    let module: String = code[i + name.len() + 2..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    found.push((at.clone(), format!("{name}::{module}")));
                }
            }
            for name in WORKSPACE.iter().chain(FORBIDDEN_IO) {
                if paths(code, name).next().is_some() {
                    found.push((at.clone(), (*name).to_owned()));
                }
            }
        }
    }
    found
}

/// Where `code` names a path starting with the crate `name`.
fn paths<'a>(code: &'a str, name: &'a str) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    code.match_indices(name).filter(move |(i, _)| {
        code[i + name.len()..].starts_with("::")
            && !code[..*i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    })
}

/// The workspace's crates other than the core and the protocol (whose modules are
/// told apart).
const WORKSPACE: &[&str] = &["orchestrator_store", "orchestrator_metrics"];

/// Fails with every reference of `layer` that `allowed` refuses (an entry ending in `*`
/// allows every name it begins).
fn check(layer: &str, allowed: &[&str], why: &str) {
    let bad: Vec<String> = references(layer)
        .into_iter()
        .filter(|(_, name)| {
            !allowed.iter().any(|a| match a.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == a,
            })
        })
        .map(|(at, name)| format!("{at}: {name}"))
        .collect();
    assert!(bad.is_empty(), "{why}:\n{}", bad.join("\n"));
}

/// Crates that do network or database I/O: only the adapters may use them.
const FORBIDDEN_IO: &[&str] = &["reqwest", "axum", "hyper", "hyper_util", "sqlx", "rusqlite"];

#[test]
fn the_example_agents_know_only_the_protocol() {
    check(
        "agents",
        &[
            "crate::agents",
            "crate::llm",
            "a2a::*",
            "orchestrator_core::config",
        ],
        "src/agents is what a user's own agent would be: the protocol (and optionally a model), nothing of workflows or the engine",
    );
}

#[test]
fn the_model_client_knows_no_engine_or_protocol() {
    check(
        "llm",
        &["crate::llm", "reqwest", "a2a::sse", "a2a::https"],
        "src/llm takes text and JSON Schemas: nothing of A2A (but the SSE decoder, which is plain SSE, and the process's TLS for reqwest), workflows or the engine",
    );
}

//! The architecture's layering invariants (ARCHITECTURE.md), checked on the source: what
//! each layer may name of this crate and which I/O crates it may use. Comments are
//! skipped; every other line that names `crate::<module>` or uses a crate counts.

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

/// Every `crate::<module>` and every `use <crate>` outside comments in `layer`, as
/// (file:line, name).
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
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                let name: String = rest[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                found.push((at.clone(), format!("crate::{name}")));
                rest = &rest[i + 7..];
            }
            for io in FORBIDDEN_IO {
                let path = format!("{io}::");
                let inline = code.match_indices(&path).any(|(i, _)| {
                    !code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                });
                if inline && !code.starts_with("use ") {
                    found.push((at.clone(), (*io).to_owned()));
                }
            }
            if let Some(used) = code.strip_prefix("use ") {
                let name: String = used
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !matches!(name.as_str(), "crate" | "super" | "self" | "std") {
                    found.push((at, name));
                }
            }
        }
    }
    found
}

/// Fails with every reference of `layer` that `allowed` refuses.
fn check(layer: &str, allowed: &[&str], why: &str) {
    let bad: Vec<String> = references(layer)
        .into_iter()
        .filter(|(_, name)| {
            name.starts_with("crate::") && !allowed.contains(&name.as_str())
                || FORBIDDEN_IO.contains(&name.as_str()) && !allowed.contains(&name.as_str())
        })
        .map(|(at, name)| format!("{at}: {name}"))
        .collect();
    assert!(bad.is_empty(), "{why}:\n{}", bad.join("\n"));
}

/// Crates that do network or database I/O: only the adapters may use them.
const FORBIDDEN_IO: &[&str] = &[
    "reqwest",
    "axum",
    "hyper",
    "hyper_util",
    "sqlx",
    "async_openai",
];

#[test]
fn the_protocol_layer_imports_nothing_of_the_orchestrator() {
    check(
        "protocol",
        &[
            "crate::protocol",
            "crate::backoff",
            "crate::metrics",
            "reqwest",
            "axum",
            "hyper",
            "hyper_util",
        ],
        "src/protocol must stay usable alone (any A2A agent or client): it may use only itself and the leaves `backoff` and `metrics`",
    );
}

#[test]
fn the_leaves_import_nothing_of_the_crate() {
    for leaf in ["backoff.rs", "metrics.rs"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(leaf);
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let used: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim_start().starts_with("//") && l.contains("crate::"))
            .collect();
        assert!(
            used.is_empty(),
            "src/{leaf} is a leaf every layer may use: it must name nothing of the crate: {used:?}"
        );
    }
}

#[test]
fn the_engine_knows_no_http_json_rpc_or_a2a() {
    check(
        "engine",
        &[
            "crate::engine",
            "crate::workflow",
            "crate::config",
            "crate::backoff",
        ],
        "src/engine reaches agents and models only through its traits: no protocol, connect, host, store, llm or I/O crate",
    );
}

#[test]
fn the_workflow_model_knows_no_engine_or_protocol() {
    check(
        "workflow",
        &["crate::workflow", "crate::config", "crate::backoff"],
        "src/workflow is the language only: no engine, protocol or I/O crate",
    );
}

#[test]
fn the_example_agents_know_only_the_protocol() {
    check(
        "agents",
        &[
            "crate::agents",
            "crate::protocol",
            "crate::llm",
            "crate::config",
        ],
        "src/agents is what a user's own agent would be: the protocol (and optionally a model), nothing of workflows or the engine",
    );
}

#[test]
fn the_model_client_knows_no_engine_or_protocol() {
    check(
        "llm",
        &["crate::llm", "async_openai", "reqwest"],
        "src/llm takes text and JSON Schemas: nothing of A2A, workflows or the engine",
    );
}

#[test]
fn only_the_store_knows_the_database() {
    for layer in [
        "engine", "host", "connect", "protocol", "registry", "workflow",
    ] {
        let sql: Vec<String> = references(layer)
            .into_iter()
            .filter(|(_, name)| name == "sqlx")
            .map(|(at, _)| at)
            .collect();
        assert!(
            sql.is_empty(),
            "nothing above src/store may know the database: {sql:?}"
        );
    }
}

//! The architecture's crate graph (ARCHITECTURE.md), checked on what Cargo resolves: the
//! protocol crate knows no workflow, database, model or metrics library; the core knows
//! no HTTP, wire format, database or network I/O. The compiler holds each crate to its
//! `Cargo.toml`; this holds each `Cargo.toml` to the architecture, transitively.

use std::collections::BTreeSet;
use std::process::Command;

/// The crates `package` builds on (itself included), with `features` (`None`: its
/// defaults; `Some("")`: none), normal dependencies only.
fn dependencies(package: &str, features: Option<&str>) -> BTreeSet<String> {
    dependencies_by(package, features, "normal")
}

/// Like [`dependencies`], following the `edges` kinds `cargo tree -e` takes.
fn dependencies_by(package: &str, features: Option<&str>, edges: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--offline", "-e", edges, "--prefix", "none"])
        .args(["-f", "{p}", "-p", package]);
    match features {
        None => {}
        Some("") => {
            command.arg("--no-default-features");
        }
        Some(f) => {
            command.args(["--no-default-features", "--features", f]);
        }
    }
    let out = command.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Fails with each crate of `forbidden` that `package` builds on.
fn refuses(package: &str, features: Option<&str>, forbidden: &[&str], why: &str) {
    let found = dependencies(package, features);
    let bad: Vec<&&str> = forbidden.iter().filter(|f| found.contains(**f)).collect();
    assert!(
        bad.is_empty(),
        "{package} ({features:?}) builds on {bad:?}: {why}"
    );
}

/// What only the application may know: the orchestrator's own crates, databases,
/// models, metrics and trace exporters.
const APPLICATION: &[&str] = &[
    "a2a-orchestrator",
    "orchestrator-core",
    "orchestrator-store",
    "orchestrator-metrics",
    "sqlx",
    "sqlx-core",
    "rusqlite",
    "async-openai",
    "prometheus-client",
    "opentelemetry",
    "opentelemetry_sdk",
    "clap",
];

#[test]
fn the_protocol_crate_knows_nothing_of_the_orchestrator() {
    for features in [None, Some(""), Some("client"), Some("server")] {
        refuses(
            "a2a-protocol",
            features,
            APPLICATION,
            "crate a2a-protocol is the A2A protocol alone, usable to write any agent or client",
        );
    }
    // The types alone: no HTTP stack at all.
    refuses(
        "a2a-protocol",
        Some(""),
        &["reqwest", "hyper", "axum"],
        "a2a-protocol without `client` and `server` is the types and JSON-RPC, with no HTTP stack",
    );
}

/// A client or a server without the `grpc` feature builds no gRPC stack and no protobuf
/// compiler, at run time or at build time: v1.0's generated messages are committed, and
/// only their runtime (prost, pbjson) is built.
#[test]
fn the_protocol_crate_without_grpc_builds_no_grpc() {
    let grpc = [
        "tonic",
        "protox",
        "prost-build",
        "pbjson-build",
        "pbjson-types",
    ];
    for features in ["client", "server", "client,server,signing"] {
        let found = dependencies_by("a2a-protocol", Some(features), "normal,build");
        let bad: Vec<&&str> = grpc.iter().filter(|c| found.contains(**c)).collect();
        assert!(
            bad.is_empty(),
            "a2a-protocol ({features}) builds on {bad:?}"
        );
    }
}

#[test]
fn the_core_knows_no_http_wire_format_database_or_network() {
    refuses(
        "orchestrator-core",
        None,
        &[
            "a2a-protocol",
            "orchestrator-store",
            "orchestrator-metrics",
            "reqwest",
            "hyper",
            "axum",
            "sqlx",
            "sqlx-core",
            "rusqlite",
            "async-openai",
            "prometheus-client",
            "opentelemetry",
            // Tokio's network I/O driver: the core uses Tokio for time and tasks only.
            "mio",
        ],
        "the workflow language and the engine reach agents, models and storage only through their traits",
    );
}

#[test]
fn the_stores_know_the_database_and_nothing_of_the_application() {
    for features in [Some(""), Some("sqlite"), Some("postgres")] {
        refuses(
            "orchestrator-store",
            features,
            &[
                "a2a-orchestrator",
                "orchestrator-metrics",
                "prometheus-client",
                "async-openai",
                "opentelemetry",
                "clap",
            ],
            "the stores adapt the protocol's TaskStore and the engine's RunStore to a database; nothing above them (they report to the observer they are given)",
        );
        // The protocol's store traits, not its server or its HTTP.
        refuses(
            "orchestrator-store",
            features,
            &["axum", "hyper", "reqwest", "tonic"],
            "the stores name the protocol's TaskStore and Cluster (feature `store`), not its server",
        );
    }
    refuses(
        "orchestrator-store",
        Some(""),
        &["sqlx", "sqlx-core", "rusqlite"],
        "without `sqlite` and `postgres` the store is the memory one",
    );
}

#[test]
fn the_leaves_know_nothing_of_the_orchestrator() {
    refuses(
        "a2a-backoff",
        None,
        &["a2a-protocol", "orchestrator-core", "tokio"],
        "backoff is a schedule of waits every crate may use",
    );
    refuses(
        "orchestrator-metrics",
        None,
        &[
            "orchestrator-core",
            "orchestrator-store",
            "a2a-orchestrator",
            "sqlx",
            "rusqlite",
        ],
        "the metrics are a leaf every layer records into",
    );
}

#[test]
fn one_version_of_each_http_and_tls_crate() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .expect("Cargo.lock is committed");
    let lock: toml::Value = toml::from_str(&lock).expect("Cargo.lock is TOML");
    let packages = lock["package"].as_array().expect("packages");
    for name in [
        "reqwest",
        "hyper",
        "hyper-util",
        "http",
        "h2",
        "rustls",
        "axum",
        "tokio",
    ] {
        let versions: Vec<&str> = packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .filter_map(|p| p["version"].as_str())
            .collect();
        assert!(
            versions.len() <= 1,
            "Cargo.lock has {name} {versions:?}: two HTTP or TLS stacks are built and kept apart"
        );
    }
    // One SQLite driver (rusqlite): sqlx is PostgreSQL's alone.
    let sqlx_sqlite = packages
        .iter()
        .any(|p| p["name"].as_str() == Some("sqlx-sqlite"));
    assert!(!sqlx_sqlite, "Cargo.lock has sqlx-sqlite beside rusqlite");
}

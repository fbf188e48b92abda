//! `bench`: runs the benchmark and prints its figures, with their targets, as a table or
//! as one JSON object.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::bench::{AgentHttp, AgentSetup, Goal, Options};

/// The flags of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Each measurement once and small: seconds instead of minutes (that the benchmark
    /// works, as CI runs it; its figures are rough).
    #[arg(long)]
    quick: bool,
    /// Print one JSON object with the figures (milliseconds, runs per second, bytes).
    #[arg(long)]
    json: bool,
    /// Measure the store on this PostgreSQL database too (postgres://USER@HOST/DB):
    /// the diamond's throughput beside memory and SQLite, and the database's
    /// transactions per run.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
    /// Only measure N `serve` replicas sharing the --postgres database, behind a
    /// round-robin client: runs per second and transactions per run on 1 to N of them.
    #[arg(long, value_name = "N", requires = "postgres")]
    replicas: Option<usize>,
    /// Only compare this build with another build's `serve` (EXE): both on the memory
    /// store, the diamond at concurrency 64 in turns: runs per second and each one's
    /// CPU per run, and this build's CPU as a share of the other's.
    #[arg(long, value_name = "EXE", conflicts_with_all = ["replicas", "postgres"])]
    baseline: Option<PathBuf>,
    /// Only compare `serve` with the diamond written on another A2A implementation (EXE,
    /// run as `EXE AGENT_URL`, saying `listening on URL` when it serves A2A v1.0
    /// JSON-RPC; `benches/peers/rust-sdk-diamond` is the official Rust SDK's): both
    /// called with a blocking SendMessage at concurrency 4 and 64 in turns: runs per
    /// second, CPU, answer bytes and agent calls per run.
    #[arg(long, value_name = "EXE", conflicts_with_all = ["replicas", "postgres", "baseline"])]
    peer: Option<PathBuf>,
    /// Only compare stores (as `serve --store` takes them, comma-separated; `sqlite`
    /// alone is a new file): one `serve` of this build on each, the diamond at
    /// concurrency 64 in turns: runs per second and each one's CPU per run.
    #[arg(long, value_name = "STORE,…", value_delimiter = ',',
          conflicts_with_all = ["replicas", "postgres", "baseline", "peer"])]
    stores: Option<Vec<String>>,
    /// With --baseline, --stores or --peer: how `serve` reaches the agents — `h2c` (HTTP/2
    /// without TLS, the default), `http1`, or `tls` (HTTP/2 over TLS, a loopback
    /// authority's certificate).
    #[arg(long, value_name = "HTTP", value_enum, default_value = "h2c")]
    agent_http: AgentHttp,
    /// With --baseline, --stores or --peer: the milliseconds the diamond's agent takes to
    /// answer (0, the default: at once).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    agent_pause: u64,
}

pub async fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: a debug build measures little; run `cargo run --release -- bench` instead"
        );
    }
    let options = Options {
        quick: args.quick,
        exe: std::env::current_exe()?,
        postgres: args.postgres,
        agents: AgentSetup {
            http: args.agent_http,
            pause: std::time::Duration::from_millis(args.agent_pause),
        },
    };
    let realistic = args.agent_http != AgentHttp::H2c || args.agent_pause > 0;
    if let Some(peer) = &args.peer {
        if args.agent_http == AgentHttp::Tls {
            return Err(bad_input!(
                "--peer is given its agent's URL without TLS: --agent-http h2c or http1"
            ));
        }
        if !peer.is_file() {
            return Err(bad_input!(
                "--peer {}: no such file (build it first: cargo build --release --manifest-path benches/peers/rust-sdk-diamond/Cargo.toml)",
                peer.display()
            ));
        }
        let c = crate::bench::peer(&options, peer, &|step| eprintln!("bench: {step}")).await?;
        if args.json {
            say!("{}", serde_json::to_string(&c)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        say!(
            "\n{:<8} {:>10} {:>10} {:>14} {:>14} {:>20} {:>20} {:>14}",
            "",
            "runs/s c4",
            "runs/s c64",
            "CPU ms/run c4",
            "CPU ms/run c64",
            "bench CPU ms/run c4",
            "bench CPU ms/run c64",
            "answer bytes"
        )?;
        for (name, f) in [("peer", &c.peer), ("serve", &c.serve)] {
            say!(
                "{:<8} {:>10} {:>10} {:>14} {:>14} {:>20} {:>20} {:>14}",
                name,
                trim(f.runs_per_sec_c4),
                trim(f.runs_per_sec_c64),
                trim(f.cpu_ms_per_run_c4),
                trim(f.cpu_ms_per_run),
                trim(f.bench_cpu_ms_per_run_c4),
                trim(f.bench_cpu_ms_per_run),
                trim(f.answer_bytes_per_run),
            )?;
        }
        say!(
            "\nserve's best throughput: {}× the peer's; its CPU per run: {} of the peer's (calibration {} ms)",
            trim(c.throughput_ratio),
            trim(c.cpu_ratio),
            trim(c.calibration_ms),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if realistic && args.baseline.is_none() && args.stores.is_none() && args.peer.is_none() {
        return Err(bad_input!(
            "--agent-http and --agent-pause go with --baseline, --stores or --peer: the other figures are measured against instant agents over HTTP/2"
        ));
    }
    if let Some(baseline) = &args.baseline {
        if !baseline.is_file() {
            return Err(bad_input!(
                "--baseline {}: no such file",
                baseline.display()
            ));
        }
        let c =
            crate::bench::against(&options, baseline, &|step| eprintln!("bench: {step}")).await?;
        if args.json {
            say!("{}", serde_json::to_string(&c)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        say!(
            "\n{:<16} {:>10} {:>12}\n{:<16} {:>10} {:>12}\n{:<16} {:>10} {:>12}\n\nCPU per run: {} of the baseline's (calibration {} ms)",
            "build",
            "runs/s",
            "CPU ms/run",
            "baseline",
            trim(c.baseline_runs_per_sec_c64),
            trim(c.baseline_cpu_ms_per_run),
            "this",
            trim(c.runs_per_sec_c64),
            trim(c.cpu_ms_per_run),
            trim(c.cpu_ratio),
            trim(c.calibration_ms),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(specs) = &args.stores {
        crate::bench::check_stores(specs).map_err(|e| bad_input!("{e}"))?;
        let c = crate::bench::stores(&options, specs, &|step| eprintln!("bench: {step}")).await?;
        if args.json {
            say!("{}", serde_json::to_string(&c)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        let width = c
            .stores
            .iter()
            .map(|f| f.store.len())
            .max()
            .unwrap_or(0)
            .max(5);
        say!(
            "\n{:<width$} {:>10} {:>12}",
            "store",
            "runs/s",
            "CPU ms/run"
        )?;
        for f in &c.stores {
            say!(
                "{:<width$} {:>10} {:>12}",
                f.store,
                trim(f.runs_per_sec_c64),
                trim(f.cpu_ms_per_run)
            )?;
        }
        say!("\n(calibration {} ms)", trim(c.calibration_ms))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(max) = args.replicas {
        let figures =
            crate::bench::replicas(&options, max, &|step| eprintln!("bench: {step}")).await?;
        if args.json {
            say!("{}", serde_json::json!({ "replicas": figures }))?;
            return Ok(ExitCode::SUCCESS);
        }
        say!(
            "\n{:>8} {:>8} {:>18} {:>38} {:>26} {:>26}",
            "replicas",
            "runs/s",
            "transactions/run",
            "relay across, p99 (ms): from agent",
            "from commit (≤ 50)",
            "behind the owner's stream",
        )?;
        let or_dash = |f: Option<f64>| f.map_or("-".to_owned(), trim);
        for f in figures {
            say!(
                "{:>8} {:>8} {:>18} {:>38} {:>26} {:>26}",
                f.replicas,
                trim(f.runs_per_sec),
                trim(f.transactions_per_run),
                or_dash(f.relay_across_ms_p99),
                or_dash(f.relay_across_from_commit_ms_p99),
                or_dash(f.relay_across_lag_ms_p99),
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = crate::bench::run(&options, &|step| eprintln!("bench: {step}")).await?;
    if args.json {
        say!("{}", serde_json::to_string(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    say!(
        "\n{} build, {cores} cores{}\n",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        if args.quick { ", --quick" } else { "" }
    )?;
    let rows = report.rows();
    let width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0);
    say!(
        "{:<width$} {:>10} {:<6}  {:<10}",
        "figure",
        "value",
        "unit",
        "target"
    )?;
    for row in rows {
        let (target, verdict) = match row.goal {
            None => (String::new(), ""),
            Some(goal) => {
                let target = match goal {
                    Goal::AtMost(t) => format!("≤ {}", trim(t)),
                    Goal::AtLeast(t) => format!("≥ {}", trim(t)),
                };
                (target, if goal.met(row.value) { "met" } else { "missed" })
            }
        };
        say!(
            "{:<width$} {:>10} {:<6}  {target:<10} {verdict}",
            row.key,
            trim(row.value),
            row.unit
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A figure without trailing zeros.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

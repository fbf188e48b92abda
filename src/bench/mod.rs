//! The benchmark behind `a2a-orchestrator bench`: is the orchestrator ever the bottleneck
//! of an agent system? It starts instant loopback agents in this process and the real
//! orchestrator (`serve`, this same binary) in a child process, drives it over A2A like
//! any upstream client, and measures each figure against the floor of calling the agents
//! directly. The figures and their targets are in `docs/benchmarks.md`.
//!
//! Library code: it reports progress through a callback and returns a [`Report`]; the
//! CLI prints it.

mod agents;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::protocol::client::{A2aClient, ClientConfig};
use crate::protocol::types::{
    Message, MessageSendConfiguration, MessageSendParams, Part, Role, SendMessageResult,
    StreamEvent, TaskState,
};
use agents::{Agents, ChunkPlan};

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// A reduced run that takes seconds (for CI: the benchmark keeps working).
    pub quick: bool,
    /// The orchestrator binary, started as `serve`.
    pub exe: PathBuf,
}

/// The figures, under the names `--json` prints: milliseconds, runs per second, bytes.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// A 10-step chain through the orchestrator minus the same 10 calls made directly,
    /// per step.
    pub overhead_ms_per_step_p50: f64,
    pub overhead_ms_per_step_p99: f64,
    /// One step fanning out to 100 tasks of an agent that takes 200 ms each.
    pub fanout_wall_ms: f64,
    /// A 4-step diamond with blocking `message/send` at concurrency 1, 16, 64, 256.
    pub runs_per_sec_c1: f64,
    pub runs_per_sec_c16: f64,
    pub runs_per_sec_c64: f64,
    pub runs_per_sec_c256: f64,
    /// A diamond run's latency at concurrency 64.
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
    /// From a downstream agent sending an artifact chunk to the upstream
    /// `message/stream` client receiving it.
    pub relay_latency_ms_p50: f64,
    pub relay_latency_ms_p99: f64,
    /// The orchestrator's resident memory growth with many runs waiting on a slow agent,
    /// per run.
    pub bytes_per_inflight_run: u64,
    /// The c64 throughput with each store, measured in turns (the median of three each).
    pub runs_per_sec_c64_memory: f64,
    pub runs_per_sec_c64_sqlite: f64,
}

/// A figure's target on a 2-core machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    AtMost(f64),
    AtLeast(f64),
}

impl Goal {
    pub fn met(self, value: f64) -> bool {
        match self {
            Goal::AtMost(t) => value <= t,
            Goal::AtLeast(t) => value >= t,
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub goal: Option<Goal>,
}

impl Report {
    /// Every figure with its unit and target, in `--json` order.
    pub fn rows(&self) -> Vec<Row> {
        let row = |key, value, unit, goal| Row {
            key,
            value,
            unit,
            goal,
        };
        vec![
            row(
                "overhead_ms_per_step_p50",
                self.overhead_ms_per_step_p50,
                "ms",
                Some(Goal::AtMost(0.3)),
            ),
            row(
                "overhead_ms_per_step_p99",
                self.overhead_ms_per_step_p99,
                "ms",
                None,
            ),
            row(
                "fanout_wall_ms",
                self.fanout_wall_ms,
                "ms",
                Some(Goal::AtMost(230.0)),
            ),
            row("runs_per_sec_c1", self.runs_per_sec_c1, "runs/s", None),
            row("runs_per_sec_c16", self.runs_per_sec_c16, "runs/s", None),
            row(
                "runs_per_sec_c64",
                self.runs_per_sec_c64,
                "runs/s",
                Some(Goal::AtLeast(2000.0)),
            ),
            row("runs_per_sec_c256", self.runs_per_sec_c256, "runs/s", None),
            row("latency_ms_p50", self.latency_ms_p50, "ms", None),
            row("latency_ms_p99", self.latency_ms_p99, "ms", None),
            row(
                "relay_latency_ms_p50",
                self.relay_latency_ms_p50,
                "ms",
                None,
            ),
            row(
                "relay_latency_ms_p99",
                self.relay_latency_ms_p99,
                "ms",
                Some(Goal::AtMost(2.0)),
            ),
            row(
                "bytes_per_inflight_run",
                self.bytes_per_inflight_run as f64,
                "bytes",
                Some(Goal::AtMost(32.0 * 1024.0)),
            ),
            row(
                "runs_per_sec_c64_memory",
                self.runs_per_sec_c64_memory,
                "runs/s",
                None,
            ),
            row(
                "runs_per_sec_c64_sqlite",
                self.runs_per_sec_c64_sqlite,
                "runs/s",
                Some(Goal::AtLeast(0.5 * self.runs_per_sec_c64_memory)),
            ),
        ]
    }
}

/// How much work each measurement does.
struct Sizes {
    chain_pairs: usize,
    fanout_repeats: usize,
    throughput_runs: usize,
    relay_chunks: usize,
    held_runs: usize,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                chain_pairs: 30,
                fanout_repeats: 1,
                throughput_runs: 300,
                relay_chunks: 100,
                held_runs: 1_000,
            }
        } else {
            Sizes {
                chain_pairs: 300,
                fanout_repeats: 3,
                throughput_runs: 3_000,
                relay_chunks: 1_000,
                held_runs: 10_000,
            }
        }
    }
}

const FANOUT_ITEMS: usize = 100;
const FANOUT_PAUSE: Duration = Duration::from_millis(200);
const CHAIN_STEPS: usize = 10;
/// Turns each store takes in the memory-versus-SQLite comparison.
const STORE_ROUNDS: usize = 3;

/// The middle value (of an odd count; the upper middle of an even one).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Runs every measurement; `progress` hears what is being measured.
pub async fn run(options: &Options, progress: &dyn Fn(&str)) -> anyhow::Result<Report> {
    let sizes = Sizes::new(options.quick);
    let epoch = Instant::now();
    let agents = Agents::start(
        FANOUT_PAUSE,
        ChunkPlan {
            count: sizes.relay_chunks,
            gap: Duration::from_millis(1),
            epoch,
        },
    )
    .await
    .context("cannot start the benchmark's agents")?;
    let dir = Scratch::new(&agents)?;
    let result = measure(options, &sizes, &agents, &dir, epoch, progress).await;
    agents.stop().await;
    result
}

async fn measure(
    options: &Options,
    sizes: &Sizes,
    agents: &Agents,
    dir: &Scratch,
    epoch: Instant,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Report> {
    let serve = Serve::start(&options.exe, dir, "memory").await?;
    let host = serve.client()?;
    let fast = client(agents.url("fast"))?;
    warm_up(&host).await?;

    progress(&format!(
        "overhead: {} × a {CHAIN_STEPS}-step chain, orchestrated and direct",
        sizes.chain_pairs
    ));
    let mut overhead = Vec::with_capacity(sizes.chain_pairs);
    for _ in 0..sizes.chain_pairs {
        let orchestrated = run_blocking(&host, "chain", json!({})).await?;
        let started = Instant::now();
        for _ in 0..CHAIN_STEPS {
            direct_call(&fast).await?;
        }
        let direct = started.elapsed();
        overhead.push(ms(orchestrated) / CHAIN_STEPS as f64 - ms(direct) / CHAIN_STEPS as f64);
    }

    progress(&format!(
        "fan-out: {FANOUT_ITEMS} tasks of {} ms each, {} time(s)",
        FANOUT_PAUSE.as_millis(),
        sizes.fanout_repeats
    ));
    let mut fanout = Vec::new();
    for _ in 0..sizes.fanout_repeats {
        let items: Vec<usize> = (0..FANOUT_ITEMS).collect();
        fanout.push(ms(
            run_blocking(&host, "fanout", json!({ "items": items })).await?
        ));
    }

    let mut rates = Vec::new();
    let mut latencies = Vec::new();
    for concurrency in [1, 16, 64, 256] {
        let runs = sizes.throughput_runs.max(2 * concurrency);
        progress(&format!(
            "throughput: {runs} diamond runs at concurrency {concurrency}"
        ));
        let (rate, lat) = throughput(&host, runs, concurrency).await?;
        rates.push(rate);
        if concurrency == 64 {
            latencies = lat;
        }
    }

    progress(&format!(
        "relay: {} artifact chunks through message/stream",
        sizes.relay_chunks
    ));
    let relay = relay(&host, epoch, sizes.relay_chunks).await?;

    // The two stores compared like with like: in turns, so that a slower or faster
    // spell of the machine falls on both, and the median of each.
    progress(&format!(
        "stores: {STORE_ROUNDS} × {} diamond runs at concurrency 64 in memory, then in SQLite",
        sizes.throughput_runs
    ));
    let db = dir.path.join("bench.db");
    let durable = Serve::start(&options.exe, dir, &format!("sqlite://{}", db.display())).await?;
    let sqlite_host = durable.client()?;
    warm_up(&sqlite_host).await?;
    let (mut in_memory, mut in_sqlite) = (Vec::new(), Vec::new());
    for _ in 0..STORE_ROUNDS {
        in_memory.push(throughput(&host, sizes.throughput_runs, 64).await?.0);
        in_sqlite.push(throughput(&sqlite_host, sizes.throughput_runs, 64).await?.0);
    }
    durable.stop().await;
    serve.stop().await;

    progress(&format!(
        "memory: {} runs waiting on a slow agent",
        sizes.held_runs
    ));
    let bytes = memory(options, dir, agents, sizes.held_runs).await?;

    let (overhead_p50, overhead_p99) = p50_p99(overhead);
    let (latency_p50, latency_p99) = p50_p99(latencies);
    let (relay_p50, relay_p99) = p50_p99(relay);
    let (fanout_p50, _) = p50_p99(fanout);
    Ok(Report {
        overhead_ms_per_step_p50: round(overhead_p50, 3),
        overhead_ms_per_step_p99: round(overhead_p99, 3),
        fanout_wall_ms: round(fanout_p50, 1),
        runs_per_sec_c1: round(rates[0], 1),
        runs_per_sec_c16: round(rates[1], 1),
        runs_per_sec_c64: round(rates[2], 1),
        runs_per_sec_c256: round(rates[3], 1),
        latency_ms_p50: round(latency_p50, 3),
        latency_ms_p99: round(latency_p99, 3),
        relay_latency_ms_p50: round(relay_p50, 3),
        relay_latency_ms_p99: round(relay_p99, 3),
        bytes_per_inflight_run: bytes,
        runs_per_sec_c64_memory: round(median(in_memory), 1),
        runs_per_sec_c64_sqlite: round(median(in_sqlite), 1),
    })
}

/// A client whose every wait is bounded: a stalled orchestrator fails the benchmark
/// instead of hanging it.
fn client(url: &str) -> anyhow::Result<A2aClient> {
    let config = ClientConfig {
        stream_idle_timeout: Some(Duration::from_secs(60)),
        ..ClientConfig::default()
    };
    Ok(A2aClient::new(url, config)?)
}

/// A few runs of everything, so connections are open and code is paged in.
async fn warm_up(host: &A2aClient) -> anyhow::Result<()> {
    for _ in 0..20 {
        run_blocking(host, "diamond", json!({})).await?;
    }
    run_blocking(host, "chain", json!({})).await?;
    Ok(())
}

/// A message starting `workflow` with `input`.
fn start_message(workflow: &str, input: Value) -> MessageSendParams {
    let data = Map::from_iter([
        ("workflow".to_owned(), json!(workflow)),
        ("input".to_owned(), input),
    ]);
    MessageSendParams::new(Message::new(Role::User, vec![Part::data(data)]))
}

/// Runs `workflow` with a blocking `message/send`; its latency.
async fn run_blocking(host: &A2aClient, workflow: &str, input: Value) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let result = host
        .send_message(&start_message(workflow, input))
        .await
        .with_context(|| format!("a run of `{workflow}` failed"))?;
    match result {
        SendMessageResult::Task(t) if t.status.state == TaskState::Completed => {
            Ok(started.elapsed())
        }
        SendMessageResult::Task(t) => bail!(
            "a run of `{workflow}` ended {}: {}",
            t.status.state,
            t.status.message.map(|m| m.text()).unwrap_or_default()
        ),
        SendMessageResult::Message(m) => {
            bail!(
                "a run of `{workflow}` was answered with a message: {}",
                m.text()
            )
        }
    }
}

/// One call to the instant agent the way the orchestrator makes it: `message/stream`,
/// read to the end.
async fn direct_call(agent: &A2aClient) -> anyhow::Result<()> {
    let params = MessageSendParams::new(Message::user_text("step"));
    let mut events = agent.send_message_stream(&params).await?;
    let mut last = None;
    while let Some(event) = events.next().await {
        last = Some(event?);
    }
    match last {
        Some(StreamEvent::StatusUpdate(s)) if s.status.state == TaskState::Completed => Ok(()),
        other => bail!("the direct call did not complete: {other:?}"),
    }
}

/// Runs per second and each run's latency, `concurrency` clients running the diamond
/// `runs` times in all.
async fn throughput(
    host: &A2aClient,
    runs: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, Vec<f64>)> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (host, next) = (host.clone(), next.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < runs {
                latencies.push(ms(run_blocking(&host, "diamond", json!({})).await?));
            }
            anyhow::Ok(latencies)
        });
    }
    let mut latencies = Vec::with_capacity(runs);
    while let Some(worker) = workers.join_next().await {
        latencies.extend(worker??);
    }
    Ok((runs as f64 / started.elapsed().as_secs_f64(), latencies))
}

/// The relay latency of each chunk of one `chunky` task streamed through the
/// orchestrator.
async fn relay(host: &A2aClient, epoch: Instant, chunks: usize) -> anyhow::Result<Vec<f64>> {
    let mut events = host
        .send_message_stream(&start_message("relay", json!({})))
        .await?;
    let mut latencies = Vec::with_capacity(chunks);
    let mut last = None;
    while let Some(event) = events.next().await {
        let event = event?;
        if let StreamEvent::ArtifactUpdate(a) = &event {
            let now = epoch.elapsed().as_nanos();
            for part in &a.artifact.parts {
                if let Part::Text(t) = part
                    && let Ok(sent) = t.text.parse::<u128>()
                {
                    latencies.push(now.saturating_sub(sent) as f64 / 1e6);
                }
            }
        }
        last = Some(event);
    }
    match last {
        Some(StreamEvent::StatusUpdate(s)) if s.status.state == TaskState::Completed => {}
        other => bail!("the relay run did not complete: {other:?}"),
    }
    if latencies.len() != chunks {
        bail!(
            "{} of the {chunks} chunks reached the upstream client",
            latencies.len()
        );
    }
    Ok(latencies)
}

/// The orchestrator's resident memory per run with `runs` runs waiting on the `held`
/// agent, in a fresh orchestrator process.
async fn memory(
    options: &Options,
    dir: &Scratch,
    agents: &Agents,
    runs: usize,
) -> anyhow::Result<u64> {
    let serve = Serve::start(&options.exe, dir, "memory").await?;
    let host = serve.client()?;
    warm_up(&host).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = serve.rss_bytes()?;
    let arrived_before = agents.held.load(Ordering::SeqCst);
    let next = Arc::new(AtomicUsize::new(0));
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..64 {
        let (host, next) = (host.clone(), next.clone());
        senders.spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < runs {
                let mut params = start_message("hold", json!({}));
                params.configuration = Some(MessageSendConfiguration {
                    blocking: Some(false),
                    ..Default::default()
                });
                match host.send_message(&params).await? {
                    SendMessageResult::Task(t) if !t.status.state.is_terminal() => {}
                    other => bail!("a held run did not start: {other:?}"),
                }
            }
            anyhow::Ok(())
        });
    }
    while let Some(sender) = senders.join_next().await {
        sender??;
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while agents.held.load(Ordering::SeqCst) - arrived_before < runs {
        if Instant::now() > deadline {
            bail!(
                "only {} of {runs} held runs reached the agent within 120 s",
                agents.held.load(Ordering::SeqCst) - arrived_before
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = serve.rss_bytes()?;
    serve.stop().await;
    agents.release();
    Ok(after.saturating_sub(before) / runs as u64)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// The median and the 99th percentile (nearest rank).
fn p50_p99(mut values: Vec<f64>) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    values.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let i = (q * values.len() as f64).ceil() as usize;
        values[i.clamp(1, values.len()) - 1]
    };
    (rank(0.50), rank(0.99))
}

/// The benchmark's workflows and agents file, in a temporary directory removed on drop.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new(agents: &Agents) -> anyhow::Result<Scratch> {
        let path = std::env::temp_dir().join(format!(
            "a2a-orchestrator-bench-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let scratch = Scratch { path };
        let workflows = scratch.path.join("workflows");
        std::fs::create_dir_all(&workflows)
            .with_context(|| format!("cannot create {}", workflows.display()))?;
        let mut agents_toml = String::new();
        for (name, url) in &agents.urls {
            agents_toml.push_str(&format!(
                "[agents.{name}]\nurl = \"{url}\"\nmax_concurrent = 100000\nhttp2 = true\n\n"
            ));
        }
        let mut chain = String::from(
            "[workflow]\nid = \"chain\"\ndescription = \"ten steps, one after another\"\n",
        );
        for i in 1..=CHAIN_STEPS {
            chain.push_str(&format!(
                "\n[steps.s{i}]\nagent = \"fast\"\nmessage = \"step {i}\"\n"
            ));
            if i > 1 {
                chain.push_str(&format!("needs = [\"s{}\"]\n", i - 1));
            }
        }
        let files = [
            ("agents.toml", agents_toml),
            ("workflows/chain.toml", chain),
            ("workflows/diamond.toml", DIAMOND.to_owned()),
            ("workflows/fanout.toml", FANOUT.to_owned()),
            ("workflows/relay.toml", RELAY.to_owned()),
            ("workflows/hold.toml", HOLD.to_owned()),
        ];
        for (name, text) in files {
            let file = scratch.path.join(name);
            std::fs::write(&file, text)
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

const DIAMOND: &str = r#"[workflow]
id = "diamond"
description = "one step, two in parallel, one join"

[steps.top]
agent = "fast"
message = "top"

[steps.left]
agent = "fast"
needs = ["top"]
message = "left"

[steps.right]
agent = "fast"
needs = ["top"]
message = "right"

[steps.join]
agent = "fast"
needs = ["left", "right"]
message = "join"
"#;

const FANOUT: &str = r#"[workflow]
id = "fanout"
description = "one step fanning out to every item"
max_parallel = 1000

[input]
items = { type = "array", required = true }

[steps.each]
agent = "sleepy"
for_each = "input.items"
max_parallel = 1000
message = "item {{ item }}"
"#;

const RELAY: &str = r#"[workflow]
id = "relay"
description = "one streaming step"

[steps.stream]
agent = "chunky"
message = "stream"
"#;

const HOLD: &str = r#"[workflow]
id = "hold"
description = "one step that waits until released"

[steps.wait]
agent = "held"
message = "wait"
timeout = "1h"
"#;

/// The orchestrator in a child process (`serve`), killed when dropped.
struct Serve {
    child: tokio::process::Child,
    url: String,
    /// Kept open: the child's stdout.
    _stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Serve {
    async fn start(exe: &Path, dir: &Scratch, store: &str) -> anyhow::Result<Serve> {
        // A2A_BENCH_WRAP="valgrind --tool=massif" (say) runs serve under a profiler.
        let wrap = std::env::var("A2A_BENCH_WRAP").unwrap_or_default();
        let mut wrap = wrap.split_whitespace();
        let mut command = match wrap.next() {
            Some(program) => {
                let mut c = tokio::process::Command::new(program);
                c.args(wrap).arg(exe);
                c
            }
            None => tokio::process::Command::new(exe),
        };
        let mut child = command
            .arg("serve")
            .arg("--workflows")
            .arg(dir.path.join("workflows"))
            .arg("--agents")
            .arg(dir.path.join("agents.toml"))
            .args(["--listen", "127.0.0.1:0", "--store", store])
            .args(["--name", "bench"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {} serve", exe.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let listening = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(rest) = line.strip_prefix("a2a-orchestrator listening on ") {
                    return Ok(rest
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned());
                }
            }
            Err(anyhow!("serve exited before listening"))
        })
        .await
        .map_err(|_| anyhow!("serve did not start listening within 60 s"))??;
        Ok(Serve {
            child,
            url: listening,
            _stdout: lines,
        })
    }

    fn client(&self) -> anyhow::Result<A2aClient> {
        client(&self.url)
    }

    /// The child's resident set size.
    fn rss_bytes(&self) -> anyhow::Result<u64> {
        let pid = self.child.id().ok_or_else(|| anyhow!("serve has exited"))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .context("measuring memory needs /proc (Linux)")?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .ok_or_else(|| anyhow!("no VmRSS in /proc/{pid}/status"))
    }

    /// Stops serve with SIGTERM (a profiler it runs under writes its output), killing
    /// it if it has not exited within 30 s.
    async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = tokio::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
            if tokio::time::timeout(Duration::from_secs(30), self.child.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_the_store_rounds() {
        assert_eq!(median(vec![2_900.0, 1_800.0, 2_500.0]), 2_500.0);
        assert_eq!(median(vec![1.0, 4.0]), 4.0);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let (p50, p99) = p50_p99((1..=100).map(f64::from).rev().collect());
        assert_eq!((p50, p99), (50.0, 99.0));
        assert_eq!(p50_p99(vec![7.0]), (7.0, 7.0));
    }

    #[test]
    fn report_rows_follow_the_json_keys() {
        let report = Report {
            overhead_ms_per_step_p50: 0.2,
            overhead_ms_per_step_p99: 0.5,
            fanout_wall_ms: 210.0,
            runs_per_sec_c1: 1.0,
            runs_per_sec_c16: 2.0,
            runs_per_sec_c64: 3.0,
            runs_per_sec_c256: 4.0,
            latency_ms_p50: 1.0,
            latency_ms_p99: 2.0,
            relay_latency_ms_p50: 0.1,
            relay_latency_ms_p99: 0.3,
            bytes_per_inflight_run: 1000,
            runs_per_sec_c64_memory: 100.0,
            runs_per_sec_c64_sqlite: 40.0,
        };
        let json = serde_json::to_string(&report).unwrap();
        let parsed: Map<String, Value> = serde_json::from_str(&json).unwrap();
        let rows = report.rows();
        assert_eq!(parsed.len(), rows.len());
        let at = |key: &str| json.find(&format!("\"{key}\":")).expect(key);
        assert!(rows.windows(2).all(|w| at(w[0].key) < at(w[1].key)));
        let sqlite = report.rows().pop().unwrap();
        assert_eq!(sqlite.goal, Some(Goal::AtLeast(50.0)));
        assert!(!sqlite.goal.unwrap().met(sqlite.value));
    }
}

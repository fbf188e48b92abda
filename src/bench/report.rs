//! The figures `bench` reports, their targets, and the arithmetic that makes them
//! (medians, percentiles, rounding).

use serde::Serialize;
use std::time::Duration;

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
    /// The orchestrator's own CPU time per diamond run (user and system, from
    /// `/proc`) in those memory-store rounds: what a run costs, whatever the cores.
    pub cpu_ms_per_run: f64,
    /// The CPU a fixed piece of single-threaded work (reading and writing a task-like
    /// JSON document 2,000 times) took just before each of those rounds: it moves with
    /// the machine, not the code, so figures taken at a like calibration compare.
    pub calibration_ms: f64,
    pub runs_per_sec_c64_sqlite: f64,
    /// With `--postgres`: the c64 throughput on PostgreSQL (in the same turns), and
    /// the database transactions committed per run (each a round trip: the store
    /// writes and reads in single statements), as PostgreSQL counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_per_sec_c64_postgres: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_transactions_per_run: Option<f64>,
    /// The per-step overhead with the chain run through A2A v1.0 JSON-RPC.
    pub overhead_ms_per_step_p50_v1_0: f64,
    /// The c64 diamond throughput through each protocol generation's JSON-RPC,
    /// measured in turns (the median of three each).
    pub runs_per_sec_c64_v0_3: f64,
    pub runs_per_sec_c64_v1_0: f64,
    /// The same driven over gRPC by our client (target: within 10% of JSON-RPC 1.0).
    pub runs_per_sec_c64_grpc: f64,
    /// `serve`'s own CPU per run in the rounds of the two above (the client's is left
    /// out: it shares the machine); target: gRPC within 10% of JSON-RPC 1.0.
    pub cpu_ms_per_run_v1_0: f64,
    pub cpu_ms_per_run_grpc: f64,
    /// The bytes of the body of the blocking v1.0 JSON-RPC answer to a diamond run (what
    /// a client reads; `bench --peer` sets it beside a peer's).
    pub answer_bytes_per_run_v1_0: f64,
    /// The c64 diamond throughput with the downstream agents called over each
    /// generation (the card's choice, 1.0, or pinned to 0.3), in turns (the median of
    /// three each).
    pub runs_per_sec_c64_agents_v0_3: f64,
    pub runs_per_sec_c64_agents_v1_0: f64,
    /// The same with the agents called over gRPC (target: within 10% of JSON-RPC).
    pub runs_per_sec_c64_agents_grpc: f64,
    /// The c64 diamond throughput without traces and with every span exported over
    /// OTLP/HTTP to a loopback receiver, in turns (the median of three each).
    pub runs_per_sec_c64_untraced: f64,
    pub runs_per_sec_c64_traced: f64,
}

/// `bench --replicas`: the c64 diamond on `replicas` serve processes sharing one
/// PostgreSQL database.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaFigures {
    pub replicas: usize,
    pub runs_per_sec: f64,
    /// The database's transactions (commits and rollbacks, as `pg_stat_database`
    /// counts them) per run, the replicas' own housekeeping included.
    pub transactions_per_run: f64,
    /// With two replicas or more: how long a streamed chunk of a run on the first takes
    /// to reach a subscriber on the second, p99, in milliseconds, under that load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay_across_ms_p99: Option<f64>,
    /// With two replicas or more: how much later that subscriber has a chunk than the
    /// owner's own stream of the run, p99, in milliseconds — what following a task
    /// across replicas adds to what the owner's load costs every stream of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay_across_lag_ms_p99: Option<f64>,
    /// With two replicas or more, when the database records commit times
    /// (`track_commit_timestamp`): how long a chunk takes from the owner's commit that
    /// logged it to that subscriber, p99, in milliseconds (target: ≤ 50 ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay_across_from_commit_ms_p99: Option<f64>,
}

/// `bench --baseline EXE`: another build's `serve` beside this one's, on the memory
/// store, the c64 diamond in turns (the median of each side's rounds).
#[derive(Debug, Clone, Serialize)]
pub struct BuildComparison {
    /// The other build, as given.
    pub baseline: String,
    /// The machine's speed just before each turn (see [`Report::calibration_ms`]).
    pub calibration_ms: f64,
    pub baseline_runs_per_sec_c64: f64,
    pub runs_per_sec_c64: f64,
    /// Each `serve`'s own CPU time per diamond run (user and system, from `/proc`).
    pub baseline_cpu_ms_per_run: f64,
    pub cpu_ms_per_run: f64,
    /// This build's CPU per run as a share of the other's, the median of the rounds'
    /// shares (each round's two turns see the same spell of the machine): 0.5 is half.
    pub cpu_ratio: f64,
}

/// `bench --peer EXE`: the diamond on another implementation beside `serve` on the
/// memory store, both over A2A v1.0 JSON-RPC, in turns (the median of each side's
/// rounds).
#[derive(Debug, Clone, Serialize)]
pub struct PeerComparison {
    /// The peer's program, as found.
    pub peer_exe: String,
    /// The machine's speed just before each round (see [`Report::calibration_ms`]).
    pub calibration_ms: f64,
    /// `serve`'s best runs per second (at concurrency 4 or 64) over the peer's best.
    pub throughput_ratio: f64,
    /// `serve`'s CPU per run as a share of the peer's, the median of the rounds'
    /// shares at concurrency 64.
    pub cpu_ratio: f64,
    pub peer: PeerFigures,
    pub serve: PeerFigures,
}

/// One side's figures in `bench --peer`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PeerFigures {
    pub runs_per_sec_c4: f64,
    pub runs_per_sec_c64: f64,
    /// The server's own CPU time per diamond run at concurrency 4 (user and system,
    /// from `/proc`): where the two sides and the benchmark together keep a 2-core
    /// machine busy, so a side's throughput there follows its CPU and the benchmark's.
    pub cpu_ms_per_run_c4: f64,
    /// The benchmark's own CPU time per run at concurrency 4 (as at 64, below).
    pub bench_cpu_ms_per_run_c4: f64,
    /// The server's own CPU time per diamond run at concurrency 64.
    pub cpu_ms_per_run: f64,
    /// The benchmark's own CPU time per run at concurrency 64: its clients', and its
    /// agents' answering this side's calls (a streamed call costs an agent more than
    /// a blocking one).
    pub bench_cpu_ms_per_run: f64,
    /// The bytes of the body of the blocking answer to a run.
    pub answer_bytes_per_run: f64,
}

/// `bench --stores SPEC,…`: one `serve` on each store, the c64 diamond in turns (the
/// median of each store's rounds).
#[derive(Debug, Clone, Serialize)]
pub struct StoreComparison {
    /// The machine's speed just before each round (see [`Report::calibration_ms`]).
    pub calibration_ms: f64,
    /// In the order given.
    pub stores: Vec<StoreFigures>,
}

/// One store's figures in `bench --stores`.
#[derive(Debug, Clone, Serialize)]
pub struct StoreFigures {
    /// The store as given, a password in it hidden.
    pub store: String,
    pub runs_per_sec_c64: f64,
    /// That `serve`'s own CPU time per diamond run (user and system, from `/proc`).
    pub cpu_ms_per_run: f64,
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
        let mut rows = vec![
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
                "cpu_ms_per_run",
                self.cpu_ms_per_run,
                "ms",
                Some(Goal::AtMost(0.4)),
            ),
            row("calibration_ms", self.calibration_ms, "ms", None),
            row(
                "runs_per_sec_c64_sqlite",
                self.runs_per_sec_c64_sqlite,
                "runs/s",
                Some(Goal::AtLeast(0.5 * self.runs_per_sec_c64_memory)),
            ),
        ];
        if let (Some(rate), Some(transactions)) = (
            self.runs_per_sec_c64_postgres,
            self.postgres_transactions_per_run,
        ) {
            rows.push(row("runs_per_sec_c64_postgres", rate, "runs/s", None));
            rows.push(row(
                "postgres_transactions_per_run",
                transactions,
                "transactions",
                None,
            ));
        }
        rows.extend([
            row(
                "overhead_ms_per_step_p50_v1_0",
                self.overhead_ms_per_step_p50_v1_0,
                "ms",
                Some(Goal::AtMost(0.3)),
            ),
            row(
                "runs_per_sec_c64_v0_3",
                self.runs_per_sec_c64_v0_3,
                "runs/s",
                None,
            ),
            row(
                "runs_per_sec_c64_v1_0",
                self.runs_per_sec_c64_v1_0,
                "runs/s",
                Some(Goal::AtLeast(0.95 * self.runs_per_sec_c64_v0_3)),
            ),
            row(
                "runs_per_sec_c64_grpc",
                self.runs_per_sec_c64_grpc,
                "runs/s",
                Some(Goal::AtLeast(0.9 * self.runs_per_sec_c64_v1_0)),
            ),
            row("cpu_ms_per_run_v1_0", self.cpu_ms_per_run_v1_0, "ms", None),
            row(
                "cpu_ms_per_run_grpc",
                self.cpu_ms_per_run_grpc,
                "ms",
                Some(Goal::AtMost(1.1 * self.cpu_ms_per_run_v1_0)),
            ),
            row(
                "answer_bytes_per_run_v1_0",
                self.answer_bytes_per_run_v1_0,
                "bytes",
                None,
            ),
            row(
                "runs_per_sec_c64_agents_v0_3",
                self.runs_per_sec_c64_agents_v0_3,
                "runs/s",
                None,
            ),
            row(
                "runs_per_sec_c64_agents_v1_0",
                self.runs_per_sec_c64_agents_v1_0,
                "runs/s",
                Some(Goal::AtLeast(0.95 * self.runs_per_sec_c64_agents_v0_3)),
            ),
            row(
                "runs_per_sec_c64_agents_grpc",
                self.runs_per_sec_c64_agents_grpc,
                "runs/s",
                Some(Goal::AtLeast(0.9 * self.runs_per_sec_c64_agents_v1_0)),
            ),
            row(
                "runs_per_sec_c64_untraced",
                self.runs_per_sec_c64_untraced,
                "runs/s",
                None,
            ),
            row(
                "runs_per_sec_c64_traced",
                self.runs_per_sec_c64_traced,
                "runs/s",
                Some(Goal::AtLeast(0.9 * self.runs_per_sec_c64_untraced)),
            ),
        ]);
        rows
    }
}

/// The middle value (of an odd count; the upper middle of an even one).
pub(super) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(super) fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// The median and the 99th percentile (nearest rank).
pub(super) fn p50_p99(mut values: Vec<f64>) -> (f64, f64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

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
            cpu_ms_per_run: 1.0,
            calibration_ms: 100.0,
            runs_per_sec_c64_sqlite: 40.0,
            runs_per_sec_c64_postgres: None,
            postgres_transactions_per_run: None,
            overhead_ms_per_step_p50_v1_0: 0.2,
            runs_per_sec_c64_v0_3: 100.0,
            runs_per_sec_c64_v1_0: 99.0,
            runs_per_sec_c64_grpc: 98.0,
            cpu_ms_per_run_v1_0: 0.5,
            cpu_ms_per_run_grpc: 0.52,
            answer_bytes_per_run_v1_0: 3000.0,
            runs_per_sec_c64_agents_v0_3: 100.0,
            runs_per_sec_c64_agents_v1_0: 98.0,
            runs_per_sec_c64_agents_grpc: 97.0,
            runs_per_sec_c64_untraced: 100.0,
            runs_per_sec_c64_traced: 95.0,
        };
        let json = serde_json::to_string(&report).unwrap();
        let parsed: Map<String, Value> = serde_json::from_str(&json).unwrap();
        let rows = report.rows();
        assert_eq!(parsed.len(), rows.len());
        let at = |key: &str| json.find(&format!("\"{key}\":")).expect(key);
        assert!(rows.windows(2).all(|w| at(w[0].key) < at(w[1].key)));
        let rows = report.rows();
        let sqlite = rows
            .iter()
            .find(|r| r.key == "runs_per_sec_c64_sqlite")
            .unwrap();
        assert_eq!(sqlite.goal, Some(Goal::AtLeast(50.0)));
        assert!(!sqlite.goal.unwrap().met(sqlite.value));
        let v1 = rows
            .iter()
            .find(|r| r.key == "runs_per_sec_c64_v1_0")
            .unwrap();
        assert_eq!(v1.goal, Some(Goal::AtLeast(95.0)));
        assert!(v1.goal.unwrap().met(v1.value));
        let traced = rows.last().unwrap();
        assert_eq!(traced.key, "runs_per_sec_c64_traced");
        assert_eq!(traced.goal, Some(Goal::AtLeast(90.0)));
        assert!(traced.goal.unwrap().met(traced.value));
    }
}

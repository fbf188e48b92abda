//! A fixed piece of work timed on this machine: a figure that moves with the machine (a
//! shared host's slow spell, another CPU), never with the orchestrator's code. Beside
//! `cpu_ms_per_run`, which moves with both, it tells a slow machine from a slower build:
//! the same binary's CPU per run has spread 1.7-fold over a day here, in step with it.

use std::hint::black_box;
use std::time::Duration;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

/// How many times the document is read and written.
const ROUNDS: usize = 2_000;

/// The CPU time in milliseconds that the calling thread takes to read a task-like JSON
/// document of some 6 KB into a `serde_json::Value` and write it out again, [`ROUNDS`]
/// times: the kind of work `serve` does (allocation, small maps, strings, JSON). Timed
/// by the thread's own CPU clock, so that whatever else the process does is not
/// counted; it blocks, so the bench runs it on a blocking thread.
pub(super) fn calibrate() -> anyhow::Result<f64> {
    let text = serde_json::to_string(&document())?;
    let before = thread_cpu()?;
    let mut written = 0;
    for _ in 0..ROUNDS {
        let value: Value = serde_json::from_str(black_box(&text))?;
        written += serde_json::to_string(&value)?.len();
    }
    let spent = thread_cpu()?.saturating_sub(before);
    black_box(written);
    Ok(spent.as_secs_f64() * 1000.0)
}

/// The calling thread's CPU time so far, from `/proc/thread-self/schedstat` (its first
/// field, in nanoseconds).
fn thread_cpu() -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .context("calibrating needs /proc/thread-self/schedstat (Linux)")?;
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .map(Duration::from_nanos)
        .ok_or_else(|| anyhow!("unreadable /proc/thread-self/schedstat: {stat:?}"))
}

/// A finished diamond's task as a client reads it, give or take: always the same.
fn document() -> Value {
    let id = |n: usize| format!("01a22578-2c02-75f1-9f6c-{n:012x}");
    let step = |name: &str, n: usize| {
        json!({
            "kind": "status-update",
            "taskId": id(0),
            "contextId": id(1),
            "status": {"state": "working", "timestamp": "2026-11-29T04:02:42.317261039Z"},
            "final": false,
            "metadata": {
                "agent": "fast", "attempt": 1, "downstreamTaskId": id(n), "item": null,
                "state": "completed", "step": name,
            },
        })
    };
    let events: Vec<Value> = ["top", "left", "right", "join"]
        .iter()
        .cycle()
        .take(16)
        .enumerate()
        .map(|(n, name)| step(name, n + 2))
        .collect();
    json!({
        "kind": "task",
        "id": id(0),
        "contextId": id(1),
        "status": {
            "state": "completed",
            "message": {
                "kind": "message", "messageId": id(30), "role": "agent",
                "parts": [{"kind": "text", "text": "`diamond` completed."}],
            },
            "timestamp": "2026-11-29T04:02:42.31910721Z",
        },
        "artifacts": [{
            "artifactId": "result", "name": "diamond",
            "parts": [{"kind": "text", "text": "top\n\nleft\n\nright\n\njoin"}],
        }],
        "history": events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_task_sized_and_the_work_takes_time() {
        let size = serde_json::to_string(&document()).unwrap().len();
        assert!((5_000..8_000).contains(&size), "{size} bytes");
        let ms = calibrate().unwrap();
        assert!(ms > 0.0, "{ms}");
    }
}

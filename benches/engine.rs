//! Benchmarks of the engine alone, with instant in-process agents:
//! - overhead per step: a 200-step chain, total time / steps (target: ≤ 20 µs);
//! - a 1,000-item fan-out: time until every item has been sent (target: ≤ 10 ms).
//!
//! `cargo bench --bench engine`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use orchestrator_core::engine::*;
use orchestrator_core::workflow::{self, Options};
use serde_json::Map;

/// Answers every message at once with a one-part artifact.
struct Instant_ {
    sent: Arc<AtomicUsize>,
    all_sent: Arc<tokio::sync::Notify>,
    expect: usize,
}

impl AgentConnector for Instant_ {
    fn send(&self, _req: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        if self.sent.fetch_add(1, Ordering::SeqCst) + 1 == self.expect {
            self.all_sent.notify_one();
        }
        Box::pin(async {
            let updates = vec![
                Ok(Update::Started {
                    agent: "a".into(),
                    task_id: Some("t".into()),
                }),
                Ok(Update::Artifact(ArtifactChunk {
                    artifact_id: "o".into(),
                    name: None,
                    parts: vec![Content::Text("ok".into())],
                    append: false,
                    last_chunk: true,
                })),
                Ok(Update::Status {
                    state: RemoteState::Completed,
                    message: None,
                }),
            ];
            Ok(Box::pin(futures::stream::iter(updates)) as Updates)
        })
    }

    fn cancel(
        &self,
        _run: &str,
        _agent: &str,
        _task: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        Box::pin(async { Ok(()) })
    }
}

fn load(toml: String) -> Arc<workflow::Workflow> {
    Arc::new(
        workflow::load_str("b.toml", &toml, Options::default())
            .0
            .expect("valid"),
    )
}

async fn run(
    wf: Arc<workflow::Workflow>,
    inputs: Map<String, serde_json::Value>,
    expect: usize,
) -> (Duration, Duration) {
    let sent = Arc::new(AtomicUsize::new(0));
    let all_sent = Arc::new(tokio::sync::Notify::new());
    let connector = Instant_ {
        sent,
        all_sent: all_sent.clone(),
        expect,
    };
    let engine = Engine::new(Arc::new(connector), EngineOptions::default());
    let start = Instant::now();
    let mut handle = engine.start(wf, &inputs, "bench".into()).unwrap();
    let sent_at = tokio::spawn(async move {
        all_sent.notified().await;
        start.elapsed()
    });
    while let Some(e) = handle.events.recv().await {
        if let RunEvent::Run { state, message } = e
            && state.is_terminal()
        {
            assert_eq!(state, RunState::Completed, "{message:?}");
            break;
        }
    }
    (start.elapsed(), sent_at.await.unwrap())
}

#[tokio::main]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let n = 200;
    let mut chain = String::from("[workflow]\nid = \"chain\"\ndescription = \"d\"\n");
    for i in 0..n {
        chain.push_str(&format!(
            "[steps.s{i}]\nagent = \"a\"\nmessage = \"step {i}\"\n"
        ));
        if i > 0 {
            chain.push_str(&format!("needs = [\"s{}\"]\n", i - 1));
        }
    }
    let chain = load(chain);
    let runs = if quick { 3 } else { 11 };
    let mut per_step = Vec::new();
    for _ in 0..runs {
        let (total, _) = run(chain.clone(), Map::new(), n).await;
        per_step.push(total.as_secs_f64() * 1e6 / n as f64);
    }
    per_step.sort_by(f64::total_cmp);
    println!(
        "engine overhead per step: median {:.1} µs over {runs} runs of a {n}-step chain (target: ≤ 20 µs)",
        per_step[runs / 2]
    );

    let fan = load(
        "[workflow]\nid = \"fan\"\ndescription = \"d\"\nmax_parallel = 1000\n[input]\nitems = { type = \"array\" }\n\
         [steps.each]\nagent = \"a\"\nfor_each = \"input.items\"\nmessage = \"{{ item }}\"\n"
            .to_owned(),
    );
    let mut inputs = Map::new();
    inputs.insert(
        "items".into(),
        serde_json::Value::Array((0..1000).map(serde_json::Value::from).collect()),
    );
    let mut scheduled = Vec::new();
    for _ in 0..runs {
        let (_, sent) = run(fan.clone(), inputs.clone(), 1000).await;
        scheduled.push(sent.as_secs_f64() * 1e3);
    }
    scheduled.sort_by(f64::total_cmp);
    println!(
        "1,000-item fan-out fully scheduled: median {:.2} ms over {runs} runs (target: ≤ 10 ms)",
        scheduled[runs / 2]
    );
}

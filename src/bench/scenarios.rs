//! What is measured, one scenario each: a blocking run, a direct call to an agent, the
//! throughput of many clients, the relay latency of streamed chunks, and the resident
//! memory of held runs.

use super::Options;
use super::agents::Agents;
use super::process::{Scratch, Serve};
use super::report::ms;
use a2a::client::A2aClient;
use a2a::types::{
    Message, Part, Role, SendMessageRequest, SendMessageResult, StreamEvent,
    SubscribeToTaskRequest, TaskState,
};
use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How the benchmark's clients reach the orchestrator: through our client (A2A v0.3 over
/// JSON-RPC, or v1.0 over gRPC: the interface it is given), or A2A v1.0 JSON-RPC
/// (requests written as the spec shows them).
#[derive(Clone)]
pub(super) enum Upstream {
    Ours(A2aClient),
    /// `answered` counts the bytes of every answer's body.
    V1_0 {
        http: reqwest::Client,
        url: String,
        answered: Arc<AtomicU64>,
    },
}

impl Upstream {
    pub(super) fn v1_0(url: &str) -> anyhow::Result<Upstream> {
        let http = a2a::https::reqwest_client_builder()
            .tcp_nodelay(true)
            .timeout(Duration::from_secs(60))
            .pool_idle_timeout(a2a::client::POOL_IDLE_TIMEOUT)
            .build()?;
        Ok(Upstream::V1_0 {
            http,
            url: url.to_owned(),
            answered: Arc::default(),
        })
    }

    /// The bytes of the answers' bodies so far (A2A v1.0 JSON-RPC only).
    pub(super) fn answered_bytes(&self) -> u64 {
        match self {
            Upstream::Ours(_) => 0,
            Upstream::V1_0 { answered, .. } => answered.load(Ordering::Relaxed),
        }
    }
}

/// A few runs of everything, so connections are open and code is paged in.
pub(super) async fn warm_up(host: &Upstream) -> anyhow::Result<()> {
    for _ in 0..20 {
        run_blocking(host, "diamond", json!({})).await?;
    }
    run_blocking(host, "chain", json!({})).await?;
    Ok(())
}

/// A message starting `workflow` with `input`.
fn start_message(workflow: &str, input: Value) -> SendMessageRequest {
    let data = Map::from_iter([
        ("workflow".to_owned(), json!(workflow)),
        ("input".to_owned(), input),
    ]);
    SendMessageRequest::new(Message::new(Role::User, vec![Part::data(data)]))
}

/// Runs `workflow` with a blocking send (`message/send` or `SendMessage`); its latency.
pub(super) async fn run_blocking(
    host: &Upstream,
    workflow: &str,
    input: Value,
) -> anyhow::Result<Duration> {
    let host = match host {
        Upstream::Ours(client) => client,
        Upstream::V1_0 {
            http,
            url,
            answered,
        } => return run_blocking_v1(http, url, answered, workflow, input).await,
    };
    let started = Instant::now();
    let result = host
        .send_message(&start_message(workflow, input))
        .await
        .with_context(|| format!("a run of `{workflow}` failed"))?;
    match result {
        SendMessageResult::Task(t) if t.state() == TaskState::Completed => Ok(started.elapsed()),
        SendMessageResult::Task(t) => bail!(
            "a run of `{workflow}` ended {}: {}",
            t.state(),
            t.status()
                .message
                .as_ref()
                .map(|m| m.text())
                .unwrap_or_default()
        ),
        SendMessageResult::Message(m) => {
            bail!(
                "a run of `{workflow}` was answered with a message: {}",
                m.text()
            )
        }
    }
}

/// [`run_blocking`] over A2A v1.0 JSON-RPC.
async fn run_blocking_v1(
    http: &reqwest::Client,
    url: &str,
    answered: &AtomicU64,
    workflow: &str,
    input: Value,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": { "message": {
            "messageId": a2a::types::MessageId::random().to_string(),
            "role": "ROLE_USER",
            "parts": [{ "data": { "workflow": workflow, "input": input } }],
        }},
    });
    let answer = http
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .with_context(|| format!("a v1.0 run of `{workflow}` failed"))?
        .bytes()
        .await
        .with_context(|| format!("a v1.0 run of `{workflow}` was not answered"))?;
    answered.fetch_add(answer.len() as u64, Ordering::Relaxed);
    let answer: Value = serde_json::from_slice(&answer)
        .with_context(|| format!("a v1.0 run of `{workflow}` was answered with no JSON"))?;
    match answer["result"]["task"]["status"]["state"].as_str() {
        Some("TASK_STATE_COMPLETED") => Ok(started.elapsed()),
        _ => bail!("a v1.0 run of `{workflow}` did not complete: {answer}"),
    }
}

/// One call to the instant agent the way the orchestrator makes it: `message/stream`,
/// read to the end.
pub(super) async fn direct_call(agent: &A2aClient) -> anyhow::Result<()> {
    let request = SendMessageRequest::new(Message::user_text("step"));
    let mut events = agent.send_message_stream(&request).await?;
    let mut last = None;
    while let Some(event) = events.next().await {
        last = Some(event?);
    }
    match last {
        Some(StreamEvent::StatusUpdate(s)) if s.status().state() == TaskState::Completed => Ok(()),
        other => bail!("the direct call did not complete: {other:?}"),
    }
}

/// Runs per second and each run's latency, `concurrency` clients running the diamond
/// `runs` times in all.
pub(super) async fn throughput(
    host: &Upstream,
    runs: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, Vec<f64>)> {
    throughput_across(std::slice::from_ref(host), runs, concurrency).await
}

/// [`throughput`] with the clients spread over `hosts` (replicas of one orchestrator),
/// each client sticking to one: a round-robin load balancer in front of them.
pub(super) async fn throughput_across(
    hosts: &[Upstream],
    runs: usize,
    concurrency: usize,
) -> anyhow::Result<(f64, Vec<f64>)> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for client in 0..concurrency {
        let (host, next) = (hosts[client % hosts.len()].clone(), next.clone());
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
pub(super) async fn relay(
    host: &A2aClient,
    epoch: Instant,
    chunks: usize,
) -> anyhow::Result<Vec<f64>> {
    let mut events = host
        .send_message_stream(&start_message("relay", json!({})))
        .await?;
    let mut latencies = Vec::with_capacity(chunks);
    let mut last = None;
    while let Some(event) = events.next().await {
        let event = event?;
        latencies.extend(
            stamps(&event, epoch)
                .into_iter()
                .map(|(sent, at)| at.saturating_sub(sent) as f64 / 1e6),
        );
        last = Some(event);
    }
    match last {
        Some(StreamEvent::StatusUpdate(s)) if s.status().state() == TaskState::Completed => {}
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

/// What [`relay_across`] measured: the task, and per chunk its times (the figures in
/// milliseconds).
pub(super) struct Across {
    /// The task relayed.
    pub(super) task: String,
    /// Each chunk the other replica's subscriber had: when the agent sent it and when
    /// it arrived, in nanoseconds since the epoch.
    arrived: Vec<(u128, u128)>,
    /// From the agent to the subscriber on the other replica.
    pub(super) latencies: Vec<f64>,
    /// How much later the subscriber on the other replica had a chunk than the owner's
    /// own stream (negative when it was sooner): what following a task across replicas
    /// adds to what the owner's load costs every stream of it.
    pub(super) lags: Vec<f64>,
}

impl Across {
    /// From the commit that logged each chunk (by the database's clock, which the
    /// benchmark shares: the database runs on this machine) to the subscriber on the
    /// other replica, in milliseconds: what the issue's "an event written by the owner
    /// reaches a subscriber on another replica" measures. `committed` is the task's
    /// log as [`DatabaseStats::commit_times`] reads it.
    ///
    /// [`DatabaseStats::commit_times`]: orchestrator_store::DatabaseStats::commit_times
    pub(super) fn since_commit(
        &self,
        committed: &[(String, SystemTime)],
        epoch: Instant,
    ) -> anyhow::Result<Vec<f64>> {
        let epoch_wall = SystemTime::now() - epoch.elapsed();
        let mut at = HashMap::with_capacity(committed.len());
        for (json, time) in committed {
            // Logged as the StreamResponse that holds it (A2A 1.0's JSON).
            let event: StreamEvent = serde_json::from_str(json)
                .with_context(|| format!("reading the logged event {json}"))?;
            let nanos = match time.duration_since(epoch_wall) {
                Ok(d) => d.as_nanos() as i128,
                Err(e) => -(e.duration().as_nanos() as i128),
            };
            at.extend(chunks(&event).map(|sent| (sent, nanos)));
        }
        self.arrived
            .iter()
            .map(|(sent, arrived)| match at.get(sent) {
                Some(committed) => Ok((*arrived as i128 - committed) as f64 / 1e6),
                None => bail!("the relayed task's log has no commit time for chunk {sent}"),
            })
            .collect()
    }
}

/// The relay latency of each chunk of a `chunky` task run by replica `owner`, seen by
/// a subscriber on replica `other` (`tasks/resubscribe`): from the agent through the
/// owner, its store and the other replica's reading of it; and, per chunk, the other
/// subscriber's lag behind the owner's own stream of the run. The agent streams once the
/// subscription is made (`gate`); chunks streamed before the subscription began are not
/// counted, and at least half must reach it.
pub(super) async fn relay_across(
    owner: &A2aClient,
    other: &A2aClient,
    epoch: Instant,
    chunks: usize,
    gate: &tokio::sync::Notify,
) -> anyhow::Result<Across> {
    let mut local = owner
        .send_message_stream(&start_message("relay", json!({})))
        .await?;
    let id = match local.next().await {
        Some(Ok(StreamEvent::Task(t))) => t.id,
        Some(Ok(StreamEvent::StatusUpdate(s))) => s.task_id,
        other => bail!("the relay run did not start: {other:?}"),
    };
    // The owner's own stream read beside, as a client of it would, each chunk's
    // arrival noted.
    let owners = tokio::spawn(async move {
        let mut arrived = HashMap::with_capacity(chunks);
        while let Some(Ok(event)) = local.next().await {
            arrived.extend(stamps(&event, epoch));
        }
        arrived
    });
    let mut events = other.subscribe(&SubscribeToTaskRequest::new(&id)).await?;
    // The subscriber is there: the agent may stream (a loaded machine could otherwise
    // stream most chunks before the other replica's subscription begins).
    gate.notify_one();
    let mut arrived = Vec::with_capacity(chunks);
    while let Some(event) = events.next().await {
        arrived.extend(stamps(&event?, epoch));
    }
    // Both streams end with the task; the owner's is not waited for past that.
    let owners = match tokio::time::timeout(Duration::from_secs(30), owners).await {
        Ok(owners) => owners?,
        Err(_) => bail!("the owner's stream of the relay run had not ended 30 s after the task"),
    };
    if arrived.len() < chunks / 2 {
        bail!(
            "{} of the {chunks} chunks reached the other replica's subscriber",
            arrived.len()
        );
    }
    let millis = |nanos: i128| nanos as f64 / 1e6;
    Ok(Across {
        task: id,
        latencies: arrived
            .iter()
            .map(|&(sent, at)| millis(at as i128 - sent as i128))
            .collect(),
        lags: arrived
            .iter()
            .filter_map(|(sent, at)| Some(millis(*at as i128 - *owners.get(sent)? as i128)))
            .collect(),
        arrived,
    })
}

/// The chunks in `event` as (when the agent sent it, when it arrived), in nanoseconds
/// since `epoch`.
fn stamps(event: &StreamEvent, epoch: Instant) -> Vec<(u128, u128)> {
    let now = epoch.elapsed().as_nanos();
    chunks(event).map(|sent| (sent, now)).collect()
}

/// The chunks in `event`: when the agent sent each, in nanoseconds since the epoch.
fn chunks(event: &StreamEvent) -> impl Iterator<Item = u128> + '_ {
    let parts = match event {
        StreamEvent::ArtifactUpdate(a) => &a.artifact().parts[..],
        _ => &[],
    };
    parts
        .iter()
        .filter_map(|part| part.as_text()?.parse::<u128>().ok())
}

/// The orchestrator's resident memory per run with `runs` runs waiting on the `held`
/// agent, in a fresh orchestrator process.
pub(super) async fn memory(
    options: &Options,
    dir: &Scratch,
    agents: &Agents,
    runs: usize,
) -> anyhow::Result<u64> {
    let serve = Serve::start(&options.exe, dir, "memory").await?;
    let host = serve.client()?;
    warm_up(&Upstream::Ours(host.clone())).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = serve.rss_bytes()?;
    let arrived_before = agents.held.load(Ordering::SeqCst);
    let next = Arc::new(AtomicUsize::new(0));
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..64 {
        let (host, next) = (host.clone(), next.clone());
        senders.spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < runs {
                let request = start_message("hold", json!({})).returning_immediately();
                match host.send_message(&request).await? {
                    SendMessageResult::Task(t) if !t.state().is_terminal() => {}
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

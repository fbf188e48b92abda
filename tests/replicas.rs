//! Several `serve` replicas on one PostgreSQL database (issue 26): the store's
//! ownership contract — leases, takeover, fencing, the request queue — checked on two
//! stores opened as two replicas would open them.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use a2a::store::{ClusterRequest, Owner, StoreError, StoredTask};
use a2a::types::*;
use orchestrator_core::engine::{Checkpoint, Record, RunEnd, RunHeader, RunState, StepState};
use orchestrator_store::{Store, StoreSpec};

use crate::util::postgres::Cluster;

fn working(id: &str, state: TaskState) -> StoredTask {
    StoredTask::new(Task::new(id, "c", TaskStatus::new(state)))
}

fn status(task: &Task) -> Arc<StreamEvent> {
    Arc::new(StreamEvent::StatusUpdate(TaskStatusUpdateEvent::new(
        task.id.clone(),
        task.context_id.clone(),
        task.status().clone(),
    )))
}

fn artifact(task: &Task) -> Arc<StreamEvent> {
    Arc::new(StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
        last_chunk: true,
        ..TaskArtifactUpdateEvent::new(
            task.id.clone(),
            task.context_id.clone(),
            Artifact::new("out", vec![Part::text("out")]),
        )
    }))
}

fn header(id: &str) -> RunHeader {
    RunHeader {
        run_id: id.into(),
        workflow_id: "w".into(),
        workflow_file: "w.toml".into(),
        workflow_source: "source".into(),
        workflow_hash: "hash".into(),
        inputs: serde_json::Map::new(),
        trace: None,
        started_at: None,
        initiator: None,
        tenant: None,
        retry_of: None,
        held: None,
        parent: None,
    }
}

/// A run's end, completed with nothing to say.
/// A step's first message, as its checkpoint before it is sent.
fn first_message() -> Checkpoint {
    Checkpoint::Sent {
        attempt: 1,
        turn: 0,
        message_id: "m".into(),
        agent: None,
        task_id: None,
        text: Some("go".into()),
        data: None,
        started_at: None,
        asking: false,
    }
}

fn completed() -> RunEnd {
    RunEnd {
        state: RunState::Completed,
        message: None,
        output_text: None,
        output_data: None,
    }
}

/// A cluster with database `name`, and two stores opened on it as two replicas would
/// open them, with leases of 600 ms.
async fn two_replicas(name: &str) -> (Cluster, Arc<dyn Store>, Arc<dyn Store>) {
    let pg = Cluster::shared();
    let url = pg.database(name).await;
    let spec = StoreSpec::parse(&url)
        .unwrap()
        .with_lease(Duration::from_millis(600))
        .unwrap();
    let a: Arc<dyn Store> = spec.open().await.unwrap();
    let b: Arc<dyn Store> = spec.open().await.unwrap();
    (pg, a, b)
}

/// Two replicas: A starts a task and its run; B cannot write for it and sees it run
/// elsewhere; A stops renewing, B claims it with a new fencing number; from then on
/// A's writes for the task and the run are refused, A hears it lost the task at its
/// next renewal, and requests queued for the task reach B, once each.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_task_is_written_only_by_the_replica_that_holds_it() {
    let (pg, a, b) = two_replicas("ownership").await;
    let (ca, cb) = (a.cluster().unwrap(), b.cluster().unwrap());

    let mut task = working("t", TaskState::Submitted);
    a.commit(
        &task,
        &[(1, Arc::new(StreamEvent::Task(task.task.clone())))],
    )
    .await
    .unwrap();
    a.create_run(&header("t")).await.unwrap();
    assert_eq!(ca.owner(&TaskId::new(&task.id)).await.unwrap(), Owner::Here);
    assert_eq!(
        cb.owner(&TaskId::new(&task.id)).await.unwrap(),
        Owner::Elsewhere
    );
    assert!(cb.claim(10).await.unwrap().is_empty(), "A's lease holds");
    task.status = Some(TaskStatus::new(TaskState::Working));
    let refused = b.commit(&task, &[(2, status(&task))]).await.unwrap_err();
    assert!(matches!(refused, StoreError::Fenced(_)), "{refused:?}");
    a.commit(&task, &[(2, status(&task))]).await.unwrap();

    // A stops renewing (frozen, cut off): past its lease, B takes the task over.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(
        cb.owner(&TaskId::new(&task.id)).await.unwrap(),
        Owner::Nobody
    );
    cb.renew().await.unwrap();
    let claimed = cb.claim(10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (claimed[0].0.state(), claimed[0].1),
        (TaskState::Working, 2)
    );
    assert!(cb.claim(10).await.unwrap().is_empty(), "claimed once");
    assert_eq!(cb.owner(&TaskId::new(&task.id)).await.unwrap(), Owner::Here);

    // A wakes up: nothing it writes for the task or its run lands — an artifact, which
    // leaves the row's listed columns as they are (the row is only locked and checked),
    // no more than a new state.
    let refused = a.commit(&task, &[(3, artifact(&task))]).await.unwrap_err();
    assert!(matches!(refused, StoreError::Fenced(_)), "{refused:?}");
    task.status = Some(TaskStatus::new(TaskState::Failed));
    let refused = a.commit(&task, &[(3, status(&task))]).await.unwrap_err();
    assert!(matches!(refused, StoreError::Fenced(_)), "{refused:?}");
    let done = Checkpoint::Done(Record::new(StepState::Completed));
    let refused = a.save_unit("t", "step", None, &done).await.unwrap_err();
    assert!(
        matches!(refused, orchestrator_core::engine::RunStoreError::Fenced(_)),
        "{refused:?}"
    );
    assert_eq!(
        ca.renew().await.unwrap(),
        [task.id.clone()],
        "A hears it lost the task"
    );
    assert_eq!(
        ca.owner(&TaskId::new(&task.id)).await.unwrap(),
        Owner::Elsewhere
    );
    let (stored, seq) = a.get(&TaskId::new(&task.id)).await.unwrap().unwrap();
    assert_eq!((stored.state(), seq), (TaskState::Working, 2));
    assert!(a.load_run("t").await.unwrap().unwrap().units.is_empty());

    // B goes on with it.
    b.save_unit("t", "step", None, &done).await.unwrap();
    task.status = claimed[0].0.status.clone();
    b.commit(&task, &[(3, artifact(&task))]).await.unwrap();
    task.status = Some(TaskStatus::new(TaskState::Completed));
    b.commit(&task, &[(4, status(&task))]).await.unwrap();
    let logged: Vec<u64> = b
        .events_after(&TaskId::new(&task.id), 0)
        .await
        .unwrap()
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(logged, [1, 2, 3, 4], "A's writes refused, B's logged");

    // Requests queued for a task reach the replica running it, once.
    let mut other = working("u", TaskState::InputRequired);
    b.commit(
        &other,
        &[(1, Arc::new(StreamEvent::Task(other.task.clone())))],
    )
    .await
    .unwrap();
    // With who asked, checked where the request arrived (issue 35).
    let olga = a2a::server::Caller::known(std::sync::Arc::new(a2a::server::Principal::new(
        None,
        "token:olga",
        "Olga",
    )));
    let cancel = ClusterRequest::Cancel(Box::new(a2a::store::Forwarded::new(
        CancelTaskRequest {
            id: other.id.clone(),
            ..Default::default()
        },
        a2a::Version::V1_0,
        &olga,
    )));
    // Beside it, one this server cannot read (a kind a newer server might queue in a
    // rolling upgrade): dropped, and the readable one still taken.
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&pg.url("ownership"))
            .await
            .unwrap();
        sqlx::query("INSERT INTO task_requests (task_id, request) VALUES ($1, $2)")
            .bind(other.id.as_str())
            .bind(r#"{"kind":"fromTheFuture","id":"u"}"#)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    ca.request(&TaskId::new(&other.id), &cancel).await.unwrap();
    assert!(ca.requests().await.unwrap().is_empty(), "not A's task");
    let taken = cb.requests().await.unwrap();
    assert_eq!(
        taken.len(),
        1,
        "the unreadable one dropped, the cancel taken"
    );
    assert_eq!(taken[0].0, other.id);
    assert!(matches!(&taken[0].1, ClusterRequest::Cancel(f)
        if f.params.id == other.id && f.caller.as_ref().map(|p| p.id.as_str()) == Some("token:olga")));
    assert!(cb.requests().await.unwrap().is_empty(), "taken once");

    // A push config's notice reaches the replica running the task — unless that one
    // is of an older version, which cannot read it (one from before the column reads
    // no kind but cancels and messages, and fails its whole take on another): then
    // it is not queued, and what that replica reads still is.
    ca.request(&TaskId::new(&other.id), &ClusterRequest::ArmPush)
        .await
        .unwrap();
    let taken = cb.requests().await.unwrap();
    assert!(
        matches!(&taken[..], [(id, ClusterRequest::ArmPush)] if *id == other.id),
        "{taken:?}"
    );
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&pg.url("ownership"))
            .await
            .unwrap();
        sqlx::query(
            "UPDATE replicas SET requests_understood = 0
             WHERE id = (SELECT owner FROM tasks WHERE id = $1)",
        )
        .bind(other.id.as_str())
        .execute(&mut conn)
        .await
        .unwrap();
    }
    ca.request(&TaskId::new(&other.id), &ClusterRequest::ArmPush)
        .await
        .unwrap();
    ca.request(&TaskId::new(&other.id), &cancel).await.unwrap();
    let taken = cb.requests().await.unwrap();
    assert!(
        matches!(&taken[..], [(_, ClusterRequest::Cancel(_))]),
        "{taken:?}"
    );

    // A replica that stops gracefully gives its tasks up at once.
    cb.release().await.unwrap();
    ca.renew().await.unwrap();
    let claimed = ca.claim(10).await.unwrap();
    assert_eq!(claimed.len(), 1, "the finished task is nobody's to claim");
    assert_eq!(claimed[0].0.id, other.id);
    other.status = Some(TaskStatus::new(TaskState::Canceled));
    a.commit(&other, &[(2, status(&other))]).await.unwrap();
}

/// Writes are committed in batches (issue 39), and fencing still holds write by write:
/// A runs forty tasks, B takes twenty of them over while A is frozen, then A writes
/// for all forty at once — events, snapshots and checkpoints queued together. A's
/// writes for the twenty it still holds are committed; those for the twenty it lost are
/// refused, and nothing of theirs is stored.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_commits_the_held_tasks_writes_and_refuses_the_lost_ones() {
    let (_pg, a, b) = two_replicas("batches").await;
    let (ca, cb) = (a.cluster().unwrap(), b.cluster().unwrap());
    let tasks: Vec<StoredTask> = (0..40)
        .map(|i| working(&format!("batch-{i:02}"), TaskState::Submitted))
        .collect();
    futures::future::try_join_all(tasks.iter().map(|task| {
        let a = a.clone();
        async move {
            a.commit(task, &[(1, Arc::new(StreamEvent::Task(task.task.clone())))])
                .await?;
            a.create_run(&header(task.id.as_str()))
                .await
                .map_err(StoreError::backend)
        }
    }))
    .await
    .unwrap();

    // A freezes past its lease; B claims twenty of them (in no order).
    tokio::time::sleep(Duration::from_millis(900)).await;
    cb.renew().await.unwrap();
    let claimed = cb.claim(20).await.unwrap();
    let lost: Vec<&String> = claimed.iter().map(|(t, _)| &t.id).collect();
    assert_eq!(lost.len(), 20);
    assert_eq!(lost.iter().collect::<HashSet<_>>().len(), 20, "{lost:?}");

    // A wakes and writes for every task at once.
    let done = Checkpoint::Done(Record::new(StepState::Completed));
    let outcomes = futures::future::join_all(tasks.iter().map(|task| {
        let (a, done) = (a.clone(), done.clone());
        async move {
            let mut task = task.clone();
            task.status = Some(TaskStatus::new(TaskState::Working));
            let events = [(2, status(&task))];
            let unit = a.save_unit(task.id.as_str(), "step", None, &done);
            let event = a.commit(&task, &events);
            let (unit, event) = tokio::join!(unit, event);
            (task.id.clone(), unit, event)
        }
    }))
    .await;
    for (id, unit, event) in outcomes {
        if lost.contains(&&id) {
            assert!(
                matches!(event, Err(StoreError::Fenced(_))),
                "{id}: {event:?}"
            );
            assert!(
                matches!(
                    unit,
                    Err(orchestrator_core::engine::RunStoreError::Fenced(_))
                ),
                "{id}: {unit:?}"
            );
        } else {
            event.unwrap_or_else(|e| panic!("{id}: {e}"));
            unit.unwrap_or_else(|e| panic!("{id}: {e}"));
        }
    }
    // What is stored is what was committed: the held tasks' writes, nothing of the
    // lost ones'.
    for task in &tasks {
        let (stored, seq) = b.get(&TaskId::new(&task.id)).await.unwrap().unwrap();
        let units = b.load_run(task.id.as_str()).await.unwrap().unwrap().units;
        if lost.contains(&&task.id) {
            assert_eq!((stored.state(), seq), (TaskState::Submitted, 1));
            assert!(units.is_empty(), "{}", task.id);
            assert_eq!(cb.owner(&TaskId::new(&task.id)).await.unwrap(), Owner::Here);
        } else {
            assert_eq!((stored.state(), seq), (TaskState::Working, 2));
            assert_eq!(units.len(), 1, "{}", task.id);
            assert_eq!(ca.owner(&TaskId::new(&task.id)).await.unwrap(), Owner::Here);
        }
    }
}

/// A burst of writes past one batch: batches go side by side on connections of their
/// own, and still each task's writes commit in the order they were made (a step's
/// `Done` queued after its `Sent` is what stays), each acknowledged once stored.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_goes_in_batches_side_by_side_and_keeps_each_tasks_order() {
    let pg = Cluster::shared();
    let url = pg.database("burst").await;
    let store: Arc<dyn Store> = StoreSpec::parse(&url).unwrap().open().await.unwrap();
    let tasks: Vec<StoredTask> = (0..400)
        .map(|i| working(&format!("burst-{i:03}"), TaskState::Submitted))
        .collect();
    let sent = Checkpoint::Asked {
        started_at: "2026-11-29T00:00:00Z".into(),
    };
    let done = Checkpoint::Done(Record::new(StepState::Completed));
    let burst = futures::future::join_all(tasks.iter().map(|task| {
        let (store, sent, done) = (store.clone(), sent.clone(), done.clone());
        async move {
            store
                .commit(task, &[(1, Arc::new(StreamEvent::Task(task.task.clone())))])
                .await?;
            store
                .create_run(&header(task.id.as_str()))
                .await
                .map_err(StoreError::backend)?;
            let id = task.id.as_str();
            // Two checkpoints queued unwaited, then the task's next commit waited for.
            store
                .queue_unit(id, "step", None, &sent)
                .await
                .map_err(StoreError::backend)?;
            store
                .queue_unit(id, "step", None, &done)
                .await
                .map_err(StoreError::backend)?;
            let mut task = task.clone();
            task.status = Some(TaskStatus::new(TaskState::Working));
            store.commit(&task, &[(2, status(&task))]).await
        }
    }));
    for outcome in tokio::time::timeout(Duration::from_secs(60), burst)
        .await
        .expect("the burst is committed")
    {
        outcome.unwrap();
    }
    for task in &tasks {
        let (stored, seq) = store.get(&TaskId::new(&task.id)).await.unwrap().unwrap();
        assert_eq!((stored.state(), seq), (TaskState::Working, 2));
        let units = store
            .load_run(task.id.as_str())
            .await
            .unwrap()
            .unwrap()
            .units;
        assert_eq!(
            units.get(&("step".to_owned(), None)),
            Some(&done),
            "{}",
            task.id
        );
    }
    // More than one connection made the batches.
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let writing: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND query LIKE '%a2a_write_batch%'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert!(writing > 1, "{writing} connection(s) wrote");
}

// ---------------------------------------------------------------------------------
// Replicas as processes: `serve` three times on one database, real agents on loopback.

/// Two slow steps in parallel, then a join; every message names its run, so the
/// agents' counts say how often each run's step reached them.
const WORKFLOW: &str = r#"
[workflow]
id = "replicated"
name = "Replicated"
description = "Two slow steps in parallel, then a join"

[steps.a]
agent = "alpha"
message = "a {{ run.id }}"

[steps.b]
agent = "beta"
message = "b {{ run.id }}"

[steps.join]
agent = "delta"
needs = ["a", "b"]
message = "join {{ run.id }}"

[output]
text = "{{ steps.a.text }} / {{ steps.b.text }} / {{ steps.join.text }}"
"#;

/// An approval, then a slow step.
const APPROVED: &str = r#"
[workflow]
id = "approved"
name = "Approved"
description = "An approval, then a slow step"

[steps.approve]
kind = "approval"
prompt = "Go ahead?"

[steps.a]
agent = "alpha"
needs = ["approve"]
message = "a {{ run.id }}"
"#;

/// Messages per "agent:text", counted by the agents themselves.
type Seen = Arc<std::sync::Mutex<std::collections::HashMap<String, u32>>>;

/// The agents (alpha and beta think for `slow`), a project for them, and `n` replicas
/// of `serve` on a fresh database of `pg` with leases of `lease`.
struct Fleet {
    seen: Seen,
    /// JSON-RPC calls per "agent:method", counted at the agents' endpoints.
    calls: crate::util::counting::Calls,
    /// The agents' URLs: alpha, beta, delta.
    agents: Vec<String>,
    replicas: Vec<Option<tokio::process::Child>>,
    urls: Vec<String>,
    dir: std::path::PathBuf,
}

impl Fleet {
    async fn start(pg: &Cluster, name: &str, n: usize, slow: Duration, lease: &str) -> Fleet {
        Self::start_behind(pg, name, n, slow, lease, None).await
    }

    /// Like [`Fleet::start`]; `behind`, a load balancer's URL and a port for each
    /// replica: each listens on its port and names the balancer as its URL (the card's,
    /// so its clients come back through it). `urls` are then the replicas' own.
    async fn start_behind(
        pg: &Cluster,
        name: &str,
        n: usize,
        slow: Duration,
        lease: &str,
        behind: Option<(&str, &[u16])>,
    ) -> Fleet {
        let seen = Seen::default();
        let calls = crate::util::counting::Calls::default();
        let mut agents = Vec::new();
        for (agent, delay) in [
            ("alpha", slow),
            ("beta", slow),
            ("delta", Duration::from_millis(50)),
        ] {
            agents.push(crate::util::counting::counting_calls(agent, delay, &seen, &calls).await);
        }
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("flows")).unwrap();
        std::fs::write(dir.join("flows/replicated.toml"), WORKFLOW).unwrap();
        std::fs::write(dir.join("flows/approved.toml"), APPROVED).unwrap();
        let text: String = ["alpha", "beta", "delta"]
            .iter()
            .zip(&agents)
            .map(|(a, url)| format!("[agents.{a}]\nurl = \"{url}\"\n\n"))
            .collect();
        std::fs::write(dir.join("agents.toml"), text).unwrap();
        let store = pg.database(name).await;
        let mut fleet = Fleet {
            seen,
            calls,
            agents,
            replicas: Vec::new(),
            urls: Vec::new(),
            dir,
        };
        for i in 0..n {
            let agents = fleet.dir.join("agents.toml").display().to_string();
            let flows = fleet.dir.join("flows").display().to_string();
            let log = std::fs::File::create(fleet.dir.join(format!("replica-{i}.log"))).unwrap();
            let listen = match behind {
                Some((_, ports)) => format!("127.0.0.1:{}", ports[i]),
                None => "127.0.0.1:0".to_owned(),
            };
            let mut args = vec![
                "--agents",
                &agents,
                "--workflows",
                &flows,
                "--listen",
                &listen,
                "--store",
                &store,
                "--lease",
                lease,
                // The push test's webhook listens on loopback.
                "--allow-private-webhooks",
            ];
            if let Some((public, _)) = behind {
                args.extend(["--public-url", public]);
            }
            let (child, url) = crate::util::orchestra::spawn_serve_logging(
                &args,
                &[("RUST_LOG", "a2a_orchestrator=info")],
                log.into(),
            )
            .await;
            fleet.replicas.push(Some(child));
            fleet.urls.push(match behind {
                Some(_) => format!("http://{listen}/"),
                None => url,
            });
        }
        fleet
    }

    /// Sends `signal` (`KILL`, `STOP`, `CONT`, `TERM`) to replica `i`.
    fn signal(&self, i: usize, signal: &str) {
        let pid = self.replicas[i].as_ref().unwrap().id().unwrap();
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// How often each run's steps reached the agents: every count must be 1.
    fn counts(&self) -> Vec<(String, u32)> {
        let mut v: Vec<_> = self
            .seen
            .lock()
            .unwrap()
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        v.sort();
        v
    }

    /// What replica `i` logged, for a failure's message.
    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("replica-{i}.log"))).unwrap_or_default()
    }
}

fn start_run() -> serde_json::Value {
    let mut p = crate::util::text_params("go");
    p["metadata"] = serde_json::json!({ "workflow": "replicated" });
    crate::util::rpc("message/stream", p)
}

/// What a client following one run saw: the task, every event id in order, the last
/// state, and how many times it reconnected.
struct Followed {
    task: String,
    ids: Vec<u64>,
    state: String,
    reconnects: usize,
}

/// Starts a run on `urls[first]` with `message/stream` and follows it to its end; when
/// the stream breaks before, reconnects to the next replica with `tasks/resubscribe`
/// and `Last-Event-ID`, and so on.
async fn follow(
    urls: Vec<String>,
    first: usize,
    started: tokio::sync::mpsc::Sender<String>,
) -> Followed {
    let mut at = first;
    let mut sse = crate::util::sse::Sse::open(&urls[at], &start_run(), None).await;
    let mut f = Followed {
        task: String::new(),
        ids: Vec::new(),
        state: String::new(),
        reconnects: 0,
    };
    loop {
        match sse.next().await {
            Some((id, v)) => {
                let r = &v["result"];
                assert!(v.get("error").is_none(), "{v}");
                if f.task.is_empty() {
                    f.task = r["id"]
                        .as_str()
                        .or(r["taskId"].as_str())
                        .unwrap()
                        .to_owned();
                    started.send(f.task.clone()).await.unwrap();
                }
                f.ids.extend(id);
                let state = r["status"]["state"].as_str().unwrap_or_default();
                if !state.is_empty() {
                    f.state = state.to_owned();
                }
                if r["final"] == true || ["completed", "failed", "canceled"].contains(&state) {
                    return f;
                }
            }
            None => {
                // The replica went away: another one, from the last event seen.
                assert!(f.reconnects < 5, "{} reconnected too often", f.task);
                f.reconnects += 1;
                at = (at + 1) % urls.len();
                let body =
                    crate::util::rpc("tasks/resubscribe", serde_json::json!({ "id": f.task }));
                tokio::time::sleep(Duration::from_millis(200)).await;
                sse = crate::util::sse::Sse::open(&urls[at], &body, f.ids.last().copied()).await;
            }
        }
    }
}

/// Three replicas, 30 runs started across them round-robin, one replica SIGKILLed while
/// every run's slow steps are with the agents: every run completes, every client's
/// stream — reconnected to another replica with `Last-Event-ID` where it broke — is
/// gapless, and each agent saw each run's step once.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_killed_replicas_runs_are_taken_over_and_finish_once() {
    let pg = Cluster::shared();
    let mut fleet = Fleet::start(
        &pg,
        "replicas-takeover",
        3,
        Duration::from_secs(3),
        "1500ms",
    )
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let mut clients = tokio::task::JoinSet::new();
    for i in 0..30 {
        clients.spawn(follow(fleet.urls.clone(), i % 3, tx.clone()));
    }
    for _ in 0..30 {
        rx.recv().await.unwrap();
    }
    // Every run is started; its slow steps are on their way to the agents.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    fleet.signal(0, "KILL");
    fleet.replicas[0].take().unwrap().wait().await.unwrap();
    let mut followed = Vec::new();
    let all = async {
        while let Some(f) = clients.join_next().await {
            followed.push(f.unwrap());
        }
    };
    if tokio::time::timeout(Duration::from_secs(90), all)
        .await
        .is_err()
    {
        panic!(
            "not every run ended; replica 1 said:\n{}\nreplica 2 said:\n{}",
            fleet.log(1),
            fleet.log(2)
        );
    }
    let moved = followed.iter().filter(|f| f.reconnects > 0).count();
    assert_eq!(moved, 10, "the killed replica's clients reconnected");
    for f in &followed {
        if f.state != "completed" {
            let task = result(
                &fleet.urls[1],
                "tasks/get",
                serde_json::json!({ "id": f.task }),
            )
            .await;
            panic!(
                "{} ended {}: {}\nevents {:?}\nreplica 1 said:\n{}\nreplica 2 said:\n{}",
                f.task,
                f.state,
                serde_json::to_string_pretty(&task).unwrap(),
                f.ids,
                fleet.log(1),
                fleet.log(2)
            );
        }
        let expected: Vec<u64> = (1..=*f.ids.last().unwrap()).collect();
        assert_eq!(f.ids, expected, "{}: gapless, nothing twice", f.task);
    }
    let counts = fleet.counts();
    assert_eq!(counts.len(), 90, "{counts:?}");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
}

/// Sends `params` as `method` to `url`; the JSON-RPC result (panics on an error).
async fn result(url: &str, method: &str, params: serde_json::Value) -> serde_json::Value {
    let v = crate::util::sse::call(url, &crate::util::rpc(method, params)).await;
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

/// Starts `workflow` on `url` without waiting (`blocking: false`); the task's id.
async fn start_on(url: &str, workflow: &str) -> String {
    let mut p = crate::util::text_params("go");
    p["metadata"] = serde_json::json!({ "workflow": workflow });
    p["configuration"] = serde_json::json!({ "blocking": false });
    let task = result(url, "message/send", p).await;
    task["id"].as_str().unwrap().to_owned()
}

/// Polls `tasks/get` on `url` until task `id` is in `state` (bounded); the task.
async fn until_state(url: &str, id: &str, state: &str, within: Duration) -> serde_json::Value {
    crate::util::eventually(&format!("{id} becoming {state}"), within, || async {
        let task = result(url, "tasks/get", serde_json::json!({ "id": id })).await;
        if task["status"]["state"] == state {
            Ok(task)
        } else {
            Err(task["status"].clone())
        }
    })
    .await
}

/// A run owned by replica B, reached only through replica A: a subscription on A gets
/// B's events live, an approval sent to A reaches B's run, and a cancel sent to A
/// cancels B's run and its downstream tasks.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_run_on_one_replica_is_followed_answered_and_canceled_through_another() {
    let pg = Cluster::shared();
    let fleet = Fleet::start(&pg, "replicas-through", 2, Duration::from_secs(2), "10s").await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);

    // An approval run on B, waiting; followed and answered on A.
    let id = start_on(b, "approved").await;
    until_state(b, &id, "input-required", Duration::from_secs(10)).await;
    let body = crate::util::rpc("tasks/resubscribe", serde_json::json!({ "id": id }));
    let mut sse = crate::util::sse::Sse::open(a, &body, None).await;
    let (_, first) = sse.next().await.unwrap();
    assert_eq!(
        first["result"]["status"]["state"], "input-required",
        "{first}"
    );
    let mut yes = crate::util::text_params("yes");
    yes["message"]["taskId"] = id.clone().into();
    let answered = result(a, "message/send", yes).await;
    assert_eq!(answered["status"]["state"], "completed", "{answered}");
    // The subscription on A saw B's run go on and end, live, in order.
    let mut states = Vec::new();
    let mut last = 0;
    while let Some((n, v)) = sse.next().await {
        let n = n.expect("numbered");
        assert!(n > last, "in order");
        last = n;
        if let Some(s) = v["result"]["status"]["state"].as_str() {
            states.push(s.to_owned());
        }
    }
    assert!(states.contains(&"working".to_owned()), "{states:?}");
    assert_eq!(
        states.last().map(String::as_str),
        Some("completed"),
        "{states:?}"
    );
    assert_eq!(fleet.seen.lock().unwrap()[&format!("alpha:a {id}")], 1);

    // A slow run on B, canceled through A: B cancels it and its downstream tasks.
    let id = start_on(b, "replicated").await;
    let task = loop {
        let task = result(b, "tasks/get", serde_json::json!({ "id": id })).await;
        let steps = task["metadata"]["run"]["steps"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let known = steps
            .iter()
            .filter(|s| s["downstreamTaskId"].is_string())
            .count();
        if known == 2 {
            break task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let canceled = result(a, "tasks/cancel", serde_json::json!({ "id": id })).await;
    assert_eq!(canceled["status"]["state"], "canceled", "{canceled}");
    for (step, agent) in [("a", &fleet.agents[0]), ("b", &fleet.agents[1])] {
        let downstream = task["metadata"]["run"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == step)
            .unwrap()["downstreamTaskId"]
            .as_str()
            .unwrap()
            .to_owned();
        until_state(agent, &downstream, "canceled", Duration::from_secs(5)).await;
    }
}

/// A push config set through a replica that does not run the task is delivered by the
/// one that does: the state changes after it reach the webhook, the last one the end.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_push_config_set_through_another_replica_is_delivered_by_the_runs_owner() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<serde_json::Value>(64);
    let hook = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(body).await;
                "ok"
            }
        }),
    );
    let hook_url = format!("{}/hook", crate::util::serve_router(hook).await);
    let pg = Cluster::shared();
    let fleet = Fleet::start(&pg, "replicas-pushed", 2, Duration::from_millis(200), "10s").await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);

    // An approval run on A, waiting; its push config set on B, answered on B.
    let id = start_on(a, "approved").await;
    until_state(a, &id, "input-required", Duration::from_secs(10)).await;
    let set = result(
        b,
        "tasks/pushNotificationConfig/set",
        serde_json::json!({
            "taskId": id,
            "pushNotificationConfig": { "url": hook_url, "token": "pushed-token" },
        }),
    )
    .await;
    assert_eq!(set["taskId"], id.as_str(), "{set}");
    let mut yes = crate::util::text_params("yes");
    yes["message"]["taskId"] = id.clone().into();
    let answered = result(b, "message/send", yes).await;
    assert_eq!(answered["status"]["state"], "completed", "{answered}");

    let mut states = Vec::new();
    while states.last().map(String::as_str) != Some("completed") {
        let body = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no notification in 10 s after {states:?}\nA: {}\nB: {}",
                    fleet.log(0),
                    fleet.log(1)
                )
            })
            .unwrap();
        assert_eq!(body["id"], id.as_str(), "{body}");
        states.push(body["status"]["state"].as_str().unwrap().to_owned());
    }
    assert!(states.contains(&"working".to_owned()), "{states:?}");
}

/// The backends listening for notices (one per replica) in database `db`.
async fn listeners(db: &str) -> Vec<i32> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(db).await.unwrap();
    sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
}

/// Ends the backends `pids` of database `db` (`pg_terminate_backend`): whether each was.
async fn terminate(db: &str, pids: &[i32]) -> Vec<bool> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(db).await.unwrap();
    sqlx::query_scalar("SELECT pg_terminate_backend(p) FROM unnest($1::int[]) AS p")
        .bind(pids)
        .fetch_all(&mut conn)
        .await
        .unwrap()
}

/// Waits (bounded) until `db` has `n` listening backends, none of them in `not`.
async fn until_listening(db: &str, n: usize, not: &[i32]) -> Vec<i32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let now = listeners(db).await;
        if now.len() == n && now.iter().all(|p| !not.contains(p)) {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} replicas listening, none of {not:?}: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A step's move that says nothing in status update `update` (no message; its
/// metadata is the move): (step, state).
fn silent_move(update: &serde_json::Value) -> Option<(String, String)> {
    if update["kind"] != "status-update" || !update["status"]["message"].is_null() {
        return None;
    }
    let meta = &update["metadata"];
    Some((
        meta["step"].as_str()?.to_owned(),
        meta["state"].as_str()?.to_owned(),
    ))
}

/// The moves that say nothing logged for task `id` in database `db`, in order.
async fn silent_moves_logged(db: &str, id: &str) -> Vec<(String, String)> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(db).await.unwrap();
    let events: Vec<String> =
        sqlx::query_scalar("SELECT event FROM task_events WHERE task_id = $1 ORDER BY seq")
            .bind(id)
            .fetch_all(&mut conn)
            .await
            .unwrap();
    // Stored as the StreamResponse that holds each (A2A 1.0's JSON).
    events
        .iter()
        .filter_map(|e| {
            let stored: serde_json::Value = serde_json::from_str(e).unwrap();
            let update = stored.get("statusUpdate")?;
            let meta = &update["metadata"];
            update["status"]["message"].is_null().then_some(())?;
            Some((
                meta["step"].as_str()?.to_owned(),
                meta["state"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// Follows run `id` through `url` with `tasks/resubscribe` to its end; the states it
/// saw, and the steps' moves that say nothing. Every event is numbered, in order, none
/// missing; `after_first` runs once the first event arrived.
async fn follow_through(
    url: &str,
    id: &str,
    after_first: impl std::future::Future<Output = ()>,
) -> (Vec<String>, Vec<(String, String)>) {
    let body = crate::util::rpc("tasks/resubscribe", serde_json::json!({ "id": id }));
    let mut sse = crate::util::sse::Sse::open(url, &body, None).await;
    let mut after_first = Some(after_first);
    let (mut states, mut moves, mut last) = (Vec::new(), Vec::new(), None::<u64>);
    while let Some((n, v)) = tokio::time::timeout(Duration::from_secs(30), sse.next())
        .await
        .expect("an event within 30 s")
    {
        assert!(v.get("error").is_none(), "{v}");
        let n = n.expect("numbered");
        if let Some(last) = last {
            assert_eq!(n, last + 1, "gapless");
        }
        last = Some(n);
        if let Some(s) = v["result"]["status"]["state"].as_str() {
            states.push(s.to_owned());
        }
        moves.extend(silent_move(&v["result"]));
        if let Some(f) = after_first.take() {
            f.await;
        }
    }
    (states, moves)
}

/// Streams of tasks another replica runs are pushed, not polled (issue 39): each
/// replica listens (LISTEN/NOTIFY) and, while it does, reads a followed task's log only
/// when its owner announces events. A run on B followed through A gets every event to
/// the end; with the listening connections killed mid-run, A polls until it listens
/// again and the stream still gets every event; once listening again, the next run
/// followed through A is pushed again.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_stream_through_another_replica_is_pushed_and_outlives_losing_the_notices() {
    let pg = Cluster::shared();
    let name = "replicas-notices";
    let fleet = Fleet::start(&pg, name, 2, Duration::from_millis(1500), "10s").await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);
    let db = pg.url(name);
    let first = until_listening(&db, 2, &[]).await;
    let metrics = crate::util::http()
        .get(format!("{a}metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("a2a_orchestrator_store_listening 1"),
        "{metrics}"
    );

    // Pushed: A reads B's run's log only when B announces events.
    let id = start_on(b, "replicated").await;
    let (states, _) = follow_through(a, &id, async {}).await;
    assert_eq!(
        states.last().map(String::as_str),
        Some("completed"),
        "{states:?}"
    );

    // The listening connections killed while A follows a run: A polls meanwhile.
    let id = start_on(b, "replicated").await;
    let kill = async {
        assert_eq!(terminate(&db, &first).await, [true, true]);
    };
    let (states, _) = follow_through(a, &id, kill).await;
    assert_eq!(
        states.last().map(String::as_str),
        Some("completed"),
        "{states:?}"
    );
    assert!(states.contains(&"working".to_owned()), "{states:?}");

    // Listening again (new connections), and pushed again.
    until_listening(&db, 2, &first).await;
    let id = start_on(b, "replicated").await;
    let (states, _) = follow_through(a, &id, async {}).await;
    assert_eq!(
        states.last().map(String::as_str),
        Some("completed"),
        "{states:?}"
    );
    let counts = fleet.counts();
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
}

/// A step's move that says nothing (its start or end: no message, no new state) is
/// logged only once someone may read it (issue 39): a run nobody follows logs none of
/// them; a run followed through another replica logs those made once the follow is
/// announced (its join's, the slow steps', seconds later), and the stream gets them; a
/// run whose replica stopped hearing notices meanwhile (a follow may have gone unheard)
/// logs those made after.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn moves_that_say_nothing_are_logged_once_someone_may_read_them() {
    let pg = Cluster::shared();
    let name = "replicas-follows";
    let fleet = Fleet::start(&pg, name, 2, Duration::from_millis(1500), "10s").await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);
    let db = pg.url(name);
    let listening = until_listening(&db, 2, &[]).await;
    let join_done = ("join".to_owned(), "completed".to_owned());

    // Followed through A: B hears of it, and logs the moves from then on.
    let id = start_on(b, "replicated").await;
    let (states, moves) = follow_through(a, &id, async {}).await;
    assert_eq!(states.last().map(String::as_str), Some("completed"));
    assert!(moves.contains(&join_done), "the stream got {moves:?}");
    assert!(
        silent_moves_logged(&db, &id).await.contains(&join_done),
        "logged for {id}"
    );

    // Nobody follows: the task's log has its states and artifacts, no silent moves.
    // (Not the first run: B takes every task it holds as followed when it begins to
    // listen, since a follow may have gone unheard; by now it has long listened.)
    let id = start_on(b, "replicated").await;
    until_state(b, &id, "completed", Duration::from_secs(30)).await;
    assert_eq!(
        silent_moves_logged(&db, &id).await,
        [],
        "nobody followed {id}"
    );

    // B stops hearing notices while its run goes on, followed by nobody: a follow
    // could have gone unheard, so B logs the moves from then on.
    let id = start_on(b, "replicated").await;
    assert_eq!(terminate(&db, &listening).await, [true, true]);
    until_state(b, &id, "completed", Duration::from_secs(30)).await;
    assert!(
        silent_moves_logged(&db, &id).await.contains(&join_done),
        "logged for {id} after the notices stopped"
    );
    let counts = fleet.counts();
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
}

/// Replica B frozen (SIGSTOP) past its lease while its runs' slow steps are with the
/// agents: A takes the runs over and finishes them; B, thawed (SIGCONT), sends nothing
/// for them and writes nothing — it hears it lost them.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_replica_frozen_past_its_lease_acts_for_nothing_it_lost() {
    let pg = Cluster::shared();
    let fleet = Fleet::start(&pg, "replicas-frozen", 2, Duration::from_secs(2), "1500ms").await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(start_on(b, "replicated").await);
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    fleet.signal(1, "STOP");
    let mut done = Vec::new();
    for id in &ids {
        done.push(until_state(a, id, "completed", Duration::from_secs(30)).await);
    }
    let calls_before = fleet.calls.lock().unwrap().clone();
    fleet.signal(1, "CONT");
    // Long enough for B's agents' answers, its next renewal (each 500 ms) and whatever
    // it would do.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for (id, before) in ids.iter().zip(&done) {
        let after = result(a, "tasks/get", serde_json::json!({ "id": id })).await;
        assert_eq!(&after, before, "{id}: nothing written after the takeover");
    }
    let sends = |calls: &std::collections::HashMap<String, u32>| {
        calls
            .iter()
            .filter(|(k, _)| {
                [
                    "message/stream",
                    "message/send",
                    "SendStreamingMessage",
                    "SendMessage",
                ]
                .iter()
                .any(|m| k.ends_with(&format!(":{m}")))
            })
            .map(|(k, n)| (k.clone(), *n))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        sends(&calls_before).values().sum::<u32>(),
        18,
        "each run's three steps sent once: {calls_before:?}"
    );
    assert_eq!(
        sends(&fleet.calls.lock().unwrap()),
        sends(&calls_before),
        "B sent nothing after it woke"
    );
    let counts = fleet.counts();
    assert_eq!(counts.len(), 18, "{counts:?}");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
    let log = fleet.log(1);
    assert!(
        log.contains("another server took this task over")
            || log.contains("run by another process"),
        "B heard it lost its runs:\n{log}"
    );
}

/// A replica stopped with SIGTERM hands its runs over at once: with a lease of 30 s,
/// the other replica finishes them within seconds.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_replica_stopped_gracefully_hands_its_runs_over_at_once() {
    let pg = Cluster::shared();
    let mut fleet = Fleet::start(&pg, "replicas-handover", 2, Duration::from_secs(2), "30s").await;
    let (a, b) = (fleet.urls[0].clone(), fleet.urls[1].clone());
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(start_on(&b, "replicated").await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    fleet.signal(1, "TERM");
    let stopped = fleet.replicas[1].take().unwrap().wait().await.unwrap();
    assert!(stopped.success(), "{stopped:?}\n{}", fleet.log(1));
    for id in &ids {
        until_state(&a, id, "completed", Duration::from_secs(10)).await;
    }
    let counts = fleet.counts();
    assert_eq!(counts.len(), 12, "{counts:?}");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
}

/// A lease is for a store replicas share: asked of any other, `serve` says so and
/// starts nothing; and `[store] lease` in a file is read like `--lease`.
#[tokio::test]
async fn a_lease_is_refused_for_a_store_of_one_process() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("replicas-lease");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("orchestrator.toml"),
        "[store]\nurl = \"memory\"\nlease = \"5s\"\n",
    )
    .unwrap();
    let serve = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--insecure-open"])
            .args(args)
            .current_dir(crate::util::ROOT)
            .output()
            .unwrap()
    };
    let config = dir.join("orchestrator.toml").display().to_string();
    for out in [
        serve(&["--store", "memory", "--lease", "5s"]),
        serve(&["--config", &config]),
    ] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("lease") && stderr.contains("postgres://"),
            "{stderr}"
        );
    }
    let out = serve(&["--store", "memory", "--lease", "100ms"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--lease: at least 300ms"), "{stderr}");
}

/// Issue 39: a run's header and end are queued, not waited for, and vouched for by the
/// next write of their run or task. The database goes away under both: the batch
/// fails, the writes are kept, and once it is back the next write of each run (a
/// step's checkpoint; the task's last commit) stores them in its own transaction —
/// read from another connection, not through the store. A header queued as its task is
/// first stored is stored with it.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn queued_writes_lost_to_an_outage_are_stored_with_their_runs_next_write() {
    use orchestrator_core::engine::RunStoreError;
    let pg = Cluster::start("queued-outage");
    let url = pg.database("queued-outage").await;
    let store: Arc<dyn Store> = StoreSpec::parse(&url).unwrap().open().await.unwrap();
    // `ends`: its task and run stored; `starts`: its task only.
    let mut ends = working("ends", TaskState::Working);
    let starts = working("starts", TaskState::Working);
    for task in [&ends, &starts] {
        store
            .commit(task, &[(1, Arc::new(StreamEvent::Task(task.task.clone())))])
            .await
            .unwrap();
    }
    store.create_run(&header("ends")).await.unwrap();
    // A run starts as its task is first stored: its header, queued first, goes in the
    // task's batch, and carries the fencing number the task's row is created with.
    let races = working("races", TaskState::Submitted);
    store.create_run(&header("races")).await.unwrap();
    store
        .commit(
            &races,
            &[(1, Arc::new(StreamEvent::Task(races.task.clone())))],
        )
        .await
        .unwrap();
    store.flush().await.unwrap();

    pg.stop_server();
    // Both resolve at once, queued.
    let end = completed();
    store.finish_run("ends", &end).await.unwrap();
    store.create_run(&header("starts")).await.unwrap();
    // The next waited write goes in the same batch, or after them: it fails, and so
    // did they.
    let sent = first_message();
    let failed = store.save_unit("starts", "first", None, &sent).await;
    assert!(
        matches!(failed, Err(RunStoreError::Backend(_))),
        "{failed:?}"
    );
    pg.restart_server();

    // What waits for a write tries it again until the database is back, as the journal
    // and the task's actor do.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while let Err(e) = store.save_unit("starts", "first", None, &sent).await {
        assert!(tokio::time::Instant::now() < deadline, "{e}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    ends.status = Some(TaskStatus::new(TaskState::Completed));
    let last = [(2, status(&ends))];
    while let Err(e) = store.commit(&ends, &last).await {
        assert!(tokio::time::Instant::now() < deadline, "{e}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let runs: Vec<(String, bool, bool)> =
        sqlx::query_as("SELECT id, header IS NOT NULL, run_end IS NOT NULL FROM runs ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(
        runs,
        [
            ("ends".to_owned(), true, true),
            ("races".to_owned(), true, false),
            ("starts".to_owned(), true, false)
        ],
        "every header and end is stored: those lost to the outage with the next writes"
    );
    let units: i64 = sqlx::query_scalar("SELECT count(*) FROM run_units WHERE run_id = 'starts'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(units, 1);
}

/// A queued write lost to an outage whose run and task write nothing more (a quiet
/// run, a replica's last writes) is not left for the next stop's flush: once the
/// database is back, the writer stores it on its own — read from another connection,
/// with no write made through the store after the outage.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_queued_write_lost_to_an_outage_is_stored_once_the_database_is_back() {
    let pg = Cluster::start("quiet-outage");
    let url = pg.database("quiet-outage").await;
    let store: Arc<dyn Store> = StoreSpec::parse(&url).unwrap().open().await.unwrap();
    let quiet = working("quiet", TaskState::Working);
    store
        .commit(
            &quiet,
            &[(1, Arc::new(StreamEvent::Task(quiet.task.clone())))],
        )
        .await
        .unwrap();
    store.create_run(&header("quiet")).await.unwrap();
    store.flush().await.unwrap();

    pg.stop_server();
    let end = completed();
    // Resolves at once, queued. A flush returns once it is committed or has failed:
    // with the database away, it has failed, and is kept.
    store.finish_run("quiet", &end).await.unwrap();
    let _ = store.flush().await;
    pg.restart_server();

    use sqlx::Connection;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        // The server may still be starting: a failed connection is tried again.
        if let Ok(mut conn) = sqlx::PgConnection::connect(&url).await {
            let ended: Option<bool> =
                sqlx::query_scalar("SELECT run_end IS NOT NULL FROM runs WHERE id = 'quiet'")
                    .fetch_optional(&mut conn)
                    .await
                    .unwrap();
            if ended == Some(true) {
                break;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run's end, queued in the outage, was never stored"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A write PostgreSQL refuses for its data (text cannot hold NUL) fails at once as
/// refused, not as an outage that what waits for it would wait out for ever; the
/// other writes of its batch are stored.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_write_the_database_refuses_for_its_data_fails_at_once() {
    use orchestrator_core::engine::RunStoreError;
    let pg = Cluster::shared();
    let url = pg.database("refused-data").await;
    let store: Arc<dyn Store> = StoreSpec::parse(&url).unwrap().open().await.unwrap();
    let good = working("good", TaskState::Working);
    let mut bad = working("bad", TaskState::Working);
    bad.context_id = "c\u{0}".into();
    let log = |t: &StoredTask| [(1, Arc::new(StreamEvent::Task(t.task.clone())))];
    let (good_log, bad_log) = (log(&good), log(&bad));
    let (stored, refused) = tokio::time::timeout(
        Duration::from_secs(10),
        futures::future::join(store.commit(&good, &good_log), store.commit(&bad, &bad_log)),
    )
    .await
    .expect("a refused write is answered, not waited on");
    stored.unwrap();
    assert!(
        matches!(refused, Err(StoreError::Refused(_))),
        "{refused:?}"
    );
    assert!(!refused.unwrap_err().is_transient());
    assert!(store.get(&TaskId::new(&good.id)).await.unwrap().is_some());
    assert!(store.get(&TaskId::new(&bad.id)).await.unwrap().is_none());

    let sent = first_message();
    let refused = store.save_unit("r\u{0}", "first", None, &sent).await;
    assert!(
        matches!(refused, Err(RunStoreError::Refused(_))),
        "{refused:?}"
    );
    assert!(!refused.unwrap_err().is_transient());
    // The store goes on: the database was never down.
    store.save_unit("good", "first", None, &sent).await.unwrap();
}

/// Issue 33: PostgreSQL stopped for longer than the replicas' leases (600 ms) while
/// runs are with their agents, on one replica and on three: every run completes, none
/// is canceled, no cancel reaches an agent, and each agent saw each run's step once.
/// What waits for the store meanwhile (a task's events, a run's checkpoints) tries
/// again until it is back.
async fn runs_outlive_a_database_outage(replicas: usize, runs: usize, name: &str) {
    let pg = Cluster::start(name);
    let fleet = Fleet::start(&pg, name, replicas, Duration::from_millis(800), "600ms").await;
    let mut ids = Vec::new();
    for i in 0..runs {
        let url = &fleet.urls[i % replicas];
        ids.push((url.clone(), start_on(url, "replicated").await));
    }
    // Every run's slow steps are with the agents: the database goes away.
    tokio::time::sleep(Duration::from_millis(300)).await;
    pg.stop_server();
    // Meanwhile a request fails at once, saying why, rather than hanging.
    let started = std::time::Instant::now();
    let v = crate::util::sse::call(
        &fleet.urls[0],
        &crate::util::rpc("tasks/get", serde_json::json!({ "id": ids[0].1 })),
    )
    .await;
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("unavailable") || v.get("result").is_some(),
        "a clear error while the store is down: {v}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "answered within the pool's timeout"
    );
    // Readiness says so, at once.
    let started = std::time::Instant::now();
    let r = crate::util::http()
        .get(format!("{}readyz", fleet.urls[0]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["checks"]["store"]["ok"], false, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "{body}");
    // Down past every lease, and past the agents' answers.
    tokio::time::sleep(Duration::from_secs(1)).await;
    pg.restart_server();
    for (url, id) in &ids {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
        loop {
            let v = crate::util::sse::call(
                url,
                &crate::util::rpc("tasks/get", serde_json::json!({ "id": id })),
            )
            .await;
            let state = v["result"]["status"]["state"].as_str().unwrap_or_default();
            if state == "completed" {
                break;
            }
            assert!(
                !["canceled", "failed"].contains(&state),
                "{id} ended {state}: {v}\n{}",
                (0..replicas)
                    .map(|i| fleet.log(i))
                    .collect::<Vec<_>>()
                    .join("\n---\n")
            );
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id} did not complete: {v}\n{}",
                (0..replicas)
                    .map(|i| fleet.log(i))
                    .collect::<Vec<_>>()
                    .join("\n---\n")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let counts = fleet.counts();
    assert_eq!(counts.len(), runs * 3, "{counts:?}");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
    let calls = fleet.calls.lock().unwrap();
    let cancels: Vec<_> = calls
        .iter()
        .filter(|(k, _)| k.ends_with("tasks/cancel") || k.ends_with("CancelTask"))
        .collect();
    assert!(
        cancels.is_empty(),
        "no cancel reached an agent: {cancels:?}"
    );
}

#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn runs_on_one_replica_outlive_a_database_outage() {
    runs_outlive_a_database_outage(1, 10, "outage-one").await;
}

#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn runs_on_three_replicas_outlive_a_database_outage() {
    runs_outlive_a_database_outage(3, 30, "outage-three").await;
}

/// Issue 81: a replica started while its database is down waits for it, with the port
/// answering the probes (`/healthz` 200, `/readyz` 503 saying why), and serves once the
/// database is back, instead of exiting.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_replica_started_while_its_database_is_down_waits_for_it() {
    use tokio::io::AsyncBufReadExt;
    let pg = Cluster::start("waits-for-db");
    let url = pg.database("waits").await;
    pg.stop_server();
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args([
            "serve",
            "--insecure-open",
            "--listen",
            "127.0.0.1:0",
            "--store",
            &url,
        ])
        .current_dir(crate::util::ROOT)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut said = tokio::io::BufReader::new(serve.stderr.take().unwrap()).lines();
    let waiting = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = said
                .next_line()
                .await
                .unwrap()
                .expect("serve waits, not exits");
            if line.contains("trying again") {
                return line;
            }
        }
    })
    .await
    .expect("serve says it waits for the database");
    let base = waiting
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap()
        .trim_end_matches([',', '/'])
        .to_owned();
    let get = |path: &str| {
        let url = format!("http://{base}{path}");
        async move {
            let r = crate::util::http().get(url).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    assert_eq!(get("/healthz").await.0, 200);
    let (status, body) = get("/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("store") && body.contains("cannot connect"),
        "{body}"
    );
    assert!(serve.try_wait().unwrap().is_none(), "still running");

    pg.restart_server();
    let mut out = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            let line = out.next_line().await.unwrap().expect("serve serves");
            if line.contains("listening on") {
                assert!(line.contains(&base), "the same port: {line}");
                return;
            }
        }
    })
    .await
    .expect("serve starts once the database is back");
    let (status, body) = get("/readyz").await;
    assert_eq!(status, 200, "{body}");
}

/// How a test's load balancer picks a backend for each new connection.
#[derive(Clone, Copy, PartialEq)]
enum Route {
    /// The first that takes it, in order (an active-passive balancer).
    Failover,
    /// Each in turn, the next one along if it does not take it.
    RoundRobin,
}

/// A load balancer in front of `backends`: its URL, and how many connections each
/// backend took.
async fn balancer(
    backends: &[String],
    route: Route,
) -> (String, Arc<Vec<std::sync::atomic::AtomicUsize>>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let addrs: Vec<String> = backends
        .iter()
        .map(|u| {
            u.trim_start_matches("http://")
                .trim_end_matches('/')
                .to_owned()
        })
        .collect();
    let taken: Arc<Vec<AtomicUsize>> =
        Arc::new(addrs.iter().map(|_| AtomicUsize::new(0)).collect());
    let counts = taken.clone();
    tokio::spawn(async move {
        for turn in 0.. {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let first = match route {
                Route::Failover => 0,
                Route::RoundRobin => turn % addrs.len(),
            };
            let addrs = addrs.clone();
            let taken = taken.clone();
            tokio::spawn(async move {
                for i in (0..addrs.len()).map(|k| (first + k) % addrs.len()) {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&addrs[i]).await {
                        taken[i].fetch_add(1, Ordering::Relaxed);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    (url, counts)
}

/// Two ports free now, for replicas behind a balancer, and their URLs.
fn two_ports() -> (Vec<u16>, Vec<String>) {
    let ports: Vec<u16> = (0..2)
        .map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        })
        .collect();
    let urls = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}/"))
        .collect();
    (ports, urls)
}

/// What `a2a-orchestrator ARGS` printed; it must succeed.
async fn cli(args: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(args)
        .current_dir(crate::util::ROOT)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// Issue 75: every replica shows a run the same while it runs, whichever holds it. Two
/// replicas behind a round-robin balancer; a run with two slow steps started on A. On B
/// itself, GetTask (v0.3 and v1.0), ListTasks (v1.0, as the web view reads it) and
/// a subscription's first snapshot carry the run's detail with its steps working at
/// their agents; through the balancer (each replica in turn), `runs list --state
/// working` lists it and `runs show` shows the steps working.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn every_replica_shows_a_run_it_does_not_hold_while_it_runs() {
    let pg = Cluster::shared();
    let (ports, backends) = two_ports();
    let (through, taken) = balancer(&backends, Route::RoundRobin).await;
    let fleet = Fleet::start_behind(
        &pg,
        "replicas-show",
        2,
        Duration::from_secs(4),
        "10s",
        Some((&through, &ports)),
    )
    .await;
    let (a, b) = (&fleet.urls[0], &fleet.urls[1]);
    let id = start_on(a, "replicated").await;
    // The detail's two slow steps working at their agents, each with its task there.
    let working = |task: &serde_json::Value| {
        let steps = task["metadata"]["run"]["steps"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        ["a", "b"].iter().all(|step| {
            steps.iter().any(|s| {
                s["step"] == *step && s["state"] == "working" && s["downstreamTaskId"].is_string()
            })
        })
    };
    // On A (which holds it) first, then on B.
    for url in [a, b] {
        crate::util::eventually(
            "the run's slow steps working",
            Duration::from_secs(10),
            || async {
                let task = result(url, "tasks/get", serde_json::json!({ "id": id })).await;
                if working(&task) { Ok(()) } else { Err(task) }
            },
        )
        .await;
    }
    let on_b = result(b, "tasks/get", serde_json::json!({ "id": id })).await;
    assert_eq!(on_b["status"]["state"], "working", "{on_b}");
    assert_eq!(on_b["metadata"]["run"]["workflow"], "replicated", "{on_b}");
    // v1.0, as the web view reads it.
    let v1 = |method: &str, params: serde_json::Value| {
        let body = crate::util::rpc(method, params);
        let b = b.clone();
        async move {
            let v = crate::util::http()
                .post(&b)
                .header("A2A-Version", "1.0")
                .json(&body)
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap();
            v["result"].clone()
        }
    };
    let got = v1("GetTask", serde_json::json!({ "id": id })).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING", "{got}");
    assert!(working(&got), "{got}");
    let page = v1("ListTasks", serde_json::json!({ "pageSize": 10 })).await;
    assert!(
        page["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str() && working(t)),
        "{page}"
    );
    // A subscription on B: its first event, the task, with the detail.
    let body = crate::util::rpc("tasks/resubscribe", serde_json::json!({ "id": id }));
    let mut sse = crate::util::sse::Sse::open(b, &body, None).await;
    let (_, first) = sse.next().await.unwrap();
    assert!(working(&first["result"]), "{first}");
    drop(sse);

    // Through the balancer: each replica in turn answers the same.
    for _ in 0..3 {
        let listed = cli(&["runs", "list", "--state", "working", "--url", &through]).await;
        assert!(listed.contains(&id), "runs list --state working: {listed}");
        let shown = cli(&["runs", "show", &id, "--url", &through]).await;
        assert!(shown.contains("working"), "runs show: {shown}");
        for agent in ["alpha", "beta"] {
            assert!(shown.contains(agent), "runs show names {agent}: {shown}");
        }
    }
    let taken: Vec<usize> = taken
        .iter()
        .map(|n| n.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    assert!(
        taken.iter().all(|n| *n > 0),
        "each replica answered some: {taken:?}"
    );
    // The run ends, once, on A.
    until_state(a, &id, "completed", Duration::from_secs(20)).await;
    assert!(
        fleet.counts().iter().all(|(_, n)| *n == 1),
        "{:?}",
        fleet.counts()
    );
}

/// Issue 75: a watcher behind a load balancer outlives the replica it watched
/// through. Replica A, running the run `runs watch` follows, is killed (SIGKILL); B
/// takes the run over at A's lease's end, and the watcher, its stream broken, follows
/// the run again through the balancer (now to B) to its end: exit 0, the result shown,
/// each step executed once.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_watcher_follows_a_run_another_replica_takes_over_after_a_sigkill() {
    let pg = Cluster::shared();
    let (ports, backends) = two_ports();
    let (balancer, _) = balancer(&backends, Route::Failover).await;
    let fleet = Fleet::start_behind(
        &pg,
        "replicas-watch-kill",
        2,
        Duration::from_millis(1500),
        "1s",
        Some((&balancer, &ports)),
    )
    .await;
    let id = start_on(&fleet.urls[0], "replicated").await;
    let said_to = fleet.dir.join("watcher.log");
    let mut watch = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["runs", "watch", &id, "--url", &balancer])
        .current_dir(crate::util::ROOT)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&said_to).unwrap())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The run's slow steps are with the agents, the watcher on A: A dies.
    tokio::time::sleep(Duration::from_millis(500)).await;
    fleet.signal(0, "KILL");
    let ended = tokio::time::timeout(Duration::from_secs(60), watch.wait()).await;
    let said = format!(
        "{}\n--- B ---\n{}",
        std::fs::read_to_string(&said_to).unwrap_or_default(),
        fleet.log(1)
    );
    let Ok(status) = ended else {
        let task = result(&fleet.urls[1], "tasks/get", serde_json::json!({ "id": id })).await;
        panic!(
            "the watcher did not end: {said}\n--- the task on B ---\n{}",
            task["status"]
        );
    };
    let status = status.unwrap();
    assert_eq!(status.code(), Some(0), "{said}");
    assert!(said.contains("following it again"), "{said}");
    assert!(said.contains("workflow completed"), "{said}");
    let counts = fleet.counts();
    assert!(
        counts.iter().all(|(_, n)| *n == 1),
        "each step once: {counts:?}"
    );
}

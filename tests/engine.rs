//! The engine with scripted in-process agents under paused tokio time: overlap, no
//! barriers, max_parallel, fan-out order and min_success, retries and backoff, timeouts
//! that cancel downstream, failure policies, skip propagation, triggers, questions from
//! agents, approvals, cancellation, and template errors at run time.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use orchestrator_core::engine::*;
use orchestrator_core::workflow::{self, AgentTarget, Options};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

/// One move of a scripted agent.
#[derive(Clone)]
enum Move {
    Wait(u64),
    Say(Update),
    Fail(AgentError),
    Hang,
}

use Move::*;

fn started(agent: &str, task: &str) -> Move {
    Say(Update::Started {
        agent: agent.into(),
        task_id: Some(task.into()),
    })
}
fn status(state: RemoteState, message: Option<&str>) -> Move {
    Say(Update::Status {
        state,
        message: message.map(str::to_owned),
    })
}
fn chunk(id: &str, text: &str, append: bool) -> Move {
    Say(Update::Artifact(ArtifactChunk {
        artifact_id: id.into(),
        name: Some(id.into()),
        parts: vec![Content::Text(text.into())],
        append,
        last_chunk: false,
    }))
}
fn done() -> Move {
    status(RemoteState::Completed, None)
}

/// What the scripted agents saw and did, with (virtual) times in ms since the start.
#[derive(Debug, Clone, PartialEq)]
enum Log {
    Send {
        agent: String,
        message_id: String,
        task_id: Option<String>,
        text: Option<String>,
        at: u64,
    },
    End {
        agent: String,
        at: u64,
    },
    Cancel {
        agent: String,
        task_id: String,
        at: u64,
    },
}

type Script = Arc<dyn Fn(&SendRequest, usize) -> Vec<Move> + Send + Sync>;

/// A script from a closure (in argument position, so its lifetimes are inferred right).
fn script(f: impl Fn(&SendRequest, usize) -> Vec<Move> + Send + Sync + 'static) -> Script {
    Arc::new(f)
}

#[derive(Clone)]
struct Scripted {
    /// When set, every tasks/cancel is refused (an agent that cannot cancel).
    refuse_cancel: bool,
    start: Instant,
    scripts: Arc<HashMap<String, Script>>,
    sends: Arc<Mutex<HashMap<String, usize>>>,
    log: Arc<Mutex<Vec<Log>>>,
}

impl Scripted {
    fn new(scripts: Vec<(&str, Script)>) -> Self {
        Self {
            refuse_cancel: false,
            start: Instant::now(),
            scripts: Arc::new(
                scripts
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            ),
            sends: Default::default(),
            log: Default::default(),
        }
    }

    fn ms(&self) -> u64 {
        (Instant::now() - self.start).as_millis() as u64
    }

    fn log(&self) -> Vec<Log> {
        self.log.lock().unwrap().clone()
    }

    /// (start, end) of the first send to `agent`.
    fn span(&self, agent: &str) -> (u64, u64) {
        let log = self.log();
        let start = log.iter().find_map(|l| match l {
            Log::Send { agent: a, at, .. } if a == agent => Some(*at),
            _ => None,
        });
        let end = log.iter().find_map(|l| match l {
            Log::End { agent: a, at } if a == agent => Some(*at),
            _ => None,
        });
        (
            start.unwrap_or_else(|| panic!("{agent} never started")),
            end.unwrap_or_else(|| panic!("{agent} never ended")),
        )
    }

    fn sends(&self, agent: &str) -> Vec<Log> {
        self.log()
            .into_iter()
            .filter(|l| matches!(l, Log::Send { agent: a, .. } if a == agent))
            .collect()
    }

    fn cancels(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .filter_map(|l| match l {
                Log::Cancel { task_id, .. } => Some(task_id),
                _ => None,
            })
            .collect()
    }
}

impl AgentConnector for Scripted {
    fn send(&self, request: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let agent = match &request.target {
            AgentTarget::Named(a) => a.to_string(),
            AgentTarget::Skill(s) => s.clone(),
            AgentTarget::Workflow(w) => w.to_string(),
        };
        let n = {
            let mut sends = self.sends.lock().unwrap();
            let n = sends.entry(agent.clone()).or_default();
            *n += 1;
            *n
        };
        self.log.lock().unwrap().push(Log::Send {
            agent: agent.clone(),
            message_id: request.message_id.clone(),
            task_id: request.task_id.clone(),
            text: request.text.clone(),
            at: self.ms(),
        });
        let script = self
            .scripts
            .get(&agent)
            .unwrap_or_else(|| panic!("no script for {agent}"))
            .clone();
        let moves: VecDeque<Move> = script(&request, n).into();
        let this = self.clone();
        Box::pin(async move {
            let stream = futures::stream::unfold(
                (moves, this, agent),
                |(mut moves, this, agent)| async move {
                    loop {
                        match moves.pop_front()? {
                            Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                            Hang => std::future::pending::<()>().await,
                            Fail(e) => return Some((Err(e), (VecDeque::new(), this, agent))),
                            Say(u) => {
                                let last = matches!(&u, Update::Reply(_))
                                    || matches!(&u, Update::Status { state, .. } if *state != RemoteState::Working);
                                if last {
                                    this.log.lock().unwrap().push(Log::End {
                                        agent: agent.clone(),
                                        at: this.ms(),
                                    });
                                }
                                return Some((Ok(u), (moves, this, agent)));
                            }
                        }
                    }
                },
            );
            Ok(Box::pin(stream) as Updates)
        })
    }

    fn cancel(
        &self,
        _run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        self.log.lock().unwrap().push(Log::Cancel {
            agent: agent.into(),
            task_id: task_id.into(),
            at: self.ms(),
        });
        let refuse = self.refuse_cancel;
        Box::pin(async move {
            if refuse {
                Err(AgentError::new(
                    AgentErrorKind::Refused,
                    "task not cancelable",
                ))
            } else {
                Ok(())
            }
        })
    }
}

/// An agent that works `ms`, sends `text` as an artifact, and completes.
fn works(ms: u64, text: &'static str) -> Script {
    script(move |_, n| {
        vec![
            started("x", &format!("t{n}")),
            Wait(ms),
            chunk("out", text, false),
            done(),
        ]
    })
}

fn load(toml: &str) -> Arc<workflow::Workflow> {
    let (wf, diags) = workflow::load_str("test.toml", toml, Options::default());
    Arc::new(wf.unwrap_or_else(|| panic!("{diags:#?}")))
}

/// Collects every event until the run ends.
async fn collect(mut handle: RunHandle) -> (Vec<RunEvent>, RunState, Option<String>) {
    let mut events = Vec::new();
    while let Some(e) = handle.events.recv().await {
        let end = matches!(&e, RunEvent::Run { state, .. } if state.is_terminal());
        events.push(e);
        if end {
            break;
        }
    }
    let Some(RunEvent::Run { state, message }) = events.last().cloned() else {
        panic!("no end")
    };
    (events, state, message)
}

fn step_state(events: &[RunEvent], step: &str) -> StepState {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            RunEvent::Step {
                step: s,
                item: None,
                state,
                ..
            } if s.as_str() == step && state.is_finished() => Some(*state),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{step} never finished"))
}

fn output(events: &[RunEvent]) -> (Option<String>, Option<Value>) {
    events
        .iter()
        .find_map(|e| match e {
            RunEvent::Output { text, data } => Some((text.clone(), data.clone())),
            _ => None,
        })
        .expect("an output")
}

fn engine(s: &Scripted) -> Engine {
    Engine::new(Arc::new(s.clone()), EngineOptions::default())
}

fn start(e: &Engine, wf: Arc<workflow::Workflow>, inputs: Value) -> RunHandle {
    let Value::Object(inputs) = inputs else {
        panic!()
    };
    e.start(wf, &inputs, "run-1".into()).unwrap()
}

const HEAD: &str = "[workflow]\nid = \"t\"\ndescription = \"test\"\n";

#[tokio::test(start_paused = true)]
async fn independent_steps_overlap_and_no_barrier_holds_a_branch() {
    let wf = load(&format!(
        "{HEAD}[steps.a]\nagent = \"a\"\nmessage = \"a\"\n[steps.b]\nagent = \"b\"\nmessage = \"b\"\n\
         [steps.c]\nagent = \"c\"\nneeds = [\"a\"]\nmessage = \"after {{{{ steps.a.text }}}}\"\n\
         [steps.d]\nagent = \"d\"\nneeds = [\"b\"]\nmessage = \"d\"\n"
    ));
    let s = Scripted::new(vec![
        ("a", works(200, "A")),
        ("b", works(1000, "B")),
        ("c", works(50, "C")),
        ("d", works(50, "D")),
    ]);
    let (events, state, _) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(state, RunState::Completed);
    let (a0, a1) = s.span("a");
    let (b0, b1) = s.span("b");
    let (c0, _) = s.span("c");
    let (d0, _) = s.span("d");
    assert!(
        a0 < b1 && b0 < a1,
        "a and b overlap: a {a0}..{a1}, b {b0}..{b1}"
    );
    assert!(c0 >= a1, "c starts after a ends");
    assert!(
        c0 < b1,
        "c does not wait for the unrelated b (no stage barrier): c at {c0}, b ends {b1}"
    );
    assert!(d0 >= b1);
    let Log::Send { text, .. } = &s.sends("c")[0] else {
        unreachable!()
    };
    assert_eq!(
        text.as_deref(),
        Some("after A"),
        "c's template saw a's assembled text"
    );
    assert_eq!(
        output(&events).0.as_deref(),
        Some("A\n\nB\n\nC\n\nD"),
        "default output: every step's text"
    );
}

#[tokio::test(start_paused = true)]
async fn a_large_step_text_is_named_by_its_artifacts_in_the_default_output() {
    let wf = load(&format!(
        "{HEAD}[steps.small]\nagent = \"s\"\nmessage = \"s\"\n\
         [steps.large]\nagent = \"l\"\nmessage = \"l\"\n\
         [steps.failed]\nagent = \"f\"\nmessage = \"f\"\ncontinue_on_error = true\n"
    ));
    let large = "x".repeat(40 * 1024);
    let s = Scripted::new(vec![
        ("s", works(10, "short")),
        (
            "l",
            script(move |_, _| {
                vec![
                    started("l", "t"),
                    chunk("one", &large, false),
                    chunk("two", &large, false),
                    done(),
                ]
            }),
        ),
        (
            "f",
            script(|_, _| {
                vec![
                    started("f", "t"),
                    chunk("out", "half done", false),
                    status(RemoteState::Failed, Some("broke")),
                ]
            }),
        ),
    ]);
    let (events, state, _) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(
        output(&events).0.as_deref(),
        Some(
            "short\n\n(the output of step `large`, 80 KiB, is in its artifacts large/one, large/two)"
        ),
        "a completed step's text, a large one named, a failed one left out"
    );
}

#[tokio::test(start_paused = true)]
async fn max_parallel_bounds_concurrency() {
    let mut toml = format!("{HEAD}max_parallel = 2\n");
    for i in 0..5 {
        toml.push_str(&format!(
            "[steps.s{i}]\nagent = \"s{i}\"\nmessage = \"x\"\n"
        ));
    }
    let s = Scripted::new(
        (0..5)
            .map(|i| (["s0", "s1", "s2", "s3", "s4"][i], works(100, "x")))
            .collect(),
    );
    let (_, state, _) = collect(start(&engine(&s), load(&toml), json!({}))).await;
    assert_eq!(state, RunState::Completed);
    let spans: Vec<(u64, u64)> = (0..5).map(|i| s.span(&format!("s{i}"))).collect();
    for &(t, _) in &spans {
        let running = spans.iter().filter(|&&(a, b)| a <= t && t < b).count();
        assert!(running <= 2, "at {t} ms, {running} steps ran: {spans:?}");
    }
    assert!(
        spans.iter().any(|&(a, _)| a >= 200),
        "the fifth waited for a slot: {spans:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn fan_out_keeps_item_order_and_honours_min_success() {
    let toml = |min: &str| {
        format!(
            "{HEAD}[input]\nitems = {{ type = \"array\" }}\n[steps.each]\nagent = \"tour\"\nfor_each = \"input.items\"\nmax_parallel = 2\n{min}\
             message = \"{{{{ item }}}} #{{{{ index }}}}\"\n\
             [output]\ntext = \"{{% for r in steps.each.items %}}{{{{ r.state }}}}:{{{{ r.text }}}};{{% endfor %}}\"\n"
        )
    };
    // Item 0 is the slowest; "bad" fails without retry.
    let tour: Script = script(|req, n| {
        let text = req.text.clone().unwrap_or_default();
        if text.starts_with("bad") {
            return vec![
                started("tour", &format!("t{n}")),
                status(RemoteState::Rejected, Some("no")),
            ];
        }
        let delay = if text.starts_with("slow") { 500 } else { 50 };
        vec![
            started("tour", &format!("t{n}")),
            Wait(delay),
            chunk("o", &text, false),
            done(),
        ]
    });
    let s = Scripted::new(vec![("tour", tour.clone())]);
    let items = json!({ "items": ["slow", "fast", "bad", "last"] });
    let (events, state, message) =
        collect(start(&engine(&s), load(&toml("")), items.clone())).await;
    assert_eq!(state, RunState::Failed, "all items are needed by default");
    assert!(
        message
            .unwrap()
            .contains("3 of 4 items completed; 4 needed")
    );
    assert_eq!(step_state(&events, "each"), StepState::Failed);

    let s = Scripted::new(vec![("tour", tour)]);
    let (events, state, _) =
        collect(start(&engine(&s), load(&toml("min_success = 3\n")), items)).await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(
        output(&events).0.as_deref(),
        Some("completed:slow #0;completed:fast #1;rejected:;completed:last #3;"),
        "results in item order, not completion order"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_back_off_and_stop_at_max_attempts() {
    let wf = load(&format!(
        "{HEAD}[steps.flaky]\nagent = \"flaky\"\nmessage = \"go\"\nretry = {{ max_attempts = 3, initial = \"1s\", max = \"10s\" }}\n\
         [steps.refused]\nagent = \"refused\"\nmessage = \"go\"\nretry = {{ max_attempts = 3 }}\ncontinue_on_error = true\n"
    ));
    let flaky: Script = script(|_, n| {
        if n < 3 {
            vec![
                started("flaky", &format!("t{n}")),
                status(RemoteState::Failed, Some("boom")),
            ]
        } else {
            vec![started("flaky", "t3"), chunk("o", "finally", false), done()]
        }
    });
    let refused: Script = script(|_, n| {
        vec![
            started("refused", &format!("r{n}")),
            status(RemoteState::Rejected, None),
        ]
    });
    let s = Scripted::new(vec![("flaky", flaky), ("refused", refused)]);
    let (events, state, _) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(state, RunState::Completed);
    let sends = s.sends("flaky");
    assert_eq!(sends.len(), 3);
    let times: Vec<u64> = sends
        .iter()
        .map(|l| match l {
            Log::Send { at, .. } => *at,
            _ => 0,
        })
        .collect();
    let ids: Vec<String> = sends
        .iter()
        .map(|l| match l {
            Log::Send { message_id, .. } => message_id.clone(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(
        ids,
        [
            "run-1:flaky:-:1:0",
            "run-1:flaky:-:2:0",
            "run-1:flaky:-:3:0"
        ],
        "one deterministic id per attempt"
    );
    let (g1, g2) = (times[1] - times[0], times[2] - times[1]);
    // Jitter adds up to a fifth; the timer rounds a deadline up to the millisecond.
    assert!(
        (1000..=1200).contains(&g1),
        "first backoff ~1s (+ jitter): {g1}"
    );
    assert!((2000..=2400).contains(&g2), "then doubled: {g2}");
    assert_eq!(
        s.sends("refused").len(),
        1,
        "a rejected task is never retried"
    );
    assert_eq!(step_state(&events, "refused"), StepState::Rejected);
}

#[tokio::test(start_paused = true)]
async fn an_attempt_timeout_cancels_the_downstream_task() {
    let wf = load(&format!(
        "{HEAD}[steps.slow]\nagent = \"slow\"\nmessage = \"go\"\ntimeout = \"1s\"\n"
    ));
    let s = Scripted::new(vec![(
        "slow",
        script(|_, _| vec![started("slow", "T-1"), Hang]),
    )]);
    let (_, state, message) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(state, RunState::Failed);
    let message = message.unwrap();
    assert!(
        message.contains("step `slow` (agent slow) failed: the attempt timed out after 1s"),
        "{message}"
    );
    assert_eq!(s.cancels(), ["T-1"], "the abandoned task got tasks/cancel");
}

/// A step's `deadline` ends it, retries or not: the downstream task is canceled and the
/// step fails naming the deadline (one timer serves the attempt's timeout and the
/// deadline; the deadline must still be told apart).
#[tokio::test(start_paused = true)]
async fn a_steps_deadline_ends_it_and_wins_a_tie_with_its_timeout() {
    for (limits, attempts) in [
        ("deadline = \"2s\"\nretry = { max_attempts = 3 }\n", 1),
        // The same instant: a retry would end at once, so the deadline is the cause.
        (
            "timeout = \"2s\"\ndeadline = \"2s\"\nretry = { max_attempts = 3 }\n",
            1,
        ),
        // The timeout first: retried until the deadline comes.
        (
            "timeout = \"1s\"\ndeadline = \"5s\"\nretry = { max_attempts = 3, initial = \"100ms\", max = \"100ms\" }\n",
            3,
        ),
    ] {
        let wf = load(&format!(
            "{HEAD}[steps.slow]\nagent = \"slow\"\nmessage = \"go\"\n{limits}"
        ));
        let s = Scripted::new(vec![(
            "slow",
            script(|_, _| vec![started("slow", "T-1"), Hang]),
        )]);
        let (events, state, message) = collect(start(&engine(&s), wf, json!({}))).await;
        assert_eq!(state, RunState::Failed, "{limits}");
        let message = message.unwrap();
        if attempts == 1 {
            assert!(
                message.contains("the step's deadline of 2s passed"),
                "{limits}: {message}"
            );
        } else {
            assert!(
                message.contains("the attempt timed out after 1s (after 3 attempts)"),
                "{limits}: {message}"
            );
        }
        let tried = events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Step { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .max();
        assert_eq!(tried, Some(attempts), "{limits}: attempts made");
        assert_eq!(
            s.cancels().len(),
            attempts as usize,
            "{limits}: each abandoned task canceled"
        );
    }
}

fn policy_workflow(policy: &str) -> Arc<workflow::Workflow> {
    load(&format!(
        "[workflow]\nid = \"t\"\ndescription = \"d\"\non_failure = \"{policy}\"\n\
         [steps.bad]\nagent = \"bad\"\nmessage = \"x\"\n\
         [steps.slow]\nagent = \"slow\"\nmessage = \"x\"\n\
         [steps.after_bad]\nagent = \"after\"\nneeds = [\"bad\"]\nmessage = \"x\"\n\
         [steps.after_slow]\nagent = \"after\"\nneeds = [\"slow\"]\nmessage = \"x\"\n\
         [steps.report]\nagent = \"report\"\nneeds = [\"after_bad\", \"after_slow\"]\ntrigger = \"always\"\nmessage = \"{{{{ steps.bad.state }}}}\"\n"
    ))
}

fn policy_agents() -> Scripted {
    Scripted::new(vec![
        (
            "bad",
            script(|_, _| {
                vec![
                    started("bad", "B"),
                    Wait(100),
                    Fail(AgentError::new(AgentErrorKind::Refused, "invalid request")),
                ]
            }),
        ),
        (
            "slow",
            script(|_, _| {
                vec![
                    started("slow", "S"),
                    Wait(500),
                    chunk("o", "slow done", false),
                    done(),
                ]
            }),
        ),
        ("after", works(10, "after")),
        ("report", works(10, "reported")),
    ])
}

#[tokio::test(start_paused = true)]
async fn failure_policy_continue_runs_independent_branches() {
    let s = policy_agents();
    let (events, state, message) =
        collect(start(&engine(&s), policy_workflow("continue"), json!({}))).await;
    assert_eq!(state, RunState::Failed);
    assert!(
        message
            .unwrap()
            .starts_with("step `bad` (agent bad) failed: invalid request")
    );
    assert_eq!(step_state(&events, "after_bad"), StepState::UpstreamFailed);
    assert_eq!(
        step_state(&events, "after_slow"),
        StepState::Completed,
        "the independent branch went on"
    );
    assert_eq!(
        step_state(&events, "report"),
        StepState::Completed,
        "always runs"
    );
    let Log::Send { text, .. } = &s.sends("report")[0] else {
        unreachable!()
    };
    assert_eq!(text.as_deref(), Some("failed"));
}

#[tokio::test(start_paused = true)]
async fn failure_policy_stop_schedules_nothing_new() {
    let s = policy_agents();
    let (events, state, _) = collect(start(&engine(&s), policy_workflow("stop"), json!({}))).await;
    assert_eq!(state, RunState::Failed);
    assert_eq!(
        step_state(&events, "slow"),
        StepState::Completed,
        "running steps finish"
    );
    assert_eq!(
        step_state(&events, "after_slow"),
        StepState::Skipped,
        "nothing new starts"
    );
    assert_eq!(
        step_state(&events, "report"),
        StepState::Completed,
        "except always steps"
    );
    assert!(s.cancels().is_empty());
}

#[tokio::test(start_paused = true)]
async fn failure_policy_cancel_cancels_running_steps() {
    let s = policy_agents();
    let (events, state, _) =
        collect(start(&engine(&s), policy_workflow("cancel"), json!({}))).await;
    assert_eq!(state, RunState::Failed);
    assert_eq!(step_state(&events, "slow"), StepState::Canceled);
    assert_eq!(
        s.cancels(),
        ["S"],
        "the running downstream task got tasks/cancel"
    );
    assert_eq!(step_state(&events, "report"), StepState::Completed);
}

#[tokio::test(start_paused = true)]
async fn skipped_and_upstream_failed_propagate_through_triggers() {
    let wf = load(&format!(
        "{HEAD}[input]\ngo = {{ type = \"boolean\", default = false }}\n\
         [steps.maybe]\nagent = \"w\"\nwhen = \"input.go\"\nmessage = \"x\"\n\
         [steps.next]\nagent = \"w\"\nneeds = [\"maybe\"]\nmessage = \"x\"\n\
         [steps.tolerant]\nagent = \"w\"\nneeds = [\"next\"]\ntrigger = \"none_failed\"\nmessage = \"x\"\n\
         [steps.fails]\nagent = \"f\"\nmessage = \"x\"\ncontinue_on_error = true\n\
         [steps.after_soft]\nagent = \"w\"\nneeds = [\"fails\"]\nmessage = \"x\"\n"
    ));
    let s = Scripted::new(vec![
        ("w", works(10, "w")),
        (
            "f",
            script(|_, _| vec![started("f", "F"), status(RemoteState::Rejected, None)]),
        ),
    ]);
    let (events, state, _) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(step_state(&events, "maybe"), StepState::Skipped);
    assert_eq!(
        step_state(&events, "next"),
        StepState::Skipped,
        "skipped propagates under all_success"
    );
    assert_eq!(
        step_state(&events, "tolerant"),
        StepState::Completed,
        "none_failed runs after skips"
    );
    assert_eq!(step_state(&events, "fails"), StepState::Rejected);
    assert_eq!(
        step_state(&events, "after_soft"),
        StepState::Completed,
        "continue_on_error lets dependants run"
    );
    assert_eq!(
        state,
        RunState::Completed,
        "a continue_on_error failure does not fail the run"
    );
}

#[tokio::test(start_paused = true)]
async fn a_downstream_question_round_trips_to_the_same_task() {
    let wf = load(&format!(
        "{HEAD}[steps.hotel]\nagent = \"hotel\"\nmessage = \"book\"\n[steps.other]\nagent = \"other\"\nmessage = \"x\"\n"
    ));
    let hotel: Script = script(|req, _| match &req.task_id {
        None => vec![
            started("hotel", "H-1"),
            status(RemoteState::InputRequired, Some("Which hotel, A or B?")),
        ],
        Some(t) => {
            assert_eq!(t, "H-1");
            vec![
                started("hotel", "H-1"),
                chunk(
                    "o",
                    &format!("booked {}", req.text.clone().unwrap_or_default()),
                    false,
                ),
                done(),
            ]
        }
    });
    let s = Scripted::new(vec![("hotel", hotel), ("other", works(2000, "other"))]);
    let mut handle = start(&engine(&s), wf, json!({}));
    // Wait for the question; the other branch keeps running meanwhile.
    loop {
        match handle.events.recv().await.unwrap() {
            RunEvent::Question {
                step, kind, prompt, ..
            } => {
                assert_eq!(step.as_str(), "hotel");
                assert_eq!(
                    kind,
                    QuestionKind::Downstream {
                        agent: "hotel".into(),
                        auth: false
                    }
                );
                assert_eq!(prompt, "Which hotel, A or B?");
                break;
            }
            _ => continue,
        }
    }
    let err = handle
        .control
        .answer(Some("other"), None, Answer::default())
        .await
        .unwrap_err();
    assert_eq!(err, AnswerError::NoQuestion("other".into()));
    handle
        .control
        .answer(None, None, Answer::text("B"))
        .await
        .unwrap();
    let (events, state, _) = collect(handle).await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(output(&events).0.as_deref(), Some("booked B\n\nother"));
    let sends = s.sends("hotel");
    let Log::Send {
        task_id,
        message_id,
        ..
    } = &sends[1]
    else {
        unreachable!()
    };
    assert_eq!(
        task_id.as_deref(),
        Some("H-1"),
        "the answer went to the same downstream task"
    );
    assert_eq!(message_id, "run-1:hotel:-:1:1");
}

#[tokio::test(start_paused = true)]
async fn approvals_gate_steps_and_bad_answers_are_refused() {
    let toml = format!(
        "{HEAD}[steps.ok]\nkind = \"approval\"\nprompt = \"Order it?\"\n\
         [steps.order]\nagent = \"it\"\nneeds = [\"ok\"]\nwhen = \"steps.ok.data.approved\"\nmessage = \"order\"\n"
    );
    for (answer, expected) in [
        ("yes please", StepState::Completed),
        ("no", StepState::Skipped),
    ] {
        let s = Scripted::new(vec![("it", works(10, "ordered"))]);
        let mut handle = start(&engine(&s), load(&toml), json!({}));
        loop {
            if let RunEvent::Question { kind, prompt, .. } = handle.events.recv().await.unwrap() {
                assert_eq!(
                    (kind, prompt.as_str()),
                    (QuestionKind::Approval, "Order it?")
                );
                break;
            }
        }
        let bad = handle
            .control
            .answer(Some("ok"), None, Answer::text("maybe"))
            .await;
        assert!(matches!(bad, Err(AnswerError::Invalid(_))), "{bad:?}");
        handle
            .control
            .answer(
                Some("ok"),
                None,
                Answer {
                    text: Some(answer.into()),
                    data: None,
                    by: None,
                },
            )
            .await
            .unwrap();
        let (events, state, _) = collect(handle).await;
        assert_eq!(state, RunState::Completed);
        assert_eq!(step_state(&events, "order"), expected, "answer {answer:?}");
        let went_input_required = events.iter().any(|e| {
            matches!(
                e,
                RunEvent::Run {
                    state: RunState::InputRequired,
                    ..
                }
            )
        });
        assert!(
            went_input_required,
            "with only a question pending, the run is input-required"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn cancel_reaches_every_running_downstream_task_and_always_steps_run() {
    let wf = load(&format!(
        "{HEAD}[steps.a]\nagent = \"a\"\nmessage = \"x\"\n[steps.b]\nagent = \"b\"\nmessage = \"x\"\n[steps.c]\nagent = \"c\"\nmessage = \"x\"\n\
         [steps.never]\nagent = \"a\"\nneeds = [\"a\"]\nmessage = \"x\"\n\
         [steps.cleanup]\nagent = \"cleanup\"\nneeds = [\"a\", \"b\", \"c\"]\ntrigger = \"always\"\nmessage = \"clean\"\n"
    ));
    let hang = |t: &'static str| {
        script(move |_: &SendRequest, _| vec![started(t, t), chunk("o", "partial", false), Hang])
    };
    let s = Scripted::new(vec![
        ("a", hang("a")),
        ("b", hang("b")),
        ("c", hang("c")),
        ("cleanup", works(10, "cleaned")),
    ]);
    let mut handle = start(&engine(&s), wf, json!({}));
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.control.cancel();
    let mut events = Vec::new();
    while let Some(e) = handle.events.recv().await {
        let end = matches!(&e, RunEvent::Run { state, .. } if state.is_terminal());
        events.push(e);
        if end {
            break;
        }
    }
    let mut cancels = s.cancels();
    cancels.sort();
    assert_eq!(cancels, ["a", "b", "c"]);
    assert!(matches!(
        events.last(),
        Some(RunEvent::Run {
            state: RunState::Canceled,
            ..
        })
    ));
    assert_eq!(step_state(&events, "never"), StepState::Canceled);
    assert_eq!(
        step_state(&events, "cleanup"),
        StepState::Completed,
        "always steps run after a cancel"
    );
}

#[tokio::test(start_paused = true)]
async fn a_template_error_at_run_time_names_the_step_and_expression() {
    let wf = load(&format!(
        "{HEAD}[steps.a]\nagent = \"a\"\nmessage = \"x\"\n[steps.b]\nagent = \"b\"\nneeds = [\"a\"]\nmessage = \"id {{{{ steps.a.data.employee_id }}}}\"\n"
    ));
    let s = Scripted::new(vec![
        ("a", works(10, "no data here")),
        ("b", works(10, "b")),
    ]);
    let (events, state, message) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(state, RunState::Failed);
    assert_eq!(step_state(&events, "b"), StepState::Failed);
    assert_eq!(
        message.as_deref(),
        Some("step `b` failed: steps.b.message: undefined value in `steps.a.data.employee_id`")
    );
    assert!(s.sends("b").is_empty(), "nothing was sent");
}

#[tokio::test]
async fn inputs_are_checked_before_a_run_starts() {
    let wf = load(&format!(
        "{HEAD}[input]\nname = {{ type = \"string\", required = true }}\nn = {{ type = \"integer\", default = 2 }}\n[steps.a]\nagent = \"a\"\nmessage = \"{{{{ input.name }}}} {{{{ input.n }}}}\"\n"
    ));
    let s = Scripted::new(vec![("a", works(0, "ok"))]);
    let e = engine(&s);
    let Value::Object(bad) = json!({ "n": "two", "extra": 1 }) else {
        panic!()
    };
    let problems = e.start(wf.clone(), &bad, "r".into()).err().unwrap();
    assert_eq!(
        problems,
        [
            "`name` is required",
            "`n` must be an integer, got a string",
            "`extra` is not an input (inputs: name, n)"
        ]
    );
    let mut good = Map::new();
    good.insert("name".into(), json!("Ada"));
    let (_, state, _) = collect(e.start(wf, &good, "r".into()).unwrap()).await;
    assert_eq!(state, RunState::Completed);
    let Log::Send { text, .. } = &s.sends("a")[0] else {
        unreachable!()
    };
    assert_eq!(text.as_deref(), Some("Ada 2"), "defaults are filled in");
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_cannot_cancel_is_recorded_and_its_late_artifacts_dropped() {
    let wf = load(&format!(
        "{HEAD}[steps.a]\nagent = \"a\"\nmessage = \"x\"\n"
    ));
    let late = script(|_, _| {
        vec![
            started("a", "A-1"),
            Wait(1000),
            chunk("o", "late", false),
            done(),
        ]
    });
    let mut s = Scripted::new(vec![("a", late)]);
    s.refuse_cancel = true;
    let mut handle = start(&engine(&s), wf, json!({}));
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.control.cancel();
    let mut events = Vec::new();
    while let Some(e) = handle.events.recv().await {
        let end = matches!(&e, RunEvent::Run { state, .. } if state.is_terminal());
        events.push(e);
        if end {
            break;
        }
    }
    let note = events.iter().find_map(|e| match e {
        RunEvent::Step {
            step,
            state: StepState::Canceled,
            message,
            ..
        } if step.as_str() == "a" => message.clone(),
        _ => None,
    });
    let note = note.unwrap_or_default();
    assert!(
        note.contains("did not cancel its task A-1: task not cancelable"),
        "{note}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::Artifact { .. })),
        "late artifacts are not forwarded"
    );
}

#[tokio::test(start_paused = true)]
async fn several_questions_can_be_pending_and_answers_name_their_step() {
    let wf = load(&format!(
        "{HEAD}[steps.one]\nkind = \"approval\"\nprompt = \"First?\"\n[steps.two]\nkind = \"input\"\nprompt = \"Which size?\"\n\
         fields = {{ size = {{ type = \"string\", enum = [\"S\", \"M\"], required = true }} }}\n\
         [output]\ntext = \"{{{{ steps.one.data.approved }}}} {{{{ steps.two.data.size }}}}\"\n"
    ));
    let s = Scripted::new(vec![]);
    let mut handle = start(&engine(&s), wf, json!({}));
    let mut asked = 0;
    while asked < 2 {
        if let RunEvent::Question { .. } = handle.events.recv().await.unwrap() {
            asked += 1;
        }
    }
    let err = handle
        .control
        .answer(None, None, Answer::text("yes"))
        .await
        .unwrap_err();
    assert_eq!(err, AnswerError::Ambiguous("one, two".into()));
    let err = handle
        .control
        .answer(Some("two"), None, Answer::text("XL"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        AnswerError::Invalid("`size` must be one of \"S\", \"M\", got \"XL\"".into())
    );
    handle
        .control
        .answer(Some("two"), None, Answer::text("M"))
        .await
        .unwrap();
    handle
        .control
        .answer(None, None, Answer::text("yes"))
        .await
        .unwrap();
    let (events, state, _) = collect(handle).await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(
        output(&events).0.as_deref(),
        Some("True M"),
        "Jinja renders booleans as True/False"
    );
}

#[tokio::test(start_paused = true)]
async fn a_resumed_run_keeps_finished_work_and_resends_an_unknown_send_with_its_id() {
    let wf = load(&format!(
        "{HEAD}[input]\nitems = {{ type = \"array\" }}\n\
         [steps.first]\nagent = \"a\"\nmessage = \"first\"\n\
         [steps.each]\nagent = \"b\"\nneeds = [\"first\"]\nfor_each = \"input.items\"\nmessage = \"{{{{ item }}}}\"\n\
         [steps.last]\nagent = \"c\"\nneeds = [\"each\"]\nmessage = \"after {{{{ steps.first.text }}}}\"\n\
         [output]\ntext = \"{{{{ steps.first.text }}}}|{{% for r in steps.each.items %}}{{{{ r.text }}}}{{% endfor %}}|{{{{ steps.last.text }}}}\"\n"
    ));
    let echo = || {
        script(|req: &SendRequest, n| {
            vec![
                started("x", &format!("t{n}")),
                chunk("o", req.text.as_deref().unwrap_or(""), false),
                done(),
            ]
        })
    };
    let s = Scripted::new(vec![("a", echo()), ("b", echo()), ("c", echo())]);
    // What a previous process wrote down before it died: `first` and item 0 finished,
    // item 1 was being sent (no task id known), item 2 not started.
    let store = Arc::new(MemoryRunStore::new());
    let Value::Object(inputs) = json!({ "items": ["x", "y", "z"] }) else {
        panic!()
    };
    let header = RunHeader {
        run_id: "run-1".into(),
        workflow_id: "t".into(),
        workflow_file: wf.file.clone(),
        workflow_source: wf.source.to_string(),
        workflow_hash: wf.hash.clone(),
        inputs,
        trace: None,
        started_at: None,
        initiator: None,
        tenant: None,
        retry_of: None,
        held: None,
        parent: None,
    };
    store.create_run(&header).await.unwrap();
    let finished = |text: &str| {
        let mut r = Record::new(StepState::Completed);
        r.outputs.apply(&ArtifactChunk {
            artifact_id: "o".into(),
            name: None,
            parts: vec![Content::Text(text.into())],
            append: false,
            last_chunk: true,
        });
        r.attempts = 1;
        Checkpoint::Done(r)
    };
    store
        .save_unit("run-1", "first", None, &finished("FIRST"))
        .await
        .unwrap();
    store
        .save_unit("run-1", "each", Some(0), &finished("X0"))
        .await
        .unwrap();
    let sent = Checkpoint::Sent {
        attempt: 1,
        turn: 0,
        message_id: "the-id-sent-before".into(),
        agent: None,
        task_id: None,
        text: Some("y".into()),
        data: None,
        started_at: None,
        asking: false,
    };
    store
        .save_unit("run-1", "each", Some(1), &sent)
        .await
        .unwrap();
    let saved = store.load_run("run-1").await.unwrap().unwrap();

    let e = engine(&s).with_store(store.clone());
    let (events, state, message) = collect(e.resume(wf, saved)).await;
    assert_eq!(state, RunState::Completed, "{message:?}");
    assert_eq!(
        output(&events).0.as_deref(),
        Some("FIRST|X0yz|after FIRST"),
        "stored results are used as they were"
    );
    let sends: Vec<(String, String)> = s
        .log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|l| match l {
            Log::Send {
                agent, message_id, ..
            } => Some((agent.clone(), message_id.clone())),
            _ => None,
        })
        .collect();
    assert!(
        !sends.iter().any(|(a, _)| a == "a"),
        "a finished step is not sent again: {sends:?}"
    );
    let b: Vec<&str> = sends
        .iter()
        .filter(|(a, _)| a == "b")
        .map(|(_, m)| m.as_str())
        .collect();
    assert_eq!(b.len(), 2, "items 1 and 2 only: {sends:?}");
    assert!(
        b.contains(&"the-id-sent-before"),
        "the unknown send goes again with its message id: {sends:?}"
    );
    assert_eq!(sends.iter().filter(|(a, _)| a == "c").count(), 1);
    let stored = store.load_run("run-1").await.unwrap().unwrap();
    let end = stored.end.clone().expect("the end is stored");
    assert_eq!(end.state, RunState::Completed);
    assert_eq!(end.output_text.as_deref(), Some("FIRST|X0yz|after FIRST"));
    assert!(
        stored
            .units
            .values()
            .all(|c| matches!(c, Checkpoint::Done(_))),
        "a finished run keeps its steps' results, for a retry: {:?}",
        stored.units
    );

    // A run that had ended reports its end again, and nothing is sent.
    let before = s.log.lock().unwrap().len();
    let (events, state, _) = collect(e.resume(
        load(&format!(
            "{HEAD}[steps.first]\nagent = \"a\"\nmessage = \"first\"\n"
        )),
        stored,
    ))
    .await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(output(&events).0.as_deref(), Some("FIRST|X0yz|after FIRST"));
    assert_eq!(s.log.lock().unwrap().len(), before);
}

/// An answer that reaches a resumed run before the run has asked its question again (a
/// client answering right after a restart) is held for that question, not refused as if
/// nothing asked; one for a step that asked nothing is refused as ever.
#[tokio::test]
async fn an_answer_sent_as_a_run_resumes_waits_for_its_question_to_be_asked_again() {
    let wf = load(&format!(
        "{HEAD}[steps.approve]\nkind = \"approval\"\nprompt = \"Keep it?\"\n\
         [steps.after]\nagent = \"a\"\nneeds = [\"approve\"]\nmessage = \"kept\"\n"
    ));
    let s = Scripted::new(vec![(
        "a",
        script(|_: &SendRequest, n| vec![started("x", &format!("t{n}")), done()]),
    )]);
    let store = Arc::new(MemoryRunStore::new());
    let header = RunHeader {
        run_id: "run-r".into(),
        workflow_id: "t".into(),
        workflow_file: wf.file.clone(),
        workflow_source: wf.source.to_string(),
        workflow_hash: wf.hash.clone(),
        inputs: Map::new(),
        trace: None,
        started_at: None,
        initiator: None,
        tenant: None,
        retry_of: None,
        held: None,
        parent: None,
    };
    store.create_run(&header).await.unwrap();
    let asked = Checkpoint::Asked {
        started_at: "2026-12-05T10:00:00Z".into(),
    };
    store
        .save_unit("run-r", "approve", None, &asked)
        .await
        .unwrap();
    let saved = store.load_run("run-r").await.unwrap().unwrap();
    let e = engine(&s).with_store(store.clone());
    let handle = e.resume(wf, saved);
    // Sent before the resumed run has run at all: its question is not asked yet.
    let control = handle.control.clone();
    let nothing = Answer {
        text: Some("yes".into()),
        data: None,
        by: None,
    };
    let refused = control.answer(Some("after"), None, nothing.clone());
    let approved = control.answer(
        Some("approve"),
        None,
        Answer {
            data: Some(json!({ "approved": true }).as_object().unwrap().clone()),
            ..nothing
        },
    );
    let (refused, approved) = tokio::join!(refused, approved);
    assert!(
        matches!(refused, Err(AnswerError::NoQuestion(ref s)) if s == "after"),
        "{refused:?}"
    );
    assert!(matches!(approved, Ok(Taken::Answered)), "{approved:?}");
    let (_, state, message) = tokio::time::timeout(Duration::from_secs(10), collect(handle))
        .await
        .expect("the approved run ends");
    assert_eq!(state, RunState::Completed, "{message:?}");
}

/// Issue 38: `[workflow] deadline` bounds the whole run: past it what still runs is
/// canceled (its downstream task too), steps not started never start, and the run fails
/// naming the deadline and what was running; what finished before keeps its result.
#[tokio::test(start_paused = true)]
async fn a_run_past_its_deadline_fails_naming_what_was_still_running() {
    let wf = load(
        "[workflow]\nid = \"t\"\ndescription = \"d\"\ndeadline = \"5s\"\n\
         [steps.quick]\nagent = \"quick\"\nmessage = \"x\"\n\
         [steps.slow]\nagent = \"slow\"\nneeds = [\"quick\"]\nmessage = \"x\"\n\
         [steps.after]\nagent = \"quick\"\nneeds = [\"slow\"]\nmessage = \"x\"\n",
    );
    let s = Scripted::new(vec![
        ("quick", works(10, "quick done")),
        ("slow", script(|_, _| vec![started("slow", "S-1"), Hang])),
    ]);
    let begun = Instant::now();
    let (events, state, message) = collect(start(&engine(&s), wf, json!({}))).await;
    let took = begun.elapsed();
    assert_eq!(state, RunState::Failed);
    let message = message.unwrap();
    assert!(
        message.contains("the run's deadline of 5s passed with `slow` still running (canceled)"),
        "{message}"
    );
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(6),
        "ended at the deadline: {took:?}"
    );
    assert_eq!(s.cancels(), ["S-1"], "the downstream task got tasks/cancel");
    assert_eq!(step_state(&events, "quick"), StepState::Completed);
    assert_eq!(s.sends("quick").len(), 1, "`after` never started");
}

#[test]
fn a_deadline_must_be_a_duration_longer_than_zero() {
    for (deadline, says) in [("soon", "`deadline`"), ("0s", "longer than zero")] {
        let text = format!(
            "[workflow]\nid = \"t\"\ndescription = \"d\"\ndeadline = \"{deadline}\"\n[steps.a]\nagent = \"a\"\nmessage = \"x\"\n"
        );
        let (loaded, diags) = workflow::load_str("t.toml", &text, Options::default());
        assert!(loaded.is_none(), "{deadline}");
        let d = diags.iter().find(|d| d.is_error()).expect("an error");
        assert_eq!(d.line, 4, "{d}");
        assert!(d.message.contains(says), "{d}");
    }
}

/// Issue 38: an approval nobody answers within its `timeout` does what its
/// `on_timeout` says: `reject` ends it rejected; `escalate` asks again of
/// `escalate_to`, whose answer goes on, and whose silence fails the step.
#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_is_rejected_or_escalated_as_on_timeout_says() {
    let approval = |policy: &str| {
        load(&format!(
            "{HEAD}[steps.ok]\nkind = \"approval\"\nprompt = \"Pay it?\"\ntimeout = \"1m\"\n{policy}\ncontinue_on_error = true\n"
        ))
    };
    let s = Scripted::new(vec![]);
    let (events, _, _) = collect(start(
        &engine(&s),
        approval("on_timeout = \"reject\""),
        json!({}),
    ))
    .await;
    assert_eq!(step_state(&events, "ok"), StepState::Rejected);

    // Escalated, then answered by the next approvers.
    let wf =
        approval("on_timeout = \"escalate\"\nescalate_to = [\"group:directors\", \"sub:cfo\"]");
    let mut handle = start(&engine(&s), wf.clone(), json!({}));
    let mut prompts = Vec::new();
    while prompts.len() < 2 {
        if let RunEvent::Question { prompt, .. } = handle.events.recv().await.unwrap() {
            prompts.push(prompt);
        }
    }
    assert_eq!(prompts[0], "Pay it?");
    assert_eq!(
        prompts[1],
        "Escalated to group:directors or sub:cfo (no answer within 1m): Pay it?"
    );
    handle
        .control
        .answer(Some("ok"), None, Answer::text("yes"))
        .await
        .unwrap();
    let (events, state, _) = collect(handle).await;
    assert_eq!(state, RunState::Completed);
    assert_eq!(step_state(&events, "ok"), StepState::Completed);

    // Escalated, and silent again: the step fails, saying both waits.
    let (events, _, _) = collect(start(&engine(&s), wf, json!({}))).await;
    assert_eq!(step_state(&events, "ok"), StepState::Failed);
    let said = events.iter().any(|e| {
        matches!(e, RunEvent::Step { step, message: Some(m), .. }
            if step.as_str() == "ok" && m.contains("nor within 1m more after escalating to group:directors or sub:cfo"))
    });
    assert!(said, "{events:#?}");
}

#[test]
fn who_may_answer_is_checked_where_it_is_written() {
    let text = "[workflow]\nid = \"t\"\ndescription = \"d\"\nallow = [\"group:hr\", \"role:boss\"]\n[steps.s]\nkind = \"approval\"\nprompt = \"p\"\n";
    let (loaded, diags) = workflow::load_str("t.toml", text, Options::default());
    assert!(loaded.is_none());
    let d = diags.iter().find(|d| d.is_error()).expect("an error");
    assert!(d.message.contains("there is no role \"boss\""), "{d}");
    assert_eq!((d.line, d.column), (4, 22), "{d}");
}

#[test]
fn on_timeout_is_checked_where_it_is_written() {
    for (step, says, line) in [
        (
            "kind = \"approval\"\nprompt = \"p\"\non_timeout = \"escalate\"\n",
            "needs `escalate_to`",
            7,
        ),
        (
            "kind = \"approval\"\nprompt = \"p\"\non_timeout = \"ignore\"\n",
            "unknown `on_timeout` value \"ignore\"",
            7,
        ),
        (
            "agent = \"a\"\nmessage = \"m\"\non_timeout = \"reject\"\n",
            "applies only to approval and input steps",
            7,
        ),
        (
            "kind = \"approval\"\nprompt = \"p\"\nescalate_to = [\"sub:x\"]\n",
            "goes with `on_timeout = \"escalate\"`",
            7,
        ),
        (
            "kind = \"approval\"\nprompt = \"p\"\non_timeout = \"escalate\"\nescalate_to = [\"director\"]\n",
            "\"director\" names no one: write `group:NAME`",
            8,
        ),
        (
            "kind = \"approval\"\nprompt = \"p\"\napprovers = [\"team:x\"]\n",
            "`team:` is not a kind of name",
            7,
        ),
        (
            "agent = \"a\"\nmessage = \"m\"\nquorum = 2\n",
            "`quorum` applies only to approval steps",
            7,
        ),
        (
            "kind = \"approval\"\nprompt = \"p\"\nquorum = 0\n",
            "`quorum` must be between 1 and 100",
            7,
        ),
        (
            "kind = \"llm\"\nprompt = \"p\"\nfour_eyes = true\n",
            "`four_eyes` applies to steps that ask questions",
            7,
        ),
    ] {
        let text = format!("[workflow]\nid = \"t\"\ndescription = \"d\"\n[steps.s]\n{step}");
        let (loaded, diags) = workflow::load_str("t.toml", &text, Options::default());
        assert!(loaded.is_none(), "{step}");
        let d = diags.iter().find(|d| d.is_error()).expect("an error");
        assert!(d.message.contains(says), "{step}: {d}");
        assert_eq!(d.line, line, "{step}: {d}");
    }
}

fn person(subject: &str, groups: &[&str]) -> orchestrator_core::access::Actor {
    orchestrator_core::access::Actor {
        id: format!("https://idp#{subject}"),
        subject: subject.into(),
        name: subject.to_uppercase(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        roles: Vec::new(),
    }
}

fn from(actor: &orchestrator_core::access::Actor, text: &str) -> Answer {
    Answer {
        by: Some(actor.clone()),
        ..Answer::text(text)
    }
}

/// Issue 35: an approval that names its approvers takes answers only from them, never
/// from the run's initiator under four eyes, and with a quorum waits for that many
/// different approvers; each answer taken is an `Answered` event, and the step records
/// who decided.
#[tokio::test(start_paused = true)]
async fn approvals_take_answers_from_their_approvers_only() {
    let toml = format!(
        "{HEAD}[steps.ok]\nkind = \"approval\"\nprompt = \"Pay it?\"\n\
         approvers = [\"group:finance\", \"sub:cfo\"]\nfour_eyes = true\nquorum = 2\n"
    );
    let (alice, bob, carol, cfo) = (
        person("alice", &["finance"]),
        person("bob", &["finance"]),
        person("carol", &["sales"]),
        person("cfo", &[]),
    );
    let s = Scripted::new(Vec::new());
    let mut handle = engine(&s)
        .start_by(
            load(&toml),
            &Map::new(),
            "run-1".into(),
            orchestrator_core::access::Origin {
                initiator: Some(alice.clone()),
                tenant: None,
                retry_of: None,
                parent: None,
            },
        )
        .unwrap();
    loop {
        if let RunEvent::Question { answerers, .. } = handle.events.recv().await.unwrap() {
            assert_eq!(answerers.approvers.len(), 2);
            assert!(answerers.four_eyes);
            assert_eq!(answerers.quorum, 2);
            break;
        }
    }
    let answer = |a: Answer| {
        let control = handle.control.clone();
        async move { control.answer(Some("ok"), None, a).await }
    };
    let refused = |r: Result<Taken, AnswerError>| match r {
        Err(AnswerError::NotAllowed(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let why = refused(answer(from(&carol, "yes")).await);
    assert!(why.contains("it is for group:finance or sub:cfo"), "{why}");
    let why = refused(answer(from(&alice, "yes")).await);
    assert!(why.contains("four eyes"), "{why}");
    assert_eq!(
        answer(from(&bob, "yes")).await,
        Ok(Taken::Counted { left: 1 })
    );
    let why = refused(answer(from(&bob, "yes")).await);
    assert!(why.contains("already approved"), "{why}");
    assert_eq!(answer(from(&cfo, "yes")).await, Ok(Taken::Answered));
    let (events, state, _) = collect(handle).await;
    assert_eq!(state, RunState::Completed);
    let decided: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Answered { decision, .. } => {
                Some((decision.by.subject.clone(), decision.action.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("bob".to_owned(), "approved".to_owned()),
            ("cfo".to_owned(), "approved".to_owned())
        ]
    );

    // A rejection by one approver ends the approval at once.
    let s = Scripted::new(Vec::new());
    let mut handle = engine(&s)
        .start_by(
            load(&toml),
            &Map::new(),
            "run-2".into(),
            orchestrator_core::access::Origin {
                initiator: Some(alice.clone()),
                tenant: None,
                retry_of: None,
                parent: None,
            },
        )
        .unwrap();
    while !matches!(handle.events.recv().await, Some(RunEvent::Question { .. })) {}
    let control = handle.control.clone();
    assert_eq!(
        control.answer(Some("ok"), None, from(&cfo, "no")).await,
        Ok(Taken::Answered)
    );
    let (_, state, _) = collect(handle).await;
    assert_eq!(state, RunState::Completed);
}

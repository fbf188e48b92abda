//! `runs` as a user runs it: the binary against an orchestrator serving on loopback,
//! over A2A like any client (ListTasks, GetTask, a subscription, messages, CancelTask),
//! its output read back and its steering seen in the tasks.

use std::process::Output;
use std::time::Duration;

use a2a::client::A2aClient;
use a2a::types::*;
use a2a_orchestrator::host::detail::RunDetail;
use orchestrator_core::engine::{RunState, StepState};
use serde_json::Value;

use crate::util::ROOT;
use crate::util::orchestra::{GREET, TWO_APPROVALS, client, orchestra_with};

/// Runs `a2a-orchestrator runs ARGS --url URL`.
async fn runs(url: &str, args: &[&str]) -> Output {
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .arg("runs")
        .args(args)
        .args(["--url", url])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the command finished")
        .unwrap()
}

fn out(o: &Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Starts a run without waiting for it; its task once both questions are asked.
async fn started(c: &A2aClient) -> Task {
    let mut params = SendMessageRequest::new(Message::user_text("start"));
    params.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let SendMessageResult::Task(t) = c.send_message(&params).await.unwrap() else {
        panic!("a task")
    };
    waiting(c, &t.id, 2).await
}

/// The task once its run waits on `n` questions (bounded).
async fn waiting(c: &A2aClient, id: &str, n: usize) -> Task {
    for _ in 0..250 {
        let t = c.get_task(&GetTaskRequest::new(id)).await.unwrap();
        if t.status().state() == TaskState::InputRequired
            && RunDetail::of_metadata(t.metadata.as_deref())
                .is_some_and(|d| d.pending_questions.len() == n)
        {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the run never waited on {n} questions");
}

/// The task once it has ended (bounded).
async fn ended(c: &A2aClient, id: &str) -> Task {
    for _ in 0..250 {
        let t = c.get_task(&GetTaskRequest::new(id)).await.unwrap();
        if t.status().state().is_terminal() {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never ended");
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_lists_shows_answers_and_cancels_runs_of_a_serving_orchestrator() {
    let o = orchestra_with(&[TWO_APPROVALS], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let first = started(&c).await;
    let second = started(&c).await;

    // The table: both runs, newest first, each waiting on its first question.
    let list = runs(&o.url, &["list"]).await;
    let text = out(&list);
    assert!(list.status.success(), "{text}");
    let rows: Vec<&str> = text.lines().skip(1).take(2).collect();
    assert!(rows[0].starts_with(second.id.as_str()), "{text}");
    assert!(rows[1].starts_with(first.id.as_str()), "{text}");
    for row in rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cols[1..3], ["two", "input-required"], "{row}");
        assert!(
            row.contains(" 0/3 ") && row.ends_with("first: First?"),
            "{row}"
        );
    }

    // JSON lines, each with the run's typed detail; filters by state and workflow.
    let json = runs(
        &o.url,
        &[
            "list",
            "--json",
            "--state",
            "input-required",
            "--since",
            "1h",
        ],
    )
    .await;
    assert!(json.status.success(), "{}", out(&json));
    let lines: Vec<Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let detail: RunDetail = serde_json::from_value(lines[1]["run"].clone()).unwrap();
    assert_eq!(lines[1]["id"], first.id.as_str());
    assert_eq!(detail.workflow, "two");
    assert_eq!(detail.state, RunState::InputRequired);
    let none = runs(&o.url, &["list", "--state", "completed"]).await;
    assert!(out(&none).contains("(no runs)"), "{}", out(&none));
    let none = runs(&o.url, &["list", "--workflow", "other"]).await;
    assert!(out(&none).contains("(no runs)"), "{}", out(&none));

    // One run: its steps in order, with what they wait for.
    let show = runs(&o.url, &["show", first.id.as_str()]).await;
    let text = out(&show);
    assert!(show.status.success(), "{text}");
    assert!(
        text.starts_with(&format!("run {} · two (version ", first.id)),
        "{text}"
    );
    for want in [
        "? first",
        "? second",
        "· say",
        "needs first, second",
        "waiting: first: First?",
        "waiting: second: Second?",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }

    // Steering: approve one, answer the other; the run completes.
    let approve = runs(&o.url, &["approve", first.id.as_str(), "--step", "first"]).await;
    assert!(approve.status.success(), "{}", out(&approve));
    waiting(&c, &first.id, 1).await;
    let wrong = runs(
        &o.url,
        &["answer", first.id.as_str(), "yes", "--step", "nope"],
    )
    .await;
    let text = out(&wrong);
    assert!(!wrong.status.success(), "{text}");
    assert!(
        text.contains("no question is pending for step `nope`"),
        "{text}"
    );
    let answer = runs(
        &o.url,
        &["answer", first.id.as_str(), "yes", "--step", "second"],
    )
    .await;
    assert!(answer.status.success(), "{}", out(&answer));
    let done = ended(&c, &first.id).await;
    assert_eq!(done.status().state(), TaskState::Completed);
    let show = runs(&o.url, &["show", first.id.as_str()]).await;
    let text = out(&show);
    assert!(
        text.contains("· completed ·") && text.contains("3/3 steps done"),
        "{text}"
    );
    assert!(
        text.contains("✓ say") && text.contains("downstream task "),
        "{text}"
    );
    assert!(
        text.contains("artifact say/"),
        "the step's artifact: {text}"
    );
    assert!(text.contains("output:\n  both approved"), "{text}");

    // A rejection is an answer (`approved: false` for the workflow to act on); cancel
    // ends the run.
    let reject = runs(&o.url, &["reject", second.id.as_str(), "--step", "first"]).await;
    assert!(reject.status.success(), "{}", out(&reject));
    waiting(&c, &second.id, 1).await;
    let cancel = runs(&o.url, &["cancel", second.id.as_str()]).await;
    let text = out(&cancel);
    assert!(cancel.status.success(), "{text}");
    assert!(
        text.contains(&format!("run {} canceled", second.id)),
        "{text}"
    );
    let t = c
        .get_task(&GetTaskRequest::new(second.id.clone()))
        .await
        .unwrap();
    let detail = RunDetail::of_metadata(t.metadata.as_deref()).unwrap();
    assert_eq!(detail.state, RunState::Canceled);
    let states: Vec<StepState> = detail.steps.iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        [
            StepState::Completed,
            StepState::Canceled,
            StepState::Canceled
        ],
        "{detail:?}"
    );
    // A canceled run does not read as done, in the list or shown.
    let listed = out(&runs(&o.url, &["list"]).await);
    let line = listed
        .lines()
        .find(|l| l.starts_with(second.id.as_str()))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains(" 1/3 "), "{line}");
    let shown = out(&runs(&o.url, &["show", second.id.as_str()]).await);
    assert!(shown.contains("1/3 steps done (2 canceled)"), "{shown}");

    // An unknown run is named in the error.
    let missing = runs(&o.url, &["show", "no-such-run"]).await;
    let text = out(&missing);
    assert!(!missing.status.success(), "{text}");
    assert!(text.contains("no-such-run"), "{text}");
}

/// `runs watch` follows a run started elsewhere to its end, answering its questions.
#[tokio::test(flavor = "multi_thread")]
async fn runs_watch_follows_a_run_and_answers_its_questions() {
    let o = orchestra_with(&[TWO_APPROVALS], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let t = started(&c).await;
    let watch = runs(&o.url, &["watch", t.id.as_str(), "--yes"]).await;
    let text = out(&watch);
    assert!(watch.status.success(), "{text}");
    assert!(text.contains("? First?"), "the question is shown: {text}");
    assert!(text.contains("answered automatically: yes"), "{text}");
    assert!(text.contains("both approved"), "the result: {text}");
    assert!(text.contains("workflow completed"), "{text}");
    // Watching a finished run shows how it ended.
    let again = runs(&o.url, &["watch", t.id.as_str()]).await;
    let text = out(&again);
    assert!(again.status.success(), "{text}");
    assert!(
        text.contains("both approved") && text.contains("workflow completed"),
        "{text}"
    );
}

/// `a2a-orchestrator send URL TEXT --watch --yes`.
async fn send_watch(url: &str, text: &str) -> Output {
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["send", url, text, "--watch", "--yes"])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the command finished")
        .unwrap()
}

/// `send --watch` starts a run and follows it as `demo` does.
#[tokio::test(flavor = "multi_thread")]
async fn send_watch_starts_a_run_and_follows_it_to_its_end() {
    let o = orchestra_with(&[TWO_APPROVALS], 0, |_| {}).await;
    let o = send_watch(&o.url, "start").await;
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    for want in [
        "? First?",
        "? Second?",
        "✓ say",
        "both approved",
        "workflow completed",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
}

/// An automatic answer the task does not take ends `--yes` with the question, instead of
/// answering it forever.
#[tokio::test(flavor = "multi_thread")]
async fn send_watch_stops_when_its_automatic_answer_is_not_taken() {
    let o = orchestra_with(&[GREET], 0, |_| {}).await;
    let o = send_watch(&o.url, "greet").await;
    let text = out(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains(
            "the automatic answer was not taken, and the task asks again: To run `greet` I need:"
        ),
        "{text}"
    );
}

const CHAIN: &str = r#"
[workflow]
id = "chain"
description = "alpha, then beta on alpha's answer"
[steps.a]
agent = "one"
message = "alpha"
[steps.b]
agent = "two"
needs = ["a"]
message = "beta after {{ steps.a.text }}"
[output]
text = "{{ steps.b.text }}"
"#;

/// The tasks an echo agent was given.
async fn tasks_at(url: &str) -> u64 {
    let (c, _) = client(url).await;
    c.list_tasks(&Default::default()).await.unwrap().total_size as u64
}

/// `runs retry` starts a new run that keeps what the old one completed (not sent again)
/// and runs the rest; both runs name each other; bad retries are refused with the field.
#[tokio::test(flavor = "multi_thread")]
async fn runs_retry_keeps_what_completed_and_runs_the_rest() {
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runs-retry.db");
    let _ = std::fs::remove_file(&db);
    let store = format!("sqlite://{}", db.display());
    let o = orchestra_with(&[CHAIN], 0, |c| {
        c.store = orchestrator_store::StoreSpec::parse(&store).unwrap();
    })
    .await;
    let (c, _) = client(&o.url).await;
    let SendMessageResult::Task(first) = c
        .send_message(&SendMessageRequest::new(Message::user_text("go")))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(
        first.status().state(),
        TaskState::Completed,
        "{:?}",
        first.status
    );
    let (one, two) = (&o.echo_agents[0].url, &o.echo_agents[1].url);
    assert_eq!((tasks_at(one).await, tasks_at(two).await), (1, 1));

    let retry = runs(&o.url, &["retry", first.id.as_str(), "--from", "b"]).await;
    let text = out(&retry);
    assert!(retry.status.success(), "{text}");
    let new_id = text
        .split_whitespace()
        .nth(1)
        .expect("run NEW retries run OLD")
        .to_owned();
    assert!(
        text.contains(&format!("retries run {}", first.id)),
        "{text}"
    );
    let done = ended(&c, &new_id).await;
    assert_eq!(
        done.status().state(),
        TaskState::Completed,
        "{:?}",
        done.status
    );
    assert_eq!(
        (tasks_at(one).await, tasks_at(two).await),
        (1, 2),
        "`a` was kept, not sent again; `b` ran again"
    );
    let detail = RunDetail::of_metadata(done.metadata.as_deref()).unwrap();
    assert_eq!(detail.retry_of.as_deref(), Some(first.id.as_str()));
    // The retry's stored header names the run it retries: a resumed run, and a replica
    // that shows it while it runs, rebuild its detail from it.
    {
        let header: String = rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("SELECT header FROM runs WHERE id = ?1", [&new_id], |r| {
                r.get(0)
            })
            .unwrap();
        let header: serde_json::Value = serde_json::from_str(&header).unwrap();
        assert_eq!(header["retry_of"], first.id.as_str(), "{header}");
    }
    let a = &detail.steps[0];
    assert_eq!(
        (a.state, a.message.clone()),
        (
            StepState::Completed,
            Some(format!("kept from run {}", first.id))
        )
    );
    assert_eq!(detail.steps[1].attempts, 1);
    let shown = out(&runs(&o.url, &["show", &new_id]).await);
    assert!(
        shown.contains(&format!("retry of run {}", first.id)),
        "{shown}"
    );
    assert!(shown.contains("output:\n  beta after alpha"), "{shown}");
    let shown = out(&runs(&o.url, &["show", first.id.as_str()]).await);
    assert!(shown.contains(&format!("retried by: {new_id}")), "{shown}");

    // Refused, with what is wrong and where.
    for (args, want) in [
        (vec!["retry", "no-such-run"], "metadata.retryOf"),
        (
            vec!["retry", first.id.as_str(), "--from", "nope"],
            "workflow `chain` has no step `nope`",
        ),
    ] {
        let r = runs(&o.url, &args).await;
        let text = out(&r);
        assert!(!r.status.success(), "{text}");
        assert!(text.contains(want), "{want:?} in {text}");
    }
}

/// Issue 38: watching never decides. `runs watch` without a terminal and without
/// `--yes` shows a question with how to answer it and answers nothing (the run still
/// waits on both questions); answered elsewhere (`runs approve`), the watcher follows
/// the run to its end.
#[tokio::test(flavor = "multi_thread")]
async fn runs_watch_without_a_terminal_shows_questions_and_answers_none() {
    use tokio::io::AsyncReadExt;
    let o = orchestra_with(&[TWO_APPROVALS], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let t = started(&c).await;
    let mut watch = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["runs", "watch", t.id.as_str(), "--url", &o.url])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = watch.stdout.take().unwrap();
    let mut seen = String::new();
    let shown = tokio::time::timeout(Duration::from_secs(30), async {
        let mut buf = [0u8; 4096];
        while !seen.contains("or watch with") {
            let n = stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "the watcher ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await;
    assert!(shown.is_ok(), "the question and how to answer it: {seen}");
    assert!(seen.contains("? First?"), "{seen}");
    assert!(
        seen.contains(&format!(
            "a2a-orchestrator runs answer {} ANSWER --step first --url {}",
            t.id, o.url
        )),
        "{seen}"
    );
    assert!(!seen.contains("answered automatically"), "{seen}");
    // Nothing was answered: both questions still wait.
    tokio::time::sleep(Duration::from_millis(500)).await;
    waiting(&c, &t.id, 2).await;

    // Answered elsewhere, the watcher sees the run to its end.
    for step in ["first", "second"] {
        let approve = runs(&o.url, &["approve", t.id.as_str(), "--step", step]).await;
        assert!(approve.status.success(), "{}", out(&approve));
    }
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stdout.read_to_end(&mut rest))
        .await
        .expect("the watcher ended with the run")
        .unwrap();
    let done = watch.wait_with_output().await.unwrap();
    let rest = format!(
        "{seen}{}{}",
        String::from_utf8_lossy(&rest),
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(done.status.success(), "{rest}");
    assert!(rest.contains("workflow completed"), "{rest}");
    assert!(!rest.contains("answered automatically"), "{rest}");
}

/// `send --watch --answer STEP=VALUE` answers the steps it names, and only those.
#[tokio::test(flavor = "multi_thread")]
async fn send_watch_answers_the_steps_given() {
    let o = orchestra_with(&[TWO_APPROVALS], 0, |_| {}).await;
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["send", &o.url, "start", "--watch"])
        .args(["--answer", "first=yes", "--answer", "second=no"])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let done = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the command finished")
        .unwrap();
    let text = out(&done);
    assert!(text.contains("answered as given: yes"), "{text}");
    assert!(text.contains("answered as given: no"), "{text}");
    assert!(!text.contains("answered automatically"), "{text}");
    assert!(text.contains("workflow completed"), "{text}");
    // A malformed --answer is refused, naming the form.
    let bad = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["send", &o.url, "start", "--watch", "--answer", "first"])
        .current_dir(ROOT)
        .output()
        .await
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", out(&bad));
    assert!(out(&bad).contains("STEP=VALUE"), "{}", out(&bad));
}

//! Issue 78: workflows that run workflows (`kind = "workflow"`): each child a run of its
//! own on the same server — linked both ways, its questions answered through the parent's
//! task, canceled with the parent, resumed after a crash — and the checks across
//! workflows at load.

use a2a::types::*;
use serde_json::{Value, json};

use crate::util::orchestra::{client, orchestra_with, task};

const PROVISION: &str = r#"
[workflow]
id = "provision-accounts"
name = "Provision accounts"
description = "Creates a mailbox and a laptop for a person"

[input]
name = { type = "string", required = true }
laptop = { type = "string", default = "standard" }

[steps.mailbox]
agent = "one"
message = "mailbox for {{ input.name }}"

[steps.laptop]
agent = "two"
needs = ["mailbox"]
message = "{{ input.laptop }} laptop for {{ input.name }}"

[output]
text = "{{ steps.mailbox.text }} / {{ steps.laptop.text }}"
"#;

const ONBOARD: &str = r#"
[workflow]
id = "onboard"
name = "Onboard"
description = "Onboards a person, provisioning their accounts"

[input]
name = { type = "string", required = true }

[steps.provision]
kind = "workflow"
workflow = "provision-accounts"
input = { name = "{{ input.name }}", laptop = "fast" }

[steps.welcome]
agent = "one"
needs = ["provision"]
message = "welcome {{ input.name }}: {{ steps.provision.text }}"
"#;

fn start(workflow: &str, input: Value) -> SendMessageRequest {
    let mut m = Message::user_text("");
    m.parts = vec![Part::data(
        json!({ "workflow": workflow, "input": input })
            .as_object()
            .unwrap()
            .clone(),
    )];
    SendMessageRequest::new(m)
}

fn run_of(t: &a2a::types::Task) -> Value {
    t.metadata.clone().unwrap().into_map()["run"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workflow_step_runs_its_workflow_as_a_linked_child_run() {
    let o = orchestra_with(&[PROVISION, ONBOARD], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let done = task(
        c.send_message(&start("onboard", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    let detail = run_of(&done);
    assert_eq!(done.status().state(), TaskState::Completed, "{detail:#}");
    let children = detail["children"].as_array().expect("children");
    assert_eq!(children.len(), 1, "{detail:#}");
    assert_eq!(children[0]["step"], "provision");
    let child_id = children[0]["run"].as_str().unwrap();
    let child = c
        .get_task(&GetTaskRequest::new(a2a::types::TaskId::new(child_id)))
        .await
        .unwrap();
    let child_detail = run_of(&child);
    assert_eq!(child_detail["workflow"], "provision-accounts");
    assert_eq!(child_detail["parent"]["run"], done.id.as_str());
    assert_eq!(child_detail["parent"]["step"], "provision");
    assert_eq!(child_detail["inputs"]["laptop"], "fast");
}

/// A retry of the parent from a later step keeps its workflow step, child run and all:
/// no second child is started, the kept step's result is the child's, and only the
/// steps after it run again.
#[tokio::test(flavor = "multi_thread")]
async fn a_parents_retry_keeps_its_completed_child() {
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("subworkflows-retry.db");
    let _ = std::fs::remove_file(&db);
    let store = format!("sqlite://{}", db.display());
    let o = orchestra_with(&[PROVISION, ONBOARD], 0, |c| {
        c.store = orchestrator_store::StoreSpec::parse(&store).unwrap();
    })
    .await;
    let (c, _) = client(&o.url).await;
    let first = task(
        c.send_message(&start("onboard", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(
        first.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&first)
    );
    let runs = || async {
        let (c, _) = client(&o.url).await;
        c.list_tasks(&Default::default()).await.unwrap().total_size as u64
    };
    assert_eq!(runs().await, 2, "the parent and its child");
    let agent_tasks = |i: usize| {
        let url = o.echo_agents[i].url.clone();
        async move {
            let (c, _) = client(&url).await;
            c.list_tasks(&Default::default()).await.unwrap().total_size as u64
        }
    };
    assert_eq!((agent_tasks(0).await, agent_tasks(1).await), (2, 1));

    let mut again = Message::user_text("again");
    again.metadata = Some(
        json!({ "retryOf": first.id.as_str(), "from": "welcome" })
            .as_object()
            .unwrap()
            .clone()
            .into(),
    );
    let retried = task(
        c.send_message(&SendMessageRequest::new(again))
            .await
            .unwrap(),
    );
    let detail = run_of(&retried);
    assert_eq!(retried.status().state(), TaskState::Completed, "{detail:#}");
    assert_eq!(detail["steps"][0]["step"], "provision");
    assert_eq!(
        detail["steps"][0]["message"],
        format!("kept from run {}", first.id)
    );
    assert_eq!(runs().await, 3, "the retry, and no second child");
    assert_eq!(
        (agent_tasks(0).await, agent_tasks(1).await),
        (3, 1),
        "only `welcome` was sent again"
    );
    assert_eq!(
        crate::util::orchestra::result_text(&retried),
        crate::util::orchestra::result_text(&first)
    );
}

const APPROVED: &str = r#"
[workflow]
id = "approved-laptop"
name = "Approved laptop"
description = "Orders a laptop once a manager approves it"

[input]
name = { type = "string", required = true }

[steps.approve]
kind = "approval"
prompt = "Approve a laptop for {{ input.name }}?"

[steps.order]
agent = "two"
needs = ["approve"]
when = "steps.approve.data.approved"
message = "laptop for {{ input.name }}"
"#;

const HIRE: &str = r#"
[workflow]
id = "hire"
name = "Hire"
description = "Hires a person, with an approved laptop"

[input]
name = { type = "string", required = true }

[steps.laptop]
kind = "workflow"
workflow = "approved-laptop"
input = { name = "{{ input.name }}" }
"#;

/// The child's question becomes the parent's: its task waits (input-required) with the
/// question, an answer sent to the parent's task reaches the child, and both complete.
#[tokio::test(flavor = "multi_thread")]
async fn a_childs_question_is_answered_through_the_parents_task() {
    let o = orchestra_with(&[APPROVED, HIRE], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let asked = task(
        c.send_message(&start("hire", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(
        asked.status().state(),
        TaskState::InputRequired,
        "{asked:#?}"
    );
    let question = asked
        .status()
        .message
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default();
    assert!(question.contains("Approve a laptop for Ada?"), "{question}");
    let mut answer = Message::user_text("yes");
    answer.task_id = asked.id.clone();
    let done = task(
        c.send_message(&SendMessageRequest::new(answer))
            .await
            .unwrap(),
    );
    assert_eq!(
        done.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&done)
    );
    let child_id = run_of(&done)["children"][0]["run"]
        .as_str()
        .unwrap()
        .to_owned();
    let child = c
        .get_task(&GetTaskRequest::new(a2a::types::TaskId::new(child_id)))
        .await
        .unwrap();
    assert_eq!(child.status().state(), TaskState::Completed);
    let order = (run_of(&child)["steps"].as_array().unwrap().iter())
        .find(|s| s["step"] == "order")
        .cloned()
        .unwrap();
    assert_eq!(order["state"], "completed", "{order:#}");
}

/// A cancel of the parent's task cancels the child run it waits on.
#[tokio::test(flavor = "multi_thread")]
async fn a_parents_cancel_cancels_its_child() {
    let o = orchestra_with(&[APPROVED, HIRE], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let asked = task(
        c.send_message(&start("hire", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(asked.status().state(), TaskState::InputRequired);
    let child_id = run_of(&asked)["children"][0]["run"]
        .as_str()
        .unwrap()
        .to_owned();
    c.cancel_task(&CancelTaskRequest::new(asked.id.clone()))
        .await
        .unwrap();
    let get = GetTaskRequest::new(a2a::types::TaskId::new(child_id));
    for _ in 0..100 {
        let child = c.get_task(&get).await.unwrap();
        if child.status().state() == TaskState::Canceled {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the child run was not canceled");
}

/// Problems across workflows are found when they are loaded, each at the step's place:
/// a workflow that is not loaded, an input it does not declare, one it requires and is
/// not given, and a chain of workflow steps that comes back to where it started.
#[test]
fn workflow_steps_are_checked_against_the_workflows_they_run() {
    use orchestrator_core::workflow::{Options, load_all};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("subworkflows-checks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("provision.toml", PROVISION);
    write(
        "a.toml",
        r#"[workflow]
id = "a"
description = "runs b"
[steps.to_b]
kind = "workflow"
workflow = "b"
"#,
    );
    write(
        "b.toml",
        r#"[workflow]
id = "b"
description = "runs a, and provisions wrongly"
[steps.to_a]
kind = "workflow"
workflow = "a"
[steps.provision]
kind = "workflow"
workflow = "provision-accounts"
input = { nmae = "Ada" }
[steps.missing]
kind = "workflow"
workflow = "provision-acounts"
"#,
    );
    let (loaded, extra) = load_all(std::slice::from_ref(&dir), Options::default());
    assert!(
        loaded.iter().all(|l| l.workflow.is_some()),
        "each file alone is valid"
    );
    let said: Vec<String> = extra.iter().map(|d| d.to_string()).collect();
    let has = |needle: &str| said.iter().any(|s| s.contains(needle));
    assert!(
        has(
            "b.toml:10:18: error: step `provision` gives workflow `provision-accounts` the input `nmae`, which it does not declare (did you mean `name`?)"
        ),
        "{said:#?}"
    );
    assert!(
        has(
            "b.toml:9:12: error: step `provision` runs workflow `provision-accounts` without its required input(s) `name`: give them in `input`"
        ),
        "{said:#?}"
    );
    assert!(
        has(
            "b.toml:13:12: error: step `missing` runs workflow `provision-acounts`, which is not loaded (did you mean `provision-accounts`?)"
        ),
        "{said:#?}"
    );
    assert_eq!(
        said.iter()
            .filter(|s| s.contains("leads back to it"))
            .count(),
        1,
        "one cycle, said once: {said:#?}"
    );
    assert!(
        has("runs workflow `a`, which leads back to it: a workflow cannot run itself (a → b → a)")
            || has(
                "runs workflow `b`, which leads back to it: a workflow cannot run itself (b → a → b)"
            ),
        "{said:#?}"
    );
}

/// A parent waiting on its child's question survives a SIGKILL of `serve`: started again
/// on the same SQLite store, both resume, the answer given on the parent's task at once
/// (while the resumed runs ask again) reaches the child, and both complete.
#[tokio::test(flavor = "multi_thread")]
async fn a_parent_and_its_child_resume_after_a_sigkill() {
    use crate::util::orchestra::{ServeDir, spawn_serve};
    let two = crate::util::echo(0).await;
    let dir = ServeDir::new(
        "subworkflows-kill",
        &[("laptop.toml", APPROVED), ("hire.toml", HIRE)],
        &[("two", &two.url)],
    );
    let store = format!("sqlite://{}", dir.dir.join("o.db").display());
    let args = dir.args(&["--store", &store]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut first, url) = spawn_serve(&args, &[]).await;
    let (c, _) = client(&url).await;
    let asked = task(
        c.send_message(&start("hire", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(
        asked.status().state(),
        TaskState::InputRequired,
        "{:#}",
        run_of(&asked)
    );
    let child_id = run_of(&asked)["children"][0]["run"]
        .as_str()
        .unwrap()
        .to_owned();
    first.start_kill().unwrap();
    first.wait().await.unwrap();

    let (_second, url) = spawn_serve(&args, &[]).await;
    let (c, _) = client(&url).await;
    let mut answer = Message::user_text("yes");
    answer.task_id = asked.id.clone();
    let done = task(
        c.send_message(&SendMessageRequest::new(answer))
            .await
            .unwrap(),
    );
    assert_eq!(
        done.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&done)
    );
    let child = c
        .get_task(&GetTaskRequest::new(a2a::types::TaskId::new(child_id)))
        .await
        .unwrap();
    assert_eq!(
        child.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&child)
    );
}

/// The same on two replicas of one PostgreSQL database: the replica that runs a parent
/// waiting on its child's question is killed; the other takes both over, the answer
/// given through it on the parent's task reaches the child, and both complete — the
/// laptop ordered once.
#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn a_parent_and_its_child_are_taken_over_by_another_replica() {
    use crate::util::orchestra::{ServeDir, spawn_serve_logging};
    let pg = crate::util::postgres::Cluster::shared();
    let seen: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u32>>> =
        Default::default();
    let calls = crate::util::counting::Calls::default();
    let two = crate::util::counting::counting_calls(
        "two",
        std::time::Duration::from_millis(10),
        &seen,
        &calls,
    )
    .await;
    let dir = ServeDir::new(
        "subworkflows-takeover",
        &[("laptop.toml", APPROVED), ("hire.toml", HIRE)],
        &[("two", &two)],
    );
    let store = pg.database("subworkflows_takeover").await;
    let args = dir.args(&["--store", &store, "--lease", "1500ms"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut replicas = Vec::new();
    for i in 0..2 {
        let info = [("RUST_LOG", "a2a_orchestrator=info")];
        replicas.push(spawn_serve_logging(&args, &info, dir.log_file(i)).await);
    }
    let log = |i: usize| dir.log(i);
    let (c, _) = client(&replicas[0].1).await;
    let asked = task(
        c.send_message(&start("hire", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(
        asked.status().state(),
        TaskState::InputRequired,
        "{:#}",
        run_of(&asked)
    );
    let child_id = run_of(&asked)["children"][0]["run"]
        .as_str()
        .unwrap()
        .to_owned();
    let (mut first, _) = replicas.remove(0);
    first.start_kill().unwrap();
    first.wait().await.unwrap();

    let (c, _) = client(&replicas[0].1).await;
    let mut answer = Message::user_text("yes");
    answer.task_id = asked.id.clone();
    let sent = c.send_message(&SendMessageRequest::new(answer)).await;
    assert!(sent.is_ok(), "{sent:?}\nreplica 1:\n{}", log(1));
    let mut done = None;
    for _ in 0..200 {
        let t = c
            .get_task(&GetTaskRequest::new(asked.id.clone()))
            .await
            .unwrap();
        let ended = t.status().state().is_terminal();
        done = Some(t);
        if ended {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let done = done.unwrap();
    if !done.status().state().is_terminal() {
        let child = (c
            .get_task(&GetTaskRequest::new(a2a::types::TaskId::new(
                child_id.clone(),
            )))
            .await)
            .unwrap();
        panic!(
            "the parent did not end: {:?} {:#}\nchild {:?} {:#}\nsent {sent:?}\nreplica 1:\n{}",
            done.status().state(),
            run_of(&done),
            child.status().state(),
            run_of(&child),
            log(1)
        );
    }
    assert_eq!(
        done.status().state(),
        TaskState::Completed,
        "{:#}\nreplica 1:\n{}",
        run_of(&done),
        log(1)
    );
    let child = c
        .get_task(&GetTaskRequest::new(a2a::types::TaskId::new(child_id)))
        .await
        .unwrap();
    assert_eq!(
        child.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&child)
    );
    let counts: Vec<u32> = seen.lock().unwrap().values().copied().collect();
    assert_eq!(counts, [1], "the laptop was ordered once");
}

/// A child's question is listed in the inbox once, as the child's (its approvers are
/// the child's), naming the parent's run and step it holds up — not a second time as
/// the parent's.
#[tokio::test(flavor = "multi_thread")]
async fn a_childs_question_is_in_the_inbox_once_as_the_parents() {
    let o = orchestra_with(&[APPROVED, HIRE], 0, |_| {}).await;
    let (c, _) = client(&o.url).await;
    let asked = task(
        c.send_message(&start("hire", json!({ "name": "Ada" })))
            .await
            .unwrap(),
    );
    assert_eq!(asked.status().state(), TaskState::InputRequired);
    let inbox: Value = crate::util::http()
        .get(format!("{}inbox", o.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(inbox["count"], 1, "{inbox:#}");
    let q = &inbox["questions"][0];
    let child = run_of(&asked)["children"][0]["run"].clone();
    assert_eq!(
        (&q["run"], &q["workflow"], &q["kind"]),
        (&child, &json!("approved-laptop"), &json!("approval")),
        "{inbox:#}"
    );
    assert_eq!(
        q["parent"],
        json!({ "run": asked.id.as_str(), "step": "laptop", "item": null })
    );
    // Answered where the inbox says (the child's task), the parent goes on too.
    let mut yes = Message::user_text("yes");
    yes.task_id = child.as_str().unwrap().to_owned();
    task(c.send_message(&SendMessageRequest::new(yes)).await.unwrap());
    let mut parent = None;
    for _ in 0..100 {
        let t = (c.get_task(&GetTaskRequest::new(asked.id.clone())).await).unwrap();
        let ended = t.status().state().is_terminal();
        parent = Some(t);
        if ended {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let parent = parent.unwrap();
    assert_eq!(
        parent.status().state(),
        TaskState::Completed,
        "{:#}",
        run_of(&parent)
    );
}

//! `a2a-orchestrator test` as a workflow author runs it: the shipped workflows' tests,
//! a wrong expectation, a broken test file, JUnit for CI, and what scripted agents do
//! (questions, outages, rejections, delays) on virtual time.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use a2a_orchestrator::testmode::{file, run};

use crate::util::ROOT;

fn orchestrator(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(args)
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A directory of its own for `name`, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("testmode")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn workflows() -> PathBuf {
    Path::new(ROOT).join("workflows")
}

#[test]
fn the_shipped_workflows_tests_pass_and_a_day_long_wait_takes_no_time() {
    let out = orchestrator(&["test"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for test in [
        "onboarding-happy-path",
        "onboarding-no-desk",
        "onboarding-laptop-rejected",
        "travel-one-tour-sold-out",
    ] {
        assert!(said.contains(&format!("test {test} ... ok")), "{said}");
    }
    // The approval's 24 hours passed, and its escalation's 24 more, on the clock the
    // run saw.
    assert!(
        said.contains("test onboarding-laptop-unanswered ... ok (2d of virtual time)"),
        "{said}"
    );
    assert!(
        said.contains("test onboarding-laptop-escalated ... ok (1d3h of virtual time)"),
        "{said}"
    );
    assert!(said.contains("6 test(s): 6 passed, 0 failed"), "{said}");
    // `validate` reads them too.
    let out = orchestrator(&["validate", "--offline", "workflows"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("4 workflow file(s) and 6 test file(s) checked: 0 error(s)"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_wrong_expectation_fails_with_its_path_line_and_both_values_and_junit_says_so() {
    let dir = scratch("wrong");
    let shipped =
        std::fs::read_to_string(workflows().join("tests/onboarding-happy-path.test.toml")).unwrap();
    let wrong = shipped.replace(
        "\"steps.assign_desk.data.desk\" = \"3F-12\"",
        "\"steps.assign_desk.data.desk\" = \"4F-1\"",
    );
    assert_ne!(wrong, shipped);
    std::fs::write(dir.join("wrong.test.toml"), &wrong).unwrap();
    let line = wrong.lines().position(|l| l.contains("4F-1")).unwrap() + 1;
    let junit = dir.join("junit.xml");
    let out = orchestrator(&[
        "test",
        dir.to_str().unwrap(),
        "--workflows",
        "workflows",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("test wrong ... FAILED"), "{said}");
    assert!(
        said.contains(&format!(
            "steps.assign_desk.data.desk (line {line}):\n      expected \"4F-1\"\n      got      \"3F-12\""
        )),
        "{said}"
    );
    assert!(said.contains("1 test(s): 0 passed, 1 failed"), "{said}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testcase name=\"wrong\" classname=\"employee-onboarding\""),
        "{xml}"
    );
    assert!(xml.contains("<failure message=\"steps.assign_desk.data.desk: expected &quot;4F-1&quot;, got &quot;3F-12&quot;\""), "{xml}");
    // --filter picks tests by name.
    let out = orchestrator(&["test", dir.to_str().unwrap(), "--filter", "nothing-matches"]);
    assert!(
        text(&out).contains("0 test(s): 0 passed, 0 failed"),
        "{}",
        text(&out)
    );
}

/// JUnit read by a real XML parser (Python's), as a CI system reads it.
#[ignore = "needs Python: the full suite, `cargo xtask test`"]
#[test]
fn junit_reads_as_xml_with_every_test_and_each_failure() {
    let dir = scratch("junit");
    let shipped =
        std::fs::read_to_string(workflows().join("tests/onboarding-no-desk.test.toml")).unwrap();
    // A name XML must escape, and a failure.
    let wrong = shipped
        .replace(
            "[test]\n",
            "[test]\nname = \"no <desk> & \\\"quotes\\\"\"\n",
        )
        .replace(
            "\"steps.assign_desk.attempts\" = 3",
            "\"steps.assign_desk.attempts\" = 2",
        );
    std::fs::write(dir.join("a.test.toml"), wrong).unwrap();
    std::fs::copy(
        workflows().join("tests/travel-one-tour-sold-out.test.toml"),
        dir.join("b.test.toml"),
    )
    .unwrap();
    let junit = dir.join("junit.xml");
    let out = orchestrator(&[
        "test",
        dir.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let script = r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
assert suite.get("tests") == "2" and suite.get("failures") == "1", suite.attrib
cases = {c.get("name"): c for c in suite.findall("testcase")}
assert set(cases) == {'no <desk> & "quotes"', "b"}, cases  # a name, else the file's
failure = cases['no <desk> & "quotes"'].find("failure")
assert "steps.assign_desk.attempts" in failure.get("message"), failure.attrib
assert "expected 2" in failure.text and "got      3" in failure.text, failure.text
assert cases["b"].find("failure") is None
assert cases["b"].get("classname") == "travel-planning"
print("ok")
"#;
    let parsed = std::process::Command::new("python3")
        .args(["-c", script, junit.to_str().unwrap()])
        .output()
        .expect("python3 runs");
    assert!(parsed.status.success(), "{}", text(&parsed));
}

#[test]
fn a_broken_test_file_says_every_problem_at_its_line_and_exits_2() {
    let dir = scratch("broken");
    std::fs::write(
        dir.join("broken.test.toml"),
        r#"[test]
workflow = "employee-onboarding"
input = { name = "Ada", role = "astronaut", start_date = "2027-01-04" }

[agents.hr]
replies = [{ text = "ok" }, { txt = "x" }]

[answers]
approve_lptop = { approve = true }

[expect]
stpes = "completed"
"output.text" = { contain = "x" }
"#,
    )
    .unwrap();
    let out = orchestrator(&["test", dir.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    let file = dir.join("broken.test.toml").display().to_string();
    for problem in [
        format!("{file}:3:9: error: input `role`"),
        format!(
            "{file}:6:31: error: unknown key `txt` in reply 2 of [agents.hr] (did you mean `text`?)"
        ),
        format!(
            "{file}:2:12: error: step `mailbox` of workflow `provision-accounts` (which step `provision_accounts` runs) calls skill create-email-account, which the test does not script: give an agent `skills = [\"create-email-account\"]`, or add [steps.provision_accounts] with `replies` to script the whole child run"
        ),
        format!(
            "{file}:9:1: error: [answers]: workflow `employee-onboarding` has no step `approve_lptop` (did you mean `approve_laptop`?)"
        ),
        format!("{file}:12:1: error: `stpes`: a run has no `stpes` (did you mean `steps`?)"),
        format!("{file}:13:17: error: `output.text`: `contain` is not a check"),
    ] {
        assert!(said.contains(&problem), "{problem}\nin\n{said}");
    }
    assert!(said.contains("1 test file(s) invalid"), "{said}");
}

/// Loads a test written here against a workflow written here.
/// Asserts `outcome` passed (`what`: which of several cases), showing why not.
fn assert_passed(what: &str, outcome: &run::Outcome) {
    assert!(
        outcome.passed(),
        "{what}: {:?} {:?}\n{:#}",
        outcome.broken,
        outcome.misses,
        outcome.doc
    );
}

fn case(dir: &Path, workflow: &str, test: &str) -> Arc<file::TestCase> {
    std::fs::write(dir.join("w.toml"), workflow).unwrap();
    std::fs::write(dir.join("t.test.toml"), test).unwrap();
    let (case, diags) = file::load(&dir.join("t.test.toml"), dir);
    let problems: Vec<String> = diags.iter().map(ToString::to_string).collect();
    Arc::new(case.unwrap_or_else(|| panic!("{}", problems.join("\n"))))
}

const ASKING: &str = r#"
[workflow]
id = "asking"
name = "Asking"
description = "An agent that asks, one that may be down, one that rejects"

[defaults]
retry = { max_attempts = 3, backoff = "fixed", initial = "10m", max = "10m" }

[steps.quote]
agent = "sales"
message = "Quote for {{ input.customer }}"

[steps.ship]
agent = "shipping"
needs = ["quote"]
message = "Ship {{ steps.quote.data.total }}"

[steps.audit]
agent = "audit"
continue_on_error = true
message = "Audit"

[input]
customer = { type = "string", required = true }

[output]
text = "{{ steps.quote.text }} / {{ steps.ship.text }}"
"#;

const ASKED: &str = r#"
[test]
workflow = "asking"
input = { customer = "ACME" }

[agents.sales]
replies = [
  { ask = "Which currency?" },
  { delay = "1h", text = "Quote: 100 EUR", data = { total = 100 } },
]

[answers]
quote = { text = "EUR", delay = "30m" }

[agents.shipping]
replies = [{ down = "connection refused" }, { down = "connection refused" }, { text = "Shipped" }]

[agents.audit]
replies = [{ reject = "not my job" }]

[expect]
state = "completed"
"output.text" = "Quote: 100 EUR / Shipped"
"sent.sales" = { count = 2 }
"sent.sales[1].text" = "EUR"
"sent.sales[1].task_id" = "sales-task-1"
"sent.shipping[0].text" = "Ship 100"
"steps.ship.attempts" = 3
"steps.audit.state" = "rejected"
"answers.quote[0].taken" = true
"#;

#[tokio::test]
async fn scripted_agents_ask_fail_reject_and_wait_on_virtual_time_the_same_way_every_run() {
    let dir = scratch("asking");
    let case = case(&dir, ASKING, ASKED);
    let first = run::run(case.clone()).await;
    assert!(first.passed(), "{:?}\n{:#}", first.misses, first.doc);
    // The answer after 30 minutes, the quote an hour after it, two retries 10 minutes
    // apart: 1h50m the run saw, in no time.
    assert_eq!(
        first.virtual_time.as_secs(),
        6600,
        "{:?}",
        first.virtual_time
    );
    for _ in 0..9 {
        let again = run::run(case.clone()).await;
        assert_eq!(again.doc, first.doc);
        assert_eq!(again.virtual_time, first.virtual_time);
    }
}

#[tokio::test]
async fn a_run_that_never_ends_is_stopped_at_the_tests_timeout_saying_what_it_waits_on() {
    let dir = scratch("stuck");
    let workflow = r#"
[workflow]
id = "stuck"
name = "Stuck"
description = "Waits for an answer nobody gives"

[steps.ok]
kind = "approval"
prompt = "OK?"
timeout = "90d"
"#;
    let test = r#"
[test]
workflow = "stuck"
timeout = "2d"

[expect]
state = "completed"
"#;
    let case = case(&dir, workflow, test);
    let outcome = run::run(case).await;
    assert!(!outcome.passed());
    let why = outcome.broken.expect("broken");
    assert!(
        why.contains("had not ended after 2d of virtual time (waiting on `ok`)"),
        "{why}"
    );
}

#[test]
fn expectations_nest_as_tables_or_dotted_keys() {
    let dir = scratch("nested");
    let test = ASKED.replace(
        "[expect]\nstate = \"completed\"",
        "[expect]\nstate = \"completed\"\nsteps.audit.message = { contains = \"not my job\" }",
    ) + "\n[expect.steps.quote]\nattempts = 1\n";
    let case = case(&dir, ASKING, &test);
    let paths: Vec<&str> = case.expect.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"steps.audit.message"), "{paths:?}");
    assert!(paths.contains(&"steps.quote.attempts"), "{paths:?}");
}

/// Issue 79: a run against real agents (the example travel agents on loopback),
/// recorded with `run --record`, replays green with `test`: the agents' answers (the
/// hotel's question among them) and the answer given, on scripted agents.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_recorded_from_real_agents_replays_green() {
    use a2a_orchestrator::agents::{Behaviour, Fleet, Set};
    let behaviour = Behaviour {
        latency: std::time::Duration::from_millis(5),
        chunk_delay: std::time::Duration::from_millis(2),
        ..Behaviour::default()
    };
    let fleet = Fleet::start(&[Set::Travel], behaviour, "127.0.0.1", true)
        .await
        .unwrap();
    let dir = scratch("recorded");
    let agents = dir.join("agents.toml");
    std::fs::write(&agents, fleet.agents_toml()).unwrap();
    let recorded = dir.join("trip.test.toml");
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args([
            "run",
            "travel-planning",
            "--agents",
            agents.to_str().unwrap(),
        ])
        .args([
            "-i",
            "origin=Paris",
            "-i",
            "destination=Tokyo",
            "-i",
            "depart=2027-04-01",
        ])
        .args([
            "--answer",
            "hotel=1",
            "--json",
            "--record",
            recorded.to_str().unwrap(),
        ])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    fleet.shutdown().await;
    let file = std::fs::read_to_string(&recorded).unwrap();
    for part in [
        "workflow = \"travel-planning\"",
        "input = { depart = \"2027-04-01\", destination = \"Tokyo\", origin = \"Paris\" }",
        "[steps.hotel]\nreplies = [\n  { ask = ",
        "[answers]\nhotel = [{ text = \"1\" }]",
        "state = \"completed\"",
        "\"steps.book_tours.state\" = \"completed\"",
    ] {
        assert!(file.contains(part), "{part:?} in\n{file}");
    }
    let out = orchestrator(&["test", recorded.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{file}", text(&out));
    assert!(text(&out).contains("test trip ... ok"), "{}", text(&out));
}

/// Issue 80: a run counts what its agents report they used, step by step and in all,
/// and past its workflow's budget it fails, naming the bound and the step, and what
/// still runs is canceled.
#[tokio::test]
async fn a_run_past_its_budget_fails_at_the_step_that_passed_it_and_cancels_the_rest() {
    let dir = scratch("budget");
    let workflow = r#"
[workflow]
id = "priced"
name = "Priced"
description = "Two paid steps in a row, and a slow one beside them"
budget = { cost = 1.0, tokens = 100000 }

[steps.draft]
agent = "writer"
message = "Draft"

[steps.review]
agent = "reviewer"
needs = ["draft"]
message = "Review"

[steps.slow]
agent = "slow"
message = "Take your time"
timeout = "1d"
"#;
    let test = r#"
[test]
workflow = "priced"

[agents.writer]
replies = [{ delay = "1m", text = "a draft", usage = { input_tokens = 1000, output_tokens = 4000, cost = 0.6 } }]

[agents.reviewer]
replies = [{ delay = "1m", text = "reviewed", usage = { input_tokens = 4000, output_tokens = 500, cost = 0.5 } }]

[agents.slow]
replies = [{ delay = "10h", text = "done at last" }]

[expect]
state = "failed"
error = "budget exceeded: cost 1.1000 > 1 at step `review`"
"usage.cost" = 1.1
"usage.calls" = 3
"usage.inputTokens" = 5000
"steps.draft.usage.outputTokens" = 4000
"steps.draft.state" = "completed"
"steps.slow.state" = "canceled"
"#;
    let case = case(&dir, workflow, test);
    let outcome = run::run(case).await;
    assert_passed("", &outcome);
    // Stopped when the review passed the budget, not when the slow step would end.
    assert_eq!(
        outcome.virtual_time.as_secs(),
        120,
        "{:?}",
        outcome.virtual_time
    );
}

/// Who may start a workflow is decided as `serve` decides it: a starter its `allow`
/// does not name is refused and nothing runs; an agent may cancel its own task.
#[tokio::test]
async fn a_starter_the_workflow_does_not_allow_is_refused_and_an_agent_may_cancel() {
    let dir = scratch("allow");
    let workflow = r#"
[workflow]
id = "guarded"
name = "Guarded"
description = "For HR only"
allow = ["group:hr"]

[steps.ask]
agent = "desk"
message = "Please"
continue_on_error = true
"#;
    let refused = r#"
[test]
workflow = "guarded"
as = "group:sales"

[agents.desk]
replies = [{ text = "never asked" }]

[expect]
state = "refused"
error = "group:sales may not start workflow `guarded`: it is for group:hr"
"#;
    let outcome = run::run(case(&dir, workflow, refused)).await;
    assert!(outcome.passed(), "{:?}\n{:#}", outcome.misses, outcome.doc);
    let canceled = r#"
[test]
workflow = "guarded"
as = ["sub:ada", "group:hr"]

[agents.desk]
replies = [{ cancel = "the desk closed the ticket" }]

[expect]
state = "completed"
"steps.ask.state" = "failed"
"steps.ask.message" = "the agent canceled the task: the desk closed the ticket"
"sent.desk" = { count = 1 }
"#;
    let outcome = run::run(case(&dir, workflow, canceled)).await;
    assert!(outcome.passed(), "{:?}\n{:#}", outcome.misses, outcome.doc);
}

const DRAFTING: &str = r#"
[workflow]
id = "drafting"
name = "Drafting"
description = "Three paid steps in a row, on a budget its approvers may extend"
budget = { cost = 1.0 }

[steps.draft]
agent = "writer"
message = "Draft"

[steps.review]
agent = "reviewer"
needs = ["draft"]
message = "Review"

[steps.publish]
agent = "publisher"
needs = ["review"]
message = "Publish"

[steps.more_budget]
kind = "approval"
on_budget = "ask"
prompt = "Allow another 0.50?"
extend = { cost = 0.5 }
"#;

/// `DRAFTING`'s test: the writer and reviewer cost 0.6 and 0.5, the publisher `publish`;
/// the budget's approval is answered `answers` in turn.
fn drafting(publish: f64, answers: &str, expect: &str) -> String {
    format!(
        r#"
[test]
workflow = "drafting"

[agents.writer]
replies = [{{ text = "a draft", usage = {{ cost = 0.6 }} }}]

[agents.reviewer]
replies = [{{ text = "reviewed", usage = {{ cost = 0.5 }} }}]

[agents.publisher]
replies = [{{ text = "published", usage = {{ cost = {publish} }} }}]

[answers]
more_budget = [{answers}]

[expect]
{expect}
"#
    )
}

/// Issue 80: `on_budget = "ask"`. Past its budget the run asks the approval instead of
/// failing, starting nothing new meanwhile; approved, the budget grows by `extend` and
/// the run goes on (asked again if it is still past it); refused, the run fails on its
/// budget saying so. Each time it is asked is an item of the step.
#[tokio::test]
async fn a_run_past_its_budget_asks_to_extend_it_and_goes_on_or_fails_as_answered() {
    let dir = scratch("budget-ask");
    let approve = "{ data = { approved = true } }";
    let refuse = "{ data = { approved = false } }";
    for (name, publish, answers, expect) in [
        (
            "extended once",
            0.3,
            approve.to_owned(),
            r#"state = "completed"
"usage.cost" = 1.4
"steps.more_budget.state" = "completed"
"steps.more_budget.items" = { count = 1 }
"steps.publish.state" = "completed"
"answers.more_budget[0].taken" = true"#,
        ),
        (
            "refused",
            0.3,
            refuse.to_owned(),
            r#"state = "failed"
error = "budget exceeded: cost 1.1000 > 1 at step `review`; the budget was not extended: it was not approved"
"steps.more_budget.state" = "rejected"
"steps.publish.state" = "skipped"
"sent.publisher" = { absent = true }"#,
        ),
        (
            "extended, then passed again and refused",
            0.6,
            format!("{approve}, {refuse}"),
            r#"state = "failed"
error = "budget exceeded: cost 1.7000 > 1.5 at step `publish`; the budget was not extended: it was not approved"
"steps.more_budget.items" = { count = 2 }
"steps.publish.state" = "completed"
"answers.more_budget[1].taken" = true"#,
        ),
    ] {
        let case = case(&dir, DRAFTING, &drafting(publish, &answers, expect));
        let outcome = run::run(case).await;
        assert_passed(name, &outcome);
    }
}

const REVISING: &str = r#"
[workflow]
id = "revising"
name = "Revising"
description = "Draft, then revise until the reviewer approves"

[steps.draft]
agent = "writer"
message = "Draft {{ iteration }}{% if steps.draft %}, after: {{ steps.draft.data.notes }}{% endif %}"
repeat_until = "steps.draft.data.approved"
max_repeats = 3

[steps.publish]
agent = "publisher"
needs = ["draft"]
message = "Publish draft {{ steps.draft.passes | length }}: {{ steps.draft.text }}"
"#;

fn revising(writer: &str, expect: &str, extra: &str) -> (String, String) {
    let workflow = REVISING.replace("max_repeats = 3", &format!("max_repeats = 3\n{extra}"));
    let test = format!(
        r#"
[test]
workflow = "revising"

[agents.writer]
replies = [{writer}]

[agents.publisher]
replies = [{{ text = "published" }}]

[expect]
{expect}
"#
    );
    (workflow, test)
}

/// Issue 78: bounded loops. A step with `repeat_until` runs pass after pass — each seeing
/// `iteration` and the pass before as `steps.<id>` — until its condition holds of the
/// pass that ended, its result then the last pass's with every pass under `passes`; at
/// `max_repeats` it fails saying so, or completes with `on_max_repeats = "continue"`.
#[tokio::test]
async fn a_loop_ends_by_its_condition_or_at_its_bound() {
    let dir = scratch("loops");
    let no = r#"{ text = "v1", data = { approved = false, notes = "too long" } }"#;
    let yes = r#"{ text = "v2", data = { approved = true } }"#;
    for (name, writer, extra, expect) in [
        (
            "approved on the second pass",
            format!("{no}, {yes}"),
            "",
            r#"state = "completed"
"steps.draft.state" = "completed"
"steps.draft.passes" = { count = 2 }
"steps.draft.passes[0].data.approved" = false
"sent.writer[0].text" = "Draft 1"
"sent.writer[1].text" = "Draft 2, after: too long"
"sent.publisher[0].text" = "Publish draft 2: v2""#,
        ),
        (
            "never approved",
            no.to_owned(),
            "",
            r#"state = "failed"
"steps.draft.state" = "failed"
"steps.draft.error" = "`repeat_until` was still false after 3 passes (`max_repeats = 3`)"
"steps.draft.passes" = { count = 3 }
"steps.publish.state" = "upstream_failed""#,
        ),
        (
            "never approved, and that will do",
            no.to_owned(),
            "on_max_repeats = \"continue\"",
            r#"state = "completed"
"sent.writer" = { count = 3 }
"sent.publisher[0].text" = "Publish draft 3: v1""#,
        ),
    ] {
        let (workflow, test) = revising(&writer, expect, extra);
        let case = case(&dir, &workflow, &test);
        let outcome = run::run(case).await;
        assert_passed(name, &outcome);
    }
}

/// Issue 78: a loop's passes survive a restart: those that ended are kept (their
/// messages not sent again), the one whose message's fate the restart left unknown sends
/// it again (with the same message id, which a real agent knows; the script answers it
/// anew), and the loop goes on to its end.
#[tokio::test(start_paused = true)]
async fn a_loops_passes_survive_a_restart() {
    use a2a_orchestrator::testmode::script::ScriptedAgents;
    use orchestrator_core::engine::{
        Engine, EngineOptions, MemoryRunStore, RunEvent, RunState, RunStore, StepState,
    };
    let dir = scratch("loop-resume");
    let no = r#"{ delay = "1h", text = "v1", data = { approved = false, notes = "shorter" } }"#;
    let yes = r#"{ delay = "1h", text = "v3", data = { approved = true } }"#;
    let (workflow, test) = revising(&format!("{no}, {no}, {yes}"), "state = \"completed\"", "");
    let case = case(&dir, &workflow, &test);
    let store = Arc::new(MemoryRunStore::new());
    let agents = Arc::new(ScriptedAgents::new(&case));
    let engine = || Engine::new(agents.clone(), EngineOptions::default()).with_store(store.clone());
    let first = engine();
    let mut run = first
        .start(case.workflow.clone(), &case.input, "r-1".into())
        .unwrap();
    // Stopped once the second pass's message is sent (its call counted).
    loop {
        if let RunEvent::Usage {
            step,
            item: Some(1),
            ..
        } = run.events.recv().await.expect("the run goes on")
            && step.as_str() == "draft"
        {
            break;
        }
    }
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    run.control.halt();
    let saved = store.load_run("r-1").await.unwrap().expect("stored");
    let second = engine();
    let mut run = second.resume(case.workflow.clone(), saved);
    while run.events.recv().await.is_some() {}
    let detail = run.control.read(|told| told.detail().clone());
    assert_eq!(detail.state, RunState::Completed, "{detail:#?}");
    let passes: Vec<_> = (detail.steps.iter())
        .filter(|s| s.step == "draft" && s.item.is_some())
        .map(|s| s.state)
        .collect();
    assert_eq!(passes, [StepState::Completed; 2], "{detail:#?}");
    let sent: Vec<String> = agents.sent()["writer"]
        .iter()
        .map(|s| s.to_json()["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        sent,
        [
            "Draft 1",
            "Draft 2, after: shorter",
            "Draft 2, after: shorter"
        ],
        "the first pass's message sent once, the second's again after the restart"
    );
}

/// Issue 78: a workflow step in a test runs its workflow for real, on the test's
/// scripted agents: its question is the parent step's, answered by `[answers]` for it
/// (and judged by the child's approvers), its result the step's.
#[tokio::test]
async fn a_workflow_step_runs_its_child_for_real_in_a_test() {
    let dir = scratch("child");
    std::fs::write(
        dir.join("laptop.toml"),
        r#"
[workflow]
id = "approved-laptop"
name = "Approved laptop"
description = "Orders a laptop once an IT manager approves it"

[input]
name = { type = "string", required = true }

[steps.approve]
kind = "approval"
prompt = "Approve a laptop for {{ input.name }}?"
approvers = ["group:it-managers"]

[steps.order]
agent = "it"
needs = ["approve"]
when = "steps.approve.data.approved"
message = "laptop for {{ input.name }}"

[output]
text = "{{ steps.order.text }}"
"#,
    )
    .unwrap();
    let workflow = r#"
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

[steps.welcome]
agent = "hr"
needs = ["laptop"]
message = "welcome {{ input.name }}: {{ steps.laptop.text }}"
"#;
    for (answer, expect) in [
        (
            r#"{ approve = true, as = "group:it-managers" }"#,
            r#"state = "completed"
"steps.laptop.text" = "ordered"
"sent.hr[0].text" = "welcome Ada: ordered"
"sent.it[0].text" = "laptop for Ada"
"answers.laptop[0].taken" = true"#,
        ),
        (
            r#"{ approve = true, as = "group:sales" }"#,
            r#"state = "failed"
"answers.laptop[0].taken" = true
"sent.it" = { absent = true }"#,
        ),
    ] {
        let test = format!(
            r#"
[test]
workflow = "hire"
input = {{ name = "Ada" }}
timeout = "2d"

[agents.it]
replies = [{{ text = "ordered" }}]

[agents.hr]
replies = [{{ text = "welcomed" }}]

[answers]
laptop = {answer}

[expect]
{expect}
"#
        );
        let case = case(&dir, workflow, &test);
        let outcome = run::run(case).await;
        assert_passed(answer, &outcome);
    }
}

/// Issue 80: each attempt's usage is kept apart as well as added up: a step that
/// failed once (after its agent reported what it used) and then completed says what
/// each attempt used.
#[tokio::test]
async fn each_attempts_usage_is_kept() {
    let dir = scratch("usage-attempts");
    let workflow = r#"
[workflow]
id = "twice"
name = "Twice"
description = "A step that fails once"

[defaults]
retry = { max_attempts = 2, backoff = "fixed", initial = "1m", max = "1m" }

[steps.draft]
agent = "writer"
message = "Draft"
"#;
    let test = r#"
[test]
workflow = "twice"

[agents.writer]
replies = [
  { fail = "out of ink", usage = { input_tokens = 100, output_tokens = 10 } },
  { text = "a draft", usage = { input_tokens = 120, output_tokens = 40 } },
]

[expect]
state = "completed"
"steps.draft.usage.inputTokens" = 220
"steps.draft.usage.calls" = 2
"steps.draft.usageByAttempt" = { count = 2 }
"steps.draft.usageByAttempt[0].inputTokens" = 100
"steps.draft.usageByAttempt[1].outputTokens" = 40
"#;
    let case = case(&dir, workflow, test);
    let outcome = run::run(case).await;
    assert_passed("", &outcome);
}

/// Issue 78: `announce_to` sends an approval's question to an agent (a chat agent, say)
/// when it is asked, with how to answer it; the run waits for the answer as always, and
/// an announcement that fails is only logged.
#[tokio::test]
async fn an_approvals_question_is_announced_to_an_agent() {
    let dir = scratch("announce");
    let workflow = r#"
[workflow]
id = "laptop"
name = "Laptop"
description = "An approval announced in the IT channel"

[steps.approve]
kind = "approval"
prompt = "Order a laptop for Ada?"
announce_to = "chat"

[steps.order]
agent = "it"
needs = ["approve"]
when = "steps.approve.data.approved"
message = "order it"
"#;
    for (chat, expect) in [
        (
            r#"{ text = "posted in #it-approvals" }"#,
            r#"state = "completed"
"sent.chat[0].text" = { contains = "Order a laptop for Ada?" }
"sent.chat[0].data.step" = "approve"
"sent.it[0].text" = "order it""#,
        ),
        (
            r#"{ down = "the chat service is down" }"#,
            r#"state = "completed"
"sent.it[0].text" = "order it""#,
        ),
    ] {
        let test = format!(
            r#"
[test]
workflow = "laptop"

[agents.chat]
replies = [{chat}]

[agents.it]
replies = [{{ text = "ordered" }}]

[answers]
approve = {{ approve = true, delay = "10m" }}

[expect]
{expect}
"#
        );
        let case = case(&dir, workflow, &test);
        let outcome = run::run(case).await;
        assert_passed(chat, &outcome);
    }
}

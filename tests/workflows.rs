//! The workflow language: a corpus of broken files with their exact diagnostics, the
//! shipped workflows, the `validate` and `graph` commands, and templates at run time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use a2a_orchestrator::registry::config as agents_config;
use orchestrator_core::workflow::{self, Options, StepKind, Trigger};
use serde_json::json;

use crate::util::ROOT;

fn root(p: &str) -> PathBuf {
    Path::new(ROOT).join(p)
}

/// Each file in `tests/workflows/broken` states what the validator must say about it in
/// `# expect: LINE:COL: SEVERITY: MESSAGE` lines (and `# agents: a, b` for the names of
/// agents.toml). The diagnostics must match exactly, in order.
#[test]
fn broken_workflows_get_exactly_the_expected_diagnostics() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root("tests/workflows/broken"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus is missing");
    let mut failures = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).unwrap();
        let expected: Vec<&str> = source
            .lines()
            .filter_map(|l| l.strip_prefix("# expect: "))
            .collect();
        assert!(
            !expected.is_empty(),
            "{} has no `# expect:` line",
            path.display()
        );
        let agents: Option<BTreeSet<String>> = source
            .lines()
            .find_map(|l| l.strip_prefix("# agents: "))
            .map(|l| l.split(',').map(|a| a.trim().to_owned()).collect());
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (wf, diags) = workflow::load_str(
            &name,
            &source,
            Options {
                known_agents: agents.as_ref(),
            },
        );
        let got: Vec<String> = diags.iter().map(|d| d.short()).collect();
        if got != expected {
            failures.push(format!(
                "{name}:\n  expected:\n    {}\n  got:\n    {}",
                expected.join("\n    "),
                got.join("\n    ")
            ));
        }
        let has_error = expected.iter().any(|e| e.contains(": error: "));
        assert_eq!(
            wf.is_none(),
            has_error,
            "{name}: a workflow is returned exactly when there is no error"
        );
        for d in &diags {
            let rendered = d.to_string();
            assert!(
                rendered.starts_with(&format!("{name}:{}:{}: ", d.line, d.column)),
                "{rendered}"
            );
            assert!(
                rendered.contains('^'),
                "a caret under the problem: {rendered}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn shipped_agents() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root("agents.toml")).unwrap();
    let (file, diags) = agents_config::load_str("agents.toml", &text);
    assert!(diags.is_empty(), "{diags:?}");
    file.unwrap().names()
}

#[test]
fn shipped_workflows_validate_clean_against_agents_toml() {
    let names = shipped_agents();
    for (file, id) in [
        ("workflows/employee-onboarding.toml", "employee-onboarding"),
        ("workflows/provision-accounts.toml", "provision-accounts"),
        ("workflows/travel-planning.toml", "travel-planning"),
        (
            "workflows/weekly-onboarding-report.toml",
            "weekly-onboarding-report",
        ),
    ] {
        let loaded = workflow::load_file(
            &root(file),
            Options {
                known_agents: Some(&names),
            },
        );
        let rendered: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
        assert!(rendered.is_empty(), "{file}:\n{}", rendered.join("\n"));
        let w = loaded.workflow.unwrap();
        assert_eq!(w.id.as_str(), id);
        assert!(!w.examples.is_empty());
    }
}

/// The shipped weekly report fires on Mondays at 09:00 London time, in winter and in
/// summer, and its run is given that Monday's date.
#[test]
fn the_shipped_report_is_scheduled_for_monday_mornings_in_london() {
    use time::format_description::well_known::Rfc3339;
    let at =
        |s: &str| std::time::SystemTime::from(time::OffsetDateTime::parse(s, &Rfc3339).unwrap());
    let w = workflow::load_file(
        &root("workflows/weekly-onboarding-report.toml"),
        Options::default(),
    )
    .workflow
    .unwrap();
    let [s] = &w.schedules[..] else {
        panic!("{:?}", w.schedules)
    };
    assert_eq!(s.key, "weekly-onboarding-report/mondays");
    let monday = s.next_after(at("2026-12-05T12:00:00Z")).unwrap();
    assert_eq!(monday, at("2026-12-07T09:00:00Z"), "GMT");
    assert_eq!(
        s.next_after(at("2027-06-01T00:00:00Z")),
        Some(at("2027-06-07T08:00:00Z")),
        "BST"
    );
    let context =
        json!({ "schedule": { "time": s.local(monday), "name": "mondays", "late": true } });
    let input = w
        .templates
        .render_data(s.input.as_ref().unwrap(), &context)
        .unwrap();
    assert_eq!(input, json!({ "week_of": "2026-12-07", "late": true }));
}

#[test]
fn onboarding_has_the_seed_004_shape() {
    let w = workflow::load_file(
        &root("workflows/employee-onboarding.toml"),
        Options::default(),
    )
    .workflow
    .unwrap();
    let ids: Vec<&str> = w.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids[0], "create_record",
        "a topological order: the record comes first"
    );
    assert_eq!(
        *ids.last().unwrap(),
        "notify_manager",
        "the manager is told last"
    );
    let notify = w.step("notify_manager").unwrap();
    assert_eq!(notify.trigger, Trigger::Always);
    assert!(matches!(
        w.step("approve_laptop").unwrap().kind,
        StepKind::Approval { .. }
    ));
    // Independent work fans out right after the record: five steps need only it.
    let after_record = w
        .steps
        .iter()
        .filter(|s| s.needs.len() == 1 && s.needs[0].as_str() == "create_record")
        .count();
    assert_eq!(after_record, 5);
    let schema = w.input_schema();
    assert_eq!(schema["required"], json!(["name", "role", "start_date"]));
    assert_eq!(
        schema["x-order"],
        json!(["name", "role", "start_date", "manager", "remote"]),
        "the file's order"
    );
    assert_eq!(
        schema["properties"]["role"]["enum"],
        json!(["engineer", "designer", "sales"])
    );
    assert_eq!(schema["properties"]["remote"]["default"], json!(false));
}

#[test]
fn travel_fans_out_and_renders_its_itinerary() {
    let w = workflow::load_file(&root("workflows/travel-planning.toml"), Options::default())
        .workflow
        .unwrap();
    let parallel: Vec<&str> = w
        .steps
        .iter()
        .filter(|s| s.needs.is_empty())
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(
        parallel,
        ["flights", "hotel", "activities", "currency", "advice"]
    );
    let tours = w.step("book_tours").unwrap();
    let fan = tours.for_each.as_ref().unwrap();
    assert_eq!((fan.max_parallel, fan.min_success), (Some(4), Some(1)));

    // The templates render against results shaped as the engine provides them.
    let ctx = json!({
        "input": { "origin": "London", "destination": "Lisbon", "depart": "2027-03-10", "nights": 5,
                   "travellers": 2, "budget": 3000, "currency": "EUR", "interests": ["food", "tiles"] },
        "steps": {
            "flights": { "state": "completed", "text": "TP1351 LHR→LIS", "data": { "price": 420 } },
            "hotel": { "state": "completed", "text": "Hotel Avenida", "data": {} },
            "activities": { "state": "completed", "text": "Tram 28, Belém", "data": { "activities": [{ "name": "Tram 28" }] } },
            "book_tours": { "state": "completed", "items": [
                { "state": "completed", "text": "Tram 28 booked" }, { "state": "failed", "text": "" } ] },
            "currency": { "state": "completed", "text": "3000 EUR = 3000 EUR", "data": { "rate": 1 } },
            "advice": { "state": "completed", "text": "No visa needed", "data": {} },
            "itinerary": { "state": "completed", "text": "Day 1: arrive", "data": {} }
        },
        "item": { "name": "Tram 28" }, "index": 0
    });
    // The itinerary is written by the model from every result, or by its fallback.
    let itinerary = w.step("itinerary").unwrap();
    let StepKind::Llm {
        prompt,
        system: Some(_),
        fallback: Some(fallback),
    } = &itinerary.kind
    else {
        panic!("the itinerary is an llm step with a system prompt and a fallback")
    };
    let asked = w.templates.render(prompt, &ctx).unwrap();
    assert!(
        asked.contains("Booked tours:\n- Tram 28 booked\n\nMoney"),
        "{asked}"
    );
    assert_eq!(
        w.templates.render(fallback, &ctx).unwrap().trim(),
        "Day 1: fly from London to Lisbon and check in at the hotel.\nTour: Tram 28 booked\nDay 6: check out and fly back to London."
    );
    let StepKind::Agent {
        message: Some(m),
        data: Some(d),
        ..
    } = &tours.kind
    else {
        panic!()
    };
    assert_eq!(
        w.templates.render(m, &ctx).unwrap(),
        "Book \"Tram 28\" in Lisbon for 2 on day 1 of the trip."
    );
    assert_eq!(
        w.templates.render_data(d, &ctx).unwrap(),
        json!({ "tour": "Tram 28", "travellers": 2, "day": 1 })
    );
    let fan_items = w.templates.eval(&fan.items, &ctx).unwrap();
    assert_eq!(fan_items, json!([{ "name": "Tram 28" }]));
    let output = w.output.as_ref().unwrap();
    let text = w
        .templates
        .render(output.text.as_ref().unwrap(), &ctx)
        .unwrap();
    assert!(text.contains("# Lisbon from London"), "{text}");
    assert!(
        text.contains("- Tram 28 booked\n- not booked (failed)"),
        "{text}"
    );
    let data = w
        .templates
        .render_data(output.data.as_ref().unwrap(), &ctx)
        .unwrap();
    assert_eq!(
        data["flights"],
        json!({ "price": 420 }),
        "data leaves keep their JSON type"
    );
}

#[test]
fn a_missing_value_at_run_time_names_the_step_and_expression() {
    let w = workflow::load_file(
        &root("workflows/employee-onboarding.toml"),
        Options::default(),
    )
    .workflow
    .unwrap();
    let step = w.step("send_documents").unwrap();
    let StepKind::Agent {
        message: Some(m), ..
    } = &step.kind
    else {
        panic!()
    };
    let ctx = json!({ "input": { "name": "Ada" }, "steps": { "create_record": { "state": "completed", "data": {} } } });
    let err = w.templates.render(m, &ctx).unwrap_err();
    assert_eq!(err.site, "steps.send_documents.message");
    assert_eq!(
        err.expression.as_deref(),
        Some("steps.create_record.data.employee_id")
    );
    assert_eq!(
        err.to_string(),
        "steps.send_documents.message: undefined value in `steps.create_record.data.employee_id`"
    );
    let when = w.step("assign_desk").unwrap().when.as_ref().unwrap();
    assert!(
        !w.templates
            .eval_bool(when, &json!({ "input": { "remote": true } }))
            .unwrap()
    );
    assert!(
        w.templates
            .eval_bool(when, &json!({ "input": {} }))
            .is_err(),
        "a missing input is an error, not false"
    );
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A file past the size bound is an error naming it and the bound, in `validate` as
/// where workflows are loaded; the file is not read past the bound.
#[test]
fn a_workflow_file_past_the_size_bound_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("a2a-big-workflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.toml");
    // A valid workflow, padded with comments past 1 MiB.
    let mut text =
        std::fs::read_to_string(format!("{ROOT}/workflows/travel-planning.toml")).unwrap();
    while text.len() <= 1 << 20 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&big, &text).unwrap();
    let (code, out, err) = cli(&["validate", big.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("{}", big.display()))
            && err.contains("cannot read the file: it is larger than 1 MiB"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_command_exit_codes() {
    // Offline: the repository's agents.toml names agents that do not run here.
    let (code, out, _) = cli(&["validate", "--offline"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("4 workflow file(s) and 6 test file(s) checked: 0 error(s), 0 warning(s)"),
        "{out}"
    );

    let (code, out, err) = cli(&["validate", "tests/workflows/broken/cycle.toml"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL  tests/workflows/broken/cycle.toml"),
        "{out}"
    );
    assert!(
        err.contains("tests/workflows/broken/cycle.toml:7:10: error: the steps form a cycle"),
        "{err}"
    );

    // Warnings pass, unless --strict.
    let (code, _, err) = cli(&["validate", "tests/workflows/broken/unguarded.toml"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning:"), "{err}");
    let (code, _, _) = cli(&[
        "validate",
        "--strict",
        "tests/workflows/broken/unguarded.toml",
    ]);
    assert_eq!(code, 1);

    // Agent names are checked against the given agents file.
    let (code, _, err) = cli(&[
        "validate",
        "--agents",
        "agents.toml",
        "tests/workflows/broken/unknown_agent.toml",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("agent `facilites` is not in agents.toml"),
        "{err}"
    );

    let (code, _, err) = cli(&["validate", "no/such/dir"]);
    assert_eq!(code, 1);
    assert!(err.contains("no such file or directory"), "{err}");
}

#[test]
fn graph_command_renders_mermaid_and_dot() {
    let (code, out, err) = cli(&["graph", "employee-onboarding"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("flowchart TD"));
    assert!(
        out.contains("approve_laptop{{\"<b>approve_laptop</b><br/>approval"),
        "approvals are hexagons:\n{out}"
    );
    assert!(out.contains("class assign_desk conditional"), "{out}");
    assert!(
        out.contains("create_record --> provision_accounts"),
        "{out}"
    );
    assert!(
        out.contains(
            "provision_accounts[\"<b>provision_accounts</b><br/>workflow provision-accounts\"]"
        ),
        "{out}"
    );
    assert!(
        out.contains("print_badge -.->|always| notify_manager"),
        "{out}"
    );

    let (code, out, _) = cli(&["graph", "workflows/travel-planning.toml", "--format", "dot"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("digraph \"travel-planning\" {"), "{out}");
    assert!(out.contains("peripheries=2"), "fan-outs are marked:\n{out}");
    assert!(out.contains("\"activities\" -> \"book_tours\";"), "{out}");

    let (code, _, err) = cli(&["graph", "no-such-workflow"]);
    assert_eq!(code, 2, "an unknown workflow is bad input");
    assert!(
        err.contains("employee-onboarding") && err.contains("travel-planning"),
        "lists what exists: {err}"
    );
}

/// Issue 38: `validate --agents` discovers the agents and checks every `skill = "…"`
/// against their cards: a typo is a warning at its line with the closest skill offered
/// (`--strict` fails on it), an agent not reached is named.
#[tokio::test(flavor = "multi_thread")]
async fn validate_with_agents_checks_skills_against_the_cards() {
    let agent = crate::util::echo(0).await;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("validate-skills");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("flows")).unwrap();
    std::fs::write(
        dir.join("flows/typo.toml"),
        "[workflow]\nid = \"typo\"\ndescription = \"A skill with a typo\"\n\n[steps.say]\nskill = \"ecoh\"\nmessage = \"hi\"\n",
    )
    .unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    std::fs::write(
        dir.join("agents.toml"),
        format!(
            "[agents.echo]\nurl = \"{}\"\n\n[agents.gone]\nurl = \"http://127.0.0.1:{port}\"\n",
            agent.url
        ),
    )
    .unwrap();
    let run = |strict: bool| {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"));
        c.arg("validate")
            .arg(dir.join("flows"))
            .arg("--agents")
            .arg(dir.join("agents.toml"));
        if strict {
            c.arg("--strict");
        }
        c.output()
    };
    let out = run(false).await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "a warning: {stdout}{stderr}");
    assert!(
        stderr.contains("typo.toml:6:")
            && stderr.contains("no agent's card offers skill `ecoh`")
            && stderr.contains("did you mean `echo`?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`gone`"),
        "the agent not reached is named: {stderr}"
    );
    assert!(stdout.contains("not reached: gone"), "{stdout}");
    let strict = run(true).await.unwrap();
    assert_eq!(strict.status.code(), Some(1));

    // Issue 75: every agent answered (the agents.toml found beside the workflows, in
    // the working directory), and none offers it: an error. `--offline` discovers none.
    std::fs::write(
        dir.join("agents.toml"),
        format!("[agents.echo]\nurl = \"{}\"\n", agent.url),
    )
    .unwrap();
    let beside = |offline: bool| {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"));
        c.current_dir(&dir).args(["validate", "flows"]);
        if offline {
            c.arg("--offline");
        }
        c.output()
    };
    let out = beside(false).await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "an error: {stdout}{stderr}");
    assert!(
        stderr.contains("error") && stderr.contains("did you mean `echo`?"),
        "{stderr}"
    );
    assert!(stdout.contains("1 error(s), 0 warning(s)"), "{stdout}");
    let out = beside(true).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("discovered"), "{stdout}");

    // A file with another error has its skills checked too: every problem at once.
    std::fs::write(
        dir.join("flows/broken.toml"),
        "[workflow]\nid = \"broken\"\ndescription = \"Two problems\"\n\n[steps.say]\nskill = \"ecoh\"\nneeds = [\"nowhere\"]\nmessage = \"hi\"\n",
    )
    .unwrap();
    let out = beside(false).await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("broken.toml:6:") && stderr.contains("nowhere"),
        "both of broken.toml's problems: {stderr}"
    );
    assert!(
        stdout.contains("3 error(s), 0 warning(s)"),
        "{stdout}{stderr}"
    );
}

//! The web view at `/ui/` in a real browser: Debian's Chromium driven by playwright-core
//! (`tests/js/ui.mjs`) against an orchestrator over the example travel agents, with a
//! bearer token required as a deployed one would; and its forms and its escaping against
//! a hostile agent (`tests/js/ui_forms.mjs`).

use std::path::PathBuf;
use std::time::Duration;

use a2a::RpcError;
use a2a::server::{AgentExecutor, EventSink, RequestContext, ServerConfig};
use a2a::types::{Artifact, Part, TaskState};
use a2a_orchestrator::agents::{Behaviour, Fleet, Set};

use crate::util::orchestra::orchestra_on;
use crate::util::{ROOT, chromium, run_node};

#[ignore = "needs Chromium and playwright-core: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn the_web_view_starts_watches_and_answers_a_run_in_chromium() {
    let behaviour = Behaviour {
        latency: Duration::from_millis(150),
        chunk_delay: Duration::from_millis(20),
        ..Behaviour::default()
    };
    let fleet = Fleet::start(&[Set::Travel], behaviour, "127.0.0.1", true)
        .await
        .unwrap();
    let travel =
        std::fs::read_to_string(PathBuf::from(ROOT).join("workflows/travel-planning.toml"))
            .unwrap();
    // A durable store: a retry begins with the stored results of the run it retries.
    let db = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui.db");
    let _ = std::fs::remove_file(&db);
    let store = format!("sqlite://{}", db.display());
    let o = orchestra_on(&[&travel], fleet.agents_toml(), |c| {
        c.server.auth = Some(a2a_orchestrator::auth::unnamed(
            vec!["ui-token".into()],
            None,
        ));
        c.store = orchestrator_store::StoreSpec::parse(&store).unwrap();
    })
    .await;
    let out = PathBuf::from(ROOT).join("target/ui");
    std::fs::create_dir_all(&out).unwrap();
    let shot = out.join("web-view.png");
    let failure = out.join("web-view-failure.png");
    let browser = chromium().to_str().unwrap().to_owned();
    let (ok, output) = run_node(
        "ui.mjs",
        &[
            &o.url,
            &browser,
            "ui-token",
            shot.to_str().unwrap(),
            failure.to_str().unwrap(),
        ],
    )
    .await;
    assert!(ok, "{output}");
    assert!(output.contains("ui: ok"), "{output}");
    assert!(shot.exists(), "the screenshot {}", shot.display());
}

/// What every agent-provided field of the hostile agent carries: markup that would run
/// script if it were ever taken as HTML.
const PAYLOAD: &str =
    r#"<img src=x onerror="window.__xss=(window.__xss||0)+1"><script>window.__xss=1</script>"#;

/// An agent that puts `PAYLOAD` in everything it sends: its status text, its artifact's
/// name and text (with a `javascript:` link and raw HTML among markdown), its question,
/// and its failure.
struct Hostile;

impl AgentExecutor for Hostile {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let fail = |e: a2a::server::SinkError| RpcError::internal(e.to_string());
        let answering = ctx
            .task
            .as_ref()
            .is_some_and(|t| t.state() == TaskState::InputRequired);
        if answering {
            events
                .fail(&format!("refused {PAYLOAD}"))
                .await
                .map_err(fail)?;
            return Ok(());
        }
        events.working(Some(PAYLOAD)).await.map_err(fail)?;
        let chunks = [
            format!(
                "# Report {PAYLOAD}\n\n- **bold** item\n- [a link](javascript:window.__xss=2)\n"
            ),
            format!("\n| a | b |\n|---|---|\n| {PAYLOAD} | `code` |\n\n<b>raw</b>"),
        ];
        for (i, chunk) in chunks.iter().enumerate() {
            let artifact = Artifact::new("report", vec![Part::text(chunk.as_str())])
                .with_name(format!("report {PAYLOAD}"));
            events
                .artifact(artifact, i > 0, i + 1 == chunks.len())
                .await
                .map_err(fail)?;
        }
        events
            .input_required(&format!("Shall I go on? {PAYLOAD}"))
            .await
            .map_err(fail)?;
        Ok(())
    }
}

const HOSTILE: &str = r#"
[workflow]
id = "hostile"
name = "Hostile"
description = "An input step, then an agent that sends markup"

[input]
who = { type = "string", description = "Who asks", required = true }
count = { type = "integer", description = "How many", default = 2 }
mode = { type = "string", enum = ["fast", "slow"], default = "fast" }
tags = { type = "array", description = "Tags", default = ["a"] }

[steps.details]
kind = "input"
prompt = "Details for {{ input.who }}"
[steps.details.fields]
size = { type = "integer", description = "The size", required = true }

[steps.evil]
agent = "evil"
needs = ["details"]
message = "hello {{ input.who }}, size {{ steps.details.data.size }}"
"#;

/// The forms and the escaping: a task waiting for its inputs is listed and answered from
/// its form (a required field left empty is said beside it, nothing sent); an input
/// step's question is a form from its fields' schema; everything a hostile agent sends
/// (status, artifact name and text, question, failure) is shown as text, its markdown
/// rendered without its HTML or its `javascript:` link; no edge of the DAG crosses a step.
#[ignore = "needs Chromium and playwright-core: the full suite, `cargo xtask test`"]
#[tokio::test(flavor = "multi_thread")]
async fn the_web_view_forms_and_a_hostile_agent_in_chromium() {
    let evil = crate::util::serve(
        Hostile,
        crate::echo_agent::echo_card,
        ServerConfig::default(),
    )
    .await;
    let o = orchestra_on(
        &[HOSTILE],
        format!("[agents.evil]\nurl = \"{}\"\n", evil.url),
        |_| {},
    )
    .await;
    let out = PathBuf::from(ROOT).join("target/ui");
    std::fs::create_dir_all(&out).unwrap();
    let failure = out.join("web-view-forms-failure.png");
    let browser = chromium().to_str().unwrap().to_owned();
    let (ok, output) = run_node(
        "ui_forms.mjs",
        &[&o.url, &browser, PAYLOAD, failure.to_str().unwrap()],
    )
    .await;
    assert!(ok, "{output}");
    assert!(output.contains("ui-forms: ok"), "{output}");
}

/// The page builds every element from text nodes: none of its scripts writes HTML from a
/// string, so nothing an agent or a user sends can become markup by a forgotten escape.
#[test]
fn the_web_view_never_writes_html_from_strings() {
    let dir = PathBuf::from(ROOT).join("src/host/ui");
    let mut scripts = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "js") {
            continue;
        }
        scripts += 1;
        let source = std::fs::read_to_string(&path).unwrap();
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "createContextualFragment",
            "eval(",
            "new Function",
        ] {
            assert!(!source.contains(sink), "{} uses {sink}", path.display());
        }
    }
    assert!(scripts >= 5, "the page's scripts in {}", dir.display());
}

//! The web view at `/ui/` in a real browser: Debian's Chromium driven by playwright-core
//! (`tests/js/ui.mjs`) against an orchestrator over the example travel agents, with a
//! bearer token required as a deployed one would.

use std::path::PathBuf;
use std::time::Duration;

use a2a::server::InboundAuth;
use a2a_orchestrator::agents::{Behaviour, Fleet, Set};

use crate::util::orchestra::orchestra_on;
use crate::util::{ROOT, chromium, run_node};

#[cfg_attr(
    not(feature = "full-suite"),
    ignore = "needs Chromium and playwright-core: the full suite, `cargo xtask test`"
)]
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
        c.server.auth = Some(InboundAuth::unnamed(vec!["ui-token".into()], None));
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

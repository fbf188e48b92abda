//! `demo [travel|onboarding]`: the whole mission in one command. Starts the example
//! agents and the orchestrator on free loopback ports, then calls the orchestrator as
//! any A2A client would (`message/stream`), showing each step live, the agents'
//! artifacts as they complete, the questions and their answers, and the result.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::follow::{Start, drive, report};
use super::progress::Asker;
use crate::agents::{Behaviour, Fleet, Set, Speaks, speaks_label};
use crate::host::serve::{self, HostConfig};
use a2a::client::{A2aClient, ClientConfig};
use a2a::server::ServerConfig;
use a2a::types::{Message, Part, SendMessageRequest};
use orchestrator_core::workflow::{self, Options};

/// One demo: its agents, its workflow and the ones its steps run (embedded, so the
/// demo runs anywhere), and the request a user would send.
struct Scenario {
    set: Set,
    file: &'static str,
    source: &'static str,
    /// The workflows its workflow steps run, as (file, source).
    children: &'static [(&'static str, &'static str)],
    text: &'static str,
    input: Value,
}

fn scenario(set: Set) -> Scenario {
    match set {
        Set::Travel => Scenario {
            set,
            file: "workflows/travel-planning.toml",
            source: include_str!("../../workflows/travel-planning.toml"),
            children: &[],
            text: "Plan 5 nights in Lisbon from London for 2 people from 2027-03-10 with a budget of 2500 GBP; we like food and history",
            input: json!({
                "origin": "London", "destination": "Lisbon", "depart": "2027-03-10",
                "nights": 5, "travellers": 2, "budget": 2500, "currency": "GBP",
                "interests": ["food", "history"],
            }),
        },
        Set::Onboarding => Scenario {
            set,
            file: "workflows/employee-onboarding.toml",
            source: include_str!("../../workflows/employee-onboarding.toml"),
            children: &[(
                "workflows/provision-accounts.toml",
                include_str!("../../workflows/provision-accounts.toml"),
            )],
            text: "Onboard Ada Lovelace as an engineer starting 2026-12-01",
            input: json!({
                "name": "Ada Lovelace", "role": "engineer", "start_date": "2026-12-01",
                "manager": "grace.hopper@example.com",
            }),
        },
    }
}

/// Runs the demo; exits 0 when the workflow completes.
pub async fn demo(
    set: Set,
    behaviour: Behaviour,
    speaks: Speaks,
    yes: bool,
    llm: Option<crate::llm::LlmConfig>,
) -> anyhow::Result<ExitCode> {
    let s = scenario(set);
    let model = llm.clone().map(crate::llm::Llm::new);
    let fleet = Fleet::start_only(
        &[s.set],
        &[],
        behaviour,
        "127.0.0.1",
        crate::agents::Ports::Free,
        model.as_ref(),
        speaks,
    )
    .await
    .context("starting the example agents")?;
    let outcome = with_fleet(&s, &fleet, yes, llm).await;
    fleet.shutdown().await;
    outcome
}

async fn with_fleet(
    s: &Scenario,
    fleet: &Fleet,
    yes: bool,
    llm: Option<crate::llm::LlmConfig>,
) -> anyhow::Result<ExitCode> {
    let (agents, diags) = crate::registry::config::load_str("demo agents", &fleet.agents_toml());
    let agents = agents.ok_or_else(|| anyhow::anyhow!("demo agents: {diags:?}"))?;
    let names = agents.names();
    let mut workflows = Vec::new();
    for (file, source) in [(s.file, s.source)]
        .into_iter()
        .chain(s.children.iter().copied())
    {
        let (w, diags) = workflow::load_str(
            file,
            source,
            Options {
                known_agents: Some(&names),
            },
        );
        let w = w.ok_or_else(|| {
            let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
            anyhow::anyhow!("the embedded workflow is invalid:\n{}", text.join("\n"))
        })?;
        workflows.push(Arc::new(w));
    }
    let workflow_id = workflows[0].id.to_string();
    let config = HostConfig {
        name: "a2a-orchestrator (demo)".into(),
        description: "The demo orchestrator".into(),
        workflows: s.file.into(),
        agents: "demo agents".into(),
        server: ServerConfig::default(),
        store: orchestrator_store::StoreSpec::Memory,
        retention: crate::host::settings::DEFAULT_RETENTION,
        llm,
        llm_price: None,
        limits: Default::default(),
        ready_requires_agents: false,
        // The demo's workflows are embedded: no files to watch.
        reload_workflows: false,
        reload_interval: crate::host::serve::RELOAD_EVERY,
        // The demo's approvals are answered in the terminal, by whoever runs it.
        insecure_open: true,
        card_signing: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    // The demo keeps nothing: its tasks live in memory.
    let store = config.store.open().await?;
    let host = serve::build(&config, workflows, &agents, &url, store).await;
    let stop = CancellationToken::new();
    let server = host.server.clone();
    let serving = tokio::spawn(server.serve(listener, stop.clone().cancelled_owned()));

    say!("a2a-orchestrator demo: {}", workflow_id)?;
    let statuses = host.registry.statuses();
    for ((name, agent_url), serves) in fleet.agents.iter().zip(&fleet.generations) {
        let called = statuses
            .iter()
            .find(|st| &st.name == name)
            .and_then(|st| {
                Some(format!(
                    "called with {} {}",
                    st.protocol.as_ref()?,
                    st.binding.as_ref()?
                ))
            })
            .unwrap_or_else(|| "not discovered".to_owned());
        say!(
            "  agent {name:<11} {agent_url}  (speaks A2A {}; {called})",
            speaks_label(*serves)
        )?;
    }
    say!("  orchestrator      {url}  (one A2A agent; its skills are the workflows)")?;
    let mut message = Message::user_text(s.text);
    let mut data = Map::new();
    data.insert("workflow".into(), json!(workflow_id));
    data.insert("input".into(), s.input.clone());
    // What is sent, all of it: the sentence, and the inputs as a client's form (or a
    // model, with --llm-*) would give them beside it.
    say!(
        "\n→ message/stream: \"{}\"\n  with a data part: {}\n  (the workflow and its inputs, as a form or a model would give them; the text alone\n  makes the orchestrator ask for what it cannot read from it)\n",
        s.text,
        Value::Object(data.clone())
    )?;
    message.parts.push(Part::data(data));
    let start = Start::Send(Box::new(SendMessageRequest::new(message)));
    let asker = Asker::new(yes);
    if !asker.interactive {
        // Unlike `runs watch` and `send --watch`, the demo answers by itself: it is a
        // demonstration, and its agents book nothing.
        say!(
            "(the demo's questions are answered automatically: {}; the first option, else yes)\n",
            if yes {
                "--yes"
            } else {
                "stdin is not a terminal"
            }
        )?;
    }
    let outcome = match A2aClient::connect(&url, ClientConfig::default()).await {
        Ok((client, _card)) => drive(&client, &url, start, asker).await,
        Err(e) => Err(e.into()),
    };

    stop.cancel();
    let _ = serving.await;
    host.registry.shutdown().await;
    let (state, result) = outcome?;
    Ok(report(state, result.as_ref())?)
}

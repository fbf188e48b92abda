//! `demo [travel|onboarding]`: the whole mission in one command. Starts the example
//! agents and the orchestrator on free loopback ports, then calls the orchestrator as
//! any A2A client would (`message/stream`), showing each step live, the agents'
//! artifacts as they complete, the questions and their answers, and the result.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::progress::{Asker, Progress, label, print_result};
use crate::agents::{Behaviour, Fleet, Set, Speaks, speaks_label};
use crate::host::serve::{self, HostConfig};
use crate::protocol::client::{A2aClient, ClientConfig};
use crate::protocol::server::ServerConfig;
use crate::protocol::types::*;
use crate::workflow::{self, Options};

/// One demo: its agents, its workflow (embedded, so the demo runs anywhere), and the
/// request a user would send.
struct Scenario {
    set: Set,
    file: &'static str,
    source: &'static str,
    text: &'static str,
    input: Value,
}

fn scenario(set: Set) -> Scenario {
    match set {
        Set::Travel => Scenario {
            set,
            file: "workflows/travel-planning.toml",
            source: include_str!("../../workflows/travel-planning.toml"),
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
        true,
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
    let (w, diags) = workflow::load_str(
        s.file,
        s.source,
        Options {
            known_agents: Some(&names),
        },
    );
    let w = w.ok_or_else(|| {
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("the embedded workflow is invalid:\n{}", text.join("\n"))
    })?;
    let workflow_id = w.id.to_string();
    let config = HostConfig {
        name: "a2a-orchestrator (demo)".into(),
        description: "The demo orchestrator".into(),
        workflows: s.file.into(),
        agents: "demo agents".into(),
        server: ServerConfig::default(),
        store: crate::store::StoreSpec::Memory,
        retention: crate::host::settings::DEFAULT_RETENTION,
        llm,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    // The demo keeps nothing: its tasks live in memory.
    let store = config.store.open().await?;
    let host = serve::build(&config, vec![Arc::new(w)], &agents, &url, store).await;
    let stop = CancellationToken::new();
    let server = host.server.clone();
    let serving = tokio::spawn(server.serve(listener, stop.clone().cancelled_owned()));

    println!("a2a-orchestrator demo: {}", workflow_id);
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
        println!(
            "  agent {name:<11} {agent_url}  (speaks A2A {}; {called})",
            speaks_label(*serves)
        );
    }
    println!("  orchestrator      {url}  (one A2A agent; its skills are the workflows)");
    println!("\n→ message/stream: \"{}\"\n", s.text);

    let mut message = Message::user_text(s.text);
    let mut data = Map::new();
    data.insert("workflow".into(), json!(workflow_id));
    data.insert("input".into(), s.input.clone());
    message.parts.push(Part::data(data));
    let outcome = drive(&url, MessageSendParams::new(message), Asker::new(yes)).await;

    stop.cancel();
    let _ = serving.await;
    host.registry.shutdown().await;
    let (state, result) = outcome?;
    Ok(report(state, result.as_ref()))
}

/// Prints the outcome; the exit code.
fn report(state: TaskState, result: Option<&Artifact>) -> ExitCode {
    if let Some(r) = result {
        let text: String = r.parts.iter().filter_map(Part::as_text).collect();
        let mut data = Map::new();
        for p in &r.parts {
            if let Part::Data(d) = p {
                data.extend(d.data.clone());
            }
        }
        print_result(
            r.name.as_deref().unwrap_or("result"),
            Some(&text),
            (!data.is_empty()).then_some(Value::Object(data)).as_ref(),
        );
    }
    println!("\nworkflow {}", state.as_str());
    if state == TaskState::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// An artifact being received, chunk by chunk.
#[derive(Default)]
struct Assembling {
    text: String,
    step: Option<String>,
    agent: Option<String>,
}

/// Streams `params` to the orchestrator and follows the task to its end, answering
/// questions on the same task. Returns the final state and the result artifact.
pub async fn drive(
    url: &str,
    mut params: MessageSendParams,
    asker: Asker,
) -> anyhow::Result<(TaskState, Option<Artifact>)> {
    let (client, _card) = A2aClient::connect(url, ClientConfig::default()).await?;
    let mut progress = Progress::new();
    let mut artifacts: HashMap<String, Assembling> = HashMap::new();
    let mut result: Option<Artifact> = None;
    loop {
        let mut events = client.send_message_stream(&params).await?;
        let mut task_id = params.message.task_id.clone();
        let mut last: Option<TaskStatus> = None;
        while let Some(event) = events.next().await {
            match event? {
                StreamEvent::Task(t) => {
                    task_id = Some(t.id.clone());
                    last = Some(t.status);
                }
                StreamEvent::Message(m) => progress.note(&m.text()),
                StreamEvent::StatusUpdate(u) => {
                    task_id = Some(u.task_id.clone());
                    if let Some(meta) = &u.metadata {
                        step_update(&mut progress, meta, u.status.message.as_ref());
                    }
                    let done = u.is_final;
                    last = Some(u.status);
                    if done {
                        break;
                    }
                }
                StreamEvent::ArtifactUpdate(u) => {
                    let a = u.artifact;
                    let id = a.artifact_id.to_string();
                    if id == "result" {
                        result = Some(a);
                        continue;
                    }
                    let meta = a.metadata.clone().unwrap_or_default();
                    let step = meta.get("step").and_then(Value::as_str);
                    let item = meta.get("item").and_then(Value::as_u64).map(|i| i as usize);
                    if let Some(step) = step {
                        progress.chunk(step, item);
                    }
                    let entry = artifacts.entry(id.clone()).or_default();
                    if u.append != Some(true) {
                        entry.text.clear();
                    }
                    entry.step = step.map(|s| label(s, item));
                    entry.agent = meta.get("agent").and_then(Value::as_str).map(str::to_owned);
                    entry
                        .text
                        .push_str(&a.parts.iter().filter_map(Part::as_text).collect::<String>());
                    if u.last_chunk == Some(true) {
                        let done = artifacts.remove(&id).unwrap_or_default();
                        let body: Vec<String> = done
                            .text
                            .trim()
                            .lines()
                            .map(|l| format!("    {l}"))
                            .collect();
                        progress.note(&format!(
                            "── {} · {} ──\n{}",
                            done.step.unwrap_or(id),
                            done.agent.unwrap_or_default(),
                            body.join("\n")
                        ));
                    }
                }
            }
        }
        let status = last.context("the stream ended before the task had a state")?;
        match status.state {
            TaskState::InputRequired | TaskState::AuthRequired => {
                let task_id = task_id.context("input-required without a task id")?;
                let (prompt, step, item) = question(status.message.as_ref());
                let answer = asker.answer(&progress, step.as_deref(), &prompt);
                let mut m = Message::user_text(answer);
                m.task_id = Some(task_id);
                if let Some(step) = step {
                    let mut meta = Map::new();
                    meta.insert("step".into(), json!(step));
                    if let Some(i) = item {
                        meta.insert("item".into(), json!(i));
                    }
                    m.metadata = Some(meta);
                }
                params = MessageSendParams::new(m);
            }
            s if s.is_terminal() => {
                let elapsed = progress.finish();
                if let Some(m) = status
                    .message
                    .as_ref()
                    .filter(|_| s != TaskState::Completed)
                {
                    println!("{}", m.text());
                }
                println!("(in {:.1}s)", elapsed.as_secs_f64());
                return Ok((s, result));
            }
            other => anyhow::bail!("the stream ended with the task still {}", other.as_str()),
        }
    }
}

/// A status update's step metadata, shown on the step's line.
fn step_update(progress: &mut Progress, meta: &Map<String, Value>, message: Option<&Message>) {
    let (Some(step), Some(state)) = (
        meta.get("step").and_then(Value::as_str),
        meta.get("state").and_then(Value::as_str),
    ) else {
        return;
    };
    let item = meta.get("item").and_then(Value::as_u64).map(|i| i as usize);
    let agent = meta.get("agent").and_then(Value::as_str);
    let attempt = meta.get("attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
    // The status text is "`step` state: message".
    let text = message.map(Message::text);
    let detail = text
        .as_deref()
        .and_then(|t| t.split_once(": "))
        .map(|(_, m)| m);
    progress.step(step, item, state, agent, attempt, detail);
}

/// The first pending question of an input-required status: (prompt, step, item).
fn question(message: Option<&Message>) -> (String, Option<String>, Option<usize>) {
    let Some(m) = message else {
        return ("The orchestrator needs input".into(), None, None);
    };
    let pending = m.parts.iter().find_map(|p| match p {
        Part::Data(d) => d
            .data
            .get("pendingQuestions")
            .and_then(Value::as_array)
            .and_then(|q| q.first())
            .cloned(),
        _ => None,
    });
    match pending {
        Some(q) => (
            q["prompt"].as_str().unwrap_or_default().to_owned(),
            q["step"].as_str().map(str::to_owned),
            q["item"].as_u64().map(|i| i as usize),
        ),
        None => (m.text(), None, None),
    }
}

//! `run WORKFLOW [--input key=value]... [--input-json FILE] [--json]`: one workflow run
//! in-process, on the engine, against the agents of `agents.toml` — no server. Shows
//! the same live progress as `demo`, or with `--json` one JSON object per event.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::progress::{Asker, Progress};
use std::collections::BTreeMap;

use crate::connect::A2aConnector;
use crate::host::detail::StepUpdate;
use crate::registry::env::ProcessEnv;
use crate::registry::{Registry, RegistryOptions};
use crate::testmode::record::{Recorder, Recording, test_file};
use orchestrator_core::config::Diagnostic;
use orchestrator_core::engine::{
    AgentConnector, Answer, AnswerError, Engine, EngineOptions, QuestionKind, RunEvent, RunState,
};
use orchestrator_core::workflow::Options;

/// What `run` was asked.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A workflow file, or the id of a workflow in --workflows.
    pub workflow: String,
    /// An input, as key=value (the value is JSON if it parses, text otherwise).
    #[arg(long = "input", short = 'i', value_name = "KEY=VALUE")]
    pub inputs: Vec<String>,
    /// A JSON object of inputs (--input values override it).
    #[arg(long, value_name = "FILE")]
    pub input_json: Option<PathBuf>,
    /// Print one JSON object per run event instead of the progress display.
    #[arg(long)]
    pub json: bool,
    /// Answer every question not answered with --answer automatically (the first
    /// option, else yes), saying so. Without it, questions are asked at a terminal;
    /// with no terminal, an unanswered question cancels the run.
    #[arg(long, short)]
    pub yes: bool,
    /// Answer step STEP's question with VALUE (repeatable).
    #[arg(long = "answer", value_name = "STEP=VALUE", value_parser = super::progress::parse_answer)]
    pub answers: Vec<(String, String)>,
    /// The agents file.
    #[arg(long, default_value = "agents.toml")]
    pub agents: PathBuf,
    /// Where to look a workflow id up.
    #[arg(long, default_value = "workflows")]
    pub workflows: PathBuf,
    /// A language model for the workflow's llm steps (else they write their fallback).
    #[command(flatten)]
    pub llm: crate::llm::LlmArgs,
    /// Write the run as a test (`*.test.toml`) to this file: what each agent answered,
    /// the answers given, and what the run came to, to replay with `test`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

/// Bad input said plainly: the exit status that means "nothing was run".
fn bad_input(why: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {why}; nothing was run");
    ExitCode::from(2)
}

fn problems(diags: Vec<Diagnostic>) -> ExitCode {
    for d in diags {
        eprintln!("{d}\n");
    }
    eprintln!("error: nothing was run");
    ExitCode::from(2)
}

/// `key=value`; the value is JSON when it parses as JSON (`5`, `true`, `["a"]`), text
/// otherwise.
fn parse_input(arg: &str) -> anyhow::Result<(String, Value)> {
    let (k, v) = arg
        .split_once('=')
        .ok_or_else(|| anyhow::anyhow!("--input {arg:?}: write key=value"))?;
    let k = k.trim();
    if k.is_empty() {
        anyhow::bail!("--input {arg:?}: the key is empty");
    }
    let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
    Ok((k.to_owned(), value))
}

fn read_inputs(inputs: &[String], file: Option<&Path>) -> anyhow::Result<Map<String, Value>> {
    let mut given = Map::new();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--input-json {}: {e}", path.display()))?;
        match serde_json::from_str(&text) {
            Ok(Value::Object(m)) => given.extend(m),
            Ok(_) => anyhow::bail!("--input-json {}: expected a JSON object", path.display()),
            Err(e) => anyhow::bail!("--input-json {}: {e}", path.display()),
        }
    }
    for arg in inputs {
        let (k, v) = parse_input(arg)?;
        given.insert(k, v);
    }
    Ok(given)
}

fn run_state(s: RunState) -> &'static str {
    match s {
        RunState::Working => "working",
        RunState::InputRequired => "input-required",
        RunState::Completed => "completed",
        RunState::Failed => "failed",
        RunState::Canceled => "canceled",
    }
}

/// A run event as one JSON object (`--json`).
pub fn event_json(e: &RunEvent) -> Value {
    match e {
        RunEvent::Run { state, message } => {
            json!({ "event": "run", "state": run_state(*state), "message": message })
        }
        RunEvent::Step { .. } => {
            let mut line = Map::from_iter([("event".to_owned(), json!("step"))]);
            if let Some(update) = StepUpdate::of(e) {
                line.extend(update.into_map());
            }
            Value::Object(line)
        }
        RunEvent::Artifact {
            step,
            item,
            agent,
            chunk,
        } => json!({
            "event": "artifact", "step": step.as_str(), "item": item, "agent": agent,
            "artifactId": chunk.artifact_id, "name": chunk.name, "append": chunk.append,
            "lastChunk": chunk.last_chunk,
            "parts": chunk.parts.iter().map(orchestrator_core::engine::content_json).collect::<Vec<_>>(),
        }),
        RunEvent::Question {
            step,
            item,
            kind,
            prompt,
            ..
        } => {
            let kind = match kind {
                QuestionKind::Approval => "approval",
                QuestionKind::Input { .. } => "input",
                QuestionKind::Downstream { .. } => "agent",
            };
            json!({ "event": "question", "step": step.as_str(), "item": item, "kind": kind, "prompt": prompt })
        }
        RunEvent::Output { text, data } => json!({ "event": "output", "text": text, "data": data }),
        RunEvent::Answered {
            step,
            item,
            decision,
        } => json!({
            "event": "answered", "step": step.as_str(), "item": item,
            "action": decision.action, "by": decision.by.name, "at": decision.at,
        }),
        RunEvent::Usage {
            step,
            item,
            attempt,
            added,
            model,
        } => json!({
            "event": "usage", "step": step.as_str(), "item": item, "attempt": attempt, "added": added,
            "model": model,
        }),
    }
}

/// Runs the workflow; exits 0 when it completes, 1 when it fails, 2 on bad input.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let agents_text = match orchestrator_core::config::read_text(&args.agents) {
        Ok(t) => t,
        Err(e) => {
            return Ok(bad_input(format!(
                "cannot read {}: {e}",
                args.agents.display()
            )));
        }
    };
    let (agents, diags) =
        crate::registry::config::load_str(&args.agents.display().to_string(), &agents_text);
    let Some(agents) = agents else {
        return Ok(problems(diags));
    };
    let names = agents.names();
    let workflow = match super::workflows::find(
        &args.workflow,
        &args.workflows,
        Options {
            known_agents: Some(&names),
        },
    ) {
        Ok(Ok(w)) => Arc::new(w),
        Ok(Err(diags)) => return Ok(problems(diags)),
        Err(e) => return Ok(bad_input(format!("{e:#}"))),
    };
    // Child runs are tasks of a server: this command serves none.
    if let Some(s) = (workflow.steps.iter()).find(|s| {
        matches!(
            s.kind,
            orchestrator_core::workflow::StepKind::Workflow { .. }
        )
    }) {
        return Ok(bad_input(format!(
            "`run` runs one workflow alone, and step `{}` runs another as a child run: run `{}` under `serve` (and send it with `send`), or test it with `test`",
            s.id, workflow.id
        )));
    }
    let given = match read_inputs(&args.inputs, args.input_json.as_deref()) {
        Ok(g) => g,
        Err(e) => return Ok(bad_input(format!("{e:#}"))),
    };
    let inputs = match workflow.check_inputs(&given) {
        Ok(i) => i,
        Err(p) => {
            for line in &p {
                eprintln!("error: input {line}");
            }
            eprintln!(
                "error: `{}` needs valid inputs (--input key=value or --input-json FILE); nothing was run",
                workflow.id
            );
            return Ok(ExitCode::from(2));
        }
    };

    let registry = Registry::discover(&agents, &ProcessEnv, RegistryOptions::default()).await;
    // Only the agents this workflow names matter here.
    let named: std::collections::BTreeSet<String> = workflow
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            orchestrator_core::workflow::StepKind::Agent {
                target: orchestrator_core::workflow::AgentTarget::Named(a),
                ..
            } => Some(a.to_string()),
            _ => None,
        })
        .collect();
    for s in registry.statuses() {
        if s.health.is_unavailable() && named.contains(s.name.as_str()) {
            eprintln!("warning: agent `{}` {}", s.name, s.health);
        }
    }
    // No caller here: agents are called with the orchestrator's own rights.
    let behalf = Arc::new(crate::connect::behalf::OnBehalf::default());
    let connector: Arc<dyn AgentConnector> =
        Arc::new(A2aConnector::new(registry.clone()).with_on_behalf(behalf.clone()));
    let recorder = args
        .record
        .as_ref()
        .map(|_| Arc::new(Recorder::new(connector.clone())));
    let connector = match &recorder {
        Some(r) => r.clone() as Arc<dyn AgentConnector>,
        None => connector,
    };
    let options = EngineOptions {
        currency: agents.currency.as_deref().map(Arc::from),
        ..EngineOptions::default()
    };
    let mut engine = Engine::new(connector, options);
    let llm = match args.llm.config(None) {
        Ok(llm) => llm,
        Err(e) => return Ok(bad_input(e)),
    };
    if let Some(llm) = llm {
        engine = engine.with_model(Arc::new(crate::connect::model::Priced::new(
            crate::llm::Llm::new(llm),
            None,
        )));
    }
    let run_id = uuid::Uuid::new_v4().to_string();
    behalf.start(&run_id, crate::connect::behalf::Subject::Service);
    let mut handle = match engine.start(workflow.clone(), &inputs, run_id) {
        Ok(h) => h,
        Err(p) => {
            eprintln!("error: {}", p.join("; "));
            return Ok(ExitCode::from(2));
        }
    };
    // Nothing is decided for the user: a question is answered as given (--answer),
    // typed at a terminal, or answered automatically with --yes; else the run stops.
    let asker = Asker::watching(args.yes, args.answers.clone());
    let mut progress = (!args.json).then(Progress::new);
    let mut output: Option<(Option<String>, Option<Value>)> = None;
    let mut end = (RunState::Failed, None);
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut canceling = false;
    let mut answered: BTreeMap<String, Vec<String>> = BTreeMap::new();
    loop {
        let event = tokio::select! {
            e = handle.events.recv() => e,
            _ = &mut interrupted, if !canceling => {
                canceling = true;
                eprintln!("interrupted: canceling the run");
                handle.control.cancel();
                continue;
            }
        };
        let Some(event) = event else { break };
        if args.json {
            say!("{}", event_json(&event))?;
        }
        match &event {
            RunEvent::Step {
                step,
                item,
                state,
                attempt,
                agent,
                message,
                ..
            } => {
                if let Some(p) = progress.as_mut() {
                    p.step(
                        step.as_str(),
                        *item,
                        state.as_str(),
                        agent.as_deref(),
                        *attempt,
                        message.as_deref(),
                    );
                }
            }
            RunEvent::Artifact { step, item, .. } => {
                if let Some(p) = progress.as_mut() {
                    p.chunk(step.as_str(), *item);
                }
            }
            RunEvent::Question {
                step, item, prompt, ..
            } => {
                // Asked again while the answer is refused (a typo at the prompt); an
                // automatic answer is given once.
                loop {
                    let given = match progress.as_ref() {
                        Some(p) => asker.answer(p, Some(step.as_str()), prompt),
                        None => asker.unattended_answer(Some(step.as_str()), prompt),
                    };
                    let Some(text) = given else {
                        eprintln!(
                            "error: `{step}` asks: {prompt}\n  nobody here can answer it (stdin is not a terminal): run again with --answer {step}=ANSWER, or --yes to answer every question automatically; canceling the run"
                        );
                        handle.control.cancel();
                        break;
                    };
                    if progress.is_none() {
                        say!(
                            "{}",
                            json!({ "event": "answer", "step": step.as_str(), "item": item, "answer": text })
                        )?;
                    }
                    match handle
                        .control
                        .answer(Some(step.as_str()), *item, Answer::text(text.clone()))
                        .await
                    {
                        Ok(_) => {
                            answered.entry(step.to_string()).or_default().push(text);
                            break;
                        }
                        Err(AnswerError::Invalid(why))
                            if asker.interactive && progress.is_some() =>
                        {
                            eprintln!("not taken: {why}");
                        }
                        Err(e) => {
                            // Waiting for an answer nobody will give would hang the run.
                            eprintln!(
                                "error: `{step}` cannot be answered automatically ({e}); canceling the run"
                            );
                            handle.control.cancel();
                            break;
                        }
                    }
                }
            }
            RunEvent::Output { text, data } => output = Some((text.clone(), data.clone())),
            RunEvent::Answered { .. } | RunEvent::Usage { .. } => {}
            RunEvent::Run { state, message } if state.is_terminal() => {
                end = (*state, message.clone());
                break;
            }
            RunEvent::Run { .. } => {}
        }
    }
    registry.shutdown().await;
    if let (Some(recorder), Some(path)) = (&recorder, &args.record) {
        let detail = handle.control.read(|told| told.detail().clone());
        let text = test_file(&Recording {
            workflow: workflow.id.as_str(),
            inputs: &given,
            replies: recorder.replies(),
            answers: answered,
            detail: &detail,
            output_text: output.as_ref().and_then(|(t, _)| t.as_deref()),
        });
        std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        eprintln!(
            "recorded as a test: {} (replay with `a2a-orchestrator test {}`)",
            path.display(),
            path.display()
        );
    }
    if let Some(p) = progress.as_mut() {
        let elapsed = p.finish();
        if let Some((text, data)) = &output {
            super::progress::print_result(&workflow.name, text.as_deref(), data.as_ref())?;
        }
        if let Some(m) = &end.1 {
            say!("{m}")?;
        }
        say!(
            "\nworkflow {} (in {:.1}s)",
            run_state(end.0),
            elapsed.as_secs_f64()
        )?;
    }
    Ok(if end.0 == RunState::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_json_when_they_parse_and_text_otherwise() {
        let m = read_inputs(
            &[
                "nights=5".into(),
                "origin=London".into(),
                "interests=[\"food\"]".into(),
                "note=a=b".into(),
            ],
            None,
        )
        .unwrap();
        assert_eq!(m["nights"], 5);
        assert_eq!(m["origin"], "London");
        assert_eq!(m["interests"], json!(["food"]));
        assert_eq!(m["note"], "a=b");
        assert!(read_inputs(&["novalue".into()], None).is_err());
    }
}

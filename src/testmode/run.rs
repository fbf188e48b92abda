//! One test run: the engine `serve` runs, on the test's scripted agents and the memory
//! store, on virtual time — a runtime of its own whose clock jumps to the next timer
//! whenever nothing else can happen, so a 24-hour timeout passes at once and the same
//! test runs the same way every time. What the run came to is one JSON document the
//! expectations read.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use orchestrator_core::access::Origin;
use orchestrator_core::engine::{
    Answer, Checkpoint, Engine, EngineOptions, MemoryRunStore, RunEvent,
};

use super::expect::Miss;
use super::file::TestCase;
use super::script::ScriptedAgents;

/// What a test came to.
#[derive(Debug)]
pub struct Outcome {
    /// What the run came to, as the expectations read it.
    pub doc: Value,
    /// The expectations it did not meet.
    pub misses: Vec<Miss>,
    /// Why it could not be judged (its inputs refused, its time run out), if so.
    pub broken: Option<String>,
    /// The virtual time the run took.
    pub virtual_time: Duration,
    /// The wall-clock time the test took.
    pub wall_time: Duration,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.broken.is_none() && self.misses.is_empty()
    }
}

/// Runs `case` on a runtime of its own with a paused clock (on a thread of its own: a
/// runtime cannot be started inside another), and judges it.
pub async fn run(case: Arc<TestCase>) -> Outcome {
    let started = std::time::Instant::now();
    let judged = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .map_err(|e| format!("cannot start the test's runtime: {e}"))?;
        Ok::<_, String>(runtime.block_on(run_on_virtual_time(&case)))
    })
    .await;
    let mut outcome = match judged {
        Ok(Ok(o)) => o,
        Ok(Err(why)) => broken(why),
        Err(e) => broken(format!("the test panicked: {e}")),
    };
    outcome.wall_time = started.elapsed();
    outcome
}

fn broken(why: String) -> Outcome {
    Outcome {
        doc: Value::Null,
        misses: Vec::new(),
        broken: Some(why),
        virtual_time: Duration::ZERO,
        wall_time: Duration::ZERO,
    }
}

/// An answer given, or refused.
type AnswerLog = Arc<Mutex<BTreeMap<String, Vec<Value>>>>;

async fn run_on_virtual_time(case: &TestCase) -> Outcome {
    // Who may start it, as `serve` decides: someone its `allow` does not name is
    // refused, and nothing runs.
    let allow = &case.workflow.allow;
    if let Some(who) = &case.starter
        && !orchestrator_core::access::allowed(allow, who)
    {
        let error = format!(
            "{} may not start workflow `{}`: it is for {}",
            who.name,
            case.workflow.id,
            orchestrator_core::access::describe(allow)
        );
        let doc = json!({ "state": "refused", "error": error });
        let misses = case.expect.iter().filter_map(|e| e.check(&doc)).collect();
        return Outcome {
            doc,
            misses,
            broken: None,
            virtual_time: Duration::ZERO,
            wall_time: Duration::ZERO,
        };
    }
    let clock = tokio::time::Instant::now();
    let agents = ScriptedAgents::new(case);
    let store = Arc::new(MemoryRunStore::new());
    let options = EngineOptions {
        retry_jitter: false,
        ..EngineOptions::default()
    };
    let engine = Engine::new(Arc::new(agents.clone()), options).with_store(store.clone());
    // Workflow steps run their children on the same engine and agents.
    agents.children.bind(Some(engine.clone()));
    let run_id = "test-run".to_owned();
    let origin = Origin {
        initiator: case.starter.clone(),
        ..Origin::default()
    };
    let mut handle =
        match engine.start_by(case.workflow.clone(), &case.input, run_id.clone(), origin) {
            Ok(h) => h,
            Err(problems) => {
                return broken(format!(
                    "the workflow refused the test's input: {}",
                    problems.join("; ")
                ));
            }
        };
    let answers: AnswerLog = Arc::default();
    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    let mut output = json!({ "text": null, "data": null });
    let deadline = tokio::time::sleep(case.limit);
    tokio::pin!(deadline);
    let mut out_of_time = None;
    loop {
        let event = tokio::select! {
            e = handle.events.recv() => e,
            () = &mut deadline, if out_of_time.is_none() => {
                // What it waits on, before the cancel clears it.
                let waiting: Vec<String> = handle.control.read(|told| {
                    (told.detail().pending_questions.iter()).map(|q| format!("`{}`", q.step)).collect()
                });
                out_of_time = Some(waiting);
                handle.control.cancel();
                continue;
            }
        };
        let Some(event) = event else { break };
        match event {
            RunEvent::Question { step, item, .. } => {
                let step = step.to_string();
                let n = asked.entry(step.clone()).or_default();
                let given = case
                    .answers
                    .get(&step)
                    .and_then(|list| list.get(*n).or(list.last()))
                    .cloned();
                *n += 1;
                // Unanswered: it waits, as a question nobody answers does (its timeout
                // passes at once on virtual time).
                let Some(given) = given else { continue };
                let control = handle.control.clone();
                let log = answers.clone();
                tokio::spawn(async move {
                    if let Some(d) = given.delay {
                        tokio::time::sleep(d).await;
                    }
                    let answer = Answer {
                        text: given.text.clone(),
                        data: given.data.clone(),
                        by: given.by.clone(),
                    };
                    let result = control.answer(Some(&step), item, answer).await;
                    let entry = match result {
                        Ok(_) => json!({ "taken": true, "by": given.by.map(|a| a.id) }),
                        Err(e) => {
                            json!({ "taken": false, "refused": e.to_string(), "by": given.by.map(|a| a.id) })
                        }
                    };
                    log.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(step)
                        .or_default()
                        .push(entry);
                });
            }
            RunEvent::Output { text, data } => output = json!({ "text": text, "data": data }),
            RunEvent::Run { state, .. } if state.is_terminal() => break,
            _ => {}
        }
    }
    // Let answers on their way settle.
    tokio::task::yield_now().await;
    agents.children.bind(None);
    let virtual_time = clock.elapsed();
    let detail = handle.control.read(|told| told.detail().clone());
    let saved = engine.saved_run(&run_id).await.ok().flatten();
    let mut steps = Map::new();
    for s in &detail.steps {
        let record = saved
            .as_ref()
            .and_then(|r| match r.units.get(&(s.step.clone(), s.item)) {
                Some(Checkpoint::Done(record)) => Some(record.to_json()),
                _ => None,
            });
        let mut entry = json!({
            "state": s.state.as_str(), "attempts": s.attempts, "agent": s.agent,
            "message": s.message, "usage": s.usage, "usageByAttempt": s.usage_by_attempt,
        });
        if let Some(Value::Object(r)) = record {
            for key in ["text", "data", "error", "artifacts"] {
                if let Some(v) = r.get(key) {
                    entry[key] = v.clone();
                }
            }
        }
        match s.item {
            None => {
                steps.insert(s.step.clone(), entry);
            }
            Some(_) => {
                // A loop's items are its passes.
                let key = match case.workflow.steps.iter().find(|w| w.id.as_str() == s.step) {
                    Some(w) if w.repeat.is_some() => "passes",
                    _ => "items",
                };
                let step = steps.entry(s.step.clone()).or_insert_with(|| json!({}));
                match step.get_mut(key) {
                    Some(Value::Array(items)) => items.push(entry),
                    _ => step[key] = json!([entry]),
                }
            }
        }
    }
    let sent: Map<String, Value> = agents
        .sent()
        .into_iter()
        .map(|(agent, list)| {
            (
                agent,
                Value::Array(list.iter().map(|s| s.to_json()).collect()),
            )
        })
        .collect();
    let answers = answers.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let doc = json!({
        "state": detail.state.as_str(),
        "error": detail.error,
        "usage": detail.usage,
        "output": output,
        "steps": steps,
        "sent": sent,
        "answers": answers,
    });
    let misses = case.expect.iter().filter_map(|e| e.check(&doc)).collect();
    let broken = out_of_time.map(|waiting| {
        let on = if waiting.is_empty() { String::new() } else { format!(" (waiting on {})", waiting.join(", ")) };
        format!(
            "the run had not ended after {} of virtual time{on}: answer its questions in [answers], or raise [test] timeout",
            orchestrator_core::config::format_duration(case.limit)
        )
    });
    Outcome {
        doc,
        misses,
        broken,
        virtual_time,
        wall_time: Duration::ZERO,
    }
}

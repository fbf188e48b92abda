//! Which workflow a new message is for, and its inputs: from the request's metadata, a
//! DataPart `{"workflow": ..., "input": {...}}`, the only loaded workflow, or a match of
//! the text against the workflows' ids, names, tags and examples.

use std::sync::Arc;

use serde_json::{Map, Value};

use a2a::types::{Message, Metadata};
use orchestrator_core::workflow::{InputType, Workflow};

/// The outcome of routing.
pub enum WorkflowMatch {
    Found(Arc<Workflow>),
    /// Nothing matched, or several did: the client must choose.
    Unclear {
        candidates: Vec<Arc<Workflow>>,
        reason: String,
    },
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

/// The `workflow` named in metadata or a DataPart.
fn named(message: &Message, request: Option<&Metadata>) -> Option<String> {
    let from_meta = |m: Option<&Metadata>| {
        m.and_then(|m| m.get("workflow"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    from_meta(message.metadata.as_ref())
        .or_else(|| from_meta(request))
        .or_else(|| {
            message.parts.iter().find_map(|p| {
                p.as_object()?
                    .get("workflow")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
        })
}

/// Whether the message (or its request) names its workflow.
pub fn names_workflow(message: &Message, request: Option<&Metadata>) -> bool {
    named(message, request).is_some()
}

/// The workflow a new message names, or its closest match by words (no model): what
/// the orchestrator falls back on when no model chooses.
pub fn match_workflow(
    workflows: &[Arc<Workflow>],
    message: &Message,
    request: Option<&Metadata>,
) -> WorkflowMatch {
    if let Some(id) = named(message, request) {
        return match workflows.iter().find(|w| w.id.as_str() == id) {
            Some(w) => WorkflowMatch::Found(w.clone()),
            None => WorkflowMatch::Unclear {
                candidates: workflows.to_vec(),
                reason: format!("there is no workflow `{id}`"),
            },
        };
    }
    if let [only] = workflows {
        return WorkflowMatch::Found(only.clone());
    }
    let text = words(&message.text());
    let score = |w: &Workflow| {
        let mut vocabulary = words(w.id.as_str());
        vocabulary.extend(words(&w.name));
        for t in &w.tags {
            vocabulary.extend(words(t));
        }
        for e in &w.examples {
            vocabulary.extend(words(e));
        }
        text.iter().filter(|t| vocabulary.contains(t)).count()
    };
    let scored: Vec<(usize, &Arc<Workflow>)> = workflows.iter().map(|w| (score(w), w)).collect();
    let best = scored.iter().map(|(s, _)| *s).max().unwrap_or(0);
    let top: Vec<&Arc<Workflow>> = scored
        .iter()
        .filter(|(s, _)| *s == best && best > 0)
        .map(|(_, w)| *w)
        .collect();
    match top.as_slice() {
        [one] => WorkflowMatch::Found((*one).clone()),
        [] => WorkflowMatch::Unclear {
            candidates: workflows.to_vec(),
            reason: "I could not tell which workflow you want".into(),
        },
        many => WorkflowMatch::Unclear {
            candidates: many.iter().map(|w| (*w).clone()).collect(),
            reason: "several workflows could fit".into(),
        },
    }
}

/// Inputs a message carries: a DataPart's `input` object (or its other keys), and
/// `key: value` lines in its text for the workflow's declared inputs.
pub fn inputs_from(message: &Message, workflow: &Workflow) -> Map<String, Value> {
    let mut out = Map::new();
    for p in &message.parts {
        if let Some(d) = p.as_object() {
            match d.get("input") {
                Some(Value::Object(i)) => out.extend(i.clone()),
                _ => out.extend(
                    d.iter()
                        .filter(|(k, _)| *k != "workflow")
                        .map(|(k, v)| (k.clone(), v.clone())),
                ),
            }
        } else if let Some(text) = p.as_text() {
            for line in text.lines() {
                let Some((k, v)) = line.split_once(':') else {
                    continue;
                };
                let key = k.trim();
                if let Some(spec) = workflow.inputs.iter().find(|i| i.name == key) {
                    out.insert(key.to_owned(), typed(spec.ty, v.trim()));
                }
            }
        }
    }
    out
}

/// A text value read as the input's type (left a string when it does not parse, so the
/// check reports it).
fn typed(ty: InputType, v: &str) -> Value {
    let parsed = match ty {
        InputType::Integer => v.parse::<i64>().ok().map(Value::from),
        InputType::Number => v
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        InputType::Boolean => match v.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => Some(Value::Bool(true)),
            "false" | "no" | "n" => Some(Value::Bool(false)),
            _ => None,
        },
        InputType::Array => Some(Value::Array(
            v.split(',')
                .map(|x| Value::String(x.trim().to_owned()))
                .filter(|x| x != "")
                .collect(),
        )),
        InputType::Object => serde_json::from_str(v).ok(),
        InputType::String => None,
    };
    parsed.unwrap_or_else(|| Value::String(v.to_owned()))
}

//! Recording a test from real agents (`run --record FILE`): the connector the run calls
//! agents through is wrapped, so that what each agent answered each message becomes a
//! reply of its step's script; with the answers the run's questions got and what the
//! run came to, it is written as a test file that replays the same run. Only what the
//! agents said is written: no header, token or credential passes through here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use orchestrator_core::engine::{
    AgentConnector, AgentError, Content, RemoteState, RunDetail, SendRequest, Update, Updates,
    Usage,
};

use super::file::{Act, Reply};

/// An [`AgentConnector`] that writes down what the agents it calls answer.
pub struct Recorder {
    inner: Arc<dyn AgentConnector>,
    /// Per step (or fan-out item), a place per message in the order sent (which a
    /// replay sends them in), filled as each answer ends (in whatever order they end).
    heard: Arc<Mutex<BTreeMap<String, Vec<Option<Reply>>>>>,
}

impl Recorder {
    pub fn new(inner: Arc<dyn AgentConnector>) -> Self {
        Recorder {
            inner,
            heard: Arc::default(),
        }
    }

    /// What each step's agent answered, message by message (those answered in full).
    pub fn replies(&self) -> BTreeMap<String, Vec<Reply>> {
        let heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        (heard.iter())
            .map(|(step, acts)| (step.clone(), acts.iter().flatten().cloned().collect()))
            .collect()
    }
}

/// One answer as it comes in, update by update.
#[derive(Default)]
struct Hearing {
    texts: Vec<String>,
    data: Map<String, Value>,
    /// The agent's last report.
    usage: Option<Usage>,
    /// What its calls cost at its price per call.
    charged: f64,
}

impl Hearing {
    /// What the answer used: the agent's report, and its calls' price.
    fn used(&self) -> Option<Usage> {
        if self.charged == 0.0 {
            return self.usage;
        }
        let mut u = self.usage.unwrap_or_default();
        u.cost += self.charged;
        Some(u)
    }

    fn parts(&mut self, parts: &[Content]) {
        for p in parts {
            match p {
                Content::Text(t) => self.texts.push(t.clone()),
                Content::Data(d) => self.data.extend(d.clone()),
                Content::File { .. } => {}
            }
        }
    }

    /// The reply an update ends the answer with, if it ends it.
    fn ends(&mut self, update: &Update) -> Option<Act> {
        match update {
            Update::Started { .. } => None,
            Update::Usage(u) => {
                self.usage = Some(*u);
                None
            }
            Update::Charged(u) => {
                self.charged += u.cost;
                None
            }
            Update::Model(_) => None,
            Update::Artifact(chunk) => {
                self.parts(&chunk.parts);
                None
            }
            Update::Reply(parts) => {
                self.parts(parts);
                Some(self.completed())
            }
            Update::Status { state, message } => {
                let said = || message.clone().unwrap_or_default();
                match state {
                    RemoteState::Working => None,
                    RemoteState::Completed => Some(self.completed()),
                    RemoteState::Failed => Some(Act::Fail(said())),
                    RemoteState::Canceled => Some(Act::Cancel(said())),
                    RemoteState::Rejected => Some(Act::Reject(said())),
                    RemoteState::InputRequired | RemoteState::AuthRequired => {
                        Some(Act::Ask(said()))
                    }
                }
            }
        }
    }

    fn completed(&mut self) -> Act {
        let texts = std::mem::take(&mut self.texts);
        let data = (!self.data.is_empty()).then(|| std::mem::take(&mut self.data));
        match texts.len() {
            0 if data.is_some() => Act::Complete {
                text: None,
                stream: Vec::new(),
                data,
            },
            0 | 1 => Act::Complete {
                text: Some(texts.into_iter().next().unwrap_or_default()),
                stream: Vec::new(),
                data,
            },
            _ => Act::Complete {
                text: None,
                stream: texts,
                data,
            },
        }
    }
}

impl AgentConnector for Recorder {
    fn send(&self, request: SendRequest) -> BoxFuture<'static, Result<Updates, AgentError>> {
        let heard = self.heard.clone();
        // A fan-out item's answers are its own: items are sent in no fixed order.
        let step = match request.item {
            Some(i) => format!("{}[{i}]", request.step),
            None => request.step.to_string(),
        };
        let place = {
            let mut heard = heard.lock().unwrap_or_else(|p| p.into_inner());
            let places = heard.entry(step.clone()).or_default();
            places.push(None);
            places.len() - 1
        };
        let call = self.inner.send(request);
        let note = move |act: Act, usage: Option<Usage>| {
            let mut heard = heard.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(p) = heard.get_mut(&step).and_then(|p| p.get_mut(place)) {
                *p = Some(Reply {
                    delay: None,
                    act,
                    usage,
                });
            }
        };
        Box::pin(async move {
            let updates = match call.await {
                Ok(u) => u,
                Err(e) => {
                    note(Act::Down(e.message.clone()), None);
                    return Err(e);
                }
            };
            let mut hearing = Hearing::default();
            let mut noted = false;
            let tapped = updates.map(move |u| {
                if !noted {
                    let act = match &u {
                        Ok(update) => hearing.ends(update),
                        Err(e) => Some(Act::Down(e.message.clone())),
                    };
                    if let Some(act) = act {
                        noted = true;
                        note(act, hearing.used());
                    }
                }
                u
            });
            let stream: Updates = Box::pin(tapped);
            Ok(stream)
        })
    }

    fn attach(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<Updates, AgentError>> {
        self.inner.attach(run_id, agent, task_id)
    }

    fn cancel(
        &self,
        run_id: &str,
        agent: &str,
        task_id: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        self.inner.cancel(run_id, agent, task_id)
    }
}

/// What a recorded run is written with.
pub struct Recording<'a> {
    pub workflow: &'a str,
    pub inputs: &'a Map<String, Value>,
    pub replies: BTreeMap<String, Vec<Reply>>,
    /// The answers its questions got, by step, in order.
    pub answers: BTreeMap<String, Vec<String>>,
    pub detail: &'a RunDetail,
    pub output_text: Option<&'a str>,
}

/// The test file that replays `r`, expecting what the run came to.
pub fn test_file(r: &Recording<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Recorded from a run of `{}` against its agents: replay with `a2a-orchestrator test`.\n",
        r.workflow
    );
    let _ = writeln!(out, "[test]\nworkflow = {}", string(r.workflow));
    let inputs = Value::Object(r.inputs.clone());
    if let Some(v) = toml_value(&inputs) {
        let _ = writeln!(out, "input = {v}");
    }
    for (step, acts) in &r.replies {
        let _ = writeln!(out, "\n[steps.{}]\nreplies = [", key(step));
        for r in acts {
            let _ = writeln!(out, "  {},", reply(r));
        }
        out.push_str("]\n");
    }
    if !r.answers.is_empty() {
        out.push_str("\n[answers]\n");
        for (step, given) in &r.answers {
            let list: Vec<String> = given
                .iter()
                .map(|t| format!("{{ text = {} }}", string(t)))
                .collect();
            let _ = writeln!(out, "{} = [{}]", key(step), list.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\n[expect]\nstate = {}",
        string(r.detail.state.as_str())
    );
    if let Some(t) = r.output_text {
        let _ = writeln!(out, "\"output.text\" = {}", string(t));
    }
    for s in r.detail.steps.iter().filter(|s| s.item.is_none()) {
        let path = format!("steps.{}.state", s.step);
        let _ = writeln!(out, "{} = {}", string(&path), string(s.state.as_str()));
    }
    out
}

/// A reply as an inline table: what the agent did, and what it used.
fn reply(r: &Reply) -> String {
    let mut fields = match &r.act {
        Act::Complete { text, stream, data } => {
            let mut fields = Vec::new();
            if let Some(t) = text {
                fields.push(format!("text = {}", string(t)));
            }
            if !stream.is_empty() {
                let chunks: Vec<String> = stream.iter().map(|s| string(s)).collect();
                fields.push(format!("stream = [{}]", chunks.join(", ")));
            }
            if let Some(d) = data
                .as_ref()
                .and_then(|d| toml_value(&Value::Object(d.clone())))
            {
                fields.push(format!("data = {d}"));
            }
            fields
        }
        Act::Fail(why) => vec![format!("fail = {}", string(why))],
        Act::Reject(why) => vec![format!("reject = {}", string(why))],
        Act::Cancel(why) => vec![format!("cancel = {}", string(why))],
        Act::Ask(q) => vec![format!("ask = {}", string(q))],
        Act::Down(why) => vec![format!("down = {}", string(why))],
    };
    if let Some(u) = r.usage.filter(|u| !u.is_zero()) {
        fields.push(format!(
            "usage = {{ input_tokens = {}, output_tokens = {}, cost = {} }}",
            u.input_tokens,
            u.output_tokens,
            Value::from(u.cost)
        ));
    }
    format!("{{ {} }}", fields.join(", "))
}

/// A TOML basic string: JSON's escapes are TOML's (serde_json writes no `\/`).
fn string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A key, bare when it can be.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_owned() } else { string(k) }
}

/// A JSON value as a TOML value (inline tables); `None` for null, which TOML cannot
/// hold (a null in a table or array is left out).
fn toml_value(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(string(s)),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().filter_map(toml_value).collect();
            Some(format!("[{}]", items.join(", ")))
        }
        Value::Object(m) => {
            let fields: Vec<String> = m
                .iter()
                .filter_map(|(k, v)| toml_value(v).map(|v| format!("{} = {v}", key(k))))
                .collect();
            Some(match fields.is_empty() {
                true => "{}".to_owned(),
                false => format!("{{ {} }}", fields.join(", ")),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_written_as_toml_that_reads_back_the_same() {
        let v =
            json!({"a b": "x\"y\n\u{1}", "n": 1.5, "list": [1, null, {"k": true}], "gone": null});
        let text = format!("v = {}", toml_value(&v).unwrap());
        let back: toml::Table = toml::from_str(&text).unwrap();
        let back = serde_json::to_value(&back["v"]).unwrap();
        assert_eq!(
            back,
            json!({"a b": "x\"y\n\u{1}", "n": 1.5, "list": [1, {"k": true}]})
        );
    }
}

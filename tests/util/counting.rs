//! Agents that count the messages they are asked to work on: what the durability and
//! replica tests check "each step ran once" with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::RpcError;
use a2a::card::{AgentCard, AgentSkill};
use a2a::server::{AgentExecutor, EventSink, RequestContext};
use a2a::types::*;
use serde_json::{Value, json};

use crate::util::{Running, serve_with};

/// Like [`counting`], also counting the JSON-RPC methods the agent is called with.
pub(crate) async fn counting_calls(
    name: &'static str,
    delay: Duration,
    seen: &Arc<Mutex<HashMap<String, u32>>>,
    calls: &Calls,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let agent = Counting {
        name,
        delay,
        seen: seen.clone(),
    };
    let server = a2a::server::A2aServer::new(agent, card(name, &url));
    let calls = calls.clone();
    let router = server.router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let calls = calls.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = http_body_util::BodyExt::collect(body)
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                if let Ok(v) = serde_json::from_slice::<Value>(&bytes)
                    && let Some(m) = v["method"].as_str()
                {
                    *calls
                        .lock()
                        .unwrap()
                        .entry(format!("{name}:{m}"))
                        .or_default() += 1;
                }
                next.run(axum::extract::Request::from_parts(
                    parts,
                    axum::body::Body::from(bytes),
                ))
                .await
            }
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// Calls per "agent:method", counted at the agent's HTTP endpoint.
pub(crate) type Calls = Arc<Mutex<HashMap<String, u32>>>;

pub(crate) async fn counting(
    name: &'static str,
    delay: Duration,
    seen: &Arc<Mutex<HashMap<String, u32>>>,
) -> Running {
    let agent = Counting {
        name,
        delay,
        seen: seen.clone(),
    };
    serve_with(agent, |url| card(name, url), |b| b).await
}

/// An agent that counts the messages it is asked to work on (by the text's first word),
/// thinks for `delay`, streams two chunks, and completes with a data part.
#[derive(Clone)]
pub(crate) struct Counting {
    name: &'static str,
    delay: Duration,
    seen: Arc<Mutex<HashMap<String, u32>>>,
}

impl AgentExecutor for Counting {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let key = format!("{}:{}", self.name, ctx.message.text());
        *self.seen.lock().unwrap().entry(key).or_default() += 1;
        events.working(Some("on it")).await.ok();
        tokio::select! {
            () = tokio::time::sleep(self.delay) => {}
            () = ctx.stopped() => return Ok(()),
        }
        let id = ArtifactId::new("answer");
        for (i, chunk) in ["from ", self.name].iter().enumerate() {
            let a = Artifact::new(id.clone(), vec![Part::text(*chunk)]);
            events.artifact(a, i > 0, i == 1).await.ok();
        }
        let mut data = serde_json::Map::new();
        data.insert("agent".into(), json!(self.name));
        events
            .artifact(
                a2a::types::Artifact::new(
                    ArtifactId::new("data"),
                    vec![a2a::types::Part::data(data)],
                ),
                false,
                true,
            )
            .await
            .ok();
        events.complete(None).await.ok();
        Ok(())
    }
}

fn card(name: &str, url: &str) -> AgentCard {
    let mut c = AgentCard::new(name, "a counting test agent", url);
    c.capabilities_mut().streaming = Some(true);
    c.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    c.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    c.skills = vec![AgentSkill {
        id: name.into(),
        name: name.into(),
        description: "counts".into(),
        tags: vec![],
        ..Default::default()
    }];
    c
}

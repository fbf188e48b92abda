//! A small A2A agent written only against the crate's public API — the template to copy
//! when writing your own agent.
//!
//! It streams the text it receives back word by word as chunks of one artifact, stops
//! when canceled, and when the text contains "ask me" it asks what to echo
//! (`input-required`) and continues with the next message on the same task.
//!
//! Run it with `cargo run --example echo_agent -- [PORT] [WORD_DELAY_MS] [--protocol
//! both|1.0|0.3]`, then for example `cargo run -- card http://127.0.0.1:9999`.

use std::time::Duration;

use a2a::RpcError;
use a2a::card::{AgentCapabilities, AgentCard, AgentSkill};
use a2a::server::{A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig, Versions};
use a2a::types::{Artifact, ArtifactId, Part, TaskState};

/// Echoes text back, one word per artifact chunk, `word_delay` apart.
pub struct EchoAgent {
    pub word_delay: Duration,
}

impl AgentExecutor for EchoAgent {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let text = ctx.message.text();
        let continuing = ctx
            .task
            .as_ref()
            .is_some_and(|t| t.state() == TaskState::InputRequired);
        if !continuing && text.to_lowercase().contains("ask me") {
            events
                .input_required("What should I echo?")
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?;
            return Ok(());
        }
        let fail = |e: a2a::server::SinkError| RpcError::internal(e.to_string());
        events.working(Some("echoing")).await.map_err(fail)?;
        let words: Vec<&str> = text.split_whitespace().collect();
        let artifact_id = ArtifactId::new("echo");
        for (i, word) in words.iter().enumerate() {
            tokio::select! {
                // Canceled: the server has already marked the task canceled.
                () = ctx.stopped() => return Ok(()),
                () = tokio::time::sleep(self.word_delay) => {}
            }
            let chunk = if i == 0 {
                word.to_string()
            } else {
                format!(" {word}")
            };
            let artifact =
                Artifact::new(artifact_id.clone(), vec![Part::text(chunk)]).with_name("echo");
            events
                .artifact(artifact, i > 0, i + 1 == words.len())
                .await
                .map_err(fail)?;
        }
        events.complete(Some(&text)).await.map_err(fail)
    }
}

/// The echo agent's card, served at `url`.
pub fn echo_card(url: &str) -> AgentCard {
    let mut card = AgentCard::new("Echo", "Streams your text back word by word", url);
    card.capabilities = Some(AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        ..Default::default()
    });
    card.skills = vec![AgentSkill {
        id: "echo".into(),
        name: "Echo".into(),
        description: "Repeats the text it is sent; say \"ask me\" to be asked what to echo".into(),
        tags: vec!["test".into()],
        examples: vec!["hello world".into(), "ask me".into()],
        ..Default::default()
    }];
    card
}

const USAGE: &str = "usage: echo_agent [PORT] [WORD_DELAY_MS] [--protocol both|1.0|0.3]   (defaults: 9999 100 both)";

/// A positional number, or the usage and exit status 2.
fn number<T: std::str::FromStr>(arg: Option<String>, default: T, what: &str) -> T {
    match arg {
        None => default,
        Some(a) => a.parse().unwrap_or_else(|_| {
            eprintln!("error: {what} must be a number, got {a:?}\n{USAGE}");
            std::process::exit(2)
        }),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    if std::env::args().any(|a| a == "-h" || a == "--help") {
        println!("An A2A agent that streams your text back word by word.\n{USAGE}");
        return Ok(());
    }
    let mut generations = Versions::Both;
    let mut positional = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = match a.strip_prefix("--protocol") {
            Some("") => args.next(),
            Some(rest) if rest.starts_with('=') => Some(rest[1..].to_owned()),
            _ => {
                positional.push(a);
                continue;
            }
        };
        generations = value
            .as_deref()
            .and_then(Versions::parse)
            .unwrap_or_else(|| {
                eprintln!("error: --protocol must be both, 1.0 or 0.3, got {value:?}\n{USAGE}");
                std::process::exit(2)
            });
    }
    let mut positional = positional.into_iter();
    let port: u16 = number(positional.next(), 9999, "PORT");
    let delay_ms: u64 = number(positional.next(), 100, "WORD_DELAY_MS");
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    let url = format!("http://{}/", listener.local_addr()?);
    let speaks = match generations {
        Versions::Both => "A2A 1.0 and 0.3",
        Versions::V1_0 => "A2A 1.0 only",
        Versions::V0_3 => "A2A 0.3 only",
    };
    println!("echo agent listening at {url} ({speaks})");
    let agent = EchoAgent {
        word_delay: Duration::from_millis(delay_ms),
    };
    let config = ServerConfig {
        generations,
        ..ServerConfig::default()
    };
    let server = A2aServer::builder(agent, echo_card(&url))
        .config(config)
        .build();
    server
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

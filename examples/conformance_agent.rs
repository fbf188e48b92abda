//! The system under test for the A2A v1.0 conformance kit (a2aproject/a2a-tck, branch
//! `1.0-dev`): it behaves as the kit's scenarios expect, picked by the prefix of the
//! incoming `messageId` (`tck-complete-task`, `tck-artifact-*`, `tck-stream-*`,
//! `tck-input-required`, `tck-reject-task`, `tck-message-response`,
//! `test-resubscribe-message-id`, …). Its card declares JSON-RPC 1.0, HTTP+JSON 1.0 and
//! JSON-RPC 0.3, all served on one port by this crate's server.
//!
//!     cargo run --example conformance_agent -- [PORT]
//!
//! then point the kit at `http://127.0.0.1:PORT` (the README says how).

use std::time::Duration;

use a2a::RpcError;
use a2a::Versions;
use a2a::card::{AgentCapabilities, AgentCard, AgentSkill};
use a2a::server::{A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig};
use a2a::types::{Artifact, ArtifactId, Message, Part, TaskState};

/// How long `tck-delayed-complete` works before completing.
pub const DELAY: Duration = Duration::from_secs(2);
/// How long `test-resubscribe-message-id` stays working, for the kit to resubscribe.
pub const HOLD: Duration = Duration::from_secs(4);

/// The behaviours, by `messageId` prefix; longest first, so that no prefix shadows a
/// longer one that begins with it.
const PREFIXES: [&str; 16] = [
    "tck-stream-artifact-chunked",
    "test-resubscribe-message-id",
    "tck-stream-artifact-text",
    "tck-stream-artifact-file",
    "tck-stream-ordering-001",
    "tck-artifact-file-url",
    "tck-delayed-complete",
    "tck-message-response",
    "tck-input-required",
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-data",
    "tck-reject-task",
    "tck-stream-001",
    "tck-stream-003",
];

/// The conformance kit's system under test.
pub struct ConformanceAgent {
    /// Scales the kit's waits (`DELAY`, `HOLD`); 1.0 for the kit, less in our tests.
    pub time_scale: f64,
}

fn text_artifact(text: &str) -> Artifact {
    Artifact::new(ArtifactId::new("output"), vec![Part::text(text)])
}

/// A file part named `output.txt`, of plain text.
fn file_part(part: Part) -> Part {
    part.with_filename("output.txt")
}

/// What the kit's file artifact holds.
const FILE_BYTES: &[u8] = b"TCK file content";

impl AgentExecutor for ConformanceAgent {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let id = ctx.message.message_id.as_str().to_owned();
        let behaviour = PREFIXES.iter().find(|p| id.starts_with(**p)).copied();
        let wait = |d: Duration| tokio::time::sleep(d.mul_f64(self.time_scale));
        match behaviour {
            Some("tck-message-response") => {
                events
                    .reply(vec![Part::text("Direct message response")])
                    .await?;
            }
            Some("tck-input-required") => {
                events.input_required("What should I do next?").await?;
            }
            Some("tck-reject-task") => {
                events
                    .status(TaskState::Rejected, Some(Message::agent_text("rejected")))
                    .await?;
            }
            Some("tck-delayed-complete") => {
                events.working(None).await?;
                tokio::select! {
                    () = wait(DELAY) => {}
                    () = ctx.stopped() => return Ok(()),
                }
                events.complete(Some("Done after delay")).await?;
            }
            Some("test-resubscribe-message-id") => {
                events.working(None).await?;
                tokio::select! {
                    () = wait(HOLD) => {}
                    () = ctx.stopped() => return Ok(()),
                }
                events.artifact(text_artifact("done"), false, true).await?;
                events.complete(None).await?;
            }
            Some("tck-stream-artifact-chunked") => {
                events.working(None).await?;
                events
                    .artifact(text_artifact("chunk-1 "), true, false)
                    .await?;
                events
                    .artifact(text_artifact("chunk-2"), true, true)
                    .await?;
                events.complete(None).await?;
            }
            Some(prefix) => {
                let part = match prefix {
                    "tck-artifact-text" => Part::text("Generated text content"),
                    "tck-stream-001" => Part::text("Stream hello from TCK"),
                    "tck-stream-003" => Part::text("Stream task lifecycle"),
                    "tck-stream-ordering-001" => Part::text("Ordered output"),
                    "tck-stream-artifact-text" => Part::text("Streamed text content"),
                    "tck-artifact-file" | "tck-stream-artifact-file" => {
                        file_part(Part::raw(FILE_BYTES, "text/plain"))
                    }
                    "tck-artifact-file-url" => {
                        file_part(Part::url("https://example.com/output.txt", "text/plain"))
                    }
                    "tck-artifact-data" => Part::data(
                        serde_json::json!({"key": "value", "count": 42})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    ),
                    _ => {
                        events.complete(Some("Hello from TCK")).await?;
                        return Ok(());
                    }
                };
                events.working(None).await?;
                let artifact = Artifact::new(ArtifactId::new("output"), vec![part]);
                events.artifact(artifact, false, true).await?;
                events.complete(None).await?;
            }
            None => {
                events.complete(Some(&ctx.message.text())).await?;
            }
        }
        Ok(())
    }
}

/// The card of the system under test, served at `url`.
pub fn conformance_card(url: &str) -> AgentCard {
    let mut card = AgentCard::new(
        "tck-sut",
        "System under test for the A2A conformance kit",
        url,
    );
    card.capabilities = Some(AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        ..Default::default()
    });
    card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    card.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    card.skills = vec![AgentSkill {
        id: "tck".into(),
        name: "Conformance behaviours".into(),
        description: "Behaves as the conformance kit's scenarios ask, by messageId prefix".into(),
        tags: vec!["tck".into()],
        ..Default::default()
    }];
    card
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let usage = |why: &str| -> ! {
        eprintln!("usage: conformance_agent [PORT] [--protocol both|1.0]  ({why})");
        std::process::exit(2)
    };
    let (mut port, mut generations) = (9998u16, Versions::Both);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--protocol" {
            generations = match args.next().as_deref() {
                Some("both") => Versions::Both,
                Some("1.0") => Versions::V1_0,
                other => usage(&format!("--protocol takes both or 1.0, got {other:?}")),
            };
        } else {
            port = arg
                .parse()
                .unwrap_or_else(|_| usage(&format!("PORT must be a number, got {arg:?}")));
        }
    }
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    let url = format!("http://{}/", listener.local_addr()?);
    let speaks = match generations {
        Versions::V1_0 => "JSON-RPC 1.0, HTTP+JSON 1.0; a v1.0-only card",
        _ => "JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3",
    };
    println!("conformance agent listening at {url} ({speaks})");
    let agent = ConformanceAgent { time_scale: 1.0 };
    // A fresh agent to the kit, which reuses one messageId across its tests: every
    // message starts a new task. The kit's webhook receiver listens on loopback, which
    // a server refuses by default (against server-side request forgery).
    let config = ServerConfig {
        message_idempotency: false,
        allow_private_webhooks: true,
        generations,
        ..ServerConfig::default()
    };
    A2aServer::builder(agent, conformance_card(&url))
        .config(config)
        .build()
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

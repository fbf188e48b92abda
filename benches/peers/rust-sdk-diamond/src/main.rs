//! The benchmark's diamond (one step, two in parallel, one join) written on the official
//! A2A Rust SDK the way its examples write an agent: the SDK's default request handler,
//! in-memory task store and JSON-RPC router upstream; its client, chosen from the
//! agent's card, sending each step as a blocking `SendMessage` downstream. It is the
//! peer `a2a-orchestrator bench --peer` measures the orchestrator against, so it does
//! what the orchestrator's diamond does and nothing more.
//!
//! `rust-sdk-diamond AGENT_URL` serves on a loopback port of its own and prints
//! `listening on http://ADDR/` once it takes requests; every run calls the agent at
//! AGENT_URL (its card is read at start) four times and answers with a completed task
//! holding the join step's answer.

use std::sync::Arc;

use a2a::*;
use a2a_client::agent_card::AgentCardResolver;
use a2a_client::{A2AClient, A2AClientFactory, Transport};
use a2a_server::*;
use futures::stream::{self, BoxStream};

type Client = A2AClient<Box<dyn Transport>>;

/// The diamond: `top`, then `left` and `right` at once, then `join`.
struct Diamond {
    agent: Arc<Client>,
}

impl AgentExecutor for Diamond {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let agent = self.agent.clone();
        let run = async move {
            // The orchestrator's diamond sends each step a fixed message; so does this.
            step(&agent, "top").await?;
            futures::try_join!(step(&agent, "left"), step(&agent, "right"))?;
            let join = step(&agent, "join").await?;
            Ok(StreamResponse::Task(Task {
                id: ctx.task_id.clone(),
                context_id: ctx.context_id.clone(),
                status: TaskStatus {
                    state: TaskState::Completed,
                    message: None,
                    timestamp: Some(chrono_now()),
                },
                artifacts: Some(vec![Artifact {
                    artifact_id: new_artifact_id(),
                    name: Some("join".to_owned()),
                    description: None,
                    parts: vec![Part::text(join)],
                    metadata: None,
                    extensions: None,
                }]),
                history: None,
                metadata: None,
            }))
        };
        Box::pin(stream::once(run))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        Box::pin(stream::once(async move {
            Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: ctx.task_id,
                context_id: ctx.context_id,
                status: TaskStatus {
                    state: TaskState::Canceled,
                    message: None,
                    timestamp: Some(chrono_now()),
                },
                metadata: None,
            }))
        }))
    }
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// One step: a blocking `SendMessage` to the agent; the text of what it answered.
async fn step(agent: &Client, text: &str) -> Result<String, A2AError> {
    let request = SendMessageRequest {
        message: Message::new(Role::User, vec![Part::text(text)]),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let task = match agent.send_message(&request).await? {
        SendMessageResponse::Task(task) => task,
        SendMessageResponse::Message(message) => {
            return Ok(message.text().unwrap_or_default().to_owned());
        }
    };
    if task.status.state != TaskState::Completed {
        return Err(A2AError::internal(format!(
            "step {text:?} ended {:?}",
            task.status.state
        )));
    }
    let answer = task
        .artifacts
        .iter()
        .flatten()
        .flat_map(|artifact| &artifact.parts)
        .find_map(|part| part.as_text())
        .unwrap_or_default();
    Ok(answer.to_owned())
}

fn card(url: &str) -> AgentCard {
    AgentCard {
        name: "Diamond on the A2A Rust SDK".to_owned(),
        description: "one step, two in parallel, one join".to_owned(),
        version: "0.1.0".to_owned(),
        supported_interfaces: vec![AgentInterface::new(url, TRANSPORT_PROTOCOL_JSONRPC)],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: None,
        },
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        skills: vec![AgentSkill {
            id: "diamond".to_owned(),
            name: "diamond".to_owned(),
            description: "one step, two in parallel, one join".to_owned(),
            tags: vec![],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent_url = std::env::args()
        .nth(1)
        .ok_or("usage: rust-sdk-diamond AGENT_URL")?;
    let agent_card = AgentCardResolver::new(None).resolve(&agent_url).await?;
    let agent = A2AClientFactory::builder()
        .preferred_bindings(vec![TRANSPORT_PROTOCOL_JSONRPC.to_owned()])
        .build()
        .create_from_card(&agent_card)
        .await?;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    let handler = Arc::new(DefaultRequestHandler::new(
        Diamond {
            agent: Arc::new(agent),
        },
        InMemoryTaskStore::new(),
    ));
    let app = axum::Router::new()
        .merge(a2a_server::jsonrpc::jsonrpc_router(handler))
        .merge(a2a_server::agent_card::agent_card_router(Arc::new(
            StaticAgentCard::new(card(&url)),
        )));
    println!("listening on {url}");
    axum::serve(listener, app).await?;
    Ok(())
}

//! An agent served over gRPC, and a client that calls it there — using only this crate.
//!
//! The server answers every binding on one port; its card lists the gRPC interface
//! (`lf.a2a.v1.A2AService`) beside JSON-RPC and HTTP+JSON. The client reads the card,
//! keeps only the gRPC interface, and sends one message.
//!
//! `cargo run --example grpc_agent -- [TEXT]` prints the agent's answer
//! and exits; `-- --serve PORT` serves until Ctrl-C instead.

use a2a_protocol::RpcError;
use a2a_protocol::card::AgentCard;
use a2a_protocol::client::{A2aClient, Binding, ClientConfig, Preference, choose_interfaces};
use a2a_protocol::server::{A2aServer, AgentExecutor, EventSink, RequestContext};
use a2a_protocol::types::{Message, SendMessageRequest, SendMessageResult};

/// Answers with the text it was sent, in capitals.
struct Shout;

impl AgentExecutor for Shout {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let loud = ctx.message.text().to_uppercase();
        events
            .complete(Some(&loud))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let serve_on = match args.as_slice() {
        [flag, port] if flag == "--serve" => Some(port.parse::<u16>()?),
        _ => None,
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", serve_on.unwrap_or(0))).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    let card = AgentCard::new("Shout", "Says it louder", &url);
    let server = A2aServer::new(Shout, card);

    if serve_on.is_some() {
        println!("serving at {url} (gRPC, JSON-RPC and HTTP+JSON)");
        server
            .serve(listener, async {
                tokio::signal::ctrl_c().await.ok();
            })
            .await?;
        return Ok(());
    }

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async {
        stopped.await.ok();
    }));

    let (client, card) = A2aClient::connect(&url, ClientConfig::default()).await?;
    let grpc = Preference {
        binding: Some(Binding::Grpc),
        ..Preference::default()
    };
    let at = choose_interfaces(&card, grpc)?.interfaces.remove(0);
    println!("calling {} over {} at {}", card.name, at.binding, at.url);
    let client = client.only(at);

    let text = match args.first() {
        Some(text) if serve_on.is_none() => text.clone(),
        _ => "hello over grpc".to_owned(),
    };
    let request = SendMessageRequest::new(Message::user_text(text));
    let answer = match client.send_message(&request).await? {
        SendMessageResult::Task(task) => {
            let said = task.status().message.as_ref().map(|m| m.text());
            let said = said.unwrap_or_default();
            format!("task {} is {}: {said}", task.id, task.state())
        }
        SendMessageResult::Message(message) => message.text(),
    };
    println!("{answer}");

    stop.send(()).ok();
    serving.await??;
    Ok(())
}

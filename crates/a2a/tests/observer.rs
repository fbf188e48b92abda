//! The server's observer, over every binding: a real server on loopback called by the
//! crate's own client over JSON-RPC, HTTP+JSON and gRPC, each with a request answered
//! and one refused; the observer hears each once, with its method, binding, generation
//! and A2A error code, and hears streams open and close.
#![cfg(all(feature = "client", feature = "server", feature = "grpc"))]

use std::sync::{Arc, Mutex};

use a2a_protocol::card::AgentCard;
use a2a_protocol::client::{A2aClient, Binding, ClientConfig, Interface, http_client};
use a2a_protocol::server::observe::{Observe, Observer, Request};
use a2a_protocol::server::{A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig};
use a2a_protocol::types::{GetTaskRequest, Message, SendMessageRequest};
use a2a_protocol::{RpcError, Version};
use futures::StreamExt;

struct Done;

impl AgentExecutor for Done {
    async fn execute(&self, _: RequestContext, events: EventSink) -> Result<(), RpcError> {
        events
            .complete(Some("done"))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))
    }
}

/// One request as heard: method, binding, version, code.
type Said = (String, String, String, Option<i64>);

/// What the observer heard: each request, and the streams open now and ever.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<(Vec<Said>, i64, i64)>>);

impl Observer for Heard {
    fn request(&self, r: Request<'_>) {
        self.0.lock().unwrap().0.push((
            r.method.to_owned(),
            r.binding.to_owned(),
            r.version.to_owned(),
            r.code,
        ));
    }

    fn subscriber(&self, open: bool) {
        let mut heard = self.0.lock().unwrap();
        heard.1 += if open { 1 } else { -1 };
        heard.2 += i64::from(open);
    }
}

#[tokio::test]
async fn every_binding_reports_each_answer_once_to_the_observer() {
    let heard = Heard::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let config = ServerConfig {
        observer: Observe::new(heard.clone()),
        ..ServerConfig::default()
    };
    let mut card = AgentCard::new("Done", "Says done", &url);
    card.capabilities_mut().streaming = Some(true);
    let server = A2aServer::builder(Done, card).config(config).build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async {
        stopped.await.ok();
    }));

    let grpc_url = url.trim_end_matches('/').to_owned();
    for (binding, at) in [
        (Binding::JsonRpc, url.clone()),
        (Binding::HttpJson, url.clone()),
        (Binding::Grpc, grpc_url),
    ] {
        let interface = Interface {
            url: at,
            protocol: Version::V1_0,
            binding,
            tenant: String::new(),
        };
        let client =
            A2aClient::with_interfaces(http_client(), vec![interface], ClientConfig::default())
                .unwrap();
        client
            .send_message(&SendMessageRequest::new(Message::user_text("hi")))
            .await
            .unwrap();
        let missing = client.get_task(&GetTaskRequest::new("no-such-task")).await;
        assert!(missing.is_err(), "{binding}: {missing:?}");
        let mut events = client
            .send_message_stream(&SendMessageRequest::new(Message::user_text("hi")))
            .await
            .unwrap();
        while events.next().await.is_some() {}
    }
    // A stream's end reaches the server a moment after the client's.
    for _ in 0..100 {
        if heard.0.lock().unwrap().1 == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stop.send(()).ok();
    serving.await.unwrap().unwrap();

    let (requests, open, opened) = heard.0.lock().unwrap().clone();
    let expect = |binding: &str| {
        [
            ("SendMessage", None),
            ("GetTask", Some(-32001)),
            ("SendStreamingMessage", None),
        ]
        .map(|(m, code)| (m.to_owned(), binding.to_owned(), "1.0".to_owned(), code))
    };
    let mut wanted: Vec<_> = ["JSONRPC", "HTTP+JSON", "GRPC"]
        .into_iter()
        .flat_map(expect)
        .collect();
    let mut got = requests.clone();
    wanted.sort();
    got.sort();
    assert_eq!(got, wanted, "in the order heard: {requests:?}");
    assert_eq!((open, opened), (0, 3), "three streams opened, all closed");
}

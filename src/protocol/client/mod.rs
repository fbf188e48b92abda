//! The A2A client: Agent Card discovery, transport selection, and every JSON-RPC method,
//! with `message/stream` and `tasks/resubscribe` as typed async streams of events.
//!
//! Errors keep apart what a caller must handle differently: the agent could not be
//! reached or timed out ([`ClientError::Transport`], [`ClientError::Timeout`]), it
//! answered with an HTTP error status, it answered with a JSON-RPC error (code intact),
//! or it broke the protocol.

mod card;
mod error;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::v1::convert as v1c;
use crate::protocol::v1::types as v1t;
pub use card::{
    CardFetch, CardResolver, Protocol, select_jsonrpc_interface, select_jsonrpc_url, v1_card_as_v03,
};
pub use error::ClientError;

use super::jsonrpc::{OutgoingRequest, RequestId, read_response};
use super::method::Method;
use super::sse::{SseDecoder, SseEvent};
use super::types::*;

/// The `User-Agent` this crate sends.
pub const USER_AGENT: &str = concat!("a2a-orchestrator/", env!("CARGO_PKG_VERSION"));

/// A stream of events from `message/stream` or `tasks/resubscribe`.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ClientError>> + Send>>;

/// Credentials sent with every request.
#[derive(Clone)]
pub enum ClientAuth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// An API key in a header, e.g. `X-API-Key`.
    ApiKey { header: String, value: String },
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientAuth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            ClientAuth::ApiKey { header, .. } => write!(f, "ApiKey({header}: <redacted>)"),
        }
    }
}

/// Options of an [`A2aClient`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Bound on one unary call, and on receiving a stream's response headers.
    pub timeout: Duration,
    /// Bound on the silence between two chunks of a stream (keep-alives count); `None`
    /// waits as long as the server keeps the connection open.
    pub stream_idle_timeout: Option<Duration>,
    /// Largest SSE event accepted.
    pub max_event_bytes: usize,
    pub auth: Option<ClientAuth>,
    /// Extra headers on every request.
    pub headers: Vec<(String, String)>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            stream_idle_timeout: None,
            max_event_bytes: 16 * 1024 * 1024,
            auth: None,
            headers: Vec::new(),
        }
    }
}

impl ClientConfig {
    /// The headers this config adds to every request.
    pub fn header_map(&self) -> Result<HeaderMap, ClientError> {
        let mut map = HeaderMap::new();
        let bad = |name: &str| ClientError::Config(format!("invalid header {name:?}"));
        for (k, v) in &self.headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| bad(k))?;
            let value = HeaderValue::from_str(v).map_err(|_| bad(k))?;
            map.insert(name, value);
        }
        match &self.auth {
            Some(ClientAuth::Bearer(token)) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| bad("Authorization"))?;
                v.set_sensitive(true);
                map.insert(header::AUTHORIZATION, v);
            }
            Some(ClientAuth::ApiKey { header, value }) => {
                let name = HeaderName::from_bytes(header.as_bytes()).map_err(|_| bad(header))?;
                let mut v = HeaderValue::from_str(value).map_err(|_| bad(header))?;
                v.set_sensitive(true);
                map.insert(name, v);
            }
            None => {}
        }
        Ok(map)
    }
}

/// A client of one agent's JSON-RPC endpoint. Cheap to clone.
#[derive(Clone)]
pub struct A2aClient {
    http: reqwest::Client,
    endpoint: String,
    /// The generation it speaks at `endpoint` (v0.3 unless chosen otherwise).
    protocol: Protocol,
    config: Arc<ClientConfig>,
    headers: HeaderMap,
    next_id: Arc<AtomicI64>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// A shared HTTP client with this crate's user agent: HTTP/1.1, or HTTP/2 where TLS
/// negotiates it.
pub fn http_client() -> reqwest::Client {
    build(builder())
}

/// A shared HTTP client that speaks only HTTP/2: over `http://` without an upgrade
/// (h2c, "prior knowledge"). Every call to one host shares one connection, a stream
/// each; a streaming call waiting on a slow task costs a stream, not a connection.
pub fn http2_client() -> reqwest::Client {
    build(builder().http2_prior_knowledge())
}

/// Builds a client with our settings. Building fails only when the TLS backend cannot
/// be set up (reqwest's own `Client::new` panics then too); falling back to a default
/// client would silently drop the connect timeout and the user agent, so it is not done.
fn build(builder: reqwest::ClientBuilder) -> reqwest::Client {
    builder
        .build()
        .expect("the HTTP client's TLS backend could not be initialized")
}

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(10))
}

impl A2aClient {
    /// A client of the JSON-RPC endpoint at `endpoint`.
    pub fn new(endpoint: impl Into<String>, config: ClientConfig) -> Result<Self, ClientError> {
        Self::with_http(http_client(), endpoint, config)
    }

    /// Like [`A2aClient::new`], sharing an existing HTTP client (and its connection pool).
    pub fn with_http(
        http: reqwest::Client,
        endpoint: impl Into<String>,
        config: ClientConfig,
    ) -> Result<Self, ClientError> {
        let endpoint = endpoint.into();
        reqwest::Url::parse(&endpoint).map_err(|e| ClientError::InvalidUrl {
            url: endpoint.clone(),
            detail: e.to_string(),
        })?;
        let headers = config.header_map()?;
        Ok(Self {
            http,
            endpoint,
            protocol: Protocol::V0_3,
            config: Arc::new(config),
            headers,
            next_id: Arc::new(AtomicI64::new(1)),
        })
    }

    /// A client for the JSON-RPC interface a card declares, in the generation
    /// [`select_jsonrpc_interface`] picks.
    pub fn from_card(card: &AgentCard, config: ClientConfig) -> Result<Self, ClientError> {
        let (url, protocol) = select_jsonrpc_interface(card)?;
        Ok(Self::new(url, config)?.speaking(protocol))
    }

    /// The same client, speaking `protocol` (its method names, shapes and
    /// `A2A-Version`); the methods of this type take and give the internal model
    /// whatever it speaks.
    pub fn speaking(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// The generation this client speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Resolves the card under `base_url` (well-known path, then the legacy one) and
    /// returns a client for its JSON-RPC interface along with the card.
    pub async fn connect(
        base_url: &str,
        config: ClientConfig,
    ) -> Result<(Self, AgentCard), ClientError> {
        let http = http_client();
        let resolver = CardResolver::new(http.clone(), config.header_map()?, config.timeout);
        let card = resolver.resolve(base_url).await?;
        let (url, protocol) = select_jsonrpc_interface(&card)?;
        let client = Self::with_http(http, url, config)?.speaking(protocol);
        Ok((client, card))
    }

    /// The JSON-RPC endpoint URL.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn request<P: Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> (RequestId, reqwest::RequestBuilder) {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let body = OutgoingRequest {
            jsonrpc: JsonRpcVersion,
            id: id.clone(),
            method,
            params,
        };
        let mut builder = self
            .http
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .json(&body);
        if self.protocol == Protocol::V1_0 {
            builder = builder.header("A2A-Version", crate::protocol::v1::VERSION_1_0);
        }
        (id, builder)
    }

    /// Calls any method and decodes its result.
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<R, ClientError> {
        let (id, builder) = self.request(method, params);
        let url = &self.endpoint;
        let timeout = self.config.timeout;
        let fut = async {
            let resp = builder
                .header(header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| ClientError::transport(url, e))?;
            let resp = check_status(url, resp).await?;
            resp.bytes()
                .await
                .map_err(|e| ClientError::transport(url, e))
        };
        let bytes =
            tokio::time::timeout(timeout, fut)
                .await
                .map_err(|_| ClientError::Timeout {
                    url: url.clone(),
                    timeout,
                })??;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::protocol(url, format!("the response is not JSON: {e}")))?;
        let result = decode_response(url, &id, value)?;
        decode_result(url, method, result)
    }

    /// `message/send` (v1.0: `SendMessage`).
    pub async fn send_message(
        &self,
        params: &MessageSendParams,
    ) -> Result<SendMessageResult, ClientError> {
        match self.protocol {
            Protocol::V0_3 => self.call(Method::SendMessage.as_str(), Some(params)).await,
            Protocol::V1_0 => {
                let request = v1c::send_request(params);
                let answer: crate::protocol::v1::types::SendMessageResponse = self
                    .call(Method::SendMessage.v1_name(), Some(&request))
                    .await?;
                v1c::send_response_in(answer).map_err(|e| self.unreadable("SendMessage", e))
            }
        }
    }

    /// `message/stream` (v1.0: `SendStreamingMessage`).
    pub async fn send_message_stream(
        &self,
        params: &MessageSendParams,
    ) -> Result<EventStream, ClientError> {
        match self.protocol {
            Protocol::V0_3 => self.stream(Method::SendStreamingMessage, params).await,
            Protocol::V1_0 => {
                let request = v1c::send_request(params);
                self.stream(Method::SendStreamingMessage, &request).await
            }
        }
    }

    /// `tasks/get` (v1.0: `GetTask`).
    pub async fn get_task(&self, params: &TaskQueryParams) -> Result<Task, ClientError> {
        match self.protocol {
            Protocol::V0_3 => self.call(Method::GetTask.as_str(), Some(params)).await,
            Protocol::V1_0 => {
                let request = crate::protocol::v1::types::GetTaskRequest {
                    tenant: String::new(),
                    id: params.id.to_string(),
                    history_length: params.history_length.map(|n| n.min(i32::MAX as u32) as i32),
                };
                let task: crate::protocol::v1::types::Task =
                    self.call(Method::GetTask.v1_name(), Some(&request)).await?;
                v1c::task_in(task, "result").map_err(|e| self.unreadable("GetTask", e))
            }
        }
    }

    /// `tasks/cancel` (v1.0: `CancelTask`).
    pub async fn cancel_task(&self, params: &TaskIdParams) -> Result<Task, ClientError> {
        match self.protocol {
            Protocol::V0_3 => self.call(Method::CancelTask.as_str(), Some(params)).await,
            Protocol::V1_0 => {
                let request = v1_task_request(params);
                let task: crate::protocol::v1::types::Task = self
                    .call(Method::CancelTask.v1_name(), Some(&request))
                    .await?;
                v1c::task_in(task, "result").map_err(|e| self.unreadable("CancelTask", e))
            }
        }
    }

    /// `tasks/resubscribe` (v1.0: `SubscribeToTask`).
    pub async fn resubscribe(&self, params: &TaskIdParams) -> Result<EventStream, ClientError> {
        match self.protocol {
            Protocol::V0_3 => self.stream(Method::Resubscribe, params).await,
            Protocol::V1_0 => {
                self.stream(Method::Resubscribe, &v1_task_request(params))
                    .await
            }
        }
    }

    /// What an agent answered that the internal model cannot hold.
    fn unreadable(&self, method: &str, e: crate::protocol::v1::ConvertError) -> ClientError {
        ClientError::protocol(&self.endpoint, format!("invalid {method} result at {e}"))
    }

    /// `tasks/pushNotificationConfig/set` (v1.0: `CreateTaskPushNotificationConfig`).
    pub async fn set_push_config(
        &self,
        params: &TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        match self.protocol {
            Protocol::V0_3 => {
                self.call(Method::SetPushConfig.as_str(), Some(params))
                    .await
            }
            Protocol::V1_0 => {
                let request = v1c::push_config(params);
                let made: v1t::TaskPushNotificationConfig = self
                    .call(Method::SetPushConfig.v1_name(), Some(&request))
                    .await?;
                self.push_config_in(made, Method::SetPushConfig)
            }
        }
    }

    /// `tasks/pushNotificationConfig/get` (v1.0: `GetTaskPushNotificationConfig`; a
    /// config id left out means the task's default one, whose id is the task's).
    pub async fn get_push_config(
        &self,
        params: &GetTaskPushNotificationConfigParams,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        match self.protocol {
            Protocol::V0_3 => {
                self.call(Method::GetPushConfig.as_str(), Some(params))
                    .await
            }
            Protocol::V1_0 => {
                let request = v1t::PushConfigRequest {
                    tenant: String::new(),
                    task_id: params.id.to_string(),
                    id: params
                        .push_notification_config_id
                        .clone()
                        .unwrap_or_else(|| params.id.to_string()),
                };
                let found: v1t::TaskPushNotificationConfig = self
                    .call(Method::GetPushConfig.v1_name(), Some(&request))
                    .await?;
                self.push_config_in(found, Method::GetPushConfig)
            }
        }
    }

    /// `tasks/pushNotificationConfig/list` (v1.0: `ListTaskPushNotificationConfigs`).
    pub async fn list_push_configs(
        &self,
        params: &TaskIdParams,
    ) -> Result<Vec<TaskPushNotificationConfig>, ClientError> {
        match self.protocol {
            Protocol::V0_3 => {
                self.call(Method::ListPushConfig.as_str(), Some(params))
                    .await
            }
            Protocol::V1_0 => {
                let request = v1t::ListPushConfigsRequest {
                    tenant: String::new(),
                    task_id: params.id.to_string(),
                    page_size: None,
                    page_token: String::new(),
                };
                let list: v1t::ListPushConfigsResponse = self
                    .call(Method::ListPushConfig.v1_name(), Some(&request))
                    .await?;
                list.configs
                    .into_iter()
                    .map(|c| self.push_config_in(c, Method::ListPushConfig))
                    .collect()
            }
        }
    }

    /// `tasks/pushNotificationConfig/delete` (v1.0: `DeleteTaskPushNotificationConfig`).
    pub async fn delete_push_config(
        &self,
        params: &DeleteTaskPushNotificationConfigParams,
    ) -> Result<(), ClientError> {
        let _: Value = match self.protocol {
            Protocol::V0_3 => {
                self.call(Method::DeletePushConfig.as_str(), Some(params))
                    .await?
            }
            Protocol::V1_0 => {
                let request = v1t::PushConfigRequest {
                    tenant: String::new(),
                    task_id: params.id.to_string(),
                    id: params.push_notification_config_id.clone(),
                };
                self.call(Method::DeletePushConfig.v1_name(), Some(&request))
                    .await?
            }
        };
        Ok(())
    }

    /// `agent/getAuthenticatedExtendedCard` (v1.0: `GetExtendedAgentCard`).
    pub async fn get_authenticated_extended_card(&self) -> Result<AgentCard, ClientError> {
        match self.protocol {
            Protocol::V0_3 => {
                self.call::<(), _>(Method::GetAuthenticatedExtendedCard.as_str(), None)
                    .await
            }
            Protocol::V1_0 => {
                let mut card: Value = self
                    .call(
                        Method::GetAuthenticatedExtendedCard.v1_name(),
                        Some(&serde_json::json!({})),
                    )
                    .await?;
                v1_card_as_v03(&mut card);
                decode_result(&self.endpoint, "GetExtendedAgentCard", card)
            }
        }
    }

    /// A v1.0 push config as the internal one.
    fn push_config_in(
        &self,
        c: v1t::TaskPushNotificationConfig,
        method: Method,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let task_id = TaskId::new(c.task_id.clone());
        let config =
            v1c::push_config_in(c, "result").map_err(|e| self.unreadable(method.v1_name(), e))?;
        Ok(TaskPushNotificationConfig {
            task_id,
            push_notification_config: config,
        })
    }

    async fn stream<P: Serialize>(
        &self,
        method: Method,
        params: &P,
    ) -> Result<EventStream, ClientError> {
        let name = match self.protocol {
            Protocol::V0_3 => method.as_str(),
            Protocol::V1_0 => method.v1_name(),
        };
        let (id, builder) = self.request(name, Some(params));
        let url = self.endpoint.clone();
        let timeout = self.config.timeout;
        let resp = tokio::time::timeout(
            timeout,
            builder.header(header::ACCEPT, "text/event-stream").send(),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            url: url.clone(),
            timeout,
        })?
        .map_err(|e| ClientError::transport(&url, e))?;
        let resp = check_status(&url, resp).await?;
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("application/json") {
            // Some servers answer a failed stream request with a plain JSON error.
            let bytes = tokio::time::timeout(timeout, resp.bytes())
                .await
                .map_err(|_| ClientError::Timeout {
                    url: url.clone(),
                    timeout,
                })?
                .map_err(|e| ClientError::transport(&url, e))?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                ClientError::protocol(&url, format!("the response is not JSON: {e}"))
            })?;
            decode_response(&url, &id, value)?;
            return Err(ClientError::protocol(
                &url,
                format!("{method} must answer with an SSE stream, got a JSON result"),
            ));
        }
        if !content_type.starts_with("text/event-stream") {
            return Err(ClientError::protocol(
                &url,
                format!("{method} must answer with text/event-stream, got {content_type:?}"),
            ));
        }
        Ok(sse_events(
            url,
            id,
            self.protocol,
            resp,
            self.config.max_event_bytes,
            self.config.stream_idle_timeout,
        ))
    }
}

async fn check_status(
    url: &str,
    resp: reqwest::Response,
) -> Result<reqwest::Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let mut body = resp.text().await.unwrap_or_default();
    if body.len() > 512 {
        let mut cut = 512;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
    Err(ClientError::HttpStatus {
        url: url.to_owned(),
        status: status.as_u16(),
        body,
    })
}

/// Checks the envelope and id of a response; returns its `result`.
fn decode_response(url: &str, id: &RequestId, value: Value) -> Result<Value, ClientError> {
    let got_id = value.get("id").cloned();
    let outcome = read_response(value).map_err(|d| ClientError::protocol(url, d))?;
    let result = outcome.map_err(ClientError::Rpc)?;
    let expected = serde_json::to_value(id).unwrap_or(Value::Null);
    if got_id.as_ref() != Some(&expected) {
        return Err(ClientError::protocol(
            url,
            format!("the response id {got_id:?} does not match the request id {expected}"),
        ));
    }
    Ok(result)
}

fn decode_result<R: DeserializeOwned>(
    url: &str,
    method: &str,
    result: Value,
) -> Result<R, ClientError> {
    serde_path_to_error::deserialize(&result).map_err(|e| {
        ClientError::protocol(
            url,
            format!("invalid {method} result at {}: {}", e.path(), e.inner()),
        )
    })
}

/// Decodes an SSE body into events; ends after the first error.
fn sse_events(
    url: String,
    id: RequestId,
    protocol: Protocol,
    resp: reqwest::Response,
    max_event_bytes: usize,
    idle: Option<Duration>,
) -> EventStream {
    struct St {
        url: String,
        id: RequestId,
        protocol: Protocol,
        body: Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
        decoder: SseDecoder,
        pending: std::collections::VecDeque<SseEvent>,
        idle: Option<Duration>,
        done: bool,
    }
    let st = St {
        url,
        id,
        protocol,
        body: Box::pin(resp.bytes_stream()),
        decoder: SseDecoder::new(max_event_bytes),
        pending: Default::default(),
        idle,
        done: false,
    };
    let stream = futures::stream::unfold(st, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some(ev) = st.pending.pop_front() {
                let item = decode_event(&st.url, &st.id, st.protocol, &ev.data);
                if item.is_err() {
                    st.done = true;
                }
                return Some((item, st));
            }
            let next = match st.idle {
                Some(d) => match tokio::time::timeout(d, st.body.next()).await {
                    Ok(n) => n,
                    Err(_) => {
                        st.done = true;
                        let e = ClientError::Timeout {
                            url: st.url.clone(),
                            timeout: d,
                        };
                        return Some((Err(e), st));
                    }
                },
                None => st.body.next().await,
            };
            match next {
                None => return None,
                Some(Err(e)) => {
                    st.done = true;
                    let e = ClientError::transport(&st.url, e);
                    return Some((Err(e), st));
                }
                Some(Ok(chunk)) => match st.decoder.feed(&chunk) {
                    Ok(events) => st.pending.extend(events),
                    Err(e) => {
                        st.done = true;
                        let e = ClientError::protocol(&st.url, e.to_string());
                        return Some((Err(e), st));
                    }
                },
            }
        }
    });
    Box::pin(stream)
}

fn decode_event(
    url: &str,
    id: &RequestId,
    protocol: Protocol,
    data: &str,
) -> Result<StreamEvent, ClientError> {
    let value: Value = serde_json::from_str(data)
        .map_err(|e| ClientError::protocol(url, format!("an SSE event is not JSON: {e}")))?;
    let result = decode_response(url, id, value)?;
    match protocol {
        Protocol::V0_3 => decode_result(url, "stream event", result),
        Protocol::V1_0 => {
            let event: crate::protocol::v1::types::StreamResponse =
                decode_result(url, "stream event", result)?;
            v1c::stream_event_in(event)
                .map_err(|e| ClientError::protocol(url, format!("invalid stream event at {e}")))
        }
    }
}

/// A task's id (and metadata) as v1.0's request for it.
fn v1_task_request(params: &TaskIdParams) -> crate::protocol::v1::types::TaskRequest {
    crate::protocol::v1::types::TaskRequest {
        tenant: String::new(),
        id: params.id.to_string(),
        metadata: params.metadata.clone(),
    }
}

//! The A2A server: an axum JSON-RPC 2.0 endpoint, with SSE streaming, generic over an
//! [`AgentExecutor`].
//!
//! This module turns HTTP requests into calls on the agent and the task manager, and
//! their results into JSON-RPC responses and SSE frames. It checks everything the spec
//! lets a client get wrong and answers with the spec's error code, naming the field:
//! malformed JSON, non-requests, unknown methods, bad params, unknown or finished tasks,
//! capabilities the card does not declare, media types the agent does not take.

mod agent;
mod apply;
mod auth;
mod listen;
mod push;
mod store;
mod task_manager;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{FutureExt, Stream, StreamExt};
use http_body_util::BodyExt;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, info_span, warn};

pub use agent::{
    AgentExecutor, CancelContext, EventSink, Queued, RequestContext, ResumeContext, SinkError,
};
pub use apply::apply_event;
pub use auth::{InboundAuth, UNAUTHENTICATED};
pub use push::{NOTIFICATION_TOKEN_HEADER, PushNotifier, check_webhook};
pub use store::{InMemoryTaskStore, LoggedEvent, StoreError, TaskStore};
use task_manager::{ActorHandle, Subscription, TaskManager, Update};

use super::error::RpcError;
use super::jsonrpc::{IncomingRequest, RequestId, Response as RpcResponse};
use super::method::Method;
use super::types::*;

/// The paths the Agent Card is served at: the current one and the legacy one.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
pub const LEGACY_AGENT_CARD_PATH: &str = "/.well-known/agent.json";

/// Tunables of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Path of the JSON-RPC endpoint (the card's `url` should point here).
    pub rpc_path: String,
    /// Largest request body accepted; larger ones get HTTP 413 with a JSON-RPC error.
    pub max_body_bytes: usize,
    /// Interval of SSE keep-alive comments while a stream is idle.
    pub keep_alive: Duration,
    /// Timeout of one webhook POST.
    pub push_timeout: Duration,
    /// Allow webhooks on loopback, private and link-local addresses (refused by default,
    /// against server-side request forgery).
    pub allow_private_webhooks: bool,
    /// Credentials every JSON-RPC call must present; none when `None`. Declare them on
    /// the card with [`InboundAuth::card_security`].
    pub auth: Option<InboundAuth>,
    /// How long `tasks/cancel` waits for the agent to reach a terminal state.
    pub cancel_wait: Duration,
    /// How long shutdown waits for running agents after canceling them.
    pub shutdown_grace: Duration,
    /// Most requests one HTTP/2 connection may have open at once. A streaming call
    /// holds its stream until the task ends, so a client multiplexing many running
    /// tasks over one connection needs room (hyper's own default is 200).
    pub http2_max_streams: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            rpc_path: "/".to_owned(),
            max_body_bytes: 10 * 1024 * 1024,
            keep_alive: Duration::from_secs(15),
            push_timeout: Duration::from_secs(10),
            allow_private_webhooks: false,
            auth: None,
            cancel_wait: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            http2_max_streams: 1_000,
        }
    }
}

/// An A2A server for one agent. Cheap to clone.
pub struct A2aServer<A> {
    inner: Arc<Inner<A>>,
}

impl<A> Clone for A2aServer<A> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<A> {
    agent: Arc<A>,
    card: AgentCard,
    card_json: Bytes,
    extended_card: Option<AgentCard>,
    manager: TaskManager,
    config: ServerConfig,
    shutdown: CancellationToken,
    tracker: TaskTracker,
}

/// Builds an [`A2aServer`].
pub struct A2aServerBuilder<A> {
    agent: A,
    card: AgentCard,
    extended_card: Option<AgentCard>,
    store: Option<Arc<dyn TaskStore>>,
    config: ServerConfig,
}

impl<A: AgentExecutor> A2aServerBuilder<A> {
    /// The card served by `agent/getAuthenticatedExtendedCard` (the public card must set
    /// `supportsAuthenticatedExtendedCard`).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Where tasks are kept (in memory by default).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    pub fn build(self) -> A2aServer<A> {
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(InMemoryTaskStore::new()));
        let shutdown = CancellationToken::new();
        let tracker = TaskTracker::new();
        let push = self.card.supports_push_notifications().then(|| {
            PushNotifier::new(
                store.clone(),
                self.config.push_timeout,
                self.config.allow_private_webhooks,
            )
        });
        let manager = TaskManager::new(store, push, tracker.clone(), shutdown.clone());
        // An AgentCard always serializes: every map in it has string keys and every
        // field is plain data, so this cannot fail (and an empty card is never served).
        let card_json = Bytes::from(
            serde_json::to_vec(&self.card).expect("an agent card always serializes to JSON"),
        );
        A2aServer {
            inner: Arc::new(Inner {
                agent: Arc::new(self.agent),
                card: self.card,
                card_json,
                extended_card: self.extended_card,
                manager,
                config: self.config,
                shutdown,
                tracker,
            }),
        }
    }
}

impl<A: AgentExecutor> A2aServer<A> {
    /// A server with default settings and an in-memory store.
    pub fn new(agent: A, card: AgentCard) -> Self {
        Self::builder(agent, card).build()
    }

    pub fn builder(agent: A, card: AgentCard) -> A2aServerBuilder<A> {
        A2aServerBuilder {
            agent,
            card,
            extended_card: None,
            store: None,
            config: ServerConfig::default(),
        }
    }

    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The axum router: the JSON-RPC endpoint and both card paths. Add layers (auth,
    /// tracing, CORS) around it as needed.
    pub fn router(&self) -> Router {
        Router::new()
            .route(&self.inner.config.rpc_path, post(rpc::<A>))
            .route(AGENT_CARD_PATH, get(card::<A>))
            .route(LEGACY_AGENT_CARD_PATH, get(card::<A>))
            .with_state(self.inner.clone())
    }

    /// Serves on `listener` until `signal` completes, then shuts down gracefully.
    /// HTTP/1.1 and HTTP/2 without TLS (h2c) share the port.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        signal: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let router = self.router();
        self.serve_router(listener, router, signal).await
    }

    /// Like [`A2aServer::serve`], serving `router`: this server's
    /// [`router`](A2aServer::router) with layers or routes of the caller's.
    pub async fn serve_router(
        self,
        listener: tokio::net::TcpListener,
        router: Router,
        signal: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let token = self.inner.shutdown.clone();
        let stop = async move {
            tokio::select! {
                () = signal => token.cancel(),
                () = token.cancelled() => {}
            }
        };
        listen::serve(listener, router, self.inner.config.http2_max_streams, stop).await;
        self.shutdown().await;
        Ok(())
    }

    /// Resumes the work of every unfinished task in the store (after a restart): each
    /// is handed to [`AgentExecutor::resume`] in a task of its own. Returns how many.
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let inner = &self.inner;
        let unfinished = inner.manager.store().unfinished().await?;
        let n = unfinished.len();
        for (task, seq) in unfinished {
            if !inner
                .manager
                .store()
                .push_configs(&task.id)
                .await?
                .is_empty()
            {
                inner.manager.arm_push(&task.id);
            }
            let handle = inner.manager.open_existing(task.clone(), seq);
            let sink = EventSink {
                handle: handle.clone(),
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
            };
            let ctx = ResumeContext {
                task,
                cancel: handle.cancel.clone(),
            };
            let agent = inner.agent.clone();
            let span = info_span!("resume", task_id = %ctx.task.id);
            inner.spawn_agent(handle, span, async move { agent.resume(ctx, sink).await });
        }
        Ok(n)
    }

    /// Removes terminal tasks last changed before `before` from the store.
    pub async fn prune(&self, before: std::time::SystemTime) -> Result<usize, StoreError> {
        self.inner.manager.store().prune(before).await
    }

    /// Cancels running agents and open streams, and waits (bounded) for them to end.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        if tokio::time::timeout(self.inner.config.shutdown_grace, self.inner.tracker.wait())
            .await
            .is_err()
        {
            warn!("agents still running after the shutdown grace period");
        }
    }
}

async fn card<A: AgentExecutor>(State(inner): State<Arc<Inner<A>>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        inner.card_json.clone(),
    )
        .into_response()
}

fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => {
            warn!(error = %e, "cannot serialize a response");
            let fallback = RpcResponse::error(
                RequestId::Null,
                RpcError::internal("cannot serialize the response"),
            );
            let bytes = serde_json::to_vec(&fallback).unwrap_or_default();
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                bytes,
            )
                .into_response()
        }
    }
}

fn error_response(id: RequestId, error: RpcError) -> Response {
    json_response(StatusCode::OK, &RpcResponse::error(id, error))
}

async fn rpc<A: AgentExecutor>(
    State(inner): State<Arc<Inner<A>>>,
    headers: axum::http::HeaderMap,
    body: Body,
) -> Response {
    if let Some(auth) = &inner.config.auth
        && !auth.is_empty()
        && !auth.allows(&headers)
    {
        return auth.challenge();
    }
    let limit = inner.config.max_body_bytes;
    let bytes = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            let error = RpcError::invalid_request(format!(
                "the request body exceeds the limit of {limit} bytes"
            ));
            return json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &RpcResponse::error(RequestId::Null, error),
            );
        }
        Err(e) => {
            let error = RpcError::invalid_request(format!("cannot read the request body: {e}"));
            return json_response(
                StatusCode::BAD_REQUEST,
                &RpcResponse::error(RequestId::Null, error),
            );
        }
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return error_response(RequestId::Null, RpcError::parse_error(e)),
    };
    let request = match IncomingRequest::from_value(value) {
        Ok(r) => r,
        Err((id, e)) => return error_response(id, e),
    };
    let span = info_span!("rpc", method = %request.method);
    async move {
        let Some(method) = Method::parse(&request.method) else {
            return match request.id {
                Some(id) => error_response(id, RpcError::method_not_found(&request.method)),
                None => StatusCode::NO_CONTENT.into_response(),
            };
        };
        match request.id.clone() {
            Some(id) if method.is_streaming() => {
                stream(inner, method, &request, id, &headers).await
            }
            Some(id) => match unary(&inner, method, &request, false).await {
                Ok(result) => json_response(StatusCode::OK, &RpcResponse::success(id, result)),
                Err(e) => error_response(id, e),
            },
            // A notification: do the work, answer nothing (JSON-RPC 2.0 §4.1).
            None => {
                if let Err(e) = unary(&inner, method, &request, true).await {
                    warn!(error = %e, "notification failed");
                }
                StatusCode::NO_CONTENT.into_response()
            }
        }
    }
    .instrument(span)
    .await
}

fn to_value<T: Serialize>(v: T) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::internal(format!("cannot serialize: {e}")))
}

/// Methods answered with one JSON response. `notification` runs streaming methods as
/// non-blocking sends, since nobody will read a stream.
async fn unary<A: AgentExecutor>(
    inner: &Arc<Inner<A>>,
    method: Method,
    req: &IncomingRequest,
    notification: bool,
) -> Result<Value, RpcError> {
    match method {
        Method::SendMessage => to_value(inner.send(req.params()?, notification).await?),
        Method::SendStreamingMessage => {
            inner.require_streaming(method)?;
            to_value(inner.send(req.params()?, true).await?)
        }
        Method::Resubscribe => {
            inner.require_streaming(method)?;
            Ok(Value::Null)
        }
        Method::GetTask => {
            let p: TaskQueryParams = req.params()?;
            let mut task = inner.load(&p.id).await?;
            task.truncate_history(p.history_length);
            to_value(task)
        }
        Method::CancelTask => to_value(inner.cancel(req.params()?).await?),
        Method::SetPushConfig => to_value(inner.set_push(req.params()?).await?),
        Method::GetPushConfig => {
            let p: GetTaskPushNotificationConfigParams = req.params()?;
            let configs = inner.push_configs(&p.id).await?;
            let found = match &p.push_notification_config_id {
                Some(id) => configs.into_iter().find(|c| c.id.as_deref() == Some(id)),
                None => configs.into_iter().next(),
            };
            let config = found.ok_or_else(|| match &p.push_notification_config_id {
                Some(id) => RpcError::invalid_params(
                    "pushNotificationConfigId",
                    format!("task {} has no push notification config {id:?}", p.id),
                ),
                None => RpcError::invalid_params(
                    "id",
                    format!("task {} has no push notification config", p.id),
                ),
            })?;
            to_value(TaskPushNotificationConfig {
                task_id: p.id,
                push_notification_config: config,
            })
        }
        Method::ListPushConfig => {
            let p: TaskIdParams = req.params()?;
            let configs = inner.push_configs(&p.id).await?;
            let list: Vec<_> = configs
                .into_iter()
                .map(|c| TaskPushNotificationConfig {
                    task_id: p.id.clone(),
                    push_notification_config: c,
                })
                .collect();
            to_value(list)
        }
        Method::DeletePushConfig => {
            let p: DeleteTaskPushNotificationConfigParams = req.params()?;
            inner.require_push()?;
            inner.load(&p.id).await?;
            let removed = inner
                .manager
                .store()
                .delete_push_config(&p.id, &p.push_notification_config_id)
                .await
                .map_err(store_error)?;
            if !removed {
                return Err(RpcError::invalid_params(
                    "pushNotificationConfigId",
                    format!(
                        "task {} has no push notification config {:?}",
                        p.id, p.push_notification_config_id
                    ),
                ));
            }
            Ok(Value::Null)
        }
        Method::GetAuthenticatedExtendedCard => {
            match (
                &inner.extended_card,
                inner.card.supports_authenticated_extended_card,
            ) {
                (Some(card), Some(true)) => to_value(card),
                _ => Err(RpcError::extended_card_not_configured()),
            }
        }
    }
}

fn store_error(e: StoreError) -> RpcError {
    warn!(error = %e, "task store failure");
    RpcError::internal("the task store failed")
}

fn sink_error(e: SinkError) -> RpcError {
    match e {
        SinkError::Terminal(id, state) => RpcError::invalid_params(
            "message.taskId",
            format!(
                "task {id} is in terminal state {state} and accepts no more messages; start a new task (you may reuse its contextId)"
            ),
        ),
        other => RpcError::from(other),
    }
}

/// Where a new message goes once checked.
struct Started {
    task_id: TaskId,
    sub: Subscription,
}

impl<A: AgentExecutor> Inner<A> {
    fn require_streaming(&self, method: Method) -> Result<(), RpcError> {
        if self.card.supports_streaming() {
            Ok(())
        } else {
            Err(RpcError::unsupported_operation(format!(
                "{method} is not supported: this agent's card does not declare capabilities.streaming"
            )))
        }
    }

    fn require_push(&self) -> Result<(), RpcError> {
        if self.card.supports_push_notifications() {
            Ok(())
        } else {
            Err(RpcError::push_notification_not_supported())
        }
    }

    async fn load(&self, id: &TaskId) -> Result<Task, RpcError> {
        Ok(self.load_seq(id).await?.0)
    }

    /// A task and the number of its last logged event.
    async fn load_seq(&self, id: &TaskId) -> Result<(Task, u64), RpcError> {
        self.manager
            .store()
            .get(id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| RpcError::task_not_found(id.as_str()))
    }

    async fn push_configs(&self, id: &TaskId) -> Result<Vec<PushNotificationConfig>, RpcError> {
        self.require_push()?;
        self.load(id).await?;
        self.manager
            .store()
            .push_configs(id)
            .await
            .map_err(store_error)
    }

    async fn check_push_config(
        &self,
        config: &PushNotificationConfig,
        field: &str,
    ) -> Result<(), RpcError> {
        check_webhook(&config.url, self.config.allow_private_webhooks)
            .await
            .map_err(|why| RpcError::invalid_params(&format!("{field}.url"), why))
    }

    async fn set_push(
        &self,
        mut p: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        self.require_push()?;
        self.check_push_config(&p.push_notification_config, "pushNotificationConfig")
            .await?;
        let task = self.load(&p.task_id).await?;
        let config = &mut p.push_notification_config;
        config
            .id
            .get_or_insert_with(|| p.task_id.as_str().to_owned());
        self.manager
            .store()
            .set_push_config(&p.task_id, config.clone())
            .await
            .map_err(store_error)?;
        // A finished task changes no more: nothing to deliver, nothing to remember.
        if !task.status.state.is_terminal() {
            self.manager.arm_push(&p.task_id);
        }
        Ok(p)
    }

    /// Checks a new message against the card: role, parts and media types.
    async fn check_message(&self, params: &MessageSendParams) -> Result<(), RpcError> {
        let m = &params.message;
        if m.role != Role::User {
            return Err(RpcError::invalid_params(
                "message.role",
                "a message sent to an agent must have role \"user\"",
            ));
        }
        if m.parts.is_empty() {
            return Err(RpcError::invalid_params(
                "message.parts",
                "a message needs at least one part",
            ));
        }
        let accepted_inputs: Vec<&str> = self
            .card
            .default_input_modes
            .iter()
            .chain(
                self.card
                    .skills
                    .iter()
                    .flat_map(|s| s.input_modes.iter().flatten()),
            )
            .map(String::as_str)
            .collect();
        if !accepted_inputs.is_empty() {
            for (i, part) in m.parts.iter().enumerate() {
                let ty = part.media_type();
                if !accepted_inputs.iter().any(|a| media_type_matches(a, ty)) {
                    return Err(RpcError::content_type_not_supported(format!(
                        "message.parts[{i}] has media type {ty}, which this agent does not accept (it accepts {})",
                        accepted_inputs.join(", ")
                    ))
                    .with_data(serde_json::json!({ "field": format!("message.parts[{i}]"), "mediaType": ty })));
                }
            }
        }
        if let Some(wanted) = params
            .configuration
            .as_ref()
            .and_then(|c| c.accepted_output_modes.as_ref())
            .filter(|w| !w.is_empty())
        {
            let offered: Vec<&str> = self
                .card
                .default_output_modes
                .iter()
                .chain(
                    self.card
                        .skills
                        .iter()
                        .flat_map(|s| s.output_modes.iter().flatten()),
                )
                .map(String::as_str)
                .collect();
            if !wanted
                .iter()
                .any(|w| offered.iter().any(|o| media_type_matches(w, o)))
            {
                return Err(RpcError::content_type_not_supported(format!(
                    "none of configuration.acceptedOutputModes ({}) is produced by this agent (it produces {})",
                    wanted.join(", "),
                    offered.join(", ")
                ))
                .with_data(serde_json::json!({ "field": "configuration.acceptedOutputModes" })));
            }
        }
        if let Some(config) = params
            .configuration
            .as_ref()
            .and_then(|c| c.push_notification_config.as_ref())
        {
            self.require_push()?;
            self.check_push_config(config, "configuration.pushNotificationConfig")
                .await?;
        }
        Ok(())
    }

    /// Checks a message, binds it to a new or existing task, and starts the agent.
    async fn start(&self, params: MessageSendParams) -> Result<Started, RpcError> {
        self.check_message(&params).await?;
        let MessageSendParams {
            mut message,
            configuration,
            metadata,
        } = params;
        let (handle, task, task_id, context_id) = match message.task_id.clone() {
            Some(task_id) => {
                let (task, seq) = self.load_seq(&task_id).await?;
                if task.status.state.is_terminal() {
                    return Err(sink_error(SinkError::Terminal(task_id, task.status.state)));
                }
                if let Some(ctx) = &message.context_id
                    && *ctx != task.context_id
                {
                    return Err(RpcError::invalid_params(
                        "message.contextId",
                        format!(
                            "task {task_id} belongs to context {}, not {ctx}",
                            task.context_id
                        ),
                    ));
                }
                let context_id = task.context_id.clone();
                message.context_id = Some(context_id.clone());
                let handle = self.manager.open_existing(task, seq);
                let task = handle
                    .user_message(message.clone())
                    .await
                    .map_err(sink_error)?;
                (handle, Some(task), task_id, context_id)
            }
            None => {
                // The same message again (a retry after a lost response): the task it
                // created, not a second one.
                if let Some(existing) = self
                    .manager
                    .store()
                    .task_of_message(message.message_id.as_str())
                    .await
                    .map_err(store_error)?
                {
                    let (task, seq) = self.load_seq(&existing).await?;
                    let handle = self.manager.open_existing(task, seq);
                    let sub = handle.subscribe().await.map_err(sink_error)?;
                    return Ok(Started {
                        task_id: existing,
                        sub,
                    });
                }
                let task_id = TaskId::random();
                let context_id = message.context_id.clone().unwrap_or_else(ContextId::random);
                message.task_id = Some(task_id.clone());
                message.context_id = Some(context_id.clone());
                let handle =
                    self.manager
                        .open_new(task_id.clone(), context_id.clone(), message.clone());
                (handle, None, task_id, context_id)
            }
        };
        if let Some(mut config) = configuration
            .as_ref()
            .and_then(|c| c.push_notification_config.clone())
        {
            config.id.get_or_insert_with(|| task_id.as_str().to_owned());
            self.manager
                .store()
                .set_push_config(&task_id, config)
                .await
                .map_err(store_error)?;
            self.manager.arm_push(&task_id);
        }
        let sub = handle.subscribe().await.map_err(sink_error)?;
        let ctx = RequestContext {
            task_id: task_id.clone(),
            context_id: context_id.clone(),
            message,
            task: task.map(Box::new),
            configuration: configuration.map(Box::new),
            metadata,
            cancel: handle.cancel.clone(),
        };
        self.spawn_execute(handle, ctx);
        Ok(Started { task_id, sub })
    }

    /// Runs `execute` in a task owned by the server. A returned error or a panic fails
    /// the task (or, before any event, answers the request with the error).
    fn spawn_execute(&self, handle: ActorHandle, ctx: RequestContext) {
        let sink = EventSink {
            handle: handle.clone(),
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
        };
        let agent = self.agent.clone();
        let span = info_span!("execute", task_id = %ctx.task_id);
        self.spawn_agent(handle, span, async move { agent.execute(ctx, sink).await });
    }

    /// Runs an agent's work on a task in a task the server owns. A returned error or a
    /// panic fails the task (or, before any event, answers the request with the error).
    fn spawn_agent(
        &self,
        handle: ActorHandle,
        span: tracing::Span,
        work: impl std::future::Future<Output = Result<(), RpcError>> + Send + 'static,
    ) {
        // Chained rather than awaited in an async block, which would keep a second copy
        // of `work`'s space beside the running one for as long as the task lives.
        let work = AssertUnwindSafe(work)
            .catch_unwind()
            .then(move |outcome| async move {
                match outcome {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => handle.fail(e).await,
                    Err(_) => {
                        warn!("the agent panicked");
                        handle
                            .fail(RpcError::internal("the agent failed unexpectedly"))
                            .await
                    }
                }
            });
        self.tracker.spawn(work.instrument(span));
    }

    /// `message/send`.
    async fn send(
        &self,
        params: MessageSendParams,
        force_non_blocking: bool,
    ) -> Result<SendMessageResult, RpcError> {
        let blocking = params.blocking() && !force_non_blocking;
        let history_length = params.history_length();
        let Started { task_id, mut sub } = self.start(params).await?;
        let mut task_exists = sub.snapshot.is_some();
        loop {
            let update = tokio::select! {
                u = sub.events.recv() => u,
                () = self.shutdown.cancelled() => break,
            };
            match update {
                Ok(Update::Event(_, event)) if !task_exists && event.kind() == "message" => {
                    if let StreamEvent::Message(m) = &*event {
                        return Ok(SendMessageResult::Message(m.clone()));
                    }
                }
                Ok(Update::Error(e)) => return Err(*e),
                Ok(Update::Event(_, event)) => {
                    task_exists = true;
                    if !blocking || ends_stream(&event) {
                        break;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    task_exists = true;
                    let task = self.load(&task_id).await?;
                    if !blocking || ends_on(task.status.state) {
                        break;
                    }
                }
                Err(RecvError::Closed) => break,
            }
        }
        match self
            .manager
            .store()
            .get(&task_id)
            .await
            .map_err(store_error)?
        {
            Some((mut task, _)) => {
                task.truncate_history(history_length);
                Ok(SendMessageResult::Task(task))
            }
            None => Err(RpcError::invalid_agent_response(
                "the agent finished without creating a task or replying with a message",
            )),
        }
    }

    /// `tasks/cancel`.
    async fn cancel(&self, params: TaskIdParams) -> Result<Task, RpcError> {
        let (task, seq) = self.load_seq(&params.id).await?;
        if task.status.state.is_terminal() {
            return Err(RpcError::task_not_cancelable(
                params.id.as_str(),
                task.status.state.as_str(),
            ));
        }
        let handle = self.manager.open_existing(task.clone(), seq);
        let mut sub = handle.subscribe().await.map_err(sink_error)?;
        let sink = EventSink {
            handle: handle.clone(),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
        };
        let ctx = CancelContext {
            task,
            metadata: params.metadata,
        };
        let outcome = AssertUnwindSafe(self.agent.cancel(ctx, sink))
            .catch_unwind()
            .await;
        match outcome {
            Ok(Ok(())) => handle.cancel.cancel(),
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(RpcError::internal("the agent failed while canceling")),
        }
        drop(handle);
        // Wait (bounded) for the agent to reach a terminal state.
        let wait = async {
            loop {
                let current = self.load(&params.id).await?;
                if current.status.state.is_terminal() {
                    return Ok::<_, RpcError>(current);
                }
                match sub.events.recv().await {
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return self.load(&params.id).await,
                }
            }
        };
        let task = match tokio::time::timeout(self.config.cancel_wait, wait).await {
            Ok(r) => r?,
            Err(_) => self.load(&params.id).await?,
        };
        match task.status.state {
            TaskState::Canceled => Ok(task),
            state => Err(RpcError::task_not_cancelable(
                params.id.as_str(),
                state.as_str(),
            )),
        }
    }
}

/// Whether a stream ends after this event.
fn ends_stream(event: &StreamEvent) -> bool {
    match event {
        StreamEvent::StatusUpdate(e) => e.is_final,
        StreamEvent::Task(t) => ends_on(t.status.state),
        _ => false,
    }
}

fn ends_on(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// One SSE event: a JSON-RPC response, with `id:` set to the event's number in the
/// task's log when it has one (what a client reconnects with, as `Last-Event-ID`).
fn sse_frame<T: Serialize>(id: &RequestId, seq: u64, body: Result<T, RpcError>) -> Event {
    let json = match body {
        Ok(result) => serde_json::to_string(&RpcResponse::success(id.clone(), result)),
        Err(e) => serde_json::to_string(&RpcResponse::error(id.clone(), e)),
    };
    let event = Event::default().data(json.unwrap_or_else(|e| {
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"cannot serialize event: {e}"}}}}"#)
    }));
    if seq > 0 {
        event.id(seq.to_string())
    } else {
        event
    }
}

/// The `Last-Event-ID` header: the number of the last event a reconnecting client saw.
fn last_event_id(headers: &axum::http::HeaderMap) -> Result<Option<u64>, RpcError> {
    let Some(v) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or("").trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        RpcError::invalid_request(format!(
            "the Last-Event-ID header must be the id of an event of this task's stream (a number), got {text:?}"
        ))
    })
}

type SseStream =
    std::pin::Pin<Box<dyn Stream<Item = Result<Event, std::convert::Infallible>> + Send>>;

fn sse_response(stream: SseStream, keep_alive: Duration) -> Response {
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}

/// `message/stream` and `tasks/resubscribe`: an SSE stream of JSON-RPC responses. Errors
/// found before the stream starts are sent as its one event, so SSE clients see them.
///
/// A `tasks/resubscribe` with a `Last-Event-ID` header replays every logged event after
/// that one, then follows the task live; without it, the stream starts with the task's
/// current snapshot.
async fn stream<A: AgentExecutor>(
    inner: Arc<Inner<A>>,
    method: Method,
    req: &IncomingRequest,
    id: RequestId,
    headers: &axum::http::HeaderMap,
) -> Response {
    let keep_alive = inner.config.keep_alive;
    let setup = async {
        inner.require_streaming(method)?;
        match method {
            Method::SendStreamingMessage => {
                let Started { task_id, sub } = inner.start(req.params()?).await?;
                Ok((task_id, sub, None))
            }
            _ => {
                let p: TaskIdParams = req.params()?;
                let after = last_event_id(headers)?;
                let (task, seq) = inner.load_seq(&p.id).await?;
                let handle = inner.manager.open_existing(task, seq);
                let sub = handle.subscribe().await.map_err(sink_error)?;
                Ok((p.id, sub, after))
            }
        }
    };
    match setup.await {
        Ok((task_id, sub, after)) => {
            let events = live_events(inner, task_id, sub, after);
            let frames = events.map(move |item| {
                Ok(match item {
                    Ok((seq, event)) => sse_frame(&id, seq, Ok(&*event)),
                    Err(e) => sse_frame::<()>(&id, 0, Err(e)),
                })
            });
            sse_response(Box::pin(frames), keep_alive)
        }
        Err(e) => {
            let frame = sse_frame::<()>(&id, 0, Err(e));
            sse_response(
                Box::pin(futures::stream::once(async { Ok(frame) })),
                keep_alive,
            )
        }
    }
}

/// What a stream sends, in order: logged events to replay (when resuming after
/// `Last-Event-ID`), else the snapshot (if the task exists); then live events until a
/// final one. Events are numbered; one already sent is never sent again, and a
/// subscriber that falls behind the live channel is caught up from the log.
fn live_events<A: AgentExecutor>(
    inner: Arc<Inner<A>>,
    task_id: TaskId,
    sub: Subscription,
    after: Option<u64>,
) -> impl Stream<Item = Result<LoggedEvent, RpcError>> + Send {
    struct St<A> {
        inner: Arc<Inner<A>>,
        task_id: TaskId,
        /// The snapshot to send first, with its number.
        first: Option<(u64, Task)>,
        /// Fetch the log after this number before anything else.
        fetch: Option<u64>,
        /// Fetched events to send; `live` when they count as live events (a catch-up
        /// after lagging) rather than a replay.
        queue: std::collections::VecDeque<LoggedEvent>,
        live: bool,
        /// End once the replay is sent (the task is terminal).
        end_after_replay: bool,
        /// The number of the last event sent.
        last: u64,
        events: tokio::sync::broadcast::Receiver<Update>,
        task_exists: bool,
        done: bool,
    }
    let terminal = sub
        .snapshot
        .as_ref()
        .is_some_and(|t| t.status.state.is_terminal());
    let st = St {
        inner,
        task_id,
        task_exists: sub.snapshot.is_some(),
        first: match after {
            Some(_) => None,
            None => sub.snapshot.map(|t| (sub.seq, t)),
        },
        fetch: after,
        queue: Default::default(),
        live: false,
        end_after_replay: after.is_some() && terminal,
        last: after.unwrap_or(sub.seq),
        events: sub.events,
        done: false,
    };
    futures::stream::unfold(st, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some(after) = st.fetch.take() {
                match st
                    .inner
                    .manager
                    .store()
                    .events_after(&st.task_id, after)
                    .await
                {
                    Ok(events) => st.queue.extend(events),
                    Err(e) => {
                        st.done = true;
                        return Some((Err(store_error(e)), st));
                    }
                }
            }
            if let Some((seq, event)) = st.queue.pop_front() {
                if seq <= st.last && seq != 0 && st.live {
                    continue;
                }
                st.last = st.last.max(seq);
                if st.live {
                    st.done = ends_stream(&event);
                } else if st.queue.is_empty() && st.end_after_replay {
                    st.done = true;
                }
                return Some((Ok((seq, event)), st));
            }
            if st.end_after_replay {
                return None;
            }
            if let Some((seq, task)) = st.first.take() {
                st.done = task.status.state.is_terminal();
                return Some((Ok((seq, Arc::new(StreamEvent::Task(task)))), st));
            }
            let update = tokio::select! {
                u = st.events.recv() => u,
                () = st.inner.shutdown.cancelled() => return None,
            };
            let item = match update {
                Ok(Update::Event(seq, _)) if seq != 0 && seq <= st.last => continue,
                Ok(Update::Event(seq, event)) => {
                    // A message before any task is the agent's whole answer.
                    let reply = !st.task_exists && event.kind() == "message";
                    st.task_exists |= !reply;
                    st.done = reply || ends_stream(&event);
                    st.last = st.last.max(seq);
                    Ok((seq, event))
                }
                Ok(Update::Error(e)) => {
                    st.done = true;
                    Err(*e)
                }
                Err(RecvError::Lagged(n)) => {
                    // Too slow to follow: catch up from the log.
                    warn!(
                        skipped = n,
                        "stream subscriber lagged; catching up from the log"
                    );
                    st.fetch = Some(st.last);
                    st.live = true;
                    st.task_exists = true;
                    continue;
                }
                Err(RecvError::Closed) if !st.task_exists => {
                    st.done = true;
                    Err(RpcError::invalid_agent_response(
                        "the agent finished without creating a task or replying with a message",
                    ))
                }
                Err(RecvError::Closed) => return None,
            };
            return Some((item, st));
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::protocol::types::media_type_matches;

    #[test]
    fn media_types_match_with_wildcards_and_parameters() {
        assert!(media_type_matches(
            "text/plain",
            "text/plain; charset=utf-8"
        ));
        assert!(media_type_matches("*/*", "image/png"));
        assert!(media_type_matches("image/*", "image/png"));
        assert!(media_type_matches("text", "text/plain"));
        assert!(!media_type_matches("image/png", "text/plain"));
        assert!(!media_type_matches("application/json", "text/plain"));
    }
}

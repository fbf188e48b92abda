//! The request handler: every A2A operation — send, stream, get, list, cancel,
//! subscribe, the push-config operations, the extended card — on the model (v1.0's
//! messages), knowing no transport, and of a request's generation only what its errors
//! call its fields and the body its webhooks get. The bindings (`jsonrpc.rs`, `rest.rs`,
//! `grpc.rs`; v0.3's through `v0_3.rs`) hand it their requests and write what it answers
//! in their version's shape.

use crate::card::AgentCard;
use crate::server::{
    Access, ActorHandle, Authorize, Caller, CancelContext, ClusterRequest, Ending, EventSink,
    Forwarded, Inner, Origin, OwnTasks, Placement, RequestContext, SinkError, StoreError,
    Subscription, Until, Update, apply_event, check_webhook, ends_on, ends_stream,
};
use crate::store::{PushBody, StoredPushConfig, StoredTask, TaskPage, TaskQuery};
use crate::types::{
    CancelTaskRequest, ContextId, GetTaskRequest, Message, Metadata, Role, SendMessageRequest,
    SendMessageResult, StreamEvent, Task, TaskId, TaskPushNotificationConfig, TaskState,
    media_type_matches,
};
use crate::{ErrorCode, Method, RpcError, Version};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tracing::{Instrument, info_span, warn};

pub(super) fn store_error(e: StoreError) -> RpcError {
    warn!(error = %e, "task store failure");
    if e.is_transient() {
        RpcError::internal("the task store is unavailable; try again shortly")
    } else {
        RpcError::internal("the task store failed")
    }
}

pub(super) fn sink_error(e: SinkError) -> RpcError {
    match e {
        // v1.0.1 §3.1.1-3.1.2: UnsupportedOperationError.
        SinkError::Terminal(id, state) => RpcError::unsupported_operation(format!(
            "task {id} is in terminal state {state} and accepts no more messages; start a new task (you may reuse its contextId)"
        ))
        .with_data(serde_json::json!({ "field": "message.taskId", "taskId": id.as_str() })),
        other => RpcError::from(other),
    }
}

/// The media types in `modes` once each, in their first order (a card's defaults and its
/// skills' modes name the same types again).
fn distinct(modes: Vec<&str>) -> Vec<&str> {
    let mut seen = Vec::with_capacity(modes.len());
    for m in modes {
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    seen
}

/// `text` (an id or a tenant from a request, named `what` in the message) without
/// control characters: an invalid-params error on `field` that names the first and
/// where it is, without echoing the text.
pub(super) fn check_text(field: &str, text: &str, what: &str) -> Result<(), RpcError> {
    match control_character(text) {
        Some(found) => Err(RpcError::invalid_params(
            field,
            format!("contains {found}; {what} here are text without control characters"),
        )),
        None => Ok(()),
    }
}

/// The first control character in `text`, said without echoing it: "a control
/// character (U+0000) at byte 3".
pub(super) fn control_character(text: &str) -> Option<String> {
    let (at, c) = text.char_indices().find(|(_, c)| c.is_control())?;
    Some(format!(
        "a control character (U+{:04X}) at byte {at}",
        u32::from(c)
    ))
}

/// What a cancel answers once the task stands still: the task when it is canceled,
/// `TaskNotCancelableError` naming its state otherwise.
fn cancel_outcome(id: &TaskId, task: StoredTask) -> Result<Task, RpcError> {
    match task.state() {
        TaskState::Canceled => Ok(task.task),
        state => Err(RpcError::task_not_cancelable(id.as_str(), state.as_str())),
    }
}

/// A history length from a request: none, or 0 or more (`field` names it otherwise).
fn history_length(n: Option<i32>, field: &str) -> Result<Option<u32>, RpcError> {
    n.map(|n| {
        u32::try_from(n)
            .map_err(|_| RpcError::invalid_params(field, format!("must be 0 or more, got {n}")))
    })
    .transpose()
}

/// A task id a request names: required.
fn required_id(id: &str, field: &str) -> Result<TaskId, RpcError> {
    if id.is_empty() {
        return Err(RpcError::invalid_params(field, "a task id is required"));
    }
    Ok(TaskId::new(id))
}

/// Where a request of `generation` carries a push config, for the errors that name it.
fn push_field(generation: Version) -> &'static str {
    match generation {
        Version::V0_3 => "configuration.pushNotificationConfig",
        Version::V1_0 => "configuration.taskPushNotificationConfig",
    }
}

/// The body of the notifications of a push config set over `generation`.
fn push_body(generation: Version) -> PushBody {
    match generation {
        Version::V0_3 => PushBody::Task,
        Version::V1_0 => PushBody::StreamResponse,
    }
}

/// Whether `message` is the one that started `task`, sent again: from the same caller,
/// with the same parts, in the same conversation (or naming none). Only then is the
/// earlier task its answer; anything else reusing the id would be answered with
/// another message's task — someone else's, perhaps.
fn same_message(task: &StoredTask, message: &Message, caller: &Caller) -> bool {
    let Some(first) = task.history.first() else {
        return false;
    };
    task.initiator.as_deref() == caller.id()
        && task.tenant.as_deref() == caller.tenant()
        && first.message_id == message.message_id
        && first.parts == message.parts
        && (message.context_id.is_empty() || message.context_id == task.context_id)
}

/// Where a new message goes once checked.
pub(super) struct Started {
    task_id: TaskId,
    sub: Listening,
}

/// What a request hears of the task its message went to.
#[allow(clippy::large_enum_variant)] // made once a request and unpacked at once: boxing would only add an allocation
pub(super) enum Listening {
    /// Every event.
    Events(Subscription),
    /// One event only (see [`Ending`]): what a `message/send` waits for, without being
    /// woken by every event before it.
    Once(tokio::sync::oneshot::Receiver<Ending>),
}

/// What a request asks [`Inner::start`] for: every event, or one ([`Until`]). One is a
/// wish: a task that another server runs, or a message sent again, is followed by its
/// events.
#[derive(Clone, Copy)]
pub(super) enum Listen {
    Events,
    Once(Until),
}

impl Inner {
    pub(super) fn require_streaming(&self, method: Method) -> Result<(), RpcError> {
        if self.cards().card.supports_streaming() {
            Ok(())
        } else {
            Err(RpcError::unsupported_operation(format!(
                "{method} is not supported: this agent's card does not declare capabilities.streaming"
            )))
        }
    }

    pub(super) fn require_push(&self) -> Result<(), RpcError> {
        if self.cards().card.supports_push_notifications() {
            Ok(())
        } else {
            Err(RpcError::push_notification_not_supported())
        }
    }

    pub(super) async fn load(
        &self,
        id: &TaskId,
        caller: &Caller,
        access: Access,
    ) -> Result<StoredTask, RpcError> {
        Ok(self.load_seq(id, caller, access).await?.0)
    }

    /// An id from a request within `max_id_bytes` and without control characters; an
    /// invalid-params error on `field` otherwise, that does not echo it. A stored id is
    /// a key of its store, and PostgreSQL's text holds no NUL: an id it refused would
    /// fail its writes (and a lookup shared with other requests) rather than the request.
    pub(super) fn check_id(&self, field: &str, id: &str) -> Result<(), RpcError> {
        let max = self.config.max_id_bytes;
        if id.len() > max {
            return Err(RpcError::invalid_params(
                field,
                format!(
                    "is {} bytes long; ids here are at most {max} bytes",
                    id.len()
                ),
            ));
        }
        check_text(field, id, "ids")
    }

    /// A request's `metadata` within `max_metadata_bytes` (as JSON).
    fn check_metadata(&self, field: &str, metadata: Option<&Metadata>) -> Result<(), RpcError> {
        let max = self.config.max_metadata_bytes;
        let size = metadata.map_or(0, |m| serde_json::to_vec(m).map_or(usize::MAX, |v| v.len()));
        if size > max {
            return Err(RpcError::invalid_params(
                field,
                format!("is {size} bytes as JSON; metadata here is at most {max} bytes"),
            ));
        }
        Ok(())
    }

    /// A task and the number of its last logged event.
    /// Task `id` and its last event's number, when `caller` may `access` it; another
    /// principal's task is not found, as if it did not exist.
    pub(super) async fn load_seq(
        &self,
        id: &TaskId,
        caller: &Caller,
        access: Access,
    ) -> Result<(StoredTask, u64), RpcError> {
        self.check_id("id", id.as_str())?;
        self.manager
            .store()
            .get(id)
            .await
            .map_err(store_error)?
            .filter(|(task, _)| self.allows(task, caller, access))
            .ok_or_else(|| RpcError::task_not_found(id.as_str()))
    }

    /// Whether `caller` may act on `task` so: as who started it, or as the
    /// application's [`Authorize`] lets it (an operator, an approver answering its
    /// question), in the task's tenant.
    fn allows(&self, task: &StoredTask, caller: &Caller, access: Access) -> bool {
        caller.may(
            task.initiator.as_deref(),
            task.tenant.as_deref(),
            access,
            self.config.authorizer(),
            Some(task),
        )
    }

    /// For a caller who reads `task` only as the application lets it (not who started
    /// it): what ends that leave, to end the caller's stream before it — an approver
    /// follows the run while the question waits, not after.
    fn lapse(&self, task: &StoredTask, caller: &Caller) -> Option<super::task_manager::Lapse> {
        if caller.owns(task.initiator.as_deref(), task.tenant.as_deref()) {
            return None;
        }
        let authorize: Arc<dyn Authorize> = (self.config.auth.as_ref())
            .and_then(|a| a.authorize.clone())
            .unwrap_or_else(|| Arc::new(OwnTasks));
        let caller = caller.clone();
        // What the agent looks at: the task's status (its questions), as events move it.
        let mut probe = StoredTask {
            task: Task {
                id: task.id.clone(),
                context_id: task.context_id.clone(),
                status: task.status.clone(),
                metadata: task.metadata.clone(),
                ..Task::default()
            },
            initiator: task.initiator.clone(),
            tenant: task.tenant.clone(),
        };
        Some(Box::new(move |event| {
            match event {
                StreamEvent::StatusUpdate(u) => probe.status = u.status.clone(),
                StreamEvent::Task(t) => probe.status = t.status.clone(),
                StreamEvent::ArtifactUpdate(_) | StreamEvent::Message(_) => return false,
            }
            !authorize.lets(&caller, Some(&probe), Access::Read)
        }))
    }

    /// Stores a push config for a task, within [`ServerConfig::max_push_configs`] a
    /// task: one more than that (a new id) is refused, naming `field`. One at a time,
    /// so that requests at once cannot pass the bound together.
    async fn store_push_config(
        &self,
        task_id: &TaskId,
        config: StoredPushConfig,
        field: &str,
    ) -> Result<(), RpcError> {
        let _one = self.push_writes.lock().await;
        let store = self.manager.store();
        let kept = store.push_configs(task_id).await.map_err(store_error)?;
        let max = self.config.max_push_configs;
        if kept.len() >= max && !kept.iter().any(|c| c.config.id == config.config.id) {
            return Err(RpcError::invalid_params(
                field,
                format!(
                    "task {task_id} has {} push notification configs, the most a task may have ({max}); delete one first, or set one of the same id to replace it",
                    kept.len()
                ),
            ));
        }
        store
            .set_push_config(task_id, config)
            .await
            .map_err(store_error)
    }

    pub(super) async fn push_configs(
        &self,
        id: &TaskId,
        caller: &Caller,
    ) -> Result<Vec<TaskPushNotificationConfig>, RpcError> {
        self.require_push()?;
        let task = self.load(id, caller, Access::Read).await?;
        let stored = self
            .manager
            .store()
            .push_configs(id)
            .await
            .map_err(store_error)?;
        // The secrets a webhook checks its sender by are for who may change the
        // config (the task's owner), not for who may only read the task (an approver).
        let secrets = self.allows(&task, caller, Access::Steer);
        Ok(stored
            .into_iter()
            .map(|s| {
                let mut c = s.config;
                c.task_id = id.as_str().to_owned();
                c.tenant = String::new();
                if !secrets {
                    c.token = String::new();
                    if let Some(auth) = &mut c.authentication {
                        auth.credentials = String::new();
                    }
                }
                c
            })
            .collect())
    }

    /// A push config's id (if it has one) and webhook, `prefix` naming where it is in
    /// the request (`""` for the request itself).
    pub(super) async fn check_push_config(
        &self,
        config: &TaskPushNotificationConfig,
        prefix: &str,
    ) -> Result<(), RpcError> {
        let field = |name: &str| match prefix {
            "" => name.to_owned(),
            prefix => format!("{prefix}.{name}"),
        };
        if !config.id.is_empty() {
            self.check_id(&field("id"), &config.id)?;
        }
        if config.url.is_empty() {
            return Err(RpcError::invalid_params(
                &field("url"),
                "a push config needs a url",
            ));
        }
        check_webhook(&config.url, self.config.allow_private_webhooks)
            .await
            .map_err(|why| RpcError::invalid_params(&field("url"), why))
    }

    /// Sets a push config of a task (the one `config.task_id` names), set over
    /// `generation` (the body its notifications take; `prefix`: where the config is in
    /// the request, for errors).
    pub(super) async fn set_push(
        &self,
        mut config: TaskPushNotificationConfig,
        generation: Version,
        prefix: &str,
        caller: &Caller,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        self.require_push()?;
        let task_id = required_id(&config.task_id, "taskId")?;
        self.check_push_config(&config, prefix).await?;
        let task = self.load(&task_id, caller, Access::Steer).await?;
        if config.id.is_empty() {
            config.id = task_id.as_str().to_owned();
        }
        config.tenant = String::new();
        let stored = StoredPushConfig {
            config: config.clone(),
            body: push_body(generation),
        };
        self.store_push_config(
            &task_id,
            stored,
            if prefix.is_empty() { "id" } else { prefix },
        )
        .await?;
        // A finished task changes no more: nothing to deliver, nothing to remember.
        if !task.state().is_terminal() {
            // Delivered by the server that runs the task: told, when that is another.
            match self.placement(&task_id).await? {
                Placement::Local => self.manager.arm_push(&task_id),
                Placement::Remote(store) => {
                    self.forward(&store, &task_id, ClusterRequest::ArmPush)
                        .await?;
                }
            }
        }
        Ok(config)
    }

    /// Checks a new message against the card: role, ids, parts and media types, and
    /// the request's configuration; `generation` names the push config's field.
    pub(super) async fn check_message(
        &self,
        request: &SendMessageRequest,
        generation: Version,
    ) -> Result<(), RpcError> {
        let Some(m) = &request.message else {
            return Err(RpcError::invalid_params("message", "a message is required"));
        };
        if m.role() != Role::User {
            return Err(RpcError::invalid_params(
                "message.role",
                "a message sent to an agent must be the user's (ROLE_USER; \"user\" in v0.3)",
            ));
        }
        let max_parts = self.config.max_parts;
        if m.parts.len() > max_parts {
            return Err(RpcError::invalid_params(
                "message.parts",
                format!(
                    "has {} parts; a message here has at most {max_parts}",
                    m.parts.len()
                ),
            ));
        }
        if m.message_id.is_empty() {
            return Err(RpcError::invalid_params(
                "message.messageId",
                "a message needs a messageId",
            ));
        }
        self.check_id("message.messageId", &m.message_id)?;
        if !m.context_id.is_empty() {
            self.check_id("message.contextId", &m.context_id)?;
        }
        if !m.task_id.is_empty() {
            self.check_id("message.taskId", &m.task_id)?;
        }
        for (i, id) in m.reference_task_ids.iter().enumerate() {
            self.check_id(&format!("message.referenceTaskIds[{i}]"), id)?;
        }
        self.check_metadata("message.metadata", m.metadata.as_ref())?;
        self.check_metadata("metadata", request.metadata.as_ref())?;
        if m.parts.is_empty() {
            return Err(RpcError::invalid_params(
                "message.parts",
                "a message needs at least one part",
            ));
        }
        if let Some(i) = m.parts.iter().position(|p| p.content.is_none()) {
            return Err(RpcError::invalid_params(
                &format!("message.parts[{i}]"),
                "a part has exactly one of `text`, `raw`, `url` or `data` (this one has none)",
            ));
        }
        let cards = self.cards();
        let accepted_inputs: Vec<&str> = cards
            .card
            .default_input_modes
            .iter()
            .chain(cards.card.skills.iter().flat_map(|s| &s.input_modes))
            .map(String::as_str)
            .collect();
        let accepted_inputs = distinct(accepted_inputs);
        if !accepted_inputs.is_empty() {
            for (i, part) in m.parts.iter().enumerate() {
                let ty = part.mode();
                if !accepted_inputs.iter().any(|a| media_type_matches(a, ty)) {
                    return Err(RpcError::content_type_not_supported(format!(
                        "message.parts[{i}] has media type {ty}, which this agent does not accept (it accepts {})",
                        accepted_inputs.join(", ")
                    ))
                    .with_data(serde_json::json!({ "field": format!("message.parts[{i}]"), "mediaType": ty })));
                }
            }
        }
        let Some(configuration) = &request.configuration else {
            return Ok(());
        };
        history_length(configuration.history_length, "configuration.historyLength")?;
        let wanted = &configuration.accepted_output_modes;
        if !wanted.is_empty() {
            let offered: Vec<&str> = cards
                .card
                .default_output_modes
                .iter()
                .chain(cards.card.skills.iter().flat_map(|s| &s.output_modes))
                .map(String::as_str)
                .collect();
            let offered = distinct(offered);
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
        if let Some(config) = &configuration.task_push_notification_config {
            self.require_push()?;
            self.check_push_config(config, push_field(generation))
                .await?;
        }
        Ok(())
    }

    /// Checks a message, binds it to a new or existing task, and starts the agent.
    pub(super) async fn start(
        &self,
        request: SendMessageRequest,
        generation: Version,
        caller: &Caller,
        listen: Listen,
    ) -> Result<Started, RpcError> {
        self.check_message(&request, generation).await?;
        let SendMessageRequest {
            tenant,
            message,
            configuration,
            metadata,
        } = request;
        let mut message = message.expect("checked: a message is required");
        // A caller the agent lets answer (an approver) hears what it may read: its
        // stream ends when its leave does; a blocking answer returns once taken.
        let mut lapse = None;
        let named = (!message.task_id.is_empty()).then(|| TaskId::new(&message.task_id));
        let (handle, task, task_id, context_id) = match named {
            Some(task_id) => {
                let (task, seq) = self.load_seq(&task_id, caller, Access::Answer).await?;
                lapse = self.lapse(&task, caller);
                if configuration
                    .as_ref()
                    .is_some_and(|c| c.task_push_notification_config.is_some())
                    && !self.allows(&task, caller, Access::Steer)
                {
                    // An approver answers; where the task's news goes is its owner's.
                    return Err(RpcError::invalid_params(
                        push_field(generation),
                        format!(
                            "only who may change task {task_id} (who started it) may set its push notifications; answer without one"
                        ),
                    ));
                }
                // A message that names the wrong context is wrong whatever the task's
                // state (-32602); a right one to a finished task is refused (-32004).
                if !message.context_id.is_empty() && message.context_id != task.context_id {
                    return Err(RpcError::invalid_params(
                        "message.contextId",
                        format!(
                            "task {task_id} belongs to context {}, not {}",
                            task.context_id, message.context_id
                        ),
                    ));
                }
                if task.state().is_terminal() {
                    return Err(sink_error(SinkError::Terminal(task_id, task.state())));
                }
                self.agent.admit(&task, &message, caller)?;
                let context_id = ContextId::new(&task.context_id);
                message.context_id = task.context_id.clone();
                if let Placement::Remote(store) = self.placement(&task_id).await? {
                    // Another server runs the task: it takes the message from the queue;
                    // the client follows the task's log from here.
                    let request = SendMessageRequest {
                        tenant,
                        message: Some(message),
                        configuration,
                        metadata,
                    };
                    self.forward(
                        &store,
                        &task_id,
                        ClusterRequest::Message(Box::new(Forwarded::new(
                            request, generation, caller,
                        ))),
                    )
                    .await?;
                    let mut sub = self.tail(store, task, seq);
                    sub.lapses = lapse;
                    return Ok(Started {
                        task_id,
                        sub: Listening::Events(sub),
                    });
                }
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
                let existing = if self.config.message_idempotency {
                    self.manager
                        .store()
                        .task_of_message(&message.message_id)
                        .await
                        .map_err(store_error)?
                } else {
                    None
                };
                if let Some(existing) = existing {
                    let reused = || {
                        RpcError::invalid_params(
                            "message.messageId",
                            "is already used for a different message (other parts, another conversation or another caller); give every new message a messageId of its own",
                        )
                    };
                    // Another caller's task is named to nobody: its id is no answer.
                    let (task, seq) = match self.load_seq(&existing, caller, Access::Read).await {
                        Err(e) if e.code == ErrorCode::TASK_NOT_FOUND => return Err(reused()),
                        found => found?,
                    };
                    if !same_message(&task, &message, caller) {
                        return Err(reused());
                    }
                    let lapses = self.lapse(&task, caller);
                    let handle = self.manager.open_existing(task, seq);
                    let mut sub = handle.subscribe().await.map_err(sink_error)?;
                    sub.lapses = lapses;
                    return Ok(Started {
                        task_id: existing,
                        sub: Listening::Events(sub),
                    });
                }
                let task_id = TaskId::random();
                let context_id = match message.context_id.as_str() {
                    "" => ContextId::random(),
                    id => ContextId::new(id),
                };
                message.task_id = task_id.as_str().to_owned();
                message.context_id = context_id.as_str().to_owned();
                let handle = self.manager.open_new(
                    task_id.clone(),
                    context_id.clone(),
                    message.clone(),
                    Origin {
                        initiator: caller.id().map(str::to_owned),
                        tenant: caller.tenant().map(str::to_owned),
                    },
                );
                (handle, None, task_id, context_id)
            }
        };
        if let Some(mut config) = configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.clone())
        {
            if config.id.is_empty() {
                config.id = task_id.as_str().to_owned();
            }
            config.task_id = task_id.as_str().to_owned();
            config.tenant = String::new();
            let stored = StoredPushConfig {
                config,
                body: push_body(generation),
            };
            self.store_push_config(&task_id, stored, push_field(generation))
                .await?;
            self.manager.arm_push(&task_id);
        }
        // Before the agent starts: nothing it does is missed.
        let sub = match listen {
            Listen::Events => {
                let mut sub = handle.subscribe().await.map_err(sink_error)?;
                sub.lapses = lapse;
                Listening::Events(sub)
            }
            Listen::Once(_) if lapse.is_some() => Listening::Once(
                handle
                    .await_event(Until::FirstEvent)
                    .await
                    .map_err(sink_error)?,
            ),
            Listen::Once(until) => {
                Listening::Once(handle.await_event(until).await.map_err(sink_error)?)
            }
        };
        let ctx = RequestContext {
            task_id: task_id.clone(),
            context_id: context_id.clone(),
            message,
            task: task.map(Box::new),
            configuration: configuration.map(Box::new),
            metadata,
            caller: caller.clone(),
            cancel: handle.cancel.clone(),
            shutdown: handle.handover.clone(),
        };
        self.spawn_execute(handle, ctx);
        Ok(Started { task_id, sub })
    }

    /// Runs `execute` in a task owned by the server. A returned error or a panic fails
    /// the task (or, before any event, answers the request with the error).
    pub(super) fn spawn_execute(&self, handle: ActorHandle, ctx: RequestContext) {
        let sink = EventSink {
            handle: handle.clone(),
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
        };
        let agent = self.agent.clone();
        let span = info_span!(
            "execute",
            task_id = %ctx.task_id,
            "a2a.task.id" = %ctx.task_id,
            "a2a.message.id" = %ctx.message.message_id,
            "gen_ai.conversation.id" = %ctx.context_id,
        );
        self.spawn_agent(handle, span, async move { agent.execute(ctx, sink).await });
    }

    /// Runs an agent's work on a task in a task the server owns. A returned error or a
    /// panic fails the task (or, before any event, answers the request with the error).
    pub(super) fn spawn_agent(
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
                    // A request waiting for its message's end hears of a stop from now on.
                    Ok(Ok(())) => handle.done().await,
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

    /// SendMessage (`message/send`), sent over `generation`.
    pub(super) async fn send(
        &self,
        request: SendMessageRequest,
        generation: Version,
        caller: &Caller,
    ) -> Result<SendMessageResult, RpcError> {
        let blocking = request.blocking();
        let history_length = history_length(
            request
                .configuration
                .as_ref()
                .and_then(|c| c.history_length),
            "configuration.historyLength",
        )?;
        let listen = Listen::Once(if blocking {
            Until::End
        } else {
            Until::FirstEvent
        });
        let Started { task_id, sub } = self.start(request, generation, caller, listen).await?;
        let mut sub = match sub {
            Listening::Events(sub) => sub,
            Listening::Once(end) => {
                let task = tokio::select! {
                    ending = end => match ending {
                        Ok(Ending::Task(task)) => Some(Arc::unwrap_or_clone(task).task),
                        Ok(Ending::Message(m)) => return Ok(SendMessageResult::Message(*m)),
                        Ok(Ending::Error(e)) => return Err(*e),
                        // The task's actor ended before that event: the task as it
                        // was stored.
                        Err(_) => None,
                    },
                    () = self.shutdown.cancelled() => None,
                };
                return self.answer(&task_id, task, history_length).await;
            }
        };
        let mut task_exists = sub.snapshot.is_some();
        // The task moved on by the events as they come, as the store moves it: what a
        // blocking request answers with once the task stops, without reading it back.
        let mut current: Option<Task> = sub.snapshot.take();
        let (mut ended, mut lagged) = (false, false);
        // Made once, not at every event (each would add a waiter to the token's list
        // and take it out again).
        let stopping = self.shutdown.cancelled();
        tokio::pin!(stopping);
        loop {
            let update = tokio::select! {
                u = sub.events.recv() => u,
                () = &mut stopping => break,
            };
            match update {
                Ok(Update::Event(_, event)) if !task_exists && event.kind() == "message" => {
                    if let StreamEvent::Message(m) = &*event {
                        return Ok(SendMessageResult::Message(m.clone()));
                    }
                }
                Ok(Update::Error(e)) => return Err(*e),
                // The caller may read no further (an approver whose question is
                // answered): the task as it stood before.
                Ok(Update::Event(_, event))
                    if sub.lapses.as_mut().is_some_and(|lapses| lapses(&event)) =>
                {
                    ended = true;
                    break;
                }
                Ok(Update::Event(_, event)) => {
                    task_exists = true;
                    match (&mut current, &*event) {
                        (Some(task), event) => apply_event(task, event),
                        (None, StreamEvent::Task(t)) if !lagged => current = Some(t.clone()),
                        (None, _) => {}
                    }
                    if !blocking || ends_stream(&event) {
                        ended = blocking;
                        break;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    task_exists = true;
                    // Events were missed: the task is read back at the end.
                    (current, lagged) = (None, true);
                    let task = self.load(&task_id, caller, Access::Read).await?;
                    if !blocking || ends_on(task.state()) {
                        break;
                    }
                }
                Err(RecvError::Closed) => break,
            }
        }
        self.answer(&task_id, current.filter(|_| ended), history_length)
            .await
    }

    /// A `message/send`'s answer: `task` as the request saw it end, else as stored.
    async fn answer(
        &self,
        task_id: &TaskId,
        task: Option<Task>,
        history_length: Option<u32>,
    ) -> Result<SendMessageResult, RpcError> {
        let task = match task {
            Some(task) => Some(task),
            None => self
                .manager
                .store()
                .get(task_id)
                .await
                .map_err(store_error)?
                .map(|(task, _)| task.task),
        };
        match task {
            Some(mut task) => {
                task.truncate_history(history_length);
                // With the agent's live summary, as GetTask gives it.
                self.agent.describe(&mut task).await;
                Ok(SendMessageResult::Task(task))
            }
            None => Err(RpcError::invalid_agent_response(
                "the agent finished without creating a task or replying with a message",
            )),
        }
    }

    /// CancelTask (`tasks/cancel`).
    pub(super) async fn cancel(
        &self,
        request: CancelTaskRequest,
        caller: &Caller,
    ) -> Result<Task, RpcError> {
        let id = required_id(&request.id, "id")?;
        let (task, seq) = self.load_seq(&id, caller, Access::Steer).await?;
        if task.state().is_terminal() {
            return Err(RpcError::task_not_cancelable(
                id.as_str(),
                task.state().as_str(),
            ));
        }
        let mut sub = match self.placement(&id).await? {
            Placement::Local => {
                let handle = self.manager.open_existing(task.clone(), seq);
                let sub = handle.subscribe().await.map_err(sink_error)?;
                let sink = EventSink {
                    handle: handle.clone(),
                    task_id: id.clone(),
                    context_id: ContextId::new(&task.context_id),
                };
                let ctx = CancelContext {
                    task,
                    metadata: request.metadata.clone(),
                    caller: caller.clone(),
                };
                let outcome = AssertUnwindSafe(self.agent.cancel(ctx, sink))
                    .catch_unwind()
                    .await;
                match outcome {
                    Ok(Ok(())) => handle.cancel.cancel(),
                    Ok(Err(e)) => {
                        // A concurrent cancel (or the task's own end) got there first:
                        // the agent's refusal is then no failure, and the answer is the
                        // one for a task found in that state.
                        let now = self.load(&id, caller, Access::Read).await?;
                        if now.state().is_terminal() {
                            return cancel_outcome(&id, now);
                        }
                        return Err(e);
                    }
                    Err(_) => return Err(RpcError::internal("the agent failed while canceling")),
                }
                sub
            }
            // Another server runs the task: it cancels it; this one waits for the log
            // to say so.
            Placement::Remote(store) => {
                self.forward(
                    &store,
                    &id,
                    ClusterRequest::Cancel(Box::new(Forwarded::new(
                        request.clone(),
                        Version::V1_0,
                        caller,
                    ))),
                )
                .await?;
                self.tail(store, task, seq)
            }
        };
        // Wait (bounded) for the agent to reach a terminal state.
        let wait = async {
            loop {
                let current = self.load(&id, caller, Access::Read).await?;
                if current.state().is_terminal() {
                    return Ok::<_, RpcError>(current);
                }
                match sub.events.recv().await {
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        return self.load(&id, caller, Access::Read).await;
                    }
                }
            }
        };
        let task = match tokio::time::timeout(self.config.cancel_wait, wait).await {
            Ok(r) => r?,
            Err(_) => self.load(&id, caller, Access::Read).await?,
        };
        cancel_outcome(&id, task)
    }

    /// GetTask / `tasks/get`.
    pub(super) async fn get_task(
        &self,
        request: GetTaskRequest,
        caller: &Caller,
    ) -> Result<Task, RpcError> {
        let id = required_id(&request.id, "id")?;
        let history_length = history_length(request.history_length, "historyLength")?;
        let mut task = self.load(&id, caller, Access::Read).await?.task;
        task.truncate_history(history_length);
        self.agent.describe(&mut task).await;
        Ok(task)
    }

    /// ListTasks: a page of tasks, newest status first.
    pub(super) async fn list_tasks(
        &self,
        mut query: TaskQuery,
        caller: &Caller,
    ) -> Result<TaskPage, RpcError> {
        if let Some(id) = &query.context_id {
            self.check_id("contextId", id.as_str())?;
        }
        if let Some(after) = &query.after {
            self.check_id("pageToken", after.id.as_str())?;
        }
        // Its own tasks, unless it may read every task of the tenant.
        query.initiator = caller
            .id()
            .filter(|_| !self.config.authorizer().lets(caller, None, Access::Read))
            .map(str::to_owned);
        query.tenant = caller.tenant().map(str::to_owned);
        let mut page = self
            .manager
            .store()
            .list(&query)
            .await
            .map_err(store_error)?;
        futures::future::join_all(
            page.tasks
                .iter_mut()
                .map(|t| self.agent.describe(&mut t.task)),
        )
        .await;
        Ok(page)
    }

    /// One push config of a task: the one named, or (v0.3, without a name) its first.
    pub(super) async fn get_push_config(
        &self,
        task_id: &TaskId,
        config_id: Option<&str>,
        field: &str,
        caller: &Caller,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        if let Some(id) = config_id {
            self.check_id(field, id)?;
        }
        let configs = self.push_configs(task_id, caller).await?;
        let found = match config_id {
            Some(id) => configs.into_iter().find(|c| c.id == id),
            None => configs.into_iter().next(),
        };
        // v1.0.1 §3.1.8: a config that does not exist is TaskNotFoundError.
        let config = found.ok_or_else(|| {
            let (field, why) = match config_id {
                Some(id) => (
                    field,
                    format!("task {task_id} has no push notification config {id:?}"),
                ),
                None => (
                    "id",
                    format!("task {task_id} has no push notification config"),
                ),
            };
            RpcError::new(ErrorCode::TASK_NOT_FOUND, why)
                .with_data(serde_json::json!({ "taskId": task_id.as_str(), "field": field }))
        })?;
        Ok(config)
    }

    /// Every push config of a task.
    pub(super) async fn list_push_configs(
        &self,
        task_id: &TaskId,
        caller: &Caller,
    ) -> Result<Vec<TaskPushNotificationConfig>, RpcError> {
        self.push_configs(task_id, caller).await
    }

    /// Removes a push config; an unknown one is an invalid-params error on `field`.
    pub(super) async fn delete_push_config(
        &self,
        task_id: &TaskId,
        config_id: &str,
        field: &str,
        caller: &Caller,
    ) -> Result<(), RpcError> {
        self.require_push()?;
        self.check_id(field, config_id)?;
        self.load(task_id, caller, Access::Steer).await?;
        if config_id.is_empty() {
            return Err(RpcError::invalid_params(
                field,
                "a push notification config id is required",
            ));
        }
        // Idempotent (spec §3.1.10): deleting a config already gone has the same effect.
        self.manager
            .store()
            .delete_push_config(task_id, config_id)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    /// The authenticated extended card, when the card offers one and it is configured,
    /// as the agent shapes it for `caller`.
    pub(super) fn extended_card(&self, caller: &Caller) -> Result<AgentCard, RpcError> {
        let cards = self.cards();
        match (&cards.extended, cards.card.supports_extended_card()) {
            (Some(card), true) => {
                let mut card = card.clone();
                self.agent.tailor_extended_card(&mut card, caller);
                Ok(card)
            }
            _ => Err(RpcError::extended_card_not_configured()),
        }
    }

    /// Where a stream starts: a new message's task, or an existing task (resumed after
    /// `after`, the number of the last event the client saw, when it gives one).
    pub(super) async fn open_stream(
        &self,
        method: Method,
        request: StreamRequest,
        caller: &Caller,
    ) -> Result<(TaskId, Subscription, Option<u64>), RpcError> {
        self.require_streaming(method)?;
        let slot = self
            .streams
            .open(caller, self.config.max_streaming_connections_per_caller)?;
        let (id, mut sub, after) = self.open_stream_held(request, caller).await?;
        sub.slot = Some(slot);
        Ok((id, sub, after))
    }

    async fn open_stream_held(
        &self,
        request: StreamRequest,
        caller: &Caller,
    ) -> Result<(TaskId, Subscription, Option<u64>), RpcError> {
        match request {
            StreamRequest::Message(request, generation) => {
                let Started { task_id, sub } = self
                    .start(*request, generation, caller, Listen::Events)
                    .await?;
                let Listening::Events(sub) = sub else {
                    unreachable!("start listens to the events when asked to")
                };
                Ok((task_id, sub, None))
            }
            StreamRequest::Subscribe {
                id,
                after,
                terminal_ok,
            } => {
                let (task, seq) = self.load_seq(&id, caller, Access::Read).await?;
                let lapse = self.lapse(&task, caller);
                if let Some(after) = after
                    && after > seq
                {
                    return Err(RpcError::invalid_request(format!(
                        "Last-Event-ID {after} is past the last event of task {id} ({seq})"
                    )));
                }
                if !terminal_ok && after.is_none() && task.state().is_terminal() {
                    return Err(RpcError::unsupported_operation(format!(
                        "task {id} is {} and will not change: get it with GetTask",
                        task.state()
                    )));
                }
                // v1.0 begins every subscription with the task as it stands (§3.1.6),
                // numbered as the last event it includes: the events a `Last-Event-ID`
                // would replay are in it, and the live ones follow. v0.3 replays them.
                let after = if terminal_ok { after } else { None };
                if !task.state().is_terminal()
                    && let Placement::Remote(store) = self.placement(&id).await?
                {
                    // Another server runs the task: its log, followed from the store.
                    let mut sub = self.tail(store, task, seq);
                    if let Some(snapshot) = &mut sub.snapshot {
                        self.agent.describe(snapshot).await;
                    }
                    sub.until_terminal = !terminal_ok;
                    sub.lapses = lapse;
                    return Ok((id, sub, after));
                }
                let handle = self.manager.open_existing(task, seq);
                let mut sub = handle.subscribe().await.map_err(sink_error)?;
                if let Some(snapshot) = &mut sub.snapshot {
                    self.agent.describe(snapshot).await;
                }
                // A v1.0 subscription ends at a terminal state only (§3.1.6): one to a
                // task waiting for input follows it through the next message.
                sub.keep = Some(handle);
                sub.until_terminal = !terminal_ok;
                sub.lapses = lapse;
                Ok((id, sub, after))
            }
        }
    }
}

/// What a streaming request asks for.
pub(super) enum StreamRequest {
    /// SendStreamingMessage / `message/stream`, sent over a generation.
    Message(Box<SendMessageRequest>, Version),
    /// SubscribeToTask / `tasks/resubscribe`, after event `after` if given.
    /// `terminal_ok`: v0.3 sends a finished task's snapshot; v1.0 refuses.
    Subscribe {
        id: TaskId,
        after: Option<u64>,
        terminal_ok: bool,
    },
}

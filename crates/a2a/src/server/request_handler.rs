//! The server without its transport: every A2A operation as a method taking the
//! protocol's types and the caller, answering with the protocol's types or the spec's
//! error. The bindings (JSON-RPC, HTTP+JSON, gRPC) are thin layers over the same
//! handler; with it an application can call the agent in process, test it without a
//! socket, or put another transport in front of it — as the official SDKs' request
//! handlers allow.
//!
//! Everything the bindings enforce below the wire is enforced here too: who may act on
//! a task, the card's capabilities, the bounds on messages, push configs and streams.

use std::sync::Arc;

use futures::{Stream, StreamExt};

use super::auth::Caller;
use super::handler::StreamRequest;
use super::{Inner, live_events};
use crate::card::AgentCard;
use crate::error::RpcError;
use crate::store::{TaskPage, TaskQuery};
use crate::types::{
    CancelTaskRequest, GetTaskRequest, SendMessageRequest, SendMessageResult, StreamEvent, Task,
    TaskId, TaskPushNotificationConfig,
};
use crate::{Method, Version};

/// A stream of a task's events, as a subscriber reads them: the task first (when it
/// opens on an existing task), then each event; an error ends it.
pub type TaskEvents = std::pin::Pin<Box<dyn Stream<Item = Result<StreamEvent, RpcError>> + Send>>;

/// The transport-free handler of one server ([`A2aServer::handler`](super::A2aServer::handler)).
/// Cheap to clone.
#[derive(Clone)]
pub struct RequestHandler {
    pub(super) inner: Arc<Inner>,
}

/// A [`RequestHandler`] that does not keep its server alive: for whatever the server
/// itself holds (its agent, say) that calls it back, which a strong handle would make a
/// cycle no drop could end.
#[derive(Clone)]
pub struct WeakRequestHandler(std::sync::Weak<Inner>);

impl WeakRequestHandler {
    /// The handler, while its server lives.
    pub fn upgrade(&self) -> Option<RequestHandler> {
        self.0.upgrade().map(|inner| RequestHandler { inner })
    }
}

impl RequestHandler {
    /// A handle on this handler that does not keep its server alive.
    pub fn downgrade(&self) -> WeakRequestHandler {
        WeakRequestHandler(Arc::downgrade(&self.inner))
    }

    /// SendMessage (`message/send`): a task, or the agent's direct reply.
    pub async fn send_message(
        &self,
        request: SendMessageRequest,
        caller: &Caller,
    ) -> Result<SendMessageResult, RpcError> {
        self.inner.send(request, Version::V1_0, caller).await
    }

    /// SendStreamingMessage (`message/stream`): the new (or continued) task's events.
    pub async fn send_message_stream(
        &self,
        request: SendMessageRequest,
        caller: &Caller,
    ) -> Result<TaskEvents, RpcError> {
        let request = StreamRequest::Message(Box::new(request), Version::V1_0);
        self.events(Method::SendStreamingMessage, request, caller)
            .await
    }

    /// SubscribeToTask (`tasks/resubscribe`): an unfinished task's events from now on,
    /// its snapshot first.
    pub async fn subscribe(&self, id: TaskId, caller: &Caller) -> Result<TaskEvents, RpcError> {
        let request = StreamRequest::Subscribe {
            id,
            after: None,
            terminal_ok: false,
        };
        self.events(Method::Resubscribe, request, caller).await
    }

    async fn events(
        &self,
        method: Method,
        request: StreamRequest,
        caller: &Caller,
    ) -> Result<TaskEvents, RpcError> {
        let (task_id, sub, after) = self.inner.open_stream(method, request, caller).await?;
        let events = live_events(self.inner.clone(), task_id, sub, after)
            .map(|item| item.map(|(_, event)| (*event).clone()));
        Ok(Box::pin(events))
    }

    /// GetTask (`tasks/get`).
    pub async fn get_task(
        &self,
        request: GetTaskRequest,
        caller: &Caller,
    ) -> Result<Task, RpcError> {
        self.inner.get_task(request, caller).await
    }

    /// ListTasks (v1.0): the page of the tasks `caller` may read that `query` asks for.
    pub async fn list_tasks(
        &self,
        query: TaskQuery,
        caller: &Caller,
    ) -> Result<TaskPage, RpcError> {
        self.inner.list_tasks(query, caller).await
    }

    /// CancelTask (`tasks/cancel`).
    pub async fn cancel_task(
        &self,
        request: CancelTaskRequest,
        caller: &Caller,
    ) -> Result<Task, RpcError> {
        self.inner.cancel(request, caller).await
    }

    /// CreateTaskPushNotificationConfig (`tasks/pushNotificationConfig/set`): a webhook
    /// for task `config.task_id`, its notifications v1.0's `StreamResponse`s.
    pub async fn set_push_config(
        &self,
        config: TaskPushNotificationConfig,
        caller: &Caller,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        self.inner.set_push(config, Version::V1_0, "", caller).await
    }

    /// GetTaskPushNotificationConfig: task `task`'s config `config_id` (its only one,
    /// or the one named after the task, when `None`).
    pub async fn get_push_config(
        &self,
        task: &TaskId,
        config_id: Option<&str>,
        caller: &Caller,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        self.inner
            .get_push_config(task, config_id, "pushNotificationConfigId", caller)
            .await
    }

    /// ListTaskPushNotificationConfigs.
    pub async fn list_push_configs(
        &self,
        task: &TaskId,
        caller: &Caller,
    ) -> Result<Vec<TaskPushNotificationConfig>, RpcError> {
        self.inner.list_push_configs(task, caller).await
    }

    /// DeleteTaskPushNotificationConfig.
    pub async fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
        caller: &Caller,
    ) -> Result<(), RpcError> {
        self.inner
            .delete_push_config(task, config_id, "pushNotificationConfigId", caller)
            .await
    }

    /// GetExtendedAgentCard: the authenticated extended card, as the agent shapes it for
    /// `caller`.
    pub fn extended_card(&self, caller: &Caller) -> Result<AgentCard, RpcError> {
        self.inner.extended_card(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{A2aServer, AgentExecutor, EventSink, RequestContext};
    use crate::types::{Message, TaskState};

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

    fn handler() -> RequestHandler {
        let mut card = AgentCard::new("Shout", "Says it louder", "http://127.0.0.1:9/");
        card.capabilities_mut().streaming = Some(true);
        A2aServer::new(Shout, card).handler()
    }

    /// The agent answered without a socket: a send, the task read back, a stream, and
    /// the spec's errors for a task that does not exist or that someone else started.
    #[tokio::test]
    async fn the_handler_answers_without_a_transport() {
        let handler = handler();
        let anyone = Caller::anonymous();
        let send = |text: &str| SendMessageRequest::new(Message::user_text(text));
        let sent = handler.send_message(send("hi"), &anyone).await.unwrap();
        let SendMessageResult::Task(task) = sent else {
            panic!("a task: {sent:?}");
        };
        assert_eq!(task.state(), TaskState::Completed);
        let get = |id: &str| GetTaskRequest::new(id);
        let read = handler.get_task(get(&task.id), &anyone).await.unwrap();
        assert_eq!(read.id, task.id);

        let mut events = handler
            .send_message_stream(send("again"), &anyone)
            .await
            .unwrap();
        let mut last = None;
        while let Some(event) = events.next().await {
            last = Some(event.unwrap());
        }
        match last {
            Some(StreamEvent::StatusUpdate(update)) => {
                assert_eq!(update.status().state(), TaskState::Completed)
            }
            other => panic!("the stream ends with the final status: {other:?}"),
        }

        let missing = handler
            .get_task(get("no-such-task"), &anyone)
            .await
            .unwrap_err();
        assert_eq!(missing.code, crate::ErrorCode::TASK_NOT_FOUND);
        let cancel = CancelTaskRequest::new(task.id.clone());
        let finished = handler.cancel_task(cancel, &anyone).await.unwrap_err();
        assert_eq!(finished.code, crate::ErrorCode::TASK_NOT_CANCELABLE);
    }
}

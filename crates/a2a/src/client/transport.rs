//! How a client's calls reach an agent: the [`Transport`] trait, and the two the wire
//! has — A2A 0.3 over JSON-RPC ([`V03`]), and A2A 1.0 over JSON-RPC, HTTP+JSON or gRPC
//! ([`V1`]: one request and one answer of the proto's messages per operation, the
//! binding only deciding how they travel). A server of this process is a third
//! (`in_process`), and an application may bring its own.

use futures::future::BoxFuture;

use super::list::{ListTasksQuery, TaskList};
use super::rest::{self, RequestLine};
use super::{A2aClient, ClientError, EventStream, Interface, v1c, v1t};
use crate::Method;
use crate::v0_3::{
    AgentCard, DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    MessageSendParams, SendMessageResult, Task, TaskId, TaskIdParams, TaskPushNotificationConfig,
    TaskQueryParams,
};

/// How a client's calls reach an agent. Each operation takes and gives the crate's
/// model, whatever goes on the wire. The client's interfaces are transports of the
/// crate's own; [`A2aClient::with_transport`] takes any other — a test double, a
/// binding this crate does not speak, a server of the same process. An operation a
/// transport does not offer answers [`ClientError::Config`] saying so.
pub trait Transport: Send + Sync {
    /// What calls go to, for messages and logs (a URL, or a name).
    fn endpoint(&self) -> &str;

    /// `message/send` (v1.0: `SendMessage`).
    fn send_message<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>>;

    /// `message/stream` (v1.0: `SendStreamingMessage`).
    fn send_message_stream<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>>;

    /// `tasks/get` (v1.0: `GetTask`).
    fn get_task<'a>(
        &'a self,
        params: &'a TaskQueryParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>>;

    /// `tasks/cancel` (v1.0: `CancelTask`).
    fn cancel_task<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>>;

    /// `tasks/resubscribe` (v1.0: `SubscribeToTask`).
    fn resubscribe<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>>;

    /// `ListTasks` (A2A 1.0 only).
    fn list_tasks<'a>(
        &'a self,
        query: &'a ListTasksQuery,
    ) -> BoxFuture<'a, Result<TaskList, ClientError>> {
        let _ = query;
        not_offered(self.endpoint(), "ListTasks")
    }

    /// `tasks/pushNotificationConfig/set` (v1.0: `CreateTaskPushNotificationConfig`).
    fn set_push_config<'a>(
        &'a self,
        params: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        let _ = params;
        not_offered(self.endpoint(), "CreateTaskPushNotificationConfig")
    }

    /// `tasks/pushNotificationConfig/get` (v1.0: `GetTaskPushNotificationConfig`).
    fn get_push_config<'a>(
        &'a self,
        params: &'a GetTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        let _ = params;
        not_offered(self.endpoint(), "GetTaskPushNotificationConfig")
    }

    /// `tasks/pushNotificationConfig/list` (v1.0: `ListTaskPushNotificationConfigs`).
    fn list_push_configs<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Vec<TaskPushNotificationConfig>, ClientError>> {
        let _ = params;
        not_offered(self.endpoint(), "ListTaskPushNotificationConfigs")
    }

    /// `tasks/pushNotificationConfig/delete` (v1.0: `DeleteTaskPushNotificationConfig`).
    fn delete_push_config<'a>(
        &'a self,
        params: &'a DeleteTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        let _ = params;
        not_offered(self.endpoint(), "DeleteTaskPushNotificationConfig")
    }

    /// `agent/getAuthenticatedExtendedCard` (v1.0: `GetExtendedAgentCard`).
    fn extended_card(&self) -> BoxFuture<'_, Result<AgentCard, ClientError>> {
        not_offered(self.endpoint(), "GetExtendedAgentCard")
    }
}

fn not_offered<'a, T: Send + 'a>(
    endpoint: &str,
    operation: &str,
) -> BoxFuture<'a, Result<T, ClientError>> {
    let e = ClientError::Config(format!("{endpoint} does not offer {operation}"));
    Box::pin(async move { Err(e) })
}

/// A2A 0.3: every operation a JSON-RPC method, its params and result the crate's model.
pub(super) struct V03<'a> {
    pub(super) client: &'a A2aClient,
    pub(super) at: &'a Interface,
}

impl Transport for V03<'_> {
    fn endpoint(&self) -> &str {
        &self.at.url
    }

    fn send_message<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::SendMessage.as_str(), Some(params)),
        )
    }

    fn send_message_stream<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        let method = Method::SendStreamingMessage.as_str();
        Box::pin(self.client.rpc_stream(self.at, method, params))
    }

    fn get_task<'a>(
        &'a self,
        params: &'a TaskQueryParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::GetTask.as_str(), Some(params)),
        )
    }

    fn cancel_task<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::CancelTask.as_str(), Some(params)),
        )
    }

    fn resubscribe<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(
            self.client
                .rpc_stream(self.at, Method::Resubscribe.as_str(), params),
        )
    }

    fn set_push_config<'a>(
        &'a self,
        params: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::SetPushConfig.as_str(), Some(params)),
        )
    }

    fn get_push_config<'a>(
        &'a self,
        params: &'a GetTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::GetPushConfig.as_str(), Some(params)),
        )
    }

    fn list_push_configs<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Vec<TaskPushNotificationConfig>, ClientError>> {
        Box::pin(
            self.client
                .rpc(self.at, Method::ListPushConfig.as_str(), Some(params)),
        )
    }

    fn delete_push_config<'a>(
        &'a self,
        params: &'a DeleteTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            let method = Method::DeletePushConfig.as_str();
            let _: serde_json::Value = self.client.rpc(self.at, method, Some(params)).await?;
            Ok(())
        })
    }

    fn extended_card(&self) -> BoxFuture<'_, Result<AgentCard, ClientError>> {
        let method = Method::GetAuthenticatedExtendedCard.as_str();
        Box::pin(self.client.rpc::<(), _>(self.at, method, None))
    }
}

/// A2A 1.0 over `at`'s binding: each operation one of the proto's requests and one
/// answer (or a stream of `StreamResponse`s), converted from and into the crate's
/// model; the binding decides only how they travel (`A2aClient::v1` and `v1_stream`:
/// a JSON-RPC method, an HTTP+JSON request line, a gRPC call).
pub(super) struct V1<'a> {
    pub(super) client: &'a A2aClient,
    pub(super) at: &'a Interface,
}

impl V1<'_> {
    /// What an agent answered that the model cannot hold.
    fn unreadable(&self, method: Method, e: crate::v1::ConvertError) -> ClientError {
        ClientError::protocol(
            &self.at.url,
            format!("invalid {} result at {e}", method.v1_name()),
        )
    }

    /// A v1.0 push config as the model's.
    fn push_config_in(
        &self,
        c: v1t::TaskPushNotificationConfig,
        method: Method,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let task_id = TaskId::new(c.task_id.clone());
        let config = v1c::push_config_in(c, "result").map_err(|e| self.unreadable(method, e))?;
        Ok(TaskPushNotificationConfig {
            task_id,
            push_notification_config: config,
        })
    }

    fn send_request(&self, params: &MessageSendParams) -> v1t::SendMessageRequest {
        let mut request = v1c::send_request(params);
        request.tenant = self.at.tenant.clone();
        request
    }
}

impl Transport for V1<'_> {
    fn endpoint(&self) -> &str {
        &self.at.url
    }

    fn send_message<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(async move {
            let method = Method::SendMessage;
            let request = self.send_request(params);
            let line = RequestLine::post("message:send");
            let answer: v1t::SendMessageResponse = self
                .client
                .v1(self.at, method, &request, line, true)
                .await?;
            v1c::send_response_in(answer).map_err(|e| self.unreadable(method, e))
        })
    }

    fn send_message_stream<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let request = self.send_request(params);
            let line = RequestLine::post("message:stream");
            let method = Method::SendStreamingMessage;
            (self.client)
                .v1_stream(self.at, method, &request, line, true)
                .await
        })
    }

    fn get_task<'a>(
        &'a self,
        params: &'a TaskQueryParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let method = Method::GetTask;
            let history_length = params.history_length.map(|n| n.min(i32::MAX as u32) as i32);
            let request = v1t::GetTaskRequest {
                tenant: self.at.tenant.clone(),
                id: params.id.to_string(),
                history_length,
            };
            let line = RequestLine::get(RequestLine::task(params.id.as_str(), ""))
                .query("historyLength", history_length);
            let task: v1t::Task = self
                .client
                .v1(self.at, method, &request, line, false)
                .await?;
            v1c::task_in(task, "result").map_err(|e| self.unreadable(method, e))
        })
    }

    fn cancel_task<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let method = Method::CancelTask;
            let request = v1t::CancelTaskRequest {
                tenant: self.at.tenant.clone(),
                id: params.id.to_string(),
                metadata: params.metadata.clone(),
            };
            let line = RequestLine::post(RequestLine::task(params.id.as_str(), ":cancel"));
            let task: v1t::Task = self
                .client
                .v1(self.at, method, &request, line, true)
                .await?;
            v1c::task_in(task, "result").map_err(|e| self.unreadable(method, e))
        })
    }

    fn resubscribe<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let request = v1t::SubscribeToTaskRequest {
                tenant: self.at.tenant.clone(),
                id: params.id.to_string(),
            };
            // The SDKs POST it (the proto says GET; servers take both), with no body.
            let line = RequestLine::post(RequestLine::task(params.id.as_str(), ":subscribe"));
            (self.client)
                .v1_stream(self.at, Method::Resubscribe, &request, line, false)
                .await
        })
    }

    fn list_tasks<'a>(
        &'a self,
        query: &'a ListTasksQuery,
    ) -> BoxFuture<'a, Result<TaskList, ClientError>> {
        Box::pin(async move {
            let method = Method::ListTasks;
            let request = query.request(&self.at.tenant)?;
            let line = query.line(&request);
            let page: v1t::ListTasksResponse = self
                .client
                .v1(self.at, method, &request, line, false)
                .await?;
            let tasks = page
                .tasks
                .into_iter()
                .enumerate()
                .map(|(i, t)| v1c::task_in(t, &format!("result.tasks[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.unreadable(method, e))?;
            Ok(TaskList {
                tasks,
                next_page_token: (!page.next_page_token.is_empty()).then_some(page.next_page_token),
                total_size: page.total_size.max(0) as u64,
            })
        })
    }

    fn set_push_config<'a>(
        &'a self,
        params: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let method = Method::SetPushConfig;
            let mut request = v1c::push_config(params);
            request.tenant = self.at.tenant.clone();
            let line = RequestLine::post(RequestLine::task(
                params.task_id.as_str(),
                "/pushNotificationConfigs",
            ));
            let made: v1t::TaskPushNotificationConfig = self
                .client
                .v1(self.at, method, &request, line, true)
                .await?;
            self.push_config_in(made, method)
        })
    }

    fn get_push_config<'a>(
        &'a self,
        params: &'a GetTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let method = Method::GetPushConfig;
            // A config id left out means the task's default one, whose id is the task's.
            let request = v1t::GetTaskPushNotificationConfigRequest {
                tenant: self.at.tenant.clone(),
                task_id: params.id.to_string(),
                id: params
                    .push_notification_config_id
                    .clone()
                    .unwrap_or_else(|| params.id.to_string()),
            };
            let path = format!("/pushNotificationConfigs/{}", rest::segment(&request.id));
            let line = RequestLine::get(RequestLine::task(params.id.as_str(), &path));
            let found: v1t::TaskPushNotificationConfig = self
                .client
                .v1(self.at, method, &request, line, false)
                .await?;
            self.push_config_in(found, method)
        })
    }

    fn list_push_configs<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Vec<TaskPushNotificationConfig>, ClientError>> {
        Box::pin(async move {
            let method = Method::ListPushConfig;
            let request = v1t::ListTaskPushNotificationConfigsRequest {
                tenant: self.at.tenant.clone(),
                task_id: params.id.to_string(),
                ..Default::default()
            };
            let line = RequestLine::get(RequestLine::task(
                params.id.as_str(),
                "/pushNotificationConfigs",
            ));
            let list: v1t::ListTaskPushNotificationConfigsResponse = self
                .client
                .v1(self.at, method, &request, line, false)
                .await?;
            list.configs
                .into_iter()
                .map(|c| self.push_config_in(c, method))
                .collect()
        })
    }

    fn delete_push_config<'a>(
        &'a self,
        params: &'a DeleteTaskPushNotificationConfigParams,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            let request = v1t::DeleteTaskPushNotificationConfigRequest {
                tenant: self.at.tenant.clone(),
                task_id: params.id.to_string(),
                id: params.push_notification_config_id.clone(),
            };
            let path = format!("/pushNotificationConfigs/{}", rest::segment(&request.id));
            let line = RequestLine::delete(RequestLine::task(params.id.as_str(), &path));
            let method = Method::DeletePushConfig;
            let _: crate::proto::json::Empty = self
                .client
                .v1(self.at, method, &request, line, false)
                .await?;
            Ok(())
        })
    }

    fn extended_card(&self) -> BoxFuture<'_, Result<AgentCard, ClientError>> {
        Box::pin(self.client.v1_extended_card(self.at))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::v0_3::{ContextId, Message, TaskState, TaskStatus};

    /// An application's own transport: every send makes a completed task of its text.
    struct Canned;

    impl Transport for Canned {
        fn endpoint(&self) -> &str {
            "canned:"
        }

        fn send_message<'a>(
            &'a self,
            params: &'a MessageSendParams,
        ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
            let mut task = Task::new(
                TaskId::new("t1"),
                ContextId::new("c1"),
                TaskStatus::new(TaskState::Completed),
            );
            task.history.push(params.message.clone());
            Box::pin(async move { Ok(SendMessageResult::Task(task)) })
        }

        fn send_message_stream<'a>(
            &'a self,
            _: &'a MessageSendParams,
        ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
            Box::pin(async { Ok(Box::pin(futures::stream::empty()) as EventStream) })
        }

        fn get_task<'a>(
            &'a self,
            params: &'a TaskQueryParams,
        ) -> BoxFuture<'a, Result<Task, ClientError>> {
            let task = Task::new(
                params.id.clone(),
                ContextId::new("c1"),
                TaskStatus::new(TaskState::Working),
            );
            Box::pin(async move { Ok(task) })
        }

        fn cancel_task<'a>(
            &'a self,
            _: &'a TaskIdParams,
        ) -> BoxFuture<'a, Result<Task, ClientError>> {
            not_offered(self.endpoint(), "CancelTask")
        }

        fn resubscribe<'a>(
            &'a self,
            _: &'a TaskIdParams,
        ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
            not_offered(self.endpoint(), "SubscribeToTask")
        }
    }

    #[tokio::test]
    async fn a_client_calls_through_an_applications_own_transport() {
        let client = A2aClient::with_transport(Arc::new(Canned));
        assert_eq!(client.endpoint(), "canned:");
        let sent = client
            .send_message(&MessageSendParams::new(Message::user_text("hi")))
            .await
            .unwrap();
        let SendMessageResult::Task(task) = sent else {
            panic!("a task")
        };
        assert_eq!(task.history[0].text(), "hi");
        let got = client
            .get_task(&TaskQueryParams::new(TaskId::new("t7")))
            .await
            .unwrap();
        assert_eq!(got.id.as_str(), "t7");
        // What it does not offer is said, not attempted elsewhere.
        let e = client
            .list_tasks(&ListTasksQuery::default())
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid client configuration: canned: does not offer ListTasks"
        );
    }
}

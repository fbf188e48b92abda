//! How a client's calls reach an agent: the [`Transport`] trait, and the two the wire
//! has — A2A 0.3 over JSON-RPC ([`V03`]), and A2A 1.0 over JSON-RPC, HTTP+JSON or gRPC
//! ([`V1`]: one request and one answer of the proto's messages per operation, the
//! binding only deciding how they travel). A server of this process is a third
//! (`in_process`), and an application may bring its own.

use std::borrow::Cow;

use futures::future::BoxFuture;

use super::rest::{self, RequestLine};
use super::{A2aClient, ClientError, EventStream, Interface, check};
use crate::Method;
use crate::card::AgentCard;
use crate::error::ConvertError;
use crate::types::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, SendMessageResult, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig,
};
#[cfg(feature = "v0_3")]
use crate::v0_3::{self as w, convert};

/// How a client's calls reach an agent. Each operation takes one of the proto's
/// requests and gives its answer ([`crate::types`]), whatever goes on the wire. The
/// client's interfaces are transports of the crate's own; [`A2aClient::with_transport`]
/// takes any other — a test double, a binding this crate does not speak, a server of
/// the same process. An operation a transport does not offer answers
/// [`ClientError::Config`] saying so.
pub trait Transport: Send + Sync {
    /// What calls go to, for messages and logs (a URL, or a name).
    fn endpoint(&self) -> &str;

    /// `SendMessage` (v0.3: `message/send`).
    fn send_message<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>>;

    /// `SendStreamingMessage` (v0.3: `message/stream`).
    fn send_message_stream<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>>;

    /// `GetTask` (v0.3: `tasks/get`).
    fn get_task<'a>(
        &'a self,
        request: &'a GetTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>>;

    /// `CancelTask` (v0.3: `tasks/cancel`).
    fn cancel_task<'a>(
        &'a self,
        request: &'a CancelTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>>;

    /// `SubscribeToTask` (v0.3: `tasks/resubscribe`).
    fn subscribe<'a>(
        &'a self,
        request: &'a SubscribeToTaskRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>>;

    /// `ListTasks` (A2A 1.0 only).
    fn list_tasks<'a>(
        &'a self,
        request: &'a ListTasksRequest,
    ) -> BoxFuture<'a, Result<ListTasksResponse, ClientError>> {
        let _ = request;
        not_offered(self.endpoint(), "ListTasks")
    }

    /// `CreateTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/set`).
    fn set_push_config<'a>(
        &'a self,
        config: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        let _ = config;
        not_offered(self.endpoint(), "CreateTaskPushNotificationConfig")
    }

    /// `GetTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/get`).
    fn get_push_config<'a>(
        &'a self,
        request: &'a GetTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        let _ = request;
        not_offered(self.endpoint(), "GetTaskPushNotificationConfig")
    }

    /// `ListTaskPushNotificationConfigs` (v0.3: `tasks/pushNotificationConfig/list`).
    fn list_push_configs<'a>(
        &'a self,
        request: &'a ListTaskPushNotificationConfigsRequest,
    ) -> BoxFuture<'a, Result<ListTaskPushNotificationConfigsResponse, ClientError>> {
        let _ = request;
        not_offered(self.endpoint(), "ListTaskPushNotificationConfigs")
    }

    /// `DeleteTaskPushNotificationConfig` (v0.3: `tasks/pushNotificationConfig/delete`).
    fn delete_push_config<'a>(
        &'a self,
        request: &'a DeleteTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        let _ = request;
        not_offered(self.endpoint(), "DeleteTaskPushNotificationConfig")
    }

    /// `GetExtendedAgentCard` (v0.3: `agent/getAuthenticatedExtendedCard`).
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

/// What an agent answered that the model cannot hold, or that breaks the protocol.
fn unreadable(at: &Interface, method: &str, e: ConvertError) -> ClientError {
    ClientError::protocol(&at.url, format!("invalid {method} result at {e}"))
}

/// A2A 0.3: every operation a JSON-RPC method, its params and result v0.3's shapes,
/// written from the model's requests and read into its answers ([`convert`]).
#[cfg(feature = "v0_3")]
pub(super) struct V03<'a> {
    pub(super) client: &'a A2aClient,
    pub(super) at: &'a Interface,
}

#[cfg(feature = "v0_3")]
impl V03<'_> {
    /// Calls `method` with `params` and reads its result into the model with `read`.
    async fn call<P: serde::Serialize, R: serde::de::DeserializeOwned, T>(
        &self,
        method: Method,
        params: &P,
        read: impl FnOnce(R) -> Result<T, ConvertError>,
    ) -> Result<T, ClientError> {
        let name = method.as_str();
        let answer: R = self.client.rpc(self.at, name, Some(params)).await?;
        read(answer).map_err(|e| unreadable(self.at, name, e))
    }
}

#[cfg(feature = "v0_3")]
impl Transport for V03<'_> {
    fn endpoint(&self) -> &str {
        &self.at.url
    }

    fn send_message<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(async move {
            let params = convert::send_request(request);
            self.call(Method::SendMessage, &params, convert::send_result_in)
                .await
        })
    }

    fn send_message_stream<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let method = Method::SendStreamingMessage.as_str();
            let params = convert::send_request(request);
            self.client.rpc_stream(self.at, method, &params).await
        })
    }

    fn get_task<'a>(
        &'a self,
        request: &'a GetTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let params = convert::get_request(request);
            let read = |t| convert::task_in(t, "result");
            self.call(Method::GetTask, &params, read).await
        })
    }

    fn cancel_task<'a>(
        &'a self,
        request: &'a CancelTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let params = convert::cancel_request(request);
            let read = |t| convert::task_in(t, "result");
            self.call(Method::CancelTask, &params, read).await
        })
    }

    fn subscribe<'a>(
        &'a self,
        request: &'a SubscribeToTaskRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let method = Method::Resubscribe.as_str();
            let params = convert::task_id_params(&request.id);
            self.client.rpc_stream(self.at, method, &params).await
        })
    }

    fn set_push_config<'a>(
        &'a self,
        config: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let params = convert::push_config(config);
            self.call(Method::SetPushConfig, &params, push_config_in)
                .await
        })
    }

    fn get_push_config<'a>(
        &'a self,
        request: &'a GetTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let params = convert::get_push_request(request);
            self.call(Method::GetPushConfig, &params, push_config_in)
                .await
        })
    }

    fn list_push_configs<'a>(
        &'a self,
        request: &'a ListTaskPushNotificationConfigsRequest,
    ) -> BoxFuture<'a, Result<ListTaskPushNotificationConfigsResponse, ClientError>> {
        Box::pin(async move {
            let params = convert::task_id_params(&request.task_id);
            let read = |list: Vec<w::TaskPushNotificationConfig>| {
                Ok(ListTaskPushNotificationConfigsResponse {
                    configs: list
                        .into_iter()
                        .map(push_config_in)
                        .collect::<Result<_, _>>()?,
                    next_page_token: String::new(),
                })
            };
            self.call(Method::ListPushConfig, &params, read).await
        })
    }

    fn delete_push_config<'a>(
        &'a self,
        request: &'a DeleteTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            let params = convert::delete_push_request(request);
            let read = |_: serde_json::Value| Ok(());
            self.call(Method::DeletePushConfig, &params, read).await
        })
    }

    fn extended_card(&self) -> BoxFuture<'_, Result<AgentCard, ClientError>> {
        let method = Method::GetAuthenticatedExtendedCard.as_str();
        Box::pin(async move {
            let card: serde_json::Value = self.client.rpc::<(), _>(self.at, method, None).await?;
            AgentCard::from_json(card).map_err(|e| {
                ClientError::protocol(&self.at.url, format!("its {method} result: {e}"))
            })
        })
    }
}

/// A v0.3 agent's push config in the model, checked as a v1.0 one is.
#[cfg(feature = "v0_3")]
fn push_config_in(
    c: w::TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, ConvertError> {
    let config = convert::push_config_in(c.push_notification_config, c.task_id.as_str());
    check::push_config(&config, "result")?;
    Ok(config)
}

/// A2A 1.0 over `at`'s binding: each operation one of the proto's requests and its
/// answer (or a stream of `StreamResponse`s), checked ([`check`]) and handed on as
/// they came; the binding decides only how they travel (`A2aClient::v1` and
/// `v1_stream`: a JSON-RPC method, an HTTP+JSON request line, a gRPC call).
pub(super) struct V1<'a> {
    pub(super) client: &'a A2aClient,
    pub(super) at: &'a Interface,
}

/// A request of a tenant's: the interface's, unless it names its own.
trait Tenanted: Clone {
    fn tenant(&self) -> &str;
    fn tenant_mut(&mut self) -> &mut String;
}

macro_rules! tenanted {
    ($($t:ty),*) => {$(
        impl Tenanted for $t {
            fn tenant(&self) -> &str {
                &self.tenant
            }
            fn tenant_mut(&mut self) -> &mut String {
                &mut self.tenant
            }
        }
    )*};
}

tenanted!(
    SendMessageRequest,
    GetTaskRequest,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    ListTasksRequest,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    DeleteTaskPushNotificationConfigRequest
);

impl V1<'_> {
    /// `request` in the interface's tenant, unless it names its own (copied only then).
    fn in_tenant<'r, R: Tenanted>(&self, request: &'r R) -> Cow<'r, R> {
        let mut request = Cow::Borrowed(request);
        if !self.at.tenant.is_empty() && request.tenant().is_empty() {
            *request.to_mut().tenant_mut() = self.at.tenant.clone();
        }
        request
    }

    fn push_config_in(
        &self,
        c: TaskPushNotificationConfig,
        method: Method,
        at: &str,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        check::push_config(&c, at).map_err(|e| unreadable(self.at, method.v1_name(), e))?;
        Ok(c)
    }

    fn task_in(&self, t: Task, method: Method) -> Result<Task, ClientError> {
        check::task(&t, "result").map_err(|e| unreadable(self.at, method.v1_name(), e))?;
        Ok(t)
    }
}

impl Transport for V1<'_> {
    fn endpoint(&self) -> &str {
        &self.at.url
    }

    fn send_message<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(async move {
            let method = Method::SendMessage;
            let request = self.in_tenant(request);
            let line = RequestLine::post("message:send");
            let answer: SendMessageResponse = (self.client)
                .v1(self.at, method, &*request, line, true)
                .await?;
            check::send_response(answer).map_err(|e| unreadable(self.at, method.v1_name(), e))
        })
    }

    fn send_message_stream<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let request = self.in_tenant(request);
            let line = RequestLine::post("message:stream");
            let method = Method::SendStreamingMessage;
            (self.client)
                .v1_stream(self.at, method, &*request, line, true)
                .await
        })
    }

    fn get_task<'a>(
        &'a self,
        request: &'a GetTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let method = Method::GetTask;
            let request = self.in_tenant(request);
            let line = RequestLine::get(RequestLine::task(&request.id, ""))
                .query("historyLength", request.history_length);
            let task: Task = (self.client)
                .v1(self.at, method, &*request, line, false)
                .await?;
            self.task_in(task, method)
        })
    }

    fn cancel_task<'a>(
        &'a self,
        request: &'a CancelTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let method = Method::CancelTask;
            let request = self.in_tenant(request);
            let line = RequestLine::post(RequestLine::task(&request.id, ":cancel"));
            let task: Task = (self.client)
                .v1(self.at, method, &*request, line, true)
                .await?;
            self.task_in(task, method)
        })
    }

    fn subscribe<'a>(
        &'a self,
        request: &'a SubscribeToTaskRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let request = self.in_tenant(request);
            // The SDKs POST it (the proto says GET; servers take both), with no body.
            let line = RequestLine::post(RequestLine::task(&request.id, ":subscribe"));
            (self.client)
                .v1_stream(self.at, Method::Resubscribe, &*request, line, false)
                .await
        })
    }

    fn list_tasks<'a>(
        &'a self,
        request: &'a ListTasksRequest,
    ) -> BoxFuture<'a, Result<ListTasksResponse, ClientError>> {
        Box::pin(async move {
            let method = Method::ListTasks;
            let request = self.in_tenant(request);
            let line = super::list::line(&request);
            let page: ListTasksResponse = (self.client)
                .v1(self.at, method, &*request, line, false)
                .await?;
            for (i, t) in page.tasks.iter().enumerate() {
                check::task(t, &format!("result.tasks[{i}]"))
                    .map_err(|e| unreadable(self.at, method.v1_name(), e))?;
            }
            Ok(page)
        })
    }

    fn set_push_config<'a>(
        &'a self,
        config: &'a TaskPushNotificationConfig,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let method = Method::SetPushConfig;
            let request = self.in_tenant(config);
            let line = RequestLine::post(RequestLine::task(
                &request.task_id,
                "/pushNotificationConfigs",
            ));
            let made: TaskPushNotificationConfig = (self.client)
                .v1(self.at, method, &*request, line, true)
                .await?;
            self.push_config_in(made, method, "result")
        })
    }

    fn get_push_config<'a>(
        &'a self,
        request: &'a GetTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<TaskPushNotificationConfig, ClientError>> {
        Box::pin(async move {
            let method = Method::GetPushConfig;
            let mut request = self.in_tenant(request);
            // A config id left out means the task's default one, whose id is the task's.
            if request.id.is_empty() {
                let task_id = request.task_id.clone();
                request.to_mut().id = task_id;
            }
            let path = format!("/pushNotificationConfigs/{}", rest::segment(&request.id));
            let line = RequestLine::get(RequestLine::task(&request.task_id, &path));
            let found: TaskPushNotificationConfig = (self.client)
                .v1(self.at, method, &*request, line, false)
                .await?;
            self.push_config_in(found, method, "result")
        })
    }

    fn list_push_configs<'a>(
        &'a self,
        request: &'a ListTaskPushNotificationConfigsRequest,
    ) -> BoxFuture<'a, Result<ListTaskPushNotificationConfigsResponse, ClientError>> {
        Box::pin(async move {
            let method = Method::ListPushConfig;
            let request = self.in_tenant(request);
            let line = RequestLine::get(RequestLine::task(
                &request.task_id,
                "/pushNotificationConfigs",
            ))
            .query(
                "pageSize",
                (request.page_size > 0).then_some(request.page_size),
            )
            .query(
                "pageToken",
                (!request.page_token.is_empty()).then(|| request.page_token.clone()),
            );
            let list: ListTaskPushNotificationConfigsResponse = (self.client)
                .v1(self.at, method, &*request, line, false)
                .await?;
            for (i, c) in list.configs.iter().enumerate() {
                check::push_config(c, &format!("result.configs[{i}]"))
                    .map_err(|e| unreadable(self.at, method.v1_name(), e))?;
            }
            Ok(list)
        })
    }

    fn delete_push_config<'a>(
        &'a self,
        request: &'a DeleteTaskPushNotificationConfigRequest,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move {
            let request = self.in_tenant(request);
            let path = format!("/pushNotificationConfigs/{}", rest::segment(&request.id));
            let line = RequestLine::delete(RequestLine::task(&request.task_id, &path));
            let method = Method::DeletePushConfig;
            let _: crate::proto::json::Empty = (self.client)
                .v1(self.at, method, &*request, line, false)
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
    use crate::types::{Message, TaskState, TaskStatus};

    /// An application's own transport: every send makes a completed task of its text.
    struct Canned;

    impl Transport for Canned {
        fn endpoint(&self) -> &str {
            "canned:"
        }

        fn send_message<'a>(
            &'a self,
            request: &'a SendMessageRequest,
        ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
            let mut task = Task::new("t1", "c1", TaskStatus::new(TaskState::Completed));
            task.history.extend(request.message.clone());
            Box::pin(async move { Ok(SendMessageResult::Task(task)) })
        }

        fn send_message_stream<'a>(
            &'a self,
            _: &'a SendMessageRequest,
        ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
            Box::pin(async { Ok(Box::pin(futures::stream::empty()) as EventStream) })
        }

        fn get_task<'a>(
            &'a self,
            request: &'a GetTaskRequest,
        ) -> BoxFuture<'a, Result<Task, ClientError>> {
            let task = Task::new(&*request.id, "c1", TaskStatus::new(TaskState::Working));
            Box::pin(async move { Ok(task) })
        }

        fn cancel_task<'a>(
            &'a self,
            _: &'a CancelTaskRequest,
        ) -> BoxFuture<'a, Result<Task, ClientError>> {
            not_offered(self.endpoint(), "CancelTask")
        }

        fn subscribe<'a>(
            &'a self,
            _: &'a SubscribeToTaskRequest,
        ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
            not_offered(self.endpoint(), "SubscribeToTask")
        }
    }

    #[tokio::test]
    async fn a_client_calls_through_an_applications_own_transport() {
        let client = A2aClient::with_transport(Arc::new(Canned));
        assert_eq!(client.endpoint(), "canned:");
        let sent = client
            .send_message(&SendMessageRequest::new(Message::user_text("hi")))
            .await
            .unwrap();
        let SendMessageResult::Task(task) = sent else {
            panic!("a task")
        };
        assert_eq!(task.history[0].text(), "hi");
        let got = client.get_task(&GetTaskRequest::new("t7")).await.unwrap();
        assert_eq!(got.id, "t7");
        // What it does not offer is said, not attempted elsewhere.
        let e = client
            .list_tasks(&ListTasksRequest::default())
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid client configuration: canned: does not offer ListTasks"
        );
    }
}

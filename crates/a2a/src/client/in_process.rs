//! A client of a server in the same process: its calls go to the server's
//! transport-free [`RequestHandler`] as a given caller — no socket, no encoding, the
//! server's own rules on who may do what. How an application calls an agent it also
//! serves (a workflow of an orchestrator, as a step of another), with the same client
//! code it uses for agents elsewhere.

use futures::StreamExt;
use futures::future::BoxFuture;

use super::{ClientError, EventStream, Transport};
use crate::server::{Caller, RequestHandler};
use crate::types::{
    CancelTaskRequest, GetTaskRequest, SendMessageRequest, SendMessageResult,
    SubscribeToTaskRequest, Task, TaskId,
};

/// Where an in-process client's calls go, and as whom.
#[derive(Clone)]
pub(super) struct InProcess {
    pub(super) handler: RequestHandler,
    pub(super) caller: Caller,
}

fn answered(e: crate::RpcError) -> ClientError {
    ClientError::Rpc(e)
}

impl Transport for InProcess {
    fn endpoint(&self) -> &str {
        "in-process:"
    }

    fn send_message<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(async move {
            (self.handler)
                .send_message(request.clone(), &self.caller)
                .await
                .map_err(answered)
        })
    }

    fn send_message_stream<'a>(
        &'a self,
        request: &'a SendMessageRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let events = (self.handler)
                .send_message_stream(request.clone(), &self.caller)
                .await
                .map_err(answered)?;
            Ok(Box::pin(events.map(|e| e.map_err(answered))) as EventStream)
        })
    }

    fn subscribe<'a>(
        &'a self,
        request: &'a SubscribeToTaskRequest,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let events = (self.handler)
                .subscribe(TaskId::new(&request.id), &self.caller)
                .await
                .map_err(answered)?;
            Ok(Box::pin(events.map(|e| e.map_err(answered))) as EventStream)
        })
    }

    fn get_task<'a>(
        &'a self,
        request: &'a GetTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            (self.handler.get_task(request.clone(), &self.caller).await).map_err(answered)
        })
    }

    fn cancel_task<'a>(
        &'a self,
        request: &'a CancelTaskRequest,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            (self
                .handler
                .cancel_task(request.clone(), &self.caller)
                .await)
                .map_err(answered)
        })
    }
}

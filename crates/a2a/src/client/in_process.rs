//! A client of a server in the same process: its calls go to the server's
//! transport-free [`RequestHandler`] as a given caller — no socket, no encoding, the
//! server's own rules on who may do what. How an application calls an agent it also
//! serves (a workflow of an orchestrator, as a step of another), with the same client
//! code it uses for agents elsewhere.

use futures::StreamExt;

use super::{ClientError, EventStream};
use crate::server::{Caller, RequestHandler};
use crate::types::{MessageSendParams, SendMessageResult, Task, TaskIdParams, TaskQueryParams};

/// Where an in-process client's calls go, and as whom.
#[derive(Clone)]
pub(super) struct InProcess {
    pub(super) handler: RequestHandler,
    pub(super) caller: Caller,
}

fn answered(e: crate::RpcError) -> ClientError {
    ClientError::Rpc(e)
}

impl InProcess {
    pub(super) async fn send_message(
        &self,
        params: &MessageSendParams,
    ) -> Result<SendMessageResult, ClientError> {
        (self
            .handler
            .send_message(params.clone(), &self.caller)
            .await)
            .map_err(answered)
    }

    pub(super) async fn send_message_stream(
        &self,
        params: &MessageSendParams,
    ) -> Result<EventStream, ClientError> {
        let events = (self.handler)
            .send_message_stream(params.clone(), &self.caller)
            .await
            .map_err(answered)?;
        Ok(Box::pin(events.map(|e| e.map_err(answered))))
    }

    pub(super) async fn resubscribe(
        &self,
        params: &TaskIdParams,
    ) -> Result<EventStream, ClientError> {
        let events = (self.handler)
            .subscribe(params.id.clone(), &self.caller)
            .await
            .map_err(answered)?;
        Ok(Box::pin(events.map(|e| e.map_err(answered))))
    }

    pub(super) async fn get_task(&self, params: &TaskQueryParams) -> Result<Task, ClientError> {
        (self.handler.get_task(params.clone(), &self.caller).await).map_err(answered)
    }

    pub(super) async fn cancel_task(&self, params: &TaskIdParams) -> Result<Task, ClientError> {
        (self.handler.cancel_task(params.clone(), &self.caller).await).map_err(answered)
    }
}

//! A client of a server in the same process: its calls go to the server's
//! transport-free [`RequestHandler`] as a given caller — no socket, no encoding, the
//! server's own rules on who may do what. How an application calls an agent it also
//! serves (a workflow of an orchestrator, as a step of another), with the same client
//! code it uses for agents elsewhere.

use futures::StreamExt;
use futures::future::BoxFuture;

use super::{ClientError, EventStream, Transport};
use crate::server::{Caller, RequestHandler};
use crate::v0_3::convert;
use crate::v0_3::{MessageSendParams, SendMessageResult, Task, TaskIdParams, TaskQueryParams};

/// Where an in-process client's calls go, and as whom.
#[derive(Clone)]
pub(super) struct InProcess {
    pub(super) handler: RequestHandler,
    pub(super) caller: Caller,
}

fn answered(e: crate::RpcError) -> ClientError {
    ClientError::Rpc(e)
}

/// The client's (v0.3-shaped) params as the handler's request.
fn request(params: &MessageSendParams) -> Result<crate::types::SendMessageRequest, ClientError> {
    convert::send_request_in(params.clone()).map_err(|e| answered(e.into()))
}

impl Transport for InProcess {
    fn endpoint(&self) -> &str {
        "in-process:"
    }

    fn send_message<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<SendMessageResult, ClientError>> {
        Box::pin(async move {
            let result = (self.handler)
                .send_message(request(params)?, &self.caller)
                .await
                .map_err(answered)?;
            Ok(convert::send_result(&result))
        })
    }

    fn send_message_stream<'a>(
        &'a self,
        params: &'a MessageSendParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let events = (self.handler)
                .send_message_stream(request(params)?, &self.caller)
                .await
                .map_err(answered)?;
            let events = events.map(|e| e.map(|e| convert::stream_event(&e)).map_err(answered));
            Ok(Box::pin(events) as EventStream)
        })
    }

    fn resubscribe<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<EventStream, ClientError>> {
        Box::pin(async move {
            let events = (self.handler)
                .subscribe(params.id.clone(), &self.caller)
                .await
                .map_err(answered)?;
            let events = events.map(|e| e.map(|e| convert::stream_event(&e)).map_err(answered));
            Ok(Box::pin(events) as EventStream)
        })
    }

    fn get_task<'a>(
        &'a self,
        params: &'a TaskQueryParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let request = convert::get_request_in(params.clone());
            let task = (self.handler.get_task(request, &self.caller).await).map_err(answered)?;
            Ok(convert::task(&task))
        })
    }

    fn cancel_task<'a>(
        &'a self,
        params: &'a TaskIdParams,
    ) -> BoxFuture<'a, Result<Task, ClientError>> {
        Box::pin(async move {
            let request = convert::cancel_request_in(params.clone());
            let task = (self.handler.cancel_task(request, &self.caller).await).map_err(answered)?;
            Ok(convert::task(&task))
        })
    }
}

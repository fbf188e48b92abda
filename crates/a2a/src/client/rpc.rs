//! The JSON-RPC binding: one POST per call to the interface's URL, the method in the
//! body, the answer's envelope and id checked; streams as SSE of JSON-RPC responses.

use bytes::Bytes;
use http::{Method, Request};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::events::{Framing, decode_response};
use super::http::{Statuses, check_status, decode_result, is_json, read_bounded};
use super::{A2aClient, ClientError, EventStream, Interface};
use crate::jsonrpc::JsonRpcVersion;
use crate::jsonrpc::{OutgoingRequest, RequestId};

impl A2aClient {
    fn rpc_request<P: Serialize>(
        &self,
        at: &Interface,
        method: &str,
        params: Option<&P>,
        accept: &'static str,
    ) -> Result<(RequestId, Request<Bytes>), ClientError> {
        let id = RequestId::from(
            self.next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        );
        let body = OutgoingRequest {
            jsonrpc: JsonRpcVersion,
            id: id.clone(),
            method,
            params,
        };
        let body = serde_json::to_vec(&body).map_err(|e| {
            ClientError::Config(format!("the {method} request cannot be written: {e}"))
        })?;
        let req = self.http_request(Method::POST, &at.url, at, accept, Some(body))?;
        Ok((id, req))
    }

    /// Calls `method` at `at` and decodes its result.
    pub(super) async fn rpc<P: Serialize, R: DeserializeOwned>(
        &self,
        at: &Interface,
        method: &str,
        params: Option<&P>,
    ) -> Result<R, ClientError> {
        let (id, req) = self.rpc_request(at, method, params, "application/json")?;
        let url = &at.url;
        let bytes = self.fetch(url, req, Statuses::Plain).await?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::protocol(url, format!("the response is not JSON: {e}")))?;
        let result = decode_response(url, &id, value)?;
        decode_result(url, method, result)
    }

    /// Opens a stream of `method` at `at`.
    pub(super) async fn rpc_stream<P: Serialize>(
        &self,
        at: &Interface,
        method: &str,
        params: &P,
    ) -> Result<EventStream, ClientError> {
        let (id, req) = self.rpc_request(at, method, Some(params), "text/event-stream")?;
        let url = at.url.clone();
        let resp = self.send(&url, req).await?;
        let resp = check_status(&url, resp, Statuses::Plain).await?;
        if is_json(&resp) {
            // Some servers answer a failed stream request with a plain JSON error.
            let max = self.config.max_event_bytes;
            let bytes = self
                .bounded(&url, read_bounded(&url, resp, max, "answer"))
                .await?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                ClientError::protocol(&url, format!("the response is not JSON: {e}"))
            })?;
            decode_response(&url, &id, value)?;
            return Err(ClientError::protocol(
                &url,
                format!("{method} must answer with an SSE stream, got a JSON result"),
            ));
        }
        self.events(url, Framing::JsonRpc(id, at.protocol), resp, method)
    }
}

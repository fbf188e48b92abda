//! The JSON-RPC binding: one POST per call to the interface's URL, the method in the
//! body, the answer's envelope and id checked; streams as SSE of JSON-RPC responses.

use reqwest::header;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::events::{Framing, sse_events};
use super::{A2aClient, ClientError, EventStream, Interface};
use crate::Version;
use crate::jsonrpc::{OutgoingRequest, RequestId, read_response};
use crate::types::JsonRpcVersion;

impl A2aClient {
    /// A request to `at`, with this client's headers and `A2A-Version` for v1.0.
    pub(super) fn http_request(
        &self,
        verb: reqwest::Method,
        url: &str,
        at: &Interface,
    ) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(verb, url)
            .headers((*self.headers).clone());
        if at.protocol == Version::V1_0 {
            builder = builder.header("A2A-Version", crate::Version::V1_0.as_str());
        }
        builder
    }

    fn rpc_request<P: Serialize>(
        &self,
        at: &Interface,
        method: &str,
        params: Option<&P>,
    ) -> (RequestId, reqwest::RequestBuilder) {
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
        let builder = self
            .http_request(reqwest::Method::POST, &at.url, at)
            .json(&body);
        (id, builder)
    }

    /// Calls `method` at `at` and decodes its result.
    pub(super) async fn rpc<P: Serialize, R: DeserializeOwned>(
        &self,
        at: &Interface,
        method: &str,
        params: Option<&P>,
    ) -> Result<R, ClientError> {
        let (id, builder) = self.rpc_request(at, method, params);
        let url = &at.url;
        let builder = builder.header(header::ACCEPT, "application/json");
        let bytes = self.fetch(url, builder, Statuses::Plain).await?;
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
        let (id, builder) = self.rpc_request(at, method, Some(params));
        let url = at.url.clone();
        let resp = self
            .bounded(&url, async {
                builder
                    .header(header::ACCEPT, "text/event-stream")
                    .send()
                    .await
                    .map_err(|e| ClientError::transport(&url, e))
            })
            .await?;
        let resp = check_status(&url, resp).await?;
        if is_json(&resp) {
            // Some servers answer a failed stream request with a plain JSON error.
            let bytes = self
                .bounded(&url, async {
                    resp.bytes()
                        .await
                        .map_err(|e| ClientError::transport(&url, e))
                })
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

    /// The SSE body of `resp` as events, once its media type is checked.
    pub(super) fn events(
        &self,
        url: String,
        framing: Framing,
        resp: reqwest::Response,
        method: &str,
    ) -> Result<EventStream, ClientError> {
        let content_type = content_type(&resp);
        if !content_type.starts_with("text/event-stream") {
            return Err(ClientError::protocol(
                &url,
                format!("{method} must answer with text/event-stream, got {content_type:?}"),
            ));
        }
        Ok(sse_events(
            url,
            framing,
            resp,
            self.config.max_event_bytes,
            self.config.stream_idle_timeout,
        ))
    }

    /// Sends `builder` and reads the whole answer, all within the client's timeout; an
    /// error status is read as `statuses` says.
    pub(super) async fn fetch(
        &self,
        url: &str,
        builder: reqwest::RequestBuilder,
        statuses: Statuses,
    ) -> Result<bytes::Bytes, ClientError> {
        self.bounded(url, async {
            let resp = builder
                .send()
                .await
                .map_err(|e| ClientError::transport(url, e))?;
            let resp = match statuses {
                Statuses::Plain => check_status(url, resp).await?,
                Statuses::A2aError => super::rest::check_status(url, resp).await?,
            };
            resp.bytes()
                .await
                .map_err(|e| ClientError::transport(url, e))
        })
        .await
    }

    /// `fut` bounded by the client's timeout.
    pub(super) async fn bounded<T>(
        &self,
        url: &str,
        fut: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        let timeout = self.config.timeout;
        tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| ClientError::Timeout {
                url: url.to_owned(),
                timeout,
            })?
    }
}

/// How an answer's error status is read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Statuses {
    /// As the status and the start of the body (JSON-RPC: errors come in the body).
    Plain,
    /// As the A2A error its `google.rpc.Status` body names (HTTP+JSON).
    A2aError,
}

fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether the answer is JSON (`application/json`, `application/a2a+json`, ...).
pub(super) fn is_json(resp: &reqwest::Response) -> bool {
    let ct = content_type(resp);
    ct.starts_with("application/json") || ct.starts_with("application/a2a+json")
}

/// The response when its status is a success; else the status and the start of the body.
pub(super) async fn check_status(
    url: &str,
    resp: reqwest::Response,
) -> Result<reqwest::Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    if let Some(e) = redirect_error(url, &resp) {
        return Err(e);
    }
    let url = requested(url, &resp);
    let body = resp.text().await.unwrap_or_default();
    Err(ClientError::HttpStatus {
        url,
        status: status.as_u16(),
        body: abridged(body),
    })
}

/// The URL an answer came from: `url` as the caller named it, or where same-origin
/// redirects led.
pub(super) fn requested(url: &str, resp: &reqwest::Response) -> String {
    if resp.url().as_str() == url {
        url.to_owned()
    } else {
        resp.url().to_string()
    }
}

/// A redirect the client did not follow, as the error that names where it pointed.
pub(super) fn redirect_error(url: &str, resp: &reqwest::Response) -> Option<ClientError> {
    let status = resp.status();
    if !status.is_redirection() || status == reqwest::StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = resp
        .headers()
        .get(header::LOCATION)
        .map(|v| crate::log::url(&String::from_utf8_lossy(v.as_bytes())))
        .unwrap_or_else(|| "nowhere (no Location header)".to_owned());
    Some(ClientError::Redirect {
        url: requested(url, resp),
        status: status.as_u16(),
        location,
    })
}

/// The body of `resp`, refused past `max` bytes (by its `Content-Length`, or as it
/// arrives) so that a hostile server cannot make the client hold what it likes.
pub(super) async fn read_bounded(
    url: &str,
    mut resp: reqwest::Response,
    max: usize,
    what: &str,
) -> Result<bytes::Bytes, ClientError> {
    let too_large = |size: String| {
        ClientError::protocol(
            url,
            format!("the {what} is {size} bytes; at most {max} are accepted"),
        )
    };
    if let Some(declared) = resp.content_length()
        && declared > max as u64
    {
        return Err(too_large(declared.to_string()));
    }
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientError::transport(url, e))?
    {
        if body.len() + chunk.len() > max {
            return Err(too_large(format!("more than {max}")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// At most 512 bytes of an error body.
pub(super) fn abridged(mut body: String) -> String {
    if body.len() > 512 {
        let mut cut = 512;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
    body
}

/// Checks the envelope and id of a response; returns its `result`.
pub(super) fn decode_response(
    url: &str,
    id: &RequestId,
    value: Value,
) -> Result<Value, ClientError> {
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

pub(super) fn decode_result<R: DeserializeOwned>(
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

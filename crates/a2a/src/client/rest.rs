//! The HTTP+JSON binding of A2A v1.0 (spec §11): a route (verb and path) per operation below the
//! interface's URL (`POST /message:send`, `GET /tasks/{id}`, …), under `/{tenant}` when
//! the interface names one; v1.0 bodies; errors as `google.rpc.Status` whose `ErrorInfo`
//! names the A2A error, read back into the same [`RpcError`] codes JSON-RPC gives.

use reqwest::header;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::events::Framing;
use super::rpc::{Statuses, abridged, decode_result, is_json};
use super::{A2aClient, ClientError, EventStream, Interface};
use crate::error::RpcError;

/// The request line of one operation of the binding: the verb, the path below the interface (and tenant), and
/// the query.
#[derive(Debug, Clone)]
pub(super) struct RequestLine {
    verb: reqwest::Method,
    path: String,
    query: Vec<(&'static str, String)>,
}

impl RequestLine {
    pub(super) fn post(path: impl Into<String>) -> Self {
        Self {
            verb: reqwest::Method::POST,
            path: path.into(),
            query: Vec::new(),
        }
    }

    pub(super) fn get(path: impl Into<String>) -> Self {
        Self {
            verb: reqwest::Method::GET,
            ..Self::post(path)
        }
    }

    pub(super) fn delete(path: impl Into<String>) -> Self {
        Self {
            verb: reqwest::Method::DELETE,
            ..Self::post(path)
        }
    }

    pub(super) fn query(mut self, key: &'static str, value: Option<impl ToString>) -> Self {
        if let Some(v) = value {
            self.query.push((key, v.to_string()));
        }
        self
    }

    /// `tasks/{id}` followed by `rest` (`:cancel`, `/pushNotificationConfigs`, …).
    pub(super) fn task(id: &str, rest: &str) -> String {
        format!("tasks/{}{rest}", segment(id))
    }
}

/// A path segment with everything but unreserved characters percent-escaped.
pub(super) fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The request line's URL at `at`.
fn url_of(at: &Interface, line: &RequestLine) -> String {
    let mut url = at.url.trim_end_matches('/').to_owned();
    if !at.tenant.is_empty() {
        url.push('/');
        url.push_str(&segment(&at.tenant));
    }
    url.push('/');
    url.push_str(&line.path);
    url
}

impl A2aClient {
    fn rest_request<B: Serialize>(
        &self,
        at: &Interface,
        line: &RequestLine,
        body: Option<&B>,
        accept: &str,
    ) -> (String, reqwest::RequestBuilder) {
        let url = url_of(at, line);
        let mut builder = self
            .http_request(line.verb.clone(), &url, at)
            .header(header::ACCEPT, accept);
        if !line.query.is_empty() {
            builder = builder.query(&line.query);
        }
        if let Some(body) = body {
            builder = builder.json(body);
        }
        (url, builder)
    }

    /// Calls `line` at `at` with `body` and decodes the answer.
    pub(super) async fn rest<B: Serialize, R: DeserializeOwned>(
        &self,
        at: &Interface,
        line: RequestLine,
        body: Option<&B>,
    ) -> Result<R, ClientError> {
        let (url, builder) = self.rest_request(at, &line, body, "application/json");
        let url = &url;
        let bytes = self.fetch(url, builder, Statuses::A2aError).await?;
        let value: Value = if bytes.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::protocol(url, format!("the answer is not JSON: {e}")))?
        };
        decode_result(url, &format!("{} /{}", line.verb, line.path), value)
    }

    /// Opens the stream of `line` at `at`.
    pub(super) async fn rest_stream<B: Serialize>(
        &self,
        at: &Interface,
        line: RequestLine,
        body: Option<&B>,
    ) -> Result<EventStream, ClientError> {
        let (url, builder) = self.rest_request(at, &line, body, "text/event-stream");
        let resp = self
            .bounded(&url, async {
                builder
                    .send()
                    .await
                    .map_err(|e| ClientError::transport(&url, e))
            })
            .await?;
        let resp = check_status(&url, resp).await?;
        if is_json(&resp) {
            return Err(ClientError::protocol(
                &url,
                "a stream must be answered with text/event-stream, got JSON",
            ));
        }
        let name = format!("{} /{}", line.verb, line.path);
        self.events(url, Framing::HttpJson, resp, &name)
    }
}

/// A success as it is; an error status as the A2A error its `google.rpc.Status` names,
/// or as the bare status when it names none.
pub(super) async fn check_status(
    url: &str,
    resp: reqwest::Response,
) -> Result<reqwest::Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    if let Some(e) = super::rpc::redirect_error(url, &resp) {
        return Err(e);
    }
    let url = super::rpc::requested(url, &resp);
    let body = resp.text().await.unwrap_or_default();
    Err(status_error(&url, status.as_u16(), body))
}

fn status_error(url: &str, status: u16, body: String) -> ClientError {
    let named: Option<RpcError> = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| crate::v1::error::from_status(v.get("error")?));
    match named {
        Some(e) => ClientError::Rpc(e),
        None => ClientError::HttpStatus {
            url: url.to_owned(),
            status,
            body: abridged(body),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;
    use crate::client::Binding;
    use crate::error::ErrorCode;

    #[test]
    fn urls_put_the_tenant_first_and_escape_ids() {
        let mut at = Interface {
            url: "http://a/api/".into(),
            protocol: Version::V1_0,
            binding: Binding::HttpJson,
            tenant: String::new(),
        };
        let line = RequestLine::post(RequestLine::task("t/1:x", ":cancel"));
        assert_eq!(url_of(&at, &line), "http://a/api/tasks/t%2F1%3Ax:cancel");
        at.tenant = "acme corp".into();
        assert_eq!(
            url_of(&at, &RequestLine::post("message:send")),
            "http://a/api/acme%20corp/message:send"
        );
    }

    #[test]
    fn a_status_naming_an_a2a_error_is_that_error() {
        let body = r#"{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#;
        match status_error("u", 404, body.into()) {
            ClientError::Rpc(e) => {
                assert_eq!(e.code, ErrorCode::TASK_NOT_FOUND);
                assert_eq!(e.message, "Task not found");
            }
            other => panic!("{other:?}"),
        }
        match status_error("u", 502, "bad gateway".into()) {
            ClientError::HttpStatus { status: 502, .. } => {}
            other => panic!("{other:?}"),
        }
    }
}

//! The HTTP+JSON binding of A2A v1.0 (spec §11): a route (verb and path) per operation below the
//! interface's URL (`POST /message:send`, `GET /tasks/{id}`, …), under `/{tenant}` when
//! the interface names one; v1.0 bodies; errors as `google.rpc.Status` whose `ErrorInfo`
//! names the A2A error, read back into the same [`RpcError`] codes JSON-RPC gives.

use bytes::Bytes;
use http::{Method, Request};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::events::Framing;
use super::http::{Statuses, check_status, decode_result, is_json};
use super::{A2aClient, ClientError, EventStream, Interface};

/// The request line of one operation of the binding: the verb, the path below the interface (and tenant), and
/// the query.
#[derive(Debug, Clone)]
pub(super) struct RequestLine {
    verb: Method,
    path: String,
    query: Vec<(&'static str, String)>,
}

impl RequestLine {
    pub(super) fn post(path: impl Into<String>) -> Self {
        Self {
            verb: Method::POST,
            path: path.into(),
            query: Vec::new(),
        }
    }

    pub(super) fn get(path: impl Into<String>) -> Self {
        Self {
            verb: Method::GET,
            ..Self::post(path)
        }
    }

    pub(super) fn delete(path: impl Into<String>) -> Self {
        Self {
            verb: Method::DELETE,
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
        accept: &'static str,
    ) -> Result<(String, Request<Bytes>), ClientError> {
        let url = url_of(at, line);
        let body = body
            .map(serde_json::to_vec)
            .transpose()
            .map_err(|e| ClientError::Config(format!("the request cannot be written: {e}")))?;
        let target = match line.query.is_empty() {
            true => url.clone(),
            false => {
                let mut query = url::form_urlencoded::Serializer::new(String::new());
                for (key, value) in &line.query {
                    query.append_pair(key, value);
                }
                format!("{url}?{}", query.finish())
            }
        };
        let req = self.http_request(line.verb.clone(), &target, at, accept, body)?;
        Ok((url, req))
    }

    /// Calls `line` at `at` with `body` and decodes the answer.
    pub(super) async fn rest<B: Serialize, R: DeserializeOwned>(
        &self,
        at: &Interface,
        line: RequestLine,
        body: Option<&B>,
    ) -> Result<R, ClientError> {
        let (url, req) =
            self.rest_request(at, &line, body, "application/a2a+json, application/json")?;
        let url = &url;
        let bytes = self.fetch(url, req, Statuses::A2aError).await?;
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
        let (url, req) = self.rest_request(at, &line, body, "text/event-stream")?;
        let resp = self.send(&url, req).await?;
        let resp = check_status(&url, resp, Statuses::A2aError).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;
    use crate::client::Binding;

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
}

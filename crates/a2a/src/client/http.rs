//! What every binding's calls share: the request with this client's headers, the
//! exchange bounded in time and size, error statuses and redirects read into
//! `ClientError`s, and a result decoded with the path of what does not fit. The
//! bindings (`rpc`, `rest`) and the stream decoder (`events`) build on it; it builds
//! on none of them.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode, Uri};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::send::{Response, parse_uri};
use super::{A2aClient, ClientError, Interface, USER_AGENT};
use crate::Version;

impl A2aClient {
    /// A request to `url` on `at` accepting `accept`, with this client's headers,
    /// `A2A-Version` for v1.0, and `body` as JSON when there is one.
    pub(super) fn http_request(
        &self,
        verb: Method,
        url: &str,
        at: &Interface,
        accept: &'static str,
        body: Option<Vec<u8>>,
    ) -> Result<Request<Bytes>, ClientError> {
        let uri = match self.parsed(url) {
            Some(parsed) => parsed.clone(),
            None => parse_uri(url).map_err(|detail| ClientError::InvalidUrl {
                url: url.to_owned(),
                detail,
            })?,
        };
        let mut headers = (*self.headers).clone();
        if at.protocol == Version::V1_0 {
            headers.insert(
                HeaderName::from_static("a2a-version"),
                HeaderValue::from_static(Version::V1_0.as_str()),
            );
        }
        Ok(request(verb, uri, headers, accept, body))
    }

    /// `url` as parsed when the client was made, when it is one of its interfaces'.
    fn parsed(&self, url: &str) -> Option<&http::Uri> {
        self.interfaces
            .iter()
            .zip(self.urls.iter())
            .find(|(at, _)| at.url == url)
            .and_then(|(_, parsed)| parsed.as_ref())
    }

    /// Sends `req`, bounded by the client's timeout; the answer once its head arrived.
    pub(super) async fn send(
        &self,
        url: &str,
        req: Request<Bytes>,
    ) -> Result<Response, ClientError> {
        self.bounded(url, async {
            self.http
                .send(req)
                .await
                .map_err(|e| ClientError::transport(url, e))
        })
        .await
    }

    /// Sends `req` and reads the whole answer, all within the client's timeout; an
    /// error status is read as `statuses` says.
    pub(super) async fn fetch(
        &self,
        url: &str,
        req: Request<Bytes>,
        statuses: Statuses,
    ) -> Result<Bytes, ClientError> {
        self.bounded(url, async {
            let resp = self
                .http
                .send(req)
                .await
                .map_err(|e| ClientError::transport(url, e))?;
            let resp = check_status(url, resp, statuses).await?;
            read_bounded(url, resp, self.config.max_event_bytes, "answer").await
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

/// A request with `headers`, this crate's `User-Agent` unless they name one, `Accept:
/// accept`, and `body` as JSON when there is one.
pub(super) fn request(
    verb: Method,
    uri: Uri,
    mut headers: HeaderMap,
    accept: &'static str,
    body: Option<Vec<u8>>,
) -> Request<Bytes> {
    headers
        .entry(header::USER_AGENT)
        .or_insert(HeaderValue::from_static(USER_AGENT));
    headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
    if body.is_some() {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    let mut req = Request::new(body.map(Bytes::from).unwrap_or_default());
    *req.method_mut() = verb;
    *req.uri_mut() = uri;
    *req.headers_mut() = headers;
    req
}

/// How an answer's error status is read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Statuses {
    /// As the status and the start of the body (JSON-RPC: errors come in the body).
    Plain,
    /// As the A2A error its `google.rpc.Status` body names (HTTP+JSON).
    A2aError,
}

pub(super) fn content_type(resp: &Response) -> String {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether the answer is JSON (`application/json`, `application/a2a+json`, ...).
pub(super) fn is_json(resp: &Response) -> bool {
    let ct = content_type(resp);
    ct.starts_with("application/json") || ct.starts_with("application/a2a+json")
}

/// The response when its status is a success; else a redirect not followed, or the
/// error status read as `statuses` says.
pub(super) async fn check_status(
    url: &str,
    resp: Response,
    statuses: Statuses,
) -> Result<Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    if let Some(e) = redirect_error(url, &resp) {
        return Err(e);
    }
    let url = requested(url, &resp);
    let body = resp.text_up_to(MAX_ERROR_BODY).await;
    Err(status_error(&url, status.as_u16(), body, statuses))
}

/// Most of an error status's body read: enough for any `google.rpc.Status` an agent
/// sends, and for the 512 bytes an error shows; the rest is not read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An error status with its body, read as `statuses` says: with `A2aError`, the A2A
/// error a `google.rpc.Status` body names, or the bare status when it names none.
fn status_error(url: &str, status: u16, body: String, statuses: Statuses) -> ClientError {
    let named = match statuses {
        Statuses::Plain => None,
        Statuses::A2aError => serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| crate::v1::error::from_status(v.get("error")?)),
    };
    match named {
        Some(e) => ClientError::Rpc(e),
        None => ClientError::HttpStatus {
            url: url.to_owned(),
            status,
            body: abridged(body),
        },
    }
}

/// The URL an answer came from: `url` as the caller named it, or where same-origin
/// redirects led.
pub(super) fn requested(url: &str, resp: &Response) -> String {
    resp.redirected().unwrap_or(url).to_owned()
}

/// A redirect the client did not follow, as the error that names where it pointed.
pub(super) fn redirect_error(url: &str, resp: &Response) -> Option<ClientError> {
    let status = resp.status();
    if !status.is_redirection() || status == StatusCode::NOT_MODIFIED {
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
    mut resp: Response,
    max: usize,
    what: &str,
) -> Result<Bytes, ClientError> {
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
    // The usual answer comes in one piece, kept as it came; more are joined.
    let mut first: Option<Bytes> = None;
    let mut joined = bytes::BytesMut::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientError::broke_off(url, e))?
    {
        let held = first.as_ref().map_or(0, Bytes::len) + joined.len();
        if held + chunk.len() > max {
            return Err(too_large(format!("more than {max}")));
        }
        match first.take() {
            None if joined.is_empty() => first = Some(chunk),
            earlier => {
                if let Some(earlier) = earlier {
                    joined.extend_from_slice(&earlier);
                }
                joined.extend_from_slice(&chunk);
            }
        }
    }
    Ok(first.unwrap_or_else(|| joined.freeze()))
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

/// `result` as the type `method` answers with, or an error naming where it does not fit.
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

#[cfg(test)]
mod tests {
    use super::{Statuses, status_error};
    use crate::client::ClientError;
    use crate::error::ErrorCode;

    #[test]
    fn a_status_naming_an_a2a_error_is_that_error() {
        let body = r#"{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#;
        match status_error("u", 404, body.into(), Statuses::A2aError) {
            ClientError::Rpc(e) => {
                assert_eq!(e.code, ErrorCode::TASK_NOT_FOUND);
                assert_eq!(e.message, "Task not found");
            }
            other => panic!("{other:?}"),
        }
        match status_error("u", 502, "bad gateway".into(), Statuses::A2aError) {
            ClientError::HttpStatus { status: 502, .. } => {}
            other => panic!("{other:?}"),
        }
        match status_error("u", 404, body.into(), Statuses::Plain) {
            ClientError::HttpStatus { status: 404, .. } => {}
            other => panic!("JSON-RPC reads errors from its body, not the status: {other:?}"),
        }
    }
}

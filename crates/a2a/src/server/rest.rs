//! The HTTP+JSON binding of A2A v1.0 (spec §11): the proto's `google.api.http` routes —
//! `POST /message:send`, `GET /tasks/{id}`, `POST /tasks/{id}:cancel`, … — each
//! optionally under a `/{tenant}` prefix, below the JSON-RPC endpoint's path. Bodies and
//! results are the v1.0 shapes; errors are `google.rpc.Status` with the spec's HTTP
//! status and an `ErrorInfo`; streams are SSE whose `data:` is a `StreamResponse`.

use axum::http::Method as HttpMethod;

use super::http::{
    BodyError, accepts_event_stream, json_with, last_event_id, read_body, sse_event, sse_response,
};
use super::observe::Answered;
use super::version::{self, Version};
use crate::proto::pb as w;
use crate::server::{Caller, Inner, live_events};
use crate::types::StreamEvent;
use crate::v1::error as v1_error;
use crate::{Method, RpcError};
use axum::body::Body;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use tracing::{Instrument, info_span};

/// The media type of HTTP+JSON bodies.
const A2A_JSON: &str = "application/a2a+json";

/// One route of the binding, with what its path names.
#[derive(Debug, PartialEq, Eq)]
enum Endpoint {
    Send,
    Stream,
    List,
    Get(String),
    Cancel(String),
    Subscribe(String),
    Push(String),
    GetPush(String, String),
    DeletePush(String, String),
    ExtendedCard,
}

impl Endpoint {
    /// The v1.0 method the route carries, for the metrics.
    fn method(&self, has_body: bool) -> &'static str {
        match self {
            Endpoint::Send => Method::SendMessage.v1_name(),
            Endpoint::Stream => Method::SendStreamingMessage.v1_name(),
            Endpoint::List => Method::ListTasks.v1_name(),
            Endpoint::Get(_) => Method::GetTask.v1_name(),
            Endpoint::Cancel(_) => Method::CancelTask.v1_name(),
            Endpoint::Subscribe(_) => Method::Resubscribe.v1_name(),
            Endpoint::Push(_) if has_body => Method::SetPushConfig.v1_name(),
            Endpoint::Push(_) => Method::ListPushConfig.v1_name(),
            Endpoint::GetPush(..) => Method::GetPushConfig.v1_name(),
            Endpoint::DeletePush(..) => Method::DeletePushConfig.v1_name(),
            Endpoint::ExtendedCard => Method::GetAuthenticatedExtendedCard.v1_name(),
        }
    }

    fn is_streaming(&self) -> bool {
        matches!(self, Endpoint::Stream | Endpoint::Subscribe(_))
    }
}

/// `response`, marked as the binding's answer to `method` with `code` (none for a
/// success).
fn answered(method: &'static str, code: Option<crate::ErrorCode>, response: Response) -> Response {
    Answered::new(method, crate::v1::BINDING_HTTP_JSON, Version::V1_0, code).on(response)
}

/// Matches a path (below the binding's base) and method to a route, with or without a
/// tenant first (and that tenant). `None` when nothing matches.
fn endpoint(method: &HttpMethod, path: &str) -> Option<(Endpoint, Option<String>)> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let known = |first: &str| {
        matches!(
            first,
            "message:send" | "message:stream" | "tasks" | "extendedAgentCard"
        )
    };
    // A tenant is a first segment that is not one of the binding's own.
    let (tenant, rest) = match segments.first() {
        Some(first) if !known(first) && segments.len() > 1 => (Some(decode(first)), &segments[1..]),
        _ => (None, &segments[..]),
    };
    let get = method == HttpMethod::GET;
    let post = method == HttpMethod::POST;
    let route = match rest {
        ["message:send"] if post => Endpoint::Send,
        ["message:stream"] if post => Endpoint::Stream,
        ["tasks"] if get => Endpoint::List,
        ["extendedAgentCard"] if get => Endpoint::ExtendedCard,
        ["tasks", id] => match id.rsplit_once(':') {
            Some((id, "cancel")) if post => Endpoint::Cancel(decode(id)),
            // The proto says GET, the spec's table and the official SDKs POST: both.
            Some((id, "subscribe")) if get || post => Endpoint::Subscribe(decode(id)),
            None if get => Endpoint::Get(decode(id)),
            _ => return None,
        },
        ["tasks", id, "pushNotificationConfigs"] if get || post => Endpoint::Push(decode(id)),
        ["tasks", id, "pushNotificationConfigs", config] if get => {
            Endpoint::GetPush(decode(id), decode(config))
        }
        ["tasks", id, "pushNotificationConfigs", config] if method == HttpMethod::DELETE => {
            Endpoint::DeletePush(decode(id), decode(config))
        }
        _ => return None,
    };
    Some((route, tenant))
}

/// A path segment with its percent-escapes decoded (an escape that is none stays as it
/// is).
fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// The query string's parameters, decoded as a form is (`+` is a space).
fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

fn error_response(e: &RpcError) -> Response {
    let (status, body) = v1_error::http(e);
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_with(status, A2A_JSON, &body)
}

fn ok<T: Serialize>(body: &T) -> Response {
    json_with(StatusCode::OK, A2A_JSON, body)
}

/// A body parsed as `T`, naming the field that is wrong; straight from the text, without
/// a generic JSON tree (which would cost many times a large body's size).
fn parse_body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, RpcError> {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(RpcError::parse_error)?;
    let text = std::str::from_utf8(bytes).map_err(RpcError::parse_error)?;
    crate::jsonrpc::parse_params_str(text)
}

/// ListTasks's query parameters as its request.
fn list_request(pairs: &[(String, String)]) -> Result<w::ListTasksRequest, RpcError> {
    let mut r = w::ListTasksRequest::default();
    let number = |k: &str, v: &str| {
        v.parse::<i32>()
            .map_err(|_| RpcError::invalid_params(k, format!("must be a number, got {v:?}")))
    };
    for (k, v) in pairs {
        match k.as_str() {
            "tenant" => r.tenant = v.clone(),
            "contextId" => r.context_id = v.clone(),
            "status" => {
                r.status = w::TaskState::from_str_name(v).ok_or_else(|| {
                    let names: Vec<&str> = (0..)
                        .map_while(|n| w::TaskState::try_from(n).ok())
                        .map(|s| s.as_str_name())
                        .collect();
                    RpcError::invalid_params(
                        "status",
                        format!("unknown task state {v:?} (one of {})", names.join(", ")),
                    )
                })? as i32
            }
            "pageSize" => r.page_size = Some(number(k, v)?),
            "pageToken" => r.page_token = v.clone(),
            "historyLength" => r.history_length = Some(number(k, v)?),
            "statusTimestampAfter" => {
                r.status_timestamp_after = Some(crate::proto::Timestamp::parse(v).map_err(|e| {
                    RpcError::invalid_params(
                        "statusTimestampAfter",
                        format!("must be an ISO 8601 time such as 2026-03-01T10:00:00Z: {e}"),
                    )
                })?)
            }
            "includeArtifacts" => {
                r.include_artifacts = Some(match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(RpcError::invalid_params(
                            "includeArtifacts",
                            format!("must be true or false, got {v:?}"),
                        ));
                    }
                })
            }
            // Service parameters and unknown ones are not the request's.
            _ => {}
        }
    }
    Ok(r)
}

/// Every request of the binding: routed, checked (auth, version, extensions), run.
pub(super) async fn rest(
    State(inner): State<Arc<Inner>>,
    axum::Extension(caller): axum::Extension<super::Caller>,
    method: HttpMethod,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let a2a_json = asks_for_a2a_json(&headers);
    let mut response = route_rest(inner, caller, method, uri, headers, body).await;
    if !a2a_json
        && response.headers().get(CONTENT_TYPE).map(|v| v.as_bytes()) == Some(A2A_JSON.as_bytes())
    {
        response.headers_mut().insert(
            CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        );
    }
    response
}

/// Whether the client says it reads `application/a2a+json` (its `Accept` names it, as
/// the official JavaScript client's does). JSON bodies are labelled with it then, as
/// §11.1 prefers; a client that names only `application/json`, or nothing, or `*/*` (the
/// official Python client, the conformance kit, curl) gets them labelled
/// `application/json`, the type every JSON client takes.
fn asks_for_a2a_json(headers: &HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|range| range.trim().parse::<mime::Mime>().ok())
        // `q=0` says "not this one".
        .filter(|m| {
            m.get_param("q")
                .and_then(|q| q.as_str().parse::<f32>().ok())
                .is_none_or(|q| q > 0.0)
        })
        .any(|m| m.essence_str() == A2A_JSON)
}

async fn route_rest(
    inner: Arc<Inner>,
    caller: super::Caller,
    method: HttpMethod,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let base = inner.config.rpc_path.trim_end_matches('/');
    let Some((route, tenant)) = uri
        .path()
        .strip_prefix(base)
        .and_then(|path| endpoint(&method, path))
    else {
        let e = not_found(uri.path());
        return answered("unknown", Some(e.code), error_response(&e));
    };
    // The `/{tenant}` prefix is the tenant the caller acts in, never ignored.
    let caller = match caller.in_tenant(tenant.as_deref(), inner.config.authorizer()) {
        Ok(caller) => caller,
        Err(e) => return answered(route.method(false), Some(e.code), error_response(&e)),
    };
    let checks = version::requested(&headers, uri.query()).and_then(|v| match v {
        Version::V1_0 => inner
            .config
            .generations
            .check(Version::V1_0)
            .and_then(|()| version::check_extensions(&inner.cards().card, &headers)),
        Version::V0_3 => Err(RpcError::version_not_supported(
            Version::V0_3.as_str(),
            &[Version::V1_0.as_str()],
        )
        .with_data(serde_json::json!({"binding": "HTTP+JSON"}))),
    });
    let name = route.method(false);
    if let Err(e) = checks {
        return answered(name, Some(e.code), error_response(&e));
    }
    let bytes = match read_body(&inner, &headers, body).await {
        Ok(b) => b,
        Err(BodyError::TooLarge(e)) => {
            let (_, body) = v1_error::http(&e);
            let response = json_with(StatusCode::PAYLOAD_TOO_LARGE, A2A_JSON, &body);
            return answered(name, Some(e.code), response);
        }
        Err(BodyError::Unreadable(e)) => {
            return answered(name, Some(e.code), error_response(&e));
        }
    };
    let name = route.method(!bytes.is_empty());
    if !bytes.is_empty() && !super::http::is_json(&headers) {
        let e = super::http::not_json();
        let (_, body) = v1_error::http(&e);
        let response = json_with(StatusCode::UNSUPPORTED_MEDIA_TYPE, A2A_JSON, &body);
        return answered(name, Some(e.code), response);
    }
    let streaming = route.is_streaming();
    let span = info_span!(
        "rest",
        method = %method,
        path = %crate::log::untrusted(uri.path()),
        otel.name = name,
        otel.kind = "server",
        "a2a.method.name" = name,
        "a2a.protocol.version" = crate::Version::V1_0.as_str(),
    );
    inner.config.trace_parent.adopt(&headers, &span);
    async move {
        match handle(&inner, route, &uri, &headers, &bytes, &caller).await {
            // A stream marked itself once it opened (or failed to).
            Ok(r) if streaming => r,
            Ok(r) => answered(name, None, r),
            Err(e) => answered(name, Some(e.code), error_response(&e)),
        }
    }
    .instrument(span)
    .await
}

fn not_found(path: &str) -> RpcError {
    RpcError::method_not_found(&path.chars().take(200).collect::<String>())
}

async fn handle(
    inner: &Arc<Inner>,
    route: Endpoint,
    uri: &axum::http::Uri,
    headers: &HeaderMap,
    body: &[u8],
    caller: &Caller,
) -> Result<Response, RpcError> {
    let pairs = query_pairs(uri.query());
    let history_length = pairs
        .iter()
        .find(|(k, _)| k == "historyLength")
        .map(|(_, v)| {
            v.parse::<i32>().map_err(|_| {
                RpcError::invalid_params("historyLength", format!("must be a number, got {v:?}"))
            })
        })
        .transpose()?;

    Ok(match route {
        Endpoint::Send => ok(&super::v1::send(inner, parse_body(body)?, caller).await?),
        Endpoint::Stream => {
            accepts_event_stream(headers)?;
            let request = super::v1::stream_message(parse_body(body)?);
            stream(inner.clone(), Method::SendStreamingMessage, request, caller).await
        }
        Endpoint::Get(id) => {
            let request = w::GetTaskRequest {
                tenant: String::new(),
                id,
                history_length,
            };
            ok(&super::v1::get(inner, request, caller).await?)
        }
        Endpoint::List => ok(&super::v1::list(inner, list_request(&pairs)?, caller).await?),
        Endpoint::Cancel(id) => {
            let mut request = w::CancelTaskRequest {
                id,
                ..Default::default()
            };
            if !body.is_empty() {
                let given: Value = serde_json::from_slice(body).map_err(RpcError::parse_error)?;
                request.metadata = given
                    .get("metadata")
                    .and_then(Value::as_object)
                    .cloned()
                    .map(crate::types::Metadata::from);
            }
            ok(&super::v1::cancel(inner, request, caller).await?)
        }
        Endpoint::Subscribe(id) => {
            accepts_event_stream(headers)?;
            let request = w::SubscribeToTaskRequest {
                id,
                ..Default::default()
            };
            let request = super::v1::subscribe(request, last_event_id(headers)?)?;
            stream(inner.clone(), Method::Resubscribe, request, caller).await
        }
        Endpoint::Push(id) if body.is_empty() => {
            let request = w::ListTaskPushNotificationConfigsRequest {
                task_id: id,
                ..Default::default()
            };
            ok(&super::v1::list_push(inner, request, caller).await?)
        }
        Endpoint::Push(id) => {
            let mut config: w::TaskPushNotificationConfig = parse_body(body)?;
            config.task_id = id;
            ok(&super::v1::create_push(inner, config, caller).await?)
        }
        Endpoint::GetPush(task_id, id) => {
            let request = w::GetTaskPushNotificationConfigRequest {
                tenant: String::new(),
                task_id,
                id,
            };
            ok(&super::v1::get_push(inner, request, caller).await?)
        }
        Endpoint::DeletePush(task_id, id) => {
            let request = w::DeleteTaskPushNotificationConfigRequest {
                tenant: String::new(),
                task_id,
                id,
            };
            super::v1::delete_push(inner, request, caller).await?;
            ok(&serde_json::json!({}))
        }
        Endpoint::ExtendedCard => ok(&super::v1::extended_card(inner, caller)?),
    })
}

/// A stream of `StreamResponse`s as SSE; an error before it starts is its one event.
async fn stream(
    inner: Arc<Inner>,
    method: Method,
    request: super::handler::StreamRequest,
    caller: &Caller,
) -> Response {
    let keep_alive = inner.config.keep_alive;
    let frame = |seq: u64, body: Result<&StreamEvent, RpcError>| {
        let data = match body {
            // An event serializes as the StreamResponse that holds it.
            Ok(event) => serde_json::to_string(event),
            Err(e) => serde_json::to_string(&v1_error::http(&e).1),
        };
        sse_event(
            data.unwrap_or_else(|e| {
                format!(r#"{{"error":{{"code":500,"message":"cannot serialize event: {e}"}}}}"#)
            }),
            seq,
        )
    };
    match inner.open_stream(method, request, caller).await {
        Ok((task_id, sub, after)) => {
            let events = live_events(inner, task_id, sub, after);
            let frames = events.map(move |item| {
                Ok(match item {
                    Ok((seq, event)) => frame(seq, Ok(&*event)),
                    Err(e) => frame(0, Err(e)),
                })
            });
            answered(
                method.v1_name(),
                None,
                sse_response(Box::pin(frames), keep_alive),
            )
        }
        // Before the stream starts, an error is an ordinary error response.
        Err(e) => answered(method.v1_name(), Some(e.code), error_response(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_the_proto_with_or_without_a_tenant() {
        let post = HttpMethod::POST;
        let get = HttpMethod::GET;
        let route = |m: &HttpMethod, p: &str| endpoint(m, p).map(|(e, _)| e);
        let tenant = |m: &HttpMethod, p: &str| endpoint(m, p).and_then(|(_, t)| t);
        assert_eq!(route(&post, "/message:send"), Some(Endpoint::Send));
        assert_eq!(tenant(&post, "/message:send"), None);
        assert_eq!(route(&post, "/acme/message:stream"), Some(Endpoint::Stream));
        assert_eq!(
            tenant(&post, "/acme/message:stream").as_deref(),
            Some("acme")
        );
        assert_eq!(route(&get, "/tasks"), Some(Endpoint::List));
        assert_eq!(route(&get, "/tasks/t-1"), Some(Endpoint::Get("t-1".into())));
        assert_eq!(
            route(&post, "/acme/tasks/t-1:cancel"),
            Some(Endpoint::Cancel("t-1".into()))
        );
        assert_eq!(
            tenant(&post, "/a%20b/tasks/t-1:cancel").as_deref(),
            Some("a b")
        );
        assert_eq!(
            route(&get, "/tasks/t%3A1:subscribe"),
            Some(Endpoint::Subscribe("t:1".into()))
        );
        assert_eq!(
            route(&HttpMethod::DELETE, "/tasks/t/pushNotificationConfigs/c"),
            Some(Endpoint::DeletePush("t".into(), "c".into()))
        );
        assert_eq!(route(&get, "/tasks/t-1:cancel"), None);
        assert_eq!(route(&get, "/nothing/here/at/all"), None);
    }

    #[test]
    fn media_types_are_read_as_media_types() {
        let with = |name, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(name, value.parse().unwrap());
            headers
        };
        let accept = |v| asks_for_a2a_json(&with(axum::http::header::ACCEPT, v));
        assert!(accept("application/a2a+json"));
        assert!(accept("Application/A2A+JSON; charset=utf-8"));
        assert!(accept("application/json, application/a2a+json;q=0.5"));
        assert!(!accept("application/a2a+json;q=0"));
        assert!(!accept("application/a2a+json; q=0.0, application/json"));
        assert!(!accept("*/*"));
        let json = |v| super::super::http::is_json(&with(CONTENT_TYPE, v));
        assert!(json("application/json; charset=utf-8"));
        assert!(json("Application/JSON"));
        assert!(json("application/a2a+json"));
        assert!(!json("application/jsonx"));
        assert!(!json("text/plain"));
    }

    #[test]
    fn query_parameters_are_decoded_as_a_form() {
        let pairs = query_pairs(Some("contextId=a+b&pageToken=%2Fx%3D&historyLength&=v"));
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(
            pairs,
            [
                pair("contextId", "a b"),
                pair("pageToken", "/x="),
                pair("historyLength", ""),
                pair("", "v")
            ]
        );
        assert!(query_pairs(None).is_empty());
        assert_eq!(decode("t%zz%41"), "t%zzA", "an escape that is none stays");
    }
}

//! What every HTTP binding shares: the Agent Card (one document both generations
//! read), authentication, reading a bounded body, JSON and SSE responses, and the
//! `Last-Event-ID` a reconnecting client sends.

use crate::RpcError;
use crate::Version;
use crate::card::{AgentCard, AgentInterface};
use crate::server::{CardKeys, Inner, RequestId, RpcResponse, ServerConfig, Versions};
use crate::v1::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use http_body_util::BodyExt;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// The card as published: the server's own interfaces at the card's URL (JSON-RPC and
/// HTTP+JSON 1.0, gRPC 1.0 when served, JSON-RPC 0.3 when served) in place of any the
/// card lists. Serving both generations, v0.3's fields beside v1.0's
/// (`crate::v0_3::card::with_v03_fields`): every v1.0 client reads the v1.0 card out of
/// it, whether it converts v0.3 shapes (the Python SDK) or reads only v1.0 fields (the
/// JavaScript one); a v0.3 client ignores the v1.0 fields. Serving one generation: that
/// generation's card alone.
///
/// Signed with `keys` when given: a signature per generation's reading of the card (see
/// [`CardKeys`]), in place of any the card carried.
pub(super) fn published_card(
    card: &AgentCard,
    config: &ServerConfig,
    keys: Option<&CardKeys>,
) -> Value {
    let generations = config.generations;
    let mut value = unsigned_card(card, generations, config.serves_grpc());
    if let Some(keys) = keys {
        let jku = super::card_keys::jwks_url(card.url());
        let signatures = keys.sign(&value, generations, jku.as_deref());
        value["signatures"] =
            serde_json::to_value(signatures).expect("signatures always serialize to JSON");
    }
    value
}

fn unsigned_card(card: &AgentCard, generations: Versions, grpc: bool) -> Value {
    let url = card.url().to_owned();
    let interface = |url: &str, binding: &str, version: Version| AgentInterface {
        url: url.to_owned(),
        protocol_binding: binding.to_owned(),
        tenant: String::new(),
        protocol_version: version.as_str().to_owned(),
    };
    let mut interfaces = vec![
        interface(&url, BINDING_JSONRPC, Version::V1_0),
        interface(&url, BINDING_HTTP_JSON, Version::V1_0),
    ];
    // gRPC dials `host:port`, as the official SDKs' channels (grpcio, grpc-js) take it.
    if let Some(target) = grpc.then(|| grpc_target(&url)).flatten() {
        interfaces.push(interface(&target, BINDING_GRPC, Version::V1_0));
    }
    if generations == Versions::Both {
        interfaces.push(interface(&url, BINDING_JSONRPC, Version::V0_3));
    }
    let published = AgentCard {
        supported_interfaces: interfaces,
        signatures: Vec::new(),
        ..card.clone()
    };
    #[allow(unused_mut)]
    let mut value = published.to_json();
    #[cfg(feature = "v0_3")]
    match generations {
        Versions::Both => crate::v0_3::card::with_v03_fields(&mut value, &url),
        Versions::V0_3 => crate::v0_3::card::as_v03_only(&mut value, &url),
        Versions::V1_0 => {}
    }
    value
}

/// The gRPC target (`host:port`) of a server whose card URL is `url`.
fn grpc_target(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?;
    let port = u.port_or_known_default()?;
    Some(if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    })
}

/// How long a client may keep the card before asking again (it changes only when the
/// server is restarted or reconfigured); after that, a conditional request costs a 304.
const CARD_MAX_AGE: &str = "public, max-age=300";

/// A published card's validators, for caches and conditional requests.
pub(super) struct CardValidators {
    etag: axum::http::HeaderValue,
    last_modified: axum::http::HeaderValue,
}

impl CardValidators {
    /// A strong `ETag` of the card's bytes and a `Last-Modified` of now.
    pub(super) fn of(card: &[u8]) -> CardValidators {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(card);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        // HTTP's date (RFC 9110 IMF-fixdate).
        let now = time::format_description::parse(
            "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT",
        )
        .ok()
        .and_then(|f| time::OffsetDateTime::now_utc().format(&f).ok())
        .unwrap_or_default();
        CardValidators {
            etag: axum::http::HeaderValue::from_str(&format!("\"{hex}\""))
                .unwrap_or_else(|_| axum::http::HeaderValue::from_static("\"card\"")),
            last_modified: axum::http::HeaderValue::from_str(&now)
                .unwrap_or_else(|_| axum::http::HeaderValue::from_static("")),
        }
    }

    /// Whether `If-None-Match` names this card (or `*`).
    fn matches(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|tag| tag.trim().trim_start_matches("W/"))
            .any(|tag| tag == "*" || tag.as_bytes() == self.etag.as_bytes())
    }
}

/// The public card, with `Cache-Control`, `ETag` and `Last-Modified`; a request whose
/// `If-None-Match` names it gets `304 Not Modified`.
pub(super) async fn card(State(inner): State<Arc<Inner>>, headers: HeaderMap) -> Response {
    let cards = inner.cards();
    let v = &cards.validators;
    let validators = [
        (
            header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static(CARD_MAX_AGE),
        ),
        (header::ETAG, v.etag.clone()),
        (header::LAST_MODIFIED, v.last_modified.clone()),
    ];
    if v.matches(&headers) {
        return (StatusCode::NOT_MODIFIED, validators).into_response();
    }
    (
        validators,
        [(header::CONTENT_TYPE, "application/json")],
        cards.json.clone(),
    )
        .into_response()
}

/// The key set the card's signatures name (`jku`): 404 when cards are not signed.
pub(super) async fn jwks(State(inner): State<Arc<Inner>>) -> Response {
    match inner.card_keys() {
        None => StatusCode::NOT_FOUND.into_response(),
        Some(keys) => (
            [
                (header::CACHE_CONTROL, CARD_MAX_AGE),
                (header::CONTENT_TYPE, "application/jwk-set+json"),
            ],
            keys.jwks().to_string(),
        )
            .into_response(),
    }
}

/// The address a request came from and the number of its connection, as the
/// server's accept loop put them in the request's extensions (never a header a client
/// could write).
#[derive(Debug, Clone, Copy)]
pub(super) struct Peer {
    pub ip: std::net::IpAddr,
    pub connection: u64,
}

/// The layer in front of every binding (the cards and the signing keys stay public):
/// the request's credentials checked, when the server requires some, and its
/// [`Caller`](super::Caller) — calling from the peer the accept loop recorded — put in
/// its extensions for the binding. A request without the credentials the server takes
/// is refused here, before any binding reads it, whatever its path: HTTP 401 with an
/// RFC 6750 challenge, or over gRPC the challenge as an `UNAUTHENTICATED` status.
pub(super) async fn authenticate(
    State(inner): State<Arc<Inner>>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let caller = match &inner.config.auth {
        Some(auth) if !auth.is_empty() => match auth.authenticate(request.headers()).await {
            Ok(caller) => caller,
            Err(refusal) => return refused(&inner, &request, auth.challenge(&refusal)),
        },
        _ => super::auth::Caller::anonymous(),
    };
    let caller = match request.extensions().get::<Peer>() {
        Some(p) => caller.with_peer(Some(p.ip), p.connection),
        None => caller,
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The refusal of `request` (`challenge`), as its binding says it, marked for the
/// observer under the generation the request names (its body is not read).
fn refused(inner: &Inner, request: &axum::extract::Request, challenge: Response) -> Response {
    use super::observe::Answered;
    let path = request.uri().path();
    #[cfg(feature = "grpc")]
    if inner.config.serves_grpc()
        && let Some(method) = super::grpc::method_of(path)
    {
        return super::grpc::refused(method, &challenge);
    }
    let status = challenge.status().as_u16();
    if path == inner.config.rpc_path {
        let asked = super::version::requested(request.headers(), request.uri().query())
            .unwrap_or(Version::V0_3);
        return Answered::refused(BINDING_JSONRPC, asked, status).on(challenge);
    }
    Answered::refused(BINDING_HTTP_JSON, Version::V1_0, status).on(challenge)
}

/// Why a body could not be read: too large, or broken off.
pub(super) enum BodyError {
    TooLarge(RpcError),
    Unreadable(RpcError),
}

/// A request's body, and its turn when the body is large: hold it while the request is
/// parsed and handled.
pub(super) struct ReadBody {
    pub bytes: Bytes,
    pub _turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl std::ops::Deref for ReadBody {
    type Target = Bytes;
    fn deref(&self) -> &Bytes {
        &self.bytes
    }
}

/// The request body, at most `ServerConfig::max_body_bytes`; a large one (by its
/// `Content-Length`, or one sent without) waits for its turn before it is read, so that
/// large requests are read and parsed one at a time.
pub(super) async fn read_body(
    inner: &Inner,
    headers: &HeaderMap,
    body: Body,
) -> Result<ReadBody, BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .or_else(|| axum::body::HttpBody::size_hint(&body).exact());
    let turn = if declared.is_none_or(|n| n > super::LARGE_BODY as u64) {
        inner.large_bodies.clone().acquire_owned().await.ok()
    } else {
        None
    };
    let bytes = read_bytes(inner, body).await?;
    Ok(ReadBody { bytes, _turn: turn })
}

async fn read_bytes(inner: &Inner, body: Body) -> Result<Bytes, BodyError> {
    let limit = inner.config.max_body_bytes;
    let wait = inner.config.header_read_timeout;
    let read = http_body_util::Limited::new(body, limit).collect();
    let Ok(read) = tokio::time::timeout(wait, read).await else {
        return Err(BodyError::Unreadable(RpcError::invalid_request(format!(
            "the request body did not arrive within {} s",
            wait.as_secs()
        ))));
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(BodyError::TooLarge(RpcError::invalid_request(format!(
                "the request body exceeds the limit of {limit} bytes"
            ))))
        }
        Err(e) => Err(BodyError::Unreadable(RpcError::invalid_request(format!(
            "cannot read the request body: {e}"
        )))),
    }
}

/// A JSON response of `content_type`.
pub(super) fn json_with<T: Serialize>(
    status: StatusCode,
    content_type: &'static str,
    body: &T,
) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(e) => {
            warn!(error = %e, "cannot serialize a response");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, content_type)],
                r#"{"error":{"code":-32603,"message":"cannot serialize the response"}}"#,
            )
                .into_response()
        }
    }
}

/// The `Last-Event-ID` header: the number of the last event a reconnecting client saw.
/// ContentTypeNotSupported (-32005) when the request's `Accept` leaves out
/// `text/event-stream`, which a streaming method answers with. No `Accept`, `*/*` and
/// `text/*` take it.
pub(super) fn accepts_event_stream(headers: &HeaderMap) -> Result<(), RpcError> {
    let ranges: Vec<String> = headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|r| {
            r.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|r| !r.is_empty())
        .collect();
    if ranges.is_empty()
        || ranges
            .iter()
            .any(|r| matches!(r.as_str(), "text/event-stream" | "text/*" | "*/*"))
    {
        return Ok(());
    }
    Err(RpcError::content_type_not_supported(format!(
        "this method answers with text/event-stream, which Accept ({}) does not take",
        crate::log::untrusted(&ranges.join(", "))
    )))
}

pub(super) fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, RpcError> {
    let Some(v) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or("").trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        RpcError::invalid_request(format!(
            "the Last-Event-ID header must be the id of an event of this task's stream (a number), got {:?}",
            text.chars().take(32).collect::<String>()
        ))
    })
}

pub(super) type SseStream =
    std::pin::Pin<Box<dyn Stream<Item = Result<Event, std::convert::Infallible>> + Send>>;

pub(super) fn sse_response(stream: SseStream, keep_alive: Duration) -> Response {
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}

/// One SSE event carrying `data`, with `id:` set to the event's number in the task's
/// log when it has one (what a client reconnects with, as `Last-Event-ID`).
pub(super) fn sse_event(data: String, seq: u64) -> Event {
    let event = Event::default().data(data);
    if seq > 0 {
        event.id(seq.to_string())
    } else {
        event
    }
}

/// Whether a `Content-Type` is JSON: `application/json` or `application/a2a+json`, with
/// or without parameters.
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| {
            let essence = m.essence_str();
            essence == "application/json" || essence == "application/a2a+json"
        })
}

/// The error for a body that is not JSON (`ContentTypeNotSupportedError`, spec §5.4): a
/// browser's form or `text/plain` POST, which needs no CORS preflight, never runs
/// anything.
pub(super) fn not_json() -> RpcError {
    RpcError::content_type_not_supported(
        "the request body must be JSON, sent with Content-Type application/json or application/a2a+json",
    )
}

/// Refuses requests from a web page of a foreign origin unless it is allowed, answers
/// the CORS preflight of allowed ones, and marks their responses. A request without
/// `Origin` (every non-browser client) and one from the server's own origin pass.
pub(super) async fn browser_guard(
    allowed: Arc<Vec<String>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_owned)
    else {
        return next.run(req).await;
    };
    let own = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|host| {
            origin.eq_ignore_ascii_case(&format!("http://{host}"))
                || origin.eq_ignore_ascii_case(&format!("https://{host}"))
        });
    if own {
        return next.run(req).await;
    }
    if !allowed.iter().any(|a| a.eq_ignore_ascii_case(&origin)) {
        let error = RpcError::new(
            crate::ErrorCode::INVALID_REQUEST,
            format!(
                "requests from web pages of {} are not allowed here (`cors_origins` lists the allowed ones)",
                crate::log::untrusted(&origin)
            ),
        );
        return json_with(
            StatusCode::FORBIDDEN,
            "application/json",
            &RpcResponse::error(RequestId::Null, error),
        );
    }
    let value = axum::http::HeaderValue::from_str(&origin).ok();
    if req.method() == axum::http::Method::OPTIONS {
        let mut resp = StatusCode::NO_CONTENT.into_response();
        let h = resp.headers_mut();
        if let Some(v) = value {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        }
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            axum::http::HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            axum::http::HeaderValue::from_static(
                "content-type, authorization, a2a-version, a2a-extensions, last-event-id, x-api-key",
            ),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            axum::http::HeaderValue::from_static("600"),
        );
        h.insert(header::VARY, axum::http::HeaderValue::from_static("origin"));
        return resp;
    }
    let mut resp = next.run(req).await;
    if let Some(v) = value {
        resp.headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        resp.headers_mut()
            .insert(header::VARY, axum::http::HeaderValue::from_static("origin"));
    }
    resp
}

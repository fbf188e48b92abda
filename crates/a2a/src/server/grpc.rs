//! The gRPC binding (spec §10): `lf.a2a.v1.A2AService` on the same port as the other
//! bindings (HTTP/2: h2c on plain TCP, ALPN with TLS), with tonic doing gRPC's framing,
//! compression, deadlines and status trailers.
//!
//! No new semantics: each call's message is decoded into the proto's generated type and
//! handed to the same v1.0 operations the JSON bindings use (`super::v1`, on the same
//! messages they read from ProtoJSON); their answer is encoded back. Errors are
//! the spec's mapping (§10.6): the gRPC status of the A2A error, with a
//! `google.rpc.Status` holding its `ErrorInfo` (and `BadRequest` for a bad field) in
//! `grpc-status-details-bin`. Metadata carries what headers carry on HTTP: the
//! credentials, `a2a-version` (only 1.0 is spoken here), `a2a-extensions`.

use std::pin::Pin;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use prost::Message as _;
use serde_json::Value;
use tonic::server::{Grpc, ServerStreamingService, UnaryService};
use tonic::{Code, Status};
use tracing::{Instrument, info_span};

use super::auth::Caller;
use super::handler::StreamRequest;
use super::observe::Answered;
use super::{Inner, live_events, version};
use crate::proto::pb as w;
use crate::v1::error as v1_error;
use crate::{Method, RpcError, Version, proto};

/// The path prefix of the service's methods (`/lf.a2a.v1.A2AService/SendMessage`).
pub const PATH: &str = "/lf.a2a.v1.A2AService/{method}";

/// Every call to `/lf.a2a.v1.A2AService/{method}`, its answer marked for the server's
/// observer: the method (`unknown` for a name that is none), and the A2A error the
/// status carries (or, for a failure of gRPC itself, its status code).
pub(super) async fn serve(
    State(inner): State<Arc<Inner>>,
    Path(name): Path<String>,
    request: axum::http::Request<Body>,
) -> Response {
    let response = call(inner, &name, request).await;
    let code =
        response.extensions().get::<Status>().map(|status| {
            match std::error::Error::source(status).and_then(|e| e.downcast_ref::<RpcError>()) {
                Some(e) => e.code,
                None => crate::ErrorCode(status.code() as i64),
            }
        });
    let method = Method::parse_v1(&name).map_or("unknown", Method::v1_name);
    Answered::new(method, crate::v1::BINDING_GRPC, Version::V1_0, code).on(response)
}

async fn call(inner: Arc<Inner>, name: &str, request: axum::http::Request<Body>) -> Response {
    let Some(rpc) = proto::rpc(name) else {
        return status_only(Status::unimplemented(format!(
            "{} has no method {name:?}",
            proto::SERVICE
        )));
    };
    let Some(method) = Method::parse_v1(name) else {
        return status_only(Status::unimplemented(format!("{name} is not served")));
    };
    let headers = request.headers().clone();
    // Put there by the layer that authenticates every binding's requests.
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return status_only(Status::internal("the request was not authenticated"));
    };
    if let Err(e) = check(&inner, &headers) {
        return status_only(to_status(&e));
    }
    // The client's deadline (`grpc-timeout`) bounds the whole call, a stream's life too;
    // the agent learns it with the caller.
    let deadline = deadline(&headers);
    let call = Call {
        inner: inner.clone(),
        method,
        rpc,
        caller: caller.with_deadline(deadline),
        headers,
    };
    let span = info_span!(
        "grpc",
        method = %name,
        otel.name = %name,
        otel.kind = "server",
        "rpc.system" = "grpc",
        "a2a.method.name" = %name,
        "a2a.protocol.version" = Version::V1_0.as_str(),
    );
    inner.config.trace_parent.adopt(&call.headers, &span);
    let mut grpc = Grpc::new(proto::Raw).max_decoding_message_size(inner.config.max_body_bytes);
    let streaming = rpc.streaming;
    let response = async {
        if streaming {
            grpc.server_streaming(call, request).await
        } else {
            grpc.unary(call, request).await
        }
    }
    .instrument(span);
    match deadline {
        None => response.await.map(Body::new).into_response(),
        Some(d) => match tokio::time::timeout(d, response).await {
            Ok(response) if streaming => {
                let (parts, body) = response.into_parts();
                Response::from_parts(parts, Body::new(Deadlined::new(body, d)))
            }
            Ok(response) => response.map(Body::new).into_response(),
            Err(_) => status_only(Status::deadline_exceeded(format!(
                "the call's deadline ({d:?}) passed"
            ))),
        },
    }
}

/// The `grpc-timeout` a call carries (gRPC's HTTP/2 protocol: a number of at most eight
/// digits and its unit, `H`, `M`, `S`, `m`, `u` or `n`).
fn deadline(headers: &HeaderMap) -> Option<std::time::Duration> {
    use std::time::Duration;
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// A streaming answer's body that ends at the call's deadline, with the
/// `DEADLINE_EXCEEDED` status as its trailers.
struct Deadlined {
    body: tonic::body::Body,
    sleep: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

impl Deadlined {
    fn new(body: tonic::body::Body, after: std::time::Duration) -> Deadlined {
        Deadlined {
            body,
            sleep: Box::pin(tokio::time::sleep(after)),
            done: false,
        }
    }
}

impl http_body::Body for Deadlined {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Status>>> {
        use std::task::Poll;
        if self.done {
            return Poll::Ready(None);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.done = true;
            let status = Status::deadline_exceeded("the call's deadline passed");
            let mut trailers = axum::http::HeaderMap::new();
            if status.add_header(&mut trailers).is_err() {
                return Poll::Ready(None);
            }
            return Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers))));
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    // Forwarded: a trailers-only answer (an error before any message) must end in its
    // HEADERS frame, which HTTP/2 does only for a body known to be empty.
    fn is_end_stream(&self) -> bool {
        self.done || self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The method a request's path names, when it is one of the service's
/// (`/lf.a2a.v1.A2AService/SendMessage`: `SendMessage`).
pub(super) fn method_of(path: &str) -> Option<&str> {
    let service = PATH.strip_suffix("{method}")?;
    path.strip_prefix(service).filter(|m| !m.contains('/'))
}

/// A call refused for its credentials (`challenge`, as the HTTP bindings answer it):
/// `UNAUTHENTICATED`, saying what they would say in `WWW-Authenticate`; marked for the
/// observer as [`serve`] marks an answer.
pub(super) fn refused(name: &str, challenge: &Response) -> Response {
    let said = challenge
        .headers()
        .get(axum::http::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("credentials are required");
    let e = RpcError::new(
        super::UNAUTHENTICATED,
        format!("send credentials as `authorization` metadata ({said})"),
    );
    let method = Method::parse_v1(name).map_or("unknown", Method::v1_name);
    Answered::new(method, crate::v1::BINDING_GRPC, Version::V1_0, Some(e.code))
        .on(status_only(to_status(&e)))
}

/// A gRPC answer with no message: the status alone, in headers (a "trailers-only"
/// response).
fn status_only(status: Status) -> Response {
    status.into_http::<Body>().into_response()
}

/// What a request must satisfy before its method runs: v1.0 (the only generation gRPC
/// carries), a generation this server serves, the extensions the card requires.
fn check(inner: &Inner, headers: &HeaderMap) -> Result<(), RpcError> {
    // Without `a2a-version`, a gRPC call is v1.0: the binding has no other generation.
    let asked = match headers.get("a2a-version") {
        None => Version::V1_0,
        Some(_) => version::requested(headers, None)?,
    };
    if asked != Version::V1_0 {
        return Err(RpcError::version_not_supported(
            asked.as_str(),
            &[Version::V1_0.as_str()],
        ));
    }
    inner.config.generations.check(Version::V1_0)?;
    version::check_extensions(&inner.cards().card, headers)
}

/// One call: what it is, who makes it, and the message types it takes and gives.
#[derive(Clone)]
struct Call {
    inner: Arc<Inner>,
    method: Method,
    rpc: &'static proto::Rpc,
    caller: Caller,
    headers: HeaderMap,
}

impl Call {
    /// The request message, decoded.
    fn decode<T: prost::Message + Default>(&self, bytes: &[u8]) -> Result<T, RpcError> {
        T::decode(bytes).map_err(|e| {
            RpcError::invalid_params("request", format!("not a {}: {e}", self.rpc.request))
        })
    }

    /// The caller acting in the tenant a request names.
    fn caller_in(&self, tenant: &str) -> Result<Caller, RpcError> {
        let tenant = (!tenant.is_empty()).then_some(tenant);
        let authorize = self.inner.config.authorizer();
        self.caller.clone().in_tenant(tenant, authorize)
    }

    /// A unary method: its request decoded, the operation run, its answer encoded.
    async fn unary(&self, bytes: &[u8]) -> Result<Bytes, RpcError> {
        let inner = &self.inner;
        fn encode<T: prost::Message>(answer: &T) -> Bytes {
            Bytes::from(answer.encode_to_vec())
        }
        Ok(match self.method {
            Method::SendMessage => {
                let r: w::SendMessageRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::send(inner, r, &caller).await?)
            }
            Method::GetTask => {
                let r: w::GetTaskRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::get(inner, r, &caller).await?)
            }
            Method::ListTasks => {
                let r: w::ListTasksRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::list(inner, r, &caller).await?.0)
            }
            Method::CancelTask => {
                let r: w::CancelTaskRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::cancel(inner, r, &caller).await?)
            }
            Method::SetPushConfig => {
                let r: w::TaskPushNotificationConfig = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::create_push(inner, r, &caller).await?)
            }
            Method::GetPushConfig => {
                let r: w::GetTaskPushNotificationConfigRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::get_push(inner, r, &caller).await?)
            }
            Method::ListPushConfig => {
                let r: w::ListTaskPushNotificationConfigsRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                encode(&super::v1::list_push(inner, r, &caller).await?)
            }
            Method::DeletePushConfig => {
                let r: w::DeleteTaskPushNotificationConfigRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                super::v1::delete_push(inner, r, &caller).await?;
                encode(&crate::proto::json::Empty)
            }
            Method::GetAuthenticatedExtendedCard => {
                let r: w::GetExtendedAgentCardRequest = self.decode(bytes)?;
                let caller = self.caller_in(&r.tenant)?;
                // As published (signed over its v1.0 reading), read back as the message.
                let card = super::v1::extended_card(inner, &caller)?;
                encode(&w::AgentCard::from_json(card).map_err(RpcError::internal)?)
            }
            Method::SendStreamingMessage | Method::Resubscribe => {
                return Err(RpcError::internal(
                    "a streaming method reached the unary path",
                ));
            }
        })
    }

    /// A streaming method's request, as the handler opens its stream, and the caller.
    fn stream_request(&self, bytes: &[u8]) -> Result<(StreamRequest, Caller), RpcError> {
        if self.method == Method::SendStreamingMessage {
            let r: w::SendMessageRequest = self.decode(bytes)?;
            let caller = self.caller_in(&r.tenant)?;
            Ok((super::v1::stream_message(r), caller))
        } else {
            let r: w::SubscribeToTaskRequest = self.decode(bytes)?;
            let caller = self.caller_in(&r.tenant)?;
            Ok((super::v1::subscribe(r, None)?, caller))
        }
    }
}

impl UnaryService<Bytes> for Call {
    type Response = Bytes;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Bytes>, Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.clone();
        Box::pin(async move {
            match call.unary(request.get_ref()).await {
                Ok(bytes) => Ok(tonic::Response::new(bytes)),
                Err(e) => Err(to_status(&e)),
            }
        })
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<Bytes, Status>> + Send>>;

impl ServerStreamingService<Bytes> for Call {
    type Response = Bytes;
    type ResponseStream = Events;
    type Future = Pin<Box<dyn Future<Output = Result<tonic::Response<Events>, Status>> + Send>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.clone();
        Box::pin(async move {
            let opened = async {
                let (stream_request, caller) = call.stream_request(request.get_ref())?;
                call.inner
                    .open_stream(call.method, stream_request, &caller)
                    .await
            }
            .await;
            let (task_id, sub, after) = match opened {
                Ok(opened) => opened,
                Err(e) => {
                    return Err(to_status(&e));
                }
            };
            let events = live_events(call.inner.clone(), task_id, sub, after).map(|item| {
                let event = item.map_err(|e| to_status(&e))?;
                Ok(Bytes::from(event.1.response_bytes()))
            });
            Ok(tonic::Response::new(Box::pin(events) as Events))
        })
    }
}

/// gRPC's status of an A2A error (§10.6), with its `google.rpc.Status` details: the
/// `ErrorInfo` every binding carries, and a `BadRequest` naming a bad field.
pub(crate) fn to_status(e: &RpcError) -> Status {
    let (_, _, grpc) = v1_error::mapping(e.code);
    let code = match grpc {
        "NOT_FOUND" => Code::NotFound,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        "PERMISSION_DENIED" => Code::PermissionDenied,
        "UNIMPLEMENTED" => Code::Unimplemented,
        "UNAVAILABLE" => Code::Unavailable,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        _ => Code::Internal,
    };
    let details = v1_error::details(e)
        .into_iter()
        .filter_map(|detail| any_of(&detail))
        .collect();
    let status = rpc::Status {
        code: code as i32,
        message: e.message.clone(),
        details,
    };
    let mut status =
        Status::with_details(code, e.message.clone(), Bytes::from(status.encode_to_vec()));
    // The A2A error itself, for the server's observer (see `serve`).
    status.set_source(Arc::new(e.clone()));
    status
}

/// A detail of the JSON form (`{"@type": …, …}`) as a `google.protobuf.Any`.
fn any_of(detail: &Value) -> Option<rpc::Any> {
    let type_url = detail.get("@type")?.as_str()?.to_owned();
    let value = match type_url.rsplit('/').next()? {
        "google.rpc.ErrorInfo" => rpc::ErrorInfo {
            reason: detail["reason"].as_str().unwrap_or_default().to_owned(),
            domain: detail["domain"].as_str().unwrap_or_default().to_owned(),
            metadata: detail["metadata"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default(),
        }
        .encode_to_vec(),
        "google.rpc.BadRequest" => rpc::BadRequest {
            field_violations: detail["fieldViolations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| rpc::FieldViolation {
                    field: v["field"].as_str().unwrap_or_default().to_owned(),
                    description: v["description"].as_str().unwrap_or_default().to_owned(),
                })
                .collect(),
        }
        .encode_to_vec(),
        _ => return None,
    };
    Some(rpc::Any { type_url, value })
}

/// `google.rpc.Status` and the details carried in it (google/rpc/status.proto,
/// error_details.proto), as prost messages.
mod rpc {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Status {
        #[prost(int32, tag = "1")]
        pub code: i32,
        #[prost(string, tag = "2")]
        pub message: String,
        #[prost(message, repeated, tag = "3")]
        pub details: Vec<Any>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Any {
        #[prost(string, tag = "1")]
        pub type_url: String,
        #[prost(bytes = "vec", tag = "2")]
        pub value: Vec<u8>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ErrorInfo {
        #[prost(string, tag = "1")]
        pub reason: String,
        #[prost(string, tag = "2")]
        pub domain: String,
        #[prost(btree_map = "string, string", tag = "3")]
        pub metadata: std::collections::BTreeMap<String, String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BadRequest {
        #[prost(message, repeated, tag = "1")]
        pub field_violations: Vec<FieldViolation>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FieldViolation {
        #[prost(string, tag = "1")]
        pub field: String,
        #[prost(string, tag = "2")]
        pub description: String,
    }
}

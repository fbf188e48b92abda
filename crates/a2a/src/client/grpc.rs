//! The gRPC binding, client side: calls to `lf.a2a.v1.A2AService` over tonic, with the
//! same proto messages the other v1.0 bindings send as ProtoJSON (`crate::proto::pb`),
//! here encoded as bytes, so a gRPC agent is called with exactly the semantics of a
//! JSON-RPC one.
//!
//! One HTTP/2 connection per interface (h2c for `http://`, TLS with the public
//! authorities for `https://`), kept by the client. This client's headers (credentials,
//! extensions, trace context) go as metadata, with `a2a-version: 1.0`; the client's
//! timeout bounds each call (a stream's opening). A status whose `google.rpc.Status`
//! names an A2A error (its `ErrorInfo` reason) is that error; `UNAUTHENTICATED` reads as
//! HTTP 401, so a refused token is fetched again as on the other bindings.

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;
use futures::StreamExt;
use prost::Message;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status};

use super::check;
use super::{A2aClient, ClientError, ClientTls, EventStream, Interface};
use crate::proto::pb as v1t;
use crate::v1::error as v1_error;
use crate::{Method, RpcError, proto};

/// The connections of a client, one per interface URL.
#[derive(Default)]
pub(super) struct Channels(Mutex<HashMap<String, Channel>>);

impl Channels {
    fn get(&self, url: &str, tls: Option<&ClientTls>) -> Result<Channel, ClientError> {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = all.get(url) {
            return Ok(c.clone());
        }
        let invalid = |detail: String| ClientError::InvalidUrl {
            url: url.to_owned(),
            detail,
        };
        let mut endpoint =
            Endpoint::from_shared(url.to_owned()).map_err(|e| invalid(e.to_string()))?;
        if url.starts_with("https://") {
            let mut config = ClientTlsConfig::new();
            config = match tls.and_then(|t| t.ca_pem.as_ref()) {
                Some(ca) => config.ca_certificate(Certificate::from_pem(ca)),
                None => config.with_webpki_roots(),
            };
            if let Some((cert, key)) = tls.and_then(|t| t.identity_pem.as_ref()) {
                config = config.identity(Identity::from_pem(cert, key));
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| invalid(e.to_string()))?;
        }
        let channel = endpoint
            .connect_timeout(std::time::Duration::from_secs(10))
            .connect_lazy();
        all.insert(url.to_owned(), channel.clone());
        Ok(channel)
    }
}

impl A2aClient {
    /// `method` with `request` over gRPC at `at`.
    pub(super) async fn grpc<Req: Message, Resp: Message + Default>(
        &self,
        at: &Interface,
        method: Method,
        request: &Req,
    ) -> Result<Resp, ClientError> {
        let body = self.grpc_request(request)?;
        let name = method.v1_name();
        let answer = self
            .bounded(&at.url, async {
                let (mut grpc, path) = self.grpc_ready(at, name).await?;
                grpc.unary(body, path, proto::Raw)
                    .await
                    .map_err(|s| from_status(&at.url, &s))
            })
            .await?;
        Resp::decode(answer.get_ref().as_ref())
            .map_err(|e| ClientError::protocol(&at.url, format!("{name}'s answer: {e}")))
    }

    /// A streaming `method` over gRPC at `at`: its `StreamResponse`s as events.
    pub(super) async fn grpc_stream<Req: Message>(
        &self,
        at: &Interface,
        method: Method,
        request: &Req,
    ) -> Result<EventStream, ClientError> {
        let body = self.grpc_request(request)?;
        let name = method.v1_name();
        let stream = self
            .bounded(&at.url, async {
                let (mut grpc, path) = self.grpc_ready(at, name).await?;
                grpc.server_streaming(body, path, proto::Raw)
                    .await
                    .map_err(|s| from_status(&at.url, &s))
            })
            .await?
            .into_inner();
        let url = at.url.clone();
        let idle = self.config.stream_idle_timeout;
        let events = stream.map(move |item| {
            let bytes = item.map_err(|s| from_status(&url, &s))?;
            let event = v1t::StreamResponse::decode(bytes.as_ref())
                .map_err(|e| ClientError::protocol(&url, format!("a stream event: {e}")))?;
            check::event(event)
                .map_err(|e| ClientError::protocol(&url, format!("a stream event at {e}")))
        });
        Ok(match idle {
            // A stream that says nothing for this long is taken as broken.
            Some(idle) => {
                let url = at.url.clone();
                Box::pin(tokio_stream_timeout(events, idle).map(move |r| match r {
                    Ok(item) => item,
                    Err(()) => Err(ClientError::Timeout {
                        url: url.clone(),
                        timeout: idle,
                    }),
                }))
            }
            None => Box::pin(events),
        })
    }

    /// A gRPC client on `at`'s connection, ready for a call, and the path of method
    /// `name`.
    async fn grpc_ready(
        &self,
        at: &Interface,
        name: &str,
    ) -> Result<(tonic::client::Grpc<Channel>, PathAndQuery), ClientError> {
        let channel = self.channels.get(&at.url, self.config.grpc_tls.as_ref())?;
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready()
            .await
            .map_err(|e| transport(&at.url, e.to_string()))?;
        Ok((grpc, path(name)?))
    }

    /// The request as its binary message, with this client's headers as metadata.
    fn grpc_request<Req: Message>(
        &self,
        request: &Req,
    ) -> Result<tonic::Request<Bytes>, ClientError> {
        let mut request = tonic::Request::new(Bytes::from(request.encode_to_vec()));
        let left = (self.deadline).map(|d| d.saturating_duration_since(std::time::Instant::now()));
        request.set_timeout(left.map_or(self.config.timeout, |l| l.min(self.config.timeout)));
        let metadata = request.metadata_mut();
        for (name, value) in self.headers.iter() {
            let key = name.as_str();
            // Connection-level and HTTP/1 headers have no place in gRPC metadata.
            if matches!(
                key,
                "content-type" | "te" | "user-agent" | "host" | "connection"
            ) {
                continue;
            }
            if let (Ok(k), Ok(v)) = (
                tonic::metadata::AsciiMetadataKey::from_bytes(key.as_bytes()),
                tonic::metadata::AsciiMetadataValue::try_from(value.as_bytes()),
            ) {
                metadata.insert(k, v);
            }
        }
        metadata.insert(
            "a2a-version",
            tonic::metadata::AsciiMetadataValue::from_static("1.0"),
        );
        Ok(request)
    }
}

/// Ends a stream with `Err(())` when `idle` passes without an item.
fn tokio_stream_timeout<S: futures::Stream + Send + 'static>(
    stream: S,
    idle: std::time::Duration,
) -> impl futures::Stream<Item = Result<S::Item, ()>> + Send
where
    S::Item: Send,
{
    futures::stream::unfold((Box::pin(stream), false), move |(mut s, done)| async move {
        if done {
            return None;
        }
        match tokio::time::timeout(idle, s.next()).await {
            Ok(Some(item)) => Some((Ok(item), (s, false))),
            Ok(None) => None,
            Err(_) => Some((Err(()), (s, true))),
        }
    })
}

fn path(name: &str) -> Result<PathAndQuery, ClientError> {
    PathAndQuery::try_from(format!("/{}/{name}", proto::SERVICE))
        .map_err(|e| ClientError::Config(e.to_string()))
}

fn transport(url: &str, detail: String) -> ClientError {
    ClientError::Transport {
        url: url.to_owned(),
        detail,
    }
}

/// What a gRPC status says: the A2A error its details name, else the nearest.
fn from_status(url: &str, status: &Status) -> ClientError {
    if status.code() == Code::Unauthenticated {
        return ClientError::HttpStatus {
            url: url.to_owned(),
            status: 401,
            body: status.message().to_owned(),
        };
    }
    if matches!(status.code(), Code::Unavailable | Code::Unknown) && status.details().is_empty() {
        return transport(url, format!("{}: {}", status.code(), status.message()));
    }
    if status.code() == Code::DeadlineExceeded {
        return transport(
            url,
            format!("the call's deadline passed: {}", status.message()),
        );
    }
    let reason = rpc_status_reason(status.details());
    let code = reason
        .as_deref()
        .and_then(v1_error::code_of_reason)
        .unwrap_or(match status.code() {
            Code::NotFound => crate::ErrorCode::TASK_NOT_FOUND,
            Code::InvalidArgument => crate::ErrorCode::INVALID_PARAMS,
            Code::Unimplemented => crate::ErrorCode::METHOD_NOT_FOUND,
            Code::FailedPrecondition => crate::ErrorCode::UNSUPPORTED_OPERATION,
            Code::PermissionDenied => crate::ErrorCode::PERMISSION_DENIED,
            Code::ResourceExhausted => crate::ErrorCode::RESOURCE_EXHAUSTED,
            _ => crate::ErrorCode::INTERNAL_ERROR,
        });
    ClientError::Rpc(RpcError::new(code, status.message().to_owned()))
}

/// The `ErrorInfo.reason` in an encoded `google.rpc.Status`, if it has one.
fn rpc_status_reason(details: &[u8]) -> Option<String> {
    #[derive(Clone, PartialEq, prost::Message)]
    struct RpcStatus {
        #[prost(message, repeated, tag = "3")]
        details: Vec<Any>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct Any {
        #[prost(string, tag = "1")]
        type_url: String,
        #[prost(bytes = "vec", tag = "2")]
        value: Vec<u8>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct ErrorInfo {
        #[prost(string, tag = "1")]
        reason: String,
    }
    let status = RpcStatus::decode(details).ok()?;
    status
        .details
        .iter()
        .find(|d| d.type_url.ends_with("google.rpc.ErrorInfo"))
        .and_then(|d| ErrorInfo::decode(d.value.as_slice()).ok())
        .map(|info| info.reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_told_as_an_a2a_error_not_a_json_rpc_one() {
        let err = from_status("http://agent", &Status::not_found("no task t1"));
        let text = err.to_string();
        assert!(matches!(&err, ClientError::Rpc(e) if e.code == crate::ErrorCode::TASK_NOT_FOUND));
        assert!(
            text.starts_with("the agent answered with error -32001")
                && text.ends_with("no task t1"),
            "{text}"
        );
        assert!(!text.contains("JSON-RPC"), "{text}");
    }
}

//! A streaming answer's SSE body as a stream of the model's events, whatever carried
//! it: JSON-RPC responses of v0.3 (read into the model) or v1.0 (the request's id
//! checked), or HTTP+JSON's bare `StreamResponse`s and `{"error": google.rpc.Status}`;
//! a v1.0 event is checked as every answer is ([`check`]). The check of a JSON-RPC
//! response's envelope and id (`decode_response`) lives here too: the JSON-RPC binding's
//! unary calls use it as its stream events do.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use serde_json::Value;
use tokio::time::Sleep;

use super::http::{content_type, decode_result};
use super::send::Response;
use super::{A2aClient, ClientError, EventStream, check};
use crate::Version;
use crate::jsonrpc::RequestId;
use crate::jsonrpc::read_response;
use crate::sse::{SseDecoder, SseEvent};
use crate::types::{StreamEvent, StreamResponse};
#[cfg(feature = "v0_3")]
use crate::v0_3::{self as w, convert};

/// How each event of a stream is framed.
#[derive(Debug, Clone)]
pub(super) enum Framing {
    /// A JSON-RPC response to the request with this id, of this generation.
    JsonRpc(RequestId, Version),
    /// HTTP+JSON: the event itself.
    HttpJson,
}

impl A2aClient {
    /// The SSE body of `resp` as events, once its media type is checked.
    pub(super) fn events(
        &self,
        url: String,
        framing: Framing,
        resp: Response,
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
}

/// Decodes an SSE body into events; ends after the first error.
pub(super) fn sse_events(
    url: String,
    framing: Framing,
    resp: Response,
    max_event_bytes: usize,
    idle: Option<Duration>,
) -> EventStream {
    Box::pin(SseEvents {
        url,
        framing,
        body: resp,
        decoder: SseDecoder::new(max_event_bytes),
        pending: VecDeque::new(),
        idle,
        timer: None,
        armed: false,
        done: false,
    })
}

/// An SSE body read as events. A `Stream` by hand rather than an `unfold`: that would
/// move its state into a new future at every event.
struct SseEvents {
    url: String,
    framing: Framing,
    body: Response,
    decoder: SseDecoder,
    /// Events read from the body and not yet taken.
    pending: VecDeque<SseEvent>,
    /// The longest wait for the body's next piece.
    idle: Option<Duration>,
    /// The `idle` timer, made at the first wait and set again at each.
    timer: Option<Pin<Box<Sleep>>>,
    /// Whether the timer runs: from the first time the body has nothing to give to the
    /// next piece it gives.
    armed: bool,
    done: bool,
}

impl Stream for SseEvents {
    type Item = Result<StreamEvent, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let st = self.get_mut();
        loop {
            if st.done {
                return Poll::Ready(None);
            }
            if let Some(ev) = st.pending.pop_front() {
                let item = decode_event(&st.url, &st.framing, &ev.data);
                if item.is_err() {
                    st.done = true;
                }
                return Poll::Ready(Some(item));
            }
            let chunk = match st.body.poll_chunk(cx) {
                Poll::Ready(chunk) => chunk,
                Poll::Pending => return st.wait(cx),
            };
            st.armed = false;
            match chunk {
                Ok(None) => {
                    st.done = true;
                    return Poll::Ready(None);
                }
                Err(e) => {
                    st.done = true;
                    return Poll::Ready(Some(Err(ClientError::broke_off(&st.url, e))));
                }
                Ok(Some(chunk)) => match st.decoder.feed(&chunk) {
                    Ok(events) => st.pending.extend(events),
                    Err(e) => {
                        st.done = true;
                        let e = ClientError::protocol(&st.url, e.to_string());
                        return Poll::Ready(Some(Err(e)));
                    }
                },
            }
        }
    }
}

impl SseEvents {
    /// The body has nothing to give now: waits for it, or for the idle timer.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamEvent, ClientError>>> {
        let Some(idle) = self.idle else {
            return Poll::Pending;
        };
        if !self.armed {
            self.armed = true;
            let deadline = tokio::time::Instant::now() + idle;
            match &mut self.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        match self.timer.as_mut().map(|t| t.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                self.done = true;
                Poll::Ready(Some(Err(ClientError::Timeout {
                    url: self.url.clone(),
                    timeout: idle,
                })))
            }
            _ => Poll::Pending,
        }
    }
}

fn decode_event(url: &str, framing: &Framing, data: &str) -> Result<StreamEvent, ClientError> {
    if let Some(event) = decode_typed(framing, data) {
        return Ok(event);
    }
    decode_value(url, framing, data)
}

/// The usual event decoded straight from its text into its type in one pass, with no
/// `Value` between: `None` for anything else (an error, a mismatched id, a malformed
/// event), which [`decode_value`] then reads and explains.
fn decode_typed(framing: &Framing, data: &str) -> Option<StreamEvent> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a, R> {
        #[serde(borrow)]
        jsonrpc: &'a str,
        id: RequestId,
        result: R,
    }
    fn enveloped<'a, R: serde::Deserialize<'a>>(id: &RequestId, data: &'a str) -> Option<R> {
        let envelope: Envelope<'a, R> = serde_json::from_str(data).ok()?;
        (envelope.jsonrpc == "2.0" && envelope.id == *id).then_some(envelope.result)
    }
    match framing {
        #[cfg(feature = "v0_3")]
        Framing::JsonRpc(id, Version::V0_3) => {
            convert::stream_event_in(enveloped::<w::StreamEvent>(id, data)?).ok()
        }
        #[cfg(not(feature = "v0_3"))]
        Framing::JsonRpc(_, Version::V0_3) => None,
        Framing::JsonRpc(id, Version::V1_0) => {
            check::event(enveloped::<StreamResponse>(id, data)?).ok()
        }
        Framing::HttpJson => check::event(serde_json::from_str(data).ok()?).ok(),
    }
}

/// An event read as a `Value` first: its envelope, id and error checked one by one,
/// and what is wrong with it said with where.
fn decode_value(url: &str, framing: &Framing, data: &str) -> Result<StreamEvent, ClientError> {
    let value: Value = serde_json::from_str(data)
        .map_err(|e| ClientError::protocol(url, format!("an SSE event is not JSON: {e}")))?;
    let (result, protocol) = match framing {
        Framing::JsonRpc(id, protocol) => (decode_response(url, id, value)?, *protocol),
        Framing::HttpJson => match value.get("error") {
            Some(status) => {
                return Err(crate::v1::error::from_status(status)
                    .map(ClientError::Rpc)
                    .unwrap_or_else(|| {
                        ClientError::protocol(url, format!("the stream ended with {status}"))
                    }));
            }
            None => (value, Version::V1_0),
        },
    };
    let invalid = |e| ClientError::protocol(url, format!("invalid stream event at {e}"));
    match protocol {
        #[cfg(feature = "v0_3")]
        Version::V0_3 => {
            let event: w::StreamEvent = decode_result(url, "stream event", result)?;
            convert::stream_event_in(event).map_err(invalid)
        }
        #[cfg(not(feature = "v0_3"))]
        Version::V0_3 => Err(super::no_v0_3(url)),
        Version::V1_0 => {
            let event: StreamResponse = decode_result(url, "stream event", result)?;
            check::event(event).map_err(invalid)
        }
    }
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

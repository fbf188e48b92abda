//! Raw JSON-RPC over HTTP for tests that watch the wire itself: one call, or an SSE
//! response read event by event with its ids.

use std::time::Duration;

use a2a::sse::SseDecoder;
use futures::StreamExt;
use serde_json::Value;

/// One JSON-RPC call; the response body.
pub(crate) async fn call(url: &str, body: &Value) -> Value {
    crate::util::http()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// An SSE response read event by event: (id, JSON-RPC result or error).
pub(crate) struct Sse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: SseDecoder,
    ready: std::collections::VecDeque<(Option<u64>, Value)>,
}

impl Sse {
    pub(crate) async fn open(url: &str, body: &Value, last_event_id: Option<u64>) -> Sse {
        let mut req = crate::util::http().post(url).json(body);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        Sse {
            body: resp.bytes_stream().boxed(),
            decoder: SseDecoder::new(1 << 24),
            ready: Default::default(),
        }
    }

    /// The next event, or `None` when the stream ends.
    pub(crate) async fn next(&mut self) -> Option<(Option<u64>, Value)> {
        loop {
            if let Some(e) = self.ready.pop_front() {
                return Some(e);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("an event within 30s")?;
            let Ok(chunk) = chunk else { return None };
            for e in self.decoder.feed(&chunk).unwrap() {
                let v: Value = serde_json::from_str(&e.data).unwrap();
                let id = e.id.map(|i| i.parse().expect("numeric SSE id"));
                self.ready.push_back((id, v));
            }
        }
    }
}

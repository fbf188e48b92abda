//! The two calls of the OpenAI-compatible chat API the orchestrator makes — a chat
//! completion answered whole, and one streamed as server-sent events — over the HTTP
//! client the rest of the application uses. Two JSON shapes and an SSE stream are all
//! of the API we need; a full SDK brought a second version of the HTTP stack and TLS
//! with it.
//!
//! Hostile or broken servers are bounded: no redirect is followed (the key would go
//! with it), an answer past [`MAX_ANSWER`] bytes or an event past [`MAX_EVENT`] bytes
//! is an error, and the caller bounds the time.

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::Value;

use a2a::sse::SseDecoder;

use super::LlmError;

/// The largest whole answer read.
pub(super) const MAX_ANSWER: usize = 4 << 20;
/// The largest event of a streamed answer.
pub(super) const MAX_EVENT: usize = 1 << 20;

/// A client of one API: its base URL (up to and including `/v1`) and key.
pub(super) struct Chat {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
}

/// The part of a completion read: the first choice's text.
#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<CompletionChoice>,
}

#[derive(Deserialize)]
struct CompletionChoice {
    message: Option<Content>,
    delta: Option<Content>,
}

#[derive(Deserialize)]
struct Content {
    content: Option<String>,
}

impl Chat {
    pub(super) fn new(base_url: &str, key: Option<String>) -> Result<Chat, LlmError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| LlmError::Endpoint(format!("cannot build the HTTP client: {e}")))?;
        Ok(Chat {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            key: key.filter(|k| !k.is_empty()),
        })
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response, LlmError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        let response = request
            .send()
            .await
            .map_err(|e| LlmError::Endpoint(format!("{}: {e}", self.url)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = read_bounded(response, 4096).await.unwrap_or_default();
        Err(LlmError::Endpoint(format!(
            "{} answered HTTP {status}: {}",
            self.url,
            String::from_utf8_lossy(&body).trim()
        )))
    }

    /// The text of the first choice of the completion `body` asks for.
    pub(super) async fn complete(&self, body: &Value) -> Result<String, LlmError> {
        let response = self.post(body).await?;
        let bytes = read_bounded(response, MAX_ANSWER).await?;
        let completion: Completion = serde_json::from_slice(&bytes)
            .map_err(|e| LlmError::Malformed(format!("not a chat completion: {e}")))?;
        completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message)
            .and_then(|m| m.content)
            .ok_or_else(|| LlmError::Malformed("the answer has no text".into()))
    }

    /// The pieces of text of the streamed completion `body` asks for (it has
    /// `"stream": true`), as they come.
    pub(super) async fn stream(
        &self,
        body: &Value,
    ) -> Result<BoxStream<'static, Result<String, LlmError>>, LlmError> {
        let response = self.post(body).await?;
        let state = (
            response.bytes_stream().boxed(),
            SseDecoder::new(MAX_EVENT),
            Vec::new(),
        );
        let pieces = futures::stream::unfold(Some(state), |state| async move {
            let (mut bytes, mut decoder, mut ready) = state?;
            loop {
                if !ready.is_empty() {
                    let piece: Result<Option<String>, LlmError> = ready.remove(0);
                    return match piece {
                        Ok(Some(text)) => Some((Ok(text), Some((bytes, decoder, ready)))),
                        // `[DONE]`: the answer is whole.
                        Ok(None) => None,
                        Err(e) => Some((Err(e), None)),
                    };
                }
                match bytes.next().await {
                    None => return None,
                    Some(Err(e)) => {
                        return Some((Err(LlmError::Endpoint(e.to_string())), None));
                    }
                    Some(Ok(chunk)) => match decoder.feed(&chunk) {
                        Err(e) => return Some((Err(LlmError::Malformed(e.to_string())), None)),
                        Ok(events) => ready.extend(events.iter().map(|e| piece(&e.data))),
                    },
                }
            }
        });
        Ok(pieces.boxed())
    }
}

/// The text of one streamed event: `None` for `[DONE]`.
fn piece(data: &str) -> Result<Option<String>, LlmError> {
    if data.trim() == "[DONE]" {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(data)
        .map_err(|e| LlmError::Malformed(format!("a streamed piece is not JSON: {e}")))?;
    if let Some(error) = value.get("error") {
        return Err(LlmError::Endpoint(format!("the model failed: {error}")));
    }
    let chunk: Completion = serde_json::from_value(value)
        .map_err(|e| LlmError::Malformed(format!("not a chat completion chunk: {e}")))?;
    Ok(Some(
        chunk
            .choices
            .iter()
            .filter_map(|c| c.delta.as_ref().and_then(|d| d.content.as_deref()))
            .collect(),
    ))
}

/// The body of `response`, or an error past `limit` bytes.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, LlmError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| LlmError::Endpoint(e.to_string()))?;
        if body.len() + chunk.len() > limit {
            return Err(LlmError::Malformed(format!(
                "the answer is longer than {limit} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::piece;

    #[test]
    fn pieces_of_a_streamed_answer() {
        let chunk = r#"{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#;
        assert_eq!(piece(chunk).unwrap(), Some("Hel".to_owned()));
        assert_eq!(piece(" [DONE]").unwrap(), None);
        assert_eq!(
            piece(r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#).unwrap(),
            Some(String::new())
        );
        assert!(piece(r#"{"error":{"message":"overloaded"}}"#).is_err());
        assert!(piece("not json").is_err());
    }
}

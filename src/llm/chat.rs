//! The OpenAI-compatible chat API through async-openai: its typed requests, answers
//! and streamed chunks, over the reqwest client the rest of the application uses.
//!
//! Hostile or broken servers are bounded: no redirect is followed (the key would go
//! with it), an answer — whole or streamed — past [`MAX_ANSWER`] bytes is an error
//! (the body is read through [`Bounded`], async-openai's tower hook), and the caller
//! bounds the time. Only what `[llm]` says is sent: the key when there is one, no
//! organization or project from the environment ([`Endpoint`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use async_openai::config::Config;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{
    ChatCompletionStreamOptions, CreateChatCompletionRequest, CreateChatCompletionResponse,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use secrecy::SecretString;

use super::{LlmError, Piece};

/// The most bytes of one answer read, whole or streamed.
pub(super) const MAX_ANSWER: usize = 4 << 20;

/// A client of one API.
pub(super) struct Chat {
    http: reqwest::Client,
    endpoint: Endpoint,
    /// `<base>/chat/completions`, for errors.
    url: String,
}

impl Chat {
    /// A client of the API at `base_url` (up to and including `/v1`) with `key`.
    pub(super) fn new(base_url: &str, key: Option<String>) -> Result<Chat, LlmError> {
        let endpoint = Endpoint::new(base_url, key)?;
        let http = a2a::https::reqwest_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| LlmError::Endpoint(format!("cannot build the HTTP client: {e}")))?;
        let url = endpoint.url("/chat/completions");
        Ok(Chat {
            http,
            endpoint,
            url,
        })
    }

    /// async-openai's client for one call, and the flag its answer raises when it runs
    /// past [`MAX_ANSWER`] (which async-openai's errors do not carry). Cheap: a few
    /// reference counts.
    fn call(&self) -> (async_openai::Client<Endpoint>, Arc<AtomicBool>) {
        let too_long = Arc::new(AtomicBool::new(false));
        let bounded = Bounded {
            http: self.http.clone(),
            too_long: too_long.clone(),
        };
        // Not `with_config`, which would build a reqwest client of its own first.
        let client = async_openai::Client::build(self.http.clone(), self.endpoint.clone())
            .with_http_service(bounded);
        (client, too_long)
    }

    /// The text of the first choice of the completion `request` asks for.
    pub(super) async fn complete(
        &self,
        request: CreateChatCompletionRequest,
    ) -> Result<String, LlmError> {
        let (client, too_long) = self.call();
        let completion: CreateChatCompletionResponse = client
            .chat()
            .create(request)
            .await
            .map_err(|e| described(&self.url, e, &too_long))?;
        completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| LlmError::Malformed("the answer has no text".into()))
    }

    /// The pieces of the streamed completion `request` asks for, as they come: its
    /// text, and what it used when the server says (asked for with `include_usage`).
    pub(super) async fn stream(
        &self,
        mut request: CreateChatCompletionRequest,
    ) -> Result<BoxStream<'static, Result<Piece, LlmError>>, LlmError> {
        request.stream_options = Some(ChatCompletionStreamOptions {
            include_usage: Some(true),
            include_obfuscation: None,
        });
        let (client, too_long) = self.call();
        let chunks = client
            .chat()
            .create_stream(request)
            .await
            .map_err(|e| described(&self.url, e, &too_long))?;
        let url = self.url.clone();
        Ok(chunks
            .flat_map(move |chunk| {
                let pieces = match chunk {
                    Ok(chunk) => {
                        let text: String = (chunk.choices.iter())
                            .filter_map(|c| c.delta.content.as_deref())
                            .collect();
                        let used = chunk.usage.map(|u| Piece::Used {
                            input_tokens: u.prompt_tokens.into(),
                            output_tokens: u.completion_tokens.into(),
                        });
                        let text = (!text.is_empty()).then_some(Piece::Text(text));
                        text.into_iter().chain(used).map(Ok).collect()
                    }
                    Err(e) => vec![Err(described(&url, e, &too_long))],
                };
                futures::stream::iter(pieces)
            })
            .boxed())
    }
}

/// `e` as what went wrong: the endpoint (unreachable, an HTTP error, a broken stream)
/// or the answer (not the JSON of a completion, or `too_long`).
fn described(url: &str, e: OpenAIError, too_long: &AtomicBool) -> LlmError {
    if too_long.load(Ordering::Relaxed) {
        return LlmError::Malformed(format!("the answer is longer than {MAX_ANSWER} bytes"));
    }
    let chain = causes(&e);
    match e {
        OpenAIError::ApiError(api) => LlmError::Endpoint(format!(
            "{url} answered HTTP {}: {}",
            api.status_code, api.api_error.message
        )),
        // The error alone: async-openai adds the whole answer, up to 4 MiB of it.
        OpenAIError::JSONDeserialize(e, _) => {
            LlmError::Malformed(format!("not a chat completion: {e}"))
        }
        OpenAIError::Boxed(refused) if refused.is::<Refused>() => {
            LlmError::Endpoint(format!("{url} {refused}"))
        }
        _ => LlmError::Endpoint(format!("{url}: {chain}")),
    }
}

/// An error's message with its causes', each once.
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = cause.source();
    }
    text
}

/// The API's base URL and key, as async-openai asks for them. Unlike its
/// `OpenAIConfig`, nothing comes from the environment, and no `Authorization` header
/// goes without a key.
#[derive(Clone)]
struct Endpoint {
    base: Arc<str>,
    key: Arc<SecretString>,
    headers: Arc<HeaderMap>,
}

impl Endpoint {
    fn new(base_url: &str, key: Option<String>) -> Result<Endpoint, LlmError> {
        let mut headers = HeaderMap::new();
        let key = key.filter(|k| !k.is_empty()).unwrap_or_default();
        if !key.is_empty() {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                LlmError::Endpoint("the API key has characters an HTTP header cannot carry".into())
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(Endpoint {
            base: base_url.trim_end_matches('/').into(),
            key: Arc::new(SecretString::from(key)),
            headers: Arc::new(headers),
        })
    }
}

impl Config for Endpoint {
    fn headers(&self) -> HeaderMap {
        (*self.headers).clone()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn query(&self) -> Vec<(&str, &str)> {
        Vec::new()
    }

    fn api_base(&self) -> &str {
        &self.base
    }

    fn api_key(&self) -> &SecretString {
        &self.key
    }
}

/// Sends async-openai's requests over our client, and hands back each answer with a
/// body that fails once it passes [`MAX_ANSWER`] bytes, raising `too_long`.
#[derive(Clone)]
struct Bounded {
    http: reqwest::Client,
    too_long: Arc<AtomicBool>,
}

impl tower::Service<HttpRequestFactory> for Bounded {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let (http, too_long) = (self.http.clone(), self.too_long.clone());
        Box::pin(async move {
            let response = http.execute(request.build().await?).await?;
            let status = response.status();
            if !status.is_success() {
                // A redirect too: the answer is the 3xx, never where it points.
                let body = read_bounded(response, 4096).await;
                let said = serde_json::from_slice::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                    .unwrap_or_else(|| String::from_utf8_lossy(&body).trim().to_owned());
                return Err(OpenAIError::Boxed(Box::new(Refused(format!(
                    "answered HTTP {status}: {said}"
                )))));
            }
            Ok(bounded(response, MAX_ANSWER, too_long))
        })
    }
}

/// An answer other than a success, as the endpoint gave it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

/// Up to `limit` bytes of `response`'s body (what an error page says).
async fn read_bounded(response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(Ok(chunk)) = chunks.next().await {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == limit {
            break;
        }
    }
    body
}

/// `response` with a body that fails past `limit` bytes, raising `too_long`.
fn bounded(
    response: reqwest::Response,
    limit: usize,
    too_long: Arc<AtomicBool>,
) -> reqwest::Response {
    let mut answer = http::Response::builder()
        .status(response.status())
        .version(response.version());
    if let Some(headers) = answer.headers_mut() {
        *headers = response.headers().clone();
    }
    let mut read = 0usize;
    let body = response.bytes_stream().map(move |chunk| {
        let chunk = chunk?;
        read += chunk.len();
        if read > limit {
            too_long.store(true, Ordering::Relaxed);
            return Err(Box::<dyn std::error::Error + Send + Sync>::from(format!(
                "the answer is longer than {limit} bytes"
            )));
        }
        Ok(chunk)
    });
    let body = reqwest::Body::wrap_stream(body);
    reqwest::Response::from(
        answer
            .body(body)
            .unwrap_or_else(|_| http::Response::new(reqwest::Body::from(""))),
    )
}

#[cfg(test)]
mod tests {
    use super::Endpoint;
    use async_openai::config::Config;

    #[test]
    fn only_the_configured_key_is_sent() {
        let keyless = Endpoint::new("http://127.0.0.1:1/v1/", None).unwrap();
        assert!(keyless.headers().is_empty());
        assert_eq!(
            keyless.url("/chat/completions"),
            "http://127.0.0.1:1/v1/chat/completions"
        );
        let keyed = Endpoint::new("http://127.0.0.1:1/v1", Some("sk-1".into())).unwrap();
        assert_eq!(keyed.headers()["authorization"], "Bearer sk-1");
        assert!(Endpoint::new("http://127.0.0.1:1/v1", Some("sk\n1".into())).is_err());
    }
}

//! Optional help from a language model behind any OpenAI-compatible chat API (OpenAI,
//! Ollama, vLLM, llama.cpp's server): choosing a workflow for a
//! free-text request, extracting the workflow's inputs from it as JSON, and writing
//! `kind = "llm"` steps token by token. The API is spoken by `chat` (async-openai).
//!
//! Everything here is best effort by design: callers treat every error (the endpoint
//! down, a timeout, an answer that is not the JSON asked for) as "no help from the
//! model" and go on deterministically. This module knows nothing of A2A or of
//! workflows: it takes text and JSON Schemas and gives back text and JSON.

mod chat;
mod flags;

pub use flags::LlmArgs;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_openai::types::chat::{
    ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage,
    CreateChatCompletionRequest, ResponseFormat, ResponseFormatJsonSchema,
};
use futures::StreamExt;
use serde_json::{Map, Value, json};

/// Defaults of `[llm]`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
pub const DEFAULT_ROUTING_MAX_TOKENS: u32 = 512;

/// Where the model is and how it is used (`[llm]` in the orchestrator's configuration).
#[derive(Clone)]
pub struct LlmConfig {
    /// The API's base URL, up to and including `/v1` (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1` for Ollama).
    pub base_url: String,
    pub model: String,
    /// The API key, read from the environment variable `[llm] api_key_env` names;
    /// local servers need none.
    pub api_key: Option<String>,
    /// Bound on a routing or extraction answer, and on the wait for each piece of a
    /// streamed answer (the first one included).
    pub timeout: Duration,
    /// Most tokens an llm step's answer may have.
    pub max_tokens: u32,
    /// Most tokens a routing or extraction answer may have.
    pub routing_max_tokens: u32,
    /// Sampling temperature; the server's default when unset.
    pub temperature: Option<f32>,
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            max_tokens: DEFAULT_MAX_TOKENS,
            routing_max_tokens: DEFAULT_ROUTING_MAX_TOKENS,
            temperature: None,
        }
    }
}

impl fmt::Debug for LlmConfig {
    // The key never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("max_tokens", &self.max_tokens)
            .field("routing_max_tokens", &self.routing_max_tokens)
            .field("temperature", &self.temperature)
            .finish()
    }
}

/// Why the model gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("the model did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the model's endpoint failed: {0}")]
    Endpoint(String),
    /// The answer is not what was asked for (not JSON, the wrong shape, a choice that
    /// was not offered).
    #[error("the model's answer is unusable: {0}")]
    Malformed(String),
}

/// A piece of a streamed answer: text as the model writes it, or what the answer used
/// (the API's count, once the answer is complete; servers that do not count send none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Used {
        input_tokens: u64,
        output_tokens: u64,
    },
}

/// An answer, piece by piece as the model writes it.
pub type TextStream = futures::stream::BoxStream<'static, Result<Piece, LlmError>>;

/// One workflow the model may choose.
#[derive(Debug, Clone)]
pub struct Choice {
    pub id: String,
    pub name: String,
    pub description: String,
    pub examples: Vec<String>,
}

/// A client of one model. Cheap to clone.
#[derive(Clone)]
pub struct Llm {
    inner: Arc<Inner>,
}

struct Inner {
    /// Why not, when no HTTP client could be built (then every call fails with it).
    chat: Result<chat::Chat, LlmError>,
    config: LlmConfig,
    /// `llm:<model>`: how steps written by it name their agent.
    name: String,
}

impl fmt::Debug for Llm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.config.fmt(f)
    }
}

const ROUTE_SYSTEM: &str = "You route a user's request to one of the workflows listed. Answer with JSON only: {\"workflow\": \"<id>\"} with the id of the workflow that fits the request, or {\"workflow\": \"none\"} when none fits or you cannot tell.";

const EXTRACT_SYSTEM: &str = "You extract the inputs of a workflow from a user's request. Answer with one JSON object only, whose keys are input names from the JSON Schema given. Include only the values the request states or clearly implies; leave out anything it does not say (never guess, never use placeholders). Use the types the schema gives: numbers as numbers, dates as YYYY-MM-DD, lists as arrays.";

impl Llm {
    /// How the model is named in step states and logs: `llm:<model>`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub fn new(config: LlmConfig) -> Self {
        // Only what `[llm]` says is sent: no key, organization or project from the
        // environment.
        Self {
            inner: Arc::new(Inner {
                chat: chat::Chat::new(&config.base_url, config.api_key.clone()),
                name: format!("llm:{}", config.model),
                config,
            }),
        }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    /// Which of `choices` the request is for: `Ok(None)` when the model says none fits.
    pub async fn choose(
        &self,
        request: &str,
        choices: &[Choice],
    ) -> Result<Option<String>, LlmError> {
        let mut ids: Vec<Value> = choices.iter().map(|c| json!(c.id)).collect();
        ids.push(json!("none"));
        let list: Vec<Value> = choices
            .iter()
            .map(|c| json!({ "id": c.id, "name": c.name, "description": c.description, "examples": c.examples }))
            .collect();
        let user = format!(
            "Workflows:\n{}\n\nRequest:\n{request}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
        let schema = json!({
            "type": "object",
            "properties": { "workflow": { "type": "string", "enum": ids } },
            "required": ["workflow"],
            "additionalProperties": false,
        });
        let answer = self.json(ROUTE_SYSTEM, user, "route", schema).await?;
        match answer.get("workflow").and_then(Value::as_str) {
            Some("none") => Ok(None),
            Some(id) if choices.iter().any(|c| c.id == id) => Ok(Some(id.to_owned())),
            Some(id) => Err(LlmError::Malformed(format!(
                "it chose `{id}`, which is not one of the workflows offered"
            ))),
            None => Err(LlmError::Malformed(format!(
                "expected {{\"workflow\": \"<id>\"}}, got {}",
                brief(&answer)
            ))),
        }
    }

    /// The values the request gives for the properties of `schema` (a JSON Schema
    /// object). Not checked against the schema: the caller does that.
    pub async fn extract(
        &self,
        request: &str,
        schema: &Value,
    ) -> Result<Map<String, Value>, LlmError> {
        // Everything is optional to the model: what the request does not say is asked
        // for (or defaulted) by the caller, not invented.
        let mut schema = schema.clone();
        if let Some(o) = schema.as_object_mut() {
            o.insert("required".into(), json!([]));
        }
        let user = format!(
            "Inputs (JSON Schema):\n{}\n\nRequest:\n{request}",
            serde_json::to_string_pretty(&schema).unwrap_or_default()
        );
        match self.json(EXTRACT_SYSTEM, user, "inputs", schema).await? {
            Value::Object(m) => Ok(m),
            other => Err(LlmError::Malformed(format!(
                "expected a JSON object, got {}",
                brief(&other)
            ))),
        }
    }

    /// A chat completion answered as JSON (structured output with `schema`).
    async fn json(
        &self,
        system: &str,
        user: String,
        name: &str,
        schema: Value,
    ) -> Result<Value, LlmError> {
        let c = &self.inner.config;
        let request = CreateChatCompletionRequest {
            model: c.model.clone(),
            messages: vec![
                ChatCompletionRequestSystemMessage::from(system).into(),
                ChatCompletionRequestUserMessage::from(user).into(),
            ],
            // Routing and extraction want the likeliest answer.
            temperature: Some(c.temperature.unwrap_or(0.0)),
            response_format: Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    name: name.to_owned(),
                    schema,
                    strict: Some(false),
                    description: None,
                },
            }),
            ..with_max_tokens(c.routing_max_tokens)
        };
        let chat = self.inner.chat.as_ref().map_err(Clone::clone)?;
        let text = tokio::time::timeout(c.timeout, chat.complete(request))
            .await
            .map_err(|_| LlmError::Timeout(c.timeout))??;
        parse_json(&text)
    }

    /// Streams the answer to `user` (with instructions in `system`), piece by piece.
    pub async fn stream(
        &self,
        system: Option<String>,
        user: String,
    ) -> Result<TextStream, LlmError> {
        let c = &self.inner.config;
        let mut messages = Vec::new();
        if let Some(s) = system {
            messages.push(ChatCompletionRequestSystemMessage::from(s).into());
        }
        messages.push(ChatCompletionRequestUserMessage::from(user).into());
        let request = CreateChatCompletionRequest {
            model: c.model.clone(),
            messages,
            temperature: c.temperature,
            stream: Some(true),
            ..with_max_tokens(c.max_tokens)
        };
        let idle = c.timeout;
        let chat = self.inner.chat.as_ref().map_err(Clone::clone)?;
        let stream = tokio::time::timeout(idle, chat.stream(request))
            .await
            .map_err(|_| LlmError::Timeout(idle))??;
        let tokens = futures::stream::unfold(Some(stream), move |stream| async move {
            let mut stream = stream?;
            match tokio::time::timeout(idle, stream.next()).await {
                Err(_) => Some((Err(LlmError::Timeout(idle)), None)),
                Ok(None) => None,
                Ok(Some(Err(e))) => Some((Err(e), None)),
                Ok(Some(Ok(piece))) => Some((Ok(piece), Some(stream))),
            }
        });
        Ok(tokens.boxed())
    }
}

/// A request with nothing but `max_tokens` set: the name every OpenAI-compatible server
/// reads (OpenAI's own now prefers `max_completion_tokens`, which local servers may not
/// know).
#[allow(deprecated)]
fn with_max_tokens(max_tokens: u32) -> CreateChatCompletionRequest {
    CreateChatCompletionRequest {
        max_tokens: Some(max_tokens),
        ..CreateChatCompletionRequest::default()
    }
}

/// The JSON in a model's answer: the whole text, or a fenced block in it (some local
/// models wrap JSON in ```json fences even when asked not to).
fn parse_json(text: &str) -> Result<Value, LlmError> {
    let t = text.trim();
    let inner = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(t);
    serde_json::from_str(inner.trim())
        .map_err(|e| LlmError::Malformed(format!("not JSON ({e}): {}", brief_str(t))))
}

fn brief(v: &Value) -> String {
    brief_str(&v.to_string())
}

fn brief_str(s: &str) -> String {
    const MAX: usize = 120;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_read_bare_or_fenced() {
        assert_eq!(parse_json(" {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert_eq!(
            parse_json("```json\n{\"a\": 1}\n```").unwrap(),
            json!({"a": 1})
        );
        assert!(matches!(
            parse_json("Sure! Here it is: {\"a\": 1"),
            Err(LlmError::Malformed(_))
        ));
    }

    #[tokio::test]
    async fn a_client_can_be_made_and_reports_a_dead_endpoint() {
        let mut c = LlmConfig::new("http://127.0.0.1:9/v1", "m");
        c.timeout = Duration::from_secs(5);
        let llm = Llm::new(c);
        let e = llm
            .extract("hi", &json!({"type": "object"}))
            .await
            .unwrap_err();
        assert!(matches!(e, LlmError::Endpoint(_)), "{e}");
    }

    #[test]
    fn the_key_never_shows_in_debug() {
        let mut c = LlmConfig::new("http://x/v1", "m");
        c.api_key = Some("sk-secret".into());
        assert!(!format!("{c:?}").contains("sk-secret"));
    }
}

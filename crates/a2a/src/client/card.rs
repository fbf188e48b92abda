//! Agent Card discovery (spec §5.3) and transport selection (spec §5.6.3).

use serde_json::Value;
use std::time::Duration;

use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode};

use super::http::{Statuses, check_status, read_bounded, request};
use super::send::parse_uri;
use super::{ClientError, HttpClient};
use crate::card::AgentCard;
use crate::card::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};

/// The outcome of a conditional card fetch.
#[derive(Debug, Clone)]
pub enum CardFetch {
    /// The server answered 304: the card the caller has is current.
    NotModified {
        /// `Cache-Control: max-age` of the answer, if any.
        max_age: Option<Duration>,
    },
    /// A (new) card.
    Fetched {
        /// The card, read as v1.0 ([`AgentCard::from_json`]).
        card: Box<AgentCard>,
        /// The card as the agent served it, of either generation.
        document: Box<Value>,
        /// The URL it was found at (the well-known path or the legacy one).
        url: String,
        /// The `ETag` it was served with, for a conditional refresh.
        etag: Option<String>,
        /// How long it may be kept (`Cache-Control: max-age`).
        max_age: Option<Duration>,
    },
}

/// `max-age` from a `Cache-Control` header (`no-store` / `no-cache` mean zero).
fn max_age(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(header::CACHE_CONTROL)?.to_str().ok()?;
    let mut age = None;
    for directive in value.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Some(Duration::ZERO);
        }
        if let Some(v) = lower.strip_prefix("max-age=") {
            age = v
                .trim_matches('"')
                .parse::<u64>()
                .ok()
                .map(Duration::from_secs);
        }
    }
    age
}

/// Fetches and checks Agent Cards.
#[derive(Debug, Clone)]
pub struct CardResolver {
    http: HttpClient,
    headers: HeaderMap,
    timeout: Duration,
}

/// Largest Agent Card accepted (1 MiB): real cards are a few KB; one of many skills
/// and long descriptions stays far below this.
pub const MAX_CARD_BYTES: usize = 1024 * 1024;

impl CardResolver {
    /// A resolver fetching with `http`, sending `headers`, each fetch bounded by `timeout`.
    pub fn new(http: HttpClient, headers: HeaderMap, timeout: Duration) -> Self {
        Self {
            http,
            headers,
            timeout,
        }
    }

    /// The card of the agent at `base_url`: `/.well-known/agent-card.json`, falling back
    /// to the legacy `/.well-known/agent.json` when the first is not served. A URL that
    /// already ends in `.json` is fetched as it is.
    pub async fn resolve(&self, base_url: &str) -> Result<AgentCard, ClientError> {
        self.resolve_document(base_url).await.map(|(card, _)| card)
    }

    /// Like [`CardResolver::resolve`], with the card as the agent served it.
    pub async fn resolve_document(
        &self,
        base_url: &str,
    ) -> Result<(AgentCard, Value), ClientError> {
        match self.resolve_conditional(base_url, None).await? {
            CardFetch::Fetched { card, document, .. } => Ok((*card, *document)),
            CardFetch::NotModified { .. } => Err(ClientError::protocol(
                base_url,
                "answered 304 Not Modified to an unconditional request",
            )),
        }
    }

    /// The card at exactly `card_url`, checked for the fields the schema requires.
    pub async fn fetch(&self, card_url: &str) -> Result<AgentCard, ClientError> {
        match self.fetch_conditional(card_url, None).await? {
            CardFetch::Fetched { card, .. } => Ok(*card),
            CardFetch::NotModified { .. } => Err(ClientError::protocol(
                card_url,
                "answered 304 Not Modified to an unconditional request",
            )),
        }
    }

    /// Like [`CardResolver::resolve`], sending `If-None-Match: etag` when one is known.
    pub async fn resolve_conditional(
        &self,
        base_url: &str,
        etag: Option<&str>,
    ) -> Result<CardFetch, ClientError> {
        if base_url.ends_with(".json") {
            return self.fetch_conditional(base_url, etag).await;
        }
        let base = base_url.trim_end_matches('/');
        let primary = format!("{base}{AGENT_CARD_PATH}");
        match self.fetch_conditional(&primary, etag).await {
            Err(ClientError::HttpStatus { status, .. }) if status == 404 || status == 405 => {
                let legacy = format!("{base}{LEGACY_AGENT_CARD_PATH}");
                self.fetch_conditional(&legacy, etag)
                    .await
                    .map_err(|e| match e {
                        ClientError::HttpStatus { status, .. } if status == 404 => {
                            ClientError::HttpStatus {
                                url: primary.clone(),
                                status,
                                body: format!(
                                    "no agent card at {primary} nor at the legacy {legacy}"
                                ),
                            }
                        }
                        other => other,
                    })
            }
            other => other,
        }
    }

    /// Fetches the card at exactly `card_url`, conditionally when `etag` is given.
    pub async fn fetch_conditional(
        &self,
        card_url: &str,
        etag: Option<&str>,
    ) -> Result<CardFetch, ClientError> {
        let uri = parse_uri(card_url).map_err(|detail| ClientError::InvalidUrl {
            url: card_url.to_owned(),
            detail,
        })?;
        let mut headers = self.headers.clone();
        if let Some(tag) = etag.and_then(|tag| HeaderValue::from_str(tag).ok()) {
            headers.insert(header::IF_NONE_MATCH, tag);
        }
        let req = request(Method::GET, uri, headers, "application/json", None);
        let fut = async {
            let resp = self
                .http
                .send(req)
                .await
                .map_err(|e| ClientError::transport(card_url, e))?;
            let age = max_age(resp.headers());
            if resp.status() == StatusCode::NOT_MODIFIED {
                return Ok(Err(age));
            }
            let resp = check_status(card_url, resp, Statuses::Plain).await?;
            let new_etag = resp
                .headers()
                .get(header::ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let bytes = read_bounded(card_url, resp, MAX_CARD_BYTES, "agent card").await?;
            Ok(Ok((bytes, new_etag, age)))
        };
        let outcome = tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| ClientError::Timeout {
                url: card_url.to_owned(),
                timeout: self.timeout,
            })??;
        let (bytes, etag, max_age) = match outcome {
            Err(max_age) => return Ok(CardFetch::NotModified { max_age }),
            Ok(x) => x,
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| ClientError::Protocol {
            url: card_url.to_owned(),
            detail: format!("the agent card is not JSON: {e}"),
        })?;
        let document = Box::new(value.clone());
        let card = AgentCard::from_json(value).map_err(|detail| ClientError::Protocol {
            url: card_url.to_owned(),
            detail,
        })?;
        Ok(CardFetch::Fetched {
            card: Box::new(card),
            document,
            url: card_url.to_owned(),
            etag,
            max_age,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(cache_control: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CACHE_CONTROL, cache_control.parse().unwrap());
        h
    }

    #[test]
    fn cache_control_max_age() {
        assert_eq!(
            max_age(&headers("public, max-age=600")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(max_age(&headers("no-cache")), Some(Duration::ZERO));
        assert_eq!(max_age(&headers("private")), None);
        assert_eq!(max_age(&HeaderMap::new()), None);
    }
}

//! Agent Card discovery (spec §5.3) and transport selection (spec §5.6.3).

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};

use super::ClientError;
use super::check_status;
use crate::protocol::types::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};
use crate::protocol::types::{AgentCard, Transport};

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
        card: Box<AgentCard>,
        /// The URL it was found at (the well-known path or the legacy one).
        url: String,
        etag: Option<String>,
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
    http: reqwest::Client,
    headers: HeaderMap,
    timeout: Duration,
}

impl CardResolver {
    pub fn new(http: reqwest::Client, headers: HeaderMap, timeout: Duration) -> Self {
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
        match self.resolve_conditional(base_url, None).await? {
            CardFetch::Fetched { card, .. } => Ok(*card),
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
        reqwest::Url::parse(card_url).map_err(|e| ClientError::InvalidUrl {
            url: card_url.to_owned(),
            detail: e.to_string(),
        })?;
        let fut = async {
            let mut req = self
                .http
                .get(card_url)
                .headers(self.headers.clone())
                .header(header::ACCEPT, "application/json");
            if let Some(tag) = etag {
                req = req.header(header::IF_NONE_MATCH, tag);
            }
            let resp = req
                .send()
                .await
                .map_err(|e| ClientError::transport(card_url, e))?;
            let age = max_age(resp.headers());
            if resp.status() == StatusCode::NOT_MODIFIED {
                return Ok(Err(age));
            }
            let resp = check_status(card_url, resp).await?;
            let new_etag = resp
                .headers()
                .get(header::ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| ClientError::transport(card_url, e))?;
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
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let card: AgentCard = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            ClientError::Protocol {
                url: card_url.to_owned(),
                detail: format!("invalid agent card at `{path}`: {}", e.inner()),
            }
        })?;
        Ok(CardFetch::Fetched {
            card: Box::new(card),
            url: card_url.to_owned(),
            etag,
            max_age,
        })
    }
}

/// The URL of the card's JSON-RPC interface: the main `url` when its transport is
/// JSON-RPC, else the first additional JSON-RPC interface.
pub fn select_jsonrpc_url(card: &AgentCard) -> Result<String, ClientError> {
    let interfaces = card.interfaces();
    interfaces
        .iter()
        .find(|i| i.transport == Transport::JsonRpc)
        .map(|i| i.url.clone())
        .ok_or_else(|| ClientError::UnsupportedTransport {
            offered: interfaces
                .iter()
                .map(|i| format!("{} at {}", i.transport, i.url))
                .collect(),
        })
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

//! Agent Card discovery (spec §5.3) and transport selection (spec §5.6.3).

use std::time::Duration;

use reqwest::header::HeaderMap;

use super::ClientError;
use super::check_status;
use crate::protocol::server::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};
use crate::protocol::types::{AgentCard, Transport};

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
        if base_url.ends_with(".json") {
            return self.fetch(base_url).await;
        }
        let base = base_url.trim_end_matches('/');
        let primary = format!("{base}{AGENT_CARD_PATH}");
        match self.fetch(&primary).await {
            Err(ClientError::HttpStatus { status, .. }) if status == 404 || status == 405 => {
                let legacy = format!("{base}{LEGACY_AGENT_CARD_PATH}");
                self.fetch(&legacy).await.map_err(|e| match e {
                    ClientError::HttpStatus { status, .. } if status == 404 => {
                        ClientError::HttpStatus {
                            url: primary.clone(),
                            status,
                            body: format!("no agent card at {primary} nor at the legacy {legacy}"),
                        }
                    }
                    other => other,
                })
            }
            other => other,
        }
    }

    /// The card at exactly `card_url`, checked for the fields the schema requires.
    pub async fn fetch(&self, card_url: &str) -> Result<AgentCard, ClientError> {
        reqwest::Url::parse(card_url).map_err(|e| ClientError::InvalidUrl {
            url: card_url.to_owned(),
            detail: e.to_string(),
        })?;
        let fut = async {
            let resp = self
                .http
                .get(card_url)
                .headers(self.headers.clone())
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| ClientError::transport(card_url, e))?;
            let resp = check_status(card_url, resp).await?;
            resp.bytes()
                .await
                .map_err(|e| ClientError::transport(card_url, e))
        };
        let bytes = tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| ClientError::Timeout {
                url: card_url.to_owned(),
                timeout: self.timeout,
            })??;
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            ClientError::Protocol {
                url: card_url.to_owned(),
                detail: format!("invalid agent card at `{path}`: {}", e.inner()),
            }
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

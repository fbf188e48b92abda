//! OAuth 2.0 client credentials for calling an agent (RFC 6749 §4.4): the token the
//! orchestrator gets for itself from the agent's authorization server, kept until
//! shortly before it expires and fetched again when the agent refuses it (HTTP 401).
//!
//! Where to ask and for what comes from `agents.toml` (`token_url`, `scopes`,
//! `resource`), else from the agent's card: the `oauth2` scheme's client-credentials
//! flow, and the scopes its security requirements name for that scheme. A refused token
//! request names the server's error (`invalid_client`, …). Nothing here follows a
//! redirect, and a token endpoint must be https (http only on loopback).

use std::time::{Duration, Instant};

use a2a::types::{AgentCard, SecurityScheme};
use serde_json::Value;
use tokio::sync::Mutex;

/// A token is fetched again this long before it expires.
const EARLY: Duration = Duration::from_secs(30);

/// Largest token response read.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// One agent's client credentials, and the token they got last.
pub struct ClientCredentials {
    client_id: String,
    secret: String,
    token_url: Option<String>,
    scopes: Option<Vec<String>>,
    resource: Option<String>,
    http: reqwest::Client,
    cached: Mutex<Option<(String, Instant)>>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("token_url", &self.token_url)
            .finish_non_exhaustive()
    }
}

/// Whether `url` may receive client credentials: https, or http on loopback.
fn trustworthy(url: &str) -> bool {
    match url::Url::parse(url) {
        Ok(u) if u.scheme() == "https" => true,
        Ok(u) if u.scheme() == "http" => match u.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

impl ClientCredentials {
    pub fn new(
        client_id: String,
        secret: String,
        token_url: Option<String>,
        scopes: Option<Vec<String>>,
        resource: Option<String>,
    ) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15))
            .build()
            .unwrap_or_default();
        ClientCredentials {
            client_id,
            secret,
            token_url,
            scopes,
            resource,
            http,
            cached: Mutex::new(None),
        }
    }

    /// Where tokens come from, and the scopes asked for: the configuration's, else the
    /// card's `oauth2` scheme with a client-credentials flow.
    fn endpoint(&self, card: Option<&AgentCard>) -> Result<(String, Vec<String>), String> {
        let from_card = card.and_then(|card| {
            let schemes = card.security_schemes.as_ref()?;
            let (name, flow) = schemes.iter().find_map(|(name, s)| match s {
                SecurityScheme::OAuth2(o) => o.flows.client_credentials.as_ref().map(|f| (name, f)),
                _ => None,
            })?;
            let scopes: Vec<String> = card
                .security
                .iter()
                .flatten()
                .filter_map(|req| req.get(name))
                .flatten()
                .cloned()
                .collect();
            Some((flow.token_url.clone(), scopes))
        });
        let token_url = match (&self.token_url, &from_card) {
            (Some(url), _) => url.clone(),
            (None, Some((url, _))) => url.clone(),
            (None, None) => {
                return Err("no token_url: its entry names none, and its card declares no oauth2 client-credentials flow".into());
            }
        };
        if !trustworthy(&token_url) {
            return Err(format!(
                "the token endpoint {token_url} is not https: client credentials are sent only over TLS (or to loopback)"
            ));
        }
        let scopes = self
            .scopes
            .clone()
            .or_else(|| from_card.map(|(_, s)| s))
            .unwrap_or_default();
        Ok((token_url, scopes))
    }

    /// A token to call the agent with: the one held, unless it is about to expire.
    pub async fn token(&self, card: Option<&AgentCard>) -> Result<String, String> {
        let mut cached = self.cached.lock().await;
        if let Some((token, until)) = cached.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let (token_url, scopes) = self.endpoint(card)?;
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        if let Some(r) = &self.resource {
            form.push(("resource", r.clone()));
        }
        let mut response = self
            .http
            .post(&token_url)
            .basic_auth(&self.client_id, Some(&self.secret))
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&form)
            .send()
            .await
            .map_err(|e| format!("cannot reach the token endpoint {token_url}: {e}"))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("the token endpoint {token_url}: {e}"))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(format!("the token endpoint {token_url} sent too much"));
            }
            body.extend_from_slice(&chunk);
        }
        let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let error = json["error"].as_str().unwrap_or("an unknown error");
            let described = json["error_description"]
                .as_str()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(format!(
                "the token endpoint {token_url} refused client `{}` with {error}{described} (HTTP {status})",
                self.client_id
            ));
        }
        let token = json["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("the token endpoint {token_url} sent no access_token"))?
            .to_owned();
        let lifetime = json["expires_in"]
            .as_u64()
            .map_or(Duration::from_secs(300), Duration::from_secs);
        let until = Instant::now() + lifetime.saturating_sub(EARLY);
        *cached = Some((token.clone(), until));
        Ok(token)
    }

    /// The agent refused the token held: the next call fetches another (unless one is
    /// being fetched right now, which will do).
    pub fn refused(&self) {
        if let Ok(mut cached) = self.cached.try_lock() {
            *cached = None;
        }
    }

    /// Its state, for `agents`: the client, and whether a token is held.
    pub fn describe(&self) -> String {
        let held = match self.cached.try_lock() {
            Ok(c) => match c.as_ref() {
                Some((_, until)) if Instant::now() < *until => "a token held",
                _ => "no token yet",
            },
            Err(_) => "fetching a token",
        };
        format!("OAuth2 client credentials as `{}` ({held})", self.client_id)
    }
}

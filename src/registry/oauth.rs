//! OAuth 2.0 tokens for calling an agent: client credentials (RFC 6749 §4.4), the token
//! the orchestrator gets for itself from the agent's authorization server; or a token
//! exchanged (RFC 8693) for the one the run's initiator presented, so that the agent
//! sees the user — never the user's own token. Each is kept until shortly before it
//! expires and fetched again when the agent refuses it (HTTP 401).
//!
//! Where to ask and for what comes from `agents.toml` (`token_url`, `scopes`,
//! `resource`), else from the agent's card: the `oauth2` scheme's client-credentials
//! flow, and the scopes its security requirements name for that scheme — a token URL
//! from a card only at the agent's own origin (a card must not be able to send the
//! orchestrator's client secret to a server of its choosing; name `token_url` for an
//! authorization server elsewhere). A refused token
//! request names the server's error (`invalid_client`, …). Nothing here follows a
//! redirect, and a token endpoint must be https (http only on loopback).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use a2a::card::{AgentCard, ClientCredentialsOAuthFlow, OAuthFlow, Scheme};
use a2a::server::PresentedToken;
use serde_json::Value;
use tokio::sync::Mutex;

use crate::untrusted::{read_bounded, trustworthy};

/// A token is fetched again this long before it expires.
const EARLY: Duration = Duration::from_secs(30);

/// Largest token response read.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Whose rights a call carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The run's initiator's: a token exchanged for theirs.
    Token(PresentedToken),
    /// The orchestrator's own: a static credential (or nobody) started the run.
    Service,
}

/// The RFC 8693 grant type, and token type of an access token.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// One agent's client credentials, and the token they got last.
pub struct ClientCredentials {
    client_id: String,
    secret: String,
    token_url: Option<String>,
    scopes: Option<Vec<String>>,
    resource: Option<String>,
    /// The origin of the agent's configured URL: a card's token URL must be at it.
    agent_origin: Option<url::Origin>,
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

impl ClientCredentials {
    pub fn new(
        client_id: String,
        secret: String,
        token_url: Option<String>,
        scopes: Option<Vec<String>>,
        resource: Option<String>,
        agent_url: &str,
    ) -> Self {
        let http = a2a::https::reqwest_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15))
            .build()
            .expect("an HTTP client on a2a's TLS configuration builds");
        ClientCredentials {
            client_id,
            secret,
            token_url,
            scopes,
            resource,
            agent_origin: url::Url::parse(agent_url).ok().map(|u| u.origin()),
            http,
            cached: Mutex::new(None),
        }
    }

    /// Where tokens come from, and the scopes asked for: the configuration's, else the
    /// card's `oauth2` scheme with a client-credentials flow.
    fn endpoint(&self, card: Option<&AgentCard>) -> Result<(String, Vec<String>), String> {
        let from_card = card.and_then(|card| {
            let (name, flow) = card.security_schemes.iter().find_map(|(name, s)| {
                match (&s.scheme, s.scheme.as_ref().and_then(oauth_flow)) {
                    (Some(Scheme::Oauth2SecurityScheme(_)), Some(f)) => Some((name, f)),
                    _ => None,
                }
            })?;
            let scopes: Vec<String> = card
                .security_requirements
                .iter()
                .filter_map(|req| req.schemes.get(name))
                .flat_map(|scopes| &scopes.list)
                .cloned()
                .collect();
            Some((flow.token_url.clone(), scopes))
        });
        let token_url = match (&self.token_url, &from_card) {
            (Some(url), _) => url.clone(),
            (None, Some((url, _))) => {
                // The same origin (scheme, host and port), not only the same host:
                // another port of the agent's host is another server.
                let origin = url::Url::parse(url).ok().map(|u| u.origin());
                if !origin.as_ref().is_some_and(url::Origin::is_tuple)
                    || origin != self.agent_origin
                {
                    return Err(format!(
                        "its card names the token endpoint {url}, which is not at the agent's own origin (scheme, host and port): name it as `token_url` in agents.toml if it is the agent's authorization server (a card alone does not get the client secret sent elsewhere)"
                    ));
                }
                url.clone()
            }
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
        let (token, until) = self.request(&token_url, &form).await?;
        *cached = Some((token.clone(), until));
        Ok(token)
    }

    /// Asks `token_url` for a token with `form`; the token and until when to use it.
    async fn request(
        &self,
        token_url: &str,
        form: &[(&str, String)],
    ) -> Result<(String, Instant), String> {
        let response = self
            .http
            .post(token_url)
            .basic_auth(&self.client_id, Some(&self.secret))
            .header(reqwest::header::ACCEPT, "application/json")
            .form(form)
            .send()
            .await
            .map_err(|e| format!("cannot reach the token endpoint {token_url}: {e}"))?;
        let status = response.status();
        let body = read_bounded(token_url, response, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| format!("the token endpoint {e}"))?;
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
        Ok((token, Instant::now() + lifetime.saturating_sub(EARLY)))
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

/// RFC 8693 token exchange for one agent: the run's initiator's token traded for one
/// whose audience is the agent, with the orchestrator's client credentials; one per
/// (initiator token, agent), kept until shortly before it expires. A run started by a
/// static credential gets a client-credentials token for the same audience instead.
pub struct TokenExchange {
    client: ClientCredentials,
    audience: Option<String>,
    /// Send the orchestrator's own token as `actor_token`.
    actor: bool,
    exchanged: Mutex<HashMap<[u8; 32], (String, Instant)>>,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("client", &self.client)
            .field("audience", &self.audience)
            .field("actor", &self.actor)
            .finish_non_exhaustive()
    }
}

/// Most exchanged tokens kept per agent (the oldest dropped past it).
const MAX_EXCHANGED: usize = 10_000;

impl TokenExchange {
    pub fn new(client: ClientCredentials, audience: Option<String>, actor: bool) -> Self {
        TokenExchange {
            client,
            audience,
            actor,
            exchanged: Mutex::new(HashMap::new()),
        }
    }

    /// The audience asked for: the configured one, else the agent's card URL.
    fn audience(&self, card: Option<&AgentCard>) -> Result<String, String> {
        self.audience
            .clone()
            .or_else(|| card.map(|c| c.url().to_owned()))
            .ok_or_else(|| "no audience: its entry names none and its card is not known".into())
    }

    /// A token to call the agent with on behalf of `subject`; `None` (the run was
    /// resumed after a restart, and its initiator's token is gone) is refused, saying so.
    pub async fn token(
        &self,
        subject: Option<&Subject>,
        card: Option<&AgentCard>,
    ) -> Result<String, String> {
        let audience = self.audience(card)?;
        let user = match subject {
            Some(Subject::Token(t)) => t,
            Some(Subject::Service) => return self.client.token(card).await,
            None => return Err(TOKEN_GONE.into()),
        };
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(user.secret().as_bytes()).into();
        let mut exchanged = self.exchanged.lock().await;
        if let Some((token, until)) = exchanged.get(&key)
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let (token_url, scopes) = self.client.endpoint(card)?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_owned()),
            ("subject_token", user.secret().to_owned()),
            ("subject_token_type", ACCESS_TOKEN_TYPE.to_owned()),
            ("requested_token_type", ACCESS_TOKEN_TYPE.to_owned()),
            ("audience", audience),
        ];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        if let Some(r) = &self.client.resource {
            form.push(("resource", r.clone()));
        }
        if self.actor {
            // Delegation (RFC 8693 §1.1): the orchestrator says it acts for the user.
            let own = self.client.token(card).await?;
            form.push(("actor_token", own));
            form.push(("actor_token_type", ACCESS_TOKEN_TYPE.to_owned()));
        }
        let (token, until) = self.client.request(&token_url, &form).await?;
        if exchanged.len() >= MAX_EXCHANGED {
            let now = Instant::now();
            exchanged.retain(|_, (_, until)| *until > now);
            if exchanged.len() >= MAX_EXCHANGED {
                exchanged.clear();
            }
        }
        exchanged.insert(key, (token.clone(), until));
        Ok(token)
    }

    /// The agent refused a token: every one held for it is dropped.
    pub fn refused(&self) {
        self.client.refused();
        if let Ok(mut exchanged) = self.exchanged.try_lock() {
            exchanged.clear();
        }
    }

    /// Its state, for `agents`.
    pub fn describe(&self) -> String {
        format!(
            "tokens exchanged (RFC 8693) for the run's initiator's, as `{}`{}{}",
            self.client.client_id,
            self.audience
                .as_ref()
                .map(|a| format!(" for the audience {a}"))
                .unwrap_or_default(),
            if self.actor {
                ", naming the orchestrator as the actor"
            } else {
                ""
            }
        )
    }
}

/// How an agent's calls get their token.
#[derive(Debug)]
pub enum TokenSource {
    ClientCredentials(ClientCredentials),
    Exchange(TokenExchange),
    /// The run's initiator's own token, forwarded as it is (`type = "forward"`).
    Forward,
}

/// Why a call cannot be made on behalf of a run whose initiator's token is gone.
const TOKEN_GONE: &str = "it is called on behalf of the run's initiator, whose token is kept only while the process that started the run runs (this run was resumed after a restart): retry the run to go on with a fresh token";

impl TokenSource {
    /// A token for a call on behalf of `subject`.
    pub async fn token(
        &self,
        subject: Option<&Subject>,
        card: Option<&AgentCard>,
    ) -> Result<String, String> {
        match self {
            TokenSource::ClientCredentials(c) => c.token(card).await,
            TokenSource::Exchange(e) => e.token(subject, card).await,
            TokenSource::Forward => match subject {
                Some(Subject::Token(t)) => Ok(t.secret().to_owned()),
                Some(Subject::Service) => Err("it takes the run's initiator's own token (`type = \"forward\"`), and this run was started with a static credential (never forwarded) or by nobody".into()),
                None => Err(TOKEN_GONE.into()),
            },
        }
    }

    /// The agent refused a token: the next call fetches another.
    pub fn refused(&self) {
        match self {
            TokenSource::ClientCredentials(c) => c.refused(),
            TokenSource::Exchange(e) => e.refused(),
            // The initiator's token is what it is: nothing to fetch again.
            TokenSource::Forward => {}
        }
    }

    /// Its state, for `agents`.
    pub fn describe(&self) -> String {
        match self {
            TokenSource::ClientCredentials(c) => c.describe(),
            TokenSource::Exchange(e) => e.describe(),
            TokenSource::Forward => "the run's initiator's own token, forwarded — WARNING: the agent can replay it against every service that takes it; prefer type = \"token_exchange\"".to_owned(),
        }
    }
}

/// An OAuth 2.0 scheme's client-credentials flow, if that is the flow it offers.
fn oauth_flow(scheme: &Scheme) -> Option<&ClientCredentialsOAuthFlow> {
    let Scheme::Oauth2SecurityScheme(o) = scheme else {
        return None;
    };
    match o.flows.as_ref()?.flow.as_ref()? {
        OAuthFlow::ClientCredentials(f) => Some(f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card_naming(token_url: &str) -> AgentCard {
        AgentCard::from_json(serde_json::json!({
            "protocolVersion": "0.3.0", "name": "hr", "description": "", "version": "1",
            "url": "http://127.0.0.1:7000/", "capabilities": {},
            "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
            "securitySchemes": {"oauth": {"type": "oauth2", "flows": {
                "clientCredentials": {"tokenUrl": token_url, "scopes": {}}}}},
            "security": [{"oauth": ["hr.read"]}]
        }))
        .unwrap()
    }

    /// A card's token URL gets the client secret only at the agent's own origin:
    /// another port or scheme of the same host is another server.
    #[test]
    fn a_cards_token_url_is_used_only_at_the_agents_origin() {
        let creds = ClientCredentials::new(
            "me".into(),
            "secret".into(),
            None,
            None,
            None,
            "http://127.0.0.1:7000/a2a",
        );
        let (url, scopes) = creds
            .endpoint(Some(&card_naming("http://127.0.0.1:7000/token")))
            .unwrap();
        assert_eq!(
            (url.as_str(), scopes),
            ("http://127.0.0.1:7000/token", vec!["hr.read".to_owned()])
        );
        for elsewhere in [
            "http://127.0.0.1:7001/token",
            "https://127.0.0.1:7000/token",
            "http://localhost:7000/token",
            "data:text/plain,token",
        ] {
            let refused = creds.endpoint(Some(&card_naming(elsewhere))).unwrap_err();
            assert!(refused.contains("own origin"), "{elsewhere}: {refused}");
        }
    }
}

//! Turning an `agents.toml` entry into what is needed to call the agent: `${VAR}`
//! placeholders filled in and secrets read — from an [`Env`], so tests need no process
//! environment.

use std::collections::HashMap;
use std::time::Duration;

use super::config::{AgentEntry, AuthConfig, CardSource};
use a2a::client::{ClientAuth, ClientConfig};

use super::oauth::{ClientCredentials, TokenExchange, TokenSource};

/// Where environment variables come from.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Env for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

/// Replaces every `${VAR}` in `s`.
pub fn interpolate(s: &str, env: &dyn Env) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{s}` has `${{` without a closing `}}`"))?;
        let name = &after[..end];
        let value = env
            .var(name)
            .ok_or_else(|| format!("the environment variable {name} (used in `{s}`) is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An agent entry with its placeholders and secrets resolved.
#[derive(Debug, Clone)]
pub struct ResolvedAgent {
    /// The base URL, or the card's URL.
    pub card_location: String,
    pub client: ClientConfig,
    /// Where its calls' tokens come from, when they carry one fetched for them.
    pub oauth: Option<std::sync::Arc<TokenSource>>,
    /// Speak only HTTP/2 to the agent.
    pub http2: bool,
    /// Which redirects its calls follow.
    pub redirects: a2a::client::Redirects,
    /// Which of its card's interfaces to call.
    pub interface: a2a::client::Preference,
    /// Its own authorities and client certificate, read again when they change.
    pub tls: Option<super::config::TlsFiles>,
}

/// Resolves one entry; the error says which variable is missing.
pub fn resolve(
    entry: &AgentEntry,
    env: &dyn Env,
    default_timeout: Duration,
) -> Result<ResolvedAgent, String> {
    let card_location = match &entry.source {
        CardSource::BaseUrl(u) | CardSource::CardUrl(u) => interpolate(u, env)?,
    };
    let secret = |name: &str| {
        env.var(name).filter(|v| !v.is_empty()).ok_or_else(|| {
            format!("the environment variable {name}, which holds its credentials, is not set")
        })
    };
    let mut oauth = None;
    let auth = match &entry.auth {
        None => None,
        Some(AuthConfig::Bearer { token_env }) => Some(ClientAuth::Bearer(secret(token_env)?)),
        Some(AuthConfig::ApiKey { header, key_env }) => Some(ClientAuth::ApiKey {
            header: header.clone(),
            value: secret(key_env)?,
        }),
        Some(AuthConfig::OAuth2ClientCredentials {
            client_id_env,
            client_secret_env,
            token_url,
            scopes,
            resource,
        }) => {
            oauth = Some(std::sync::Arc::new(TokenSource::ClientCredentials(
                ClientCredentials::new(
                    secret(client_id_env)?,
                    secret(client_secret_env)?,
                    token_url.clone(),
                    scopes.clone(),
                    resource.clone(),
                    &card_location,
                ),
            )));
            None
        }
        Some(AuthConfig::TokenExchange {
            client_id_env,
            client_secret_env,
            token_url,
            audience,
            scopes,
            resource,
            actor,
        }) => {
            let client = ClientCredentials::new(
                secret(client_id_env)?,
                secret(client_secret_env)?,
                token_url.clone(),
                scopes.clone(),
                resource.clone(),
                &card_location,
            );
            oauth = Some(std::sync::Arc::new(TokenSource::Exchange(
                TokenExchange::new(client, audience.clone(), *actor),
            )));
            None
        }
        Some(AuthConfig::Forward) => {
            oauth = Some(std::sync::Arc::new(TokenSource::Forward));
            None
        }
    };
    let mut headers = Vec::new();
    for (k, v) in &entry.headers {
        headers.push((k.clone(), interpolate(v, env)?));
    }
    // The orchestrator says who it is, unless the entry's headers say otherwise.
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
    {
        headers.push(("user-agent".into(), super::USER_AGENT.into()));
    }
    Ok(ResolvedAgent {
        card_location,
        client: ClientConfig {
            timeout: entry.timeout.unwrap_or(default_timeout),
            auth,
            headers,
            ..ClientConfig::default()
        },
        oauth,
        http2: entry.http2,
        redirects: entry.redirects,
        interface: entry.interface,
        tls: entry.tls.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_or_named_when_missing() {
        let env: HashMap<String, String> = [("HOST".to_owned(), "hr.internal".to_owned())].into();
        assert_eq!(
            interpolate("http://${HOST}:9201/", &env).unwrap(),
            "http://hr.internal:9201/"
        );
        assert_eq!(
            interpolate("no placeholders", &env).unwrap(),
            "no placeholders"
        );
        assert!(
            interpolate("http://${PORT}/", &env)
                .unwrap_err()
                .contains("PORT")
        );
        assert!(
            interpolate("http://${HOST/", &env)
                .unwrap_err()
                .contains("closing")
        );
    }
}

//! OpenID Connect bearer tokens: JSON Web Tokens an OpenID Provider signs, checked
//! against the keys it publishes.
//!
//! The provider's metadata comes from `{issuer}/.well-known/openid-configuration` and
//! its keys from the `jwks_uri` there, fetched on first use, again every
//! [`REFRESH_EVERY`], and again when a token names a key not known (the provider
//! rotated its keys). A check never waits for a fetch unless its token needs a key not
//! known: the keys are read from a snapshot, and a fetch replaces it. The fetches for
//! unknown keys are one at a time and at least [`REFETCH_INTERVAL`] apart, so a flood
//! of made-up key ids costs the provider one fetch per interval at most; a token
//! waiting for one is answered by the next fetch that starts after it arrived, so such
//! a flood cannot starve a token signed with a newly rotated key (it waits, at most an
//! interval and a fetch). Only asymmetric algorithms are taken (RSA, RSA-PSS, ECDSA,
//! EdDSA): never `none`, and never an HMAC, whose "secret" would be the public key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::task::AbortOnDropHandle;

use a2a::card::{OpenIdConnectSecurityScheme, Scheme, SecurityScheme};
use a2a::server::{Principal, VerifyToken};

use super::RoleRules;
use crate::untrusted::{read_bounded, trustworthy};

/// The algorithms a token may be signed with.
pub const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Clock difference forgiven on `exp` and `nbf`.
pub const LEEWAY: Duration = Duration::from_secs(30);

/// The least time between two fetches of the provider's keys for tokens naming a key
/// not known.
pub const REFETCH_INTERVAL: Duration = Duration::from_secs(5);

/// How often the provider's keys are fetched again, whatever the tokens name: a key it
/// withdrew stops being taken within this time.
pub const REFRESH_EVERY: Duration = Duration::from_secs(10 * 60);

/// Most keys taken from the provider's key set (the rest are left out).
const MAX_KEYS: usize = 64;

/// Largest metadata or key set document read.
const MAX_DOCUMENT_BYTES: usize = 512 * 1024;

/// How long one fetch from the provider may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// `[auth.oidc]`.
#[derive(Debug, Clone)]
pub struct OidcSettings {
    /// The provider's issuer URL, exactly as its tokens' `iss`.
    pub issuer: String,
    /// What tokens for this server carry in `aud`.
    pub audience: String,
    /// Where the token lists the principal's groups: a claim, or a path of claims
    /// separated by dots (`realm_access.roles`).
    pub roles_claim: String,
    /// The claim to show as the principal's name (else `name`, `preferred_username`,
    /// `email`, `sub`).
    pub name_claim: Option<String>,
    /// The claim (or path) listing the tenants a token may act in; when set, a token
    /// without it acts in none. Unset: a token may act in any tenant.
    pub tenant_claim: Option<String>,
    /// The CA certificates (PEM) of a provider whose certificate no public CA signs.
    pub ca_file: Option<PathBuf>,
    /// The roles granted by pattern.
    pub rules: RoleRules,
    /// The least time between fetches for unknown keys ([`REFETCH_INTERVAL`] unless a
    /// test needs it shorter).
    pub refetch_interval: Duration,
}

/// Why the settings cannot be used, and which of them.
#[derive(Debug)]
pub struct SettingsError {
    pub field: Option<&'static str>,
    pub message: String,
}

/// Checks bearer tokens against one provider.
pub struct OidcVerifier {
    settings: OidcSettings,
    keys: Arc<KeyCache>,
    /// Fetches the keys every [`REFRESH_EVERY`]: started by the first check (which has
    /// a runtime), ended with the verifier.
    refresher: OnceLock<AbortOnDropHandle<()>>,
}

/// The provider's keys: a snapshot every check reads, and the fetches that replace it.
struct KeyCache {
    issuer: String,
    refetch_interval: Duration,
    discovery_url: String,
    http: reqwest::Client,
    keys: RwLock<Arc<Keys>>,
    /// Held through a fetch: one at a time.
    fetching: Mutex<Fetching>,
}

/// One fetch's keys.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, (Option<Algorithm>, DecodingKey)>,
    /// Keys published without a `kid`.
    unnamed: Vec<(Option<Algorithm>, DecodingKey)>,
    /// When the fetch that found them started; none before the first.
    fetched: Option<Instant>,
}

impl Keys {
    /// The key for a token's `kid` (any that fits, for a token naming none) and
    /// algorithm.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let fits = |(a, _): &&(Option<Algorithm>, DecodingKey)| a.is_none_or(|a| a == alg);
        match kid {
            Some(kid) => self.by_id.get(kid).filter(fits).map(|(_, k)| k.clone()),
            None => self
                .unnamed
                .iter()
                .chain(self.by_id.values())
                .find(fits)
                .map(|(_, k)| k.clone()),
        }
    }
}

/// What the fetches keep between them.
#[derive(Default)]
struct Fetching {
    jwks_uri: Option<String>,
    /// When the last fetch started.
    last: Option<Instant>,
}

impl OidcVerifier {
    /// A verifier for the provider `settings` name; nothing is fetched yet.
    pub fn new(settings: OidcSettings) -> Result<OidcVerifier, SettingsError> {
        if !trustworthy(&settings.issuer) {
            return Err(SettingsError {
                field: Some("issuer"),
                message: format!(
                    "`issuer` must be an https:// URL (http:// only on loopback), got {:?}",
                    settings.issuer
                ),
            });
        }
        let ca_pem = match &settings.ca_file {
            Some(path) => Some(std::fs::read(path).map_err(|e| SettingsError {
                field: Some("ca_file"),
                message: format!("cannot read `ca_file` {}: {e}", path.display()),
            })?),
            None => None,
        };
        let tls = a2a::client::ClientTls {
            ca_pem,
            identity_pem: None,
        };
        let builder = a2a::https::reqwest_builder(Some(&tls), false).map_err(|e| {
            let file = settings.ca_file.as_deref().unwrap_or(Path::new(""));
            SettingsError {
                field: Some("ca_file"),
                message: format!(
                    "`ca_file` {} holds no PEM certificates: {e}",
                    file.display()
                ),
            }
        })?;
        let builder = builder
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT);
        let http = builder.build().map_err(|e| SettingsError {
            field: None,
            message: format!("cannot build the HTTP client for the OpenID Provider: {e}"),
        })?;
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            settings.issuer.trim_end_matches('/')
        );
        Ok(OidcVerifier {
            keys: Arc::new(KeyCache {
                issuer: settings.issuer.clone(),
                refetch_interval: settings.refetch_interval,
                discovery_url,
                http,
                keys: RwLock::default(),
                fetching: Mutex::default(),
            }),
            settings,
            refresher: OnceLock::new(),
        })
    }

    /// The provider's discovery document URL.
    pub fn discovery_url(&self) -> String {
        self.keys.discovery_url.clone()
    }

    /// The principal a verified token's claims describe.
    fn principal(&self, claims: &Value) -> Result<Principal, String> {
        let sub = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or("the token has no `sub` claim")?;
        let name = self
            .settings
            .name_claim
            .iter()
            .map(String::as_str)
            .chain(["name", "preferred_username", "email"])
            .find_map(|c| claims.get(c).and_then(Value::as_str))
            .unwrap_or(sub);
        let mut principal = Principal::new(Some(self.settings.issuer.clone()), sub, name);
        let grants = super::Grants {
            groups: strings_at(claims, &self.settings.roles_claim),
            tenants: (self.settings.tenant_claim.as_deref()).map(|path| strings_at(claims, path)),
            ..super::Grants::default()
        };
        self.settings.rules.apply(&mut principal, grants);
        Ok(principal)
    }

    /// The principal `token` speaks for, or which check it failed.
    pub async fn check(&self, token: &str) -> Result<Principal, String> {
        let header = decode_header(token).map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::Json(_) => {
                "the token's header names no algorithm this server takes (unsigned tokens are refused)".to_owned()
            }
            _ => "the token is not a signed JSON Web Token".to_owned(),
        })?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(format!(
                "the token is signed with {:?}, which is not accepted (RS*, PS*, ES256, ES384 and EdDSA are)",
                header.alg
            ));
        }
        self.refresher.get_or_init(|| {
            AbortOnDropHandle::new(tokio::spawn(KeyCache::refresh_every(Arc::downgrade(
                &self.keys,
            ))))
        });
        let key = self.keys.key_for(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY.as_secs();
        validation.validate_nbf = true;
        let data = decode::<Value>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            match e.kind() {
                K::ExpiredSignature => "the token has expired".to_owned(),
                K::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
                K::InvalidAudience => format!(
                    "the token is not for this server (its aud is not {:?})",
                    self.settings.audience
                ),
                K::InvalidIssuer => {
                    format!("the token was not issued by {:?}", self.settings.issuer)
                }
                K::InvalidSignature => "the token's signature does not verify".to_owned(),
                K::MissingRequiredClaim(c) => format!("the token has no `{c}` claim"),
                K::InvalidAlgorithm => {
                    "the token's algorithm does not fit the issuer's key".to_owned()
                }
                _ => "the token is malformed".to_owned(),
            }
        })?;
        self.principal(&data.claims)
    }
}

impl KeyCache {
    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered HTTP {}", response.status()));
        }
        let body = read_bounded(url, response, MAX_DOCUMENT_BYTES).await?;
        serde_json::from_slice(&body).map_err(|e| format!("{url} sent no JSON: {e}"))
    }

    /// The keys as last fetched (none before the first fetch).
    fn snapshot(&self) -> Arc<Keys> {
        self.keys.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Fetches the provider's metadata (once) and its keys (now), and makes them the
    /// snapshot. Called with the fetch lock held.
    async fn fetch(&self, state: &mut Fetching) -> Result<(), String> {
        let started = Instant::now();
        state.last = Some(started);
        let jwks_uri = match &state.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let meta = self.get_json(&self.discovery_url).await?;
                let issuer = meta.get("issuer").and_then(Value::as_str).unwrap_or("");
                if issuer != self.issuer {
                    return Err(format!(
                        "the provider's metadata names the issuer {issuer:?}, not {:?}",
                        self.issuer
                    ));
                }
                let uri = meta
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .filter(|u| trustworthy(u))
                    .ok_or("the provider's metadata has no https jwks_uri")?
                    .to_owned();
                state.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set = self.get_json(&jwks_uri).await?;
        let set: JwkSet = JwkSet {
            keys: set
                .get("keys")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{jwks_uri} has no `keys`"))?
                .iter()
                .take(MAX_KEYS)
                // A key of a kind this verifier does not know is skipped, not fatal.
                .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
                .collect(),
        };
        let mut keys = Keys {
            fetched: Some(started),
            ..Keys::default()
        };
        for jwk in &set.keys {
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
                || matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature)
            {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let alg = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok());
            match &jwk.common.key_id {
                Some(kid) => {
                    keys.by_id.insert(kid.clone(), (alg, key));
                }
                None => keys.unnamed.push((alg, key)),
            }
        }
        *self.keys.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(keys);
        Ok(())
    }

    /// The key for a token's `kid` and algorithm: from the snapshot, or — when it is
    /// not there — from the first fetch that starts after this call, made at least
    /// `refetch_interval` after the one before.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, String> {
        if let Some(key) = self.snapshot().find(kid, alg) {
            return Ok(key);
        }
        let asked = Instant::now();
        let mut state = self.fetching.lock().await;
        let current = self.snapshot();
        // A fetch that started after this call has answered it, found or not.
        let answered = current.fetched.is_some_and(|at| at >= asked);
        if !answered {
            if let Some(wait) = state
                .last
                .map(|last| self.refetch_interval.saturating_sub(last.elapsed()))
                .filter(|w| !w.is_zero())
            {
                tokio::time::sleep(wait).await;
            }
            if let Err(e) = self.fetch(&mut state).await {
                tracing::warn!(issuer = %self.issuer, error = %e, "fetching the OpenID Provider's keys failed");
                return Err("the issuer's signing keys cannot be fetched now".to_owned());
            }
        }
        drop(state);
        if let Some(key) = self.snapshot().find(kid, alg) {
            return Ok(key);
        }
        Err(match kid {
            Some(kid) => {
                format!("the token is signed with a key ({kid}) the issuer does not publish")
            }
            None => "the token names no key, and no key the issuer publishes fits it".to_owned(),
        })
    }

    /// Fetches the keys every [`REFRESH_EVERY`] while the cache is in use.
    async fn refresh_every(cache: Weak<KeyCache>) {
        loop {
            tokio::time::sleep(REFRESH_EVERY).await;
            let Some(cache) = cache.upgrade() else { return };
            let mut state = cache.fetching.lock().await;
            if let Err(e) = cache.fetch(&mut state).await {
                tracing::warn!(issuer = %cache.issuer, error = %e, "refreshing the OpenID Provider's keys failed; the keys fetched before stay in use");
            }
        }
    }
}

/// The strings a claim path (`realm_access.roles`) holds: an array's, or a string's
/// words; none when the claim is absent.
fn strings_at(claims: &Value, path: &str) -> Vec<String> {
    match path.split('.').try_fold(claims, |v, key| v.get(key)) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

impl VerifyToken for OidcVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, String>> {
        Box::pin(self.check(token))
    }

    fn card_scheme(&self) -> (String, SecurityScheme) {
        (
            "oidc".to_owned(),
            SecurityScheme::of(Scheme::OpenIdConnectSecurityScheme(
                OpenIdConnectSecurityScheme {
                    open_id_connect_url: self.discovery_url(),
                    description: format!(
                        "A bearer token from {} for the audience {}",
                        self.settings.issuer, self.settings.audience
                    ),
                },
            )),
        )
    }
}

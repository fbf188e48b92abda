//! OpenID Connect bearer tokens: JSON Web Tokens an OpenID Provider signs, checked
//! against the keys it publishes.
//!
//! The provider's metadata comes from `{issuer}/.well-known/openid-configuration` and
//! its keys from the `jwks_uri` there, fetched on first use and kept. A token naming a
//! key that is not known (the provider rotated its keys) fetches them again, at most
//! [`REFETCH_BURST`] times in any [`REFETCH_WINDOW`], so a flood of made-up key ids
//! cannot make this server hammer the provider. Only asymmetric algorithms are taken (RSA, RSA-PSS, ECDSA,
//! EdDSA): never `none`, and never an HMAC, whose "secret" would be the public key.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::Value;
use tokio::sync::Mutex;

use a2a::server::{Principal, VerifyToken};
use a2a::types::{OpenIdConnectSecurityScheme, SecurityScheme};

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

/// Most fetches of the provider's keys in any [`REFETCH_WINDOW`].
pub const REFETCH_BURST: usize = 3;

/// See [`REFETCH_BURST`].
pub const REFETCH_WINDOW: Duration = Duration::from_secs(60);

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
    http: reqwest::Client,
    keys: Mutex<Keys>,
}

/// What is known of the provider's keys.
#[derive(Default)]
struct Keys {
    jwks_uri: Option<String>,
    by_id: HashMap<String, (Option<Algorithm>, DecodingKey)>,
    /// Keys published without a `kid`.
    unnamed: Vec<(Option<Algorithm>, DecodingKey)>,
    /// When the keys were fetched, within the last [`REFETCH_WINDOW`].
    fetches: VecDeque<Instant>,
}

impl Keys {
    /// Whether the keys may be fetched now (see [`REFETCH_BURST`]).
    fn may_fetch(&mut self) -> bool {
        while self
            .fetches
            .front()
            .is_some_and(|at| at.elapsed() >= REFETCH_WINDOW)
        {
            self.fetches.pop_front();
        }
        self.fetches.len() < REFETCH_BURST
    }
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
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT);
        if let Some(path) = &settings.ca_file {
            let pem = std::fs::read(path).map_err(|e| SettingsError {
                field: Some("ca_file"),
                message: format!("cannot read `ca_file` {}: {e}", path.display()),
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| SettingsError {
                field: Some("ca_file"),
                message: format!(
                    "`ca_file` {} holds no PEM certificates: {e}",
                    path.display()
                ),
            })?;
            if certs.is_empty() {
                return Err(SettingsError {
                    field: Some("ca_file"),
                    message: format!("`ca_file` {} holds no PEM certificates", path.display()),
                });
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let http = builder.build().map_err(|e| SettingsError {
            field: None,
            message: format!("cannot build the HTTP client for the OpenID Provider: {e}"),
        })?;
        Ok(OidcVerifier {
            settings,
            http,
            keys: Mutex::new(Keys::default()),
        })
    }

    /// The provider's discovery document URL.
    pub fn discovery_url(&self) -> String {
        format!(
            "{}/.well-known/openid-configuration",
            self.settings.issuer.trim_end_matches('/')
        )
    }

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

    /// Fetches the provider's metadata (once) and its keys (now).
    async fn refresh(&self, keys: &mut Keys) -> Result<(), String> {
        keys.fetches.push_back(Instant::now());
        let jwks_uri = match &keys.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let meta = self.get_json(&self.discovery_url()).await?;
                let issuer = meta.get("issuer").and_then(Value::as_str).unwrap_or("");
                if issuer != self.settings.issuer {
                    return Err(format!(
                        "the provider's metadata names the issuer {issuer:?}, not {:?}",
                        self.settings.issuer
                    ));
                }
                let uri = meta
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .filter(|u| trustworthy(u))
                    .ok_or("the provider's metadata has no https jwks_uri")?
                    .to_owned();
                keys.jwks_uri = Some(uri.clone());
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
                // A key of a kind this verifier does not know is skipped, not fatal.
                .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
                .collect(),
        };
        keys.by_id.clear();
        keys.unnamed.clear();
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
        Ok(())
    }

    /// The key for a token's `kid` and algorithm, fetching the keys again when it is
    /// not known and they were not fetched lately.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, String> {
        let mut keys = self.keys.lock().await;
        let find = |keys: &Keys| -> Option<DecodingKey> {
            let fits = |(a, _): &&(Option<Algorithm>, DecodingKey)| a.is_none_or(|a| a == alg);
            match kid {
                Some(kid) => keys.by_id.get(kid).filter(fits).map(|(_, k)| k.clone()),
                None => keys
                    .unnamed
                    .iter()
                    .chain(keys.by_id.values())
                    .find(fits)
                    .map(|(_, k)| k.clone()),
            }
        };
        if let Some(key) = find(&keys) {
            return Ok(key);
        }
        if keys.may_fetch() {
            if let Err(e) = self.refresh(&mut keys).await {
                tracing::warn!(issuer = %self.settings.issuer, error = %e, "fetching the OpenID Provider's keys failed");
                return Err("the issuer's signing keys cannot be fetched now".to_owned());
            }
            if let Some(key) = find(&keys) {
                return Ok(key);
            }
        }
        Err(match kid {
            Some(kid) => {
                format!("the token is signed with a key ({kid}) the issuer does not publish")
            }
            None => "the token names no key, and no key the issuer publishes fits it".to_owned(),
        })
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
        principal.groups = strings_at(claims, &self.settings.roles_claim);
        principal.tenants = self
            .settings
            .tenant_claim
            .as_deref()
            .map(|path| strings_at(claims, path));
        self.settings.rules.apply(&mut principal);
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
        let key = self.key_for(header.kid.as_deref(), header.alg).await?;
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
            SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                open_id_connect_url: self.discovery_url(),
                description: Some(format!(
                    "A bearer token from {} for the audience {}",
                    self.settings.issuer, self.settings.audience
                )),
            }),
        )
    }
}

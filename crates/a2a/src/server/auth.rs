//! Inbound authentication for the JSON-RPC endpoint: bearer tokens and/or API keys in a
//! header. The Agent Card stays public (it declares the schemes); every JSON-RPC call
//! must present a credential, or gets HTTP 401 with `WWW-Authenticate` and a JSON-RPC
//! error body.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::{ErrorCode, RpcError};
use crate::jsonrpc::{RequestId, Response as RpcResponse};
use crate::types::{
    ApiKeyLocation, ApiKeySecurityScheme, HttpAuthSecurityScheme, SecurityRequirement,
    SecurityScheme,
};

/// The server-defined JSON-RPC code answered with HTTP 401 (spec §8.2 leaves
/// -32000..-32099 to servers).
pub const UNAUTHENTICATED: ErrorCode = ErrorCode(-32040);

/// Who sent a request, as far as this server can tell: which of its credentials the
/// request presented — named by a fingerprint of it, never the secret — or nobody, on
/// a server that takes requests without credentials. Tasks remember who started them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller(Option<String>);

impl Caller {
    /// A caller known by `id` (a fingerprint of a credential, a principal's name).
    pub fn known(id: impl Into<String>) -> Caller {
        Caller(Some(id.into()))
    }

    /// A request that presented no credential (the server asks for none).
    pub fn anonymous() -> Caller {
        Caller(None)
    }

    /// Its id, when it is known.
    pub fn id(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// A credential's fingerprint: `kind:` and the first 16 bytes of its SHA-256 in
    /// hex. Stable across restarts and configuration changes, and says nothing of the
    /// secret.
    fn of_credential(kind: &str, secret: &str) -> Caller {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(secret.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Caller::known(format!("{kind}:{hex}"))
    }
}

/// The credentials the server accepts.
#[derive(Clone, Default)]
pub struct InboundAuth {
    /// Accepted as `Authorization: Bearer <token>`.
    pub bearer_tokens: Vec<String>,
    /// The header API keys come in (e.g. `X-API-Key`), and the keys.
    pub api_key: Option<(String, Vec<String>)>,
}

impl std::fmt::Debug for InboundAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundAuth")
            .field("bearer_tokens", &self.bearer_tokens.len())
            .field("api_key_header", &self.api_key.as_ref().map(|(h, _)| h))
            .finish()
    }
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl InboundAuth {
    /// Whether no credential is configured (then nothing is checked).
    pub fn is_empty(&self) -> bool {
        self.bearer_tokens.is_empty() && self.api_key.as_ref().is_none_or(|(_, k)| k.is_empty())
    }

    /// The caller of a request that carries an accepted credential.
    pub fn identify(&self, headers: &HeaderMap) -> Option<Caller> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        if let Some(token) = bearer
            && self
                .bearer_tokens
                .iter()
                .fold(false, |ok, t| ok | same(t, token))
        {
            return Some(Caller::of_credential("bearer", token));
        }
        if let Some((name, keys)) = &self.api_key
            && let Some(key) = headers.get(name.as_str()).and_then(|v| v.to_str().ok())
            && keys.iter().fold(false, |ok, k| ok | same(k, key))
        {
            return Some(Caller::of_credential("api-key", key));
        }
        None
    }

    /// The 401 answer.
    pub fn challenge(&self) -> Response {
        let mut schemes = Vec::new();
        if !self.bearer_tokens.is_empty() {
            schemes.push("a Bearer token");
        }
        if self.api_key.is_some() {
            schemes.push("an API key");
        }
        let header_name = self
            .api_key
            .as_ref()
            .map(|(h, _)| format!(" in {h}"))
            .unwrap_or_default();
        let error = RpcError::new(
            UNAUTHENTICATED,
            format!(
                "authentication required: send {}{header_name}",
                schemes.join(" or ")
            ),
        );
        let body =
            serde_json::to_vec(&RpcResponse::error(RequestId::Null, error)).unwrap_or_default();
        let challenge = if self.bearer_tokens.is_empty() {
            "ApiKey realm=\"a2a\"".to_owned()
        } else {
            "Bearer realm=\"a2a\"".to_owned()
        };
        (
            StatusCode::UNAUTHORIZED,
            [
                (header::WWW_AUTHENTICATE, challenge),
                (header::CONTENT_TYPE, "application/json".to_owned()),
            ],
            body,
        )
            .into_response()
    }

    /// The schemes and requirements to declare on the card (either scheme will do).
    pub fn card_security(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
        let mut schemes = BTreeMap::new();
        let mut requirements = Vec::new();
        if !self.bearer_tokens.is_empty() {
            schemes.insert(
                "bearer".to_owned(),
                SecurityScheme::Http(HttpAuthSecurityScheme {
                    scheme: "bearer".into(),
                    bearer_format: None,
                    description: Some("A bearer token issued by the operator".into()),
                }),
            );
            requirements.push(BTreeMap::from([("bearer".to_owned(), Vec::new())]));
        }
        if let Some((name, _)) = &self.api_key {
            schemes.insert(
                "apiKey".to_owned(),
                SecurityScheme::ApiKey(ApiKeySecurityScheme {
                    location: ApiKeyLocation::Header,
                    name: name.clone(),
                    description: Some("An API key issued by the operator".into()),
                }),
            );
            requirements.push(BTreeMap::from([("apiKey".to_owned(), Vec::new())]));
        }
        (schemes, requirements)
    }
}

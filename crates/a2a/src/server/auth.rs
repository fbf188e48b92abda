//! Inbound authentication and task ownership: who sent a request, and which tasks they
//! may see and steer.
//!
//! Every accepted credential names a [`Principal`]: static bearer tokens and API keys
//! map to the principal configured with them, and a bearer token that is none of them
//! goes to the server's [`VerifyToken`] (an OpenID Connect verifier, say). The Agent
//! Card stays public (it declares the schemes); every other request must present a
//! credential, or gets HTTP 401 with an RFC 6750 `WWW-Authenticate` challenge.
//!
//! A task belongs to the principal who started it, in the tenant it was started in.
//! The server answers another principal's requests about it — get, list, subscribe,
//! cancel, messages, push configs — as if it did not exist (`TaskNotFoundError`, the
//! spec's "no existence leak"), unless the application's [`Authorize`] lets that
//! principal in. What a principal is beyond its name (its groups, its roles) is the
//! application's: it keeps it in [`Principal::attributes`], and its [`Authorize`]
//! reads it.

use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::principal::{PresentedToken, Principal};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;

use super::handler::{check_text, control_character};
use crate::card::{
    ApiKeySecurityScheme, HttpAuthSecurityScheme, Scheme, SecurityRequirement, SecurityScheme,
};
use crate::error::{ErrorCode, RpcError};
use crate::jsonrpc::{RequestId, Response as RpcResponse};

/// The longest tenant a request may name (its URL's first segment, v1.0's `tenant`).
const MAX_TENANT_BYTES: usize = 256;

/// The longest subject a [`VerifyToken`] may name: OpenID Connect's bound on `sub`
/// (Core §2: at most 255 ASCII characters). The principal's id, stored with every task
/// it starts, is the issuer's and this.
const MAX_SUBJECT_BYTES: usize = 255;

/// The server-defined JSON-RPC code answered with HTTP 401 (spec §8.2 leaves
/// -32000..-32099 to servers).
pub const UNAUTHENTICATED: ErrorCode = ErrorCode::UNAUTHENTICATED;

/// What a request does with a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it: get, list, subscribe, read its push configs.
    Read,
    /// Sends it a message (answers its question).
    Answer,
    /// Changes it otherwise: cancel, push configs set or deleted.
    Steer,
}

/// Who sent a request, as far as this server can tell: the principal its credential
/// names, or nobody, on a server that takes requests without credentials (where every
/// caller may do everything, as on a loopback demo); and the tenant the request acts in
/// (the HTTP+JSON `/{tenant}` prefix, v1.0's `tenant` field), if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    principal: Option<Arc<Principal>>,
    /// (Boxed, as the address: every running task's request holds its caller.)
    tenant: Option<Box<str>>,
    /// Where and how the call came (boxed: most of a caller is what most requests
    /// lack, and every running task's request holds its caller).
    call: Option<Box<CallFacts>>,
}

/// What a request's transport says of its call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct CallFacts {
    /// The address it came from and the number of its connection, when the server's
    /// own accept loop took it.
    peer: Option<(std::net::IpAddr, u64)>,
    /// When it must be answered by, as the client said (gRPC's `grpc-timeout`).
    deadline: Option<std::time::Instant>,
}

impl Caller {
    /// A caller the server knows.
    pub fn known(principal: Arc<Principal>) -> Caller {
        Caller {
            principal: Some(principal),
            tenant: None,
            call: None,
        }
    }

    /// The same caller, calling from `peer` on the server's connection number
    /// `connection`.
    pub fn with_peer(mut self, peer: Option<std::net::IpAddr>, connection: u64) -> Caller {
        let peer = peer.map(|ip| (ip, connection));
        if peer.is_some() || self.call.is_some() {
            self.call.get_or_insert_default().peer = peer;
        }
        self
    }

    /// The same caller, whose call must be answered within `within` (gRPC's
    /// `grpc-timeout`), counted from now.
    pub fn with_deadline(mut self, within: Option<std::time::Duration>) -> Caller {
        let deadline = within.and_then(|w| std::time::Instant::now().checked_add(w));
        if deadline.is_some() || self.call.is_some() {
            self.call.get_or_insert_default().deadline = deadline;
        }
        self
    }

    /// When the call must be answered by, if the client said.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.call.as_deref().and_then(|c| c.deadline)
    }

    /// The address the request came from, if known.
    pub fn peer(&self) -> Option<std::net::IpAddr> {
        self.call.as_deref().and_then(|c| c.peer).map(|(ip, _)| ip)
    }

    /// The number the server gave the connection the request came on, if known.
    pub fn connection(&self) -> Option<u64> {
        self.call.as_deref().and_then(|c| c.peer).map(|(_, c)| c)
    }

    /// A request that presented no credential (the server asks for none).
    pub fn anonymous() -> Caller {
        Caller::default()
    }

    /// The same caller acting in `tenant` (none or empty: no tenant), when `authorize`
    /// lets its principal in; else the permission error naming the tenant.
    /// A tenant longer than 256 bytes (`MAX_TENANT_BYTES`), or with a control character
    /// in it, is an invalid-params error on `tenant`: it is stored with each task made
    /// in it.
    pub fn in_tenant(
        mut self,
        tenant: Option<&str>,
        authorize: &dyn Authorize,
    ) -> Result<Caller, RpcError> {
        let tenant = tenant.filter(|t| !t.is_empty());
        if let Some(t) = tenant {
            if t.len() > MAX_TENANT_BYTES {
                return Err(RpcError::invalid_params(
                    "tenant",
                    format!(
                        "is {} bytes long; tenants here are at most {MAX_TENANT_BYTES} bytes",
                        t.len()
                    ),
                ));
            }
            check_text("tenant", t, "tenants")?;
        }
        if let (Some(t), Some(p)) = (tenant, &self.principal)
            && !authorize.joins(p, t)
        {
            return Err(RpcError::permission_denied(format!(
                "{} does not belong to tenant {t:?}",
                p.name
            ))
            .with_data(serde_json::json!({ "tenant": t })));
        }
        self.tenant = tenant.map(Box::from);
        Ok(self)
    }

    /// The same caller acting in `tenant`, unchecked: where it was checked already (a
    /// request forwarded by the server that took it).
    pub(crate) fn acting_in(mut self, tenant: Option<&str>) -> Caller {
        self.tenant = tenant.filter(|t| !t.is_empty()).map(Box::from);
        self
    }

    /// Its principal's id, when it is known.
    pub fn id(&self) -> Option<&str> {
        self.principal.as_deref().map(|p| p.id.as_str())
    }

    /// Its principal, when it is known.
    pub fn principal(&self) -> Option<&Arc<Principal>> {
        self.principal.as_ref()
    }

    /// The tenant the request acts in.
    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// Whether a task started by `initiator` in `tenant` is this caller's: of the tenant
    /// it acts in, and started by it — or any task of that tenant, on a server without
    /// credentials.
    pub fn owns(&self, initiator: Option<&str>, tenant: Option<&str>) -> bool {
        tenant == self.tenant.as_deref()
            && self
                .principal
                .as_ref()
                .is_none_or(|p| initiator == Some(p.id.as_str()))
    }

    /// Whether it may `access` a task started by `initiator` in `tenant`: a task of the
    /// tenant it acts in (never another's), its own, or another's that `authorize` lets
    /// it reach (`task`, when the decision needs the task itself; `None`: the decision
    /// for any task).
    pub fn may(
        &self,
        initiator: Option<&str>,
        tenant: Option<&str>,
        access: Access,
        authorize: &dyn Authorize,
        task: Option<&crate::store::StoredTask>,
    ) -> bool {
        if self.owns(initiator, tenant) {
            return true;
        }
        tenant == self.tenant.as_deref() && authorize.lets(self, task, access)
    }
}

/// What a known caller may do besides acting on the tasks it started: the
/// application's rules (roles, groups, the approvers of a question), asked by the
/// server; the tenant a task was started in always bounds who reaches it. Set on
/// [`InboundAuth::authorize`]; without one, a principal reaches its own tasks only,
/// in any tenant it names. A server without credentials lets every caller do
/// everything, and asks nothing.
pub trait Authorize: Send + Sync + 'static {
    /// Whether `caller` may `access` a task it did not start: `task`, or — with `None`
    /// — every task of the tenant (then its task lists are not limited to its own).
    /// Must be quick (no I/O): it is asked on each request for another's task, and
    /// on each status change of a stream it reads by this leave alone (a leave that
    /// lapses ends the stream). The default lets nobody in.
    fn lets(
        &self,
        caller: &Caller,
        task: Option<&crate::store::StoredTask>,
        access: Access,
    ) -> bool {
        let _ = (caller, task, access);
        false
    }

    /// Whether `principal` may act in `tenant` (the HTTP+JSON `/{tenant}` prefix,
    /// v1.0's `tenant` field). The default lets it into any.
    fn joins(&self, principal: &Principal, tenant: &str) -> bool {
        let _ = (principal, tenant);
        true
    }
}

/// The rule without an [`Authorize`]: a principal reaches its own tasks only.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnTasks;

impl Authorize for OwnTasks {}

/// Checks bearer tokens that are not static: a JSON Web Token signed by an identity
/// provider, typically. Implemented by the application, which knows its issuers.
pub trait VerifyToken: Send + Sync + 'static {
    /// The principal `token` speaks for, or why it is refused (one sentence saying which
    /// check failed, fit for the `WWW-Authenticate` header: nothing secret).
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, String>>;

    /// The scheme to declare on the card under `name`, and that name.
    fn card_scheme(&self) -> (String, SecurityScheme);
}

/// A static credential and the principal it names.
#[derive(Clone)]
pub struct Credential {
    /// The secret the request presents.
    pub secret: String,
    /// Who presents it.
    pub principal: Arc<Principal>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("principal", &self.principal.id)
            .finish_non_exhaustive()
    }
}

impl Credential {
    /// A credential known only by itself (a plain list of tokens): its principal is
    /// named by a fingerprint of the secret — `kind:` and the first 16 bytes of its
    /// SHA-256 in hex, stable across restarts and saying nothing of the secret — with
    /// no attributes.
    pub fn unnamed(kind: &str, secret: String) -> Credential {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(secret.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        let subject = format!("{kind}:{hex}");
        let principal = Principal::new(None, subject.clone(), subject);
        Credential {
            secret,
            principal: Arc::new(principal),
        }
    }
}

/// Whether a verified token's subject can name a principal: at most
/// [`MAX_SUBJECT_BYTES`], without control characters (a database's text cannot hold
/// NUL, and a log line should not break). An identity provider that says otherwise is
/// refused at the door, saying which, rather than when its first task is stored.
fn check_subject(subject: &str) -> Result<(), String> {
    if subject.len() > MAX_SUBJECT_BYTES {
        return Err(format!(
            "the token's subject is {} bytes long; at most {MAX_SUBJECT_BYTES} are taken",
            subject.len()
        ));
    }
    if let Some(found) = control_character(subject) {
        return Err(format!("the token's subject contains {found}"));
    }
    // Shown to people (the audit trail, the web view, `runs`), a subject must read as
    // what it is: no character that reorders or hides text.
    match subject.char_indices().find(|(_, c)| hides_text(*c)) {
        Some((at, c)) => Err(format!(
            "the token's subject contains an invisible or reordering character (U+{:04X}) at byte {at}",
            u32::from(c)
        )),
        None => Ok(()),
    }
}

/// Characters that reorder text (bidirectional embeddings, overrides and isolates) or
/// hide in it (zero-width spaces and joiners, the word joiner, the byte-order mark,
/// invisible operators, soft hyphens).
fn hides_text(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// The credentials the server accepts, and what the principals they name may do.
#[derive(Clone, Default)]
pub struct InboundAuth {
    /// Static tokens accepted as `Authorization: Bearer <token>`.
    pub bearer: Vec<Credential>,
    /// The header API keys come in (e.g. `X-API-Key`), and the keys.
    pub api_key: Option<(String, Vec<Credential>)>,
    /// Checks a bearer token that is none of the static ones.
    pub tokens: Option<Arc<dyn VerifyToken>>,
    /// What a principal may do besides acting on its own tasks ([`OwnTasks`] when
    /// `None`).
    pub authorize: Option<Arc<dyn Authorize>>,
}

impl std::fmt::Debug for InboundAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundAuth")
            .field("bearer", &self.bearer.len())
            .field("api_key_header", &self.api_key.as_ref().map(|(h, _)| h))
            .field("tokens", &self.tokens.is_some())
            .field("authorize", &self.authorize.is_some())
            .finish()
    }
}

/// Why a request was not authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It presented no credential.
    Missing,
    /// It presented one that is not accepted, for this reason.
    Invalid(String),
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The credential whose secret is `presented`, looked at in time that does not depend
/// on which one (or whether any) matches.
fn find<'a>(credentials: &'a [Credential], presented: &str) -> Option<&'a Credential> {
    credentials
        .iter()
        .fold(None, |found, c| match same(&c.secret, presented) {
            true => Some(c),
            false => found,
        })
}

/// A header value fit for a quoted string of `WWW-Authenticate` (RFC 6750 §3 allows
/// printable ASCII but `"` and `\`).
fn quotable(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if (' '..='~').contains(&c) => c,
            _ => '?',
        })
        .collect()
}

impl InboundAuth {
    /// Tokens and API keys known only by themselves (see [`Credential::unnamed`]).
    pub fn unnamed(bearer_tokens: Vec<String>, api_key: Option<(String, Vec<String>)>) -> Self {
        InboundAuth {
            bearer: bearer_tokens
                .into_iter()
                .map(|t| Credential::unnamed("bearer", t))
                .collect(),
            api_key: api_key.map(|(header, keys)| {
                let keys = keys
                    .into_iter()
                    .map(|k| Credential::unnamed("api-key", k))
                    .collect();
                (header, keys)
            }),
            tokens: None,
            authorize: None,
        }
    }

    /// The rules of what its principals may do.
    pub fn authorizer(&self) -> &dyn Authorize {
        self.authorize.as_deref().unwrap_or(&OwnTasks)
    }

    /// Whether no credential is configured (then nothing is checked).
    pub fn is_empty(&self) -> bool {
        self.bearer.is_empty()
            && self.tokens.is_none()
            && self.api_key.as_ref().is_none_or(|(_, k)| k.is_empty())
    }

    fn takes_bearer(&self) -> bool {
        !self.bearer.is_empty() || self.tokens.is_some()
    }

    /// The caller of a request, or why it is refused.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        let authorization = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""));
        if let Some(value) = authorization {
            let token = value
                .split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| t.trim());
            if let Some(token) = token.filter(|t| !t.is_empty())
                && self.takes_bearer()
            {
                if let Some(c) = find(&self.bearer, token) {
                    return Ok(Caller::known(c.principal.clone()));
                }
                return match &self.tokens {
                    Some(verifier) => match verifier.verify(token).await {
                        Ok(mut p) => {
                            check_subject(&p.subject).map_err(Refusal::Invalid)?;
                            p.token = Some(PresentedToken::new(token));
                            Ok(Caller::known(Arc::new(p)))
                        }
                        Err(why) => Err(Refusal::Invalid(why)),
                    },
                    None => Err(Refusal::Invalid(
                        "the token is not one this server accepts".to_owned(),
                    )),
                };
            }
        }
        if let Some((name, keys)) = &self.api_key
            && let Some(key) = headers.get(name.as_str())
        {
            let key = key.to_str().unwrap_or("");
            return match find(keys, key) {
                Some(c) => Ok(Caller::known(c.principal.clone())),
                None => Err(Refusal::Invalid(format!(
                    "the key in {name} is not one this server accepts"
                ))),
            };
        }
        match authorization {
            Some(_) => Err(Refusal::Invalid(
                "the Authorization header is not a Bearer token".to_owned(),
            )),
            None => Err(Refusal::Missing),
        }
    }

    /// The 401 answer to `refusal`: an RFC 6750 challenge (with `error="invalid_token"`
    /// and the reason when a credential was presented) and a JSON-RPC error body.
    pub fn challenge(&self, refusal: &Refusal) -> Response {
        let mut schemes = Vec::new();
        if self.takes_bearer() {
            schemes.push("a Bearer token".to_owned());
        }
        if let Some((h, _)) = &self.api_key {
            schemes.push(format!("an API key in {h}"));
        }
        let message = match refusal {
            Refusal::Missing => format!("authentication required: send {}", schemes.join(" or ")),
            Refusal::Invalid(why) => format!("authentication failed: {why}"),
        };
        let error = RpcError::new(UNAUTHENTICATED, message);
        let body =
            serde_json::to_vec(&RpcResponse::error(RequestId::Null, error)).unwrap_or_default();
        let scheme = if self.takes_bearer() {
            "Bearer"
        } else {
            "ApiKey"
        };
        let challenge = match refusal {
            Refusal::Missing => format!("{scheme} realm=\"a2a\""),
            Refusal::Invalid(why) => format!(
                "{scheme} realm=\"a2a\", error=\"invalid_token\", error_description=\"{}\"",
                quotable(why)
            ),
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

    /// The schemes and requirements to declare on the card (any one scheme will do).
    pub fn card_security(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
        let mut schemes = BTreeMap::new();
        let mut requirements = Vec::new();
        if let Some(verifier) = &self.tokens {
            let (name, scheme) = verifier.card_scheme();
            requirements.push(SecurityRequirement::of(name.clone(), Vec::new()));
            schemes.insert(name, scheme);
        }
        if !self.bearer.is_empty() {
            schemes.insert(
                "bearer".to_owned(),
                SecurityScheme::of(Scheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                    scheme: "bearer".into(),
                    bearer_format: String::new(),
                    description: "A bearer token issued by the operator".into(),
                })),
            );
            requirements.push(SecurityRequirement::of("bearer", Vec::new()));
        }
        if let Some((name, _)) = &self.api_key {
            schemes.insert(
                "apiKey".to_owned(),
                SecurityScheme::of(Scheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                    location: "header".into(),
                    name: name.clone(),
                    description: "An API key issued by the operator".into(),
                })),
            );
            requirements.push(SecurityRequirement::of("apiKey", Vec::new()));
        }
        (schemes, requirements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredTask as Task;

    /// Lets `token:v` read every task and `token:o` do anything with every task, and
    /// keeps `token:s` to tenant `acme`.
    struct Roles;

    impl Authorize for Roles {
        fn lets(&self, caller: &Caller, _task: Option<&Task>, access: Access) -> bool {
            match caller.id() {
                Some("token:v") => access == Access::Read,
                Some("token:o") => true,
                _ => false,
            }
        }

        fn joins(&self, principal: &Principal, tenant: &str) -> bool {
            principal.id != "token:s" || tenant == "acme"
        }
    }

    fn named(subject: &str) -> Caller {
        Caller::known(Arc::new(Principal::new(None, subject, subject)))
    }

    #[test]
    fn a_caller_reaches_its_own_tasks_and_what_the_authorizer_grants_in_its_tenant() {
        let may = |c: &Caller, initiator: &str, tenant: Option<&str>, access| {
            c.may(Some(initiator), tenant, access, &Roles, None)
        };
        let own = named("token:a");
        assert!(may(&own, "token:a", None, Access::Steer));
        assert!(!may(&own, "token:b", None, Access::Read));
        assert!(!own.may(None, None, Access::Read, &Roles, None));
        let viewer = named("token:v");
        assert!(may(&viewer, "token:b", None, Access::Read));
        assert!(!may(&viewer, "token:b", None, Access::Steer));
        let operator = named("token:o");
        assert!(may(&operator, "token:b", None, Access::Steer));
        assert!(Caller::anonymous().may(Some("token:b"), None, Access::Steer, &OwnTasks, None));
        // Without an authorizer, only one's own.
        assert!(!operator.may(Some("token:b"), None, Access::Read, &OwnTasks, None));
        // A task stays in its tenant, whoever asks.
        assert!(!may(&operator, "token:b", Some("acme"), Access::Read));
        let in_acme = operator.clone().in_tenant(Some("acme"), &Roles).unwrap();
        assert!(may(&in_acme, "token:b", Some("acme"), Access::Read));
        assert!(!may(&in_acme, "token:b", None, Access::Read));
        assert!(!in_acme.owns(Some("token:o"), None));
        let scoped = named("token:s");
        assert!(scoped.clone().in_tenant(Some("acme"), &Roles).is_ok());
        let refused = scoped.clone().in_tenant(Some("other"), &Roles).unwrap_err();
        assert_eq!(refused.code, ErrorCode::PERMISSION_DENIED);
        assert!(
            scoped.in_tenant(Some(""), &Roles).is_ok(),
            "an empty tenant is none"
        );
    }

    #[tokio::test]
    async fn a_wrong_token_is_invalid_and_a_missing_one_is_missing() {
        let auth = InboundAuth::unnamed(vec!["s3cret".into()], None);
        let mut h = HeaderMap::new();
        assert_eq!(auth.authenticate(&h).await, Err(Refusal::Missing));
        h.insert(header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert!(matches!(
            auth.authenticate(&h).await,
            Err(Refusal::Invalid(_))
        ));
        h.insert(header::AUTHORIZATION, "bearer s3cret".parse().unwrap());
        let caller = auth.authenticate(&h).await.unwrap();
        assert!(caller.id().unwrap().starts_with("bearer:"));
        let challenge = auth.challenge(&Refusal::Invalid("bad \"sig\"".into()));
        assert_eq!(
            challenge.headers()[header::WWW_AUTHENTICATE],
            "Bearer realm=\"a2a\", error=\"invalid_token\", error_description=\"bad 'sig'\""
        );
    }

    /// Names whoever the token says, as an identity provider would.
    struct Says;

    impl VerifyToken for Says {
        fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, String>> {
            let subject = token
                .replace("%00", "\0")
                .replace("%RLO", "\u{202E}")
                .replace("%ZWSP", "\u{200B}");
            Box::pin(async move { Ok(Principal::new(Some("https://idp".into()), subject, "x")) })
        }

        fn card_scheme(&self) -> (String, SecurityScheme) {
            unreachable!("not asked here")
        }
    }

    #[tokio::test]
    async fn a_subject_with_a_control_hidden_or_reordering_character_or_too_long_is_refused() {
        let auth = InboundAuth {
            tokens: Some(Arc::new(Says)),
            ..InboundAuth::default()
        };
        let as_bearer = |token: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                header::AUTHORIZATION,
                format!("Bearer {token}").parse().unwrap(),
            );
            h
        };
        let caller = auth.authenticate(&as_bearer("alice")).await.unwrap();
        assert_eq!(caller.id(), Some("https://idp#alice"));
        let longest = "a".repeat(MAX_SUBJECT_BYTES);
        assert!(auth.authenticate(&as_bearer(&longest)).await.is_ok());
        let refusals = [
            (
                "ali%00ce".to_owned(),
                "control character (U+0000) at byte 3",
            ),
            (
                "a".repeat(MAX_SUBJECT_BYTES + 1),
                "256 bytes long; at most 255",
            ),
            (
                "admin%RLOnimda".to_owned(),
                "reordering character (U+202E) at byte 5",
            ),
            (
                "ali%ZWSPce".to_owned(),
                "invisible or reordering character (U+200B)",
            ),
        ];
        for (token, why) in refusals {
            match auth.authenticate(&as_bearer(&token)).await {
                Err(Refusal::Invalid(said)) => assert!(said.contains(why), "{token}: {said}"),
                other => panic!("{token}: {:?}", other.map(|c| c.id().map(str::to_owned))),
            }
        }
    }
}

//! `agents.toml`: the downstream agents, one table per agent name.
//!
//! ```toml
//! [agents.hr]
//! url = "http://127.0.0.1:9201"          # base URL; the card is at /.well-known/agent-card.json
//! timeout = "30s"
//! max_concurrent = 16
//! tags = ["onboarding"]
//! auth = { type = "bearer", token_env = "HR_TOKEN" }
//! headers = { "X-Tenant" = "acme" }
//! http2 = true                         # speaks HTTP/2 on plain http (h2c): one connection for all calls
//! protocol = "auto"                    # or "1.0", "0.3": which A2A version to call it with
//! binding = "auto"                     # or "jsonrpc", "http+json", "grpc"
//! follow_redirects = "never"           # or "same-origin": credentials never cross origins
//!
//! [agents.it]
//! card_url = "https://it.example.com/cards/it.json"
//! auth = { type = "api_key", header = "X-API-Key", key_env = "IT_KEY" }
//! card_keys = { jwks_url = "https://it.example.com/.well-known/jwks.json" }  # or jwks_file, keys = [{…JWK…}], jku_allow = [URLs]
//! require_signed_card = true           # refuse its card unless one of those keys signed it
//!
//! [defaults]
//! require_signed_card = false          # for agents that do not say
//! ```
//!
//! Secrets never go in the file: `auth` names the environment variable that holds them.
//! Parsing takes the text, not a path or the environment, so it is testable as is.

use std::time::Duration;

use a2a::Version;
use a2a::client::{Binding, Preference, Redirects};
use orchestrator_core::config::reader::{Ctx, Sp, TableReader, type_name};
use orchestrator_core::config::{Diagnostic, did_you_mean};
use orchestrator_core::workflow::AgentName;

pub use super::price::Price;

/// The checked contents of `agents.toml`.
#[derive(Debug, Clone, Default)]
pub struct AgentsFile {
    /// In file order.
    pub agents: Vec<AgentEntry>,
    /// The currency the prices name (`price.currency`), one for all.
    pub currency: Option<String>,
}

impl AgentsFile {
    pub fn names(&self) -> std::collections::BTreeSet<String> {
        self.agents.iter().map(|a| a.name.to_string()).collect()
    }
}

/// One downstream agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEntry {
    pub name: AgentName,
    pub source: CardSource,
    pub auth: Option<AuthConfig>,
    /// Bound on one call to the agent.
    pub timeout: Option<Duration>,
    /// Most calls in flight to this agent at once.
    pub max_concurrent: Option<usize>,
    /// Extra headers on every request (values may use `${VAR}`).
    pub headers: Vec<(String, String)>,
    pub tags: Vec<String>,
    /// Speak only HTTP/2 to the agent, over `http://` too (h2c with prior knowledge):
    /// all calls share one connection, a stream each. Without it, plain-http agents are
    /// called over HTTP/1.1, a connection per call in flight (HTTPS agents negotiate
    /// HTTP/2 by themselves).
    pub http2: bool,
    /// Which of the card's interfaces to call (`protocol`, `binding`; auto when unset).
    pub interface: Preference,
    /// Which redirects calls to the agent (its card included) follow: none unless
    /// `follow_redirects = "same-origin"`.
    pub redirects: Redirects,
    /// Its own certificate authorities, and the certificate to present (mutual TLS).
    pub tls: Option<TlsFiles>,
    /// Which keys may sign its card, and whether it must be signed.
    pub card_trust: CardTrust,
    /// What its work costs (`price`), for the runs' accounts and budgets.
    pub price: Option<Price>,
}

/// `card_keys` and `require_signed_card` of an agent: where the public keys that may
/// sign its card are, and whether an unsigned or unverified card is refused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardTrust {
    /// A JWKS URL (https, or http on loopback), fetched and kept.
    pub jwks_url: Option<String>,
    /// A JWKS file, relative to agents.toml; read again when it changes.
    pub jwks_file: Option<std::path::PathBuf>,
    /// Public JWKs pinned in the file.
    pub keys: Vec<serde_json::Value>,
    /// Key set URLs a signature's `jku` may name; any other `jku` is not followed.
    pub jku_allow: Vec<String>,
    /// Refuse the card unless a signature verifies (`require_signed_card`, else
    /// `[defaults]`'s): the agent is unavailable, saying why.
    pub require: bool,
}

impl CardTrust {
    /// Whether any key source is given.
    pub fn has_keys(&self) -> bool {
        self.jwks_url.is_some()
            || self.jwks_file.is_some()
            || !self.keys.is_empty()
            || !self.jku_allow.is_empty()
    }
}

/// `tls = { ca_file, cert_file, key_file }` of an agent: PEM files, relative to
/// agents.toml; read again when they change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// Trusted instead of the public authorities.
    pub ca_file: Option<std::path::PathBuf>,
    /// The client certificate (chain) and its key, presented to the agent.
    pub cert_file: Option<std::path::PathBuf>,
    pub key_file: Option<std::path::PathBuf>,
}

/// Where an agent's card is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardSource {
    /// The agent's base URL: the card is under `/.well-known/`.
    BaseUrl(String),
    /// The card's own URL.
    CardUrl(String),
}

/// Credentials for calling an agent; each names the environment variable with the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthConfig {
    /// `Authorization: Bearer <$token_env>`.
    Bearer { token_env: String },
    /// `<header>: <$key_env>`.
    ApiKey { header: String, key_env: String },
    /// OAuth 2.0 client credentials: a token from the agent's authorization server
    /// (`token_url`, else its card's), for `scopes` (else its card's) and `resource`.
    OAuth2ClientCredentials {
        client_id_env: String,
        client_secret_env: String,
        token_url: Option<String>,
        scopes: Option<Vec<String>>,
        resource: Option<String>,
    },
    /// RFC 8693 token exchange: the run's initiator's token traded (with these client
    /// credentials) for one whose audience is the agent (`audience`, else its card's URL);
    /// with `actor`, the orchestrator's own token goes along as the actor (delegation:
    /// the agent sees who acts for the user, in `act`).
    TokenExchange {
        client_id_env: String,
        client_secret_env: String,
        token_url: Option<String>,
        audience: Option<String>,
        scopes: Option<Vec<String>>,
        resource: Option<String>,
        actor: bool,
    },
    /// The run's initiator's own token, as they presented it (`type = "forward"`): only
    /// for agents that must see exactly it; every such agent could replay it wherever it
    /// is good, which `agents` warns about. `token_exchange` is the safe way.
    Forward,
}

const AGENT_KEYS: &[&str] = &[
    "url",
    "card_url",
    "auth",
    "timeout",
    "max_concurrent",
    "headers",
    "tags",
    "http2",
    "protocol",
    "binding",
    "follow_redirects",
    "tls",
    "card_keys",
    "require_signed_card",
    "price",
];
const AUTH_KEYS: &[&str] = &[
    "type",
    "token_env",
    "header",
    "key_env",
    "client_id_env",
    "client_secret_env",
    "token_url",
    "scopes",
    "resource",
    "audience",
    "actor",
];

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks a URL, allowing `${VAR}` placeholders (resolved when the registry starts).
fn check_url(ctx: &mut Ctx<'_>, v: &Sp<String>, key: &str) -> bool {
    let probe = v.value.replace("${", "x").replace('}', "");
    match reqwest::Url::parse(&probe) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => true,
        Ok(u) => {
            ctx.error(
                v.span.clone(),
                format!("`{key}` must be an http or https URL, not {}", u.scheme()),
            );
            false
        }
        Err(e) => {
            ctx.error(v.span.clone(), format!("`{key}` is not a valid URL: {e}"));
            false
        }
    }
}

/// Parses and checks `agents.toml`. Returns the file when it has no error, and every
/// diagnostic either way.
pub fn load_str(file: &str, source: &str) -> (Option<AgentsFile>, Vec<Diagnostic>) {
    let mut ctx = Ctx::new(file, source);
    let (doc, errors) = toml::de::DeTable::parse_recoverable(source);
    if let Some(e) = errors.first() {
        ctx.error(
            e.span().unwrap_or(0..0),
            format!("invalid TOML: {}", e.message().trim()),
        );
        return (None, ctx.diags);
    }
    let mut top = TableReader::new(doc.get_ref(), doc.span(), "agents.toml");
    let mut out = AgentsFile::default();
    let mut require_default = false;
    let mut currency = super::price::Currency::default();
    if let Some(mut defaults) = top.table(&mut ctx, "defaults") {
        require_default = defaults
            .bool(&mut ctx, "require_signed_card")
            .is_some_and(|b| b.value);
        defaults.finish(&mut ctx, &["require_signed_card"]);
    }
    if let Some(agents) = top.table(&mut ctx, "agents") {
        for (key, value) in agents.entries() {
            let name = key.value;
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                ctx.error(
                    key.span.clone(),
                    format!("agent name `{name}` may contain only letters, digits, `-` and `_`"),
                );
                continue;
            }
            let Some(table) = value.get_ref().as_table() else {
                ctx.error(
                    value.span(),
                    format!(
                        "`agents.{name}` must be a table (`[agents.{name}]`), not {}",
                        type_name(value.get_ref())
                    ),
                );
                continue;
            };
            let mut t = TableReader::new(table, value.span(), format!("[agents.{name}]"));
            if let Some(entry) = agent(&mut ctx, name, &mut t, require_default, &mut currency) {
                out.agents.push(entry);
            }
            t.finish(&mut ctx, AGENT_KEYS);
        }
    }
    top.finish(&mut ctx, &["agents", "defaults"]);
    out.currency = currency.into_code();
    let ok = !ctx.has_errors();
    let mut diags = ctx.diags;
    diags.sort_by_key(|d| (d.line, d.column));
    (ok.then_some(out), diags)
}

fn agent(
    ctx: &mut Ctx<'_>,
    name: &str,
    t: &mut TableReader<'_, '_>,
    require_default: bool,
    currencies: &mut super::price::Currency,
) -> Option<AgentEntry> {
    let url = t.string(ctx, "url");
    let card_url = t.string(ctx, "card_url");
    let mut ok = true;
    let source = match (url, card_url) {
        (Some(u), None) => check_url(ctx, &u, "url").then_some(CardSource::BaseUrl(u.value)),
        (None, Some(c)) => check_url(ctx, &c, "card_url").then_some(CardSource::CardUrl(c.value)),
        (Some(_), Some(c)) => {
            ctx.error(
                c.span,
                format!("agent `{name}` has both `url` and `card_url`: give one"),
            );
            None
        }
        (None, None) => {
            ctx.error(
                t.span.clone(),
                format!("agent `{name}` needs `url` (its base URL) or `card_url` (its card's URL)"),
            );
            None
        }
    };
    let auth = t.table(ctx, "auth").and_then(|mut a| {
        a.name = format!("the `auth` of agent `{name}`");
        for secret in ["token", "key", "password", "secret"] {
            if let Some(v) = a.get(secret) {
                ctx.error(
                    v.span(),
                    format!("secrets do not go in agents.toml: put it in an environment variable and name that with `{secret}_env`"),
                );
                ok = false;
            }
        }
        let kind = a.string(ctx, "type");
        let env = |a: &mut TableReader<'_, '_>, ctx: &mut Ctx<'_>, key: &str| -> Option<String> {
            let v = a.string(ctx, key);
            match v {
                Some(v) if is_env_name(&v.value) => Some(v.value),
                Some(v) => {
                    ctx.error(v.span, format!("`{key}` must name an environment variable (letters, digits, `_`), got \"{}\"", v.value));
                    None
                }
                None => {
                    ctx.error(a.span.clone(), format!("{} is missing `{key}`", a.name));
                    None
                }
            }
        };
        let result = match kind.as_ref().map(|k| k.value.as_str()) {
            Some("bearer") => env(&mut a, ctx, "token_env").map(|token_env| AuthConfig::Bearer { token_env }),
            Some("api_key") => {
                let header = a.string(ctx, "header").map_or_else(|| "X-API-Key".to_owned(), |h| h.value);
                env(&mut a, ctx, "key_env").map(|key_env| AuthConfig::ApiKey { header, key_env })
            }
            Some(kind @ ("oauth2_client_credentials" | "token_exchange")) => {
                let id = env(&mut a, ctx, "client_id_env");
                let secret = env(&mut a, ctx, "client_secret_env");
                let token_url = a.string(ctx, "token_url").and_then(|u| {
                    check_url(ctx, &u, "token_url").then_some(u.value)
                });
                let scopes = a
                    .strings(ctx, "scopes")
                    .map(|l| l.value.into_iter().map(|s| s.value).collect());
                let resource = a.string(ctx, "resource").map(|r| r.value);
                let audience = a.string(ctx, "audience");
                let actor = a.bool(ctx, "actor");
                if let (Some(act), "oauth2_client_credentials") = (&actor, kind) {
                    ctx.error(
                        act.span.clone(),
                        "`actor` goes with `type = \"token_exchange\"` (it names the orchestrator as acting for the caller)",
                    );
                }
                if let (Some(aud), "oauth2_client_credentials") = (&audience, kind) {
                    ctx.error(
                        aud.span.clone(),
                        "`audience` goes with `type = \"token_exchange\"` (client credentials name their agent with `resource`)",
                    );
                }
                id.zip(secret).map(|(client_id_env, client_secret_env)| match kind {
                    "token_exchange" => AuthConfig::TokenExchange {
                        client_id_env,
                        client_secret_env,
                        token_url,
                        audience: audience.map(|a| a.value),
                        scopes,
                        resource,
                        actor: actor.is_some_and(|a| a.value),
                    },
                    _ => AuthConfig::OAuth2ClientCredentials {
                        client_id_env,
                        client_secret_env,
                        token_url,
                        scopes,
                        resource,
                    },
                })
            }
            Some("forward") => Some(AuthConfig::Forward),
            Some(other) => {
                let hint = did_you_mean(other, ["bearer", "api_key", "oauth2_client_credentials", "token_exchange", "forward"])
                    .map(|m| format!(" (did you mean \"{m}\"?)"))
                    .unwrap_or_default();
                let span = kind.as_ref().map_or(a.span.clone(), |k| k.span.clone());
                ctx.error(span, format!("unknown auth type \"{other}\"{hint}; expected \"bearer\", \"api_key\", \"oauth2_client_credentials\", \"token_exchange\" or \"forward\""));
                None
            }
            None => {
                ctx.error(a.span.clone(), format!("{} is missing `type` (\"bearer\", \"api_key\", \"oauth2_client_credentials\", \"token_exchange\" or \"forward\")", a.name));
                None
            }
        };
        a.finish(ctx, &[AUTH_KEYS, &["token", "key", "password", "secret"]].concat());
        if result.is_none() {
            ok = false;
        }
        result
    });
    let tls = t.table(ctx, "tls").map(|mut x| {
        x.name = format!("the `tls` of agent `{name}`");
        let dir = std::path::Path::new(ctx.file)
            .parent()
            .unwrap_or(std::path::Path::new(""))
            .to_owned();
        let file = |x: &mut TableReader<'_, '_>, ctx: &mut Ctx<'_>, key: &str| {
            x.string(ctx, key).map(|f| (dir.join(&f.value), f.span))
        };
        let ca = file(&mut x, ctx, "ca_file");
        let cert = file(&mut x, ctx, "cert_file");
        let key = file(&mut x, ctx, "key_file");
        if let (Some((_, span)), None) | (None, Some((_, span))) = (&cert, &key) {
            ctx.error(
                span.clone(),
                "`cert_file` and `key_file` go together: the client certificate and its private key",
            );
            ok = false;
        }
        x.finish(ctx, &["ca_file", "cert_file", "key_file"]);
        TlsFiles {
            ca_file: ca.map(|(p, _)| p),
            cert_file: cert.map(|(p, _)| p),
            key_file: key.map(|(p, _)| p),
        }
    });
    let card_trust = card_trust(ctx, name, t, require_default);
    if card_trust.is_none() {
        ok = false;
    }
    let timeout = t.positive_duration(ctx, "timeout");
    let max_concurrent = t.int_at_least(ctx, "max_concurrent", 1).map(|n| n as usize);
    let mut headers = Vec::new();
    if let Some(h) = t.table(ctx, "headers") {
        for (k, v) in h.entries() {
            match v.get_ref().as_str() {
                Some(s) => headers.push((k.value.to_owned(), s.to_owned())),
                None => ctx.error(v.span(), format!("header `{}` must be a string", k.value)),
            }
        }
    }
    let tags = t
        .strings(ctx, "tags")
        .map(|l| l.value.into_iter().map(|s| s.value).collect())
        .unwrap_or_default();
    let http2 = t.bool(ctx, "http2").is_some_and(|b| b.value);
    let (price, currency) = match t.table(ctx, "price") {
        Some(p) => {
            let (price, currency) = super::price::read(ctx, p);
            (Some(price), currency)
        }
        None => (None, None),
    };
    currencies.take(ctx, &format!("agent `{name}`"), currency);
    let given = t.string(ctx, "protocol");
    let protocol = choice(
        ctx,
        given,
        "protocol",
        &[("1.0", Version::V1_0), ("0.3", Version::V0_3)],
    );
    let given = t.string(ctx, "binding");
    let binding = choice(
        ctx,
        given,
        "binding",
        &[
            ("jsonrpc", Binding::JsonRpc),
            ("http+json", Binding::HttpJson),
            ("grpc", Binding::Grpc),
        ],
    );
    let redirects = match t.string(ctx, "follow_redirects") {
        None => Some(Redirects::Never),
        Some(given) => match given.value.as_str() {
            "never" => Some(Redirects::Never),
            "same-origin" => Some(Redirects::SameOrigin),
            other => {
                let hint = did_you_mean(other, ["never", "same-origin"])
                    .map(|m| format!(" (did you mean \"{m}\"?)"))
                    .unwrap_or_default();
                ctx.error(
                    given.span,
                    format!("unknown follow_redirects \"{other}\"{hint}; expected \"never\" (the default) or \"same-origin\""),
                );
                None
            }
        },
    };
    let (Some(protocol), Some(binding), Some(redirects)) = (protocol, binding, redirects) else {
        return None;
    };
    if protocol == Some(Version::V0_3) && matches!(binding, Some(Binding::HttpJson | Binding::Grpc))
    {
        let at = t.get("binding").map_or(t.span.clone(), |v| v.span());
        ctx.error(
            at,
            format!("agent `{name}`: this orchestrator calls A2A 0.3 agents over JSON-RPC only; use binding = \"jsonrpc\" or protocol = \"1.0\""),
        );
        return None;
    }
    let source = source?;
    let card_trust = card_trust?;
    ok.then(|| AgentEntry {
        name: AgentName::new(name),
        source,
        auth,
        timeout,
        max_concurrent,
        headers,
        tags,
        http2,
        interface: Preference { protocol, binding },
        redirects,
        tls,
        card_trust,
        price,
    })
}

/// `card_keys` and `require_signed_card`; `None` when they are wrong (reported).
fn card_trust(
    ctx: &mut Ctx<'_>,
    name: &str,
    t: &mut TableReader<'_, '_>,
    require_default: bool,
) -> Option<CardTrust> {
    let mut trust = CardTrust::default();
    let mut ok = true;
    if let Some(mut k) = t.table(ctx, "card_keys") {
        k.name = format!("the `card_keys` of agent `{name}`");
        if let Some(u) = k.string(ctx, "jwks_url") {
            ok &= check_url(ctx, &u, "jwks_url");
            trust.jwks_url = Some(u.value);
        }
        if let Some(f) = k.string(ctx, "jwks_file") {
            let dir = std::path::Path::new(ctx.file)
                .parent()
                .unwrap_or(std::path::Path::new(""));
            trust.jwks_file = Some(dir.join(&f.value));
        }
        if let Some(list) = k.strings(ctx, "jku_allow") {
            for u in list.value {
                ok &= check_url(ctx, &u, "jku_allow");
                trust.jku_allow.push(u.value);
            }
        }
        if let Some(keys) = k.get("keys") {
            match keys.get_ref().as_array() {
                Some(items) => {
                    for item in items.iter() {
                        let jwk = orchestrator_core::config::reader::to_json(item.get_ref());
                        if jwk.get("d").is_some() {
                            ctx.error(item.span(), "this is a private key: pin the public half (no `d`), and never put a private key in agents.toml");
                            ok = false;
                        } else if let Err(e) =
                            serde_json::from_value::<jsonwebtoken::jwk::Jwk>(jwk.clone())
                        {
                            ctx.error(item.span(), format!("not a public JWK: {e}"));
                            ok = false;
                        } else {
                            trust.keys.push(jwk);
                        }
                    }
                }
                None => {
                    ctx.error(keys.span(), "`keys` is a list of public JWKs: keys = [{ kty = \"EC\", crv = \"P-256\", x = \"…\", y = \"…\", kid = \"…\" }]");
                    ok = false;
                }
            }
        }
        if !trust.has_keys() && ok {
            ctx.error(
                k.span.clone(),
                "`card_keys` names no key: give `jwks_url`, `jwks_file`, `keys` or `jku_allow`",
            );
            ok = false;
        }
        k.finish(ctx, &["jwks_url", "jwks_file", "keys", "jku_allow"]);
    }
    let required = t.bool(ctx, "require_signed_card");
    trust.require = required.as_ref().map_or(require_default, |b| b.value);
    if trust.require && !trust.has_keys() && ok {
        let span = required.map_or(t.span.clone(), |b| b.span);
        ctx.error(span, format!("agent `{name}` must have a signed card, but no key may sign it: add `card_keys` (a `jwks_url`, a `jwks_file` or pinned `keys`)"));
        ok = false;
    }
    ok.then_some(trust)
}

/// An `"auto"`-or-one-of key: `Some(None)` for auto or absent, `Some(Some(v))` for a
/// known value, `None` (reported) for anything else.
fn choice<T: Copy>(
    ctx: &mut Ctx<'_>,
    given: Option<Sp<String>>,
    key: &str,
    known: &[(&str, T)],
) -> Option<Option<T>> {
    let Some(given) = given else {
        return Some(None);
    };
    let v = given.value.trim().to_ascii_lowercase();
    if v == "auto" {
        return Some(None);
    }
    if let Some((_, t)) = known.iter().find(|(name, _)| *name == v) {
        return Some(Some(*t));
    }
    let names: Vec<&str> = std::iter::once("auto")
        .chain(known.iter().map(|(n, _)| *n))
        .collect();
    let hint = did_you_mean(&v, names.iter().copied())
        .map(|m| format!(" (did you mean \"{m}\"?)"))
        .unwrap_or_default();
    let listed: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    ctx.error(
        given.span,
        format!(
            "unknown {key} \"{}\"{hint}; expected one of {}",
            given.value,
            listed.join(", ")
        ),
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_oauth2_client_credentials() {
        let src = r#"
[agents.hr]
url = "https://hr.example.com"
auth = { type = "oauth2_client_credentials", client_id_env = "HR_ID", client_secret_env = "HR_SECRET", scopes = ["hr.read"], resource = "urn:hr" }

[agents.it]
url = "https://it.example.com"
auth = { type = "oauth2_client_credentials", client_id_env = "IT_ID", client_secret = "s3cret" }
"#;
        let (file, diags) = load_str("agents.toml", src);
        assert!(file.is_none());
        let all: Vec<String> = diags.iter().map(ToString::to_string).collect();
        let all = all.join("\n");
        assert!(
            all.contains("8:71: error: unknown key `client_secret` in the `auth` of agent `it` (did you mean `client_secret_env`?)"),
            "{all}"
        );
        assert!(all.contains("is missing `client_secret_env`"), "{all}");
        let (file, diags) = load_str("agents.toml", &src[..src.find("[agents.it]").unwrap()]);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            file.unwrap().agents[0].auth,
            Some(AuthConfig::OAuth2ClientCredentials {
                client_id_env: "HR_ID".into(),
                client_secret_env: "HR_SECRET".into(),
                token_url: None,
                scopes: Some(vec!["hr.read".into()]),
                resource: Some("urn:hr".into()),
            })
        );
    }

    #[test]
    fn reads_every_field() {
        let src = r#"
[agents.hr]
url = "http://127.0.0.1:9201"
timeout = "30s"
max_concurrent = 4
tags = ["onboarding"]
headers = { "X-Tenant" = "acme" }
auth = { type = "bearer", token_env = "HR_TOKEN" }

[agents.it]
card_url = "https://it.example.com/card.json"
auth = { type = "api_key", key_env = "IT_KEY" }
"#;
        let (file, diags) = load_str("agents.toml", src);
        assert!(diags.is_empty(), "{diags:?}");
        let file = file.unwrap();
        assert_eq!(file.agents.len(), 2);
        let hr = &file.agents[0];
        assert_eq!(
            hr.source,
            CardSource::BaseUrl("http://127.0.0.1:9201".into())
        );
        assert_eq!(hr.timeout, Some(Duration::from_secs(30)));
        assert_eq!(
            hr.auth,
            Some(AuthConfig::Bearer {
                token_env: "HR_TOKEN".into()
            })
        );
        assert_eq!(
            file.agents[1].auth,
            Some(AuthConfig::ApiKey {
                header: "X-API-Key".into(),
                key_env: "IT_KEY".into()
            })
        );
    }

    #[test]
    fn http2_is_a_boolean_off_by_default() {
        let src =
            "[agents.a]\nurl = \"http://a\"\nhttp2 = true\n\n[agents.b]\nurl = \"http://b\"\n";
        let (file, diags) = load_str("agents.toml", src);
        assert!(diags.is_empty(), "{diags:?}");
        let file = file.unwrap();
        assert!(file.agents[0].http2);
        assert!(!file.agents[1].http2);

        let (file, diags) = load_str(
            "agents.toml",
            "[agents.a]\nurl = \"http://a\"\nhttp2 = \"yes\"\n",
        );
        assert!(file.is_none());
        let got: Vec<String> = diags.iter().map(|d| d.short()).collect();
        assert_eq!(
            got,
            ["3:9: error: `http2` in [agents.a] must be a boolean (true or false), not a string"]
        );
    }

    #[test]
    fn protocol_and_binding_are_auto_or_named() {
        let src = "[agents.a]\nurl = \"http://a\"\nprotocol = \"1.0\"\nbinding = \"http+json\"\n\n[agents.b]\nurl = \"http://b\"\nprotocol = \"auto\"\n";
        let (file, diags) = load_str("agents.toml", src);
        assert!(diags.is_empty(), "{diags:?}");
        let file = file.unwrap();
        assert_eq!(
            file.agents[0].interface,
            Preference {
                protocol: Some(Version::V1_0),
                binding: Some(Binding::HttpJson)
            }
        );
        assert_eq!(file.agents[1].interface, Preference::default());

        let src = "[agents.a]\nurl = \"http://a\"\nprotocol = \"1\"\nbinding = \"rest\"\n\n[agents.b]\nurl = \"http://b\"\nprotocol = \"0.3\"\nbinding = \"http+json\"\n";
        let (file, diags) = load_str("agents.toml", src);
        assert!(file.is_none());
        let got: Vec<String> = diags.iter().map(|d| d.short()).collect();
        assert_eq!(
            got,
            [
                "3:12: error: unknown protocol \"1\"; expected one of \"auto\", \"1.0\", \"0.3\"",
                "4:11: error: unknown binding \"rest\"; expected one of \"auto\", \"jsonrpc\", \"http+json\", \"grpc\"",
                "9:11: error: agent `b`: this orchestrator calls A2A 0.3 agents over JSON-RPC only; use binding = \"jsonrpc\" or protocol = \"1.0\"",
            ]
        );
    }

    #[test]
    fn reports_every_problem_with_its_location() {
        let src = "[agents.hr]\nurl = \"ftp://x\"\ntimeot = \"1s\"\nauth = { type = \"bearer\", token = \"s3cret\" }\n\n[agents.it]\nmax_concurrent = 0\n";
        let (file, diags) = load_str("agents.toml", src);
        assert!(file.is_none());
        let got: Vec<String> = diags.iter().map(|d| d.short()).collect();
        assert_eq!(
            got,
            [
                "2:7: error: `url` must be an http or https URL, not ftp",
                "3:1: error: unknown key `timeot` in [agents.hr] (did you mean `timeout`?)",
                "4:8: error: the `auth` of agent `hr` is missing `token_env`",
                "4:35: error: secrets do not go in agents.toml: put it in an environment variable and name that with `token_env`",
                "6:1: error: agent `it` needs `url` (its base URL) or `card_url` (its card's URL)",
                "7:18: error: `max_concurrent` must be at least 1, got 0",
            ]
        );
    }

    #[test]
    fn reads_card_keys_and_who_must_sign() {
        let src = r#"
[defaults]
require_signed_card = true

[agents.hr]
url = "https://hr.example.com"
card_keys = { jwks_url = "https://hr.example.com/.well-known/jwks.json", jku_allow = ["https://keys.example.com/hr.json"] }
auth = { type = "token_exchange", client_id_env = "ID", client_secret_env = "SECRET", actor = true }

[agents.it]
url = "https://it.example.com"
card_keys = { keys = [{ kty = "OKP", crv = "Ed25519", x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", kid = "it-1" }] }
require_signed_card = false
"#;
        let (file, diags) = load_str("conf/agents.toml", src);
        assert!(diags.is_empty(), "{diags:?}");
        let file = file.unwrap();
        let hr = &file.agents[0].card_trust;
        assert!(hr.require);
        assert_eq!(hr.jku_allow, ["https://keys.example.com/hr.json"]);
        assert!(matches!(
            file.agents[0].auth,
            Some(AuthConfig::TokenExchange { actor: true, .. })
        ));
        let it = &file.agents[1].card_trust;
        assert!(!it.require);
        assert_eq!(it.keys[0]["kid"], "it-1");

        let bad = r#"[defaults]
require_signed_card = true
[agents.hr]
url = "https://hr.example.com"
[agents.it]
url = "https://it.example.com"
card_keys = { keys = [{ kty = "EC", crv = "P-256", x = "a", y = "b", d = "c" }], jwks = "x" }
auth = { type = "oauth2_client_credentials", client_id_env = "ID", client_secret_env = "S", actor = true }
"#;
        let (file, diags) = load_str("agents.toml", bad);
        assert!(file.is_none());
        let got: Vec<String> = diags.iter().map(|d| d.short()).collect();
        assert_eq!(
            got,
            [
                "3:1: error: agent `hr` must have a signed card, but no key may sign it: add `card_keys` (a `jwks_url`, a `jwks_file` or pinned `keys`)",
                "7:23: error: this is a private key: pin the public half (no `d`), and never put a private key in agents.toml",
                "7:82: error: unknown key `jwks` in the `card_keys` of agent `it` (expected one of: jwks_url, jwks_file, keys, jku_allow)",
                "8:101: error: `actor` goes with `type = \"token_exchange\"` (it names the orchestrator as acting for the caller)",
            ]
        );
    }
}

//! The `[auth]` table of `serve --config`: credentials and the principals they name.
//!
//! ```toml
//! [auth]
//! bearer_token_env = ["ORCH_TOKEN"]   # unnamed tokens: each reaches every run (an operator)
//! api_key_env = ["ORCH_KEY"]
//! api_key_header = "X-API-Key"
//!
//! [auth.tokens.ci]                    # a named token: the principal `token:ci`
//! env = "CI_TOKEN"
//! roles = ["operator"]                # viewer, operator or admin (none: only its own runs)
//! groups = ["deploy"]
//! name = "CI pipeline"
//! tenants = ["acme"]                  # the /{tenant} prefixes it may use (any, when absent)
//!
//! [auth.roles]                        # roles granted by pattern (group:, sub:)
//! viewer = ["group:auditors"]
//! operator = ["group:sre"]
//! admin = ["sub:alice"]
//!
//! [auth.oidc]                         # bearer tokens an OpenID Provider signs
//! issuer = "https://login.example.com/realms/acme"
//! audience = "a2a-orchestrator"
//! roles_claim = "groups"              # a claim path such as realm_access.roles
//! tenant_claim = "tenant"             # the tenants a token may act in (any, when absent)
//! ca_file = "idp-ca.pem"              # a private IdP's CA, relative to the file
//! ui_client_id = "a2a-web"             # the web view signs people in (code + PKCE)
//! ui_scope = "openid profile"          # the scopes it asks for (the default)
//! ```

use std::path::Path;
use std::sync::Arc;

use a2a::server::{Credential, InboundAuth, Principal};
use orchestrator_core::config::reader::{Ctx, Sp, TableReader};

use super::oidc::{OidcSettings, OidcVerifier};
use super::{Grants, Pattern, ROLES, RoleRules, SignIn};
use crate::registry::env::Env;

const AUTH_KEYS: &[&str] = &[
    "bearer_token_env",
    "api_key_env",
    "api_key_header",
    "tokens",
    "roles",
    "oidc",
];
const TOKEN_KEYS: &[&str] = &["env", "name", "roles", "groups", "tenants"];
const OIDC_KEYS: &[&str] = &[
    "issuer",
    "audience",
    "roles_claim",
    "name_claim",
    "ca_file",
    "ui_client_id",
    "ui_scope",
    "tenant_claim",
];
/// Keys that would put a secret in the file: refused, with where secrets go instead.
const SECRET_KEYS: &[&str] = &["token", "key", "keys", "api_key", "password", "secret"];

/// Reads `[auth]`; `dir` is the file's directory (for `ca_file`). The credentials, and
/// where the web view signs people in (`[auth.oidc] ui_client_id`).
pub fn read(
    ctx: &mut Ctx<'_>,
    mut a: TableReader<'_, '_>,
    env: &dyn Env,
    dir: &Path,
) -> (InboundAuth, Option<SignIn>) {
    let mut sign_in = None;
    refuse_secrets(ctx, &mut a);
    let variable = |ctx: &mut Ctx<'_>, name: &Sp<String>, key: &str| match env
        .var(&name.value)
        .filter(|v| !v.is_empty())
    {
        Some(v) => Some(v),
        None => {
            ctx.error(
                name.span.clone(),
                format!(
                    "the environment variable {} (named in `{key}`) is not set",
                    name.value
                ),
            );
            None
        }
    };
    let secrets = |ctx: &mut Ctx<'_>, a: &mut TableReader<'_, '_>, key: &str| -> Vec<String> {
        a.strings(ctx, key)
            .map(|v| v.value)
            .unwrap_or_default()
            .iter()
            .filter_map(|name| variable(ctx, name, key))
            .collect()
    };
    let bearer_tokens = secrets(ctx, &mut a, "bearer_token_env");
    let keys = secrets(ctx, &mut a, "api_key_env");
    let header = a
        .string(ctx, "api_key_header")
        .map_or_else(|| "X-API-Key".to_owned(), |h| h.value);
    let mut auth = super::unnamed(bearer_tokens, (!keys.is_empty()).then_some((header, keys)));

    let rules = a
        .table_named(ctx, "roles", "[auth.roles]")
        .map(|r| read_roles(ctx, r))
        .unwrap_or_default();
    if let Some(tokens) = a.table_named(ctx, "tokens", "[auth.tokens]") {
        let entries: Vec<_> = tokens.entries().collect();
        let mut tokens = tokens;
        for (name, _) in entries {
            let Some(mut t) =
                tokens.table_named(ctx, name.value, &format!("[auth.tokens.{}]", name.value))
            else {
                continue;
            };
            refuse_secrets(ctx, &mut t);
            let secret = match t.string(ctx, "env") {
                Some(var) => variable(ctx, &var, "env"),
                None => {
                    ctx.error(
                        name.span.clone(),
                        format!(
                            "[auth.tokens.{}] needs `env`, the environment variable holding the token",
                            name.value
                        ),
                    );
                    None
                }
            };
            let display = t.string(ctx, "name").map(|n| n.value);
            let mut principal = Principal::new(
                None,
                format!("token:{}", name.value),
                display.unwrap_or_else(|| name.value.to_owned()),
            );
            let mut grants = Grants::default();
            for role in t.strings(ctx, "roles").map(|r| r.value).unwrap_or_default() {
                if ROLES.contains(&role.value.as_str()) {
                    grants.roles.push(role.value);
                } else {
                    ctx.error(
                        role.span,
                        format!(
                            "there is no role {:?} (the roles are {})",
                            role.value,
                            ROLES.join(", ")
                        ),
                    );
                }
            }
            grants.groups = t
                .strings(ctx, "groups")
                .map(|g| g.value.into_iter().map(|g| g.value).collect())
                .unwrap_or_default();
            grants.tenants = t
                .strings(ctx, "tenants")
                .map(|g| g.value.into_iter().map(|g| g.value).collect());
            rules.apply(&mut principal, grants);
            t.finish(ctx, &[TOKEN_KEYS, SECRET_KEYS].concat());
            if let Some(secret) = secret {
                auth.bearer.push(Credential {
                    secret,
                    principal: Arc::new(principal),
                });
            }
        }
    }
    if let Some(mut o) = a.table_named(ctx, "oidc", "[auth.oidc]") {
        let issuer = o.string(ctx, "issuer");
        let audience = o.string(ctx, "audience");
        let span = o.span();
        let roles_claim = o
            .string(ctx, "roles_claim")
            .map_or_else(|| "groups".to_owned(), |c| c.value);
        let name_claim = o.string(ctx, "name_claim").map(|c| c.value);
        let tenant_claim = o.string(ctx, "tenant_claim").map(|c| c.value);
        let ca_file = o
            .string(ctx, "ca_file")
            .map(|f| (dir.join(&f.value), f.span));
        let ui_client_id = o.string(ctx, "ui_client_id").map(|c| c.value);
        let ui_scope = o
            .string(ctx, "ui_scope")
            .map_or_else(|| "openid profile".to_owned(), |c| c.value);
        o.finish(ctx, OIDC_KEYS);
        match (issuer, audience) {
            (Some(issuer), Some(audience)) => {
                sign_in = ui_client_id.map(|client_id| SignIn {
                    issuer: issuer.value.clone(),
                    client_id,
                    scope: ui_scope,
                });
                let settings = OidcSettings {
                    issuer: issuer.value.clone(),
                    audience: audience.value,
                    roles_claim,
                    name_claim,
                    tenant_claim,
                    ca_file: ca_file.as_ref().map(|(p, _)| p.clone()),
                    rules: rules.clone(),
                    refetch_interval: super::oidc::REFETCH_INTERVAL,
                };
                match OidcVerifier::new(settings) {
                    Ok(v) => auth.tokens = Some(Arc::new(v)),
                    Err(why) => {
                        let at = match (&why.field, ca_file) {
                            (Some("ca_file"), Some((_, s))) => s,
                            _ => issuer.span,
                        };
                        ctx.error(at, why.message);
                    }
                }
            }
            _ => ctx.error(
                span,
                "[auth.oidc] needs `issuer` (the OpenID Provider's URL) and `audience` (what its tokens for this server carry in `aud`)",
            ),
        }
    }
    a.finish(ctx, &[AUTH_KEYS, SECRET_KEYS].concat());
    (auth, sign_in)
}

/// Reports a secret written into the file, saying where secrets go.
fn refuse_secrets(ctx: &mut Ctx<'_>, t: &mut TableReader<'_, '_>) {
    for secret in SECRET_KEYS {
        if let Some(v) = t.get(secret) {
            ctx.error(
                v.span(),
                "secrets do not go in the configuration file: put each in an environment variable and name it (`bearer_token_env`, `api_key_env`, or `env` in an [auth.tokens.NAME] table)",
            );
        }
    }
}

fn read_roles(ctx: &mut Ctx<'_>, mut r: TableReader<'_, '_>) -> RoleRules {
    let mut rules = RoleRules::default();
    for role in ROLES {
        let Some(patterns) = r.strings(ctx, role) else {
            continue;
        };
        let mut parsed = Vec::new();
        for p in patterns.value {
            match Pattern::parse(&p.value) {
                Ok(Pattern::Role(_)) => ctx.error(
                    p.span,
                    "a role is granted by group or subject, not by another role",
                ),
                Ok(pattern) => parsed.push(pattern),
                Err(why) => ctx.error(p.span, why),
            }
        }
        rules.grants.push((role.to_owned(), parsed));
    }
    r.finish(ctx, &ROLES);
    rules
}

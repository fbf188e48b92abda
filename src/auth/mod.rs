//! Who may call the orchestrator, and as whom: the principals behind its credentials
//! (static tokens with names, OpenID Connect tokens), the roles its configuration grants
//! them, and the patterns (`group:hr`, `sub:alice`, `role:operator`) that workflows and
//! approval steps use to say who may start them or answer them.
//!
//! The A2A server ([`a2a::server`]) authenticates each request and keeps every principal
//! to its own tasks; this module decides what a principal is beyond its name — its
//! [`Grants`], kept in the principal's attributes — and how far it reaches.

pub mod config;
pub mod oidc;

use a2a::server::{Access, Authorize, Caller, Credential, InboundAuth, Principal};
use a2a::store::StoredTask as Task;
use orchestrator_core::access::Actor;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use orchestrator_core::access::{Pattern, ROLES};

/// What a principal may do with runs that others started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reach {
    /// Only its own runs.
    #[default]
    Own,
    /// Read every run of its tenant (get, list, subscribe); steer only its own.
    ReadAll,
    /// Read, answer and steer every run of its tenant.
    SteerAll,
}

/// What the orchestrator knows of a principal besides its name, kept in its
/// [`Principal::attributes`] under these names (`groups`, `roles`, `reach`,
/// `tenants`), so that a request forwarded to another replica carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    /// The groups it belongs to (from the token's roles claim, or configured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// The roles granted to it (by the configuration).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// What it may do with runs others started: what its widest role carries.
    #[serde(default)]
    pub reach: Reach,
    /// The tenants it may act in; `None`: any (a principal no tenant claim scopes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<String>>,
}

/// An attribute of `principal`, or its default when absent or not of its type.
fn attribute<T: DeserializeOwned + Default>(principal: &Principal, name: &str) -> T {
    principal
        .attributes
        .get(name)
        .and_then(|v| T::deserialize(v).ok())
        .unwrap_or_default()
}

impl Grants {
    /// What `principal`'s attributes grant it.
    pub fn of(principal: &Principal) -> Grants {
        Grants {
            groups: attribute(principal, "groups"),
            roles: attribute(principal, "roles"),
            reach: Grants::reach(principal),
            tenants: attribute(principal, "tenants"),
        }
    }

    /// `principal`'s reach alone (asked on every request for another's run).
    pub fn reach(principal: &Principal) -> Reach {
        attribute(principal, "reach")
    }

    /// Whether `principal` may act in `tenant`.
    pub fn joins(principal: &Principal, tenant: &str) -> bool {
        match principal.attributes.get("tenants") {
            None | Some(serde_json::Value::Null) => true,
            Some(serde_json::Value::Array(list)) => list.iter().any(|t| t == tenant),
            // Not a list: read as none, never as any.
            Some(_) => false,
        }
    }

    /// Writes these grants, with the reach of its widest role, into `principal`.
    pub fn put(mut self, principal: &mut Principal) {
        self.reach = reach_of(&self.roles);
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(self) {
            for key in ["groups", "roles", "reach", "tenants"] {
                principal.attributes.remove(key);
            }
            principal.attributes.extend(fields);
        }
    }
}

/// The rule of roles, as an A2A server's [`Authorize`]: a viewer reads every task of
/// its tenant, an operator and an admin read and steer every task of it (their
/// [`Reach`]); a principal whose grants name tenants acts only in those. (`serve` adds
/// the approvers of a run's pending questions: `host::access::Rules`.)
#[derive(Debug, Clone, Copy, Default)]
pub struct ByRole;

impl Authorize for ByRole {
    fn lets(&self, caller: &Caller, _task: Option<&Task>, access: Access) -> bool {
        caller.principal().is_some_and(|p| {
            matches!(
                (Grants::reach(p), access),
                (Reach::SteerAll, _) | (Reach::ReadAll, Access::Read)
            )
        })
    }

    fn joins(&self, principal: &Principal, tenant: &str) -> bool {
        Grants::joins(principal, tenant)
    }
}

/// Whether `pattern` names `principal`.
pub fn names(pattern: &Pattern, principal: &Principal) -> bool {
    let g = Grants::of(principal);
    pattern.names(&principal.id, &principal.subject, &g.groups, &g.roles)
}

/// The core's view of a principal: who acts on a run.
pub fn actor(principal: &Principal) -> Actor {
    let g = Grants::of(principal);
    Actor {
        id: principal.id.clone(),
        subject: principal.subject.clone(),
        name: principal.name.clone(),
        groups: g.groups,
        roles: g.roles,
    }
}

/// The principal `actor` was when a run recorded it (its groups and roles as they
/// were then; no token): who a resumed run's child runs are started as.
pub fn principal_of(actor: &Actor) -> Principal {
    let mut p = Principal {
        id: actor.id.clone(),
        issuer: actor
            .id
            .split_once('#')
            .map(|(issuer, _)| issuer.to_owned()),
        subject: actor.subject.clone(),
        name: actor.name.clone(),
        attributes: Default::default(),
        token: None,
    };
    Grants {
        groups: actor.groups.clone(),
        roles: actor.roles.clone(),
        reach: Reach::default(),
        tenants: None,
    }
    .put(&mut p);
    p
}

/// Bearer tokens and API keys known only by themselves (the plain lists of
/// `bearer_token_env`, `--bearer-token-env`): each names its own principal (see
/// [`Credential::unnamed`]), an operator, as every credential was before principals
/// had names.
pub fn unnamed(bearer: Vec<String>, api_key: Option<(String, Vec<String>)>) -> InboundAuth {
    let mut auth = InboundAuth::unnamed(bearer, api_key);
    let operators = auth.bearer.iter_mut().chain(
        auth.api_key
            .iter_mut()
            .flat_map(|(_, keys)| keys.iter_mut()),
    );
    operators.for_each(|c: &mut Credential| {
        let mut principal = (*c.principal).clone();
        Grants {
            roles: vec!["operator".to_owned()],
            ..Grants::default()
        }
        .put(&mut principal);
        c.principal = std::sync::Arc::new(principal);
    });
    auth
}

/// Where people sign in to the web view: an OpenID Provider, and the page's client id
/// there (a public client: the authorization-code flow with PKCE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn {
    pub issuer: String,
    pub client_id: String,
    /// The scopes asked for (`openid profile` unless `ui_scope` says).
    pub scope: String,
}

/// `[auth.roles]`: which principals each role goes to.
#[derive(Debug, Clone, Default)]
pub struct RoleRules {
    /// Per role (one of [`ROLES`]), the patterns of the principals it goes to.
    pub grants: Vec<(String, Vec<Pattern>)>,
}

impl RoleRules {
    /// Gives `principal` (with `grants`, its groups and roles so far) the roles the
    /// rules grant it, beside those it has, and the reach its widest role carries: a
    /// viewer reads every run, an operator and an admin read and steer every run.
    pub fn apply(&self, principal: &mut Principal, mut grants: Grants) {
        for (role, patterns) in &self.grants {
            if !grants.roles.contains(role)
                && patterns.iter().any(|p| {
                    !matches!(p, Pattern::Role(_))
                        && p.names(
                            &principal.id,
                            &principal.subject,
                            &grants.groups,
                            &grants.roles,
                        )
                })
            {
                grants.roles.push(role.clone());
            }
        }
        grants.put(principal);
    }
}

/// The reach the widest of `roles` carries.
pub fn reach_of(roles: &[String]) -> Reach {
    roles
        .iter()
        .map(|r| match r.as_str() {
            "operator" | "admin" => Reach::SteerAll,
            "viewer" => Reach::ReadAll,
            _ => Reach::Own,
        })
        .max()
        .unwrap_or(Reach::Own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_grant_roles_and_their_reach() {
        let mut p = Principal::new(Some("https://idp".into()), "alice", "Alice");
        let rules = RoleRules {
            grants: vec![
                ("viewer".into(), vec![Pattern::Group("hr".into())]),
                ("operator".into(), vec![Pattern::Subject("bob".into())]),
            ],
        };
        let grants = Grants {
            groups: vec!["hr".into()],
            tenants: Some(vec!["acme".into()]),
            ..Grants::default()
        };
        rules.apply(&mut p, grants);
        let g = Grants::of(&p);
        assert_eq!(g.roles, ["viewer"]);
        assert_eq!(g.reach, Reach::ReadAll);
        assert_eq!(Grants::reach(&p), Reach::ReadAll);
        assert!(Grants::joins(&p, "acme") && !Grants::joins(&p, "other"));
        assert!(names(&Pattern::parse("role:viewer").unwrap(), &p));
        assert!(names(&Pattern::parse("group:hr").unwrap(), &p));
        assert_eq!(actor(&p).id, "https://idp#alice");
        // Forwarded to another replica and read back, they say the same.
        let back: Principal = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(Grants::of(&back), g);
        // Legacy credentials are operators.
        let legacy = unnamed(vec!["t".into()], None);
        assert_eq!(Grants::reach(&legacy.bearer[0].principal), Reach::SteerAll);
    }
}

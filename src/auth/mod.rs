//! Who may call the orchestrator, and as whom: the principals behind its credentials
//! (static tokens with names, OpenID Connect tokens), the roles its configuration grants
//! them, and the patterns (`group:hr`, `sub:alice`, `role:operator`) that workflows and
//! approval steps use to say who may start them or answer them.
//!
//! The A2A server ([`a2a::server`]) authenticates each request and keeps every principal
//! to its own tasks; this module decides what a principal is and how far it reaches.

pub mod config;
pub mod oidc;

use a2a::server::{Principal, Reach};
use orchestrator_core::access::Actor;

pub use orchestrator_core::access::{Pattern, ROLES};

/// Whether `pattern` names `principal`.
pub fn names(pattern: &Pattern, principal: &Principal) -> bool {
    pattern.names(
        &principal.id,
        &principal.subject,
        &principal.groups,
        &principal.roles,
    )
}

/// The core's view of a principal: who acts on a run.
pub fn actor(principal: &Principal) -> Actor {
    Actor {
        id: principal.id.clone(),
        subject: principal.subject.clone(),
        name: principal.name.clone(),
        groups: principal.groups.clone(),
        roles: principal.roles.clone(),
    }
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
    /// Gives `principal` the roles the rules grant it (beside those it has), and the
    /// reach its widest role carries: a viewer reads every run, an operator and an admin
    /// read and steer every run.
    pub fn apply(&self, principal: &mut Principal) {
        for (role, patterns) in &self.grants {
            if !principal.roles.contains(role)
                && patterns
                    .iter()
                    .any(|p| !matches!(p, Pattern::Role(_)) && names(p, principal))
            {
                principal.roles.push(role.clone());
            }
        }
        principal.reach = reach_of(&principal.roles);
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
        p.groups = vec!["hr".into()];
        let rules = RoleRules {
            grants: vec![
                ("viewer".into(), vec![Pattern::Group("hr".into())]),
                ("operator".into(), vec![Pattern::Subject("bob".into())]),
            ],
        };
        rules.apply(&mut p);
        assert_eq!(p.roles, ["viewer"]);
        assert_eq!(p.reach, Reach::ReadAll);
        assert!(names(&Pattern::parse("role:viewer").unwrap(), &p));
        assert_eq!(actor(&p).id, "https://idp#alice");
    }
}

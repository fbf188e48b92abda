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

/// The roles `[auth.roles]` grants, each wider than the one before.
pub const ROLES: [&str; 3] = ["viewer", "operator", "admin"];

/// Who a pattern names: `group:NAME` (a member of the group), `sub:SUBJECT` (the
/// principal whose subject this is, `sub:token:ci` for a named token), `role:NAME`
/// (anyone granted the role), or `*` (anyone authenticated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    Group(String),
    Subject(String),
    Role(String),
    Anyone,
}

impl Pattern {
    /// Reads one pattern, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        if text == "*" {
            return Ok(Pattern::Anyone);
        }
        let (kind, name) = text.split_once(':').ok_or_else(|| {
            format!("{text:?} names no one: write `group:NAME`, `sub:SUBJECT`, `role:NAME` or `*`")
        })?;
        if name.is_empty() {
            return Err(format!("{text:?} has nothing after `{kind}:`"));
        }
        match kind {
            "group" => Ok(Pattern::Group(name.to_owned())),
            "sub" => Ok(Pattern::Subject(name.to_owned())),
            "role" if ROLES.contains(&name) => Ok(Pattern::Role(name.to_owned())),
            "role" => Err(format!(
                "{text:?}: there is no role {name:?} (the roles are {})",
                ROLES.join(", ")
            )),
            _ => Err(format!(
                "{text:?}: `{kind}:` is not a kind of name (write `group:`, `sub:` or `role:`)"
            )),
        }
    }

    /// Whether `principal` is one it names.
    pub fn matches(&self, principal: &Principal) -> bool {
        match self {
            Pattern::Anyone => true,
            Pattern::Group(g) => principal.groups.iter().any(|x| x == g),
            Pattern::Subject(s) => principal.subject == *s,
            Pattern::Role(r) => principal.roles.iter().any(|x| x == r),
        }
    }
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
                    .any(|p| !matches!(p, Pattern::Role(_)) && p.matches(principal))
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
    fn patterns_name_groups_subjects_and_roles() {
        let mut p = Principal::new(Some("https://idp".into()), "alice", "Alice");
        p.groups = vec!["hr".into()];
        assert!(Pattern::parse("group:hr").unwrap().matches(&p));
        assert!(!Pattern::parse("group:it").unwrap().matches(&p));
        assert!(Pattern::parse("sub:alice").unwrap().matches(&p));
        assert!(Pattern::parse("*").unwrap().matches(&p));
        assert!(
            Pattern::parse("role:boss")
                .unwrap_err()
                .contains("there is no role")
        );
        assert!(Pattern::parse("hr").unwrap_err().contains("group:NAME"));
        let rules = RoleRules {
            grants: vec![("viewer".into(), vec![Pattern::Group("hr".into())])],
        };
        rules.apply(&mut p);
        assert_eq!(p.roles, ["viewer"]);
        assert_eq!(p.reach, Reach::ReadAll);
        assert!(Pattern::parse("role:viewer").unwrap().matches(&p));
    }
}

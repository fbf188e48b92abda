//! Who does things to runs, in the core's own terms: the [`Actor`] behind a request
//! (however the application authenticated it) and the [`Pattern`]s a workflow uses to
//! say who may start it (`allow`) and who may answer its questions (`approvers`).
//!
//! The engine records actors — who started a run, who answered each question — and
//! refuses an answer from someone a step does not name; it never sees a credential.

use serde::{Deserialize, Serialize};

/// The roles the application grants, each wider than the one before.
pub const ROLES: [&str; 3] = ["viewer", "operator", "admin"];

/// Someone acting on a run: a person signed in, or a service with a named token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// Stable and unique (`{issuer}#{subject}`, or `token:NAME`).
    pub id: String,
    /// Its name at its issuer (`sub`), or `token:NAME`.
    pub subject: String,
    /// A name to show people.
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

/// Who a pattern names: `group:NAME` (a member of the group), `sub:SUBJECT` (the one
/// an identity provider knows by this subject), `sub:ISSUER#SUBJECT` (that issuer's
/// subject only), `sub:token:NAME` (the named static token, and nothing an issuer
/// signed), `role:NAME` (anyone granted the role), or `*` (anyone authenticated).
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

    /// Whether it names someone with this id (`{issuer}#{subject}` for one an issuer
    /// vouches for, the subject alone for a static credential), subject, groups and
    /// roles. A subject pattern names a whole identity: `sub:token:ci` never names a
    /// token whose issuer calls its subject `token:ci`, nor `sub:alice` a static token.
    pub fn names(&self, id: &str, subject: &str, groups: &[String], roles: &[String]) -> bool {
        match self {
            Pattern::Anyone => true,
            Pattern::Group(g) => groups.iter().any(|x| x == g),
            Pattern::Subject(s) => {
                let issued = id != subject;
                if s.starts_with("token:") {
                    !issued && id == s
                } else {
                    issued && (subject == s || id == s)
                }
            }
            Pattern::Role(r) => roles.iter().any(|x| x == r),
        }
    }

    /// Whether it names `actor`.
    pub fn matches(&self, actor: &Actor) -> bool {
        self.names(&actor.id, &actor.subject, &actor.groups, &actor.roles)
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pattern::Anyone => f.write_str("*"),
            Pattern::Group(g) => write!(f, "group:{g}"),
            Pattern::Subject(s) => write!(f, "sub:{s}"),
            Pattern::Role(r) => write!(f, "role:{r}"),
        }
    }
}

/// Whether `actor` is named by one of `patterns` (an empty list names everyone).
pub fn allowed(patterns: &[Pattern], actor: &Actor) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| p.matches(actor))
}

/// `patterns` as people read them: `group:hr or sub:alice`.
pub fn describe(patterns: &[Pattern]) -> String {
    patterns
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Who started a run, and in which tenant (both none on a server that knows neither).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub initiator: Option<Actor>,
    pub tenant: Option<String>,
    /// The run this one retries, if it is a retry.
    pub retry_of: Option<String>,
    /// The run whose workflow step started this one, if one did.
    pub parent: Option<crate::engine::ParentRun>,
}

/// Who may answer a step's questions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answerers {
    /// Who may (empty: anyone who may steer the run).
    pub approvers: Vec<Pattern>,
    /// The run's initiator may not answer.
    pub four_eyes: bool,
    /// How many different people must approve (approval steps; 1 by default).
    pub quorum: u32,
}

/// One person's answer to a question, as the run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub by: Actor,
    /// When (RFC 3339).
    pub at: String,
    /// `approved`, `rejected` or `answered`.
    pub action: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_groups_subjects_and_roles() {
        let alice = Actor {
            id: "https://idp#alice".into(),
            subject: "alice".into(),
            name: "Alice".into(),
            groups: vec!["hr".into()],
            roles: vec!["viewer".into()],
        };
        assert!(Pattern::parse("group:hr").unwrap().matches(&alice));
        assert!(!Pattern::parse("group:it").unwrap().matches(&alice));
        assert!(Pattern::parse("sub:alice").unwrap().matches(&alice));
        assert!(Pattern::parse("role:viewer").unwrap().matches(&alice));
        assert!(Pattern::parse("*").unwrap().matches(&alice));
        assert!(
            Pattern::parse("role:boss")
                .unwrap_err()
                .contains("there is no role")
        );
        assert!(Pattern::parse("hr").unwrap_err().contains("group:NAME"));
        assert!(Pattern::parse("team:x").unwrap_err().contains("not a kind"));
        assert!(
            Pattern::parse("sub:https://idp#alice")
                .unwrap()
                .matches(&alice)
        );
        assert!(
            !Pattern::parse("sub:https://other#alice")
                .unwrap()
                .matches(&alice)
        );
        let list = [Pattern::Group("it".into()), Pattern::Subject("bob".into())];
        assert!(!allowed(&list, &alice));
        assert!(allowed(&[], &alice));
        assert_eq!(describe(&list), "group:it or sub:bob");
    }

    /// Issue 81: a subject pattern names a whole identity, a static token's or an
    /// issuer's subject, never one for the other.
    #[test]
    fn subject_patterns_tell_static_tokens_from_issued_subjects() {
        let actor = |id: &str, subject: &str| Actor {
            id: id.into(),
            subject: subject.into(),
            name: subject.into(),
            groups: vec![],
            roles: vec![],
        };
        let ci_token = actor("token:ci", "token:ci");
        let spoof = actor("https://idp#token:ci", "token:ci");
        let alice_token = actor("alice", "alice");
        let alice = actor("https://idp#alice", "alice");
        let token_pattern = Pattern::parse("sub:token:ci").unwrap();
        assert!(token_pattern.matches(&ci_token));
        assert!(
            !token_pattern.matches(&spoof),
            "an issued `token:ci` is not the token"
        );
        let subject = Pattern::parse("sub:alice").unwrap();
        assert!(subject.matches(&alice));
        assert!(
            !subject.matches(&alice_token),
            "a static credential is no subject"
        );
        assert!(
            Pattern::parse("sub:https://idp#token:ci")
                .unwrap()
                .matches(&spoof)
        );
    }
}

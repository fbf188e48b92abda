//! Who a request comes from, as the server names it and a store shared by servers
//! carries it with a request it forwards: an id, a name, and what the application
//! knows of it besides (its attributes, opaque here).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Someone a credential speaks for: a person signed in at an identity provider, or a
/// service holding a static token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    /// Stable and unique: `{issuer}#{subject}` for a token an issuer signed, the
    /// subject alone for a static credential. Tasks record it as their initiator.
    pub id: String,
    /// Who vouches for it (an OpenID issuer), none for a static credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Its name at the issuer (`sub`), or the static credential's name (`token:ci`).
    pub subject: String,
    /// A name to show people.
    pub name: String,
    /// What the application knows of it besides (its groups and roles, say), for its
    /// server's `Authorize` to read: this crate reads none of it. Serialized beside the fields
    /// above (a request forwarded to the server that runs its task carries them).
    #[serde(flatten)]
    pub attributes: Map<String, Value>,
    /// The token it presented, when the server's `VerifyToken` vouched for it (never a static
    /// credential): in memory only, for an application that acts on its behalf by
    /// exchanging it. Never serialized.
    #[serde(skip)]
    pub token: Option<PresentedToken>,
}

/// A bearer token a caller presented, kept in memory only; its `Debug` says nothing
/// of it.
#[derive(Clone, PartialEq, Eq)]
pub struct PresentedToken(Arc<str>);

impl PresentedToken {
    #[cfg(feature = "server")]
    pub(crate) fn new(token: &str) -> Self {
        PresentedToken(token.into())
    }

    /// The token as presented.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PresentedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PresentedToken(<redacted>)")
    }
}

impl Principal {
    /// A principal named by `issuer` (when a token issuer vouches for it) and `subject`,
    /// shown as `name`, with no attributes.
    pub fn new(
        issuer: Option<String>,
        subject: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        let subject = subject.into();
        let id = match &issuer {
            Some(iss) => format!("{iss}#{subject}"),
            None => subject.clone(),
        };
        Principal {
            id,
            issuer,
            subject,
            name: name.into(),
            attributes: Map::new(),
            token: None,
        }
    }
}

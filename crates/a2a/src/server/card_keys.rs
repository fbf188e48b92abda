//! This server's own card signatures: the key it signs its cards with, and the key set
//! (JWKS) it publishes at [`JWKS_PATH`] so that clients can check them.
//!
//! Cards are published for two generations at once (see `http::published_card`), so a
//! card carries a signature per reading of it (`crate::signing::Projection`): the
//! official v1.0 SDKs check the v1.0 one, a v0.3 client the one over the fields it
//! reads. The key set holds the current key and every key this server signed with
//! before it, and any retired key it was given: a client that cached a card signed by
//! the old key can still check it after a rotation.

use serde_json::Value;

use crate::Versions;
use crate::card::AgentCardSignature;
use crate::signing::{CardSigningKey, Projection};

/// Where the key set is published.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The key cards are signed with now, and the public keys published beside it.
#[derive(Debug)]
pub struct CardKeys {
    current: CardSigningKey,
    /// Public JWKs of earlier and retired keys, without the current one.
    others: Vec<Value>,
}

impl CardKeys {
    /// Signing with `current`; `retired` (public JWKs) published beside it.
    pub fn new(current: CardSigningKey, retired: Vec<Value>) -> CardKeys {
        let kid = current.kid().to_owned();
        let others = retired
            .into_iter()
            .filter(|k| k.get("kid").and_then(Value::as_str) != Some(&kid))
            .collect();
        CardKeys { current, others }
    }

    /// Signing with `next` from now on, this key set's keys still published.
    pub fn rotated(&self, next: CardSigningKey) -> CardKeys {
        let mut others = self.others.clone();
        others.insert(0, self.current.public_jwk().clone());
        CardKeys::new(next, others)
    }

    /// The key signing now.
    pub fn current(&self) -> &CardSigningKey {
        &self.current
    }

    /// The JWKS document: the current key first.
    pub fn jwks(&self) -> Value {
        let keys: Vec<Value> = std::iter::once(self.current.public_jwk().clone())
            .chain(self.others.iter().cloned())
            .collect();
        serde_json::json!({ "keys": keys })
    }

    /// Signatures for a card published for `generations`: one over each reading a
    /// client of those generations makes of it, naming the key set at `jku`.
    pub(super) fn sign(
        &self,
        card: &Value,
        generations: Versions,
        jku: Option<&str>,
    ) -> Vec<AgentCardSignature> {
        let projections: &[Projection] = match generations {
            Versions::Both => &[Projection::V1_0, Projection::V0_3],
            Versions::V1_0 => &[Projection::V1_0],
            Versions::V0_3 => &[Projection::V0_3],
        };
        // Our own cards always fit the schema (they are built from typed values); one
        // that did not would go out unsigned and fail its clients' checks, not this
        // server.
        self.current
            .sign(card, projections, jku)
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "the card cannot be signed");
                Vec::new()
            })
    }
}

/// The key set's URL for a card served at `card_url`: the same origin, [`JWKS_PATH`].
pub(super) fn jwks_url(card_url: &str) -> Option<String> {
    let url = url::Url::parse(card_url).ok()?;
    let origin = url.origin();
    origin
        .is_tuple()
        .then(|| format!("{}{JWKS_PATH}", origin.ascii_serialization()))
}

//! Whether an agent's card is the one its publisher signed (`card_keys`,
//! `require_signed_card` in agents.toml), checked each time the card is fetched and
//! before it is used.
//!
//! Keys come from the entry: pinned JWKs, a JWKS file (read at each check: it is
//! small, and a replaced file counts at once) and a JWKS URL (fetched, kept, fetched
//! again for a key id it lacks at most once per [`REFETCH_AFTER`]); a signature's own
//! `jku` is followed only when the entry lists that URL in `jku_allow`. Key sets are
//! fetched like every document from a peer here: https (or http on loopback), no
//! redirects, bounded in size and time.
//!
//! A signature vouches for one reading of the card (`a2a::signing::Projection`): the
//! card used afterwards is that reading, so nothing unsigned (a v0.3 `url` beside a
//! v1.0 signature) decides where the workflow's data goes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use serde_json::Value;
use tokio::sync::Mutex;

use a2a::signing::{self, Verified, VerifyError};

use super::config::CardTrust;
use crate::untrusted::{read_bounded, trustworthy};

/// Least time between two fetches of one key set.
pub const REFETCH_AFTER: Duration = Duration::from_secs(30);

/// Largest key set read.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// How long one key set fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The note of an unsigned card no key was given for: how agents were always taken.
pub const UNSIGNED: &str = "unsigned";

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A trusted key signed it: use `card` (the signed reading) and say `note`.
    Verified { card: Value, note: String },
    /// Not verified, and not required to be: use the card as served, saying why.
    Unverified { note: String },
}

/// One agent's trust settings and the key sets fetched for it.
pub struct CardChecker {
    trust: CardTrust,
    fetched: Mutex<HashMap<String, (Instant, Vec<Jwk>)>>,
}

impl CardChecker {
    pub fn new(trust: CardTrust) -> CardChecker {
        CardChecker {
            trust,
            fetched: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the card must be signed.
    pub fn required(&self) -> bool {
        self.trust.require
    }

    /// Whether keys are given to check the card with.
    pub fn has_keys(&self) -> bool {
        self.trust.has_keys()
    }

    /// Checks `document` (the card as served), fetching key sets with `http`. `Err` is
    /// a refusal: the card must not be used, for the reason given.
    pub async fn check(&self, http: &reqwest::Client, document: &Value) -> Result<Verdict, String> {
        let headers = signing::signature_headers(document);
        let signed = document
            .get("signatures")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        if !signed {
            if !self.trust.has_keys() {
                return Ok(Verdict::Unverified {
                    note: UNSIGNED.to_owned(),
                });
            }
            return self.unverified(VerifyError::Unsigned.to_string());
        }
        if !self.trust.has_keys() {
            return Ok(Verdict::Unverified {
                note: "its card is signed, but no `card_keys` say whose signature to trust: not checked".into(),
            });
        }
        let kids: Vec<&str> = headers.iter().filter_map(|h| h.kid.as_deref()).collect();
        let mut keys: Vec<Jwk> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for k in &self.trust.keys {
            if let Ok(jwk) = serde_json::from_value(k.clone()) {
                keys.push(jwk);
            }
        }
        if let Some(file) = &self.trust.jwks_file {
            match std::fs::read(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))
                .and_then(|b| parse_jwks(&b).map_err(|e| format!("{}: {e}", file.display())))
            {
                Ok(found) => keys.extend(found),
                Err(e) => problems.push(e),
            }
        }
        let mut urls: Vec<&str> = self.trust.jwks_url.iter().map(String::as_str).collect();
        for h in &headers {
            if let Some(jku) = &h.jku
                && self.trust.jku_allow.iter().any(|a| a == jku)
                && !urls.contains(&jku.as_str())
            {
                urls.push(jku);
            }
        }
        for url in urls {
            match self.key_set(http, url, &kids).await {
                Ok(found) => keys.extend(found),
                Err(e) => problems.push(e),
            }
        }
        match signing::verify(document, &keys) {
            Ok(Verified {
                projection,
                kid,
                card,
            }) => Ok(Verdict::Verified {
                card,
                note: format!(
                    "signature verified (key {}; the A2A {} fields are what is signed and used)",
                    kid.as_deref().unwrap_or("without kid"),
                    projection.as_str()
                ),
            }),
            Err(e) => {
                let mut why = e.to_string();
                if !problems.is_empty() {
                    why.push_str(&format!(" [{}]", problems.join("; ")));
                }
                self.unverified(why)
            }
        }
    }

    fn unverified(&self, why: String) -> Result<Verdict, String> {
        if self.trust.require {
            Err(format!("card refused: {why} (require_signed_card is set)"))
        } else {
            Ok(Verdict::Unverified {
                note: format!("{why}; used anyway (require_signed_card is off)"),
            })
        }
    }

    /// The keys at `url`, fetched when not held, or when a key in `want` is missing and
    /// the last fetch is older than [`REFETCH_AFTER`].
    async fn key_set(
        &self,
        http: &reqwest::Client,
        url: &str,
        want: &[&str],
    ) -> Result<Vec<Jwk>, String> {
        let mut fetched = self.fetched.lock().await;
        if let Some((at, keys)) = fetched.get(url) {
            let has_all = want
                .iter()
                .all(|kid| keys.iter().any(|k| k.common.key_id.as_deref() == Some(kid)));
            if has_all || at.elapsed() < REFETCH_AFTER {
                return Ok(keys.clone());
            }
        }
        let keys = fetch_jwks(http, url).await?;
        fetched.insert(url.to_owned(), (Instant::now(), keys.clone()));
        Ok(keys)
    }
}

async fn fetch_jwks(http: &reqwest::Client, url: &str) -> Result<Vec<Jwk>, String> {
    if !trustworthy(url) {
        return Err(format!(
            "{url}: keys are fetched over https only (or http on loopback)"
        ));
    }
    let response = tokio::time::timeout(FETCH_TIMEOUT, http.get(url).send())
        .await
        .map_err(|_| format!("{url}: no answer within {}s", FETCH_TIMEOUT.as_secs()))?
        .map_err(|e| format!("{url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let body = read_bounded(url, response, MAX_JWKS_BYTES).await?;
    parse_jwks(&body).map_err(|e| format!("{url}: {e}"))
}

/// The keys of a JWKS document (a key of a kind not known is skipped).
fn parse_jwks(bytes: &[u8]) -> Result<Vec<Jwk>, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("not a JWK set (no `keys` list)")?;
    Ok(keys
        .iter()
        .filter(|k| k.get("d").is_none())
        .filter_map(|k| serde_json::from_value(k.clone()).ok())
        .collect())
}

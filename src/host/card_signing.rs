//! The orchestrator's own card signatures (`[server] card_signing_key`): the key read
//! at start, and read again when its file changes — a rotation: cards are signed with
//! the new key from then on, and the old key's public half stays in the published key
//! set (as do `card_retired_keys`), so a client holding a card signed before can still
//! check it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use a2a::server::{A2aServer, CardKeys};
use a2a::signing::CardSigningKey;
use serde_json::Value;

/// How often the key file is looked at.
pub const RECHECK_EVERY: Duration = Duration::from_secs(2);

/// The signing key's file, and the public keys published beside it.
#[derive(Debug)]
pub struct CardSigning {
    path: PathBuf,
    retired: Vec<Value>,
    /// The key file's contents when the settings were read (they parsed).
    first: Vec<u8>,
}

impl CardSigning {
    /// Reads the key at `path` (a PKCS#8 PEM or a private JWK, ES256 or EdDSA) and the
    /// keys at `retired` (the same kinds; only their public halves are published).
    pub fn open(path: PathBuf, retired: &[PathBuf]) -> Result<CardSigning, String> {
        let first =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        CardSigningKey::from_bytes(&first).map_err(|e| format!("{}: {e}", path.display()))?;
        let retired = retired
            .iter()
            .map(|p| read_key(p).map(|k| k.public_jwk().clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CardSigning {
            path,
            retired,
            first,
        })
    }

    /// The keys to start with: the key as it was when the settings were read.
    pub fn keys(&self) -> CardKeys {
        let key = CardSigningKey::from_bytes(&self.first)
            .expect("the key parsed when the settings were read");
        CardKeys::new(key, self.retired.clone())
    }

    /// Watches the key file until dropped: when it changes and holds a valid key, the
    /// server signs with it (the key before still published); when it does not, the
    /// problem is logged and the key before stays.
    pub async fn watch(self: std::sync::Arc<Self>, server: A2aServer) {
        let mut seen = stamp(&self.path);
        loop {
            tokio::time::sleep(RECHECK_EVERY).await;
            let now = stamp(&self.path);
            if now == seen {
                continue;
            }
            seen = now;
            match read_key(&self.path) {
                Ok(next) => {
                    let Some(keys) = server.card_keys() else {
                        continue;
                    };
                    if next.kid() == keys.current().kid() {
                        continue;
                    }
                    tracing::info!(kid = %next.kid(), before = %keys.current().kid(), "the card signing key changed: cards are signed with the new one, the old one stays published");
                    server.sign_cards_with(keys.rotated(next));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the card signing key file changed but cannot be used: cards stay signed with the key before")
                }
            }
        }
    }
}

fn read_key(path: &Path) -> Result<CardSigningKey, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    CardSigningKey::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// When the file was last changed, and its size: what says it changed.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

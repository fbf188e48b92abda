//! TLS for the server's port: a certificate chain and key read from PEM files, served
//! with rustls (ring, the crypto the rest of the stack already uses), HTTP/2 and
//! HTTP/1.1 offered by ALPN — and picked up again when the files change, so that a
//! rotated certificate needs no restart.
//!
//! The files are looked at (their modification times) at most once per
//! [`RECHECK_EVERY`], on a handshake; a new pair that does not load (half-written, a key
//! that is not the certificate's) is logged and the old one kept.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Least time between two looks at the files.
pub const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// Why the certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read, or holds no PEM item of its kind.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The key is not the certificate's, or not a kind rustls signs with.
    #[error("{cert} and {key} do not go together: {why}")]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        why: String,
    },
}

/// The certificate chain and key files a server presents, reloaded when they change.
#[derive(Debug)]
pub struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
    /// Checks the certificate every client must present (mutual TLS), when one must.
    clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    /// When the files were last looked at, and their modification times then.
    seen: Mutex<(Instant, Option<SystemTime>, Option<SystemTime>)>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let bad = |path: &Path, why: String| TlsError::File {
        path: path.to_owned(),
        why,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(cert, e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad(cert, "holds no PEM certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| bad(key, format!("holds no PEM private key ({e})")))?;
    let pair =
        CertifiedKey::from_der(chain, private, provider).map_err(|e| TlsError::Mismatch {
            cert: cert.to_owned(),
            key: key.to_owned(),
            why: e.to_string(),
        })?;
    Ok(pair)
}

impl CertFiles {
    /// Reads the PEM files now (an error says which and why), to be read again when
    /// they change.
    pub fn open(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Result<Self, TlsError> {
        let (cert, key) = (cert.into(), key.into());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let pair = load(&cert, &key, &provider)?;
        let seen = (Instant::now(), modified(&cert), modified(&key));
        Ok(CertFiles {
            current: RwLock::new(Arc::new(pair)),
            seen: Mutex::new(seen),
            cert,
            key,
            clients: None,
            provider,
        })
    }

    /// Requires every client to present a certificate the authorities in `ca` (PEM)
    /// signed: mutual TLS.
    pub fn requiring_client_certs(mut self, ca: impl Into<PathBuf>) -> Result<Self, TlsError> {
        let ca = ca.into();
        let bad = |why: String| TlsError::File {
            path: ca.clone(),
            why,
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&ca).map_err(|e| bad(e.to_string()))? {
            roots
                .add(cert.map_err(|e| bad(e.to_string()))?)
                .map_err(|e| bad(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(bad("holds no PEM certificate".into()));
        }
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            self.provider.clone(),
        )
        .build()
        .map_err(|e| bad(e.to_string()))?;
        self.clients = Some(verifier);
        Ok(self)
    }

    /// The rustls configuration serving these files: HTTP/2 and HTTP/1.1 by ALPN.
    pub fn server_config(self: &Arc<Self>) -> Arc<rustls::ServerConfig> {
        let builder = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|_| unreachable!("ring's default provider supports TLS 1.2 and 1.3"));
        let builder = match &self.clients {
            None => builder.with_no_client_auth(),
            Some(verifier) => builder.with_client_cert_verifier(verifier.clone()),
        };
        let mut config = builder.with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Arc::new(config)
    }

    /// Loads the files again when they changed since they were last looked at.
    fn refresh(&self) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.0.elapsed() < RECHECK_EVERY {
            return;
        }
        let now = (Instant::now(), modified(&self.cert), modified(&self.key));
        let changed = now.1 != seen.1 || now.2 != seen.2;
        *seen = now;
        drop(seen);
        if !changed {
            return;
        }
        match load(&self.cert, &self.key, &self.provider) {
            Ok(pair) => {
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(pair);
                tracing::info!(cert = %self.cert.display(), "the TLS certificate changed on disk: serving the new one");
            }
            Err(e) => {
                tracing::warn!(error = %e, "the TLS certificate changed on disk but does not load; still serving the one before");
            }
        }
    }
}

impl ResolvesServerCert for CertFiles {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.refresh();
        Some(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}

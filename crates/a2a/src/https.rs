//! The TLS of every request this crate sends — the client's calls and the server's push
//! deliveries — and of any reqwest client an application builds beside them: rustls on
//! ring (the crypto the rest of the process uses), the public authorities of
//! webpki-roots unless the agent names its own, and the certificate a client presents
//! (mutual TLS). One setting, [`ClientTls`] as PEM, read here into the rustls
//! configuration both the direct path and reqwest take (gRPC reads the same PEM into
//! tonic's).
//!
//! reqwest is built without a crypto provider of its own: every client is given this
//! configuration, so that none depends on a process-wide default (and none brings a
//! second crypto library).

use std::sync::{Arc, LazyLock};

/// The `User-Agent` this crate sends unless told another (a request's own header).
pub const USER_AGENT: &str = concat!("a2a-protocol/", env!("CARGO_PKG_VERSION"));

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// TLS settings for one agent's calls, as PEM.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientTls {
    /// Certificate authorities trusted instead of the public ones.
    pub ca_pem: Option<Vec<u8>>,
    /// The client certificate (chain) and its private key (mutual TLS).
    pub identity_pem: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("ca", &self.ca_pem.is_some())
            .field("identity", &self.identity_pem.is_some())
            .finish()
    }
}

/// Why an agent's TLS settings were refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The authorities are not PEM certificates, or there are none.
    #[error("the certificate authorities are not PEM certificates: {0}")]
    Authorities(String),
    /// The client certificate and key are not a PEM certificate chain and its key.
    #[error("the client certificate and key are not a PEM certificate and its key: {0}")]
    Identity(String),
    /// The TLS library refused the settings.
    #[error("the TLS settings were refused: {0}")]
    Backend(String),
}

/// The public authorities (webpki-roots, as reqwest's own rustls setup uses), read once.
static PUBLIC_ROOTS: LazyLock<Arc<RootCertStore>> = LazyLock::new(|| {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    Arc::new(roots)
});

/// rustls's client configuration for `tls` (`None`: the public authorities, no client
/// certificate), on ring as the rest of the process; no ALPN (the direct path's
/// connector sets it; [`reqwest_builder`] offers HTTP/2 and HTTP/1.1).
pub fn rustls_config(tls: Option<&ClientTls>) -> Result<rustls::ClientConfig, TlsError> {
    let roots = match tls.and_then(|t| t.ca_pem.as_deref()) {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| TlsError::Authorities(e.to_string()))?;
                roots
                    .add(cert)
                    .map_err(|e| TlsError::Authorities(e.to_string()))?;
            }
            if roots.is_empty() {
                return Err(TlsError::Authorities("there are none".into()));
            }
            Arc::new(roots)
        }
        None => PUBLIC_ROOTS.clone(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Backend(e.to_string()))?
        .with_root_certificates(roots);
    match tls.and_then(|t| t.identity_pem.as_ref()) {
        Some((cert, key)) => {
            let identity = |e: rustls_pki_types::pem::Error| TlsError::Identity(e.to_string());
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(identity)?;
            let key = PrivateKeyDer::from_pem_slice(key).map_err(identity)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| TlsError::Identity(e.to_string()))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// A reqwest client builder whose TLS is [`rustls_config`]'s for `tls`, offering
/// HTTP/2 and HTTP/1.1 (`http2_only`: HTTP/2 alone). Every reqwest client of the
/// process should start here: reqwest has no crypto provider of its own.
pub fn reqwest_builder(
    tls: Option<&ClientTls>,
    http2_only: bool,
) -> Result<reqwest::ClientBuilder, TlsError> {
    let mut config = rustls_config(tls)?;
    config.alpn_protocols = match http2_only {
        true => vec![b"h2".to_vec()],
        false => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    };
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config))
}

/// Makes ring the process's default crypto provider, unless one is set already: for
/// crates that build reqwest clients of their own (an OpenTelemetry exporter, say),
/// which would otherwise find none.
pub fn ring_as_process_default() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// [`reqwest_builder`] with the public authorities and both HTTP versions: for a
/// client with no TLS settings of its own.
pub fn reqwest_client_builder() -> reqwest::ClientBuilder {
    reqwest_builder(None, false).expect("the public authorities make a TLS configuration")
}

#[cfg(test)]
mod tests {
    use super::{ClientTls, TlsError, rustls_config};

    #[test]
    fn settings_that_do_not_read_say_which_part() {
        let not_pem = ClientTls {
            ca_pem: Some(b"not a certificate".to_vec()),
            identity_pem: None,
        };
        assert!(matches!(
            rustls_config(Some(&not_pem)),
            Err(TlsError::Authorities(_))
        ));
        let no_key = ClientTls {
            ca_pem: None,
            identity_pem: Some((Vec::new(), b"no key here".to_vec())),
        };
        assert!(matches!(
            rustls_config(Some(&no_key)),
            Err(TlsError::Identity(_))
        ));
        assert!(rustls_config(None).is_ok());
    }
}

//! An agent's own TLS, as PEM: the certificate authorities its certificate must chain to
//! (instead of the public ones) and the certificate this client presents (mutual TLS).
//! One setting for every binding, read here into what each way of calling needs:
//! rustls's configuration for the direct path, reqwest's roots and identity for the
//! rest (gRPC reads the same PEM into tonic's).

use std::sync::{Arc, LazyLock};

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
/// certificate), on ring as the rest of the process; its ALPN is set by the connector.
pub(super) fn rustls_config(tls: Option<&ClientTls>) -> Result<rustls::ClientConfig, TlsError> {
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

/// `builder` trusting `tls`'s authorities only, when it names any, and presenting its
/// certificate.
pub(super) fn with_reqwest(
    mut builder: reqwest::ClientBuilder,
    tls: &ClientTls,
) -> Result<reqwest::ClientBuilder, TlsError> {
    if let Some(pem) = &tls.ca_pem {
        let roots = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| TlsError::Authorities(e.to_string()))?;
        if roots.is_empty() {
            return Err(TlsError::Authorities("there are none".into()));
        }
        builder = builder.tls_built_in_root_certs(false);
        for root in roots {
            builder = builder.add_root_certificate(root);
        }
    }
    if let Some((cert, key)) = &tls.identity_pem {
        let mut pem = cert.clone();
        pem.push(b'\n');
        pem.extend_from_slice(key);
        let identity =
            reqwest::Identity::from_pem(&pem).map_err(|e| TlsError::Identity(e.to_string()))?;
        builder = builder.identity(identity);
    }
    Ok(builder)
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

//! Certificate authorities a test makes, and the certificates they sign for loopback
//! (rcgen): what a TLS test serves and what its clients trust.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// A certificate authority of a test's own.
pub struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// Its certificate, PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// Writes a certificate for 127.0.0.1 and localhost that it signs, and its key, as
    /// `cert.pem` and `key.pem` in `dir`; their paths.
    pub fn issue(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        std::fs::create_dir_all(dir).unwrap();
        let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
        // Written whole, then moved into place, as a certificate manager does.
        std::fs::write(dir.join("cert.pem.new"), cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem.new"), key.serialize_pem()).unwrap();
        std::fs::rename(dir.join("key.pem.new"), &k).unwrap();
        std::fs::rename(dir.join("cert.pem.new"), &c).unwrap();
        (c, k)
    }

    /// An HTTP client that trusts only this authority.
    pub fn client(&self) -> reqwest::Client {
        let tls = a2a::client::ClientTls {
            ca_pem: Some(self.pem().into_bytes()),
            identity_pem: None,
        };
        a2a::https::reqwest_builder(Some(&tls), false)
            .unwrap()
            .build()
            .unwrap()
    }
}

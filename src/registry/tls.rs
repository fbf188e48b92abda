//! An agent's own TLS: the certificate authorities its certificate must chain to
//! (instead of the public ones) and the certificate the orchestrator presents to it
//! (mutual TLS), from `tls = { ca_file, cert_file, key_file }` in agents.toml, for
//! every binding (its gRPC calls get the same files). The agent gets an HTTP client of
//! its own, built again when a file changes (a renewed
//! client certificate is used from the next card refresh on, no restart).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use a2a::client::{ClientTls, GrpcTls, Redirects, http_client_tls};

use super::Transport;
use super::config::TlsFiles;

/// When each file was last modified, as last seen.
type Stamps = Vec<Option<SystemTime>>;

/// An agent's own transport, and the files' times it was built from.
#[derive(Default)]
pub(super) struct OwnTransport {
    // A std mutex: held to compare and swap, never across an await.
    current: Mutex<Option<(Arc<Transport>, Stamps)>>,
}

fn stamps(files: &TlsFiles) -> Stamps {
    [&files.ca_file, &files.cert_file, &files.key_file]
        .into_iter()
        .map(|f| {
            f.as_ref()
                .and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        })
        .collect()
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The TLS settings the files say, for the HTTP client and for gRPC calls.
fn load(files: &TlsFiles) -> Result<(ClientTls, GrpcTls), String> {
    let mut tls = ClientTls::default();
    let mut grpc = GrpcTls::default();
    if let Some(ca) = &files.ca_file {
        let pem = read(ca)?;
        grpc.ca_pem = Some(pem.clone());
        tls.roots = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("{} holds no PEM certificates: {e}", ca.display()))?;
        if tls.roots.is_empty() {
            return Err(format!("{} holds no PEM certificates", ca.display()));
        }
    }
    if let (Some(cert), Some(key)) = (&files.cert_file, &files.key_file) {
        let (cert_pem, key_pem) = (read(cert)?, read(key)?);
        grpc.identity_pem = Some((cert_pem.clone(), key_pem.clone()));
        let mut pem = cert_pem;
        pem.push(b'\n');
        pem.extend(key_pem);
        tls.identity = Some(reqwest::Identity::from_pem(&pem).map_err(|e| {
            format!(
                "{} and {} are not a PEM certificate and its key: {e}",
                cert.display(),
                key.display()
            )
        })?);
    }
    Ok((tls, grpc))
}

impl OwnTransport {
    /// The transport for `files`, built again when they changed since; and whether it
    /// was (the agent's client must then be built again too).
    pub(super) fn get(
        &self,
        files: &TlsFiles,
        http2: bool,
        redirects: Redirects,
        card_timeout: Duration,
    ) -> Result<(Arc<Transport>, bool), String> {
        let now = stamps(files);
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((transport, seen)) = current.as_ref()
            && *seen == now
        {
            return Ok((transport.clone(), false));
        }
        let (tls, grpc) = load(files)?;
        let http = http_client_tls(http2, redirects, &tls)
            .map_err(|e| format!("cannot set up TLS to the agent: {e}"))?;
        let mut transport = Transport::new(http, card_timeout);
        transport.grpc_tls = Some(grpc);
        let transport = Arc::new(transport);
        *current = Some((transport.clone(), now));
        Ok((transport, true))
    }
}

//! An agent's own TLS: the certificate authorities its certificate must chain to
//! (instead of the public ones) and the certificate the orchestrator presents to it
//! (mutual TLS), from `tls = { ca_file, cert_file, key_file }` in agents.toml, for
//! every binding (its gRPC calls get the same files). The agent gets an HTTP client of
//! its own, built again when a file changes (a renewed
//! client certificate is used from the next card refresh on, no restart).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use a2a::client::{ClientTls, Redirects, TlsError, http_client_tls};

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

/// The TLS settings the files say, for every binding.
fn load(files: &TlsFiles) -> Result<ClientTls, String> {
    let mut tls = ClientTls::default();
    if let Some(ca) = &files.ca_file {
        tls.ca_pem = Some(read(ca)?);
    }
    if let (Some(cert), Some(key)) = (&files.cert_file, &files.key_file) {
        tls.identity_pem = Some((read(cert)?, read(key)?));
    }
    Ok(tls)
}

/// `e` with the files it is about.
fn explained(files: &TlsFiles, e: TlsError) -> String {
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or_else(String::new, |p| p.display().to_string())
    };
    match e {
        TlsError::Authorities(why) => {
            format!("{} holds no PEM certificates: {why}", path(&files.ca_file))
        }
        TlsError::Identity(why) => format!(
            "{} and {} are not a PEM certificate and its key: {why}",
            path(&files.cert_file),
            path(&files.key_file)
        ),
        other => format!("cannot set up TLS to the agent: {other}"),
    }
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
        let tls = load(files)?;
        let http = http_client_tls(http2, redirects, &tls).map_err(|e| explained(files, e))?;
        let mut transport = Transport::new(http, card_timeout);
        transport.grpc_tls = Some(tls);
        let transport = Arc::new(transport);
        *current = Some((transport.clone(), now));
        Ok((transport, true))
    }
}

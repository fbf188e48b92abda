//! Talking to a server the orchestrator does not control (an OpenID Provider, an
//! agent's token endpoint): which URLs are trusted with a secret or for keys, and
//! bodies refused past a bound, by their declared length or as they arrive, so that no
//! peer makes the orchestrator hold what it likes.

/// Whether `url` may be trusted with a credential or for keys: https, or http on this
/// machine's loopback (a provider or endpoint under test).
pub(crate) fn trustworthy(url: &str) -> bool {
    match url::Url::parse(url) {
        Ok(u) if u.scheme() == "https" => true,
        Ok(u) if u.scheme() == "http" => match u.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// The body of `response` from `url`, or an error that names `url` past `max` bytes.
pub(crate) async fn read_bounded(
    url: &str,
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, String> {
    let too_large = || format!("{url} sent more than {max} bytes");
    if response
        .content_length()
        .is_some_and(|declared| declared > max as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

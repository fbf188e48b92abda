//! Version negotiation (spec §3.6) and extensions (§4.6), the same for every binding:
//! the `A2A-Version` a request speaks (header, or query parameter; none means 0.3; the
//! patch number ignored), and the `A2A-Extensions` it declares, checked against the
//! extensions the card marks `required`.

use axum::http::HeaderMap;

use crate::card::AgentCard;
use crate::error::RpcError;
pub use crate::version::{SUPPORTED, Version};

const VERSION_PARAM: &str = "A2A-Version";

/// The `A2A-Version` of a request: the header, else the query parameter; none or empty
/// means 0.3. Unknown versions are refused with -32009.
pub fn requested(headers: &HeaderMap, query: Option<&str>) -> Result<Version, RpcError> {
    let from_header = headers
        .get(VERSION_PARAM)
        .map(|v| v.to_str().unwrap_or("\u{fffd}").trim().to_owned());
    let from_query = || {
        query?.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            k.eq_ignore_ascii_case(VERSION_PARAM)
                .then(|| v.trim().to_owned())
        })
    };
    let asked = from_header.or_else(from_query).unwrap_or_default();
    if asked.is_empty() {
        return Ok(Version::V0_3);
    }
    // Major.Minor only: `1.0.1` is `1.0`.
    let major_minor: String = {
        let mut parts = asked.splitn(3, '.');
        match (parts.next(), parts.next()) {
            (Some(major), Some(minor)) => format!("{major}.{minor}"),
            _ => asked.clone(),
        }
    };
    match Version::parse(&major_minor) {
        Some(v) => Ok(v),
        None => Err(RpcError::version_not_supported(&brief(&asked), &SUPPORTED)),
    }
}

/// What a client sent, cut short for an error message.
fn brief(s: &str) -> String {
    const MAX: usize = 32;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The extension URIs a request declares in `A2A-Extensions` (v1.0) or
/// `X-A2A-Extensions` (v0.3), comma-separated, in one or several headers.
pub fn declared_extensions(headers: &HeaderMap) -> Vec<String> {
    ["A2A-Extensions", "X-A2A-Extensions"]
        .into_iter()
        .flat_map(|name| headers.get_all(name).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Refuses (-32008) a request that does not declare every extension the card marks
/// `required`.
pub fn check_extensions(card: &AgentCard, headers: &HeaderMap) -> Result<(), RpcError> {
    let declared = declared_extensions(headers);
    let missing: Vec<String> = card
        .capabilities
        .iter()
        .flat_map(|c| &c.extensions)
        .filter(|e| e.required && !declared.contains(&e.uri))
        .map(|e| e.uri.clone())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(RpcError::extension_support_required(&missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(header: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = header {
            h.insert("a2a-version", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn versions_are_negotiated_by_header_or_query() {
        assert_eq!(requested(&with(None), None), Ok(Version::V0_3));
        assert_eq!(requested(&with(Some("")), None), Ok(Version::V0_3));
        assert_eq!(requested(&with(Some("0.3")), None), Ok(Version::V0_3));
        assert_eq!(requested(&with(Some("1.0")), None), Ok(Version::V1_0));
        assert_eq!(requested(&with(Some("1.0.1")), None), Ok(Version::V1_0));
        assert_eq!(
            requested(&with(None), Some("x=1&A2A-Version=1.0")),
            Ok(Version::V1_0)
        );
        let e = requested(&with(Some("99.0")), None).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::VERSION_NOT_SUPPORTED);
        assert!(e.message.contains("99.0"), "{}", e.message);
        assert!(requested(&with(None), Some("A2A-Version=2.1")).is_err());
    }
}

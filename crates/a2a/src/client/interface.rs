//! Which of an agent's interfaces to call: every interface a card offers that this
//! client speaks (A2A 1.0 over JSON-RPC or HTTP+JSON, A2A 0.3 over JSON-RPC), in the
//! order it tries them — v1.0 before v0.3, the card's own order within a generation —
//! narrowed by what the caller asks for, with a sentence saying why the first won.

use super::ClientError;
use crate::Version;
use crate::card::AgentCard;
use crate::v1::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};

/// How requests travel to an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP: one endpoint, the method in the body.
    JsonRpc,
    /// HTTP+JSON (v1.0's REST binding): a route per operation.
    HttpJson,
    /// gRPC (v1.0): `lf.a2a.v1.A2AService` over HTTP/2.
    Grpc,
}

impl Binding {
    /// The card's name for it (`JSONRPC`, `HTTP+JSON`).
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => BINDING_JSONRPC,
            Binding::HttpJson => BINDING_HTTP_JSON,
            Binding::Grpc => BINDING_GRPC,
        }
    }
}

impl std::fmt::Display for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One interface this client can call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Where the interface is served.
    pub url: String,
    /// The protocol generation it speaks.
    pub protocol: Version,
    /// Its binding.
    pub binding: Binding,
    /// The tenant the card names for it (v1.0; empty for none).
    pub tenant: String,
}

impl Interface {
    /// A JSON-RPC interface without a tenant.
    pub fn jsonrpc(url: impl Into<String>, protocol: Version) -> Self {
        Self {
            url: url.into(),
            protocol,
            binding: Binding::JsonRpc,
            tenant: String::new(),
        }
    }
}

impl std::fmt::Display for Interface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "A2A {} {} at {}",
            self.protocol.as_str(),
            self.binding,
            self.url
        )?;
        if !self.tenant.is_empty() {
            write!(f, " (tenant {})", self.tenant)?;
        }
        Ok(())
    }
}

/// What the caller asks of the interface; `None` leaves the choice to the card.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preference {
    /// Only interfaces of this generation; any when `None`.
    pub protocol: Option<Version>,
    /// Only interfaces of this binding; any when `None`.
    pub binding: Option<Binding>,
}

/// The interfaces to try, best first, and why the first was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Never empty. The client falls back along it when an agent answers
    /// VersionNotSupported.
    pub interfaces: Vec<Interface>,
    /// Why these interfaces, in this order, for a status line.
    pub reason: String,
}

/// `Major.Minor` of a version string, or `None` for one we do not speak.
fn spoken(version: &str) -> Option<Version> {
    let mut parts = version.trim().split('.');
    match (parts.next(), parts.next()) {
        (Some("1"), Some("0") | None) => Some(Version::V1_0),
        // Spoken only by a client built with A2A 0.3, which calls an older 0.x agent
        // as it calls a 0.3 one.
        (Some("0"), Some(_)) if cfg!(feature = "v0_3") => Some(Version::V0_3),
        _ => None,
    }
}

/// Every interface on the card, in the card's order: `(interface, or why not spoken)`.
fn offered(card: &AgentCard) -> Vec<Result<Interface, String>> {
    let mut out: Vec<Result<Interface, String>> = Vec::new();
    for i in &card.supported_interfaces {
        // v1.0 requires the version; a card that leaves it out means its own, 1.0.
        let version = if i.protocol_version.is_empty() {
            "1.0"
        } else {
            i.protocol_version.as_str()
        };
        let described = format!("{} {} at {}", i.protocol_binding, version, i.url);
        let binding = match i.protocol_binding.as_str() {
            BINDING_JSONRPC => Some(Binding::JsonRpc),
            BINDING_HTTP_JSON => Some(Binding::HttpJson),
            // Spoken only by a client built with gRPC.
            BINDING_GRPC if cfg!(feature = "grpc") => Some(Binding::Grpc),
            _ => None,
        };
        let url = match binding {
            Some(Binding::Grpc) => grpc_url(&i.url, card),
            _ => i.url.clone(),
        };
        let entry = match (spoken(version), binding) {
            (Some(Version::V0_3), Some(Binding::HttpJson | Binding::Grpc)) => Err(described),
            (Some(protocol), Some(binding)) => Ok(Interface {
                url,
                protocol,
                binding,
                tenant: i.tenant.clone(),
            }),
            _ => Err(described),
        };
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    out
}

/// A gRPC interface's URL as this client dials it. Cards write it either way: as the
/// official SDKs' channels take it (`host:port`, which grpcio and grpc-js need) or as a
/// URL (`https://host:port`, the spec's example). A bare `host:port` is reached the way
/// the card's first URL interface is: over TLS when that is `https`, in the clear
/// otherwise.
fn grpc_url(url: &str, card: &AgentCard) -> String {
    if url.starts_with("http://") || url.starts_with("https://") {
        return url.to_owned();
    }
    let secure = card
        .supported_interfaces
        .iter()
        .find(|i| i.url.contains("://"))
        .is_some_and(|i| i.url.starts_with("https://"));
    let scheme = if secure { "https" } else { "http" };
    format!("{scheme}://{}", url.trim_start_matches("grpc://"))
}

/// Chooses the interfaces to call on `card` as `want` asks.
pub fn choose(card: &AgentCard, want: Preference) -> Result<Choice, ClientError> {
    let all = offered(card);
    let mut usable: Vec<Interface> = all.iter().filter_map(|i| i.clone().ok()).collect();
    // v1.0 first; the sort is stable, so the card's order stays within a generation.
    usable.sort_by_key(|i| match i.protocol {
        Version::V1_0 => 0,
        Version::V0_3 => 1,
    });
    let speakable = usable.clone();
    usable.retain(|i| {
        want.protocol.is_none_or(|p| p == i.protocol) && want.binding.is_none_or(|b| b == i.binding)
    });
    let Some(first) = usable.first() else {
        let mut offered: Vec<String> = all
            .iter()
            .map(|i| match i {
                Ok(i) => format!("{} {} at {}", i.binding, i.protocol.as_str(), i.url),
                Err(described) => described.clone(),
            })
            .collect();
        if offered.is_empty() {
            offered.push("nothing".into());
        }
        return Err(ClientError::UnsupportedTransport {
            wanted: describe_want(want),
            offered,
        });
    };
    let versions = |p: Version| speakable.iter().any(|i| i.protocol == p);
    let reason = match (want.protocol, want.binding) {
        (None, None) if versions(Version::V1_0) && versions(Version::V0_3) => {
            "the newest A2A version the card offers; its first binding of it".to_owned()
        }
        (None, None) if speakable.len() > 1 => {
            format!("the card's first A2A {} binding", first.protocol.as_str())
        }
        (None, None) => "the only interface the card offers that this client speaks".to_owned(),
        _ => format!("agents.toml asks for {}", describe_want(want)),
    };
    Ok(Choice {
        interfaces: usable,
        reason,
    })
}

fn describe_want(want: Preference) -> String {
    match (want.protocol, want.binding) {
        (None, None) => "A2A 1.0 (JSON-RPC, HTTP+JSON or gRPC) or A2A 0.3 (JSON-RPC)".to_owned(),
        (Some(p), None) => format!("protocol = \"{}\"", p.as_str()),
        (None, Some(b)) => format!("binding = \"{}\"", b.config_name()),
        (Some(p), Some(b)) => format!(
            "protocol = \"{}\" and binding = \"{}\"",
            p.as_str(),
            b.config_name()
        ),
    }
}

impl Binding {
    /// Its name in `agents.toml` (`jsonrpc`, `http+json`).
    pub fn config_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::HttpJson => "http+json",
            Binding::Grpc => "grpc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::AgentInterface;

    fn card(list: &[(&str, &str, &str)]) -> AgentCard {
        let mut card = AgentCard::new("n", "d", "");
        card.supported_interfaces = list
            .iter()
            .map(|(url, binding, version)| AgentInterface {
                url: (*url).into(),
                protocol_binding: (*binding).into(),
                tenant: String::new(),
                protocol_version: (*version).into(),
            })
            .collect();
        card
    }

    #[cfg(feature = "v0_3")]
    #[test]
    fn v1_first_then_the_cards_order_then_v03() {
        // Our own server's card: both generations.
        let c = card(&[
            ("http://a/rpc", "JSONRPC", "1.0"),
            ("http://a/rpc", "HTTP+JSON", "1.0"),
            ("http://a/rpc", "JSONRPC", "0.3"),
        ]);
        let got = choose(&c, Preference::default()).unwrap();
        let order: Vec<String> = got.interfaces.iter().map(ToString::to_string).collect();
        assert_eq!(
            order,
            [
                "A2A 1.0 JSONRPC at http://a/rpc",
                "A2A 1.0 HTTP+JSON at http://a/rpc",
                "A2A 0.3 JSONRPC at http://a/rpc",
            ]
        );
        assert!(got.reason.contains("newest"), "{}", got.reason);

        let rest = Preference {
            protocol: None,
            binding: Some(Binding::HttpJson),
        };
        let got = choose(&c, rest).unwrap();
        assert_eq!(got.interfaces.len(), 1);
        assert_eq!(got.reason, "agents.toml asks for binding = \"http+json\"");

        let old = Preference {
            protocol: Some(Version::V0_3),
            binding: None,
        };
        let got = choose(&c, old).unwrap();
        assert_eq!(got.interfaces[0].url, "http://a/rpc");
        assert_eq!(got.interfaces[0].protocol, Version::V0_3);
    }

    /// Without the `v0_3` feature a 0.3 interface is one this client does not speak.
    /// Why a client of `by_hand` alone is not made.
    #[cfg(any(not(feature = "v0_3"), not(feature = "grpc")))]
    fn refused_when_made(by_hand: Interface) -> String {
        let made = super::super::A2aClient::with_interfaces(
            super::super::http_client(),
            vec![by_hand],
            Default::default(),
        );
        match made {
            Ok(_) => panic!("a client of an interface it does not speak was made"),
            Err(e) => e.to_string(),
        }
    }

    #[cfg(not(feature = "v0_3"))]
    #[test]
    fn v03_interfaces_are_not_spoken_without_the_feature() {
        let c = card(&[("http://a/rpc", "JSONRPC", "0.3")]);
        let e = choose(&c, Preference::default()).unwrap_err();
        assert!(matches!(e, ClientError::UnsupportedTransport { .. }), "{e}");
        // Named by hand: refused when the client is made.
        let e = refused_when_made(Interface::jsonrpc("http://a/rpc", Version::V0_3));
        assert!(e.contains("without the `v0_3` feature"), "{e}");
    }

    #[cfg(feature = "v0_3")]
    #[test]
    fn a_v03_card_is_v03_and_v03_rest_is_not_spoken() {
        let c = card(&[
            ("http://a/v03", "JSONRPC", "0.3.0"),
            ("a:50051", "GRPC", "0.3.0"),
        ]);
        let got = choose(&c, Preference::default()).unwrap();
        assert_eq!(
            got.interfaces,
            [Interface::jsonrpc("http://a/v03", Version::V0_3)]
        );
        let want_v1 = Preference {
            protocol: Some(Version::V1_0),
            binding: None,
        };
        let e = choose(&c, want_v1).unwrap_err().to_string();
        assert_eq!(
            e,
            "the agent offers no interface with protocol = \"1.0\"; it offers: JSONRPC 0.3 at http://a/v03, GRPC 0.3.0 at a:50051"
        );

        let c = card(&[("http://a/ws", "WEBSOCKET", "1.0")]);
        let e = choose(&c, Preference::default()).unwrap_err().to_string();
        assert!(
            e.ends_with("it offers: WEBSOCKET 1.0 at http://a/ws"),
            "{e}"
        );
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn grpc_interfaces_are_taken_in_either_form() {
        // `host:port`, as the SDKs' channels take it, reached as the card's own URL is.
        let c = card(&[("a:50051", "GRPC", "1.0")]);
        let got = choose(&c, Preference::default()).unwrap();
        assert_eq!(got.interfaces[0].binding, Binding::Grpc);
        assert_eq!(got.interfaces[0].url, "http://a:50051");
        let secure = card(&[("a:443", "GRPC", "1.0"), ("https://a/", "JSONRPC", "1.0")]);
        assert_eq!(
            choose(&secure, Preference::default()).unwrap().interfaces[0].url,
            "https://a:443"
        );
        // A URL, as the spec's example writes it, kept.
        let c = card(&[("https://a:8443", "GRPC", "1.0")]);
        assert_eq!(
            choose(&c, Preference::default()).unwrap().interfaces[0].url,
            "https://a:8443"
        );
        // gRPC is v1.0's: a v0.3 gRPC interface is not spoken.
        let c = card(&[("a:50051", "GRPC", "0.3")]);
        assert!(
            choose(
                &c,
                Preference {
                    protocol: None,
                    binding: Some(Binding::Grpc)
                }
            )
            .is_err()
        );
    }

    /// Without the `grpc` feature a gRPC interface is one this client does not speak.
    #[cfg(not(feature = "grpc"))]
    #[test]
    fn grpc_interfaces_are_not_spoken_without_the_feature() {
        let c = card(&[("a:50051", "GRPC", "1.0"), ("http://a/", "JSONRPC", "1.0")]);
        let got = choose(&c, Preference::default()).unwrap();
        assert_eq!(got.interfaces.len(), 1);
        assert_eq!(got.interfaces[0].binding, Binding::JsonRpc);
        let only = card(&[("a:50051", "GRPC", "1.0")]);
        let e = choose(&only, Preference::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("GRPC 1.0 at a:50051"), "{e}");
        // Named by hand: refused when the client is made.
        let e = refused_when_made(Interface {
            binding: Binding::Grpc,
            ..Interface::jsonrpc("http://a:50051", Version::V1_0)
        });
        assert!(e.contains("without the `grpc` feature"), "{e}");
    }

    #[test]
    fn tenants_are_kept() {
        let mut c = card(&[("http://a/", "HTTP+JSON", "1.0")]);
        c.supported_interfaces[0].tenant = "acme".into();
        let got = choose(&c, Preference::default()).unwrap();
        assert_eq!(got.interfaces[0].tenant, "acme");
        assert_eq!(
            got.reason,
            "the only interface the card offers that this client speaks"
        );
    }
}

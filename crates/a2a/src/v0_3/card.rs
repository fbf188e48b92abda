//! A v0.3 card's own fields, read into the model's card and written beside it.
//!
//! v0.3 names an agent's endpoint by `url` and `preferredTransport` (and
//! `additionalInterfaces`), where v1.0 lists `supportedInterfaces`; it writes a security
//! scheme flat with a `type` where v1.0 has a `oneof`, and requirements as `security`
//! (scheme → scopes). [`interfaces_in`] reads the first into the second;
//! `crate::card::v1_reading` does the rest as the official v1.0 SDKs do. A server
//! serving both generations publishes one card both read ([`with_v03_fields`]): the
//! v1.0 card with v0.3's fields beside it, which a v1.0 reader ignores as its
//! ProtoJSON parser allows, and a v0.3 reader reads as its schema allows.

use serde_json::{Map, Value};

use crate::card::{SCHEME_KINDS, each_requirement_holder};
use crate::v1::BINDING_JSONRPC;

/// The protocol version a v0.3 card declares.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// A v0.3 card (one with a `url` and no `supportedInterfaces`) given v1.0's interface
/// list, in place: `url` with its preferred transport first, then the additional
/// interfaces, each at the card's `protocolVersion` (0.3 when absent).
pub fn interfaces_in(card: &mut Value) {
    let Some(obj) = card.as_object_mut() else {
        return;
    };
    if obj.contains_key("supportedInterfaces") {
        return;
    }
    let Some(url) = obj.get("url").and_then(Value::as_str) else {
        return;
    };
    let version = match obj.get("protocolVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() => v.to_owned(),
        _ => "0.3".to_owned(),
    };
    let preferred = obj
        .get("preferredTransport")
        .and_then(Value::as_str)
        .unwrap_or(BINDING_JSONRPC);
    let interface = |url: &str, binding: &str| serde_json::json!({ "url": url, "protocolBinding": binding, "protocolVersion": version });
    let mut list = vec![interface(url, preferred)];
    for other in obj
        .get("additionalInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(url), Some(binding)) = (
            other.get("url").and_then(Value::as_str),
            other.get("transport").and_then(Value::as_str),
        ) else {
            continue;
        };
        let i = interface(url, binding);
        if !list.contains(&i) {
            list.push(i);
        }
    }
    obj.insert("supportedInterfaces".into(), Value::Array(list));
}

/// A published v1.0 card (ProtoJSON) given v0.3's fields beside its own, in place:
/// `url` (the server's JSON-RPC endpoint, where it serves 0.3), `protocolVersion`,
/// `preferredTransport`, `supportsAuthenticatedExtendedCard`, each scheme's flat
/// fields and `type` beside its `oneof` member, `security` beside
/// `securityRequirements`, and the fields v0.3's schema requires that ProtoJSON leaves
/// out when empty.
pub fn with_v03_fields(card: &mut Value, url: &str) {
    let Some(obj) = card.as_object_mut() else {
        return;
    };
    obj.insert("url".into(), url.into());
    obj.insert("protocolVersion".into(), PROTOCOL_VERSION.into());
    obj.insert("preferredTransport".into(), BINDING_JSONRPC.into());
    for required in ["description", "version"] {
        obj.entry(required).or_insert_with(|| "".into());
    }
    for required in ["defaultInputModes", "defaultOutputModes", "skills"] {
        obj.entry(required)
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    obj.entry("capabilities")
        .or_insert_with(|| Value::Object(Map::new()));
    if obj["capabilities"].get("extendedAgentCard") == Some(&Value::Bool(true)) {
        obj.insert(
            "supportsAuthenticatedExtendedCard".into(),
            Value::Bool(true),
        );
    }
    if let Some(Value::Array(skills)) = obj.get_mut("skills") {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            skill.entry("description").or_insert_with(|| "".into());
            skill
                .entry("tags")
                .or_insert_with(|| Value::Array(Vec::new()));
        }
    }
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            flat_beside(scheme);
        }
    }
    each_requirement_holder(obj, |holder| {
        if let Some(Value::Array(reqs)) = holder.get("securityRequirements") {
            let security: Vec<Value> = reqs
                .iter()
                .map(|r| {
                    let schemes = r.get("schemes").and_then(Value::as_object);
                    Value::Object(
                        schemes
                            .into_iter()
                            .flatten()
                            .map(|(name, scopes)| {
                                let list = scopes.get("list").cloned();
                                (name.clone(), list.unwrap_or(Value::Array(Vec::new())))
                            })
                            .collect(),
                    )
                })
                .collect();
            holder.insert("security".into(), Value::Array(security));
        }
    });
}

/// A published v1.0 card as v0.3's alone: [`with_v03_fields`], then v1.0's own fields
/// dropped.
pub fn as_v03_only(card: &mut Value, url: &str) {
    with_v03_fields(card, url);
    let Some(obj) = card.as_object_mut() else {
        return;
    };
    obj.remove("supportedInterfaces");
    if let Some(Value::Object(capabilities)) = obj.get_mut("capabilities") {
        capabilities.remove("extendedAgentCard");
    }
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            for (_, kind) in SCHEME_KINDS {
                scheme.remove(kind);
            }
        }
    }
    each_requirement_holder(obj, |holder| {
        holder.remove("securityRequirements");
    });
}

/// A v1.0 scheme (`{"httpAuthSecurityScheme": {...}}`) given its v0.3 flat fields and
/// `type` beside the member (`location` is v0.3's `in`).
fn flat_beside(scheme: &mut Map<String, Value>) {
    let Some((ty, inner)) = SCHEME_KINDS.iter().find_map(|(ty, kind)| {
        scheme
            .get(*kind)
            .and_then(Value::as_object)
            .map(|inner| (*ty, inner.clone()))
    }) else {
        return;
    };
    for (key, mut value) in inner {
        // v0.3 requires each flow's scopes, which ProtoJSON leaves out when empty.
        if let ("flows", Value::Object(flows)) = (key.as_str(), &mut value) {
            for flow in flows.values_mut().filter_map(Value::as_object_mut) {
                flow.entry("scopes")
                    .or_insert_with(|| Value::Object(Map::new()));
            }
        }
        let key = if key == "location" {
            "in".to_owned()
        } else {
            key
        };
        scheme.entry(key).or_insert(value);
    }
    scheme.insert("type".into(), ty.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{
        AgentCard, HttpAuthSecurityScheme, Scheme, SecurityRequirement, SecurityScheme,
    };

    /// A v0.3 card is read with its interfaces at its version.
    #[test]
    fn a_v03_cards_interfaces_are_read() {
        let card = AgentCard::from_json(serde_json::json!({
            "protocolVersion": "0.3.0", "name": "n", "description": "d", "version": "1",
            "url": "http://a/rpc", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [
                {"url": "http://a/rpc", "transport": "JSONRPC"},
                {"url": "a:50051", "transport": "GRPC"}
            ],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        }))
        .unwrap();
        let listed: Vec<_> = card
            .supported_interfaces
            .iter()
            .map(|i| {
                (
                    i.url.as_str(),
                    i.protocol_binding.as_str(),
                    i.protocol_version.as_str(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("http://a/rpc", "JSONRPC", "0.3.0"),
                ("a:50051", "GRPC", "0.3.0")
            ]
        );
    }

    /// What a server serving both generations publishes reads back, as v1.0, to the card
    /// it was made from; its v0.3 fields are v0.3's shapes.
    #[test]
    fn both_generations_read_the_published_card() {
        let mut card = AgentCard::new("n", "", "http://a/rpc");
        card.capabilities_mut().extended_agent_card = Some(true);
        card.security_schemes.insert(
            "bearer".into(),
            SecurityScheme::of(Scheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                ..Default::default()
            })),
        );
        card.security_requirements = vec![SecurityRequirement::of("bearer", vec![])];
        let mut published = card.to_json();
        with_v03_fields(&mut published, "http://a/rpc");
        assert_eq!(published["securitySchemes"]["bearer"]["type"], "http");
        assert_eq!(published["securitySchemes"]["bearer"]["scheme"], "Bearer");
        assert_eq!(published["security"], serde_json::json!([{"bearer": []}]));
        assert_eq!(published["supportsAuthenticatedExtendedCard"], true);
        assert_eq!(published["description"], "");
        assert_eq!(AgentCard::from_json(published.clone()).unwrap(), card);

        as_v03_only(&mut published, "http://a/rpc");
        assert!(published.get("supportedInterfaces").is_none());
        assert!(
            published["securitySchemes"]["bearer"]
                .get("httpAuthSecurityScheme")
                .is_none()
        );
        let read = AgentCard::from_json(published).unwrap();
        assert_eq!(
            read.supported_interfaces[0].protocol_version,
            PROTOCOL_VERSION
        );
        assert_eq!(read.security_schemes, card.security_schemes);
    }
}

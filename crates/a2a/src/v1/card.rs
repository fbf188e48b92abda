//! The Agent Card between the generations.
//!
//! A server speaking both publishes one card both read ([`with_v1_shapes`]): v0.3's
//! fields, and beside each field whose shape v1.0 changed the v1.0 shape too — each
//! security scheme carries its v1.0 `oneof` member next to v0.3's `type` and flat
//! fields, and `securityRequirements` sits next to `security`. Every v1.0 reader then
//! reads the same card: the official Python SDK (which converts v0.3 shapes it finds)
//! and the JavaScript one (which reads the v1.0 fields only) alike, so that one
//! signature over the v1.0 reading verifies with both (`crate::signing`). A v0.3 reader
//! ignores the v1.0 members, as its schema allows.
//!
//! [`as_v1_only`] is the v1.0 reading itself: what a v1.0-only server publishes.

use serde_json::{Map, Value};

/// A card with both generations' fields as v1.0 alone: the v0.3 fields dropped, the
/// security schemes and requirements in their v1.0 shapes (a v1.0 shape already there
/// is the one kept).
pub fn as_v1_only(value: &mut Value) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    // v0.3's flag is v1.0's capability (as the official SDKs read it).
    if obj.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true))
        && let Some(Value::Object(capabilities)) = obj.get_mut("capabilities")
    {
        capabilities
            .entry("extendedAgentCard")
            .or_insert(Value::Bool(true));
    }
    for v03 in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "additionalInterfaces",
        "supportsAuthenticatedExtendedCard",
    ] {
        obj.remove(v03);
    }
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            let Some(flat) = scheme.as_object() else {
                continue;
            };
            if let Some((kind, inner)) = scheme_as_v1(flat) {
                *scheme = serde_json::json!({ kind: inner });
            }
        }
    }
    each_requirement_holder(obj, |holder| {
        if let Some(v1) = requirements_as_v1(holder) {
            holder.insert("securityRequirements".into(), v1);
        }
        holder.remove("security");
    });
}

/// A card with v0.3's shapes given v1.0's beside them (see the module's comment).
pub fn with_v1_shapes(value: &mut Value) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            let Some(flat) = scheme.as_object_mut() else {
                continue;
            };
            if let Some((kind, inner)) = scheme_as_v1(flat) {
                flat.insert(kind.to_owned(), Value::Object(inner));
            }
        }
    }
    each_requirement_holder(obj, |holder| {
        if let Some(v1) = requirements_as_v1(holder) {
            holder.insert("securityRequirements".into(), v1);
        }
    });
}

/// v1.0's `oneof` member name of each v0.3 scheme `type`.
const SCHEME_KINDS: [(&str, &str); 5] = [
    ("apiKey", "apiKeySecurityScheme"),
    ("http", "httpAuthSecurityScheme"),
    ("oauth2", "oauth2SecurityScheme"),
    ("openIdConnect", "openIdConnectSecurityScheme"),
    ("mutualTLS", "mtlsSecurityScheme"),
];

/// A scheme's v1.0 member: the one it carries, else its v0.3 flat fields converted
/// (`in` is v1.0's `location`). `None` for a scheme of neither shape.
fn scheme_as_v1(flat: &Map<String, Value>) -> Option<(&'static str, Map<String, Value>)> {
    if let Some((kind, Value::Object(inner))) = SCHEME_KINDS
        .iter()
        .find_map(|(_, kind)| flat.get(*kind).map(|inner| (*kind, inner)))
    {
        return Some((kind, inner.clone()));
    }
    let ty = flat.get("type").and_then(Value::as_str)?;
    let kind = SCHEME_KINDS.iter().find(|(t, _)| *t == ty)?.1;
    let mut inner: Map<String, Value> = flat
        .iter()
        .filter(|(k, _)| k.as_str() != "type")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(location) = inner.remove("in") {
        inner.insert("location".into(), location);
    }
    Some((kind, inner))
}

/// Calls `f` on the card and on each of its skills: where requirements are.
fn each_requirement_holder(
    obj: &mut Map<String, Value>,
    mut f: impl FnMut(&mut Map<String, Value>),
) {
    f(obj);
    if let Some(Value::Array(skills)) = obj.get_mut("skills") {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            f(skill);
        }
    }
}

/// v0.3's `security` (scheme → scopes) as v1.0's `securityRequirements`
/// (`{"schemes": {scheme: {"list": scopes}}}`), unless the v1.0 field is there
/// already or there is nothing to convert.
fn requirements_as_v1(obj: &Map<String, Value>) -> Option<Value> {
    if obj.contains_key("securityRequirements") {
        return None;
    }
    let Some(Value::Array(reqs)) = obj.get("security") else {
        return None;
    };
    let v1: Vec<Value> = reqs
        .iter()
        .map(|r| {
            let schemes: Map<String, Value> = r
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, scopes)| (name.clone(), serde_json::json!({ "list": scopes })))
                .collect();
            serde_json::json!({ "schemes": schemes })
        })
        .collect();
    Some(Value::Array(v1))
}

//! The Agent Card (spec §5): an agent's self-description — identity, interfaces,
//! capabilities, skills and security requirements.
//!
//! The card is the proto's `AgentCard` (and its schemes, skills and capabilities), like
//! every other message of the model; here are the helpers a program needs to make one
//! and to read one off the wire ([`AgentCard::from_json`]), whichever generation wrote
//! it. A v0.3 card's own fields (its `url` and transports, its schemes' flat shapes) are
//! read and written by `crate::v0_3::card`.

use serde_json::{Map, Value};

use crate::v1::BINDING_JSONRPC;

pub use crate::proto::pb::o_auth_flows::Flow as OAuthFlow;
pub use crate::proto::pb::security_scheme::Scheme;
pub use crate::proto::pb::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme,
    SecurityRequirement, SecurityScheme, StringList,
};

/// The paths an Agent Card is served at: the current one and the legacy one.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// Where v0.3.0 agents published their card before `agent-card.json`; still read.
pub const LEGACY_AGENT_CARD_PATH: &str = "/.well-known/agent.json";

impl AgentCard {
    /// A minimal valid card for an A2A 1.0 JSON-RPC agent at `url`, taking text in and
    /// out. (A server publishes its own interfaces at that URL, whatever the card lists.)
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            supported_interfaces: vec![AgentInterface {
                url: url.into(),
                protocol_binding: BINDING_JSONRPC.to_owned(),
                tenant: String::new(),
                protocol_version: crate::Version::V1_0.as_str().to_owned(),
            }],
            version: "1.0.0".to_owned(),
            capabilities: Some(AgentCapabilities::default()),
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned()],
            ..Self::default()
        }
    }

    /// The URL of the card's first interface, its preferred one (empty when it lists none).
    pub fn url(&self) -> &str {
        self.supported_interfaces
            .first()
            .map_or("", |i| i.url.as_str())
    }

    /// The capabilities, to set one (an empty set made when the card has none).
    pub fn capabilities_mut(&mut self) -> &mut AgentCapabilities {
        self.capabilities.get_or_insert_default()
    }

    /// Whether `capabilities.streaming` is true.
    pub fn supports_streaming(&self) -> bool {
        self.capabilities.as_ref().and_then(|c| c.streaming) == Some(true)
    }

    /// Whether `capabilities.pushNotifications` is true.
    pub fn supports_push_notifications(&self) -> bool {
        self.capabilities
            .as_ref()
            .and_then(|c| c.push_notifications)
            == Some(true)
    }

    /// Whether `capabilities.extendedAgentCard` is true.
    pub fn supports_extended_card(&self) -> bool {
        self.capabilities
            .as_ref()
            .and_then(|c| c.extended_agent_card)
            == Some(true)
    }

    /// A card document as an agent served it, of either generation or both: its v1.0
    /// reading (v0.3's shapes read as the official v1.0 SDKs read them; a v0.3 card's
    /// `url` and transports as interfaces of its version, in a build with `v0_3`), or
    /// what is wrong with it and where.
    pub fn from_json(mut document: Value) -> Result<AgentCard, String> {
        #[cfg(feature = "v0_3")]
        crate::v0_3::card::interfaces_in(&mut document);
        let v03 = document.get("url").is_some() && document.get("supportedInterfaces").is_none();
        v1_reading(&mut document);
        let card: AgentCard = serde_path_to_error::deserialize(&document)
            .map_err(|e| format!("invalid agent card at `{}`: {}", e.path(), e.inner()))?;
        if card.name.is_empty() {
            return Err("invalid agent card: `name` is missing".to_owned());
        }
        if card.supported_interfaces.is_empty() {
            return Err(if v03 {
                "an A2A 0.3 card (a `url`, no `supportedInterfaces`): this build reads A2A 1.0 cards only"
                    .to_owned()
            } else {
                "invalid agent card: `supportedInterfaces` lists no interface".to_owned()
            });
        }
        if let Some(at) = card
            .supported_interfaces
            .iter()
            .position(|i| i.url.is_empty())
        {
            return Err(format!(
                "invalid agent card: `supportedInterfaces[{at}].url` is missing"
            ));
        }
        Ok(card)
    }

    /// The card as ProtoJSON, v1.0's form of it on the HTTP bindings.
    pub fn to_json(&self) -> Value {
        // Every message of the model serializes: maps have string keys, values are data.
        serde_json::to_value(self).expect("an agent card always serializes to JSON")
    }
}

impl AgentSkill {
    /// A skill with its required fields.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: Vec<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags,
            ..Self::default()
        }
    }
}

impl SecurityRequirement {
    /// A requirement of one scheme, with the scopes it needs.
    pub fn of(scheme: impl Into<String>, scopes: Vec<String>) -> Self {
        Self {
            schemes: [(scheme.into(), StringList { list: scopes })].into(),
        }
    }
}

impl SecurityScheme {
    /// A scheme of this kind.
    pub fn of(scheme: Scheme) -> Self {
        Self {
            scheme: Some(scheme),
        }
    }
}

/// A card document read as the official v1.0 SDKs read it, in place: v0.3's fields
/// dropped, each security scheme in its v1.0 `oneof` shape (the v1.0 member where the
/// card has one, else its v0.3 flat fields converted), v0.3's `security` as
/// `securityRequirements` where the card has none, `supportsAuthenticatedExtendedCard`
/// as `capabilities.extendedAgentCard`, and of OAuth 2.0's flows, which v1.0 holds one
/// of, the first the card has of client credentials, authorization code, device code,
/// implicit and password. What a signature over the v1.0 reading covers
/// (`crate::signing`), and what [`AgentCard::from_json`] parses.
pub fn v1_reading(value: &mut Value) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
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
    if let Some(Value::Object(capabilities)) = obj.get_mut("capabilities") {
        capabilities.remove("stateTransitionHistory");
    }
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            let Some(flat) = scheme.as_object() else {
                continue;
            };
            if let Some((kind, mut inner)) = scheme_as_v1(flat) {
                if let Some(Value::Object(flows)) = inner.get_mut("flows") {
                    one_flow(flows);
                }
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

/// v1.0's `oneof` member name of each v0.3 scheme `type`.
pub(crate) const SCHEME_KINDS: [(&str, &str); 5] = [
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

/// OAuth 2.0's flows cut to the one v1.0's `oneof` holds (see [`v1_reading`]).
fn one_flow(flows: &mut Map<String, Value>) {
    const ORDER: [&str; 5] = [
        "clientCredentials",
        "authorizationCode",
        "deviceCode",
        "implicit",
        "password",
    ];
    if let Some(kept) = ORDER.iter().find(|f| flows.contains_key(**f)) {
        flows.retain(|k, _| k == kept);
    }
}

/// Calls `f` on the card and on each of its skills: where requirements are.
pub(crate) fn each_requirement_holder(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A v1.0 card is read as it is; one with v0.3's shapes beside (or instead of) the
    /// v1.0 ones is read as the official v1.0 SDKs read it.
    #[test]
    fn cards_of_either_shape_read_as_v1() {
        let v1 = serde_json::json!({
            "name": "n", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": "http://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": true, "extendedAgentCard": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [],
            "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
            "securityRequirements": [{"schemes": {"key": {"list": []}}}]
        });
        let card = AgentCard::from_json(v1.clone()).unwrap();
        assert_eq!(card.url(), "http://a/rpc");
        assert!(card.supports_streaming() && card.supports_extended_card());
        assert_eq!(card.supported_interfaces.len(), 2);
        assert_eq!(
            card.security_requirements,
            vec![SecurityRequirement::of("key", vec![])]
        );
        let Some(Scheme::ApiKeySecurityScheme(key)) = &card.security_schemes["key"].scheme else {
            panic!("{card:?}")
        };
        assert_eq!(
            (key.location.as_str(), key.name.as_str()),
            ("header", "X-Key")
        );

        // The same card with v0.3's shapes in place of v1.0's: the same reading.
        let mut old = v1;
        old["securitySchemes"] =
            serde_json::json!({"key": {"type": "apiKey", "in": "header", "name": "X-Key"}});
        old.as_object_mut().unwrap().remove("securityRequirements");
        old["security"] = serde_json::json!([{"key": []}]);
        old["capabilities"] = serde_json::json!({"streaming": true});
        old["supportsAuthenticatedExtendedCard"] = Value::Bool(true);
        assert_eq!(AgentCard::from_json(old).unwrap(), card);
    }

    #[test]
    fn what_is_wrong_with_a_card_is_named() {
        let err = AgentCard::from_json(serde_json::json!({"name": 3})).unwrap_err();
        assert!(err.contains("`name`"), "{err}");
        let err =
            AgentCard::from_json(serde_json::json!({"name": "n", "version": "1"})).unwrap_err();
        assert!(err.contains("supportedInterfaces"), "{err}");
        let err = AgentCard::from_json(serde_json::json!({
            "name": "n", "supportedInterfaces": [{"protocolBinding": "JSONRPC"}]
        }))
        .unwrap_err();
        assert!(err.contains("supportedInterfaces[0].url"), "{err}");
    }

    /// OAuth 2.0 keeps one flow, the one a program acting for itself uses first.
    #[test]
    fn oauth_keeps_one_flow() {
        let card = AgentCard::from_json(serde_json::json!({
            "name": "n",
            "supportedInterfaces": [{"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "securitySchemes": {"o": {"type": "oauth2", "flows": {
                "authorizationCode": {"authorizationUrl": "http://i/a", "tokenUrl": "http://i/t", "scopes": {}},
                "clientCredentials": {"tokenUrl": "http://i/t", "scopes": {"a2a": "call"}}
            }}}
        }))
        .unwrap();
        let Some(Scheme::Oauth2SecurityScheme(o)) = &card.security_schemes["o"].scheme else {
            panic!("{card:?}")
        };
        let Some(OAuthFlow::ClientCredentials(flow)) =
            o.flows.as_ref().and_then(|f| f.flow.clone())
        else {
            panic!("{o:?}")
        };
        assert_eq!(flow.token_url, "http://i/t");
    }
}

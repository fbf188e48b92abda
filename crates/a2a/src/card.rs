//! The Agent Card (spec §5): an agent's self-description — identity, endpoint and
//! transports, capabilities, skills and security requirements.
//!
//! One card both generations read: v0.3's fields (its `url` and transports, its
//! security schemes' shapes), with v1.0's interface list beside them
//! (`supported_interfaces`); [`crate::v1::card`] writes it as a v1.0 reader takes it.
//! (The one type of the crate whose shape is still v0.3's rather than the proto's.)

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks, as written in `AgentCard.protocolVersion`.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// The paths an Agent Card is served at: the current one and the legacy one.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// Where v0.3.0 agents published their card before `agent-card.json`; still read.
pub const LEGACY_AGENT_CARD_PATH: &str = "/.well-known/agent.json";

/// A security requirement: scheme name → required scopes (OpenAPI style).
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

/// The metadata document an agent publishes at `/.well-known/agent-card.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The protocol version the card is for (`0.3.0`).
    pub protocol_version: String,
    /// The agent's name, for people.
    pub name: String,
    /// What the agent does, for people and models. (Read as empty when absent: a v1.0
    /// card in ProtoJSON, the form its signature covers, leaves empty fields out.)
    #[serde(default)]
    pub description: String,
    /// The endpoint of the preferred transport.
    pub url: String,
    /// The agent's own version.
    pub version: String,
    /// The optional features it supports.
    pub capabilities: AgentCapabilities,
    /// The media types it takes by default.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// The media types it answers with by default.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// What it can do.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// Transport at `url`; `JSONRPC` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<Transport>,
    /// Other interfaces it is served at (`url` being the preferred one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_interfaces: Option<Vec<AgentInterface>>,
    /// Who provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// An icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Its documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// The authentication schemes it accepts, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Which schemes (with scopes) a request needs: any one entry satisfies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
    /// Whether an authenticated client may fetch a fuller card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// JWS signatures over the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<AgentCardSignature>>,
    /// v1.0's interface list (every binding and version the agent speaks), kept as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_interfaces: Option<Vec<crate::proto::pb::AgentInterface>>,
}

impl AgentCard {
    /// A minimal valid card for a JSON-RPC agent at `url`, taking text in and out.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: name.into(),
            description: description.into(),
            url: url.into(),
            version: "1.0.0".to_owned(),
            capabilities: AgentCapabilities::default(),
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned()],
            skills: Vec::new(),
            preferred_transport: Some(Transport::JsonRpc),
            additional_interfaces: None,
            provider: None,
            icon_url: None,
            documentation_url: None,
            security_schemes: None,
            security: None,
            supports_authenticated_extended_card: None,
            signatures: None,
            supported_interfaces: None,
        }
    }

    /// Whether `capabilities.streaming` is true.
    pub fn supports_streaming(&self) -> bool {
        self.capabilities.streaming == Some(true)
    }

    /// Whether `capabilities.pushNotifications` is true.
    pub fn supports_push_notifications(&self) -> bool {
        self.capabilities.push_notifications == Some(true)
    }

    /// Every interface the card declares: the main `url` with its preferred transport
    /// first, then the additional interfaces.
    pub fn interfaces(&self) -> Vec<AgentInterface> {
        let mut all = vec![AgentInterface {
            transport: self
                .preferred_transport
                .clone()
                .unwrap_or(Transport::JsonRpc),
            url: self.url.clone(),
        }];
        for i in self.additional_interfaces.iter().flatten() {
            if !all.contains(i) {
                all.push(i.clone());
            }
        }
        all
    }
}

/// Optional protocol features the agent supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Whether it streams (`message/stream`, `tasks/resubscribe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether it sends push notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Whether tasks keep the history of their states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// The protocol extensions it supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI, its identity.
    pub uri: String,
    /// How the agent uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a client must support it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The organization behind the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// The provider's name.
    pub organization: String,
    /// The provider's website.
    pub url: String,
}

/// One capability of the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// The skill's id, unique on the card.
    pub id: String,
    /// Its name, for people.
    pub name: String,
    /// What it does (empty when absent, as ProtoJSON leaves it).
    #[serde(default)]
    pub description: String,
    /// Keywords describing it (none when absent, as ProtoJSON leaves an empty list).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// The media types it takes, when not the card's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modes: Option<Vec<String>>,
    /// The media types it answers with, when not the card's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modes: Option<Vec<String>>,
    /// The schemes a request for this skill needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
}

/// An endpoint and the transport it speaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The interface's transport (binding).
    pub transport: Transport,
    /// Where it is served.
    pub url: String,
}

/// A transport protocol name (`TransportProtocol`); open-ended on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Transport {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// gRPC.
    Grpc,
    /// HTTP+JSON (REST).
    HttpJson,
    /// A transport this crate does not know, by name.
    Other(String),
}

impl Transport {
    /// The transport's name on a card (`JSONRPC`, `GRPC`, `HTTP+JSON`).
    pub fn as_str(&self) -> &str {
        match self {
            Transport::JsonRpc => "JSONRPC",
            Transport::Grpc => "GRPC",
            Transport::HttpJson => "HTTP+JSON",
            Transport::Other(s) => s,
        }
    }
}

impl From<String> for Transport {
    fn from(s: String) -> Self {
        match s.as_str() {
            "JSONRPC" => Transport::JsonRpc,
            "GRPC" => Transport::Grpc,
            "HTTP+JSON" => Transport::HttpJson,
            _ => Transport::Other(s),
        }
    }
}

impl From<Transport> for String {
    fn from(t: Transport) -> Self {
        t.as_str().to_owned()
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JWS signature over the card (RFC 7515, JSON serialization).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// The JWS protected header (base64url).
    #[serde(rename = "protected")]
    pub protected_header: String,
    /// The signature (base64url).
    pub signature: String,
    /// The unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<serde_json::Map<String, serde_json::Value>>,
}

/// One of the five security-scheme kinds, discriminated by `type` (OpenAPI 3 style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SecurityScheme {
    /// An API key.
    #[serde(rename = "apiKey")]
    ApiKey(ApiKeySecurityScheme),
    /// HTTP authentication (`Bearer`, `Basic`, ...).
    #[serde(rename = "http")]
    Http(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    #[serde(rename = "oauth2")]
    OAuth2(Box<OAuth2SecurityScheme>),
    /// OpenID Connect.
    #[serde(rename = "openIdConnect")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    #[serde(rename = "mutualTLS")]
    MutualTls(MutualTlsSecurityScheme),
}

/// Where an API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    /// In a header.
    Header,
    /// In the query string.
    Query,
    /// In a cookie.
    Cookie,
}

/// An API key sent in a header, query parameter or cookie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Where the key is sent.
    #[serde(rename = "in")]
    pub location: ApiKeyLocation,
    /// The header, parameter or cookie's name.
    pub name: String,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// HTTP authentication (RFC 7235).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// e.g. `bearer` or `basic`.
    pub scheme: String,
    /// How bearer tokens are formatted (a hint, e.g. `JWT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// OAuth 2.0 with its flows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// The flows the agent supports.
    pub flows: OAuthFlows,
    /// The authorization server's metadata URL (RFC 8414).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2_metadata_url: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// OpenID Connect discovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// The discovery document's URL.
    pub open_id_connect_url: String,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Mutual TLS: the client presents a certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The OAuth 2.0 flows a scheme supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    /// The authorization code flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    /// The client credentials flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    /// The implicit flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    /// The resource owner password flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
}

/// OAuth scope name → description.
pub type Scopes = BTreeMap<String, String>;

/// The authorization code flow's endpoints and scopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Where the user authorizes.
    pub authorization_url: String,
    /// Where tokens are issued.
    pub token_url: String,
    /// The scopes, with descriptions.
    pub scopes: Scopes,
    /// Where tokens are refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
}

/// The client credentials flow's endpoint and scopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Where tokens are issued.
    pub token_url: String,
    /// The scopes, with descriptions.
    pub scopes: Scopes,
    /// Where tokens are refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
}

/// The implicit flow's endpoint and scopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Where the user authorizes.
    pub authorization_url: String,
    /// The scopes, with descriptions.
    pub scopes: Scopes,
    /// Where tokens are refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
}

/// The password flow's endpoint and scopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Where tokens are issued.
    pub token_url: String,
    /// The scopes, with descriptions.
    pub scopes: Scopes,
    /// Where tokens are refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
}

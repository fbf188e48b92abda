//! Agent Card signatures (spec §8.4): a JWS (RFC 7515) whose payload is the card's
//! RFC 8785 canonical form, without `signatures` and without default values.
//!
//! Which fields a signature covers depends on who reads the card. The official v1.0
//! SDKs (Python and JavaScript alike) verify what they *parsed*: the card as v1.0
//! (a v0.3 card's fields moved to their v1.0 places), fields outside the v1.0 proto
//! dropped, proto defaults and empty values dropped. A card carrying both generations'
//! fields (`url`, `protocolVersion`, `preferredTransport` beside `supportedInterfaces`)
//! therefore has two readings, and a signature covers one of them: a [`Projection`].
//! A card is signed once per projection it is published for ([`CardSigningKey::sign`]);
//! a verifier ([`verify`]) says which projection a valid signature covers, and hands
//! back that projection — the only fields a caller may then trust.
//!
//! Keys: ES256 (P-256) or EdDSA (Ed25519) to sign, from a PKCS#8 PEM or a private JWK;
//! verification takes the asymmetric algorithms of JOSE (RSA, RSA-PSS, ECDSA, EdDSA),
//! never `none` and never an HMAC, whose "secret" would be a public key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Map, Value};

use crate::card::AgentCardSignature;

/// Which reading of a card a signature covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Projection {
    /// The card as a v1.0 client reads it (what the official SDKs sign and verify).
    V1_0,
    /// The card as a v0.3 client reads it: every field but v1.0's own.
    V0_3,
}

impl Projection {
    /// `1.0` or `0.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Projection::V1_0 => "1.0",
            Projection::V0_3 => "0.3",
        }
    }
}

/// Why a card could not be brought to a canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the card does not fit the A2A {projection} schema at `{path}`: {problem}")]
pub struct ProjectionError {
    /// The reading that failed.
    pub projection: &'static str,
    /// Where, as a dotted path.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

/// The card's `projection`: the fields that reading of it has, as JSON (defaults,
/// empty values and `signatures` dropped). This is what a signature over that
/// projection covers, and what a verified card may be trusted for.
pub fn project(card: &Value, projection: Projection) -> Result<Value, ProjectionError> {
    let err = |path: String, problem: &str| ProjectionError {
        projection: projection.as_str(),
        path,
        problem: problem.to_owned(),
    };
    let Some(obj) = card.as_object() else {
        return Err(err(String::new(), "a card is a JSON object"));
    };
    let projected = match projection {
        Projection::V1_0 => {
            let mut v1 = Value::Object(obj.clone());
            crate::card::v1_reading(&mut v1);
            let map = v1.as_object().cloned().unwrap_or_default();
            Value::Object(schema::message(&map, schema::CARD, "").map_err(|(p, m)| err(p, &m))?)
        }
        Projection::V0_3 => {
            let mut v03 = obj.clone();
            for v1_only in [
                "supportedInterfaces",
                "supported_interfaces",
                "securityRequirements",
            ] {
                v03.remove(v1_only);
            }
            if let Some(Value::Object(capabilities)) = v03.get_mut("capabilities") {
                capabilities.remove("extendedAgentCard");
            }
            if let Some(Value::Array(skills)) = v03.get_mut("skills") {
                for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
                    skill.remove("securityRequirements");
                }
            }
            Value::Object(v03)
        }
    };
    let mut projected = projected;
    if let Some(obj) = projected.as_object_mut() {
        obj.remove("signatures");
    }
    Ok(without_empty(projected).unwrap_or_else(|| Value::Object(Map::new())))
}

/// `value` without empty strings, lists and objects, and without nulls, at any depth
/// (an object or list left empty by that goes too): what both official SDKs do before
/// canonicalizing a card.
fn without_empty(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items.into_iter().filter_map(without_empty).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: Map<String, Value> = map
                .into_iter()
                .filter_map(|(k, v)| without_empty(v).map(|v| (k, v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other),
    }
}

/// The RFC 8785 (JSON Canonicalization Scheme) form of `value`: keys sorted by their
/// UTF-16 code units, no whitespace, strings minimally escaped, numbers as ECMAScript
/// writes an IEEE double (an integer past 2^53 loses its precision, as it does there).
pub fn canonicalize(value: &Value) -> Vec<u8> {
    fn as_doubles(value: &Value) -> Value {
        match value {
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                let exact = n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53)
                    || n.as_u64().is_some_and(|u| u <= 1 << 53);
                if exact {
                    value.clone()
                } else {
                    n.as_f64()
                        .and_then(serde_json::Number::from_f64)
                        .map_or(Value::Null, Value::Number)
                }
            }
            Value::Array(items) => Value::Array(items.iter().map(as_doubles).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), as_doubles(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    // JSON values always serialize; a number serde_json holds is always finite.
    serde_json_canonicalizer::to_vec(&as_doubles(value)).expect("a JSON value always canonicalizes")
}

/// The bytes a signature over `card`'s `projection` signs: the projection, canonical.
pub fn payload(card: &Value, projection: Projection) -> Result<Vec<u8>, ProjectionError> {
    project(card, projection).map(|p| canonicalize(&p))
}

/// Why a signing key cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(String);

enum Pair {
    Es256(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// A key to sign cards with, and what verifiers need of it: its public JWK and key id
/// (the RFC 7638 thumbprint).
pub struct CardSigningKey {
    pair: Pair,
    public: Value,
    kid: String,
}

impl std::fmt::Debug for CardSigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardSigningKey")
            .field("alg", &self.alg())
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl CardSigningKey {
    /// The key in `bytes`: a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, what
    /// `openssl genpkey` writes) or a private JWK (`{"kty":"EC","crv":"P-256",…,"d":…}`
    /// or `{"kty":"OKP","crv":"Ed25519",…,"d":…}`).
    pub fn from_bytes(bytes: &[u8]) -> Result<CardSigningKey, KeyError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| KeyError("the key file is neither a PEM nor a JWK (not text)".into()))?;
        let pair = if text.trim_start().starts_with('{') {
            pair_from_jwk(text)?
        } else {
            pair_from_pem(text)?
        };
        let public = match &pair {
            Pair::Es256(p) => {
                let point = p.public_key().as_ref();
                serde_json::json!({
                    "kty": "EC",
                    "crv": "P-256",
                    "x": B64.encode(&point[1..33]),
                    "y": B64.encode(&point[33..65]),
                })
            }
            Pair::Ed25519(p) => serde_json::json!({
                "kty": "OKP",
                "crv": "Ed25519",
                "x": B64.encode(p.public_key().as_ref()),
            }),
        };
        // RFC 7638: the SHA-256 of the required members, canonical.
        let kid = B64.encode(ring::digest::digest(
            &ring::digest::SHA256,
            &canonicalize(&public),
        ));
        let mut public = public;
        public["kid"] = Value::String(kid.clone());
        public["use"] = Value::String("sig".into());
        public["alg"] = Value::String(alg_name(&pair).into());
        Ok(CardSigningKey { pair, public, kid })
    }

    /// `ES256` or `EdDSA`.
    pub fn alg(&self) -> &'static str {
        alg_name(&self.pair)
    }

    /// The key id signatures name (the RFC 7638 thumbprint of the public key).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as a JWK (with `kid`, `use` and `alg`), for a JWKS.
    pub fn public_jwk(&self) -> &Value {
        &self.public
    }

    /// Signatures over `card`, one per projection in `projections`, each naming this
    /// key (`kid`) and, when given, where its key set is published (`jku`). The card's
    /// own `signatures` are ignored.
    pub fn sign(
        &self,
        card: &Value,
        projections: &[Projection],
        jku: Option<&str>,
    ) -> Result<Vec<AgentCardSignature>, ProjectionError> {
        let mut header = serde_json::json!({ "alg": self.alg(), "typ": "JOSE", "kid": self.kid });
        if let Some(jku) = jku {
            header["jku"] = Value::String(jku.to_owned());
        }
        let protected = B64.encode(header.to_string());
        projections
            .iter()
            .map(|&projection| {
                let payload = payload(card, projection)?;
                let input = format!("{protected}.{}", B64.encode(payload));
                let signature = match &self.pair {
                    Pair::Es256(p) => p
                        .sign(&SystemRandom::new(), input.as_bytes())
                        // Signing fails only when the system has no randomness.
                        .expect("the system's random number generator works")
                        .as_ref()
                        .to_vec(),
                    Pair::Ed25519(p) => p.sign(input.as_bytes()).as_ref().to_vec(),
                };
                Ok(AgentCardSignature {
                    protected: protected.clone(),
                    signature: B64.encode(signature),
                    header: None,
                })
            })
            .collect()
    }
}

fn alg_name(pair: &Pair) -> &'static str {
    match pair {
        Pair::Es256(_) => "ES256",
        Pair::Ed25519(_) => "EdDSA",
    }
}

fn pair_from_pem(text: &str) -> Result<Pair, KeyError> {
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;
    let der = PrivateKeyDer::from_pem_slice(text.as_bytes()).map_err(|e| {
        KeyError(format!(
            "the key file holds no private key PEM ({e}); give a PKCS#8 PEM or a private JWK"
        ))
    })?;
    let PrivateKeyDer::Pkcs8(pkcs8) = der else {
        return Err(KeyError(
            "the key is not PKCS#8 (`BEGIN PRIVATE KEY`); convert it with `openssl pkcs8 -topk8 -nocrypt -in KEY`".into(),
        ));
    };
    let der = pkcs8.secret_pkcs8_der();
    if let Ok(p) = EcdsaKeyPair::from_pkcs8(
        &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        der,
        &SystemRandom::new(),
    ) {
        return Ok(Pair::Es256(p));
    }
    if let Ok(p) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
        return Ok(Pair::Ed25519(p));
    }
    Err(KeyError(
        "the key is neither a P-256 (ES256) nor an Ed25519 (EdDSA) private key".into(),
    ))
}

fn pair_from_jwk(text: &str) -> Result<Pair, KeyError> {
    let jwk: Value = serde_json::from_str(text)
        .map_err(|e| KeyError(format!("the key file is not a JWK: {e}")))?;
    let field = |name: &str| -> Result<Vec<u8>, KeyError> {
        let s = jwk
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| KeyError(format!("the JWK has no `{name}`")))?;
        B64.decode(s.trim_end_matches('='))
            .map_err(|_| KeyError(format!("the JWK's `{name}` is not base64url")))
    };
    let kty = jwk.get("kty").and_then(Value::as_str).unwrap_or("");
    let crv = jwk.get("crv").and_then(Value::as_str).unwrap_or("");
    if jwk.get("d").is_none() {
        return Err(KeyError(
            "the JWK is a public key: signing needs the private one (`d`)".into(),
        ));
    }
    match (kty, crv) {
        ("EC", "P-256") => {
            let mut point = vec![4u8];
            point.extend(field("x")?);
            point.extend(field("y")?);
            EcdsaKeyPair::from_private_key_and_public_key(
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                &field("d")?,
                &point,
                &SystemRandom::new(),
            )
            .map(Pair::Es256)
            .map_err(|e| KeyError(format!("the JWK is not a valid P-256 key pair ({e})")))
        }
        ("OKP", "Ed25519") => Ed25519KeyPair::from_seed_and_public_key(&field("d")?, &field("x")?)
            .map(Pair::Ed25519)
            .map_err(|e| KeyError(format!("the JWK is not a valid Ed25519 key pair ({e})"))),
        _ => Err(KeyError(format!(
            "a card signing key is EC P-256 (ES256) or OKP Ed25519 (EdDSA), not kty {kty:?} crv {crv:?}"
        ))),
    }
}

/// What a signature's protected header says about the key that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHeader {
    /// `alg`.
    pub alg: String,
    /// `kid`, the key's id.
    pub kid: Option<String>,
    /// `jku`, where the signer says its key set is.
    pub jku: Option<String>,
}

/// The protected headers of a card's signatures (those that decode, of the first
/// [`MAX_SIGNATURES`]), in order: which keys a verifier needs.
pub fn signature_headers(card: &Value) -> Vec<SignatureHeader> {
    signatures(card)
        .iter()
        .take(MAX_SIGNATURES)
        .filter_map(|s| decode_header(&s.protected))
        .map(|(_, h)| h)
        .collect()
}

fn signatures(card: &Value) -> Vec<AgentCardSignature> {
    card.get("signatures")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|s| serde_json::from_value(s.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn decode_header(protected: &str) -> Option<(Map<String, Value>, SignatureHeader)> {
    let bytes = B64.decode(protected.trim_end_matches('=')).ok()?;
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&bytes) else {
        return None;
    };
    let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
    let header = SignatureHeader {
        alg: text("alg")?,
        kid: text("kid"),
        jku: text("jku"),
    };
    Some((map, header))
}

/// A card whose signature verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    /// The reading the signature covers.
    pub projection: Projection,
    /// The key that made it.
    pub kid: Option<String>,
    /// The card as that reading has it: only signed fields.
    pub card: Value,
}

/// Why a card's signatures do not vouch for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// No signature at all.
    #[error("the card is not signed")]
    Unsigned,
    /// Signed, but by no key the verifier trusts.
    #[error("the card is signed by a key that is not trusted ({})", kids.join(", "))]
    UnknownKey {
        /// The keys the signatures name (`(no kid)` for one that names none).
        kids: Vec<String>,
    },
    /// A trusted key's signature does not match the card: changed since it was signed,
    /// or never signed as it is.
    #[error("the card's signature does not verify: it was changed after signing{0}")]
    Invalid(String),
}

/// Most signatures of one card looked at: a card may carry a few (one per reading, one
/// per key during a rotation), and each one checked costs a signature verification per
/// fitting key, so a card with thousands must not cost thousands.
pub const MAX_SIGNATURES: usize = 16;

/// The JOSE algorithms a card signature may use.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks `card`'s signatures (the first [`MAX_SIGNATURES`]) against `keys` (public JWKs
/// the caller trusts): the first signature that verifies, under either projection,
/// vouches for the fields of that projection. A signature is matched to a key by its
/// `kid` (a key without `kid` is tried for any signature); a key's `alg`, when it has
/// one, must be the signature's.
pub fn verify(card: &Value, keys: &[Jwk]) -> Result<Verified, VerifyError> {
    let all = signatures(card);
    if all.is_empty() {
        return Err(VerifyError::Unsigned);
    }
    let mut named = Vec::new();
    let mut tried = false;
    let mut schema_problem = String::new();
    let payloads: Vec<(Projection, Result<Vec<u8>, ProjectionError>)> =
        [Projection::V1_0, Projection::V0_3]
            .into_iter()
            .map(|p| (p, payload(card, p)))
            .collect();
    for sig in all.iter().take(MAX_SIGNATURES) {
        let Some((map, header)) = decode_header(&sig.protected) else {
            named.push("(an undecodable header)".to_owned());
            continue;
        };
        named.push(header.kid.clone().unwrap_or_else(|| "(no kid)".to_owned()));
        // RFC 7515 §4.1.11: an extension this verifier does not understand fails it.
        if map.contains_key("crit") {
            continue;
        }
        let Some(alg) = ALGORITHMS
            .into_iter()
            .find(|a| format!("{a:?}") == header.alg)
        else {
            continue;
        };
        for jwk in keys.iter().filter(|k| fits(k, &header, alg)) {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            tried = true;
            for (projection, payload) in &payloads {
                let payload = match payload {
                    Ok(p) => p,
                    Err(e) => {
                        schema_problem = format!(" ({e})");
                        continue;
                    }
                };
                let token = format!(
                    "{}.{}.{}",
                    sig.protected,
                    B64.encode(payload),
                    sig.signature
                );
                let mut validation = Validation::new(alg);
                validation.required_spec_claims.clear();
                validation.validate_exp = false;
                validation.validate_nbf = false;
                validation.validate_aud = false;
                if jsonwebtoken::decode::<Value>(&token, &key, &validation).is_ok() {
                    return Ok(Verified {
                        projection: *projection,
                        kid: header.kid.clone(),
                        card: project(card, *projection).unwrap_or_default(),
                    });
                }
            }
        }
    }
    if tried {
        Err(VerifyError::Invalid(schema_problem))
    } else {
        Err(VerifyError::UnknownKey { kids: named })
    }
}

/// Whether `jwk` may check a signature with `header` and `alg`: a signing key of the
/// algorithm's family, named as the signature names it.
fn fits(jwk: &Jwk, header: &SignatureHeader, alg: Algorithm) -> bool {
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return false;
    }
    if let (Some(kid), Some(want)) = (&jwk.common.key_id, &header.kid)
        && kid != want
    {
        return false;
    }
    if let Some(key_alg) = jwk.common.key_algorithm
        && key_alg.to_string() != header.alg
    {
        return false;
    }
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => matches!(
            alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
        ),
        AlgorithmParameters::EllipticCurve(p) => {
            use jsonwebtoken::jwk::EllipticCurve;
            matches!(
                (&p.curve, alg),
                (EllipticCurve::P256, Algorithm::ES256) | (EllipticCurve::P384, Algorithm::ES384)
            )
        }
        AlgorithmParameters::OctetKeyPair(p) => {
            p.curve == jsonwebtoken::jwk::EllipticCurve::Ed25519 && alg == Algorithm::EdDSA
        }
        AlgorithmParameters::OctetKey(_) => false,
    }
}

/// The v1.0 proto's Agent Card, as a table: which fields each message has and what
/// they hold. [`schema::message`] keeps what a ProtoJSON parser would keep (a field
/// under its JSON or proto name, written under its JSON name) and drops what it would
/// drop (unknown fields, nulls, a non-optional `false`).
mod schema {
    use serde_json::{Map, Value};

    #[derive(Clone, Copy)]
    pub(super) enum Kind {
        Str,
        /// A `bool` without presence: `false` is the default, not written.
        Bool,
        /// An `optional bool`: written when set, `false` too.
        OptBool,
        Message(&'static [Field]),
        /// `google.protobuf.Struct`: any JSON object.
        Struct,
    }

    #[derive(Clone, Copy)]
    pub(super) enum Card {
        One,
        Repeated,
        Map,
    }

    pub(super) struct Field(&'static str, Card, Kind);

    use Card::{Map as M, One, Repeated as R};
    use Kind::{Bool, Message as Msg, OptBool, Str, Struct};

    pub(super) const CARD: &[Field] = &[
        Field("name", One, Str),
        Field("description", One, Str),
        Field("supportedInterfaces", R, Msg(INTERFACE)),
        Field("provider", One, Msg(PROVIDER)),
        Field("version", One, Str),
        Field("documentationUrl", One, Str),
        Field("capabilities", One, Msg(CAPABILITIES)),
        Field("securitySchemes", M, Msg(SCHEME)),
        Field("securityRequirements", R, Msg(REQUIREMENT)),
        Field("defaultInputModes", R, Str),
        Field("defaultOutputModes", R, Str),
        Field("skills", R, Msg(SKILL)),
        Field("iconUrl", One, Str),
    ];
    const INTERFACE: &[Field] = &[
        Field("url", One, Str),
        Field("protocolBinding", One, Str),
        Field("tenant", One, Str),
        Field("protocolVersion", One, Str),
    ];
    const PROVIDER: &[Field] = &[Field("url", One, Str), Field("organization", One, Str)];
    const CAPABILITIES: &[Field] = &[
        Field("streaming", One, OptBool),
        Field("pushNotifications", One, OptBool),
        Field("extensions", R, Msg(EXTENSION)),
        Field("extendedAgentCard", One, OptBool),
    ];
    const EXTENSION: &[Field] = &[
        Field("uri", One, Str),
        Field("description", One, Str),
        Field("required", One, Bool),
        Field("params", One, Struct),
    ];
    const SKILL: &[Field] = &[
        Field("id", One, Str),
        Field("name", One, Str),
        Field("description", One, Str),
        Field("tags", R, Str),
        Field("examples", R, Str),
        Field("inputModes", R, Str),
        Field("outputModes", R, Str),
        Field("securityRequirements", R, Msg(REQUIREMENT)),
    ];
    const REQUIREMENT: &[Field] = &[Field("schemes", M, Msg(STRING_LIST))];
    const STRING_LIST: &[Field] = &[Field("list", R, Str)];
    const SCHEME: &[Field] = &[
        Field("apiKeySecurityScheme", One, Msg(API_KEY)),
        Field("httpAuthSecurityScheme", One, Msg(HTTP_AUTH)),
        Field("oauth2SecurityScheme", One, Msg(OAUTH2)),
        Field("openIdConnectSecurityScheme", One, Msg(OPENID)),
        Field("mtlsSecurityScheme", One, Msg(MTLS)),
    ];
    const API_KEY: &[Field] = &[
        Field("description", One, Str),
        Field("location", One, Str),
        Field("name", One, Str),
    ];
    const HTTP_AUTH: &[Field] = &[
        Field("description", One, Str),
        Field("scheme", One, Str),
        Field("bearerFormat", One, Str),
    ];
    const OAUTH2: &[Field] = &[
        Field("description", One, Str),
        Field("flows", One, Msg(FLOWS)),
        Field("oauth2MetadataUrl", One, Str),
    ];
    const OPENID: &[Field] = &[
        Field("description", One, Str),
        Field("openIdConnectUrl", One, Str),
    ];
    const MTLS: &[Field] = &[Field("description", One, Str)];
    const FLOWS: &[Field] = &[
        Field("authorizationCode", One, Msg(AUTHORIZATION_CODE)),
        Field("clientCredentials", One, Msg(CLIENT_CREDENTIALS)),
        Field("implicit", One, Msg(IMPLICIT)),
        Field("password", One, Msg(PASSWORD)),
        Field("deviceCode", One, Msg(DEVICE_CODE)),
    ];
    const AUTHORIZATION_CODE: &[Field] = &[
        Field("authorizationUrl", One, Str),
        Field("tokenUrl", One, Str),
        Field("refreshUrl", One, Str),
        Field("scopes", M, Str),
        Field("pkceRequired", One, Bool),
    ];
    const CLIENT_CREDENTIALS: &[Field] = &[
        Field("tokenUrl", One, Str),
        Field("refreshUrl", One, Str),
        Field("scopes", M, Str),
    ];
    const DEVICE_CODE: &[Field] = &[
        Field("deviceAuthorizationUrl", One, Str),
        Field("tokenUrl", One, Str),
        Field("refreshUrl", One, Str),
        Field("scopes", M, Str),
    ];
    const IMPLICIT: &[Field] = &[
        Field("authorizationUrl", One, Str),
        Field("refreshUrl", One, Str),
        Field("scopes", M, Str),
    ];
    const PASSWORD: &[Field] = &[
        Field("tokenUrl", One, Str),
        Field("refreshUrl", One, Str),
        Field("scopes", M, Str),
    ];

    /// A field's proto name, from its JSON name (`supportedInterfaces` →
    /// `supported_interfaces`, `oauth2MetadataUrl` → `oauth2_metadata_url`).
    fn proto_name(json: &str) -> String {
        let mut out = String::with_capacity(json.len() + 4);
        for c in json.chars() {
            if c.is_ascii_uppercase() {
                out.push('_');
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    type Problem = (String, String);

    /// The fields of `obj` that message `fields` has, as ProtoJSON writes them.
    pub(super) fn message(
        obj: &Map<String, Value>,
        fields: &[Field],
        path: &str,
    ) -> Result<Map<String, Value>, Problem> {
        let mut out = Map::new();
        for Field(name, card, kind) in fields {
            let value = obj.get(*name).or_else(|| obj.get(&proto_name(name)));
            let Some(value) = value.filter(|v| !v.is_null()) else {
                continue;
            };
            let here = if path.is_empty() {
                (*name).to_owned()
            } else {
                format!("{path}.{name}")
            };
            let kept = match card {
                Card::One => one(value, *kind, &here)?,
                Card::Repeated => {
                    let Value::Array(items) = value else {
                        return Err((here, "expected a list".into()));
                    };
                    let mut kept = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        kept.push(
                            one(item, *kind, &format!("{here}[{i}]"))?
                                .unwrap_or_else(|| default_of(*kind)),
                        );
                    }
                    Some(Value::Array(kept))
                }
                Card::Map => {
                    let Value::Object(entries) = value else {
                        return Err((here, "expected an object".into()));
                    };
                    let mut kept = Map::new();
                    for (k, v) in entries {
                        let v = one(v, *kind, &format!("{here}.{k}"))?
                            .unwrap_or_else(|| default_of(*kind));
                        kept.insert(k.clone(), v);
                    }
                    Some(Value::Object(kept))
                }
            };
            if let Some(kept) = kept {
                out.insert((*name).to_owned(), kept);
            }
        }
        Ok(out)
    }

    fn default_of(kind: Kind) -> Value {
        match kind {
            Kind::Str => Value::String(String::new()),
            Kind::Bool | Kind::OptBool => Value::Bool(false),
            Kind::Message(_) | Kind::Struct => Value::Object(Map::new()),
        }
    }

    /// One value of `kind`; `None` when ProtoJSON would not write it.
    fn one(value: &Value, kind: Kind, path: &str) -> Result<Option<Value>, Problem> {
        let wrong = |what: &str| Err((path.to_owned(), format!("expected {what}")));
        match (kind, value) {
            (_, Value::Null) => Ok(None),
            (Kind::Str, Value::String(_)) => Ok(Some(value.clone())),
            (Kind::Str, _) => wrong("a string"),
            (Kind::Bool, Value::Bool(b)) => Ok(b.then_some(Value::Bool(true))),
            (Kind::OptBool, Value::Bool(_)) => Ok(Some(value.clone())),
            (Kind::Bool | Kind::OptBool, _) => wrong("true or false"),
            (Kind::Message(fields), Value::Object(obj)) => {
                message(obj, fields, path).map(|m| Some(Value::Object(m)))
            }
            (Kind::Struct, Value::Object(_)) => Ok(Some(value.clone())),
            (Kind::Message(_) | Kind::Struct, _) => wrong("an object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 8785 §3.2.2: the sample whose canonical form the RFC gives.
    #[test]
    fn rfc8785_sample_object() {
        let input: Value = serde_json::from_str(
            r#"{
              "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }"#,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(canonicalize(&input)).unwrap(),
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
    }

    /// RFC 8785 §3.2.3: properties sorted by UTF-16 code units (a surrogate pair sorts
    /// before U+FB33, which UTF-8 or code point order would not do).
    #[test]
    fn rfc8785_property_sorting() {
        let input: Value = serde_json::from_str(
            r#"{
              "\u20ac": "Euro Sign",
              "\r": "Carriage Return",
              "\ufb33": "Hebrew Letter Dalet With Dagesh",
              "1": "One",
              "\ud83d\ude00": "Emoji: Grinning Face",
              "\u0080": "Control",
              "\u00f6": "Latin Small Letter O With Diaeresis"
            }"#,
        )
        .unwrap();
        let text = String::from_utf8(canonicalize(&input)).unwrap();
        let values: Vec<&str> = text
            .split("\":\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect();
        assert_eq!(
            values,
            [
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh"
            ]
        );
    }

    /// RFC 8785 Appendix B: IEEE 754 doubles as ECMAScript writes them.
    #[test]
    fn rfc8785_numbers() {
        for (bits, expected) in [
            (0x0000000000000000u64, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            let n = serde_json::Number::from_f64(f64::from_bits(bits)).unwrap();
            assert_eq!(
                String::from_utf8(canonicalize(&Value::Number(n))).unwrap(),
                expected,
                "{bits:#x}"
            );
        }
        // An integer past 2^53 is a double in JSON's I-JSON profile.
        assert_eq!(
            canonicalize(&json!(18446744073709551615u64)),
            b"18446744073709552000"
        );
    }

    fn merged_card() -> Value {
        json!({
            "protocolVersion": "0.3.0",
            "name": "Host",
            "description": "Runs workflows — in parallel",
            "url": "http://127.0.0.1:1/",
            "preferredTransport": "JSONRPC",
            "version": "1.0.0",
            "capabilities": {"streaming": true, "pushNotifications": false, "stateTransitionHistory": true},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain", ""],
            "skills": [{"id": "a", "name": "A", "description": "", "tags": ["x"], "security": [{"bearer": []}]}],
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "security": [{"bearer": []}],
            "supportsAuthenticatedExtendedCard": true,
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities2": "unknown to both"
        })
    }

    #[test]
    fn the_v1_projection_is_what_a_v1_client_parses() {
        let v1 = project(&merged_card(), Projection::V1_0).unwrap();
        assert_eq!(
            v1,
            json!({
                "name": "Host",
                "description": "Runs workflows — in parallel",
                "version": "1.0.0",
                "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": true},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                // A requirement without scopes is empty once defaults go: the SDKs drop it.
                "skills": [{"id": "a", "name": "A", "tags": ["x"]}],
                "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
                "supportedInterfaces": [{"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
            })
        );
        let v03 = project(&merged_card(), Projection::V0_3).unwrap();
        assert_eq!(v03["url"], "http://127.0.0.1:1/");
        assert!(v03.get("supportedInterfaces").is_none());
        assert!(v03["capabilities"].get("extendedAgentCard").is_none());
    }

    #[test]
    fn a_card_that_does_not_fit_the_schema_says_where() {
        let mut card = merged_card();
        card["skills"][0]["tags"] = json!("x");
        let e = project(&card, Projection::V1_0).unwrap_err();
        assert_eq!(e.path, "skills[0].tags");
    }

    const P256_JWK: &str = r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}"#;

    fn public(key: &CardSigningKey) -> Jwk {
        serde_json::from_value(key.public_jwk().clone()).unwrap()
    }

    #[test]
    fn signed_cards_verify_and_say_which_fields_are_signed() {
        let key = CardSigningKey::from_bytes(P256_JWK.as_bytes()).unwrap();
        assert_eq!(key.alg(), "ES256");
        let mut card = merged_card();
        let sigs = key
            .sign(
                &card,
                &[Projection::V1_0, Projection::V0_3],
                Some("https://h/jwks"),
            )
            .unwrap();
        card["signatures"] = serde_json::to_value(&sigs).unwrap();
        let ok = verify(&card, &[public(&key)]).unwrap();
        assert_eq!(ok.projection, Projection::V1_0);
        assert_eq!(ok.kid.as_deref(), Some(key.kid()));
        assert_eq!(
            signature_headers(&card)[0].jku.as_deref(),
            Some("https://h/jwks")
        );

        // A field of the v0.3 reading changed: the v1.0 signature still holds, and
        // says only the v1.0 fields are vouched for.
        let mut moved = card.clone();
        moved["url"] = json!("https://evil.example/");
        let ok = verify(&moved, &[public(&key)]).unwrap();
        assert_eq!(ok.projection, Projection::V1_0);
        assert!(ok.card.get("url").is_none());

        // A field both readings have, changed: nothing verifies.
        let mut tampered = card.clone();
        tampered["name"] = json!("Host2");
        assert!(matches!(
            verify(&tampered, &[public(&key)]),
            Err(VerifyError::Invalid(_))
        ));

        // Signed by another key: unknown.
        let other = CardSigningKey::from_bytes(
            br#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
        )
        .unwrap();
        assert!(matches!(
            verify(&card, &[public(&other)]),
            Err(VerifyError::UnknownKey { .. })
        ));
        let mut unsigned = card.clone();
        unsigned.as_object_mut().unwrap().remove("signatures");
        assert_eq!(
            verify(&unsigned, &[public(&key)]),
            Err(VerifyError::Unsigned)
        );
    }

    #[test]
    fn only_the_first_signatures_are_looked_at() {
        let key = CardSigningKey::from_bytes(P256_JWK.as_bytes()).unwrap();
        let mut card = merged_card();
        let good = key.sign(&card, &[Projection::V1_0], None).unwrap();
        let junk = AgentCardSignature {
            protected: B64.encode(r#"{"alg":"ES256","kid":"junk"}"#),
            signature: B64.encode([0u8; 64]),
            header: None,
        };
        let mut many = vec![junk; MAX_SIGNATURES];
        many.extend(good.clone());
        card["signatures"] = serde_json::to_value(&many).unwrap();
        assert!(verify(&card, &[public(&key)]).is_err(), "past the bound");
        many.remove(0);
        card["signatures"] = serde_json::to_value(&many).unwrap();
        assert!(verify(&card, &[public(&key)]).is_ok(), "within it");
    }

    #[test]
    fn an_ed25519_key_from_the_rfc_signs() {
        // RFC 8037 Appendix A.1's key pair.
        let key = CardSigningKey::from_bytes(
            br#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
        )
        .unwrap();
        assert_eq!(key.alg(), "EdDSA");
        // RFC 8037 Appendix A.3: the thumbprint of that key.
        assert_eq!(key.kid(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
        let mut card = merged_card();
        card["signatures"] =
            serde_json::to_value(key.sign(&card, &[Projection::V0_3], None).unwrap()).unwrap();
        let ok = verify(&card, &[public(&key)]).unwrap();
        assert_eq!(ok.projection, Projection::V0_3);
        assert!(ok.card.get("supportedInterfaces").is_none());
    }

    #[test]
    fn hmac_and_mismatched_keys_are_never_used() {
        let key = CardSigningKey::from_bytes(P256_JWK.as_bytes()).unwrap();
        let mut card = merged_card();
        card["signatures"] =
            serde_json::to_value(key.sign(&card, &[Projection::V1_0], None).unwrap()).unwrap();
        let hmac: Jwk =
            serde_json::from_value(json!({"kty": "oct", "k": "c2VjcmV0", "kid": key.kid()}))
                .unwrap();
        let rsa_as_es256: Jwk = serde_json::from_value(json!({"kty": "RSA", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB", "kid": key.kid()})).unwrap();
        assert!(matches!(
            verify(&card, &[hmac, rsa_as_es256]),
            Err(VerifyError::UnknownKey { .. })
        ));
    }
}

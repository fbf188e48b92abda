//! The JSON-RPC 2.0 envelope: request ids, parsing a request out of a body, and the
//! response objects — in both directions, for the server and the client.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::RpcError;

/// A marker type for one constant string of the wire (`"jsonrpc": "2.0"`, v0.3's
/// `"kind": "task"`): a zero-sized type that serializes as its one string and refuses
/// any other on input, so that a value can only be read from JSON that says it.
macro_rules! const_str {
    ($(#[$meta:meta])* $name:ident = $lit:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The one value this marker stands for.
            pub const VALUE: &'static str = $lit;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                if s == $lit {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(
                        serde::de::Unexpected::Str(&s),
                        &concat!("\"", $lit, "\""),
                    ))
                }
            }
        }
    };
}
#[cfg(feature = "v0_3")]
pub(crate) use const_str;

const_str!(
    /// `"jsonrpc": "2.0"`.
    JsonRpcVersion = "2.0"
);

/// A request id: a string, a number, or null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A string id.
    Str(String),
    /// A numeric id.
    Num(serde_json::Number),
    /// The null id (a response to a request whose id could not be read).
    Null,
}

/// Read by the JSON value's own type: serde's untagged enums buffer the value and try
/// each variant in turn, building an error message for each that does not fit, and
/// every request and response carries an id.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Id;
        impl serde::de::Visitor<'_> for Id {
            type Value = RequestId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string, a number or null")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::Str(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::Str(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RequestId, E> {
                Ok(RequestId::Num(v.into()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Num(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RequestId, E> {
                serde_json::Number::from_f64(v)
                    .map(RequestId::Num)
                    .ok_or_else(|| E::custom("a request id is a finite number"))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
        }
        d.deserialize_any(Id)
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Num(n.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::Str(s)
    }
}

/// A JSON-RPC request as sent by a client.
#[derive(Debug, Clone, Serialize)]
pub struct OutgoingRequest<'a, P: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the response will carry.
    pub id: RequestId,
    /// The method called.
    pub method: &'a str,
    /// Its params, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a P>,
}

/// A request the server has checked to be well-formed JSON-RPC 2.0. Its `params` are
/// kept as the raw JSON text and deserialized straight into the method's types: a
/// generic JSON tree of a large body would cost many times the body's size.
#[derive(Debug, Clone)]
pub struct IncomingRequest {
    /// `None` for a request without an `id` member.
    pub id: Option<RequestId>,
    /// The method called.
    pub method: String,
    /// Its params, unparsed until the method is known.
    pub params: Option<Box<serde_json::value::RawValue>>,
}

/// The envelope of a request, its `params` left as they are.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Box<serde_json::value::RawValue>>,
}

/// A member that is present, `null` included (serde reads a `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl IncomingRequest {
    /// Checks that `body` is a single JSON-RPC 2.0 request object. On failure, returns
    /// the error and the id to answer it with (null when the id itself is unusable).
    pub fn from_slice(body: &[u8]) -> Result<Self, (RequestId, RpcError)> {
        // Valid JSON at all, without building anything: checked apart only when the body
        // is not a well-formed envelope (which proves it JSON), so a good request is
        // read once here, not twice.
        let json = || match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Ok(_) => Ok(()),
            Err(e) => Err((RequestId::Null, RpcError::parse_error(e))),
        };
        let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
        if first != Some(b'{') {
            json()?;
        }
        let kind = match first {
            Some(b'{') => None,
            Some(b'[') => {
                return Err((
                    RequestId::Null,
                    RpcError::invalid_request(
                        "JSON-RPC batch requests are not supported by A2A: send one request object per HTTP request",
                    ),
                ));
            }
            Some(b'"') => Some("a string"),
            Some(b't' | b'f') => Some("a boolean"),
            Some(b'n') => Some("null"),
            _ => Some("a number"),
        };
        if let Some(kind) = kind {
            return Err((
                RequestId::Null,
                RpcError::invalid_request(format!(
                    "a JSON-RPC request must be an object, got {kind}"
                )),
            ));
        }
        let envelope: Envelope = match serde_json::from_slice(body) {
            Ok(envelope) => envelope,
            Err(e) => {
                json()?;
                return Err((
                    RequestId::Null,
                    RpcError::invalid_request(format!("not a JSON-RPC request: {e}")),
                ));
            }
        };
        let id = match envelope.id {
            None => None,
            Some(Value::String(s)) => Some(RequestId::Str(s)),
            Some(Value::Number(n)) => Some(RequestId::Num(n)),
            Some(Value::Null) => Some(RequestId::Null),
            Some(other) => {
                return Err((
                    RequestId::Null,
                    RpcError::invalid_request(format!(
                        "`id` must be a string, a number or null, got {}",
                        json_type(&other)
                    )),
                ));
            }
        };
        let reply_id = id.clone().unwrap_or(RequestId::Null);
        match envelope.jsonrpc {
            Some(Value::String(v)) if v == "2.0" => {}
            Some(_) => {
                return Err((
                    reply_id,
                    RpcError::invalid_request("`jsonrpc` must be exactly \"2.0\""),
                ));
            }
            None => {
                return Err((
                    reply_id,
                    RpcError::invalid_request("missing `jsonrpc`: \"2.0\""),
                ));
            }
        }
        let method = match envelope.method {
            Some(Value::String(m)) => m,
            Some(other) => {
                return Err((
                    reply_id,
                    RpcError::invalid_request(format!(
                        "`method` must be a string, got {}",
                        json_type(&other)
                    )),
                ));
            }
            None => return Err((reply_id, RpcError::invalid_request("missing `method`"))),
        };
        let params = match envelope.params {
            // JSON-RPC 2.0 says omit `params`; `null` is read the same way, leniently.
            None => None,
            Some(p) if p.get().trim() == "null" => None,
            Some(p) if p.get().trim_start().starts_with(['{', '[']) => Some(p),
            Some(p) => {
                let kind = match p.get().trim_start().as_bytes().first() {
                    Some(b'"') => "a string",
                    Some(b't' | b'f') => "a boolean",
                    _ => "a number",
                };
                return Err((
                    reply_id,
                    RpcError::invalid_request(format!(
                        "`params` must be an object or an array, got {kind}"
                    )),
                ));
            }
        };
        Ok(IncomingRequest { id, method, params })
    }

    /// Deserializes `params` into `P`, naming the offending field on failure.
    pub fn params<P: DeserializeOwned>(&self) -> Result<P, RpcError> {
        match &self.params {
            None => Err(RpcError::invalid_params("params", "missing")),
            Some(raw) if raw.get().trim_start().starts_with('[') => Err(RpcError::invalid_params(
                "params",
                "A2A methods take params by name: send an object, not an array",
            )),
            Some(raw) => parse_params_str(raw.get()),
        }
    }
}

/// Deserializes params from JSON text, naming the failing field, without building a
/// generic JSON tree first.
pub fn parse_params_str<P: DeserializeOwned>(text: &str) -> Result<P, RpcError> {
    // Read plainly first: tracking the path costs on every field, and is needed only to
    // say where the params that do not fit went wrong (read again, they fail the same).
    if let Ok(params) = P::deserialize(&mut serde_json::Deserializer::from_str(text)) {
        return Ok(params);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| path_error(e.path().to_string(), e.inner().to_string()))
}

/// Deserializes params with the path of the failing field (`message.parts[0].kind`).
///
/// ```
/// use a2a_protocol::jsonrpc::parse_params;
///
/// #[derive(Debug, serde::Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct TaskQuery {
///     id: String,
///     history_length: Option<u32>,
/// }
///
/// let err = parse_params::<TaskQuery>(&serde_json::json!({ "historyLength": 2 })).unwrap_err();
/// assert_eq!(err.code.0, -32602);
/// assert_eq!(err.data.unwrap()["field"], "id");
/// ```
pub fn parse_params<P: DeserializeOwned>(value: &Value) -> Result<P, RpcError> {
    // Plainly first, as `parse_params_str` reads.
    if let Ok(params) = P::deserialize(value) {
        return Ok(params);
    }
    serde_path_to_error::deserialize(value)
        .map_err(|e| path_error(e.path().to_string(), e.inner().to_string()))
}

/// The invalid-params error of a failed deserialization at `path`.
fn path_error(mut path: String, detail: String) -> RpcError {
    if path == "." {
        path.clear();
    }
    // serde reports a missing field at its parent; name the field itself.
    if let Some(name) = detail
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        path = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        };
    }
    RpcError::invalid_params(&path, detail)
}

/// The name of a JSON value's type, for error messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON-RPC response: `result` or `error`.
#[derive(Debug, Clone, Serialize)]
pub struct Response<T: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The result or the error.
    #[serde(flatten)]
    pub outcome: Outcome<T>,
}

/// The two shapes of a response body.
#[derive(Debug, Clone, Serialize)]
pub enum Outcome<T> {
    /// A success.
    #[serde(rename = "result")]
    Result(T),
    /// A failure.
    #[serde(rename = "error")]
    Error(RpcError),
}

impl<T: Serialize> Response<T> {
    /// A success answering request `id`.
    pub fn success(id: RequestId, result: T) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: Outcome::Result(result),
        }
    }
}

impl Response<()> {
    /// A failure answering request `id`.
    pub fn error(id: RequestId, error: RpcError) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: Outcome::Error(error),
        }
    }
}

/// Reads a response body received by a client: the `result` value, or the error.
/// `Err(None)`-style protocol violations are reported as a message.
pub fn read_response(value: Value) -> Result<Result<Value, RpcError>, String> {
    let Value::Object(mut obj) = value else {
        return Err(format!(
            "a JSON-RPC response must be an object, got {}",
            json_type(&value)
        ));
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("the response lacks `\"jsonrpc\": \"2.0\"`".to_owned());
    }
    if let Some(err) = obj.remove("error") {
        let err: RpcError = serde_json::from_value(err)
            .map_err(|e| format!("the response's `error` is malformed: {e}"))?;
        return Ok(Err(err));
    }
    match obj.remove("result") {
        Some(result) => Ok(Ok(result)),
        None => Err("the response has neither `result` nor `error`".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_ids_are_read_by_their_json_type() {
        let read = |s: &str| serde_json::from_str::<RequestId>(s);
        assert_eq!(read(r#""a-1""#).unwrap(), RequestId::Str("a-1".into()));
        assert_eq!(read("7").unwrap(), RequestId::from(7));
        assert_eq!(read("-7").unwrap(), RequestId::from(-7));
        assert_eq!(
            read("1.5").unwrap(),
            RequestId::Num(serde_json::Number::from_f64(1.5).unwrap())
        );
        assert_eq!(read("null").unwrap(), RequestId::Null);
        assert!(read("{}").is_err());
        assert!(read("[1]").is_err());
        assert!(read("true").is_err());
        // From a parsed value too, and back to the same text.
        let id: RequestId = serde_json::from_value(json!("x")).unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""x""#);
        assert_eq!(serde_json::to_string(&RequestId::from(3)).unwrap(), "3");
    }
}

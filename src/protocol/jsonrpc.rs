//! The JSON-RPC 2.0 envelope: request ids, parsing a request out of a body, and the
//! response objects — in both directions, for the server and the client.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::RpcError;
use super::types::JsonRpcVersion;

/// A request id: a string, a number, or null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Str(String),
    Num(serde_json::Number),
    Null,
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
    pub jsonrpc: JsonRpcVersion,
    pub id: RequestId,
    pub method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a P>,
}

/// A request the server has checked to be well-formed JSON-RPC 2.0.
#[derive(Debug, Clone)]
pub struct IncomingRequest {
    /// `None` for a notification (no `id` member at all).
    pub id: Option<RequestId>,
    pub method: String,
    pub params: Option<Value>,
}

impl IncomingRequest {
    /// Checks that `value` is a single JSON-RPC 2.0 request object. On failure, returns
    /// the error and the id to answer it with (null when the id itself is unusable).
    pub fn from_value(value: Value) -> Result<Self, (RequestId, RpcError)> {
        let mut obj = match value {
            Value::Object(obj) => obj,
            Value::Array(_) => {
                return Err((
                    RequestId::Null,
                    RpcError::invalid_request(
                        "JSON-RPC batch requests are not supported by A2A: send one request object per HTTP request",
                    ),
                ));
            }
            other => {
                return Err((
                    RequestId::Null,
                    RpcError::invalid_request(format!(
                        "a JSON-RPC request must be an object, got {}",
                        json_type(&other)
                    )),
                ));
            }
        };
        let id = match obj.remove("id") {
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
        match obj.get("jsonrpc") {
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
        let method = match obj.remove("method") {
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
        let params = match obj.remove("params") {
            // JSON-RPC 2.0 says omit `params`; `null` is read the same way, leniently.
            None | Some(Value::Null) => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
            Some(other) => {
                return Err((
                    reply_id,
                    RpcError::invalid_request(format!(
                        "`params` must be an object or an array, got {}",
                        json_type(&other)
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
            Some(Value::Array(_)) => Err(RpcError::invalid_params(
                "params",
                "A2A methods take params by name: send an object, not an array",
            )),
            Some(v) => parse_params(v),
        }
    }
}

/// Deserializes params with the path of the failing field (`message.parts[0].kind`).
///
/// ```
/// use a2a_orchestrator::protocol::jsonrpc::parse_params;
/// use a2a_orchestrator::protocol::types::TaskQueryParams;
///
/// let err = parse_params::<TaskQueryParams>(&serde_json::json!({ "historyLength": 2 })).unwrap_err();
/// assert_eq!(err.code.0, -32602);
/// assert_eq!(err.data.unwrap()["field"], "id");
/// ```
pub fn parse_params<P: DeserializeOwned>(value: &Value) -> Result<P, RpcError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let detail = e.inner().to_string();
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
    })
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
    pub jsonrpc: JsonRpcVersion,
    pub id: RequestId,
    #[serde(flatten)]
    pub outcome: Outcome<T>,
}

/// The two shapes of a response body.
#[derive(Debug, Clone, Serialize)]
pub enum Outcome<T> {
    #[serde(rename = "result")]
    Result(T),
    #[serde(rename = "error")]
    Error(RpcError),
}

impl<T: Serialize> Response<T> {
    pub fn success(id: RequestId, result: T) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: Outcome::Result(result),
        }
    }
}

impl Response<()> {
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

//! Errors in v1.0's form: the same codes as v0.3 (one [`RpcError`] type), with the
//! details v1.0 adds — a `google.rpc.ErrorInfo` naming the A2A error (`reason`,
//! `domain`), and a `google.rpc.BadRequest` naming the field of an invalid params error
//! — and, for HTTP+JSON, the HTTP status and `google.rpc.Status` body.

use serde_json::{Map, Value, json};

use super::{ERROR_DOMAIN, ERROR_INFO_TYPE};
use crate::error::{ErrorCode, RpcError};

/// The A2A error's name in UPPER_SNAKE_CASE without "Error", with its HTTP status and
/// gRPC status name (spec §5.4).
pub fn mapping(code: ErrorCode) -> (&'static str, u16, &'static str) {
    match code.0 {
        -32001 => ("TASK_NOT_FOUND", 404, "NOT_FOUND"),
        -32002 => ("TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION"),
        -32003 => (
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            400,
            "FAILED_PRECONDITION",
        ),
        -32004 => ("UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION"),
        -32005 => ("CONTENT_TYPE_NOT_SUPPORTED", 400, "INVALID_ARGUMENT"),
        -32006 => ("INVALID_AGENT_RESPONSE", 500, "INTERNAL"),
        -32007 => (
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            400,
            "FAILED_PRECONDITION",
        ),
        -32008 => ("EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION"),
        -32009 => ("VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"),
        -32700 => ("JSON_PARSE", 400, "INVALID_ARGUMENT"),
        -32600 => ("INVALID_REQUEST", 400, "INVALID_ARGUMENT"),
        -32601 => ("METHOD_NOT_FOUND", 404, "NOT_FOUND"),
        -32602 => ("INVALID_PARAMS", 400, "INVALID_ARGUMENT"),
        -32603 => ("INTERNAL_ERROR", 500, "INTERNAL"),
        -32040 => ("UNAUTHENTICATED", 401, "UNAUTHENTICATED"),
        -32041 => ("PERMISSION_DENIED", 403, "PERMISSION_DENIED"),
        -32042 => ("RESOURCE_EXHAUSTED", 429, "RESOURCE_EXHAUSTED"),
        _ => ("INTERNAL_ERROR", 500, "INTERNAL"),
    }
}

/// The A2A error an `ErrorInfo.reason` names, the reverse of [`mapping`].
pub fn code_of_reason(reason: &str) -> Option<ErrorCode> {
    const KNOWN: [i64; 17] = [
        -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32700, -32600,
        -32601, -32602, -32603, -32040, -32041, -32042,
    ];
    KNOWN
        .into_iter()
        .map(ErrorCode)
        .find(|c| mapping(*c).0 == reason)
}

/// An error read back from v1.0's forms: a `google.rpc.Status` (the HTTP+JSON body's
/// `error`, or an SSE event's) whose `ErrorInfo` names the A2A error. `None` when the
/// value is not one, or names no A2A error.
pub fn from_status(status: &Value) -> Option<RpcError> {
    let details = status.get("details")?.as_array()?;
    let reason = details
        .iter()
        .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))?
        .get("reason")?
        .as_str()?;
    let code = code_of_reason(reason)?;
    let message = status
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(reason)
        .to_owned();
    Some(RpcError {
        code,
        message,
        data: Some(Value::Array(details.clone())),
    })
}

/// The detail objects of an error: its `ErrorInfo` (the v0.3 `data` object's string
/// values become its metadata) and, when it names a field, a `BadRequest`.
pub fn details(e: &RpcError) -> Vec<Value> {
    let (reason, ..) = mapping(e.code);
    let mut metadata = Map::new();
    if let Some(Value::Object(data)) = &e.data {
        for (k, v) in data {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            metadata.insert(k.clone(), Value::String(text));
        }
    }
    let mut info = json!({ "@type": ERROR_INFO_TYPE, "reason": reason, "domain": ERROR_DOMAIN });
    if !metadata.is_empty() {
        info["metadata"] = Value::Object(metadata);
    }
    let mut out = vec![info];
    if e.code == ErrorCode::INVALID_PARAMS
        && let Some(field) = e
            .data
            .as_ref()
            .and_then(|d| d.get("field"))
            .and_then(Value::as_str)
    {
        out.push(json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{ "field": field, "description": e.message }],
        }));
    }
    out
}

/// The JSON-RPC error object of v1.0: code and message as in v0.3, `data` the details.
pub fn jsonrpc(e: &RpcError) -> RpcError {
    RpcError {
        code: e.code,
        message: e.message.clone(),
        data: Some(Value::Array(details(e))),
    }
}

/// The HTTP+JSON error: its status and `{"error": google.rpc.Status}` body.
pub fn http(e: &RpcError) -> (u16, Value) {
    let (_, status, name) = mapping(e.code);
    let body = json!({ "error": {
        "code": status,
        "status": name,
        "message": e.message,
        "details": details(e),
    }});
    (status, body)
}

//! The JSON-RPC error object and the A2A error codes (spec §8).
//!
//! One type, [`RpcError`], carries every error that crosses the wire in either
//! direction: the server answers with it, the client surfaces it with its code intact.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A value one form of the protocol cannot hold in another (a v0.3 file's `bytes` that
/// are not base64, a v1.0 part with no content): which field of what was sent, and why
/// — answered as invalid params naming that field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct ConvertError {
    /// Where in the request (a JSON path).
    pub field: String,
    /// Why it cannot be converted.
    pub why: String,
}

impl From<ConvertError> for RpcError {
    fn from(e: ConvertError) -> RpcError {
        RpcError::invalid_params(&e.field, e.why)
    }
}

/// A JSON-RPC / A2A error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON was received (-32700).
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not a valid request (-32600).
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist (-32601).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid method parameters (-32602).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// An internal error of the server (-32603).
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// The task does not exist, or is not visible (-32001).
    pub const TASK_NOT_FOUND: Self = Self(-32001);
    /// The task cannot be canceled, e.g. it is finished (-32002).
    pub const TASK_NOT_CANCELABLE: Self = Self(-32002);
    /// The agent does not support push notifications (-32003).
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: Self = Self(-32003);
    /// The operation is not supported (-32004).
    pub const UNSUPPORTED_OPERATION: Self = Self(-32004);
    /// A media type of the request is not supported (-32005).
    pub const CONTENT_TYPE_NOT_SUPPORTED: Self = Self(-32005);
    /// The agent's answer is invalid (-32006).
    pub const INVALID_AGENT_RESPONSE: Self = Self(-32006);
    /// No authenticated extended card is configured (-32007).
    pub const AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED: Self = Self(-32007);
    /// v1.0: a `required` extension of the card the request did not declare.
    pub const EXTENSION_SUPPORT_REQUIRED: Self = Self(-32008);
    /// v1.0: the `A2A-Version` asked for is not spoken here.
    pub const VERSION_NOT_SUPPORTED: Self = Self(-32009);
    /// This server's: the request carries no accepted credential (HTTP 401).
    pub const UNAUTHENTICATED: Self = Self(-32040);
    /// This server's: the caller may not do this (HTTP 403).
    pub const PERMISSION_DENIED: Self = Self(-32041);
    /// This server's: the caller holds as much of a bounded resource as one caller
    /// may (open streams, say); it may try again once it holds less (HTTP 429).
    pub const RESOURCE_EXHAUSTED: Self = Self(-32042);

    /// The spec's name for this code, if it is one of the spec's.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "JSONParseError",
            -32600 => "InvalidRequestError",
            -32601 => "MethodNotFoundError",
            -32602 => "InvalidParamsError",
            -32603 => "InternalError",
            -32001 => "TaskNotFoundError",
            -32002 => "TaskNotCancelableError",
            -32003 => "PushNotificationNotSupportedError",
            -32004 => "UnsupportedOperationError",
            -32005 => "ContentTypeNotSupportedError",
            -32006 => "InvalidAgentResponseError",
            -32007 => "AuthenticatedExtendedCardNotConfiguredError",
            -32008 => "ExtensionSupportRequiredError",
            -32009 => "VersionNotSupportedError",
            _ => return None,
        })
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{} ({n})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A JSON-RPC error object: `{"code", "message", "data"?}`; over gRPC and HTTP+JSON the
/// same error in their framing, so its text names no binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("error {code}: {message}")]
pub struct RpcError {
    /// The error's code.
    pub code: ErrorCode,
    /// A short description, for people.
    pub message: String,
    /// Details for programs (`data`), when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// The request field an invalid-params error names: v0.3's `data.field`, or v1.0's
    /// `google.rpc.BadRequest` detail.
    pub fn field(&self) -> Option<&str> {
        let data = self.data.as_ref()?;
        if let Some(field) = data.get("field").and_then(Value::as_str) {
            return Some(field);
        }
        data.as_array()?
            .iter()
            .find_map(|d| d.get("fieldViolations")?.get(0)?.get("field")?.as_str())
    }

    /// An error with `code` and `message` and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700: the body is not JSON.
    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("invalid JSON: {detail}"))
    }

    /// -32600: valid JSON, but not a JSON-RPC 2.0 request.
    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, detail)
    }

    /// -32601.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method:?}"),
        )
        .with_data(json!({ "method": method }))
    }

    /// -32602, naming the offending field (a dotted path such as `message.parts[0]`).
    pub fn invalid_params(field: &str, detail: impl std::fmt::Display) -> Self {
        let message = if field.is_empty() || field == "." {
            format!("invalid params: {detail}")
        } else {
            format!("invalid params: {field}: {detail}")
        };
        Self::new(ErrorCode::INVALID_PARAMS, message).with_data(json!({ "field": field }))
    }

    /// -32603. The detail is for logs; callers should not put internals in it.
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, detail)
    }

    /// -32001.
    pub fn task_not_found(task_id: &str) -> Self {
        Self::new(
            ErrorCode::TASK_NOT_FOUND,
            format!("task not found: {task_id}"),
        )
        .with_data(json!({ "taskId": task_id }))
    }

    /// -32002.
    pub fn task_not_cancelable(task_id: &str, state: &str) -> Self {
        Self::new(
            ErrorCode::TASK_NOT_CANCELABLE,
            format!("task {task_id} cannot be canceled: it is {state}"),
        )
        .with_data(json!({ "taskId": task_id, "state": state }))
    }

    /// -32003.
    pub fn push_notification_not_supported() -> Self {
        Self::new(
            ErrorCode::PUSH_NOTIFICATION_NOT_SUPPORTED,
            "push notifications are not supported by this agent (capabilities.pushNotifications is not true)",
        )
    }

    /// -32004.
    pub fn unsupported_operation(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::UNSUPPORTED_OPERATION, detail)
    }

    /// -32005.
    pub fn content_type_not_supported(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::CONTENT_TYPE_NOT_SUPPORTED, detail)
    }

    /// -32006.
    pub fn invalid_agent_response(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_AGENT_RESPONSE, detail)
    }

    /// -32007.
    pub fn extended_card_not_configured() -> Self {
        Self::new(
            ErrorCode::AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED,
            "this agent has no authenticated extended card",
        )
    }

    /// -32008 (v1.0): the card requires extensions the request did not declare.
    pub fn extension_support_required(missing: &[String]) -> Self {
        Self::new(
            ErrorCode::EXTENSION_SUPPORT_REQUIRED,
            format!(
                "this agent requires the extension(s) {}: declare them in the A2A-Extensions header",
                missing.join(", ")
            ),
        )
        .with_data(json!({ "extensions": missing.join(",") }))
    }

    /// -32009 (v1.0): the `A2A-Version` asked for is not spoken here.
    pub fn version_not_supported(asked: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::VERSION_NOT_SUPPORTED,
            format!(
                "A2A version {asked:?} is not supported here; this agent speaks {}",
                supported.join(" and ")
            ),
        )
        .with_data(json!({ "requestedVersion": asked, "supportedVersions": supported.join(",") }))
    }

    /// -32041 (this server's, HTTP 403): the caller may not do what it asked; `detail`
    /// says who may, never anything of a resource the caller cannot see.
    pub fn permission_denied(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::PERMISSION_DENIED, detail)
    }

    /// -32042 (this server's, HTTP 429): the caller holds as much of something bounded
    /// as one caller may; `detail` says what and how much.
    pub fn resource_exhausted(detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::RESOURCE_EXHAUSTED, detail)
    }
}

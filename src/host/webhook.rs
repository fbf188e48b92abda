//! Webhooks that start runs: `POST /webhooks/<path>`, signed as the Standard Webhooks
//! specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256
//! over `id.timestamp.body` with the `whsec_` secret, five minutes' tolerance). A request
//! that is signed, in time and within bounds starts a run of the workflow whose
//! `[webhook]` has that path — its inputs rendered from the JSON body, started as the
//! principal the webhook names — and is answered 202 with the run's id and where to see
//! it. The run's first message is named after the webhook's id, so a delivery sent again
//! gets the run the first one started (the server's message idempotency), never a
//! second. Anything else is refused with the reason and nothing is started.

use std::sync::Arc;

use a2a::server::Principal;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::Orchestrator;
use super::starter::{NotStarted, Starter, principal_problem};

/// Most seconds a delivery's timestamp may be from now, either way.
pub const TOLERANCE_SECS: i64 = 5 * 60;
/// Most bytes of a delivery's body.
pub const MAX_BODY: usize = 1 << 20;
/// Most bytes of its id.
const MAX_ID: usize = 256;

/// What the webhooks need: the workflows (as loaded now), what starts their runs, and
/// where runs are seen.
#[derive(Clone)]
pub struct Webhooks {
    pub orchestrator: Orchestrator,
    pub starter: Starter,
    pub url: String,
}

/// Why a delivery was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "the request lacks the `{0}` header (Standard Webhooks signs `webhook-id`, `webhook-timestamp` and `webhook-signature`)"
    )]
    Missing(&'static str),
    #[error("the `{0}` header is not valid: {1}")]
    Invalid(&'static str, &'static str),
    #[error("the timestamp is {0} seconds from now; at most {TOLERANCE_SECS} are allowed")]
    Expired(i64),
    #[error(
        "no signature matches the body (is it signed with this webhook's secret, over `id.timestamp.body`?)"
    )]
    Signature,
}

/// A webhook secret as the specification gives it: `whsec_` and the key in base64.
pub fn secret_key(secret: &str) -> Result<Vec<u8>, String> {
    let b64 = secret
        .strip_prefix("whsec_")
        .ok_or("a Standard Webhooks secret starts with `whsec_`")?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        // Not the decoder's words: they quote the offending byte, a piece of the secret.
        .map_err(|_| "its key is not base64".to_owned())?;
    if key.len() < 16 {
        return Err(format!(
            "its key is {} bytes; at least 16 are needed",
            key.len()
        ));
    }
    Ok(key)
}

/// `v1,` and the signature of a delivery: HMAC-SHA256 of `id.timestamp.body`, base64.
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(id.as_bytes());
    ctx.update(b".");
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    let tag = ctx.sign();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

/// Checks a delivery's headers and body against `key` at `now` (Unix seconds): its id.
pub fn verify<'h>(
    key: &[u8],
    headers: &'h HeaderMap,
    body: &[u8],
    now: i64,
) -> Result<&'h str, Refused> {
    let get = |name: &'static str| -> Result<&'h str, Refused> {
        headers
            .get(name)
            .ok_or(Refused::Missing(name))?
            .to_str()
            .map_err(|_| Refused::Invalid(name, "not visible ASCII"))
    };
    let id = get("webhook-id")?;
    if id.is_empty() || id.len() > MAX_ID {
        return Err(Refused::Invalid(
            "webhook-id",
            "empty, or longer than 256 bytes",
        ));
    }
    let timestamp: i64 = get("webhook-timestamp")?
        .parse()
        .map_err(|_| Refused::Invalid("webhook-timestamp", "not whole seconds since 1970"))?;
    let signatures = get("webhook-signature")?;
    let off = timestamp.saturating_sub(now);
    if off.abs() > TOLERANCE_SECS {
        return Err(Refused::Expired(off));
    }
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let mut signed = format!("{id}.{timestamp}.").into_bytes();
    signed.extend_from_slice(body);
    // Each `v1` signature given, checked in constant time (ring's).
    let matches = signatures
        .split(' ')
        .filter_map(|s| s.split_once(','))
        .filter(|(version, _)| *version == "v1")
        .filter_map(|(_, sig)| base64::engine::general_purpose::STANDARD.decode(sig).ok())
        .any(|tag| ring::hmac::verify(&key, &signed, &tag).is_ok());
    if !matches {
        return Err(Refused::Signature);
    }
    Ok(id)
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn refused(status: StatusCode, why: impl std::fmt::Display) -> Response {
    answer(status, json!({ "error": why.to_string() }))
}

/// `POST /webhooks/<path>`.
pub async fn deliver(
    State(hooks): State<Arc<Webhooks>>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(workflow) = (hooks.orchestrator.workflows().iter())
        .find(|w| w.webhook.as_ref().is_some_and(|h| h.path == path))
        .cloned()
    else {
        return refused(
            StatusCode::NOT_FOUND,
            format!("no webhook at /webhooks/{path}"),
        );
    };
    let Some(hook) = workflow.webhook.as_deref() else {
        return refused(StatusCode::NOT_FOUND, "no webhook");
    };
    if body.len() > MAX_BODY {
        return refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the body is {} bytes; at most {MAX_BODY} are taken",
                body.len()
            ),
        );
    }
    let key = match std::env::var(&hook.secret_env)
        .map_err(|e| e.to_string())
        .and_then(|s| secret_key(&s))
    {
        Ok(k) => k,
        Err(why) => {
            tracing::warn!(workflow = %workflow.id, variable = %hook.secret_env, "a delivery to a webhook that is off was refused: {why}");
            return refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "this webhook is off: the server has no secret for it",
            );
        }
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let id = match verify(&key, &headers, &body, now) {
        Ok(id) => id.to_owned(),
        Err(why) => {
            tracing::warn!(workflow = %workflow.id, path = %path, "a webhook delivery was refused: {why}");
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Signature realm=\"webhooks\"")],
                axum::Json(json!({ "error": why.to_string() })),
            )
                .into_response();
        }
    };
    let json: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return refused(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            );
        }
    };
    let input = match &hook.input {
        Some(t) => match workflow.templates.render_data(t, &json!({ "body": json })) {
            Ok(Value::Object(m)) => m,
            Ok(_) => Map::new(),
            Err(e) => return refused(StatusCode::BAD_REQUEST, format!("the webhook's input: {e}")),
        },
        None => Map::new(),
    };
    let started = async {
        let itself = format!("webhook:{}", hook.path);
        let named = format!("webhook /webhooks/{}", hook.path);
        let caller = (hooks.starter).caller(hook.as_principal.as_deref(), (&itself, &named))?;
        let message_id = format!("webhook:{}:{id}", workflow.id);
        (hooks.starter)
            .start(&caller, workflow.id.as_str(), message_id, input)
            .await
    };
    match started.await {
        Ok(task) => {
            let url = format!("{}ui/#/run/{}", hooks.url, task.id);
            (
                StatusCode::ACCEPTED,
                [(header::LOCATION, url.clone())],
                axum::Json(json!({ "run": task.id, "state": task.state().as_str(), "url": url })),
            )
                .into_response()
        }
        Err(e @ (NotStarted::Stopping | NotStarted::Principal(_))) => {
            refused(StatusCode::SERVICE_UNAVAILABLE, format!("the webhook: {e}"))
        }
        Err(e @ NotStarted::NoRun(_)) => refused(StatusCode::UNPROCESSABLE_ENTITY, e),
        Err(NotStarted::Refused(e)) => {
            let status = match e.code {
                a2a::ErrorCode::INVALID_PARAMS => StatusCode::BAD_REQUEST,
                a2a::ErrorCode::PERMISSION_DENIED | a2a::ErrorCode::UNAUTHENTICATED => {
                    StatusCode::FORBIDDEN
                }
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            refused(status, e.message)
        }
    }
}

/// The webhooks of `workflows` that are off, each with what turns it on: a webhook whose
/// secret's variable is not set answers every delivery 503 and starts nothing. So a
/// shared workflow file can declare one that each deployment turns on with its secret.
pub fn off(workflows: &[Arc<orchestrator_core::workflow::Workflow>]) -> Vec<String> {
    (workflows.iter())
        .filter_map(|w| Some((w, w.webhook.as_deref()?)))
        .filter(|(_, h)| std::env::var_os(&h.secret_env).is_none())
        .map(|(w, h)| {
            format!(
                "{}: the webhook /webhooks/{} is off: set {} (a Standard Webhooks secret, `whsec_…`) to turn it on",
                w.file, h.path, h.secret_env
            )
        })
        .collect()
}

/// What keeps the webhooks of `workflows` from working on a server whose named
/// principals are `principals`: a secret that is set but is not a Standard Webhooks
/// one; for one that is on, who it starts runs as (see `principal_problem`); two
/// webhooks on one path.
pub fn problems(
    workflows: &[Arc<orchestrator_core::workflow::Workflow>],
    principals: &[Arc<Principal>],
    guarded: bool,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut paths: Vec<(&str, &str)> = Vec::new();
    for w in workflows {
        let Some(h) = w.webhook.as_deref() else {
            continue;
        };
        let at = w.file.clone();
        if let Some((_, other)) = paths.iter().find(|(p, _)| *p == h.path) {
            out.push((
                at.clone(),
                format!(
                    "[webhook] path `{}` is also workflow `{other}`'s webhook",
                    h.path
                ),
            ));
        }
        paths.push((&h.path, w.id.as_str()));
        match std::env::var(&h.secret_env) {
            // Off (see `off`): who it would start runs as is checked when it is on.
            Err(std::env::VarError::NotPresent) => continue,
            Err(std::env::VarError::NotUnicode(_)) => {
                out.push((at.clone(), format!("[webhook]: {} (its `secret_env`) is not a Standard Webhooks secret: it is not UTF-8", h.secret_env)));
            }
            Ok(s) => {
                if let Err(why) = secret_key(&s) {
                    out.push((at.clone(), format!("[webhook]: {} (its `secret_env`) is not a Standard Webhooks secret: {why}", h.secret_env)));
                }
            }
        }
        if let Some(problem) = principal_problem(
            "[webhook]",
            h.as_principal.as_deref(),
            principals,
            guarded,
            !w.allow.is_empty(),
        ) {
            out.push((at.clone(), problem));
        }
    }
    out
}

/// The webhooks' route, `POST /webhooks/{*path}`.
pub fn router(hooks: Arc<Webhooks>) -> axum::Router {
    axum::Router::new()
        .route("/webhooks/{*path}", axum::routing::post(deliver))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY + 1))
        .with_state(hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The specification's own example (its Rust library's `test_sign`).
    #[test]
    fn a_delivery_is_signed_as_the_specification_signs_it() {
        let key = secret_key("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD").unwrap();
        let body = br#"{"email":"test@example.com","username":"test_user"}"#;
        let signature = sign(&key, "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk", 1649367553, body);
        assert_eq!(signature, "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=");
        let mut headers = HeaderMap::new();
        headers.insert(
            "webhook-id",
            "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk".parse().unwrap(),
        );
        headers.insert("webhook-timestamp", "1649367553".parse().unwrap());
        headers.insert(
            "webhook-signature",
            format!("v1,bm9wZQ== {signature}").parse().unwrap(),
        );
        assert_eq!(
            verify(&key, &headers, body, 1649367553 + 60),
            Ok("msg_27UH4WbU6Z5A5EzD8u03UvzRbpk")
        );
        assert_eq!(
            verify(&key, &headers, b"{}", 1649367553),
            Err(Refused::Signature)
        );
        assert_eq!(
            verify(&key, &headers, body, 1649367553 + 301),
            Err(Refused::Expired(-301))
        );
        headers.remove("webhook-timestamp");
        assert_eq!(
            verify(&key, &headers, body, 1649367553),
            Err(Refused::Missing("webhook-timestamp"))
        );
        assert!(secret_key("C2FVsBQIhrscChlQIMV+b5sSYspob7oD").is_err());
    }
}

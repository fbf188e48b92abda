//! The web view at `/ui/`: static files compiled into the binary (no front-end build
//! step, no third-party code: `ui/*.js` are plain JavaScript modules), served beside the
//! A2A endpoints. The
//! page is an A2A client like any other — the agent card, then A2A 1.0 JSON-RPC with
//! the caller's token — so it reads and steers exactly what a client with that token
//! may, and the files themselves say nothing a card does not.
//!
//! With `[auth.oidc] ui_client_id`, `/ui/config.json` tells the page where to sign in
//! (the issuer and the client id; the authorization-code flow with PKCE), and the page's
//! policy lets it reach that issuer and nothing else; without it the page takes a
//! pasted token.

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

const INDEX: &str = include_str!("ui/index.html");
const STYLE: &str = include_str!("ui/style.css");
/// The page's modules: `app.js` imports the others.
const SCRIPTS: [(&str, &str); 5] = [
    ("app.js", include_str!("ui/app.js")),
    ("dom.js", include_str!("ui/dom.js")),
    ("markdown.js", include_str!("ui/markdown.js")),
    ("forms.js", include_str!("ui/forms.js")),
    ("graph.js", include_str!("ui/graph.js")),
];

/// The page may load only its own files and talk only to its own origin (and, to sign
/// in, to its identity provider's).
fn policy(sign_in: Option<&SignIn>) -> String {
    let connect = sign_in
        .and_then(|s| url::Url::parse(&s.issuer).ok())
        .map(|u| format!(" {}", u.origin().ascii_serialization()))
        .unwrap_or_default();
    format!(
        "default-src 'self'; connect-src 'self'{connect}; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )
}

pub use crate::auth::SignIn;

fn asset(body: &str, content_type: &'static str, policy: &str) -> Response {
    let mut r = body.to_owned().into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(policy) = HeaderValue::from_str(policy) {
        h.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// `/ui/` and its files; `/ui` redirects to `/ui/`. With `sign_in`, the page signs its
/// users in there.
pub fn router(sign_in: Option<SignIn>) -> Router {
    let policy: Arc<str> = policy(sign_in.as_ref()).into();
    let config = match &sign_in {
        Some(s) => serde_json::json!({
            "oidc": { "issuer": s.issuer, "clientId": s.client_id, "scope": s.scope }
        }),
        None => serde_json::json!({}),
    };
    let config: Arc<str> = config.to_string().into();
    let file = |body: Arc<str>, content_type: &'static str| {
        let policy = policy.clone();
        get(move || {
            let (body, policy) = (body.clone(), policy.clone());
            async move { asset(&body, content_type, &policy) }
        })
    };
    let mut router = Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", file(INDEX.into(), "text/html; charset=utf-8"))
        .route(
            "/ui/style.css",
            file(STYLE.into(), "text/css; charset=utf-8"),
        )
        .route("/ui/config.json", file(config, "application/json"));
    for (name, body) in SCRIPTS {
        router = router.route(
            &format!("/ui/{name}"),
            file(body.into(), "text/javascript; charset=utf-8"),
        );
    }
    router
}

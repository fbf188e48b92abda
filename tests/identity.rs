//! Issue 35: who is calling. A real OpenID Provider (panva's oidc-provider, OpenID
//! Certified, `tests/js/idp.mjs`) issues the tokens; the orchestrator checks them
//! against the keys the provider publishes, names each caller, and keeps every caller
//! to its own runs unless a role grants more.

use std::sync::Arc;

use a2a::client::{A2aClient, ClientAuth, ClientConfig, ClientError, ListTasksQuery};
use a2a::server::InboundAuth;
use a2a::types::{Message, MessageSendParams, TaskIdParams, TaskQueryParams, TaskState};
use a2a_orchestrator::auth::oidc::{OidcSettings, OidcVerifier};
use a2a_orchestrator::auth::{Pattern, RoleRules};
use serde_json::{Value, json};

use crate::util::orchestra::{APPROVE, orchestra_with, task};
use crate::util::{SdkAgent, idp};

const AUDIENCE: &str = "a2a-orchestrator";

fn issuer(idp: &SdkAgent) -> String {
    idp.url.trim_end_matches('/').to_owned()
}

/// An access token the provider issues to `client` (client credentials) for
/// `resource`.
async fn token_for(idp: &SdkAgent, client: &str, resource: &str) -> String {
    let response = reqwest::Client::new()
        .post(format!("{}token", idp.url))
        .basic_auth(client, Some(format!("{client}-secret")))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", "a2a"),
            ("resource", resource),
        ])
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert!(status.is_success(), "the provider refused {client}: {body}");
    body["access_token"].as_str().unwrap().to_owned()
}

async fn token(idp: &SdkAgent, client: &str) -> String {
    token_for(idp, client, "urn:a2a:orchestrator").await
}

/// A token no provider would issue (see `idp.mjs`).
async fn forged(idp: &SdkAgent, kind: &str) -> String {
    reqwest::get(format!("{}_test/forge?kind={kind}", idp.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn verifier(idp: &SdkAgent) -> InboundAuth {
    let settings = OidcSettings {
        issuer: issuer(idp),
        audience: AUDIENCE.into(),
        roles_claim: "groups".into(),
        name_claim: None,
        ca_file: None,
        ui_client_id: None,
        rules: RoleRules {
            grants: vec![("operator".into(), vec![Pattern::Group("sre".into())])],
        },
    };
    InboundAuth {
        tokens: Some(Arc::new(OidcVerifier::new(settings).unwrap())),
        ..InboundAuth::default()
    }
}

async fn as_bearer(url: &str, token: &str) -> A2aClient {
    let config = ClientConfig {
        auth: Some(ClientAuth::Bearer(token.to_owned())),
        ..ClientConfig::default()
    };
    A2aClient::connect(url, config).await.unwrap().0
}

/// A JSON-RPC call with `token`: (status, WWW-Authenticate, body).
async fn call(url: &str, token: Option<&str>) -> (u16, String, Value) {
    let mut request = reqwest::Client::new().post(url).json(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "nothing" }
    }));
    request = request.header("A2A-Version", "1.0");
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        status,
        challenge,
        response.json().await.unwrap_or(Value::Null),
    )
}

#[cfg_attr(
    not(feature = "full-suite"),
    ignore = "needs Node and oidc-provider: the full suite, `cargo xtask test`"
)]
#[tokio::test(flavor = "multi_thread")]
async fn provider_tokens_are_checked_and_name_their_caller() {
    let idp = idp().await;
    let auth = verifier(&idp);
    let o = orchestra_with(&[APPROVE], 0, |c| c.server.auth = Some(auth)).await;

    // The card says how to authenticate: the provider's discovery document.
    let card: Value = reqwest::get(format!("{}.well-known/agent-card.json", o.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"]
            .as_str()
            .or(card["securitySchemes"]["oidc"]["openIdConnectUrl"].as_str()),
        Some(format!("{}/.well-known/openid-configuration", issuer(&idp)).as_str()),
        "{card:#}"
    );

    eprintln!("SCHEMES {}", card["securitySchemes"]);
    // No token: a challenge without an error (RFC 6750 §3.1).
    let (status, challenge, _) = call(&o.url, None).await;
    assert_eq!((status, challenge.as_str()), (401, "Bearer realm=\"a2a\""));

    // Tokens the provider would not issue, or not for us: 401 saying which check failed.
    let other_audience = token_for(&idp, "alice", "urn:a2a:other").await;
    let refusals = [
        ("expired", forged(&idp, "expired").await, "expired"),
        (
            "wrong issuer",
            forged(&idp, "wrong-issuer").await,
            "not issued by",
        ),
        ("alg none", forged(&idp, "none").await, "unsigned"),
        (
            "HS256 with the public key",
            forged(&idp, "hs256").await,
            "HS256",
        ),
        (
            "tampered",
            forged(&idp, "tampered").await,
            "signature does not verify",
        ),
        ("another audience", other_audience, "not for this server"),
        (
            "not a JWT",
            "opaque-token".to_owned(),
            "not a signed JSON Web Token",
        ),
    ];
    for (what, token, why) in refusals {
        let (status, challenge, body) = call(&o.url, Some(&token)).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            challenge
                .starts_with("Bearer realm=\"a2a\", error=\"invalid_token\", error_description=\"")
                && challenge.contains(why),
            "{what}: {challenge}"
        );
        assert_eq!(body["error"]["code"], -32040, "{what}: {body}");
    }
    // A token the provider's own key signed, as the provider would: accepted.
    let (status, _, body) = call(&o.url, Some(&forged(&idp, "valid").await)).await;
    assert_eq!(status, 200, "{body}");

    // Alice starts a run; it waits for an approval.
    let alice = as_bearer(&o.url, &token(&idp, "alice").await).await;
    let mut m = Message::user_text("echo please");
    m.metadata = Some(
        json!({ "workflow": "approve" })
            .as_object()
            .unwrap()
            .clone(),
    );
    let run = task(
        alice
            .send_message(&MessageSendParams::new(m))
            .await
            .unwrap(),
    );
    assert_eq!(run.status.state, TaskState::InputRequired);
    let get = TaskQueryParams::new(run.id.clone());

    // Bob is told nothing of it; Olga (group sre: an operator) sees and steers it.
    let bob = as_bearer(&o.url, &token(&idp, "bob").await).await;
    match bob.get_task(&get).await {
        Err(ClientError::Rpc(e)) => assert_eq!(e.code, a2a::ErrorCode::TASK_NOT_FOUND),
        other => panic!("bob got {other:?}"),
    }
    let listed = bob.list_tasks(&ListTasksQuery::default()).await.unwrap();
    assert!(listed.tasks.is_empty(), "{listed:?}");
    let olga = as_bearer(&o.url, &token(&idp, "olga").await).await;
    assert_eq!(olga.get_task(&get).await.unwrap().id, run.id);
    let listed = alice.list_tasks(&ListTasksQuery::default()).await.unwrap();
    assert_eq!(listed.tasks.len(), 1);

    // The provider rotates its signing key: tokens signed with the new one are
    // accepted without a restart, and the old key's tokens still are while it is
    // published.
    let rotated: Value = reqwest::Client::new()
        .post(format!("{}_test/rotate", idp.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let fresh = token(&idp, "olga").await;
    let kid = jsonwebtoken::decode_header(&fresh).unwrap().kid;
    assert_eq!(
        kid.as_deref(),
        rotated["kid"].as_str(),
        "signed with the new key"
    );
    let olga = as_bearer(&o.url, &fresh).await;
    let canceled = olga
        .cancel_task(&TaskIdParams::new(run.id.clone()))
        .await
        .unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
}

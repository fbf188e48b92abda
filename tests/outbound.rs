//! Issue 36: calling agents that want a token. A downstream agent (the echo example,
//! behind our own OpenID Connect verifier, its card declaring an `oauth2`
//! client-credentials scheme at the real provider of `tests/js/idp.mjs`) is called by
//! `serve` with a token it fetches from that provider for the agent's audience.

use std::sync::Arc;

use a2a::server::{A2aServer, InboundAuth, ServerConfig};
use a2a::types::{
    ClientCredentialsOAuthFlow, Message, MessageSendParams, OAuth2SecurityScheme, OAuthFlows,
    SecurityScheme, TaskState,
};
use a2a_orchestrator::auth::RoleRules;
use a2a_orchestrator::auth::oidc::{OidcSettings, OidcVerifier};
use serde_json::json;

use crate::util::idp;
use crate::util::orchestra::{client, result_text, spawn_serve, task};

/// The echo agent, taking only tokens for `hr-agent` from the provider, its card
/// declaring where to get them.
async fn guarded_agent(issuer: &str) -> String {
    let verifier = OidcVerifier::new(OidcSettings {
        issuer: issuer.to_owned(),
        audience: "hr-agent".into(),
        roles_claim: "groups".into(),
        name_claim: None,
        tenant_claim: None,
        ca_file: None,
        ui_client_id: None,
        rules: RoleRules::default(),
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let mut card = crate::echo_agent::echo_card(&url);
    card.security_schemes = Some(
        [(
            "oauth".to_owned(),
            SecurityScheme::OAuth2(Box::new(OAuth2SecurityScheme {
                flows: OAuthFlows {
                    client_credentials: Some(ClientCredentialsOAuthFlow {
                        token_url: format!("{issuer}/token"),
                        scopes: [("a2a".to_owned(), "call the agent".to_owned())].into(),
                        refresh_url: None,
                    }),
                    ..OAuthFlows::default()
                },
                oauth2_metadata_url: None,
                description: None,
            })),
        )]
        .into(),
    );
    card.security = Some(vec![[("oauth".to_owned(), vec!["a2a".to_owned()])].into()]);
    let config = ServerConfig {
        auth: Some(InboundAuth {
            tokens: Some(Arc::new(verifier)),
            ..InboundAuth::default()
        }),
        ..ServerConfig::default()
    };
    let agent = crate::echo_agent::EchoAgent {
        word_delay: std::time::Duration::ZERO,
    };
    let server = A2aServer::builder(agent, card).config(config).build();
    tokio::spawn(server.serve(listener, std::future::pending()));
    url
}

const ECHO: &str = r#"
[workflow]
id = "echo"
description = "Asks the guarded agent to echo"
[steps.say]
agent = "hr"
message = "hello from the orchestrator"
[output]
text = "{{ steps.say.text }}"
"#;

#[cfg_attr(
    not(feature = "full-suite"),
    ignore = "needs Node and oidc-provider: the full suite, `cargo xtask test`"
)]
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_is_called_with_client_credentials_from_its_card() {
    let idp = idp().await;
    let issuer = idp.url.trim_end_matches('/').to_owned();
    let agent = guarded_agent(&issuer).await;
    // Without a token the agent refuses.
    let refused = reqwest::Client::new()
        .post(&agent)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("outbound-oauth");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/echo.toml"), ECHO).unwrap();
    // The token URL and scopes come from the card; the resource names the agent.
    std::fs::write(
        dir.join("agents.toml"),
        format!(
            "[agents.hr]\nurl = \"{agent}\"\nauth = {{ type = \"oauth2_client_credentials\", client_id_env = \"OUT_ID\", client_secret_env = \"OUT_SECRET\", resource = \"urn:a2a:hr\" }}\n"
        ),
    )
    .unwrap();
    let run = |secret: &'static str| {
        let dir = dir.clone();
        async move {
            let (child, url) = spawn_serve(
                &[
                    "--listen",
                    "127.0.0.1:0",
                    "--workflows",
                    dir.join("workflows").to_str().unwrap(),
                    "--agents",
                    dir.join("agents.toml").to_str().unwrap(),
                ],
                &[("OUT_ID", "orchestrator"), ("OUT_SECRET", secret)],
            )
            .await;
            let (c, _) = client(&url).await;
            let mut m = Message::user_text("echo");
            m.metadata = Some(json!({ "workflow": "echo" }).as_object().unwrap().clone());
            let t = task(c.send_message(&MessageSendParams::new(m)).await.unwrap());
            (child, t)
        }
    };
    let (_serve, done) = run("orchestrator-secret").await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    assert_eq!(result_text(&done), "hello from the orchestrator");

    // `agents` says how the agent is called.
    let listed = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args([
            "agents",
            "--agents",
            dir.join("agents.toml").to_str().unwrap(),
        ])
        .env("OUT_ID", "orchestrator")
        .env("OUT_SECRET", "orchestrator-secret")
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&listed.stdout);
    assert!(
        said.contains("authenticated with OAuth2 client credentials as `orchestrator`"),
        "{said}"
    );

    // A client the provider refuses: the step fails naming the provider's error.
    let (_serve, failed) = run("not-the-secret").await;
    assert_eq!(failed.status.state, TaskState::Failed, "{failed:?}");
    let said = serde_json::to_string(&failed).unwrap();
    assert!(said.contains("invalid_client"), "{said}");
}

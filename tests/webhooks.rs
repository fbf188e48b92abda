//! Issue 78: webhooks that start runs. `serve` takes `POST /webhooks/<path>` signed as
//! the Standard Webhooks specification says (a signer of our own here, checked against
//! the specification's example); a delivery sent again gets the run the first started;
//! unsigned, expired, tampered, oversized and unknown deliveries are refused, saying why,
//! and start nothing; a webhook whose secret is not set keeps `serve` from starting.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::util::orchestra::{ServeDir, spawn_serve};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// `v1,` and the HMAC-SHA256 of `id.timestamp.body` under the secret's key, base64.
fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
    let mut signed = format!("{id}.{timestamp}.").into_bytes();
    signed.extend_from_slice(body);
    let tag = ring::hmac::sign(&key, &signed);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

#[test]
fn the_signer_signs_as_the_specification_does() {
    assert_eq!(
        sign(
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
            1649367553,
            br#"{"email":"test@example.com","username":"test_user"}"#
        ),
        "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
    );
}

const HIRE: &str = r#"
[workflow]
id = "new-hire"
name = "New hire"
description = "Greets a new hire the HR system announces"

[input]
name = { type = "string", required = true }
role = { type = "string", default = "engineer" }

[steps.greet]
agent = "one"
message = "welcome {{ input.name }}, {{ input.role }}"

[webhook]
path = "hr/new-hire"
secret_env = "HIRE_SECRET"
input = { name = "{{ body.person.name }}", role = "{{ body.person.role }}" }
"#;

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

struct Delivery<'a> {
    id: &'a str,
    timestamp: i64,
    body: String,
    signature: Option<String>,
}

impl Delivery<'_> {
    fn signed(id: &str, body: Value) -> Delivery<'_> {
        let body = body.to_string();
        let timestamp = now();
        Delivery {
            id,
            timestamp,
            signature: Some(sign(SECRET, id, timestamp, body.as_bytes())),
            body,
        }
    }

    async fn post(&self, url: &str, path: &str) -> (u16, Value) {
        let mut r = a2a::https::reqwest_client_builder()
            .build()
            .unwrap()
            .post(format!("{url}webhooks/{path}"))
            .header("content-type", "application/json")
            .header("webhook-id", self.id)
            .header("webhook-timestamp", self.timestamp.to_string())
            .body(self.body.clone());
        if let Some(s) = &self.signature {
            r = r.header("webhook-signature", s);
        }
        let answer = r.send().await.unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    }
}

/// `serve` with the webhook's workflow, its secret set.
async fn served(dir: &str) -> (tokio::process::Child, String, crate::util::Running) {
    let one = crate::util::echo(0).await;
    let dir = ServeDir::new(dir, &[("hire.toml", HIRE)], &[("one", &one.url)]);
    let args = dir.args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (child, url) = spawn_serve(&args, &[("HIRE_SECRET", SECRET)]).await;
    (child, url, one)
}

/// The run `id` as the server holds it, once it ended.
async fn ended(url: &str, id: &str) -> a2a::types::Task {
    let (c, _) = crate::util::orchestra::client(url).await;
    for _ in 0..400 {
        let t = c
            .get_task(&a2a::types::GetTaskRequest::new(id))
            .await
            .unwrap();
        if t.status().state().is_terminal() {
            return t;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("run {id} did not end");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_delivery_starts_one_run_and_anything_else_is_refused() {
    let (_serve, url, _one) = served("webhooks").await;
    let body = json!({ "person": { "name": "Ada", "role": "designer" } });

    let first = Delivery::signed("msg_1", body.clone());
    let (status, answer) = first.post(&url, "hr/new-hire").await;
    assert_eq!(status, 202, "{answer}");
    let run = answer["run"].as_str().unwrap().to_owned();
    assert_eq!(answer["url"], format!("{url}ui/#/run/{run}"));
    let done = ended(&url, &run).await;
    let detail = done.metadata.clone().unwrap().into_map()["run"].clone();
    assert_eq!(detail["state"], "completed", "{detail:#}");
    assert_eq!(
        detail["inputs"],
        json!({ "name": "Ada", "role": "designer" })
    );

    // Sent again (signed anew, a moment later): the same run, not a second one.
    let again = Delivery::signed("msg_1", body.clone());
    let (status, answer) = again.post(&url, "hr/new-hire").await;
    assert_eq!(
        (status, answer["run"].as_str()),
        (202, Some(run.as_str())),
        "{answer}"
    );
    let (c, _) = crate::util::orchestra::client(&url).await;
    let listed = c
        .list_tasks(&a2a::types::ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.tasks.len(), 1, "{listed:?}");

    // Refused, saying why; nothing started.
    let mut expired = Delivery::signed("msg_2", body.clone());
    expired.timestamp -= 301;
    expired.signature = Some(sign(
        SECRET,
        "msg_2",
        expired.timestamp,
        expired.body.as_bytes(),
    ));
    let (status, answer) = expired.post(&url, "hr/new-hire").await;
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("seconds from now"),
        "{answer}"
    );

    let mut tampered = Delivery::signed("msg_3", body.clone());
    tampered.body = json!({ "person": { "name": "Mallory" } }).to_string();
    let (status, answer) = tampered.post(&url, "hr/new-hire").await;
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .starts_with("no signature matches"),
        "{answer}"
    );

    let mut unsigned = Delivery::signed("msg_4", body.clone());
    unsigned.signature = None;
    let (status, answer) = unsigned.post(&url, "hr/new-hire").await;
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("`webhook-signature`"),
        "{answer}"
    );

    let wrong_key = Delivery {
        signature: Some(sign(
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            "msg_5",
            now(),
            body.to_string().as_bytes(),
        )),
        ..Delivery::signed("msg_5", body.clone())
    };
    assert_eq!(wrong_key.post(&url, "hr/new-hire").await.0, 401);

    let (status, _) = Delivery::signed("msg_6", body.clone())
        .post(&url, "hr/old-hire")
        .await;
    assert_eq!(status, 404);

    let huge = Delivery::signed(
        "msg_7",
        json!({ "person": { "name": "x".repeat(2 << 20) } }),
    );
    assert_eq!(huge.post(&url, "hr/new-hire").await.0, 413);

    let not_json = Delivery {
        body: "name=Ada".into(),
        signature: Some(sign(SECRET, "msg_8", now(), b"name=Ada")),
        ..Delivery::signed("msg_8", body.clone())
    };
    let (status, answer) = not_json.post(&url, "hr/new-hire").await;
    assert_eq!(status, 400, "{answer}");

    let listed = c
        .list_tasks(&a2a::types::ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.tasks.len(), 1, "nothing else started: {listed:?}");
}

/// A webhook whose secret is not set is off: `serve` starts, says so, and answers a
/// delivery 503, starting nothing. One whose secret is not a Standard Webhooks secret
/// keeps `serve` from starting, naming the variable and not quoting it.
#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_without_its_secret_is_off_and_a_wrong_secret_stops_serve() {
    let dir = ServeDir::new(
        "webhooks-unset",
        &[("hire.toml", HIRE)],
        &[("one", "http://127.0.0.1:9")],
    );
    let args = dir.args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_serve, url) =
        crate::util::orchestra::spawn_serve_logging(&args, &[], dir.log_file(0)).await;
    let (status, answer) = Delivery::signed("msg_1", json!({ "person": { "name": "Ada" } }))
        .post(&url, "hr/new-hire")
        .await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(
        answer["error"],
        "this webhook is off: the server has no secret for it"
    );
    let said = dir.log(0);
    assert!(
        said.contains("hire.toml: the webhook /webhooks/hr/new-hire is off: set HIRE_SECRET"),
        "{said}"
    );
    let (c, _) = crate::util::orchestra::client(&url).await;
    let listed = (c.list_tasks(&a2a::types::ListTasksRequest::default()).await).unwrap();
    assert!(listed.tasks.is_empty(), "{listed:?}");

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-orchestrator"))
        .args(["serve", "--insecure-open", "--store", "memory"])
        .args(&args)
        .env("HIRE_SECRET", "hunter2-not-a-whsec")
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("hire.toml")
            && said.contains("HIRE_SECRET (its `secret_env`) is not a Standard Webhooks secret")
            && !said.contains("hunter2"),
        "{said}"
    );
}

/// The shipped onboarding workflow, started by the HR system's signed webhook over the
/// example agents: its accounts are provisioned by a child run, and it completes.
#[tokio::test(flavor = "multi_thread")]
async fn the_shipped_onboarding_starts_from_a_signed_webhook() {
    use a2a_orchestrator::agents::{Behaviour, Fleet, Set};
    let fleet = Fleet::start(&[Set::Onboarding], Behaviour::default(), "127.0.0.1", true)
        .await
        .unwrap();
    let shipped = |file: &str| {
        std::fs::read_to_string(std::path::Path::new(crate::util::ROOT).join(file)).unwrap()
    };
    let (onboarding, accounts) = (
        shipped("workflows/employee-onboarding.toml"),
        shipped("workflows/provision-accounts.toml"),
    );
    let dir = ServeDir::new(
        "webhooks-onboarding",
        &[
            ("employee-onboarding.toml", &onboarding),
            ("provision-accounts.toml", &accounts),
        ],
        &[],
    );
    std::fs::write(dir.dir.join("agents.toml"), fleet.agents_toml()).unwrap();
    let args = dir.args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_serve, url) = spawn_serve(&args, &[("ONBOARDING_WEBHOOK_SECRET", SECRET)]).await;
    let hire = json!({ "name": "Mary Jackson", "role": "sales", "start_date": "2027-02-01", "remote": true });
    let (status, answer) = Delivery::signed("hr-evt-1", hire)
        .post(&url, "hr/new-hire")
        .await;
    assert_eq!(status, 202, "{answer}");
    let done = ended(&url, answer["run"].as_str().unwrap()).await;
    let detail = done.metadata.clone().unwrap().into_map()["run"].clone();
    assert_eq!(detail["state"], "completed", "{detail:#}");
    assert_eq!(detail["inputs"]["remote"], true, "typed from the body");
    assert_eq!(detail["inputs"]["manager"], "hiring.manager@example.com");
    assert_eq!(detail["children"][0]["step"], "provision_accounts");
    let text = crate::util::orchestra::result_text(&done);
    assert!(text.contains("mailbox: mary.jackson@example.com"), "{text}");
    fleet.shutdown().await;
}

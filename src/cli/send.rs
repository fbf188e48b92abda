//! `send URL TEXT [--stream] [--data JSON] [--task ID] [--context ID] [--metadata JSON]`:
//! a general A2A client for any agent, the orchestrator included. Prints the reply
//! (`SendMessage`), or every event as it arrives, one JSON object per line (A2A 1.0's
//! `StreamResponse`s of `SendStreamingMessage`), or with `--watch` an orchestrator's run
//! drawn live.

use std::process::ExitCode;

use futures::StreamExt;
use serde_json::{Map, Value};

use a2a::client::{A2aClient, ClientAuth, ClientConfig};
use a2a::types::{Message, Part, SendMessageRequest, SendMessageResult, StreamEvent, TaskState};

/// What `send` was asked.
#[derive(Debug, clap::Args)]
pub struct SendArgs {
    /// The agent's base URL (its card is fetched first).
    pub url: String,
    /// The message text.
    pub text: String,
    /// Stream (SendStreamingMessage) instead of SendMessage.
    #[arg(long)]
    pub stream: bool,
    /// Stream and show the orchestrator's run live (its steps, artifacts and result),
    /// asking its questions at the terminal, as `demo` does.
    #[arg(long, conflicts_with = "stream")]
    pub watch: bool,
    /// With --watch: answer every question automatically (without it, and without a
    /// terminal, questions are only shown, with how to answer them).
    #[arg(long, short, requires = "watch")]
    pub yes: bool,
    /// With --watch: answer step STEP's question with VALUE (repeatable).
    #[arg(long = "answer", value_name = "STEP=VALUE", requires = "watch", value_parser = super::progress::parse_answer)]
    pub answers: Vec<(String, String)>,
    /// A JSON object sent as a data part.
    #[arg(long, value_name = "JSON")]
    pub data: Option<String>,
    /// Continue this task (answer its question).
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// The context id of the conversation.
    #[arg(long, value_name = "ID")]
    pub context: Option<String>,
    /// A JSON object sent as the message's metadata (e.g. {"workflow": "travel-planning"}).
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
    /// Send `Authorization: Bearer` with the token in this environment variable.
    #[arg(long, value_name = "VAR", visible_alias = "token-env")]
    pub bearer_token_env: Option<String>,
}

fn object(flag: &str, text: &str) -> anyhow::Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(bad_input!(
            "--{flag} must be a JSON object, not {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        )),
        Err(e) => Err(bad_input!("--{flag} is not valid JSON: {e}")),
    }
}

/// A client's configuration, with `Authorization: Bearer` and the token in the
/// environment variable `bearer_token_env` when one is named.
pub fn client_config(bearer_token_env: Option<&str>) -> anyhow::Result<ClientConfig> {
    let mut config = ClientConfig::default();
    if let Some(var) = bearer_token_env {
        let token = std::env::var(var)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| bad_input!("the environment variable {var} is not set"))?;
        config.auth = Some(ClientAuth::Bearer(token));
    }
    Ok(config)
}

/// The message `send` sends.
pub fn message(args: &SendArgs) -> anyhow::Result<Message> {
    let mut m = Message::user_text(&args.text);
    if let Some(d) = &args.data {
        m.parts.push(Part::data(object("data", d)?));
    }
    if let Some(md) = &args.metadata {
        m.metadata = Some(object("metadata", md)?.into());
    }
    m.task_id = args.task.clone().unwrap_or_default();
    m.context_id = args.context.clone().unwrap_or_default();
    Ok(m)
}

/// Sends the message; exits 0 unless the call fails or the task ends failed.
pub async fn send(args: SendArgs) -> anyhow::Result<ExitCode> {
    let m = message(&args)?;
    let config = client_config(args.bearer_token_env.as_deref())?;
    let (client, _card) = A2aClient::connect(&args.url, config).await?;
    let request = SendMessageRequest::new(m);
    if args.watch {
        let start = super::follow::Start::Send(Box::new(request));
        let asker = super::progress::Asker::watching(args.yes, args.answers.clone());
        let (state, result) = super::follow::drive(&client, &args.url, start, asker).await?;
        return Ok(super::follow::report(state, result.as_ref())?);
    }
    let state = if args.stream {
        let mut events = client.send_message_stream(&request).await?;
        let mut state = None;
        while let Some(event) = events.next().await {
            let event = event?;
            say!("{}", serde_json::to_string(&event)?)?;
            match &event {
                StreamEvent::Message(_) => state = Some(TaskState::Completed),
                other => state = other.state().or(state),
            }
        }
        state
    } else {
        let result = client.send_message(&request).await?;
        say!("{}", serde_json::to_string_pretty(&result)?)?;
        match result {
            SendMessageResult::Task(t) => Some(t.state()),
            SendMessageResult::Message(_) => Some(TaskState::Completed),
        }
    };
    Ok(match state {
        Some(TaskState::Failed | TaskState::Rejected) => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
}

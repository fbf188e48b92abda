//! `runs list|show|watch|answer|approve|reject|cancel`: the runs of an orchestrator
//! that is serving, seen and steered over A2A like any client would (ListTasks, GetTask,
//! a subscription, a message on the task, CancelTask) with the same credentials, so it
//! works across the network. What a run is comes from the [`RunDetail`] the orchestrator
//! keeps in each task's metadata.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::follow::{Start, drive, report};
use super::progress::Asker;
use crate::host::detail::{FROM_KEY, RETRY_OF_KEY, RunDetail, run_state_name};
use a2a::client::A2aClient;
use a2a::types::{
    CancelTaskRequest, Content, GetTaskRequest, JsonValue, ListTasksRequest, Message, Part,
    SendMessageRequest, SendMessageResult, Task, TaskState, Timestamp,
};

/// What `runs` was asked.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
    /// The orchestrator's base URL.
    #[arg(
        long,
        global = true,
        env = "A2A_ORCHESTRATOR_URL",
        default_value = "http://127.0.0.1:8080/"
    )]
    pub url: String,
    /// Send `Authorization: Bearer` with the token in this environment variable.
    #[arg(long, global = true, value_name = "VAR", visible_alias = "token-env")]
    pub bearer_token_env: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// The runs, newest first: id, workflow, state, start, duration, steps done, and a
    /// question waiting.
    List {
        /// Only runs of this workflow.
        #[arg(long)]
        workflow: Option<String>,
        /// Only runs in this state: working, input-required, completed, failed, canceled.
        #[arg(long, value_parser = parse_state)]
        state: Option<TaskState>,
        /// Only runs that changed in this long (e.g. 30m, 1h, 2d).
        #[arg(long, value_parser = orchestrator_core::config::parse_duration)]
        since: Option<std::time::Duration>,
        /// Most runs shown.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object a line (`id`, `contextId`, `state`, `run`) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One run: its steps in order with state, agent, attempts, timings, downstream
    /// task, artifacts and errors; its inputs, questions and output.
    Show {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
        /// The task as JSON (the run detail is its `metadata.run`).
        #[arg(long)]
        json: bool,
    },
    /// Follows a run live to its end, asking its questions at the terminal.
    /// Without a terminal, questions are only shown, with how to answer them: watching
    /// decides nothing unless told to (`--yes`, `--answer`).
    Watch {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
        /// Answer every question automatically (the first option, else yes).
        #[arg(long, short)]
        yes: bool,
        /// Answer step STEP's question with VALUE (repeatable).
        #[arg(long = "answer", value_name = "STEP=VALUE", value_parser = super::progress::parse_answer)]
        answers: Vec<(String, String)>,
    },
    /// Answers a run's question.
    Answer {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
        /// The answer.
        text: String,
        /// The step whose question it answers (needed when several wait).
        #[arg(long)]
        step: Option<String>,
        /// The fan-out item, for a step over a list.
        #[arg(long)]
        item: Option<usize>,
    },
    /// Approves an approval step.
    Approve {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
        /// The approval step it approves (needed when several wait).
        #[arg(long)]
        step: Option<String>,
        /// The fan-out item, for a step over a list.
        #[arg(long)]
        item: Option<usize>,
    },
    /// Rejects an approval step.
    Reject {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
        /// The approval step it rejects (needed when several wait).
        #[arg(long)]
        step: Option<String>,
        /// The fan-out item, for a step over a list.
        #[arg(long)]
        item: Option<usize>,
    },
    /// Cancels a run and its downstream tasks.
    Cancel {
        /// The run's id (its task's id, as `runs list` shows it).
        id: String,
    },
    /// Every question you may answer, across runs, oldest first, with the command that
    /// answers each.
    Inbox {
        /// The server's JSON, as it says it.
        #[arg(long)]
        json: bool,
    },
    /// Starts a new run of the same workflow version and inputs that keeps the results
    /// of the steps this one completed (not sent again) and runs the rest.
    Retry {
        /// The run's id (its task's id, as `runs list` shows it): the run to retry.
        id: String,
        /// Run this step, and everything that depends on it, again too.
        #[arg(long)]
        from: Option<String>,
    },
}

/// A task state as `--state` names it (the run detail's names).
fn parse_state(s: &str) -> Result<TaskState, String> {
    match s {
        "working" => Ok(TaskState::Working),
        "input-required" | "input_required" => Ok(TaskState::InputRequired),
        "completed" => Ok(TaskState::Completed),
        "failed" => Ok(TaskState::Failed),
        "canceled" => Ok(TaskState::Canceled),
        other => Err(format!(
            "unknown run state `{other}` (one of working, input-required, completed, failed, canceled)"
        )),
    }
}

pub async fn runs(args: RunsArgs) -> anyhow::Result<ExitCode> {
    let config = super::send::client_config(args.bearer_token_env.as_deref())?;
    let (client, _card) = A2aClient::connect(&args.url, config).await?;
    match args.command {
        RunsCommand::List {
            workflow,
            state,
            since,
            limit,
            json,
        } => {
            let after = since.map(|d| {
                let t = time::OffsetDateTime::now_utc() - d;
                t.format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default()
            });
            list(&client, workflow.as_deref(), state, after, limit, json).await
        }
        RunsCommand::Show { id, json } => show(&client, &id, json).await,
        RunsCommand::Watch { id, yes, answers } => {
            let asker = Asker::watching(yes, answers);
            let (state, result) = drive(&client, &args.url, Start::Watch(id), asker).await?;
            Ok(report(state, result.as_ref())?)
        }
        RunsCommand::Answer {
            id,
            text,
            step,
            item,
        } => answer(&client, &id, &text, step, item).await,
        RunsCommand::Approve { id, step, item } => answer(&client, &id, "yes", step, item).await,
        RunsCommand::Reject { id, step, item } => answer(&client, &id, "no", step, item).await,
        RunsCommand::Retry { id, from } => retry(&client, &id, from).await,
        RunsCommand::Inbox { json } => {
            inbox(&args.url, args.bearer_token_env.as_deref(), json).await
        }
        RunsCommand::Cancel { id } => {
            let task = client.cancel_task(&CancelTaskRequest::new(id)).await?;
            say!("run {} {}", task.id, task.state().as_str())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Pages through ListTasks until `limit` runs are found.
/// `runs inbox`: the server's `GET /inbox`, as lines (or its JSON).
async fn inbox(url: &str, token_env: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let base = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    let http = a2a::https::reqwest_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let mut request = http.get(format!("{base}inbox"));
    if let Some(var) = token_env {
        let token = std::env::var(var)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| bad_input!("the environment variable {var} is not set"))?;
        request = request.bearer_auth(token);
    }
    let answer = request.send().await?;
    let status = answer.status();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let why = body["error"].as_str().unwrap_or("no reason given");
        anyhow::bail!("{base}inbox answered HTTP {}: {why}", status.as_u16());
    }
    if json {
        say!("{}", serde_json::to_string_pretty(&body)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let questions = body["questions"].as_array().cloned().unwrap_or_default();
    if questions.is_empty() {
        say!("no question waits for you")?;
        return Ok(ExitCode::SUCCESS);
    }
    for q in &questions {
        let text = |k: &str| q[k].as_str().unwrap_or("").to_owned();
        let mut line = format!("{}  {}  {}", text("run"), text("workflow"), text("at"));
        if let Some(at) = q["askedAt"].as_str() {
            line.push_str(&format!("  asked {at}"));
        }
        if let Some(by) = q["startedBy"].as_str() {
            line.push_str(&format!("  started by {by}"));
        }
        if let (Some(run), Some(step)) = (q["parent"]["run"].as_str(), q["parent"]["step"].as_str())
        {
            line.push_str(&format!("  for run {run} (its step {step})"));
        }
        if let Some(until) = q["until"].as_str() {
            line.push_str(&format!("  until {until}"));
        }
        say!("{line}")?;
        say!("    {}", text("prompt").replace('\n', "\n    "))?;
        say!("    answer: {}", text("answer"))?;
    }
    say!(
        "{} question(s) wait for you",
        body["count"].as_u64().unwrap_or(questions.len() as u64)
    )?;
    Ok(ExitCode::SUCCESS)
}

async fn list(
    client: &A2aClient,
    workflow: Option<&str>,
    state: Option<TaskState>,
    after: Option<String>,
    limit: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut query = ListTasksRequest {
        status: state.map_or(0, |s| s as i32),
        status_timestamp_after: after.as_deref().map(timestamp).transpose()?,
        page_size: Some(100),
        history_length: Some(0),
        include_artifacts: Some(false),
        ..ListTasksRequest::default()
    };
    let mut rows: Vec<(Task, RunDetail)> = Vec::new();
    // Tasks whose stored record the server cannot read back: listed by their ids and
    // states alone (`unreadable` in their metadata), marked so here.
    let mut unreadable: Vec<Task> = Vec::new();
    loop {
        let page = client.list_tasks(&query).await?;
        for task in page.tasks {
            if task
                .metadata
                .as_deref()
                .and_then(|m: &Map<String, Value>| m.get(orchestrator_store::UNREADABLE_KEY))
                == Some(&Value::Bool(true))
            {
                if workflow.is_none() {
                    unreadable.push(task);
                }
                continue;
            }
            // A task that is still choosing its workflow or giving inputs has no run.
            let Some(detail) = RunDetail::of_metadata(task.metadata.as_deref()) else {
                continue;
            };
            if workflow.is_some_and(|w| w != detail.workflow) {
                continue;
            }
            rows.push((task, detail));
        }
        match page.next_page_token {
            token if !token.is_empty() && rows.len() < limit => query.page_token = token,
            _ => break,
        }
    }
    rows.truncate(limit);
    if json {
        for (task, detail) in &rows {
            let line = json!({
                "id": task.id,
                "contextId": task.context_id,
                "state": task.state().as_str(),
                "run": detail,
            });
            say!("{line}")?;
        }
        for task in &unreadable {
            let line = json!({
                "id": task.id,
                "contextId": task.context_id,
                "state": task.state().as_str(),
                "unreadable": true,
            });
            say!("{line}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        "{:<36}  {:<22} {:<15} {:<20} {:>9}  {:>5}  WAITING",
        "RUN",
        "WORKFLOW",
        "STATE",
        "STARTED",
        "DURATION",
        "STEPS"
    )?;
    for (task, d) in &rows {
        let (done, total) = d.progress();
        let waiting = d
            .pending_questions
            .first()
            .map(|q| abridge(&format!("{}: {}", q.step, q.prompt), 40))
            .unwrap_or_default();
        say!(
            "{:<36}  {:<22} {:<15} {:<20} {:>9}  {:>5}  {waiting}",
            task.id.as_str(),
            abridge(&d.workflow, 22),
            run_state_name(d.state),
            short_time(&d.started_at),
            duration(&d.started_at, d.ended_at.as_deref()),
            format!("{done}/{total}"),
        )?;
    }
    for task in &unreadable {
        say!(
            "{:<36}  {:<22} {:<15} (its stored record cannot be read; the server's log says why)",
            task.id.as_str(),
            "?",
            task.state().as_str(),
        )?;
    }
    if rows.is_empty() && unreadable.is_empty() {
        say!("(no runs)")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one run.
async fn show(client: &A2aClient, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let task = client.get_task(&GetTaskRequest::new(id)).await?;
    if json {
        say!("{}", serde_json::to_string_pretty(&task)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(d) = RunDetail::of_metadata(task.metadata.as_deref()) else {
        anyhow::bail!(
            "task {id} has no run (it is {}: {})",
            task.state().as_str(),
            task.status()
                .message
                .as_ref()
                .map(Message::text)
                .unwrap_or_default()
        );
    };
    say_part!("{}", render(&task, &d))?;
    if let Some(ended) = &d.ended_at {
        let by = retries(client, id, ended).await?;
        if !by.is_empty() {
            say!("retried by: {}", by.join(", "))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a run or step used, as people read it: `3 calls, 5000 tokens in, 4500 out,
/// cost 1.1000 USD` (the currency when the prices name one).
fn used(u: &orchestrator_core::engine::Usage, currency: Option<&str>) -> String {
    let mut parts = Vec::new();
    if u.calls > 0 {
        parts.push(format!(
            "{} call{}",
            u.calls,
            if u.calls == 1 { "" } else { "s" }
        ));
    }
    if u.tokens() > 0 {
        parts.push(format!(
            "{} tokens in, {} out",
            u.input_tokens, u.output_tokens
        ));
    }
    if u.cost > 0.0 {
        match currency {
            Some(c) => parts.push(format!("cost {:.4} {c}", u.cost)),
            None => parts.push(format!("cost {:.4}", u.cost)),
        }
    }
    parts.join(", ")
}

/// `runs show`'s text.
pub fn render(task: &Task, d: &RunDetail) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {} · {} (version {}) · {} · {} · {}",
        task.id,
        d.workflow,
        d.workflow_version.get(..12).unwrap_or(&d.workflow_version),
        run_state_name(d.state),
        duration(&d.started_at, d.ended_at.as_deref()),
        d.progress_text(),
    );
    let _ = writeln!(
        out,
        "started {}{}",
        d.started_at,
        d.ended_at
            .as_deref()
            .map(|e| format!(", ended {e}"))
            .unwrap_or_default()
    );
    if let Some(by) = &d.started_by {
        let _ = writeln!(out, "started by {} ({})", by.name, by.id);
    }
    if let Some(of) = &d.retry_of {
        let _ = writeln!(out, "retry of run {of}");
    }
    if !d.inputs.is_empty() {
        let _ = writeln!(out, "inputs: {}", Value::Object(d.inputs.clone()));
    }
    if let Some(e) = &d.error {
        let _ = writeln!(out, "error: {e}");
    }
    if !d.usage.is_zero() {
        let _ = writeln!(out, "used: {}", used(&d.usage, d.currency.as_deref()));
    }
    let _ = writeln!(out, "steps:");
    for s in &d.steps {
        let label = super::progress::label(&s.step, s.item);
        let indent = if s.item.is_some() { "    " } else { "  " };
        let mut line = format!(
            "{indent}{} {label:<18} {:<15}",
            super::progress::mark(s.state.as_str()),
            s.state.as_str()
        );
        if let Some(a) = &s.agent {
            line.push_str(&format!(" {a}"));
            if let Some(u) = &s.agent_url {
                line.push_str(&format!(" ({u})"));
            }
        }
        if s.attempts > 1 {
            line.push_str(&format!(" · {} attempts", s.attempts));
        }
        if let Some(start) = &s.started_at {
            line.push_str(&format!(" · {}", duration(start, s.ended_at.as_deref())));
        }
        if s.usage.tokens() > 0 || s.usage.cost > 0.0 {
            line.push_str(&format!(" · {}", used(&s.usage, d.currency.as_deref())));
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if s.usage_by_attempt.len() > 1 {
            for (k, u) in s.usage_by_attempt.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{indent}    attempt {}: {}",
                    k + 1,
                    used(u, d.currency.as_deref())
                );
            }
        }
        if !s.needs.is_empty() {
            let _ = writeln!(out, "{indent}    needs {}", s.needs.join(", "));
        }
        if let Some(t) = &s.downstream_task_id {
            let _ = writeln!(out, "{indent}    downstream task {t}");
        }
        if let Some(m) = &s.message {
            let _ = writeln!(out, "{indent}    {m}");
        }
        for a in task.artifacts.iter().filter(|a| {
            let meta = a.metadata.as_ref();
            meta.and_then(|m| m.get("step")).and_then(Value::as_str) == Some(s.step.as_str())
                && meta
                    .and_then(|m| m.get("item"))
                    .and_then(Value::as_u64)
                    .map(|i| i as usize)
                    == s.item
        }) {
            let _ = writeln!(
                out,
                "{indent}    artifact {}: {}",
                a.artifact_id,
                parts_summary(&a.parts)
            );
        }
    }
    for q in &d.pending_questions {
        let _ = writeln!(
            out,
            "waiting: {}: {}",
            super::progress::label(&q.step, q.item),
            q.prompt
        );
        if !q.approvers.is_empty() || q.four_eyes {
            let _ = writeln!(
                out,
                "    answered by {}{}",
                if q.approvers.is_empty() {
                    "whoever may steer the run".to_owned()
                } else {
                    q.approvers.join(" or ")
                },
                if q.four_eyes {
                    ", not the run's initiator"
                } else {
                    ""
                }
            );
        }
    }
    if !d.audit.is_empty() {
        let _ = writeln!(out, "audit:");
        for a in &d.audit {
            let step = a
                .step
                .as_deref()
                .map(|s| format!(" {}", super::progress::label(s, a.item)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {}{step} by {} ({})",
                a.at, a.action, a.by.name, a.by.id
            );
        }
    }
    if let Some(r) = task.artifacts.iter().find(|a| a.artifact_id == "result") {
        // The run's output whole: it is what the run was for.
        let _ = writeln!(out, "output:");
        for p in &r.parts {
            let shown = match &p.content {
                Some(Content::Text(t)) => t.trim_end().to_owned(),
                Some(Content::Data(JsonValue(d))) => {
                    serde_json::to_string_pretty(d).unwrap_or_default()
                }
                _ => file_shown(p),
            };
            for line in shown.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    out
}

/// Sends `m` without waiting for the run it starts or answers to move on; the task as
/// the orchestrator took it.
async fn send_at_once(client: &A2aClient, m: Message) -> anyhow::Result<Task> {
    let request = SendMessageRequest::new(m).returning_immediately();
    match client.send_message(&request).await? {
        SendMessageResult::Task(t) => Ok(t),
        SendMessageResult::Message(m) => anyhow::bail!("the orchestrator replied: {}", m.text()),
    }
}

/// Asks for a retry of run `id` (a new task); prints the new run's id.
async fn retry(client: &A2aClient, id: &str, from: Option<String>) -> anyhow::Result<ExitCode> {
    let mut m = Message::user_text(format!("retry run {id}"));
    let mut meta = Map::new();
    meta.insert(RETRY_OF_KEY.into(), json!(id));
    if let Some(f) = &from {
        meta.insert(FROM_KEY.into(), json!(f));
    }
    m.metadata = Some(meta.into());
    let task = send_at_once(client, m).await?;
    say!("run {} retries run {id}", task.id)?;
    Ok(ExitCode::SUCCESS)
}

/// The runs that retry run `id` (ended at `ended`): among the tasks that changed since.
async fn retries(client: &A2aClient, id: &str, ended: &str) -> anyhow::Result<Vec<String>> {
    let mut query = ListTasksRequest {
        status_timestamp_after: Some(timestamp(ended)?),
        page_size: Some(100),
        history_length: Some(0),
        include_artifacts: Some(false),
        ..ListTasksRequest::default()
    };
    let mut found = Vec::new();
    // A bounded look: ten pages of the newest tasks.
    for _ in 0..10 {
        let page = client.list_tasks(&query).await?;
        for t in page.tasks {
            if RunDetail::of_metadata(t.metadata.as_deref())
                .is_some_and(|d| d.retry_of.as_deref() == Some(id))
            {
                found.push(t.id);
            }
        }
        match page.next_page_token {
            token if !token.is_empty() => query.page_token = token,
            _ => break,
        }
    }
    Ok(found)
}

/// Sends an answer on the run's task and says where the run stands after it.
async fn answer(
    client: &A2aClient,
    id: &str,
    text: &str,
    step: Option<String>,
    item: Option<usize>,
) -> anyhow::Result<ExitCode> {
    let mut m = Message::user_text(text).with_task(id);
    let mut meta = Map::new();
    if let Some(s) = &step {
        meta.insert("step".into(), json!(s));
    }
    if let Some(i) = item {
        meta.insert("item".into(), json!(i));
    }
    m.metadata = (!meta.is_empty()).then(|| meta.into());
    let task = send_at_once(client, m).await?;
    let said = task
        .status()
        .message
        .as_ref()
        .map(Message::text)
        .unwrap_or_default();
    say!("run {} {}: {said}", task.id, task.state().as_str())?;
    let refused = said.starts_with("Your answer was not taken");
    Ok(if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Parts as one line: text abridged, data as JSON.
fn parts_summary(parts: &[Part]) -> String {
    let shown: Vec<String> = parts
        .iter()
        .map(|p| match &p.content {
            Some(Content::Text(t)) => abridge(t, 100),
            Some(Content::Data(JsonValue(d))) => abridge(&d.to_string(), 200),
            _ => file_shown(p),
        })
        .collect();
    shown.join(" ")
}

/// A file part as a line says it: its name.
fn file_shown(p: &Part) -> String {
    let name = Some(p.filename.as_str()).filter(|n| !n.is_empty());
    format!("(file {})", name.unwrap_or("without a name"))
}

/// An RFC 3339 time as ListTasks takes it.
fn timestamp(text: &str) -> anyhow::Result<Timestamp> {
    Timestamp::parse(text).map_err(|why| anyhow::anyhow!("{text:?} is not a time: {why}"))
}

/// The text on one line, cut to `max` characters with an ellipsis.
fn abridge(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let cut: String = one.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

fn parse_time(t: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
}

/// `2026-11-23 12:05:09` (UTC) of an RFC 3339 time.
fn short_time(t: &str) -> String {
    match parse_time(t) {
        Some(t) => {
            let t = t.to_offset(time::UtcOffset::UTC);
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                t.year(),
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            )
        }
        None => t.to_owned(),
    }
}

/// From `start` to `end` (or now), as `850ms`, `12.3s`, `4m05s` or `2h10m`.
fn duration(start: &str, end: Option<&str>) -> String {
    let Some(from) = parse_time(start) else {
        return "-".into();
    };
    let to = end
        .and_then(parse_time)
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    let d = (to - from).max(time::Duration::ZERO);
    let secs = d.whole_seconds();
    if secs < 1 {
        format!("{}ms", d.whole_milliseconds())
    } else if secs < 60 {
        format!("{:.1}s", d.as_seconds_f64())
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_abridged_text_read_well() {
        let at = "2026-11-23T12:00:00Z";
        assert_eq!(duration(at, Some("2026-11-23T12:00:00.25Z")), "250ms");
        assert_eq!(duration(at, Some("2026-11-23T12:00:12.3Z")), "12.3s");
        assert_eq!(duration(at, Some("2026-11-23T12:04:05Z")), "4m05s");
        assert_eq!(duration(at, Some("2026-11-23T14:10:00Z")), "2h10m");
        assert_eq!(duration("not a time", None), "-");
        assert_eq!(
            short_time("2026-11-23T13:05:09+01:00"),
            "2026-11-23 12:05:09"
        );
        assert_eq!(abridge("one\ntwo  three", 20), "one two three");
        assert_eq!(abridge("abcdefghij", 5), "abcd…");
        assert_eq!(parse_state("input-required"), Ok(TaskState::InputRequired));
        assert!(parse_state("done").unwrap_err().contains("one of working"));
    }

    #[test]
    fn what_a_run_used_reads_as_calls_tokens_and_cost() {
        use orchestrator_core::engine::Usage;
        let u = Usage {
            input_tokens: 5000,
            output_tokens: 4500,
            calls: 3,
            cost: 1.1,
        };
        assert_eq!(
            used(&u, None),
            "3 calls, 5000 tokens in, 4500 out, cost 1.1000"
        );
        assert_eq!(
            used(&u, Some("EUR")),
            "3 calls, 5000 tokens in, 4500 out, cost 1.1000 EUR"
        );
        assert_eq!(used(&Usage::CALL, None), "1 call");
        let task = Task::new("t", "c", a2a::types::TaskStatus::new(TaskState::Completed));
        let workflow = orchestrator_core::workflow::load_str(
            "w.toml",
            "[workflow]\nid = \"w\"\nname = \"W\"\ndescription = \"d\"\n[steps.a]\nagent = \"x\"\nmessage = \"m\"\n",
            Default::default(),
        )
        .0
        .unwrap();
        let mut d = RunDetail::new(&workflow, Default::default(), "2026-11-23T12:00:00Z".into());
        d.usage = u;
        d.steps[0].usage = u;
        d.steps[0].started_at = Some("2026-11-23T12:00:00Z".into());
        let shown = render(&task, &d);
        assert!(
            shown.contains("\nused: 3 calls, 5000 tokens in, 4500 out, cost 1.1000\n"),
            "{shown}"
        );
        assert!(
            shown.contains("· cost 1.1000") || shown.contains("out, cost 1.1000"),
            "{shown}"
        );
    }
}

//! What the durable stores (SQLite, PostgreSQL) write for a run, in types of their
//! own: the JSON of a run's header, each unit's checkpoint and the run's end. They
//! mirror the engine's types field by field today, and convert both ways; they are the stored format, so a field
//! renamed in the engine changes nothing on disk, and a change here is a change of
//! format (the golden store in `tests/fixtures` fails until a migration reads the old
//! one). Tasks and their events are stored as A2A 1.0's ProtoJSON (a task; an event
//! as the `StreamResponse` that holds it), a format the spec fixes; rows written before
//! in A2A 0.3's JSON still read. The functions at the end read them back, the same for
//! both stores, and decide when a task's snapshot is written.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::time::SystemTime;

use a2a::store::{LoggedEvent, PushBody, StoreError, StoredPushConfig, StoredTask};
use a2a::types::{
    AuthenticationInfo, Message, StreamEvent, Task, TaskPushNotificationConfig, TaskState,
    TaskStatus,
};

use orchestrator_core::access::{Actor, Decision};
use orchestrator_core::engine::{
    Checkpoint, Content, Held, Outputs, Record, RunEnd, RunHeader, RunState, StepState,
};

/// A run's header (`runs.header`).
#[derive(Serialize, Deserialize)]
pub(crate) struct HeaderRow {
    run_id: String,
    workflow_id: String,
    workflow_file: String,
    workflow_source: String,
    workflow_hash: String,
    inputs: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
    /// When the run started; absent in rows written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_at: Option<String>,
    /// Who started it; absent on servers without identities, and in older rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initiator: Option<ActorRow>,
    /// The tenant it was started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    /// The run it retries; absent for a first run, and in older rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_of: Option<String>,
    /// The budget and deadline it was held to; absent in older rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    held: Option<Held>,
    /// The run that started it as a child run; absent in older rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent: Option<orchestrator_core::engine::ParentRun>,
}

/// Someone acting on a run.
#[derive(Serialize, Deserialize)]
struct ActorRow {
    id: String,
    subject: String,
    name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roles: Vec<String>,
}

/// One answer to a step's question, and who gave it.
#[derive(Serialize, Deserialize)]
struct DecisionRow {
    by: ActorRow,
    at: String,
    action: String,
}

impl From<&Actor> for ActorRow {
    fn from(a: &Actor) -> Self {
        ActorRow {
            id: a.id.clone(),
            subject: a.subject.clone(),
            name: a.name.clone(),
            groups: a.groups.clone(),
            roles: a.roles.clone(),
        }
    }
}

impl From<ActorRow> for Actor {
    fn from(a: ActorRow) -> Self {
        Actor {
            id: a.id,
            subject: a.subject,
            name: a.name,
            groups: a.groups,
            roles: a.roles,
        }
    }
}

/// A unit's checkpoint (`run_units.checkpoint`).
#[derive(Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub(crate) enum CheckpointRow {
    Sent {
        attempt: u32,
        turn: u32,
        message_id: String,
        agent: Option<String>,
        task_id: Option<String>,
        text: Option<String>,
        data: Option<Map<String, Value>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started_at: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        asking: bool,
    },
    Asked {
        started_at: String,
    },
    Done(RecordRow),
}

/// A finished step's (or item's) record.
#[derive(Serialize, Deserialize)]
pub(crate) struct RecordRow {
    state: StepStateRow,
    outputs: OutputsRow,
    data: Option<Map<String, Value>>,
    items: Option<Vec<RecordRow>>,
    error: Option<String>,
    agent: Option<String>,
    attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    decisions: Vec<DecisionRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<UsageRow>,
    /// A looping step's passes; absent in rows of steps that do not loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    passes: Option<Vec<RecordRow>>,
}

/// What a step used.
#[derive(Serialize, Deserialize)]
struct UsageRow {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    calls: u64,
    #[serde(default)]
    cost: f64,
}

/// Artifacts: (id, name, parts).
#[derive(Serialize, Deserialize)]
struct OutputsRow {
    artifacts: Vec<(String, Option<String>, Vec<ContentRow>)>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
enum ContentRow {
    Text(String),
    Data(Map<String, Value>),
    File {
        name: Option<String>,
        mime_type: Option<String>,
        uri: Option<String>,
        bytes: Option<String>,
    },
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StepStateRow {
    Pending,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
    Skipped,
    UpstreamFailed,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RunStateRow {
    Working,
    InputRequired,
    Completed,
    Failed,
    Canceled,
}

/// A run's end (`runs.run_end`).
#[derive(Serialize, Deserialize)]
pub(crate) struct EndRow {
    state: RunStateRow,
    message: Option<String>,
    output_text: Option<String>,
    output_data: Option<Value>,
}

impl From<&RunHeader> for HeaderRow {
    fn from(h: &RunHeader) -> Self {
        HeaderRow {
            run_id: h.run_id.clone(),
            workflow_id: h.workflow_id.clone(),
            workflow_file: h.workflow_file.clone(),
            workflow_source: h.workflow_source.clone(),
            workflow_hash: h.workflow_hash.clone(),
            inputs: h.inputs.clone(),
            trace: h.trace.clone(),
            started_at: h.started_at.clone(),
            initiator: h.initiator.as_ref().map(Into::into),
            tenant: h.tenant.clone(),
            retry_of: h.retry_of.clone(),
            held: h.held,
            parent: h.parent.clone(),
        }
    }
}

impl From<HeaderRow> for RunHeader {
    fn from(h: HeaderRow) -> Self {
        RunHeader {
            run_id: h.run_id,
            workflow_id: h.workflow_id,
            workflow_file: h.workflow_file,
            workflow_source: h.workflow_source,
            workflow_hash: h.workflow_hash,
            inputs: h.inputs,
            trace: h.trace,
            started_at: h.started_at,
            initiator: h.initiator.map(Into::into),
            tenant: h.tenant,
            retry_of: h.retry_of,
            held: h.held,
            parent: h.parent,
        }
    }
}

impl From<&Checkpoint> for CheckpointRow {
    fn from(c: &Checkpoint) -> Self {
        match c {
            Checkpoint::Sent {
                attempt,
                turn,
                message_id,
                agent,
                task_id,
                text,
                data,
                started_at,
                asking,
            } => CheckpointRow::Sent {
                attempt: *attempt,
                turn: *turn,
                message_id: message_id.clone(),
                agent: agent.clone(),
                task_id: task_id.clone(),
                text: text.clone(),
                data: data.clone(),
                started_at: started_at.clone(),
                asking: *asking,
            },
            Checkpoint::Asked { started_at } => CheckpointRow::Asked {
                started_at: started_at.clone(),
            },
            Checkpoint::Done(r) => CheckpointRow::Done(r.into()),
        }
    }
}

impl From<CheckpointRow> for Checkpoint {
    fn from(c: CheckpointRow) -> Self {
        match c {
            CheckpointRow::Sent {
                attempt,
                turn,
                message_id,
                agent,
                task_id,
                text,
                data,
                started_at,
                asking,
            } => Checkpoint::Sent {
                attempt,
                turn,
                message_id,
                agent,
                task_id,
                text,
                data,
                started_at,
                asking,
            },
            CheckpointRow::Asked { started_at } => Checkpoint::Asked { started_at },
            CheckpointRow::Done(r) => Checkpoint::Done(r.into()),
        }
    }
}

impl From<&Record> for RecordRow {
    fn from(r: &Record) -> Self {
        RecordRow {
            state: r.state.into(),
            outputs: OutputsRow {
                artifacts: r
                    .outputs
                    .artifacts
                    .iter()
                    .map(|(id, name, parts)| {
                        (
                            id.clone(),
                            name.clone(),
                            parts.iter().map(Into::into).collect(),
                        )
                    })
                    .collect(),
            },
            data: r.data.clone(),
            items: (r.items.as_ref())
                .filter(|_| !r.passes)
                .map(|i| i.iter().map(Into::into).collect()),
            error: r.error.clone(),
            agent: r.agent.clone(),
            attempts: r.attempts,
            started_at: r.started_at.clone(),
            ended_at: r.ended_at.clone(),
            decisions: r
                .decisions
                .iter()
                .map(|d| DecisionRow {
                    by: (&d.by).into(),
                    at: d.at.clone(),
                    action: d.action.clone(),
                })
                .collect(),
            usage: r.usage.as_deref().map(|u| UsageRow {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                calls: u.calls,
                cost: u.cost,
            }),
            passes: (r.items.as_ref())
                .filter(|_| r.passes)
                .map(|p| p.iter().map(Into::into).collect()),
        }
    }
}

impl From<RecordRow> for Record {
    fn from(r: RecordRow) -> Self {
        Record {
            state: r.state.into(),
            outputs: Outputs {
                artifacts: r
                    .outputs
                    .artifacts
                    .into_iter()
                    .map(|(id, name, parts)| {
                        (id, name, parts.into_iter().map(Into::into).collect())
                    })
                    .collect(),
            },
            data: r.data,
            passes: r.passes.is_some(),
            items: (r.items.or(r.passes)).map(|i| i.into_iter().map(Into::into).collect()),
            error: r.error,
            agent: r.agent,
            attempts: r.attempts,
            started_at: r.started_at,
            ended_at: r.ended_at,
            decisions: r
                .decisions
                .into_iter()
                .map(|d| Decision {
                    by: d.by.into(),
                    at: d.at,
                    action: d.action,
                })
                .collect(),
            usage: r.usage.map(|u| {
                Box::new(orchestrator_core::engine::Usage {
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                    calls: u.calls,
                    cost: u.cost,
                })
            }),
        }
    }
}

impl From<&Content> for ContentRow {
    fn from(c: &Content) -> Self {
        match c {
            Content::Text(t) => ContentRow::Text(t.clone()),
            Content::Data(d) => ContentRow::Data(d.clone()),
            Content::File {
                name,
                mime_type,
                uri,
                bytes,
            } => ContentRow::File {
                name: name.clone(),
                mime_type: mime_type.clone(),
                uri: uri.clone(),
                bytes: bytes.clone(),
            },
        }
    }
}

impl From<ContentRow> for Content {
    fn from(c: ContentRow) -> Self {
        match c {
            ContentRow::Text(t) => Content::Text(t),
            ContentRow::Data(d) => Content::Data(d),
            ContentRow::File {
                name,
                mime_type,
                uri,
                bytes,
            } => Content::File {
                name,
                mime_type,
                uri,
                bytes,
            },
        }
    }
}

impl From<StepState> for StepStateRow {
    fn from(s: StepState) -> Self {
        match s {
            StepState::Pending => StepStateRow::Pending,
            StepState::Working => StepStateRow::Working,
            StepState::InputRequired => StepStateRow::InputRequired,
            StepState::AuthRequired => StepStateRow::AuthRequired,
            StepState::Completed => StepStateRow::Completed,
            StepState::Failed => StepStateRow::Failed,
            StepState::Canceled => StepStateRow::Canceled,
            StepState::Rejected => StepStateRow::Rejected,
            StepState::Skipped => StepStateRow::Skipped,
            StepState::UpstreamFailed => StepStateRow::UpstreamFailed,
        }
    }
}

impl From<StepStateRow> for StepState {
    fn from(s: StepStateRow) -> Self {
        match s {
            StepStateRow::Pending => StepState::Pending,
            StepStateRow::Working => StepState::Working,
            StepStateRow::InputRequired => StepState::InputRequired,
            StepStateRow::AuthRequired => StepState::AuthRequired,
            StepStateRow::Completed => StepState::Completed,
            StepStateRow::Failed => StepState::Failed,
            StepStateRow::Canceled => StepState::Canceled,
            StepStateRow::Rejected => StepState::Rejected,
            StepStateRow::Skipped => StepState::Skipped,
            StepStateRow::UpstreamFailed => StepState::UpstreamFailed,
        }
    }
}

impl From<RunState> for RunStateRow {
    fn from(s: RunState) -> Self {
        match s {
            RunState::Working => RunStateRow::Working,
            RunState::InputRequired => RunStateRow::InputRequired,
            RunState::Completed => RunStateRow::Completed,
            RunState::Failed => RunStateRow::Failed,
            RunState::Canceled => RunStateRow::Canceled,
        }
    }
}

impl From<RunStateRow> for RunState {
    fn from(s: RunStateRow) -> Self {
        match s {
            RunStateRow::Working => RunState::Working,
            RunStateRow::InputRequired => RunState::InputRequired,
            RunStateRow::Completed => RunState::Completed,
            RunStateRow::Failed => RunState::Failed,
            RunStateRow::Canceled => RunState::Canceled,
        }
    }
}

impl From<&RunEnd> for EndRow {
    fn from(e: &RunEnd) -> Self {
        EndRow {
            state: e.state.into(),
            message: e.message.clone(),
            output_text: e.output_text.clone(),
            output_data: e.output_data.clone(),
        }
    }
}

impl From<EndRow> for RunEnd {
    fn from(e: EndRow) -> Self {
        RunEnd {
            state: e.state.into(),
            message: e.message,
            output_text: e.output_text,
            output_data: e.output_data,
        }
    }
}

/// Reads `json` as the model's `T` (A2A 1.0's ProtoJSON), or — a row written before —
/// as v0.3's `O`, converted. The error is the first form's: what a row is now.
fn read_either<T: serde::de::DeserializeOwned, O: serde::de::DeserializeOwned, E>(
    json: &str,
    what: &'static str,
    old: impl FnOnce(O) -> Result<T, E>,
) -> Result<T, StoreError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match serde_json::from_str::<T>(json) {
        Ok(t) => Ok(t),
        Err(current) => match serde_json::from_str::<O>(json) {
            Ok(o) => old(o).map_err(|e| StoreError::unreadable(what, e)),
            Err(_) => Err(StoreError::unreadable(what, current)),
        },
    }
}

/// A stored task snapshot read back, with its initiator and tenant (columns of their
/// own: they are never on the wire); unreadable if it no longer decodes.
pub(crate) fn task_of(
    json: &str,
    initiator: Option<String>,
    tenant: Option<String>,
) -> Result<StoredTask, StoreError> {
    let task: Task = read_either(json, "task", |old: a2a::v0_3::Task| {
        a2a::v0_3::convert::task_in(old, "task")
    })?;
    // ProtoJSON reads any object, unknown members left out: a snapshot is a task's only
    // if it names one.
    if task.id.is_empty() {
        return Err(StoreError::unreadable(
            "task",
            std::io::Error::other("the stored snapshot names no task id"),
        ));
    }
    Ok(StoredTask {
        task,
        initiator,
        tenant,
    })
}

/// A task whose stored record cannot be read back (see [`StoreError::Unreadable`]),
/// reported: logged with its id and the cause, and counted
/// (`store_unreadable_tasks_total`). One such task is no reason to fail a listing of
/// others, or a start: it is listed by its columns ([`unreadable_task`]) and left out
/// of what is resumed.
pub(crate) fn report_unreadable(id: &str, e: &StoreError, observe: &crate::Observe) {
    tracing::error!(
        task_id = %a2a::log::untrusted(id),
        error = %e,
        "a stored task cannot be read back; it is listed without its details and not resumed"
    );
    observe.unreadable_task();
}

/// What a listing shows of a task whose record cannot be read: its id, context and
/// state, from the row's own columns, and a status message that says so; its
/// metadata marks it (`"unreadable": true`).
pub(crate) fn unreadable_task(
    id: &str,
    context_id: &str,
    state: &str,
    e: &StoreError,
    observe: &crate::Observe,
) -> Task {
    report_unreadable(id, e, observe);
    let state = TaskState::from_name(state).unwrap_or(TaskState::Unspecified);
    let status = TaskStatus::new(state).with_message(Message::agent_text(
        "This task's stored record cannot be read back, so it is shown without its \
         history, artifacts or metadata. The server's log names the cause.",
    ));
    let mut task = Task::new(id, context_id, status);
    task.metadata =
        Some(Map::from_iter([(crate::UNREADABLE_KEY.to_owned(), Value::Bool(true))]).into());
    task
}

/// A logged event (`task_events.event`) read back, with its number.
pub(crate) fn event_of(seq: i64, json: &str) -> Result<LoggedEvent, StoreError> {
    let event = read_either(json, "event", a2a::v0_3::convert::stream_event_in)?;
    Ok((seq as u64, std::sync::Arc::new(event)))
}

/// A push config as stored (`push_configs.config`): the config a client set, in A2A
/// 1.0's shape, and the body its notifications take. A row written before has v0.3's
/// `authentication.schemes` (the first is the scheme) and, when it says no body, took
/// v0.3's (the task).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushRow {
    #[serde(default)]
    id: String,
    url: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authentication: Option<PushAuthRow>,
    #[serde(default, rename = "x-a2a-payload")]
    body: Option<PushBodyRow>,
}

#[derive(Serialize, Deserialize)]
struct PushAuthRow {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    scheme: String,
    #[serde(default, skip_serializing)]
    schemes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<String>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
enum PushBodyRow {
    #[serde(rename = "task")]
    Task,
    #[serde(rename = "streamResponse")]
    StreamResponse,
}

/// A push config as a store writes it.
pub(crate) fn push_config_row(c: &StoredPushConfig) -> Result<String, serde_json::Error> {
    let config = &c.config;
    serde_json::to_string(&PushRow {
        id: config.id.clone(),
        url: config.url.clone(),
        token: config.token.clone(),
        authentication: config.authentication.as_ref().map(|a| PushAuthRow {
            scheme: a.scheme.clone(),
            schemes: Vec::new(),
            credentials: (!a.credentials.is_empty()).then(|| a.credentials.clone()),
        }),
        body: Some(match c.body {
            PushBody::Task => PushBodyRow::Task,
            PushBody::StreamResponse => PushBodyRow::StreamResponse,
        }),
    })
}

/// A stored push config of task `task_id` read back.
pub(crate) fn push_config_of(task_id: &str, json: &str) -> Result<StoredPushConfig, StoreError> {
    let row: PushRow =
        serde_json::from_str(json).map_err(|e| StoreError::unreadable("push config", e))?;
    Ok(StoredPushConfig {
        config: TaskPushNotificationConfig {
            tenant: String::new(),
            id: row.id,
            task_id: task_id.to_owned(),
            url: row.url,
            token: row.token,
            authentication: row.authentication.map(|a| AuthenticationInfo {
                scheme: match a.scheme.as_str() {
                    "" => a.schemes.into_iter().next().unwrap_or_default(),
                    _ => a.scheme,
                },
                credentials: a.credentials.unwrap_or_default(),
            }),
        },
        body: match row.body {
            Some(PushBodyRow::StreamResponse) => PushBody::StreamResponse,
            Some(PushBodyRow::Task) | None => PushBody::Task,
        },
    })
}
/// Events between a task's snapshots while it is young: a read replays at most this
/// many (and those of the commit that passed it).
const SNAPSHOT_EVERY: u64 = 32;

/// Past this many events, the snapshots grow apart: each is taken half again as many
/// events after the one before. A task's snapshot grows with its events (an artifact
/// streamed into it, say), so snapshots taken at even steps would store a long task
/// over and over (a 10 MB text streamed in 10,000 chunks wrote gigabytes); taken so,
/// all of a task's snapshots together are about three times its last, and a read
/// replays at most a third of its events.
const SNAPSHOT_EVERY_UNTIL: u64 = 512;

/// How many snapshot marks lie at or below event `n`: a snapshot is due when a commit
/// passes one. Every [`SNAPSHOT_EVERY`] events up to [`SNAPSHOT_EVERY_UNTIL`], then
/// each half again as far as the one before.
fn snapshot_marks(n: u64) -> u64 {
    if n < SNAPSHOT_EVERY_UNTIL {
        return n / SNAPSHOT_EVERY;
    }
    let (mut marks, mut at) = (SNAPSHOT_EVERY_UNTIL / SNAPSHOT_EVERY, SNAPSHOT_EVERY_UNTIL);
    while at + at / 2 <= n {
        at += at / 2;
        marks += 1;
    }
    marks
}

/// What a store keeps of the commit that ends a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtEnd {
    /// The whole task, so that a finished task is read without replaying.
    Snapshot,
    /// Its events only, like any other commit: a read of the finished task replays
    /// them onto the snapshot before. The end's snapshot (the task with every artifact
    /// and the run's detail, ~5 KB for a 4-step run) was a third of the bytes a run
    /// wrote, and it repeats what its events say.
    // SQLite's choice; a build with PostgreSQL alone never makes it.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Events,
}

/// Whether a commit stores the task's snapshot, or only its events (the snapshot is
/// then the stored one with the events after it replayed; the stores' `caught_up`).
/// Most commits of a busy task are a status or an artifact chunk, and rewriting the
/// whole task for each made up most of what a commit wrote. Stored: a task's first
/// commit, one without events (a user's message added to the history), one with a
/// whole task, the one that ends it if `at_end` says so, and one that passes a mark
/// of [`snapshot_marks`].
pub(crate) fn snapshot_due(task: &Task, events: &[LoggedEvent], at_end: AtEnd) -> bool {
    let (Some((first, _)), Some((last, _))) = (events.first(), events.last()) else {
        return true;
    };
    *first == 1
        || (at_end == AtEnd::Snapshot && task.state().is_terminal())
        || events
            .iter()
            .any(|(_, e)| matches!(**e, StreamEvent::Task(_)))
        || snapshot_marks(first - 1) != snapshot_marks(*last)
}

/// Milliseconds since the Unix epoch: how the durable stores write times.
pub(crate) fn millis(t: SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The time `ms` milliseconds after the Unix epoch (none before it).
pub(crate) fn from_millis(ms: i64) -> SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The snapshots of a task that streams many events of one size: every 32 events
    /// while it is young, then together about three times the last, with never more
    /// than about a third of its events replayed on a read.
    #[test]
    fn a_records_usage_is_stored_and_read_back_and_old_records_have_none() {
        use orchestrator_core::engine::{Checkpoint, Record, StepState, Usage};
        let mut record = Record::new(StepState::Completed);
        record.usage = Some(Box::new(Usage {
            input_tokens: 60,
            output_tokens: 40,
            calls: 2,
            cost: 0.5,
        }));
        let stored =
            serde_json::to_string(&CheckpointRow::from(&Checkpoint::Done(record.clone()))).unwrap();
        let back: Checkpoint = serde_json::from_str::<CheckpointRow>(&stored)
            .unwrap()
            .into();
        assert_eq!(back, Checkpoint::Done(record));
        let old = stored.replace(
            r#","usage":{"input_tokens":60,"output_tokens":40,"calls":2,"cost":0.5}"#,
            "",
        );
        assert_ne!(old, stored, "{stored}");
        let back: Checkpoint = serde_json::from_str::<CheckpointRow>(&old).unwrap().into();
        assert!(matches!(back, Checkpoint::Done(r) if r.usage.is_none()));
    }

    /// A push config reads back as it was set, its body's generation with it; one an
    /// older version wrote (v0.3's `schemes`, no body: v0.3's) reads too.
    #[test]
    fn push_configs_read_back_and_old_rows_read_too() {
        let set = StoredPushConfig {
            config: TaskPushNotificationConfig {
                id: "p".into(),
                task_id: "t".into(),
                url: "https://example.com/hook".into(),
                token: "secret".into(),
                authentication: Some(AuthenticationInfo {
                    scheme: "Bearer".into(),
                    credentials: "c".into(),
                }),
                ..Default::default()
            },
            body: PushBody::StreamResponse,
        };
        let row = push_config_row(&set).unwrap();
        assert_eq!(push_config_of("t", &row).unwrap(), set);
        let old = r#"{"id":"p","url":"https://example.com/hook","token":"secret","authentication":{"schemes":["Bearer"],"credentials":"c"}}"#;
        let read = push_config_of("t", old).unwrap();
        assert_eq!(read.config, set.config);
        assert_eq!(read.body, PushBody::Task);
    }

    #[test]
    fn snapshots_grow_apart_as_a_task_grows() {
        let events = 200_000u64;
        let (mut stored, mut since) = (0u64, 0u64);
        for n in 1..=events {
            assert!(snapshot_marks(n) >= snapshot_marks(n - 1));
            if snapshot_marks(n - 1) != snapshot_marks(n) {
                // A snapshot of a task of `n` events of one unit each.
                stored += n;
                since = 0;
            } else {
                since += 1;
            }
            let bound = if n < SNAPSHOT_EVERY_UNTIL {
                SNAPSHOT_EVERY
            } else {
                n / 3 + 1
            };
            assert!(
                since < bound,
                "{since} events after the snapshot at event {n}"
            );
        }
        assert!(stored <= 4 * events, "{stored} units stored for {events}");
    }
}

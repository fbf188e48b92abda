//! Stage one of loading: the TOML file into raw structs that keep every value's span.
//!
//! Only the shape is checked here (known keys, value types); meaning — ids, references,
//! durations, templates, the graph — is stage two's job (`validate.rs`).

use std::ops::Range;

use serde_json::Value;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::config::reader::{Ctx, Sp, TableReader, to_json, type_name};

pub struct RawWorkflow {
    pub header: Option<RawHeader>,
    pub inputs: Vec<RawInput>,
    pub defaults: RawDefaults,
    pub steps: Vec<RawStep>,
    pub output: Option<RawOutput>,
    pub webhook: Option<RawWebhook>,
    pub schedules: Vec<RawSchedule>,
}

/// `[[schedule]]`: a run started at each of a cron pattern's times.
pub struct RawSchedule {
    pub span: Range<usize>,
    pub name: Option<Sp<String>>,
    pub cron: Option<Sp<String>>,
    pub tz: Option<Sp<String>>,
    pub as_: Option<Sp<String>>,
    pub missed: Option<Sp<String>>,
    pub input: Option<Sp<RawData>>,
}

/// `[webhook]`: a signed HTTP request that starts a run.
pub struct RawWebhook {
    pub span: Range<usize>,
    pub path: Option<Sp<String>>,
    pub secret_env: Option<Sp<String>>,
    pub as_: Option<Sp<String>>,
    pub input: Option<Sp<RawData>>,
}

pub struct RawHeader {
    pub span: Range<usize>,
    pub id: Option<Sp<String>>,
    pub name: Option<Sp<String>>,
    pub description: Option<Sp<String>>,
    pub tags: Option<Sp<Vec<Sp<String>>>>,
    pub examples: Option<Sp<Vec<Sp<String>>>>,
    pub max_parallel: Option<Sp<i64>>,
    pub on_failure: Option<Sp<String>>,
    pub deadline: Option<Sp<String>>,
    pub allow: Option<Sp<Vec<Sp<String>>>>,
    pub budget: Option<RawBudget>,
}

/// `[workflow] budget = { cost, tokens, calls }`.
pub struct RawBudget {
    pub span: Range<usize>,
    pub cost: Option<Sp<f64>>,
    pub tokens: Option<Sp<i64>>,
    pub calls: Option<Sp<i64>>,
}

pub struct RawInput {
    pub name: Sp<String>,
    pub span: Range<usize>,
    pub ty: Option<Sp<String>>,
    pub description: Option<Sp<String>>,
    pub required: Option<Sp<bool>>,
    pub default: Option<Sp<Value>>,
    pub allowed: Option<Sp<Vec<Sp<Value>>>>,
}

#[derive(Default)]
pub struct RawDefaults {
    pub timeout: Option<Sp<String>>,
    pub deadline: Option<Sp<String>>,
    pub retry: Option<RawRetry>,
}

pub struct RawRetry {
    pub span: Range<usize>,
    pub max_attempts: Option<Sp<i64>>,
    pub backoff: Option<Sp<String>>,
    pub initial: Option<Sp<String>>,
    pub max: Option<Sp<String>>,
}

pub struct RawStep {
    pub id: Sp<String>,
    pub span: Range<usize>,
    pub kind: Option<Sp<String>>,
    pub agent: Option<Sp<String>>,
    pub skill: Option<Sp<String>>,
    pub needs: Option<Sp<Vec<Sp<String>>>>,
    pub when: Option<Sp<String>>,
    pub trigger: Option<Sp<String>>,
    pub message: Option<Sp<String>>,
    pub data: Option<Sp<RawData>>,
    pub prompt: Option<Sp<String>>,
    pub system: Option<Sp<String>>,
    pub fallback: Option<Sp<String>>,
    pub fields: Option<Vec<RawInput>>,
    pub continue_on_error: Option<Sp<bool>>,
    pub timeout: Option<Sp<String>>,
    pub deadline: Option<Sp<String>>,
    pub on_timeout: Option<Sp<String>>,
    pub escalate_to: Option<Sp<Vec<Sp<String>>>>,
    pub approvers: Option<Sp<Vec<Sp<String>>>>,
    pub four_eyes: Option<Sp<bool>>,
    pub quorum: Option<Sp<i64>>,
    pub retry: Option<RawRetry>,
    pub for_each: Option<Sp<String>>,
    pub max_parallel: Option<Sp<i64>>,
    pub min_success: Option<Sp<i64>>,
    /// `on_budget = "ask"`: an approval asked when the run passes its budget.
    pub on_budget: Option<Sp<String>>,
    /// What each approval of it adds to the budget.
    pub extend: Option<RawBudget>,
    /// A bounded loop: the step runs again until this is true...
    pub repeat_until: Option<Sp<String>>,
    /// ...at most this many times in all...
    pub max_repeats: Option<Sp<i64>>,
    /// ...and then fails (`"fail"`) or completes with its last pass (`"continue"`).
    pub on_max_repeats: Option<Sp<String>>,
    /// `kind = "workflow"`: the workflow run as a child run...
    pub workflow: Option<Sp<String>>,
    /// ...with these inputs (templates).
    pub input: Option<Sp<RawData>>,
    /// Approval and input steps: the agent their question is sent to when it is asked.
    pub announce_to: Option<Sp<String>>,
}

pub struct RawOutput {
    pub span: Range<usize>,
    pub text: Option<Sp<String>>,
    pub data: Option<Sp<RawData>>,
}

/// A `data` value: strings may be templates.
pub enum RawData {
    Str(String),
    Literal(Value),
    Array(Vec<Sp<RawData>>),
    Object(Vec<(String, Sp<RawData>)>),
}

const TOP: &[&str] = &[
    "workflow", "input", "defaults", "steps", "output", "webhook", "schedule",
];
const WEBHOOK: &[&str] = &["path", "secret_env", "as", "input"];
const SCHEDULE: &[&str] = &["name", "cron", "tz", "as", "missed", "input"];
const HEADER: &[&str] = &[
    "id",
    "name",
    "description",
    "tags",
    "examples",
    "max_parallel",
    "on_failure",
    "deadline",
    "allow",
    "budget",
];
const BUDGET: &[&str] = &["cost", "tokens", "calls"];
const INPUT: &[&str] = &["type", "description", "required", "default", "enum"];
const DEFAULTS: &[&str] = &["timeout", "deadline", "retry"];
const RETRY: &[&str] = &["max_attempts", "backoff", "initial", "max"];
const STEP: &[&str] = &[
    "kind",
    "agent",
    "skill",
    "needs",
    "when",
    "trigger",
    "message",
    "data",
    "prompt",
    "system",
    "fallback",
    "fields",
    "continue_on_error",
    "timeout",
    "deadline",
    "on_timeout",
    "escalate_to",
    "approvers",
    "four_eyes",
    "quorum",
    "retry",
    "for_each",
    "max_parallel",
    "min_success",
    "on_budget",
    "extend",
    "repeat_until",
    "max_repeats",
    "on_max_repeats",
    "workflow",
    "input",
    "announce_to",
];
const OUTPUT: &[&str] = &["text", "data"];

/// Reads a workflow file's shape. `None` when the TOML itself does not parse.
pub fn read(ctx: &mut Ctx<'_>) -> Option<RawWorkflow> {
    let source = ctx.source;
    let (doc, errors) = DeTable::parse_recoverable(source);
    // After a syntax error the parser's recovery reports follow-on errors that are
    // mostly noise; the first one is the real problem.
    if let Some(e) = errors.first() {
        let span = e.span().unwrap_or(0..0);
        ctx.error(span, format!("invalid TOML: {}", e.message().trim()));
        return None;
    }
    let span = doc.span();
    let mut top = TableReader::new(doc.get_ref(), span, "the workflow file");
    let header = top.table_named(ctx, "workflow", "[workflow]").map(|mut t| {
        let h = RawHeader {
            span: t.span.clone(),
            id: t.string(ctx, "id"),
            name: t.string(ctx, "name"),
            description: t.string(ctx, "description"),
            tags: t.strings(ctx, "tags"),
            examples: t.strings(ctx, "examples"),
            max_parallel: t.int(ctx, "max_parallel"),
            on_failure: t.string(ctx, "on_failure"),
            deadline: t.string(ctx, "deadline"),
            allow: t.strings(ctx, "allow"),
            budget: t.table(ctx, "budget").map(|b| read_budget(ctx, b)),
        };
        t.finish(ctx, HEADER);
        h
    });
    let inputs = top
        .table_named(ctx, "input", "[input]")
        .map(|t| read_inputs(ctx, t, "[input]"))
        .unwrap_or_default();
    let defaults = top
        .table_named(ctx, "defaults", "[defaults]")
        .map(|mut t| {
            let d = RawDefaults {
                timeout: t.string(ctx, "timeout"),
                deadline: t.string(ctx, "deadline"),
                retry: t.table(ctx, "retry").map(|r| read_retry(ctx, r)),
            };
            t.finish(ctx, DEFAULTS);
            d
        })
        .unwrap_or_default();
    let mut steps = Vec::new();
    if let Some(t) = top.table_named(ctx, "steps", "[steps]") {
        for (key, value) in t.entries() {
            let Some(table) = value.get_ref().as_table() else {
                ctx.error(
                    value.span(),
                    format!(
                        "`steps.{}` must be a table (`[steps.{}]`), not {}",
                        key.value,
                        key.value,
                        type_name(value.get_ref())
                    ),
                );
                continue;
            };
            let name = format!("[steps.{}]", key.value);
            let reader = TableReader::new(table, value.span(), name);
            steps.push(read_step(ctx, key.map_owned(), reader));
        }
    }
    let output = top.table_named(ctx, "output", "[output]").map(|mut t| {
        let o = RawOutput {
            span: t.span.clone(),
            text: t.string(ctx, "text"),
            data: t.get("data").map(read_data),
        };
        t.finish(ctx, OUTPUT);
        o
    });
    let webhook = top.table_named(ctx, "webhook", "[webhook]").map(|mut t| {
        let w = RawWebhook {
            span: t.span.clone(),
            path: t.string(ctx, "path"),
            secret_env: t.string(ctx, "secret_env"),
            as_: t.string(ctx, "as"),
            input: t.get("input").map(read_data),
        };
        t.finish(ctx, WEBHOOK);
        w
    });
    let schedules = top
        .get("schedule")
        .map(|v| read_schedules(ctx, v))
        .unwrap_or_default();
    top.finish(ctx, TOP);
    Some(RawWorkflow {
        header,
        inputs,
        defaults,
        steps,
        output,
        webhook,
        schedules,
    })
}

/// `[[schedule]]`, each a table of an array.
fn read_schedules(ctx: &mut Ctx<'_>, value: &Spanned<DeValue<'_>>) -> Vec<RawSchedule> {
    let Some(items) = value.get_ref().as_array() else {
        ctx.error(
            value.span(),
            format!(
                "`schedule` must be an array of tables, each written `[[schedule]]`, not {}",
                type_name(value.get_ref())
            ),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let Some(table) = item.get_ref().as_table() else {
            ctx.error(
                item.span(),
                format!(
                    "each schedule must be a table (`[[schedule]]`), not {}",
                    type_name(item.get_ref())
                ),
            );
            continue;
        };
        let mut t = TableReader::new(table, item.span(), "[[schedule]]");
        out.push(RawSchedule {
            span: t.span.clone(),
            name: t.string(ctx, "name"),
            cron: t.string(ctx, "cron"),
            tz: t.string(ctx, "tz"),
            as_: t.string(ctx, "as"),
            missed: t.string(ctx, "missed"),
            input: t.get("input").map(read_data),
        });
        t.finish(ctx, SCHEDULE);
    }
    out
}

impl Sp<&str> {
    fn map_owned(self) -> Sp<String> {
        Sp::new(self.value.to_owned(), self.span)
    }
}

/// Reads a table of input specs (`[input]` or a step's `fields`).
pub fn read_inputs(ctx: &mut Ctx<'_>, table: TableReader<'_, '_>, where_: &str) -> Vec<RawInput> {
    let mut out = Vec::new();
    for (key, value) in table.entries() {
        let Some(spec) = value.get_ref().as_table() else {
            ctx.error(
                value.span(),
                format!(
                    "input `{}` in {where_} must be a table such as {{ type = \"string\" }}, not {}",
                    key.value,
                    type_name(value.get_ref())
                ),
            );
            continue;
        };
        let mut t = TableReader::new(spec, value.span(), format!("input `{}`", key.value));
        let input_name = key.value;
        let input = RawInput {
            name: key.map_owned(),
            span: value.span(),
            ty: t.string(ctx, "type"),
            description: t.string(ctx, "description"),
            required: t.bool(ctx, "required"),
            default: t
                .get("default")
                .map(|v| Sp::new(to_json(v.get_ref()), v.span())),
            allowed: t.get("enum").and_then(|v| match v.get_ref().as_array() {
                Some(items) => Some(Sp::new(
                    items
                        .iter()
                        .map(|i| Sp::new(to_json(i.get_ref()), i.span()))
                        .collect(),
                    v.span(),
                )),
                None => {
                    ctx.error(
                        v.span(),
                        format!("`enum` of input `{input_name}` must be an array"),
                    );
                    None
                }
            }),
        };
        t.finish(ctx, INPUT);
        out.push(input);
    }
    out
}

fn read_retry(ctx: &mut Ctx<'_>, mut t: TableReader<'_, '_>) -> RawRetry {
    let r = RawRetry {
        span: t.span.clone(),
        max_attempts: t.int(ctx, "max_attempts"),
        backoff: t.string(ctx, "backoff"),
        initial: t.string(ctx, "initial"),
        max: t.string(ctx, "max"),
    };
    t.finish(ctx, RETRY);
    r
}

fn read_step(ctx: &mut Ctx<'_>, id: Sp<String>, mut t: TableReader<'_, '_>) -> RawStep {
    let step = RawStep {
        id,
        span: t.span.clone(),
        kind: t.string(ctx, "kind"),
        agent: t.string(ctx, "agent"),
        skill: t.string(ctx, "skill"),
        needs: t.strings(ctx, "needs"),
        when: t.string(ctx, "when"),
        trigger: t.string(ctx, "trigger"),
        message: t.string(ctx, "message"),
        data: t.get("data").map(read_data),
        prompt: t.string(ctx, "prompt"),
        system: t.string(ctx, "system"),
        fallback: t.string(ctx, "fallback"),
        fields: t
            .table(ctx, "fields")
            .map(|f| read_inputs(ctx, f, "`fields`")),
        continue_on_error: t.bool(ctx, "continue_on_error"),
        timeout: t.string(ctx, "timeout"),
        deadline: t.string(ctx, "deadline"),
        on_timeout: t.string(ctx, "on_timeout"),
        escalate_to: t.strings(ctx, "escalate_to"),
        approvers: t.strings(ctx, "approvers"),
        four_eyes: t.bool(ctx, "four_eyes"),
        quorum: t.int(ctx, "quorum"),
        retry: t.table(ctx, "retry").map(|r| read_retry(ctx, r)),
        for_each: t.string(ctx, "for_each"),
        max_parallel: t.int(ctx, "max_parallel"),
        min_success: t.int(ctx, "min_success"),
        on_budget: t.string(ctx, "on_budget"),
        extend: t.table(ctx, "extend").map(|b| read_budget(ctx, b)),
        repeat_until: t.string(ctx, "repeat_until"),
        max_repeats: t.int(ctx, "max_repeats"),
        on_max_repeats: t.string(ctx, "on_max_repeats"),
        workflow: t.string(ctx, "workflow"),
        input: t.get("input").map(read_data),
        announce_to: t.string(ctx, "announce_to"),
    };
    t.finish(ctx, STEP);
    step
}

/// A budget table (`[workflow] budget`, an approval's `extend`): `{ cost, tokens, calls }`.
fn read_budget(ctx: &mut Ctx<'_>, mut b: TableReader<'_, '_>) -> RawBudget {
    let budget = RawBudget {
        span: b.span(),
        cost: b.number(ctx, "cost"),
        tokens: b.int(ctx, "tokens"),
        calls: b.int(ctx, "calls"),
    };
    b.finish(ctx, BUDGET);
    budget
}

fn read_data(v: &Spanned<DeValue<'_>>) -> Sp<RawData> {
    let data = match v.get_ref() {
        DeValue::String(s) => RawData::Str(s.to_string()),
        DeValue::Array(items) => RawData::Array(items.iter().map(read_data).collect()),
        DeValue::Table(t) => RawData::Object(
            t.iter()
                .map(|(k, v)| (k.get_ref().to_string(), read_data(v)))
                .collect(),
        ),
        other => RawData::Literal(to_json(other)),
    };
    Sp::new(data, v.span())
}

//! A test file (`*.test.toml`): the workflow it runs, with what inputs and as whom, what
//! each agent answers, the answers its questions get, and what the run must come to.
//! Read like the workflow files: every problem at once, each at its `file:line:column`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use orchestrator_core::access::{Actor, Pattern};
use orchestrator_core::config::reader::{Ctx, Sp, TableReader, to_json, type_name};
use orchestrator_core::config::{Diagnostic, did_you_mean, parse_duration};
use orchestrator_core::engine::Usage;
use orchestrator_core::workflow::{AgentTarget, StepKind, Workflow};

use super::expect::{Expectation, Matcher, ROOTS};

/// How long a run may take in virtual time unless the test says (`[test] timeout`).
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(30 * 24 * 3600);

/// One test, read and checked against its workflow.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// `[test] name`, else the file's name without `.test.toml`.
    pub name: String,
    pub file: PathBuf,
    pub workflow: Arc<Workflow>,
    pub input: Map<String, Value>,
    /// Who starts the run (`[test] as`); none: a server without credentials.
    pub starter: Option<Actor>,
    /// How much virtual time the run may take before the test gives up on it.
    pub limit: Duration,
    /// What each agent answers, by name.
    pub agents: BTreeMap<String, AgentScript>,
    /// What a step's agent answers, by step (before the agent's own script).
    pub steps: BTreeMap<String, Vec<Reply>>,
    /// The answers each step's questions get, in order (the last one again after).
    pub answers: BTreeMap<String, Vec<Given>>,
    pub expect: Vec<Expectation>,
    /// The workflows its workflow's workflow steps may run, by id (those in the
    /// workflows' directory).
    pub children: BTreeMap<String, Arc<Workflow>>,
}

/// A scripted agent.
#[derive(Debug, Clone, Default)]
pub struct AgentScript {
    /// The skills it offers (for steps that name a skill, not an agent).
    pub skills: Vec<String>,
    /// Its replies, one per message it is sent, in order; the last answers every
    /// message after it.
    pub replies: Vec<Reply>,
}

/// One reply of a scripted agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Virtual time before it answers.
    pub delay: Option<Duration>,
    pub act: Act,
    /// What the agent reports its task used (tokens, cost), before it answers.
    pub usage: Option<Usage>,
}

/// What a reply does.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Completes the task with an artifact: `text` (or `stream`, chunk by chunk) and
    /// `data`.
    Complete {
        text: Option<String>,
        stream: Vec<String>,
        data: Option<Map<String, Value>>,
    },
    /// The task fails, saying why.
    Fail(String),
    /// The agent rejects the task, saying why.
    Reject(String),
    /// The agent cancels the task itself, saying why.
    Cancel(String),
    /// The agent asks a question (`input-required`); its answer comes from `[answers]`.
    Ask(String),
    /// The agent cannot be reached (a connection error), for this reason.
    Down(String),
}

/// An answer a question gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Given {
    pub text: Option<String>,
    pub data: Option<Map<String, Value>>,
    /// Who answers; none: as on a server without credentials.
    pub by: Option<Actor>,
    /// Virtual time before it is given.
    pub delay: Option<Duration>,
}

/// The keys of each table, for did-you-mean.
const TOP: &[&str] = &["test", "agents", "steps", "answers", "expect"];
const TEST: &[&str] = &["name", "workflow", "input", "as", "timeout"];
const AGENT: &[&str] = &["replies", "skills"];
const STEP: &[&str] = &["replies"];
const REPLY: &[&str] = &[
    "text", "data", "stream", "fail", "reject", "cancel", "ask", "down", "delay", "usage",
];
const USAGE: &[&str] = &["input_tokens", "output_tokens", "cost"];
const ANSWER: &[&str] = &["approve", "text", "data", "as", "delay"];

/// Reads `file` and checks it against its workflow, found by id in `workflows` (or as
/// a path relative to the test file): the test unless it has errors, and every problem
/// found (warnings too).
pub fn load(file: &Path, workflows: &Path) -> (Option<TestCase>, Vec<Diagnostic>) {
    let shown = file.display().to_string();
    let source = match orchestrator_core::config::read_text(file) {
        Ok(s) => s,
        Err(e) => {
            let mut ctx = Ctx::new(&shown, "");
            ctx.error(0..0, format!("cannot read the test: {e}"));
            return (None, ctx.diags);
        }
    };
    let mut ctx = Ctx::new(&shown, &source);
    let case = read(&mut ctx, file, workflows).filter(|_| !ctx.has_errors());
    (case, ctx.diags)
}

fn read(ctx: &mut Ctx<'_>, file: &Path, workflows: &Path) -> Option<TestCase> {
    let (doc, errors) = DeTable::parse_recoverable(ctx.source);
    if let Some(e) = errors.first() {
        ctx.error(
            e.span().unwrap_or(0..0),
            format!("invalid TOML: {}", e.message().trim()),
        );
        return None;
    }
    let mut top = TableReader::new(doc.get_ref(), doc.span(), "the test file");
    let Some(mut test) = top.table_named(ctx, "test", "[test]") else {
        ctx.error(
            0..0,
            "a test file needs a [test] table naming its `workflow`",
        );
        return None;
    };
    let name = test.string(ctx, "name").map_or_else(
        || {
            let stem = file.file_name().map(|n| n.to_string_lossy().into_owned());
            let stem = stem.unwrap_or_default();
            stem.trim_end_matches(".toml")
                .trim_end_matches(".test")
                .to_owned()
        },
        |n| n.value,
    );
    let (workflow, workflow_span) = match test.string(ctx, "workflow") {
        Some(w) => (find_workflow(ctx, &w, file, workflows), w.span),
        None => {
            ctx.error(
                test.span(),
                "[test] needs `workflow`: the id of the workflow to run (or its file)",
            );
            (None, test.span())
        }
    };
    let (input, input_span) = match test.get("input") {
        None => (Map::new(), test.span()),
        Some(v) => match to_json(v.get_ref()) {
            Value::Object(m) => (m, v.span()),
            _ => {
                ctx.error(
                    v.span(),
                    format!(
                        "`input` in [test] must be a table of the workflow's inputs, not {}",
                        type_name(v.get_ref())
                    ),
                );
                (Map::new(), v.span())
            }
        },
    };
    if let Some(w) = &workflow
        && let Err(problems) = w.check_inputs(&input)
    {
        for p in problems {
            ctx.error(input_span.clone(), format!("input {p}"));
        }
    }
    let starter = test.get("as").and_then(|v| actor(ctx, v, "[test]"));
    let limit = match test.string(ctx, "timeout") {
        None => DEFAULT_LIMIT,
        Some(t) => match parse_duration(&t.value) {
            Ok(d) if !d.is_zero() => d,
            Ok(_) => {
                ctx.error(t.span, "`timeout` must be longer than zero");
                DEFAULT_LIMIT
            }
            Err(e) => {
                ctx.error(t.span, format!("`timeout`: {e}"));
                DEFAULT_LIMIT
            }
        },
    };
    test.finish(ctx, TEST);

    let mut agents = BTreeMap::new();
    let mut agent_spans = Vec::new();
    if let Some(table) = top.table_named(ctx, "agents", "[agents]") {
        for (key, value) in table.entries() {
            let what = format!("[agents.{}]", key.value);
            let Some(mut t) = table_of(ctx, value, &what) else {
                continue;
            };
            let replies = replies(ctx, &mut t, &what);
            let skills = t
                .strings(ctx, "skills")
                .map(|s| s.value.into_iter().map(|s| s.value).collect())
                .unwrap_or_default();
            t.finish(ctx, AGENT);
            agent_spans.push(Sp::new(key.value.to_owned(), key.span.clone()));
            agents.insert(key.value.to_owned(), AgentScript { skills, replies });
        }
    }
    let mut steps = BTreeMap::new();
    let mut step_spans = Vec::new();
    if let Some(table) = top.table_named(ctx, "steps", "[steps]") {
        for (key, value) in table.entries() {
            let what = format!("[steps.{}]", key.value);
            let Some(mut t) = table_of(ctx, value, &what) else {
                continue;
            };
            let replies = replies(ctx, &mut t, &what);
            t.finish(ctx, STEP);
            step_spans.push(Sp::new(key.value.to_owned(), key.span.clone()));
            steps.insert(key.value.to_owned(), replies);
        }
    }
    let mut answers = BTreeMap::new();
    let mut answer_spans = Vec::new();
    if let Some(table) = top.table_named(ctx, "answers", "[answers]") {
        for (key, value) in table.entries() {
            let what = format!("the answer to `{}`", key.value);
            let list: Vec<&Spanned<DeValue<'_>>> = match value.get_ref().as_array() {
                Some(items) => items.iter().collect(),
                None => vec![value],
            };
            let mut given = Vec::new();
            for item in list {
                if let Some(g) = answer(ctx, item, &what) {
                    given.push(g);
                }
            }
            answer_spans.push(Sp::new(key.value.to_owned(), key.span.clone()));
            answers.insert(key.value.to_owned(), given);
        }
    }
    let mut expect = Vec::new();
    if let Some(v) = top.get("expect") {
        match v.get_ref().as_table() {
            Some(t) => expectations(ctx, t, "", &mut expect),
            None => ctx.error(
                v.span(),
                "`expect` must be a table of paths and what they must be",
            ),
        }
    }
    top.finish(ctx, TOP);
    if expect.is_empty() {
        ctx.warn(
            0..0,
            "the test expects nothing: add an [expect] table (`state = \"completed\"`, say)",
        );
    }
    let workflow = workflow?;
    let spans = Spans {
        workflow: workflow_span,
        agents: agent_spans,
        steps: step_spans,
        answers: answer_spans,
    };
    let children = children_of(&workflow, workflows);
    check(ctx, &workflow, &agents, &steps, &spans, &expect, &children);
    Some(TestCase {
        name,
        file: file.to_owned(),
        workflow,
        input,
        starter,
        limit,
        agents,
        steps,
        answers,
        expect,
        children,
    })
}

/// The workflows `workflows` holds, by id, when `workflow` runs any as a child run (its
/// workflow steps the test does not script run them for real).
fn children_of(workflow: &Workflow, workflows: &Path) -> BTreeMap<String, Arc<Workflow>> {
    use orchestrator_core::workflow::{self, Options};
    let runs_any = (workflow.steps.iter()).any(|s| matches!(s.kind, StepKind::Workflow { .. }));
    if !runs_any {
        return BTreeMap::new();
    }
    let (loaded, _) = workflow::load_all(&[workflows.to_owned()], Options::default());
    (loaded.into_iter())
        .filter_map(|l| l.workflow)
        .map(|w| (w.id.to_string(), Arc::new(w)))
        .collect()
}

/// The workflow `id` names: a file beside the test (when it ends in `.toml`), else a
/// workflow of that id in `workflows`.
fn find_workflow(
    ctx: &mut Ctx<'_>,
    id: &Sp<String>,
    file: &Path,
    workflows: &Path,
) -> Option<Arc<Workflow>> {
    use orchestrator_core::workflow::{self, Options};
    let options = Options::default();
    if id.value.ends_with(".toml") {
        let path = file.parent().unwrap_or(Path::new(".")).join(&id.value);
        let loaded = workflow::load_file(&path, options);
        return match loaded.workflow {
            Some(w) => Some(Arc::new(w)),
            None => {
                ctx.error(
                    id.span.clone(),
                    format!(
                        "the workflow {} has errors (run `validate` on it)",
                        path.display()
                    ),
                );
                None
            }
        };
    }
    let (loaded, _) = workflow::load_all(&[workflows.to_owned()], options);
    let mut ids = Vec::new();
    let mut broken = Vec::new();
    for l in loaded {
        match l.workflow {
            Some(w) if w.id.as_str() == id.value => return Some(Arc::new(w)),
            Some(w) => ids.push(w.id.to_string()),
            None if l.path.file_stem().is_some_and(|s| s == id.value.as_str()) => {
                ctx.error(
                    id.span.clone(),
                    format!(
                        "the workflow {} has errors (run `validate` on it)",
                        l.path.display()
                    ),
                );
                return None;
            }
            None => broken.push(l.path.display().to_string()),
        }
    }
    let mut hint = match did_you_mean(&id.value, ids.iter().map(String::as_str)) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None if ids.is_empty() => String::new(),
        None => format!(" (there: {})", ids.join(", ")),
    };
    if !broken.is_empty() {
        hint.push_str(&format!(
            "; these have errors, so their ids are unknown: {} (run `validate` on them)",
            broken.join(", ")
        ));
    }
    ctx.error(
        id.span.clone(),
        format!(
            "no workflow `{}` in {}{hint}",
            id.value,
            workflows.display()
        ),
    );
    None
}

fn table_of<'a, 'i>(
    ctx: &mut Ctx<'_>,
    value: &'a Spanned<DeValue<'i>>,
    what: &str,
) -> Option<TableReader<'a, 'i>> {
    match value.get_ref().as_table() {
        Some(t) => Some(TableReader::new(t, value.span(), what)),
        None => {
            ctx.error(
                value.span(),
                format!("{what} must be a table, not {}", type_name(value.get_ref())),
            );
            None
        }
    }
}

fn duration(ctx: &mut Ctx<'_>, t: &mut TableReader<'_, '_>, key: &str) -> Option<Duration> {
    let d = t.string(ctx, key)?;
    match parse_duration(&d.value) {
        Ok(x) => Some(x),
        Err(e) => {
            ctx.error(d.span, format!("`{key}`: {e}"));
            None
        }
    }
}

fn data(ctx: &mut Ctx<'_>, t: &mut TableReader<'_, '_>, what: &str) -> Option<Map<String, Value>> {
    let v = t.get("data")?;
    match to_json(v.get_ref()) {
        Value::Object(m) => Some(m),
        _ => {
            ctx.error(
                v.span(),
                format!(
                    "`data` in {what} must be a table, not {}",
                    type_name(v.get_ref())
                ),
            );
            None
        }
    }
}

/// `replies = [...]` of an agent or a step.
fn replies(ctx: &mut Ctx<'_>, t: &mut TableReader<'_, '_>, what: &str) -> Vec<Reply> {
    let Some(v) = t.get("replies") else {
        ctx.error(t.span(), format!("{what} needs `replies`: what the agent answers, in order (`replies = [{{ text = \"done\" }}]`)"));
        return Vec::new();
    };
    let Some(items) = v.get_ref().as_array() else {
        ctx.error(
            v.span(),
            format!(
                "`replies` in {what} must be an array of replies, not {}",
                type_name(v.get_ref())
            ),
        );
        return Vec::new();
    };
    if items.is_empty() {
        ctx.error(
            v.span(),
            format!("`replies` in {what} is empty: give at least one"),
        );
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = format!("reply {} of {what}", i + 1);
        let Some(mut r) = table_of(ctx, item, &name) else {
            continue;
        };
        let delay = duration(ctx, &mut r, "delay");
        let usage = r.table(ctx, "usage").map(|mut u| {
            let mut tokens =
                |ctx: &mut Ctx<'_>, key: &str| u.int(ctx, key).map_or(0, |n| n.value.max(0) as u64);
            let used = Usage {
                input_tokens: tokens(ctx, "input_tokens"),
                output_tokens: tokens(ctx, "output_tokens"),
                calls: 0,
                cost: u.number(ctx, "cost").map_or(0.0, |c| c.value.max(0.0)),
            };
            u.finish(ctx, USAGE);
            used
        });
        let text = r.string(ctx, "text").map(|s| s.value);
        let data = data(ctx, &mut r, &name);
        let stream = r
            .strings(ctx, "stream")
            .map(|s| s.value.into_iter().map(|s| s.value).collect::<Vec<_>>());
        let fail = r.string(ctx, "fail").map(|s| s.value);
        let reject = r.string(ctx, "reject").map(|s| s.value);
        let ask = r.string(ctx, "ask").map(|s| s.value);
        let down = r.string(ctx, "down").map(|s| s.value);
        let cancel = r.string(ctx, "cancel").map(|s| s.value);
        let span = r.span();
        r.finish(ctx, REPLY);
        let completes = text.is_some() || data.is_some() || stream.is_some();
        let acts = [
            completes,
            fail.is_some(),
            reject.is_some(),
            ask.is_some(),
            down.is_some(),
            cancel.is_some(),
        ];
        let act = match acts.iter().filter(|a| **a).count() {
            0 => {
                ctx.error(span, format!("{name} does nothing: give `text`, `data` or `stream` (it completes), or `fail`, `reject`, `cancel`, `ask` or `down`"));
                continue;
            }
            1 => {
                if completes {
                    if text.is_some() && stream.is_some() {
                        ctx.error(span, format!("{name} has both `text` and `stream`: a reply's text is one or the other"));
                        continue;
                    }
                    Act::Complete {
                        text,
                        stream: stream.unwrap_or_default(),
                        data,
                    }
                } else if let Some(why) = fail {
                    Act::Fail(why)
                } else if let Some(why) = reject {
                    Act::Reject(why)
                } else if let Some(q) = ask {
                    Act::Ask(q)
                } else if let Some(why) = cancel {
                    Act::Cancel(why)
                } else {
                    Act::Down(down.unwrap_or_default())
                }
            }
            _ => {
                ctx.error(span, format!("{name} does two things: a reply completes (`text`, `data`, `stream`), or `fail`s, `reject`s, `cancel`s, `ask`s or is `down`, one of them"));
                continue;
            }
        };
        out.push(Reply { delay, act, usage });
    }
    out
}

/// One answer: `{ approve = true }`, `{ text = "…" }`, `{ data = {…} }`, with `as` and
/// `delay`.
fn answer(ctx: &mut Ctx<'_>, item: &Spanned<DeValue<'_>>, what: &str) -> Option<Given> {
    let mut t = table_of(ctx, item, what)?;
    let approve = t.bool(ctx, "approve").map(|b| b.value);
    let text = t.string(ctx, "text").map(|s| s.value);
    let data = data(ctx, &mut t, what);
    let by = t.get("as").and_then(|v| actor(ctx, v, what));
    let delay = duration(ctx, &mut t, "delay");
    let span = t.span();
    t.finish(ctx, ANSWER);
    let (text, data) = match (approve, text, data) {
        (Some(a), None, None) => (
            None,
            Some(Map::from_iter([("approved".to_owned(), Value::Bool(a))])),
        ),
        (None, text, data) if text.is_some() || data.is_some() => (text, data),
        (None, ..) => {
            ctx.error(
                span,
                format!("{what} says nothing: give `approve = true` (or false), `text` or `data`"),
            );
            return None;
        }
        (Some(_), ..) => {
            ctx.error(
                span,
                format!(
                    "{what} gives `approve` and `text` or `data`: an approval is `approve` alone"
                ),
            );
            return None;
        }
    };
    Some(Given {
        text,
        data,
        by,
        delay,
    })
}

/// Who `as` names: one pattern or several (`"group:hr"`, `["sub:ada", "group:hr"]`),
/// made into someone they all name. Without a `sub:`, its subject is the patterns
/// themselves, so that two people named by different groups are two people.
fn actor(ctx: &mut Ctx<'_>, v: &Spanned<DeValue<'_>>, what: &str) -> Option<Actor> {
    let texts: Vec<(String, std::ops::Range<usize>)> = match v.get_ref() {
        DeValue::String(s) => vec![(s.to_string(), v.span())],
        DeValue::Array(items) => items
            .iter()
            .filter_map(|i| i.get_ref().as_str().map(|s| (s.to_owned(), i.span())))
            .collect(),
        other => {
            ctx.error(v.span(), format!("`as` in {what} must be who acts (`\"group:hr\"`, `\"sub:ada\"`, or a list of them), not {}", type_name(other)));
            return None;
        }
    };
    let mut actor = Actor {
        id: String::new(),
        subject: String::new(),
        name: String::new(),
        groups: Vec::new(),
        roles: Vec::new(),
    };
    let mut token = false;
    for (text, span) in &texts {
        match Pattern::parse(text) {
            Ok(Pattern::Subject(s)) => {
                token = s.starts_with("token:");
                actor.subject = s
                    .split_once('#')
                    .map_or(s.clone(), |(_, sub)| sub.to_owned());
            }
            Ok(Pattern::Group(g)) => actor.groups.push(g),
            Ok(Pattern::Role(r)) => actor.roles.push(r),
            Ok(Pattern::Anyone) => {}
            Err(e) => ctx.error(span.clone(), format!("`as` in {what}: {e}")),
        }
    }
    if actor.subject.is_empty() {
        actor.subject = texts
            .iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join("+");
    }
    actor.id = if token {
        actor.subject.clone()
    } else {
        format!("test#{}", actor.subject)
    };
    actor.name.clone_from(&actor.subject);
    Some(actor)
}

/// The `[expect]` table, its nested tables read as dotted paths (`[expect.steps.x]
/// state = "failed"`, and `steps.x.state = "failed"` unquoted, are `"steps.x.state" =
/// "failed"`); an inline table (`{ contains = "…" }`) is a check.
fn expectations(ctx: &mut Ctx<'_>, table: &DeTable<'_>, prefix: &str, out: &mut Vec<Expectation>) {
    for (key, value) in table.iter() {
        let path = match prefix {
            "" => key.get_ref().to_string(),
            p => format!("{p}.{}", key.get_ref()),
        };
        let line = ctx.source[..key.span().start.min(ctx.source.len())]
            .matches('\n')
            .count()
            + 1;
        match value.get_ref().as_table() {
            Some(t) if !ctx.source[value.span().start..].starts_with('{') => {
                expectations(ctx, t, &path, out);
            }
            _ => match Matcher::read(&to_json(value.get_ref())) {
                Ok(matcher) => match super::expect::parse_path(&path) {
                    Ok(segments) => out.push(Expectation {
                        path,
                        segments,
                        matcher,
                        line,
                        span: key.span(),
                    }),
                    Err(e) => ctx.error(key.span(), format!("`{path}`: {e}")),
                },
                Err(e) => ctx.error(value.span(), format!("`{path}`: {e}")),
            },
        }
    }
}

/// A step script's key: a step, or one item of a fan-out step (`book_tours[1]`).
pub fn split_item(key: &str) -> (&str, Option<usize>) {
    if let Some(open) = key.find('[')
        && let Some(n) = key[open + 1..].strip_suffix(']')
        && let Ok(n) = n.parse()
    {
        return (&key[..open], Some(n));
    }
    (key, None)
}

/// The agents a child run of `workflow` calls (its own children's too, when the
/// workflows' directory has them), pushed to `called`; the steps no agent of the test
/// answers, as (workflow, step, what it calls), to `unscripted`.
fn calls_of_child(
    workflow: &str,
    children: &BTreeMap<String, Arc<Workflow>>,
    agents: &BTreeMap<String, AgentScript>,
    called: &mut Vec<String>,
    unscripted: &mut Vec<(String, String, AgentTarget)>,
    depth: usize,
) {
    let Some(w) = children.get(workflow).filter(|_| depth < 16) else {
        return;
    };
    for s in &w.steps {
        let scripted = match &s.kind {
            StepKind::Agent { target, .. } => match target {
                AgentTarget::Named(a) => {
                    called.push(a.to_string());
                    agents.contains_key(a.as_str())
                }
                AgentTarget::Skill(k) => {
                    let offering = agents.iter().filter(|(_, a)| a.skills.contains(k));
                    let before = called.len();
                    called.extend(offering.map(|(n, _)| n.clone()));
                    called.len() > before
                }
                AgentTarget::Workflow(_) => true,
            },
            StepKind::Workflow { workflow, .. } => {
                calls_of_child(
                    workflow.as_str(),
                    children,
                    agents,
                    called,
                    unscripted,
                    depth + 1,
                );
                true
            }
            _ => true,
        };
        if !scripted && let StepKind::Agent { target, .. } = &s.kind {
            unscripted.push((w.id.to_string(), s.id.to_string(), target.clone()));
        }
    }
}

/// Where the file names things, for its messages.
struct Spans {
    workflow: std::ops::Range<usize>,
    agents: Vec<Sp<String>>,
    steps: Vec<Sp<String>>,
    answers: Vec<Sp<String>>,
}

/// What the file names must be in the workflow: its steps, the agents its steps call,
/// a script for every agent step, answers for questions only.
fn check(
    ctx: &mut Ctx<'_>,
    workflow: &Workflow,
    agents: &BTreeMap<String, AgentScript>,
    steps: &BTreeMap<String, Vec<Reply>>,
    spans: &Spans,
    expect: &[Expectation],
    children: &BTreeMap<String, Arc<Workflow>>,
) {
    let step_ids: Vec<&str> = workflow.steps.iter().map(|s| s.id.as_str()).collect();
    let unknown_step = |ctx: &mut Ctx<'_>, name: &Sp<String>, what: &str| {
        let hint = match did_you_mean(&name.value, step_ids.iter().copied()) {
            Some(s) => format!(" (did you mean `{s}`?)"),
            None => format!(" (its steps: {})", step_ids.join(", ")),
        };
        ctx.error(
            name.span.clone(),
            format!(
                "{what}: workflow `{}` has no step `{}`{hint}",
                workflow.id, name.value
            ),
        );
    };
    // Who each agent step calls, and whether the test scripts it.
    let mut called: Vec<String> = Vec::new();
    for step in &workflow.steps {
        if let Some(a) = &step.announce_to {
            called.push(a.to_string());
        }
        // A workflow step's child run is scripted as an agent named `workflow:<id>`.
        let child;
        let target = match &step.kind {
            StepKind::Agent { target, .. } => target,
            // Run for real when the workflows' directory has it (and the test does not
            // script the step): its agents are called, and must be scripted.
            StepKind::Workflow { workflow, .. } if children.contains_key(workflow.as_str()) => {
                if !steps.keys().any(|k| split_item(k).0 == step.id.as_str()) {
                    let via = step.id.as_str();
                    let mut unscripted = Vec::new();
                    calls_of_child(
                        workflow.as_str(),
                        children,
                        agents,
                        &mut called,
                        &mut unscripted,
                        0,
                    );
                    for (child, id, target) in unscripted {
                        ctx.error(
                            spans.workflow.clone(),
                            format!("step `{id}` of workflow `{child}` (which step `{via}` runs) calls {target}, which the test does not script: {}, or add [steps.{via}] with `replies` to script the whole child run", match &target {
                                AgentTarget::Skill(s) => format!("give an agent `skills = [\"{s}\"]`"),
                                AgentTarget::Named(a) => format!("add [agents.{a}]"),
                                AgentTarget::Workflow(w) => format!("add workflow `{w}`"),
                            }),
                        );
                    }
                }
                continue;
            }
            StepKind::Workflow { workflow, .. } => {
                child = AgentTarget::Named(orchestrator_core::workflow::AgentName::new(
                    orchestrator_core::workflow::child_agent(workflow.as_str()),
                ));
                &child
            }
            _ => continue,
        };
        let id = step.id.as_str();
        let by_item = |k: &String| split_item(k).0 == id;
        let scripted = steps.keys().any(by_item)
            || match target {
                AgentTarget::Named(a) => {
                    called.push(a.to_string());
                    agents.contains_key(a.as_str())
                }
                AgentTarget::Skill(s) => {
                    let offering: Vec<&String> = agents
                        .iter()
                        .filter(|(_, a)| a.skills.contains(s))
                        .map(|(n, _)| n)
                        .collect();
                    called.extend(offering.iter().map(|n| (*n).clone()));
                    !offering.is_empty()
                }
                AgentTarget::Workflow(_) => false,
            };
        if !scripted {
            let how = match target {
                AgentTarget::Named(a) => format!(
                    "add [agents.{a}] (or [steps.{id}]) with `replies = [{{ text = \"done\" }}]`"
                ),
                AgentTarget::Skill(s) => format!(
                    "give an agent `skills = [\"{s}\"]`, or add [steps.{id}] with `replies`"
                ),
                AgentTarget::Workflow(_) => format!("add [steps.{id}] with `replies`"),
            };
            ctx.error(
                spans.workflow.clone(),
                format!("step `{id}` calls {target}, which the test does not script: {how}"),
            );
        }
    }
    for name in &spans.agents {
        if !called.contains(&name.value) {
            let hint = match did_you_mean(&name.value, called.iter().map(String::as_str)) {
                Some(s) => format!(" (did you mean `{s}`?)"),
                None => String::new(),
            };
            ctx.warn(
                name.span.clone(),
                format!(
                    "no step of workflow `{}` calls agent `{}`{hint}",
                    workflow.id, name.value
                ),
            );
        }
    }
    for name in &spans.steps {
        // `[steps."x[2]"]`: item 2 of fan-out step `x`.
        let (id, item) = split_item(&name.value);
        let named = Sp::new(id.to_owned(), name.span.clone());
        match workflow.steps.iter().find(|s| s.id.as_str() == id) {
            None => unknown_step(ctx, &named, "[steps]"),
            Some(s) if item.is_some() && s.for_each.is_none() => ctx.error(
                name.span.clone(),
                format!("step `{id}` has no items (no `for_each`): script it as [steps.{id}]"),
            ),
            Some(s) if !matches!(s.kind, StepKind::Agent { .. } | StepKind::Workflow { .. }) => ctx
                .error(
                    name.span.clone(),
                    format!(
                        "step `{}` calls no agent: only an agent step's replies are scripted",
                        name.value
                    ),
                ),
            Some(_) => {}
        }
    }
    for name in &spans.answers {
        if !step_ids.contains(&name.value.as_str()) {
            unknown_step(ctx, name, "[answers]");
        } else if workflow
            .steps
            .iter()
            .any(|s| s.id.as_str() == name.value && matches!(s.kind, StepKind::Llm { .. }))
        {
            ctx.error(name.span.clone(), format!("step `{}` asks nothing: answers are for approval and input steps, and for agents that ask", name.value));
        }
    }
    for e in expect {
        let root = e.segments.first().map(String::as_str).unwrap_or("");
        if !ROOTS.contains(&root) {
            let hint = did_you_mean(root, ROOTS.iter().copied()).map_or_else(
                || format!(" (a path starts with one of: {})", ROOTS.join(", ")),
                |s| format!(" (did you mean `{s}`?)"),
            );
            ctx.error(
                e.span.clone(),
                format!("`{}`: a run has no `{root}`{hint}", e.path),
            );
        } else if matches!(root, "steps" | "answers")
            && let Some(step) = e.segments.get(1)
            && !step_ids.contains(&step.as_str())
        {
            unknown_step(
                ctx,
                &Sp::new(step.clone(), e.span.clone()),
                &format!("`{}`", e.path),
            );
        }
    }
}

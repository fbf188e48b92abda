//! Example downstream agents: the travel desk (flights, hotels, activities, currency and
//! advice) and the onboarding departments (hr, it, facilities, notifier) of seed 004.
//!
//! They exist so the demo, the README and the tests have real A2A agents to talk to
//! without any network or model: each is an [`A2aServer`] over the protocol layer only,
//! answering with deterministic, plausible data derived from the request. A [`Desk`]
//! decides *what* to answer; [`ExampleAgent`] does the *how* every desk shares — think
//! time, simulated failures, the text streamed in several chunks, the structured result
//! as a data part, questions (`input-required`) and their answers, cancellation.

pub mod onboarding;
pub mod travel;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::llm::{Llm, Piece};
use a2a::RpcError;
use a2a::card::{AgentCapabilities, AgentCard, AgentSkill};
use a2a::client::Binding;
use a2a::server::{
    A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig, SinkError, Versions,
};
use a2a::types::{Artifact, ArtifactId, Message, Part, Role, TaskState};

/// What one request to a desk carries.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The text of the task's first message.
    pub text: String,
    /// Its data parts, merged.
    pub data: Map<String, Value>,
    /// The skill the caller asked for (message metadata `skill`), if it said.
    pub skill: Option<String>,
    /// The client's answer, when this message continues a task the desk asked about.
    pub answer: Option<(String, Map<String, Value>)>,
}

impl Request {
    /// A field of the data as text (numbers and booleans written out).
    pub fn field(&self, key: &str) -> Option<String> {
        match self.data.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// A numeric field, also when templates rendered it as a string.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.data.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Whether the text mentions `word` (case-insensitive).
    pub fn mentions(&self, word: &str) -> bool {
        self.text.to_lowercase().contains(&word.to_lowercase())
    }
}

/// What a desk answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The result: `text` is streamed in chunks, then `data` as the last chunk.
    Done {
        text: String,
        data: Map<String, Value>,
    },
    /// A question for the client (`input-required`), with a data part (e.g. options).
    Ask {
        question: String,
        data: Map<String, Value>,
    },
    /// The request cannot be served as asked (`failed`, saying why).
    Refuse(String),
}

/// One example agent's knowledge: its card and its answers.
pub trait Desk: Send + Sync + 'static {
    /// The agent's name on its card.
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// `(id, name, description, example)` of each skill.
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)>;
    fn handle(&self, request: &Request) -> Reply;
}

/// How the example agents behave beyond their data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Behaviour {
    /// Think time before the first chunk.
    pub latency: Duration,
    /// Time between chunks.
    pub chunk_delay: Duration,
    /// Share of new tasks that fail with a simulated outage (0.0 to 1.0), to show retries.
    pub failure_rate: f64,
    /// Seeds the failure draws: the same seed fails the same requests.
    pub seed: u64,
}

impl Default for Behaviour {
    fn default() -> Self {
        Self {
            latency: Duration::from_millis(250),
            chunk_delay: Duration::from_millis(60),
            failure_rate: 0.0,
            seed: 7,
        }
    }
}

/// A [`Desk`] served as an A2A agent.
pub struct ExampleAgent {
    desk: Arc<dyn Desk>,
    behaviour: Behaviour,
    requests: AtomicU64,
    /// Writes the answers' text from the desk's data, when set.
    pub model: Option<Llm>,
}

impl ExampleAgent {
    pub fn new(desk: Arc<dyn Desk>, behaviour: Behaviour) -> Self {
        Self {
            desk,
            behaviour,
            requests: AtomicU64::new(0),
            model: None,
        }
    }

    /// Streams the answer's text in the model's words, from the desk's facts, token by
    /// token as the model writes it; false when the model fails (the desk's own text is
    /// sent instead, replacing what was written).
    async fn write(
        &self,
        llm: &Llm,
        (ctx, events): (&RequestContext, &EventSink),
        request: &Request,
        (text, data): (&str, &Map<String, Value>),
        used: &mut Option<(u64, u64)>,
    ) -> Result<bool, RpcError> {
        use futures::StreamExt;
        let system = format!(
            "You are {}, an agent that {}. Answer the request in a few sentences using only the facts given; do not invent prices, times or names.",
            self.desk.name(),
            self.desk.description().to_lowercase()
        );
        let user = format!(
            "Request: {}\n\nFacts (JSON): {}\n\nA plain summary of them: {text}",
            request.text,
            Value::Object(data.clone())
        );
        let mut tokens = match llm.stream(Some(system), user).await {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(agent = self.desk.name(), error = %e, "the model failed; answering without it");
                return Ok(false);
            }
        };
        let mut sent = 0;
        loop {
            let next = tokio::select! {
                n = tokens.next() => n,
                () = ctx.stopped() => return Ok(true),
            };
            match next {
                None => return Ok(sent > 0),
                Some(Ok(Piece::Used {
                    input_tokens,
                    output_tokens,
                })) => *used = Some((input_tokens, output_tokens)),
                Some(Ok(Piece::Text(t))) if t.is_empty() => {}
                Some(Ok(Piece::Text(t))) => {
                    let a = Artifact::new(ArtifactId::new("result"), vec![Part::text(t)])
                        .with_name(self.desk.name());
                    events.artifact(a, sent > 0, false).await.map_err(sink)?;
                    sent += 1;
                }
                Some(Err(e)) => {
                    tracing::warn!(agent = self.desk.name(), error = %e, "the model failed; answering without it");
                    return Ok(false);
                }
            }
        }
    }

    /// The agent's card, served at `url`.
    pub fn card(&self, url: &str) -> AgentCard {
        card(self.desk.as_ref(), url)
    }

    /// Whether the `n`th new task fails (a deterministic draw from the seed).
    fn fails(&self, n: u64) -> bool {
        if self.behaviour.failure_rate <= 0.0 {
            return false;
        }
        let draw = fnv(&format!("{}:{}:{n}", self.behaviour.seed, self.desk.name()));
        (draw % 10_000) as f64 / 10_000.0 < self.behaviour.failure_rate
    }

    async fn pause(&self, ctx: &RequestContext, d: Duration) -> bool {
        tokio::select! {
            () = ctx.stopped() => false,
            () = tokio::time::sleep(d) => true,
        }
    }
}

/// The card of a desk at `url`.
pub fn card(desk: &dyn Desk, url: &str) -> AgentCard {
    let mut card = AgentCard::new(desk.name(), desk.description(), url);
    card.capabilities = Some(AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        ..Default::default()
    });
    card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    card.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    card.skills = desk
        .skills()
        .into_iter()
        .map(|(id, name, description, example)| AgentSkill {
            examples: vec![example.into()],
            ..AgentSkill::new(id, name, description, vec!["example".into()])
        })
        .collect();
    card
}

fn parts_of(message: &Message) -> (String, Map<String, Value>) {
    let mut data = Map::new();
    for d in message.parts.iter().filter_map(Part::as_object) {
        data.extend(d.clone());
    }
    (message.text(), data)
}

/// Splits `text` into about `n` chunks at word boundaries, keeping every character.
pub fn chunks(text: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let target = text.len().div_ceil(n).max(1);
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, word) in text.split_inclusive(' ').enumerate() {
        if i > 0 && current.len() >= target {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(word);
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}

fn sink(e: SinkError) -> RpcError {
    RpcError::internal(e.to_string())
}

impl AgentExecutor for ExampleAgent {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        let asked = ctx
            .task
            .as_ref()
            .filter(|t| t.state() == TaskState::InputRequired);
        // The request is the task's first user message; this one may be the answer.
        let mut request = Request::default();
        let first = asked
            .and_then(|t| t.history.iter().find(|m| m.role() == Role::User))
            .unwrap_or(&ctx.message);
        (request.text, request.data) = parts_of(first);
        let meta = first.metadata.as_ref().or(ctx.metadata.as_ref());
        request.skill = meta
            .and_then(|m| m.get("skill"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if asked.is_some() {
            request.answer = Some(parts_of(&ctx.message));
        }
        if !self.pause(&ctx, self.behaviour.latency).await {
            return Ok(());
        }
        if asked.is_none() {
            let n = self.requests.fetch_add(1, Ordering::Relaxed);
            if self.fails(n) {
                return events
                    .fail(&format!(
                        "{} is temporarily unavailable (simulated outage, failure rate {:.0}%)",
                        self.desk.name(),
                        self.behaviour.failure_rate * 100.0
                    ))
                    .await
                    .map_err(sink);
            }
        }
        match self.desk.handle(&request) {
            Reply::Refuse(why) => events.fail(&why).await.map_err(sink),
            Reply::Ask { question, data } => {
                let parts = vec![Part::text(question), Part::data(data)];
                events
                    .status(
                        TaskState::InputRequired,
                        Some(Message::new(Role::Agent, parts)),
                    )
                    .await
                    .map_err(sink)
            }
            Reply::Done { text, data } => {
                events.working(Some("on it")).await.map_err(sink)?;
                let id = ArtifactId::new("result");
                // What the model said the answer used, when it says.
                let mut used = None;
                let written = match &self.model {
                    Some(llm) => {
                        self.write(llm, (&ctx, &events), &request, (&text, &data), &mut used)
                            .await?
                    }
                    None => false,
                };
                if ctx.cancel.is_cancelled() || ctx.shutdown.is_cancelled() {
                    return Ok(());
                }
                if !written {
                    for (i, piece) in chunks(&text, 4).into_iter().enumerate() {
                        if i > 0 && !self.pause(&ctx, self.behaviour.chunk_delay).await {
                            return Ok(());
                        }
                        let a = Artifact::new(id.clone(), vec![Part::text(piece)])
                            .with_name(self.desk.name());
                        // Replaces whatever a failing model had written.
                        events.artifact(a, i > 0, false).await.map_err(sink)?;
                    }
                    if !self.pause(&ctx, self.behaviour.chunk_delay).await {
                        return Ok(());
                    }
                }
                let a = Artifact::new(id, vec![Part::data(data)]).with_name(self.desk.name());
                events.artifact(a, true, true).await.map_err(sink)?;
                // What the model used for it, reported as agents that call one report
                // it (OpenTelemetry GenAI's names); without a model (or its count),
                // what one would have: about 4 characters a token, read and written.
                let mut done = events.status_update(TaskState::Completed, None);
                let (read, written) = used.unwrap_or((
                    ctx.message.text().chars().count().div_ceil(4) as u64,
                    text.chars().count().div_ceil(4) as u64,
                ));
                done.metadata = Some(
                    serde_json::Map::from_iter([
                        ("gen_ai.usage.input_tokens".to_owned(), read.into()),
                        ("gen_ai.usage.output_tokens".to_owned(), written.into()),
                    ])
                    .into(),
                );
                events.send(done).await.map_err(sink)
            }
        }
    }
}

/// Which A2A generations the example agents speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Speaks {
    /// A2A 1.0 (JSON-RPC and HTTP+JSON) and A2A 0.3 (JSON-RPC), on one card.
    #[default]
    Both,
    /// A2A 1.0 only: a v1.0 card; v0.3 requests refused.
    #[value(name = "1.0")]
    V1_0,
    /// A2A 0.3 only: a v0.3 card; v1.0 requests refused.
    #[value(name = "0.3")]
    V0_3,
    /// The agents take turns: 1.0 only, 0.3 only, both, 1.0 only called over
    /// HTTP+JSON, …
    Mixed,
}

impl Speaks {
    /// What the `i`-th agent of a fleet serves, and the binding `agents.toml` asks for
    /// (none: the card's choice).
    pub fn for_agent(self, i: usize) -> (Versions, Option<Binding>) {
        match self {
            Speaks::Both => (Versions::Both, None),
            Speaks::V1_0 => (Versions::V1_0, None),
            Speaks::V0_3 => (Versions::V0_3, None),
            Speaks::Mixed => [
                (Versions::V1_0, None),
                (Versions::V0_3, None),
                (Versions::Both, None),
                (Versions::V1_0, Some(Binding::HttpJson)),
            ][i % 4],
        }
    }
}

/// Which example agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    Travel,
    Onboarding,
}

impl Set {
    /// The desks of this set, under the names `agents.toml` gives them, with the ports
    /// it expects.
    pub fn desks(self) -> Vec<(&'static str, u16, Arc<dyn Desk>)> {
        match self {
            Set::Travel => travel::desks(),
            Set::Onboarding => onboarding::desks(),
        }
    }
}

/// Where a fleet's agents listen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ports {
    /// The ports `agents.toml` names.
    AgentsToml,
    /// Free ones (the demo, tests).
    Free,
    /// This one and those after it, an agent each in order.
    From(u16),
}

/// Example agents serving on loopback. Dropping it does not stop them: call
/// [`Fleet::shutdown`].
pub struct Fleet {
    /// `(name, base URL)` of each agent, in order.
    pub agents: Vec<(String, String)>,
    /// The generations each agent serves, in the same order.
    pub generations: Vec<Versions>,
    /// The binding `agents.toml` asks for each agent, in the same order.
    pub bindings: Vec<Option<Binding>>,
    stop: CancellationToken,
    tracker: TaskTracker,
}

impl Fleet {
    /// Starts the desks of `sets` on `host`, each on its `agents.toml` port, or on a
    /// free port when `free_ports`.
    pub async fn start(
        sets: &[Set],
        behaviour: Behaviour,
        host: &str,
        free_ports: bool,
    ) -> std::io::Result<Fleet> {
        let ports = if free_ports {
            Ports::Free
        } else {
            Ports::AgentsToml
        };
        Self::start_only(sets, &[], behaviour, host, ports, None, Speaks::Both).await
    }

    /// Like [`Fleet::start`], with only the agents named in `only` (all when empty),
    /// speaking the generations `speaks` says.
    pub async fn start_only(
        sets: &[Set],
        only: &[String],
        behaviour: Behaviour,
        host: &str,
        ports: Ports,
        llm: Option<&Llm>,
        speaks: Speaks,
    ) -> std::io::Result<Fleet> {
        let stop = CancellationToken::new();
        let tracker = TaskTracker::new();
        let mut agents = Vec::new();
        let mut generations = Vec::new();
        let mut bindings = Vec::new();
        for set in sets {
            for (name, port, desk) in set.desks() {
                if !only.is_empty() && !only.iter().any(|o| o == name) {
                    continue;
                }
                let port = match ports {
                    Ports::AgentsToml => port,
                    Ports::Free => 0,
                    Ports::From(first) => {
                        first.checked_add(agents.len() as u16).ok_or_else(|| {
                            std::io::Error::new(
                                std::io::ErrorKind::InvalidInput,
                                format!("no port after {first} for the {name} agent"),
                            )
                        })?
                    }
                };
                let listener = tokio::net::TcpListener::bind((host, port))
                    .await
                    .map_err(|e| {
                        std::io::Error::new(
                            e.kind(),
                            format!("cannot listen on {host}:{port} for the {name} agent: {e}"),
                        )
                    })?;
                let url = format!("http://{}/", listener.local_addr()?);
                let mut agent = ExampleAgent::new(desk, behaviour);
                agent.model = llm.cloned();
                let card = agent.card(&url);
                let (serves, binding) = speaks.for_agent(agents.len());
                let config = ServerConfig {
                    generations: serves,
                    ..ServerConfig::default()
                };
                let server = A2aServer::builder(agent, card).config(config).build();
                let signal = stop.clone().cancelled_owned();
                tracker.spawn(async move {
                    if let Err(e) = server.serve(listener, signal).await {
                        tracing::warn!(error = %e, "an example agent stopped");
                    }
                });
                agents.push((name.to_owned(), url));
                generations.push(serves);
                bindings.push(binding);
            }
        }
        Ok(Fleet {
            agents,
            generations,
            bindings,
            stop,
            tracker,
        })
    }

    /// An `agents.toml` naming these agents.
    pub fn agents_toml(&self) -> String {
        self.agents
            .iter()
            .zip(&self.bindings)
            .map(|((name, url), binding)| {
                let binding = binding
                    .map(|b| format!("binding = \"{}\"\n", b.config_name()))
                    .unwrap_or_default();
                format!("[agents.{name}]\nurl = \"{url}\"\n{binding}")
            })
            .collect()
    }

    /// Stops every agent and waits for them.
    pub async fn shutdown(self) {
        self.stop.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

/// The command line of `cargo run --example travel_agents` / `onboarding_agents`.
#[derive(Debug, clap::Parser)]
#[command(about = "Serves example A2A agents on the ports of agents.toml")]
pub struct ExampleArgs {
    /// Think time before each answer.
    #[arg(long, default_value = "250ms", value_parser = orchestrator_core::config::parse_duration)]
    pub latency: Duration,
    /// Time between streamed chunks.
    #[arg(long, default_value = "60ms", value_parser = orchestrator_core::config::parse_duration)]
    pub chunk_delay: Duration,
    /// Share of new tasks that fail with a simulated outage (0 to 1), to show retries.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub failure_rate: f64,
    /// Seeds the failure draws.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Serve only these agents (repeatable), e.g. --only hotels.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Listen on this port and those after it, an agent each in order, instead of the
    /// ports of agents.toml (the agents.toml lines to use are printed).
    #[arg(long, value_name = "PORT", conflicts_with = "port")]
    pub base_port: Option<u16>,
    /// With --only NAME (one agent): listen on this port.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// The A2A generations the agents speak: both, 1.0, 0.3, or mixed (they take turns).
    #[arg(long, value_enum, default_value = "both")]
    pub protocol: Speaks,
    /// A language model that writes the agents' answers from their data.
    #[command(flatten)]
    pub llm: crate::llm::LlmArgs,
}

impl ExampleArgs {
    pub fn behaviour(&self) -> Behaviour {
        Behaviour {
            latency: self.latency,
            chunk_delay: self.chunk_delay,
            failure_rate: self.failure_rate,
            seed: self.seed,
        }
    }
}

/// A failure rate: a number from 0 to 1.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("expected a number from 0 to 1, got {s:?}")),
    }
}

/// `main` of the example binaries: serves `set` until Ctrl-C.
pub async fn serve_example(set: Set) -> std::io::Result<()> {
    use clap::Parser;
    let args = ExampleArgs::parse();
    let names: Vec<&str> = set.desks().iter().map(|d| d.0).collect();
    if let Some(bad) = args.only.iter().find(|n| !names.contains(&n.as_str())) {
        eprintln!(
            "error: --only {bad}: no such agent here (agents: {})",
            names.join(", ")
        );
        std::process::exit(2);
    }
    if args.port.is_some() && args.only.len() != 1 {
        eprintln!("error: --port is for one agent: name it with --only NAME (or use --base-port)");
        std::process::exit(2);
    }
    let ports = match args.port.or(args.base_port) {
        Some(p) => Ports::From(p),
        None => Ports::AgentsToml,
    };
    let llm = args
        .llm
        .config(None)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?
        .map(Llm::new);
    let fleet = match Fleet::start_only(
        &[set],
        &args.only,
        args.behaviour(),
        &args.host,
        ports,
        llm.as_ref(),
        args.protocol,
    )
    .await
    {
        Ok(fleet) => fleet,
        Err(e) => {
            // Said plainly (the address and why), not as a Debug dump of the io error.
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    for ((name, url), serves) in fleet.agents.iter().zip(&fleet.generations) {
        say!(
            "{name:<11} listening at {url}  (A2A {})",
            speaks_label(*serves)
        )?;
    }
    if ports == Ports::AgentsToml {
        say!("(the names and ports of agents.toml; Ctrl-C stops them)")?;
    } else {
        say!("(not the ports of agents.toml: point it at these; Ctrl-C stops them)\n")?;
        say!("{}", fleet.agents_toml())?;
    }
    let _ = tokio::signal::ctrl_c().await;
    fleet.shutdown().await;
    Ok(())
}

/// How a fleet listing names what an agent speaks.
pub fn speaks_label(g: Versions) -> &'static str {
    match g {
        Versions::Both => "1.0 and 0.3",
        Versions::V1_0 => "1.0 only",
        Versions::V0_3 => "0.3 only",
    }
}

/// FNV-1a: a stable hash, so the same request always gets the same data.
pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Picks one of `options` by the hash of `key`.
pub fn pick<'a>(options: &[&'a str], key: &str) -> &'a str {
    options[(fnv(key) % options.len() as u64) as usize]
}

/// `YYYY-MM-DD` plus `days`, or `None` if the date does not parse.
pub fn add_days(date: &str, days: i64) -> Option<String> {
    let mut it = date.trim().splitn(3, '-');
    let y: i32 = it.next()?.parse().ok()?;
    let m: u8 = it.next()?.parse().ok()?;
    let d: u8 = it.next()?.parse().ok()?;
    let month = time::Month::try_from(m).ok()?;
    let date = time::Date::from_calendar_date(y, month, d).ok()?;
    let later = date.checked_add(time::Duration::days(days))?;
    Some(format!(
        "{:04}-{:02}-{:02}",
        later.year(),
        u8::from(later.month()),
        later.day()
    ))
}

/// A data object from pairs.
pub fn object(pairs: impl IntoIterator<Item = (&'static str, Value)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_every_character() {
        let text = "Outbound TP 1351 London 07:05 to Lisbon 09:50, return five nights later";
        let c = chunks(text, 4);
        assert!(c.len() >= 3 && c.len() <= 5, "{c:?}");
        assert_eq!(c.concat(), text);
        assert_eq!(chunks("one", 4), ["one"]);
        assert_eq!(chunks("", 4), [""]);
    }

    #[test]
    fn dates_add_up_across_months() {
        assert_eq!(add_days("2027-02-26", 5).as_deref(), Some("2027-03-03"));
        assert_eq!(add_days("next week", 5), None);
    }
}

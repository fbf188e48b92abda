//! The loopback agents the benchmark calls, served in the benchmark's own process (the
//! orchestrator runs in a process of its own, so its memory is measured alone). Each
//! does the least an agent can: the floor the orchestrator is compared against.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use a2a::RpcError;
use a2a::card::AgentCard;
use a2a::server::{A2aServer, AgentExecutor, EventSink, RequestContext, ServerConfig};
use a2a::types::{Artifact, ArtifactId, Part};

/// What an agent does with each task.
#[derive(Clone)]
enum Behaviour {
    /// Answers at once: one artifact echoing the message, then `completed`.
    Instant,
    /// The same after a pause.
    Sleep(Duration),
    /// Streams `count` chunks of one artifact, `gap` apart; each chunk's text is the
    /// nanoseconds since `epoch` at which it was sent. With a `gate`, not before it
    /// opens (10 s at most).
    Chunks {
        count: usize,
        gap: Duration,
        epoch: Instant,
        gate: Option<Arc<tokio::sync::Notify>>,
    },
    /// Counts the task, then works until released.
    Hold {
        arrived: Arc<AtomicUsize>,
        release: CancellationToken,
    },
}

/// An agent: what it does, and the count of tasks every agent has been given.
struct BenchAgent(Behaviour, Arc<AtomicUsize>);

impl AgentExecutor for BenchAgent {
    async fn execute(&self, ctx: RequestContext, events: EventSink) -> Result<(), RpcError> {
        self.1.fetch_add(1, Ordering::Relaxed);
        let echo = |text: String| Artifact::new(ArtifactId::new("out"), vec![Part::text(text)]);
        match &self.0 {
            Behaviour::Instant => {
                let _ = events.artifact(echo(ctx.message.text()), false, true).await;
            }
            Behaviour::Sleep(pause) => {
                tokio::time::sleep(*pause).await;
                let _ = events.artifact(echo(ctx.message.text()), false, true).await;
            }
            Behaviour::Chunks {
                count,
                gap,
                epoch,
                gate,
            } => {
                if let Some(gate) = gate {
                    let _ = tokio::time::timeout(Duration::from_secs(10), gate.notified()).await;
                }
                for i in 0..*count {
                    let stamp = epoch.elapsed().as_nanos().to_string();
                    let chunk = Artifact::new(ArtifactId::new("stream"), vec![Part::text(stamp)]);
                    let _ = events.artifact(chunk, i > 0, i + 1 == *count).await;
                    tokio::time::sleep(*gap).await;
                }
            }
            Behaviour::Hold { arrived, release } => {
                // Like any slow agent: say it is working, then work.
                let _ = events.working(None).await;
                arrived.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = release.cancelled() => {}
                    () = ctx.stopped() => return Ok(()),
                }
            }
        }
        let _ = events.complete(None).await;
        Ok(())
    }
}

/// How the benchmark's agents are reached (`bench --agent-http`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentHttp {
    /// HTTP/2 without TLS, one connection to each agent ("prior knowledge").
    #[default]
    H2c,
    /// HTTP/1.1 without TLS, a pool of connections to each agent.
    Http1,
    /// HTTP/2 over TLS (by ALPN), the agents' certificate from a loopback authority.
    Tls,
}

/// The benchmark's loopback authority and the agents' certificate (`127.0.0.1`, valid
/// from 2020 to 2126). Their key is here for anyone to read: nothing trusts the authority but
/// the agents file a benchmark writes for its own agents.
const TLS_CA: &str = include_str!("tls/ca.pem");
const TLS_CERT: &str = include_str!("tls/agent.pem");
const TLS_KEY: &str = include_str!("tls/agent.key");

/// The benchmark's agents as `bench` is asked to run them: how they are reached, and how
/// long the diamond's agent (`fast`) takes to answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentSetup {
    pub http: AgentHttp,
    pub pause: Duration,
}

/// The benchmark's agents, each on its own loopback port; stopped when dropped.
pub struct Agents {
    /// `(name, url)` for agents.toml.
    pub urls: Vec<(&'static str, String)>,
    /// How they are reached.
    pub http: AgentHttp,
    /// The authority their certificate is from (a file), when they speak TLS.
    pub tls_ca: Option<std::path::PathBuf>,
    /// How many tasks the `held` agent has received.
    pub held: Arc<AtomicUsize>,
    /// How many tasks the agents have received, all of them together: the calls an
    /// orchestrator made.
    pub tasks: Arc<AtomicUsize>,
    /// Releases the `held` agent's tasks.
    release: CancellationToken,
    /// A loopback OTLP/HTTP receiver (`OTEL_EXPORTER_OTLP_ENDPOINT`) that takes every
    /// export and keeps nothing but the count of bytes received.
    pub otlp: String,
    pub otlp_bytes: Arc<AtomicUsize>,
    stop: CancellationToken,
    servers: JoinSet<()>,
    /// The `chunky` agent's thread (see [`Agents::start`]).
    apart: Option<std::thread::JoinHandle<()>>,
}

/// How the `chunky` agent streams: chunks per task, the pause between them, the
/// instant its stamps count from, and what it waits for before streaming (a subscriber
/// on another replica to be there, say).
pub struct ChunkPlan {
    pub count: usize,
    pub gap: Duration,
    pub epoch: Instant,
    pub gate: Option<Arc<tokio::sync::Notify>>,
}

impl Agents {
    /// Starts `fast` (instant, or after `setup.pause`), `sleepy` (`pause`, then done),
    /// `chunky` (`chunks`) and `held` (until [`Agents::release`]), reached as `setup`
    /// says.
    pub async fn start(
        pause: Duration,
        chunks: ChunkPlan,
        setup: AgentSetup,
    ) -> std::io::Result<Agents> {
        let tls = match setup.http {
            AgentHttp::Tls => Some(tls_files()?),
            AgentHttp::H2c | AgentHttp::Http1 => None,
        };
        let held = Arc::new(AtomicUsize::new(0));
        let tasks = Arc::new(AtomicUsize::new(0));
        let release = CancellationToken::new();
        let stop = CancellationToken::new();
        let otlp_bytes = Arc::new(AtomicUsize::new(0));
        let otlp_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let mut agents = Agents {
            urls: Vec::new(),
            http: setup.http,
            tls_ca: tls.as_ref().map(|t| t.ca.clone()),
            held: held.clone(),
            tasks: tasks.clone(),
            release: release.clone(),
            otlp: format!("http://{}", otlp_listener.local_addr()?),
            otlp_bytes: otlp_bytes.clone(),
            stop: stop.clone(),
            servers: JoinSet::new(),
            apart: None,
        };
        // An empty body is an empty ExportTraceServiceResponse: everything accepted.
        let sink = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| async move {
                otlp_bytes.fetch_add(body.len(), Ordering::Relaxed);
                (
                    [(axum::http::header::CONTENT_TYPE, "application/x-protobuf")],
                    "",
                )
            }),
        );
        let sink_stop = stop.clone();
        agents.servers.spawn(async move {
            let _ = axum::serve(otlp_listener, sink)
                .with_graceful_shutdown(sink_stop.cancelled_owned())
                .await;
        });
        let fast = match setup.pause {
            Duration::ZERO => Behaviour::Instant,
            pause => Behaviour::Sleep(pause),
        };
        let all = [
            ("fast", fast),
            ("sleepy", Behaviour::Sleep(pause)),
            (
                "chunky",
                Behaviour::Chunks {
                    count: chunks.count,
                    gap: chunks.gap,
                    epoch: chunks.epoch,
                    gate: chunks.gate.clone(),
                },
            ),
            (
                "held",
                Behaviour::Hold {
                    arrived: held,
                    release,
                },
            ),
        ];
        for (name, behaviour) in all {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            listener.set_nonblocking(true)?;
            let scheme = if tls.is_some() { "https" } else { "http" };
            let url = format!("{scheme}://{}/", listener.local_addr()?);
            let mut card = AgentCard::new(name, "a benchmark agent", &url);
            card.capabilities_mut().streaming = Some(true);
            card.default_input_modes = vec!["text/plain".into()];
            card.default_output_modes = vec!["text/plain".into()];
            // Every held task is a stream on the orchestrator's one HTTP/2 connection.
            let config = ServerConfig {
                http2_max_streams: 1_000_000,
                tls: match &tls {
                    Some(t) => Some(Arc::new(
                        a2a::server::CertFiles::open(&t.cert, &t.key)
                            .map_err(std::io::Error::other)?,
                    )),
                    None => None,
                },
                ..ServerConfig::default()
            };
            let apart = matches!(behaviour, Behaviour::Chunks { .. });
            let server = A2aServer::builder(BenchAgent(behaviour, tasks.clone()), card)
                .config(config)
                .build();
            let stop = stop.clone();
            if apart {
                // The relay's chunks are stamped as they are sent: served on a thread
                // of its own, so that sending one does not wait behind the load's
                // clients and the other agents on this process's runtime.
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                agents.apart = Some(std::thread::spawn(move || {
                    runtime.block_on(async move {
                        if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                            let _ = server.serve(listener, stop.cancelled_owned()).await;
                        }
                    })
                }));
            } else {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                agents.servers.spawn(async move {
                    let _ = server.serve(listener, stop.cancelled_owned()).await;
                });
            }
            agents.urls.push((name, url));
        }
        Ok(agents)
    }

    /// The URL of the agent called `name`.
    pub fn url(&self, name: &str) -> &str {
        self.urls
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, u)| u.as_str())
            .expect("a benchmark agent")
    }

    /// Lets every held task complete.
    pub fn release(&self) {
        self.release.cancel();
    }

    /// Stops the servers and waits for them.
    pub async fn stop(mut self) {
        self.release.cancel();
        self.stop.cancel();
        while self.servers.join_next().await.is_some() {}
        if let Some(apart) = self.apart.take() {
            let _ = tokio::task::spawn_blocking(move || apart.join()).await;
        }
    }
}

/// The loopback authority, certificate and key, as files (in a directory of their own
/// under the system's temporary one).
struct TlsFiles {
    ca: std::path::PathBuf,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
}

fn tls_files() -> std::io::Result<TlsFiles> {
    let dir =
        std::env::temp_dir().join(format!("a2a-orchestrator-bench-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let files = TlsFiles {
        ca: dir.join("ca.pem"),
        cert: dir.join("agent.pem"),
        key: dir.join("agent.key"),
    };
    std::fs::write(&files.ca, TLS_CA)?;
    std::fs::write(&files.cert, TLS_CERT)?;
    std::fs::write(&files.key, TLS_KEY)?;
    Ok(files)
}

impl Drop for Agents {
    /// Stops the servers (and removes the TLS files): the tasks go with their set, the
    /// `chunky` agent's thread when its server has stopped.
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(dir) = self.tls_ca.as_ref().and_then(|ca| ca.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

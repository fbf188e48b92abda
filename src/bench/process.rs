//! The benchmark's scratch directory (its workflows and agents file) and the
//! orchestrator under test, `serve` in a child process killed when dropped.

use super::agents::{AgentHttp, Agents};
use super::scenarios::Upstream;
use super::{CHAIN_STEPS, client};
use a2a::client::A2aClient;
use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The benchmark's workflows and agents file, in a temporary directory removed on drop.
pub(super) struct Scratch {
    pub(super) path: PathBuf,
}

impl Scratch {
    pub(super) fn new(agents: &Agents) -> anyhow::Result<Scratch> {
        let path = std::env::temp_dir().join(format!(
            "a2a-orchestrator-bench-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let scratch = Scratch { path };
        let workflows = scratch.path.join("workflows");
        std::fs::create_dir_all(&workflows)
            .with_context(|| format!("cannot create {}", workflows.display()))?;
        // The agents serve both generations: `agents.toml` lets the card choose (1.0),
        // `agents-v0_3.toml` pins 0.3, for the comparison of the two downstream.
        let mut agents_toml = String::new();
        let mut agents_v03 = String::new();
        let mut agents_grpc = String::new();
        // HTTP/2 only (`http2 = true`): without TLS from the first byte, over TLS by ALPN.
        let http2 = agents.http != AgentHttp::Http1;
        let tls = match &agents.tls_ca {
            Some(ca) => format!("tls = {{ ca_file = {:?} }}\n", ca.display().to_string()),
            None => String::new(),
        };
        for (name, url) in &agents.urls {
            let entry = format!(
                "[agents.{name}]\nurl = \"{url}\"\nmax_concurrent = 100000\nhttp2 = {http2}\n{tls}"
            );
            agents_toml.push_str(&format!("{entry}\n"));
            agents_v03.push_str(&format!("{entry}protocol = \"0.3\"\n\n"));
            agents_grpc.push_str(&format!("{entry}binding = \"grpc\"\n\n"));
        }
        let mut chain = String::from(
            "[workflow]\nid = \"chain\"\ndescription = \"ten steps, one after another\"\n",
        );
        for i in 1..=CHAIN_STEPS {
            chain.push_str(&format!(
                "\n[steps.s{i}]\nagent = \"fast\"\nmessage = \"step {i}\"\n"
            ));
            if i > 1 {
                chain.push_str(&format!("needs = [\"s{}\"]\n", i - 1));
            }
        }
        let files = [
            (AGENTS, agents_toml),
            (AGENTS_V0_3, agents_v03),
            (AGENTS_GRPC, agents_grpc),
            ("workflows/chain.toml", chain),
            ("workflows/diamond.toml", DIAMOND.to_owned()),
            ("workflows/fanout.toml", FANOUT.to_owned()),
            ("workflows/relay.toml", RELAY.to_owned()),
            ("workflows/hold.toml", HOLD.to_owned()),
        ];
        for (name, text) in files {
            let file = scratch.path.join(name);
            std::fs::write(&file, text)
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        Ok(scratch)
    }
}

/// The agents file of the scratch directory: the card's choice of generation (1.0).
pub(super) const AGENTS: &str = "agents.toml";
/// The same agents, called over A2A 0.3.
pub(super) const AGENTS_V0_3: &str = "agents-v0_3.toml";
/// The same agents, called over gRPC.
pub(super) const AGENTS_GRPC: &str = "agents-grpc.toml";

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

pub(super) const DIAMOND: &str = r#"[workflow]
id = "diamond"
description = "one step, two in parallel, one join"

[steps.top]
agent = "fast"
message = "top"

[steps.left]
agent = "fast"
needs = ["top"]
message = "left"

[steps.right]
agent = "fast"
needs = ["top"]
message = "right"

[steps.join]
agent = "fast"
needs = ["left", "right"]
message = "join"
"#;

pub(super) const FANOUT: &str = r#"[workflow]
id = "fanout"
description = "one step fanning out to every item"
max_parallel = 1000

[input]
items = { type = "array", required = true }

[steps.each]
agent = "sleepy"
for_each = "input.items"
max_parallel = 1000
message = "item {{ item }}"
"#;

pub(super) const RELAY: &str = r#"[workflow]
id = "relay"
description = "one streaming step"

[steps.stream]
agent = "chunky"
message = "stream"
"#;

pub(super) const HOLD: &str = r#"[workflow]
id = "hold"
description = "one step that waits until released"

[steps.wait]
agent = "held"
message = "wait"
timeout = "1h"
"#;

/// A server under test in a child process, killed when dropped: the orchestrator
/// (`serve`), or a peer's diamond.
pub(super) struct Serve {
    child: tokio::process::Child,
    url: String,
    /// Kept open: the child's stdout.
    _stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Serve {
    pub(super) async fn start(exe: &Path, dir: &Scratch, store: &str) -> anyhow::Result<Serve> {
        Self::start_with(exe, dir, store, AGENTS, &[]).await
    }

    /// Like [`Serve::start`], with the agents of `agents` (a file of the scratch
    /// directory) and `envs` in its environment.
    pub(super) async fn start_with(
        exe: &Path,
        dir: &Scratch,
        store: &str,
        agents: &str,
        envs: &[(&str, &str)],
    ) -> anyhow::Result<Serve> {
        // A2A_BENCH_WRAP="valgrind --tool=massif" (say) runs serve under a profiler.
        let wrap = std::env::var("A2A_BENCH_WRAP").unwrap_or_default();
        let mut wrap = wrap.split_whitespace();
        let mut command = match wrap.next() {
            Some(program) => {
                let mut c = tokio::process::Command::new(program);
                c.args(wrap).arg(exe);
                c
            }
            None => tokio::process::Command::new(exe),
        };
        let child = command
            .arg("serve")
            .arg("--workflows")
            .arg(dir.path.join("workflows"))
            .arg("--agents")
            .arg(dir.path.join(agents))
            .args(["--listen", "127.0.0.1:0", "--store", store])
            .args(["--name", "bench"])
            .envs(envs.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {} serve", exe.display()))?;
        Self::listening(child, "a2a-orchestrator listening on ", "serve").await
    }

    /// A peer's diamond (`bench --peer EXE`): `EXE AGENT_URL`, which says
    /// `listening on URL` once it serves A2A v1.0 JSON-RPC at URL, every run calling
    /// the agent at AGENT_URL.
    pub(super) async fn start_peer(exe: &Path, agent: &str) -> anyhow::Result<Serve> {
        let child = tokio::process::Command::new(exe)
            .arg(agent)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        Self::listening(child, "listening on ", &exe.display().to_string()).await
    }

    /// `child` (`name` in errors) once it says on its stdout that it is listening: the
    /// first word after `prefix` on a line that starts with it is its URL.
    async fn listening(
        mut child: tokio::process::Child,
        prefix: &str,
        name: &str,
    ) -> anyhow::Result<Serve> {
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let listening = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return Ok(rest
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned());
                }
            }
            Err(anyhow!("{name} exited before listening"))
        })
        .await
        .map_err(|_| anyhow!("{name} did not start listening within 60 s"))??;
        Ok(Serve {
            child,
            url: listening,
            _stdout: lines,
        })
    }

    pub(super) fn client(&self) -> anyhow::Result<A2aClient> {
        client(&self.url)
    }

    /// The orchestrator reached over A2A v0.3.
    pub(super) fn upstream(&self) -> anyhow::Result<Upstream> {
        Ok(Upstream::Ours(self.client()?))
    }

    /// The orchestrator reached over A2A v1.0 gRPC (on its one port).
    pub(super) fn upstream_grpc(&self) -> anyhow::Result<Upstream> {
        let at = a2a::client::Interface {
            url: self.url.clone(),
            protocol: a2a::Version::V1_0,
            binding: a2a::client::Binding::Grpc,
            tenant: String::new(),
        };
        Ok(Upstream::Ours(self.client()?.only(at)))
    }

    /// The orchestrator reached over A2A v1.0 JSON-RPC.
    pub(super) fn upstream_v1(&self) -> anyhow::Result<Upstream> {
        Upstream::v1_0(&self.url)
    }

    /// The child's resident set size.
    pub(super) fn rss_bytes(&self) -> anyhow::Result<u64> {
        let pid = self.child.id().ok_or_else(|| anyhow!("serve has exited"))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .context("measuring memory needs /proc (Linux)")?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .ok_or_else(|| anyhow!("no VmRSS in /proc/{pid}/status"))
    }

    /// The CPU time the child has used so far (see [`cpu_time`]).
    pub(super) fn cpu_time(&self) -> anyhow::Result<Duration> {
        let pid = self
            .child
            .id()
            .ok_or_else(|| anyhow!("the server has exited"))?;
        cpu_time(pid)
    }

    /// Stops serve with SIGTERM (a profiler it runs under writes its output), killing
    /// it if it has not exited within 30 s.
    pub(super) async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = tokio::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
            if tokio::time::timeout(Duration::from_secs(30), self.child.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}

/// The CPU time process `pid` has used so far, user and system (`/proc/PID/stat`, in
/// the kernel's USER_HZ ticks of 10 ms).
pub(super) fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .context("measuring CPU needs /proc (Linux)")?;
    // The fields after the command (which may hold spaces) in parentheses.
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| anyhow!("unreadable /proc/{pid}/stat"))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after it.
    let ticks = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| anyhow!("no CPU times in /proc/{pid}/stat"))
    };
    Ok(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

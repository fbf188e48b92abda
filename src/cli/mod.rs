//! The command-line front end: argument parsing and the user-facing output of each
//! subcommand. Library code never prints; this module does.

mod agents;
mod workflows;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::protocol::client::{CardResolver, ClientConfig, http_client, select_jsonrpc_url};

/// A multi-agent orchestrator for the Agent2Agent (A2A) protocol.
#[derive(Debug, Parser)]
#[command(name = "a2a-orchestrator", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fetch an agent's card (well-known path, then the legacy one) and print it as JSON.
    Card {
        /// The agent's base URL, or the card's own URL.
        url: String,
    },
    /// Check workflow files: every problem, with file:line:column.
    ///
    /// Exits 0 when all are valid, 1 when any has an error (or, with --strict, a warning).
    Validate {
        /// Workflow files or directories of them [default: workflows]
        paths: Vec<PathBuf>,
        /// The agents file whose names `agent = "..."` must use [default: agents.toml, if present]
        #[arg(long)]
        agents: Option<PathBuf>,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Discover the agents of agents.toml and show their status, streaming and push
    /// support, and skills.
    Agents {
        /// The agents file.
        #[arg(long, default_value = "agents.toml")]
        agents: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Exit 1 if any agent is unavailable.
        #[arg(long)]
        strict: bool,
    },
    /// Render a workflow's DAG as Mermaid or Graphviz DOT.
    Graph {
        /// A workflow file, or the id of a workflow in --workflows.
        workflow: String,
        #[arg(long, value_enum, default_value = "mermaid")]
        format: GraphFormat,
        /// Where to look a workflow id up.
        #[arg(long, default_value = "workflows")]
        workflows: PathBuf,
    },
}

/// The formats of `graph`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    Mermaid,
    Dot,
}

/// Runs the parsed command; returns the process exit code.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Card { url } => {
            let config = ClientConfig::default();
            let resolver = CardResolver::new(http_client(), config.header_map()?, config.timeout);
            let card = resolver.resolve(&url).await?;
            println!("{}", serde_json::to_string_pretty(&card)?);
            if let Err(e) = select_jsonrpc_url(&card) {
                eprintln!("warning: {e}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate {
            paths,
            agents,
            strict,
        } => workflows::validate(&paths, agents.as_deref(), strict),
        Command::Agents {
            agents: path,
            json,
            strict,
        } => agents::agents(&path, json, strict).await,
        Command::Graph {
            workflow,
            format,
            workflows: dir,
        } => {
            let format = match format {
                GraphFormat::Mermaid => crate::workflow::graph::Format::Mermaid,
                GraphFormat::Dot => crate::workflow::graph::Format::Dot,
            };
            workflows::graph(&workflow, &dir, format)
        }
    }
}

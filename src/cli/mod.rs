//! The command-line front end: argument parsing and the user-facing output of each
//! subcommand. Library code never prints; this module does.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    }
}

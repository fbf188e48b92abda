//! The `a2a-orchestrator` binary: parse arguments, set up logging, run, map errors to an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use a2a_orchestrator::cli::{self, Cli};
use a2a_orchestrator::telemetry;
use clap::Parser;

/// jemalloc: a fifth of `serve`'s CPU went to the system allocator (issue 39's profile);
/// see docs/benchmarks.md for the figures with and without it.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let mut cli = Cli::parse();
    let format = match cli.log_format {
        cli::LogFormat::Text => telemetry::LogFormat::Text,
        cli::LogFormat::Json => telemetry::LogFormat::Json,
    };
    let traces = cli.read_config();
    let telemetry = telemetry::init(format, &traces);
    let verbose = cli.verbose;
    let code = match cli::run(cli).await {
        Ok(code) => code,
        // The reader went away (`… | head`): the output ends there, as with any tool.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", cli::describe(&e, verbose));
            cli::exit_code(&e)
        }
    };
    // Blocking: the exporter's last batch goes out over a blocking HTTP client.
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .ok();
    code
}

/// Whether an error is the standard output's reader having gone away.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

//! The `a2a-orchestrator` binary: parse arguments, set up logging, run, map errors to an
//! exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = a2a_orchestrator::cli::Cli::parse();
    let format = match cli.log_format {
        a2a_orchestrator::cli::LogFormat::Text => a2a_orchestrator::telemetry::LogFormat::Text,
        a2a_orchestrator::cli::LogFormat::Json => a2a_orchestrator::telemetry::LogFormat::Json,
    };
    let traces = a2a_orchestrator::cli::trace_settings(&cli);
    let telemetry = a2a_orchestrator::telemetry::init(format, &traces);
    let code = run(cli).await;
    // Blocking: the exporter's last batch goes out over a blocking HTTP client.
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .ok();
    code
}

async fn run(cli: a2a_orchestrator::cli::Cli) -> ExitCode {
    match a2a_orchestrator::cli::run(cli).await {
        Ok(code) => code,
        // The reader went away (`… | head`): the output ends there, as with any tool.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether an error is the standard output's reader having gone away.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `println!` panics when its reader has gone away (`validate | head`); such a panic
/// ends the program quietly and successfully instead. Every other panic is reported as
/// usual.
fn quiet_on_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        report(info);
    }));
}

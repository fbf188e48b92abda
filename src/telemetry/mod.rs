//! Logs and traces: the `tracing` subscriber every command runs under, and — when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set — an
//! OpenTelemetry pipeline that exports the orchestrator's spans over OTLP/HTTP, with the
//! W3C trace context taken from upstream requests and sent on to every agent, so one
//! trace runs client → orchestrator → agents.
//!
//! The spans themselves are ordinary `tracing` spans in the layers that do the work,
//! named and attributed after the OpenTelemetry conventions (`otel.name`, `otel.kind`,
//! `a2a.*`, `gen_ai.*`) without depending on OpenTelemetry; only this module and the
//! adapters that carry the context across the wire (`host`, `connect`) know it.

mod log;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The spans exported as traces: requests (one span name per binding), the upstream
/// task's work, runs, step attempts (children of their run) and calls to agents. A span
/// left out breaks the chain below it where it crosses a task, so each of these is
/// either created with an explicit parent or inside its parent's task.
const TRACED: &[&str] = &[
    "rpc", "rest", "grpc", "execute", "resume", "run", "attempt", "a2a_call",
];

/// The orchestrator's crates, as `tracing` targets: the application's (whose name a
/// `RUST_LOG` directive uses for all of them) first.
const CRATES: &[&str] = &[
    "a2a_orchestrator",
    "a2a_protocol",
    "orchestrator_core",
    "orchestrator_store",
];

/// `RUST_LOG`'s directives with each one for the whole orchestrator
/// (`a2a_orchestrator` or `a2a_orchestrator=LEVEL`) repeated for each of its crates: the
/// name users know keeps meaning every log line of ours.
fn with_all_our_crates(directives: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for directive in directives.split(',').map(str::trim) {
        out.push(directive.to_owned());
        let (target, level) = directive.split_once('=').unwrap_or((directive, ""));
        if target == CRATES[0] {
            for c in &CRATES[1..] {
                out.push(if level.is_empty() {
                    (*c).to_owned()
                } else {
                    format!("{c}={level}")
                });
            }
        }
    }
    out.join(",")
}

/// Keeps the trace pipeline alive; [`Telemetry::shutdown`] exports what is pending.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans not yet sent and stops the pipeline.
    pub fn shutdown(self) {
        if let Some(p) = self.provider
            && let Err(e) = p.shutdown()
        {
            eprintln!("warning: exporting the last traces failed: {e}");
        }
    }
}

/// Trace settings from the configuration file (`[telemetry]`); the standard `OTEL_*`
/// variables beat them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceSettings {
    /// The OTLP/HTTP base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is added).
    pub otlp_endpoint: Option<String>,
    /// The share of new traces kept (a parent-based ratio sampler); all when absent.
    pub sample_ratio: Option<f64>,
}

/// Where traces go: the environment's endpoint, else the file's; none when neither is
/// set or `OTEL_SDK_DISABLED=true`.
fn trace_endpoint(settings: &TraceSettings) -> Option<Endpoint> {
    let set = |v: &str| std::env::var(v).is_ok_and(|s| !s.trim().is_empty());
    if std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim() == "true") {
        return None;
    }
    if set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Some(Endpoint::Environment);
    }
    settings
        .otlp_endpoint
        .as_ref()
        .map(|base| Endpoint::File(format!("{}/v1/traces", base.trim_end_matches('/'))))
}

/// Where the exporter's endpoint comes from.
enum Endpoint {
    /// The `OTEL_EXPORTER_OTLP_*` variables, read by the exporter itself.
    Environment,
    /// The full traces URL built from `[telemetry] otlp_endpoint`.
    File(String),
}

/// The target of the audit trail's log lines, on at `info` whatever `RUST_LOG` says
/// (unless it names the target itself).
pub const AUDIT_TARGET: &str = "audit";

/// `directives` with the audit trail on, unless they set it themselves.
fn with_audit(directives: &str) -> String {
    if directives
        .split(',')
        .any(|d| d.trim().starts_with(AUDIT_TARGET))
    {
        directives.to_owned()
    } else {
        format!("{directives},{AUDIT_TARGET}=info")
    }
}

/// Installs the subscriber: logs to stderr (`RUST_LOG`, `warn` by default, and the
/// audit trail) in `format`, and, when the environment or `settings` ask for it, the
/// span exporter.
pub fn init(format: LogFormat, settings: &TraceSettings) -> Telemetry {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| {
            tracing_subscriber::EnvFilter::try_new(with_audit(&with_all_our_crates(&directives)))
                .ok()
        })
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(with_audit("warn")));
    // Colours only on a terminal: a log file or a collector gets plain text.
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let logs = match format {
        LogFormat::Text => logs.boxed(),
        LogFormat::Json => logs
            .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
            .event_format(log::FlatJson)
            .boxed(),
    }
    .with_filter(filter);
    let (provider, traces) = match trace_endpoint(settings) {
        None => (None, None),
        Some(endpoint) => match provider(endpoint, settings.sample_ratio) {
            Ok(provider) => {
                opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
                let tracer = provider.tracer("a2a-orchestrator");
                // Decided once per callsite, and with a level hint: without one the
                // filter would let every dependency's `trace!` through the macros'
                // static level check, to be refused one by one.
                let only_ours = tracing_subscriber::filter::filter_fn(|m| {
                    m.is_span()
                        && CRATES
                            .iter()
                            .any(|c| m.target() == *c || m.target().starts_with(&format!("{c}::")))
                        && TRACED.contains(&m.name())
                })
                .with_max_level_hint(tracing::Level::INFO);
                // Only the attributes the spans name: no source locations, threads,
                // targets or busy/idle timings, which cost more than they tell here.
                // Context activation (an OpenTelemetry context made current on every
                // poll of an instrumented future) only for JSON logs, whose lines carry
                // the ids of the span they happen in: the spans' parents come from
                // `tracing`'s own span tree either way.
                let layer = tracing_opentelemetry::layer()
                    .with_tracer(tracer)
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_context_activation(format == LogFormat::Json)
                    .with_filter(only_ours);
                (Some(provider), Some(layer))
            }
            Err(e) => {
                eprintln!("warning: traces are off: {e}");
                (None, None)
            }
        },
    };
    // Not `.with(traces)` on the `Option`: an absent layer says it is interested in
    // every callsite, which would make every span (and every event the logs' filter
    // then drops) be built and recorded on every request.
    let subscriber = tracing_subscriber::registry().with(logs);
    match traces {
        Some(traces) => subscriber.with(traces).init(),
        None => subscriber.init(),
    }
    Telemetry { provider }
}

/// The tracer provider exporting to `endpoint` over OTLP/HTTP.
#[cfg(feature = "otlp")]
fn provider(
    endpoint: Endpoint,
    sample_ratio: Option<f64>,
) -> Result<SdkTracerProvider, opentelemetry_otlp::ExporterBuildError> {
    use opentelemetry_otlp::WithExportConfig as _;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
    if let Endpoint::File(url) = endpoint {
        exporter = exporter.with_endpoint(url);
    }
    // The exporter builds its own reqwest client, which takes the process's default
    // crypto provider (reqwest brings none): ring, as everywhere else.
    a2a::https::ring_as_process_default();
    let exporter = exporter.build()?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var("OTEL_SERVICE_NAME").is_err() {
        resource = resource.with_service_name("a2a-orchestrator");
    }
    let mut builder = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build());
    // OTEL_TRACES_SAMPLER, read by the SDK, beats the file's ratio.
    if let Some(ratio) = sample_ratio
        && std::env::var("OTEL_TRACES_SAMPLER").is_err()
    {
        use opentelemetry_sdk::trace::Sampler;
        builder = builder.with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            ratio,
        ))));
    }
    Ok(builder.build())
}

/// Without the `otlp` feature there is no exporter to build.
#[cfg(not(feature = "otlp"))]
fn provider(endpoint: Endpoint, _: Option<f64>) -> Result<SdkTracerProvider, String> {
    let to = match endpoint {
        Endpoint::Environment => "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(),
        Endpoint::File(url) => url,
    };
    Err(format!(
        "this build of a2a-orchestrator has no OTLP exporter for {to} (build it with the `otlp` feature, on by default)"
    ))
}

/// Makes the trace context an upstream request carries (`traceparent`, `tracestate`)
/// the parent of `span`. Nothing when it carries none or traces are off.
pub fn adopt_parent(headers: &axum::http::HeaderMap, span: &tracing::Span) {
    if !headers.contains_key("traceparent") {
        return;
    }
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Headers(headers)));
    let _ = span.set_parent(cx);
}

/// Request headers as the propagator reads them.
struct Headers<'a>(&'a axum::http::HeaderMap);

impl opentelemetry::propagation::Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// The trace context of the current span as the headers to send on (`traceparent`,
/// `tracestate`); empty when traces are off.
pub fn current_headers() -> Vec<(String, String)> {
    let cx = tracing::Span::current().context();
    let mut carrier = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut carrier));
    carrier.into_iter().collect()
}

/// The current span's trace context as a W3C `traceparent`; none when traces are off.
pub fn current_traceparent() -> Option<String> {
    current_headers()
        .into_iter()
        .find_map(|(k, v)| (k == "traceparent").then_some(v))
}

/// Links `span` to the span a `traceparent` names (a run resumed after a restart, to
/// the trace it started in). Nothing when traces are off or the value is not one.
pub fn link_to(span: &tracing::Span, traceparent: &str) {
    use opentelemetry::trace::TraceContextExt as _;
    let carrier =
        std::collections::HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&carrier));
    span.add_link(cx.span().span_context().clone());
}

#[cfg(test)]
mod tests {
    use super::with_all_our_crates;

    #[test]
    fn the_applications_name_stands_for_every_crate_of_ours() {
        assert_eq!(
            with_all_our_crates("warn,a2a_orchestrator=debug"),
            "warn,a2a_orchestrator=debug,a2a_protocol=debug,orchestrator_core=debug,orchestrator_store=debug"
        );
        assert_eq!(
            with_all_our_crates("a2a_orchestrator"),
            "a2a_orchestrator,a2a_protocol,orchestrator_core,orchestrator_store"
        );
        assert_eq!(
            with_all_our_crates("a2a_orchestrator::host=info"),
            "a2a_orchestrator::host=info"
        );
        assert_eq!(with_all_our_crates("h2=debug"), "h2=debug");
    }
}

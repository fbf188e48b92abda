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

/// The spans exported as traces: requests, the upstream task's work, runs, step
/// attempts (children of their run) and calls to agents. A span left out breaks the
/// chain below it where it crosses a task, so each of these is either created with an
/// explicit parent or inside its parent's task.
const TRACED: &[&str] = &[
    "rpc", "rest", "execute", "resume", "run", "attempt", "a2a_call",
];

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

/// Whether the environment asks for traces.
pub fn tracing_requested() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|s| !s.trim().is_empty()))
        && std::env::var("OTEL_SDK_DISABLED").map_or(true, |v| v.trim() != "true")
}

/// Installs the subscriber: logs to stderr (`RUST_LOG`, `warn` by default) in `format`,
/// and, when the environment asks for it, the span exporter.
pub fn init(format: LogFormat) -> Telemetry {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match format {
        LogFormat::Text => logs.boxed(),
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .boxed(),
    }
    .with_filter(filter);
    let (provider, traces) = if tracing_requested() {
        match provider() {
            Ok(provider) => {
                opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
                let tracer = provider.tracer("a2a-orchestrator");
                let only_ours = tracing_subscriber::filter::filter_fn(|m| {
                    m.is_span()
                        && m.target().starts_with("a2a_orchestrator")
                        && TRACED.contains(&m.name())
                });
                // Only the attributes the spans name: no source locations, threads,
                // targets or busy/idle timings, which cost more than they tell here.
                let layer = tracing_opentelemetry::layer()
                    .with_tracer(tracer)
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_filter(only_ours);
                (Some(provider), Some(layer))
            }
            Err(e) => {
                eprintln!("warning: traces are off: {e}");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .init();
    Telemetry { provider }
}

fn provider() -> Result<SdkTracerProvider, opentelemetry_otlp::ExporterBuildError> {
    use opentelemetry_otlp::WithExportConfig as _;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .build()?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var("OTEL_SERVICE_NAME").is_err() {
        resource = resource.with_service_name("a2a-orchestrator");
    }
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build())
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

//! `--log-format json`: one flat JSON object a line, for log pipelines (Loki,
//! Elasticsearch, Cloud Logging) that index top-level keys. Besides the event's own
//! fields, a line carries the fields of every span it happened in — the run, the step,
//! the agent, the task — and, when traces are exported, the trace and span ids, so a
//! log line leads to its trace and a trace to its log lines.

use std::fmt;

use opentelemetry::trace::TraceContextExt;
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Writes each event as one JSON object: `timestamp`, `level`, `target`, the spans'
/// fields (inner spans win over outer ones), `span` (the innermost span's name), the
/// event's fields (`message` among them; they win over the spans'), and `trace_id` /
/// `span_id` of the innermost span the trace has started. The spans' own conventions
/// for exporters (`otel.*`) are left out.
pub struct FlatJson;

impl<S> FormatEvent<S, JsonFields> for FlatJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut line = Map::new();
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        line.insert("timestamp".into(), timestamp.into());
        let meta = event.metadata();
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        if let Some(scope) = ctx.event_scope() {
            let mut ids = None;
            let mut innermost = None;
            for span in scope {
                innermost.get_or_insert_with(|| span.name());
                if ids.is_none() {
                    // Asked before the span's extensions are borrowed: the OpenTelemetry
                    // layer locks them to answer.
                    ids = tracing::dispatcher::get_default(|dispatch| {
                        let context =
                            tracing_opentelemetry::get_otel_context(&span.id(), dispatch)?;
                        let span = context.span();
                        let ids = span.span_context();
                        ids.is_valid().then(|| (ids.trace_id(), ids.span_id()))
                    });
                }
                let ext = span.extensions();
                // Outer spans are met later: a key already set by an inner span stays.
                if let Some(fields) = ext.get::<FormattedFields<JsonFields>>()
                    && let Ok(Value::Object(fields)) = serde_json::from_str(&fields.fields)
                {
                    for (k, v) in fields {
                        if !k.starts_with("otel.") && !line.contains_key(&k) {
                            line.insert(k, v);
                        }
                    }
                }
            }
            if let Some(name) = innermost {
                line.insert("span".into(), name.into());
            }
            if let Some((trace, span)) = ids {
                line.insert("trace_id".into(), trace.to_string().into());
                line.insert("span_id".into(), span.to_string().into());
            }
        }
        event.record(&mut Fields(&mut line));
        writeln!(writer, "{}", Value::Object(line))
    }
}

/// An event's fields as JSON values; they replace a span's field of the same name.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Fields<'_> {
    fn put(&mut self, field: &Field, value: Value) {
        self.0.insert(field.name().to_string(), value);
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, value.to_string().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

//! Compiling a step's and the output's templates and expressions (through
//! [`TemplateBuilder`]), reporting compile errors at their place in the file.

use super::super::raw;
use super::super::raw::{RawData, RawStep};
use super::super::template::{
    CompileError, DataTemplate, Expr, Template, TemplateBuilder, is_template, sole_expression,
};
use super::{Refs, Scope, Uses, Validator};
use crate::config::reader::Sp;
use crate::workflow::{Output, Step, StepKind};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ops::Range;

impl Validator<'_, '_, '_> {
    pub(super) fn step_templates(
        &mut self,
        raw: &RawStep,
        mut step: Step,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Step> {
        let id = raw.id.value.clone();
        let no_item = Scope {
            fan_out: false,
            repeats: false,
            only: None,
            ..scope.clone()
        };
        if let Some(w) = &raw.when {
            step.when = self.expr(&format!("steps.{id}.when"), w, &no_item, refs, uses);
        }
        if let (Some(f), Some(fan)) = (&raw.for_each, step.for_each.as_mut()) {
            fan.items = self.expr(&format!("steps.{id}.for_each"), f, &no_item, refs, uses)?;
        }
        if let (Some(u), Some(repeat)) = (&raw.repeat_until, step.repeat.as_mut()) {
            repeat.until = self.expr(&format!("steps.{id}.repeat_until"), u, scope, refs, uses)?;
        }
        match &mut step.kind {
            StepKind::Agent { message, data, .. } => {
                if let Some(m) = &raw.message {
                    *message = Some(self.template(
                        &format!("steps.{id}.message"),
                        m,
                        scope,
                        refs,
                        uses,
                    )?);
                }
                if let Some(d) = &raw.data {
                    *data = Some(self.data(&format!("steps.{id}.data"), d, scope, refs, uses)?);
                }
            }
            StepKind::Workflow { input, .. } => {
                if let Some(d) = &raw.input {
                    *input = Some(self.data(&format!("steps.{id}.input"), d, scope, refs, uses)?);
                }
            }
            StepKind::Approval { prompt } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
            }
            StepKind::Input { prompt, fields } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
                *fields = self.inputs(raw.fields.as_deref().unwrap_or_default());
            }
            StepKind::Llm {
                prompt,
                system,
                fallback,
            } => {
                *prompt = self.template(
                    &format!("steps.{id}.prompt"),
                    raw.prompt.as_ref()?,
                    scope,
                    refs,
                    uses,
                )?;
                if let Some(t) = &raw.system {
                    *system =
                        Some(self.template(&format!("steps.{id}.system"), t, scope, refs, uses)?);
                }
                if let Some(t) = &raw.fallback {
                    *fallback = Some(self.template(
                        &format!("steps.{id}.fallback"),
                        t,
                        scope,
                        refs,
                        uses,
                    )?);
                }
            }
        }
        Some(step)
    }

    pub(super) fn output(
        &mut self,
        o: &raw::RawOutput,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Output> {
        if o.text.is_none() && o.data.is_none() {
            self.ctx
                .error(o.span.clone(), "[output] needs `text`, `data`, or both");
            return None;
        }
        let text = match &o.text {
            Some(t) => Some(self.template("output.text", t, scope, refs, uses)?),
            None => None,
        };
        let data = match &o.data {
            Some(d) => Some(self.data("output.data", d, scope, refs, uses)?),
            None => None,
        };
        Some(Output { text, data })
    }

    /// The file span of a part of a template whose source sits at `span`.
    fn sub_span(
        &self,
        span: &Range<usize>,
        source: &str,
        range: Option<Range<usize>>,
    ) -> Range<usize> {
        let raw = &self.ctx.source[span.clone()];
        match (raw.find(source), range) {
            (Some(off), Some(r)) => span.start + off + r.start..span.start + off + r.end,
            _ => span.clone(),
        }
    }

    /// Compiles a template or expression with `compile`, checks its references, and
    /// reports a compile error at its place in the file.
    #[allow(clippy::too_many_arguments)]
    fn compile<T>(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
        failure: &str,
        compile: Compile<T>,
    ) -> Option<T> {
        match compile(&mut self.templates, site, &s.value) {
            Ok((t, found)) => {
                self.check_refs(&found, s, scope, refs, uses);
                Some(t)
            }
            Err(e) => {
                let span = self.sub_span(&s.span, &s.value, e.range);
                self.ctx
                    .error(span, format!("`{site}` {failure}: {}", e.message));
                None
            }
        }
    }

    fn template(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Template> {
        self.compile(
            site,
            s,
            scope,
            refs,
            uses,
            "does not compile",
            TemplateBuilder::template,
        )
    }

    fn expr(
        &mut self,
        site: &str,
        s: &Sp<String>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Expr> {
        self.compile(
            site,
            s,
            scope,
            refs,
            uses,
            "is not a valid expression",
            TemplateBuilder::expression,
        )
    }

    pub(super) fn data(
        &mut self,
        site: &str,
        d: &Sp<RawData>,
        scope: &Scope,
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<DataTemplate> {
        Some(match &d.value {
            RawData::Literal(v) => DataTemplate::Literal(v.clone()),
            RawData::Str(s) => {
                let sp = Sp::new(s.clone(), d.span.clone());
                if let Some(e) = sole_expression(s) {
                    let inner = Sp::new(e.to_owned(), d.span.clone());
                    DataTemplate::Value(self.expr(site, &inner, scope, refs, uses)?)
                } else if is_template(s) {
                    DataTemplate::Text(self.template(site, &sp, scope, refs, uses)?)
                } else {
                    DataTemplate::Literal(Value::String(s.clone()))
                }
            }
            RawData::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    out.push(self.data(&format!("{site}[{i}]"), item, scope, refs, uses)?);
                }
                DataTemplate::Array(out)
            }
            RawData::Object(fields) => {
                let mut out = Vec::new();
                for (k, v) in fields {
                    out.push((
                        k.clone(),
                        self.data(&format!("{site}.{k}"), v, scope, refs, uses)?,
                    ));
                }
                DataTemplate::Object(out)
            }
        })
    }
}

/// A `TemplateBuilder` method compiling a template or an expression.
type Compile<T> =
    fn(&mut TemplateBuilder, &str, &str) -> Result<(T, BTreeSet<String>), CompileError>;

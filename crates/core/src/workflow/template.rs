//! Templates and conditions: minijinja in strict-undefined mode.
//!
//! Messages, prompts, `data` leaves and the output are templates; `when` and `for_each`
//! are expressions. All are compiled when a workflow is loaded, and their variable
//! references are extracted so the validator can check them statically. At run time a
//! missing value is an error naming the step, the field and the expression — never an
//! empty string.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

/// The compiled templates of one workflow.
#[derive(Clone)]
pub struct Templates {
    env: Arc<Environment<'static>>,
}

impl fmt::Debug for Templates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Templates").finish_non_exhaustive()
    }
}

/// A template registered in a workflow's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Where it is used, e.g. `steps.notify.message` (also its name in the environment).
    pub site: String,
    pub source: String,
}

impl Template {
    /// Whether it renders to its own text, whatever the context: it has no tag.
    pub fn is_plain(&self) -> bool {
        plain(&self.source).is_some()
    }
}

/// An expression (`when`, `for_each`, or a `{{ expr }}` data leaf).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    pub site: String,
    pub source: String,
}

/// A structured value whose strings are templates: a step's `data` or the output's.
#[derive(Debug, Clone, PartialEq)]
pub enum DataTemplate {
    /// A value with nothing to render.
    Literal(Value),
    /// A string with `{{ }}` or `{% %}` in it; renders to a string.
    Text(Template),
    /// A string that is exactly one `{{ expression }}`; renders to the expression's
    /// value, keeping its type (a list stays a list).
    Value(Expr),
    Array(Vec<DataTemplate>),
    Object(Vec<(String, DataTemplate)>),
}

impl DataTemplate {
    /// Whether it renders to the same value whatever the context.
    pub fn is_plain(&self) -> bool {
        match self {
            DataTemplate::Literal(_) => true,
            DataTemplate::Text(t) => t.is_plain(),
            DataTemplate::Value(_) => false,
            DataTemplate::Array(items) => items.iter().all(DataTemplate::is_plain),
            DataTemplate::Object(fields) => fields.iter().all(|(_, d)| d.is_plain()),
        }
    }
}

/// A failure to render at run time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{site}: {message}{}", expression.as_ref().map(|e| format!(" in `{e}`")).unwrap_or_default())]
pub struct RenderError {
    /// Where: `steps.setup_email.message`, `output.text`, ...
    pub site: String,
    /// The part of the template that failed, when known.
    pub expression: Option<String>,
    pub message: String,
}

/// A compile error, located within the template's source.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub message: String,
    /// Byte range within the template source, when minijinja knows it.
    pub range: Option<std::ops::Range<usize>>,
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env
}

/// Collects a workflow's templates while it is validated.
pub struct TemplateBuilder {
    env: Environment<'static>,
    check: Environment<'static>,
}

impl Default for TemplateBuilder {
    fn default() -> Self {
        Self {
            env: environment(),
            check: environment(),
        }
    }
}

fn compile_error(e: &minijinja::Error) -> CompileError {
    CompileError {
        message: e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_owned),
        range: e.range(),
    }
}

impl TemplateBuilder {
    /// Compiles a template; returns it with the variables it references
    /// (dotted paths such as `steps.a.data.x`).
    pub fn template(
        &mut self,
        site: &str,
        source: &str,
    ) -> Result<(Template, BTreeSet<String>), CompileError> {
        self.env
            .add_template_owned(site.to_owned(), source.to_owned())
            .map_err(|e| compile_error(&e))?;
        let refs = self
            .env
            .get_template(site)
            .map_err(|e| compile_error(&e))?
            .undeclared_variables(true)
            .into_iter()
            .collect();
        Ok((
            Template {
                site: site.to_owned(),
                source: source.to_owned(),
            },
            refs,
        ))
    }

    /// Compiles an expression; returns it with the variables it references.
    pub fn expression(
        &mut self,
        site: &str,
        source: &str,
    ) -> Result<(Expr, BTreeSet<String>), CompileError> {
        let expr = self
            .check
            .compile_expression(source)
            .map_err(|e| compile_error(&e))?;
        let refs = expr.undeclared_variables(true).into_iter().collect();
        Ok((
            Expr {
                site: site.to_owned(),
                source: source.to_owned(),
            },
            refs,
        ))
    }

    pub fn finish(self) -> Templates {
        Templates {
            env: Arc::new(self.env),
        }
    }
}

/// If `s` is exactly one `{{ expression }}`, the expression.
pub fn sole_expression(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.contains("{{") || inner.contains("}}") || inner.contains("{%") {
        return None;
    }
    let inner = inner
        .trim()
        .trim_start_matches('-')
        .trim_end_matches('-')
        .trim();
    (!inner.is_empty()).then_some(inner)
}

/// Whether a string has template syntax in it.
pub fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

/// What a template with no tag, expression or comment in it renders to: its source,
/// less the trailing newline (and then carriage return) minijinja drops, its
/// `keep_trailing_newline` being off. `None` for any other template.
fn plain(source: &str) -> Option<&str> {
    if ["{{", "{%", "{#"].iter().any(|open| source.contains(open)) {
        return None;
    }
    let source = source.strip_suffix('\n').unwrap_or(source);
    Some(source.strip_suffix('\r').unwrap_or(source))
}

fn ctx_value(ctx: &Value) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(ctx))
}

/// minijinja points at the failing part of an attribute chain (`.data.id`); widen the
/// range to the whole path (`steps.a.data.id`) so the message names the expression.
fn widen(source: &str, r: std::ops::Range<usize>) -> Option<&str> {
    let bytes = source.as_bytes();
    let part = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'[' | b']');
    let (mut start, mut end) = (r.start.min(bytes.len()), r.end.min(bytes.len()));
    while start > 0 && part(bytes[start - 1]) {
        start -= 1;
    }
    while end < bytes.len() && part(bytes[end]) {
        end += 1;
    }
    source.get(start..end)
}

fn render_error(site: &str, source: &str, e: &minijinja::Error) -> RenderError {
    let expression = e
        .range()
        .and_then(|r| widen(source, r))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let message = match e.kind() {
        minijinja::ErrorKind::UndefinedError => "undefined value".to_owned(),
        _ => e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_owned),
    };
    RenderError {
        site: site.to_owned(),
        expression,
        message,
    }
}

impl Templates {
    /// Renders a template against `ctx`.
    pub fn render(&self, t: &Template, ctx: &Value) -> Result<String, RenderError> {
        // Most messages are plain text; rendering one would still turn the whole
        // context into minijinja's values first.
        if let Some(text) = plain(&t.source) {
            return Ok(text.to_owned());
        }
        let tmpl = self
            .env
            .get_template(&t.site)
            .map_err(|e| render_error(&t.site, &t.source, &e))?;
        tmpl.render(ctx_value(ctx))
            .map_err(|e| render_error(&t.site, &t.source, &e))
    }

    /// Compiles and evaluates an expression.
    fn evaluate(&self, e: &Expr, ctx: &Value) -> Result<minijinja::Value, RenderError> {
        let err = |x: &minijinja::Error| render_error(&e.site, &e.source, x);
        let expr = self
            .env
            .compile_expression_owned(e.source.clone())
            .map_err(|x| err(&x))?;
        expr.eval(ctx_value(ctx)).map_err(|x| err(&x))
    }

    /// Evaluates an expression against `ctx`.
    pub fn eval(&self, e: &Expr, ctx: &Value) -> Result<Value, RenderError> {
        let fail = |message: String| RenderError {
            site: e.site.clone(),
            expression: Some(e.source.clone()),
            message,
        };
        let value = self.evaluate(e, ctx)?;
        if value.is_undefined() {
            return Err(fail("undefined value".to_owned()));
        }
        serde_json::to_value(&value)
            .map_err(|x| fail(format!("the value cannot be turned into JSON: {x}")))
    }

    /// Evaluates a condition; its truth follows the template language (empty is false).
    pub fn eval_bool(&self, e: &Expr, ctx: &Value) -> Result<bool, RenderError> {
        Ok(self.evaluate(e, ctx)?.is_true())
    }

    /// Renders a data template into JSON.
    pub fn render_data(&self, d: &DataTemplate, ctx: &Value) -> Result<Value, RenderError> {
        Ok(match d {
            DataTemplate::Literal(v) => v.clone(),
            DataTemplate::Text(t) => Value::String(self.render(t, ctx)?),
            DataTemplate::Value(e) => self.eval(e, ctx)?,
            DataTemplate::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| self.render_data(i, ctx))
                    .collect::<Result<_, _>>()?,
            ),
            DataTemplate::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.render_data(v, ctx)?)))
                    .collect::<Result<_, RenderError>>()?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_dotted_paths() {
        let mut b = TemplateBuilder::default();
        let (_, refs) = b
            .template("t", "Hi {{ input.name }} {{ steps.a.data.id }}{% for x in input.items %}{{ x }}{% endfor %}")
            .unwrap();
        assert!(refs.contains("input.name"), "{refs:?}");
        assert!(refs.contains("steps.a.data.id"), "{refs:?}");
        assert!(
            !refs.iter().any(|r| r == "x"),
            "loop variables are declared: {refs:?}"
        );
        let (_, refs) = b
            .expression("w", "input.role in ['a', 'b'] and not input.remote")
            .unwrap();
        assert_eq!(
            refs.into_iter().collect::<Vec<_>>(),
            ["input.remote", "input.role"]
        );
    }

    #[test]
    fn missing_values_are_errors_naming_site_and_expression() {
        let mut b = TemplateBuilder::default();
        let (t, _) = b
            .template(
                "steps.setup_email.message",
                "Mailbox for {{ steps.create_record.data.employee_id }}.",
            )
            .unwrap();
        let templates = b.finish();
        let ctx = json!({ "steps": { "create_record": { "data": {} } } });
        let err = templates.render(&t, &ctx).unwrap_err();
        assert_eq!(err.site, "steps.setup_email.message");
        assert_eq!(err.message, "undefined value");
        assert!(
            err.expression.as_deref().unwrap().contains("employee_id"),
            "{err}"
        );
        let ok = json!({ "steps": { "create_record": { "data": { "employee_id": "E-7" } } } });
        assert_eq!(templates.render(&t, &ok).unwrap(), "Mailbox for E-7.");
    }

    #[test]
    fn data_values_keep_their_type() {
        assert_eq!(
            sole_expression("{{ steps.a.data.items }}"),
            Some("steps.a.data.items")
        );
        assert_eq!(sole_expression("x {{ a }}"), None);
        let mut b = TemplateBuilder::default();
        let (e, _) = b.expression("d", "input.items").unwrap();
        let (t, _) = b.template("t", "{{ input.items | length }} items").unwrap();
        let templates = b.finish();
        let data = DataTemplate::Object(vec![
            ("list".into(), DataTemplate::Value(e)),
            ("text".into(), DataTemplate::Text(t)),
            ("n".into(), DataTemplate::Literal(json!(3))),
        ]);
        let ctx = json!({ "input": { "items": [1, 2] } });
        assert_eq!(
            templates.render_data(&data, &ctx).unwrap(),
            json!({ "list": [1, 2], "text": "2 items", "n": 3 })
        );
    }

    proptest::proptest! {
        #[test]
        fn a_plain_template_renders_as_minijinja_renders_it(
            source in "[a{}%#\\-+ \r\n]{0,12}",
        ) {
            if let Some(text) = plain(&source) {
                let mut env = environment();
                env.add_template_owned("t".to_owned(), source.clone()).unwrap();
                let rendered = env.get_template("t").unwrap().render(()).unwrap();
                proptest::prop_assert_eq!(text, rendered.as_str());
            }
        }
    }

    #[test]
    fn only_text_without_tags_is_plain() {
        assert_eq!(plain("Hello.\n"), Some("Hello."));
        assert_eq!(plain("a\r\n"), Some("a"));
        assert_eq!(plain("a }} %} #}"), Some("a }} %} #}"));
        for tagged in ["{{ a }}", "{% if a %}x{% endif %}", "x {# note #}"] {
            assert_eq!(plain(tagged), None, "{tagged}");
        }
        let mut b = TemplateBuilder::default();
        let (text, _) = b.template("t", "Hello {{ input.name }}").unwrap();
        let (expr, _) = b.expression("e", "input.items").unwrap();
        let literal = || DataTemplate::Literal(json!({"a": 1}));
        assert!(DataTemplate::Array(vec![literal()]).is_plain());
        for tagged in [DataTemplate::Text(text), DataTemplate::Value(expr)] {
            let nested = DataTemplate::Object(vec![("a".into(), literal()), ("b".into(), tagged)]);
            assert!(!nested.is_plain(), "{nested:?}");
        }
    }
}

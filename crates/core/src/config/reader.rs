//! Reading a spanned TOML tree into raw values while collecting every problem.
//!
//! Serde stops at the first error; a user fixing a workflow wants all of them at once.
//! So stage one walks `toml`'s spanned tree by hand: each table reader records which
//! keys were read, reports type errors with their span, and on `finish` reports every
//! key it did not expect (with a did-you-mean).

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::diag::{Diagnostic, Severity, did_you_mean};

/// A value with the byte range it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sp<T> {
    pub value: T,
    pub span: Range<usize>,
}

impl<T> Sp<T> {
    pub fn new(value: T, span: Range<usize>) -> Self {
        Self { value, span }
    }
}

/// The file being read and the problems found so far.
pub struct Ctx<'s> {
    pub file: &'s str,
    pub source: &'s str,
    pub diags: Vec<Diagnostic>,
}

impl<'s> Ctx<'s> {
    pub fn new(file: &'s str, source: &'s str) -> Self {
        Self {
            file,
            source,
            diags: Vec::new(),
        }
    }

    pub fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        let d = Diagnostic::new(Severity::Error, self.file, self.source, span, message);
        self.diags.push(d);
    }

    pub fn warn(&mut self, span: Range<usize>, message: impl Into<String>) {
        let d = Diagnostic::new(Severity::Warning, self.file, self.source, span, message);
        self.diags.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.diags.iter().any(Diagnostic::is_error)
    }
}

/// The TOML type name of a value, for messages.
pub fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Reads one table; remembers which keys were consumed.
pub struct TableReader<'a, 'i> {
    table: &'a DeTable<'i>,
    /// Where the table is, for "missing key" errors.
    pub span: Range<usize>,
    /// How the user writes this table: `[steps.notify]`, `retry`, ...
    pub name: String,
    seen: Vec<String>,
}

impl<'a, 'i> TableReader<'a, 'i> {
    pub fn new(table: &'a DeTable<'i>, span: Range<usize>, name: impl Into<String>) -> Self {
        Self {
            table,
            span,
            name: name.into(),
            seen: Vec::new(),
        }
    }

    /// Where the table is in the source.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// Every key with its span and value, in source order.
    pub fn entries(&self) -> impl Iterator<Item = (Sp<&'a str>, &'a Spanned<DeValue<'i>>)> {
        self.table
            .iter()
            .map(|(k, v)| (Sp::new(k.get_ref().as_ref(), k.span()), v))
    }

    /// The raw value of `key`, marking it read.
    pub fn get(&mut self, key: &str) -> Option<&'a Spanned<DeValue<'i>>> {
        self.seen.push(key.to_owned());
        self.table
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == key)
            .map(|(_, v)| v)
    }

    fn typed<T>(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &str,
        what: &str,
        f: impl FnOnce(&'a DeValue<'i>) -> Option<T>,
    ) -> Option<Sp<T>> {
        let v = self.get(key)?;
        match f(v.get_ref()) {
            Some(t) => Some(Sp::new(t, v.span())),
            None => {
                ctx.error(
                    v.span(),
                    format!(
                        "`{key}` in {} must be {what}, not {}",
                        self.name,
                        type_name(v.get_ref())
                    ),
                );
                None
            }
        }
    }

    pub fn string(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<String>> {
        self.typed(ctx, key, "a string", |v| v.as_str().map(str::to_owned))
    }

    pub fn bool(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<bool>> {
        self.typed(ctx, key, "a boolean (true or false)", DeValue::as_bool)
    }

    pub fn int(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<i64>> {
        self.typed(ctx, key, "an integer", |v| {
            v.as_integer().and_then(parse_int)
        })
    }

    /// A number (an integer or a float).
    pub fn number(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<f64>> {
        self.typed(ctx, key, "a number", |v| {
            to_json(v).as_f64().filter(|_| v.as_bool().is_none())
        })
    }

    /// An integer of at least `min`.
    pub fn int_at_least(&mut self, ctx: &mut Ctx<'_>, key: &str, min: i64) -> Option<i64> {
        let n = self.int(ctx, key)?;
        if n.value >= min {
            Some(n.value)
        } else {
            ctx.error(
                n.span,
                format!("`{key}` must be at least {min}, got {}", n.value),
            );
            None
        }
    }

    /// A duration longer than zero (`30s`, `2m`, `1h30m`).
    pub fn positive_duration(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &str,
    ) -> Option<std::time::Duration> {
        let d = self.string(ctx, key)?;
        match super::duration::parse_duration(&d.value) {
            Ok(x) if !x.is_zero() => Some(x),
            Ok(_) => {
                ctx.error(d.span, format!("`{key}` must be longer than zero"));
                None
            }
            Err(e) => {
                ctx.error(d.span, format!("`{key}`: {e}"));
                None
            }
        }
    }

    /// An array of strings.
    pub fn strings(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<Vec<Sp<String>>>> {
        let v = self.get(key)?;
        let Some(items) = v.get_ref().as_array() else {
            ctx.error(
                v.span(),
                format!(
                    "`{key}` in {} must be an array of strings, not {}",
                    self.name,
                    type_name(v.get_ref())
                ),
            );
            return None;
        };
        let mut out = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) => out.push(Sp::new(s.to_owned(), item.span())),
                None => ctx.error(
                    item.span(),
                    format!(
                        "`{key}` in {} must contain only strings, not {}",
                        self.name,
                        type_name(item.get_ref())
                    ),
                ),
            }
        }
        Some(Sp::new(out, v.span()))
    }

    /// A sub-table (inline or not).
    pub fn table(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<TableReader<'a, 'i>> {
        self.table_named(ctx, key, &format!("`{key}`"))
    }

    /// A sub-table (inline or not), named `name` in messages.
    pub fn table_named(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &str,
        name: &str,
    ) -> Option<TableReader<'a, 'i>> {
        let v = self.get(key)?;
        match v.get_ref().as_table() {
            Some(t) => Some(TableReader::new(t, v.span(), name)),
            None => {
                ctx.error(
                    v.span(),
                    format!(
                        "`{key}` in {} must be a table, not {}",
                        self.name,
                        type_name(v.get_ref())
                    ),
                );
                None
            }
        }
    }

    /// Reports every key that was not read, suggesting the closest expected one.
    pub fn finish(self, ctx: &mut Ctx<'_>, expected: &[&str]) {
        for (k, _) in self.table.iter() {
            let key = k.get_ref().as_ref();
            if self.seen.iter().any(|s| s == key) {
                continue;
            }
            let hint = match did_you_mean(key, expected.iter().copied()) {
                Some(s) => format!(" (did you mean `{s}`?)"),
                None => format!(" (expected one of: {})", expected.join(", ")),
            };
            ctx.error(
                k.span(),
                format!("unknown key `{key}` in {}{hint}", self.name),
            );
        }
    }
}

/// A TOML integer as i64 (TOML allows `_` separators and hex/octal/binary).
pub fn parse_int(i: &toml::de::DeInteger<'_>) -> Option<i64> {
    i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok()
}

/// Converts a TOML value to JSON (datetimes become strings).
pub fn to_json(v: &DeValue<'_>) -> serde_json::Value {
    use serde_json::Value;
    match v {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => parse_int(i).map_or(Value::Null, Value::from),
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(a) => Value::Array(a.iter().map(|x| to_json(x.get_ref())).collect()),
        DeValue::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.get_ref().to_string(), to_json(v.get_ref())))
                .collect(),
        ),
    }
}

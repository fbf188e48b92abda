//! Diagnostics: a problem found in a file, with its location and a caret snippet.
//!
//! Every error a user can make in a workflow or agents file is reported as
//! `file:line:column: error: sentence`, followed by the offending line with the span
//! underlined — the shape compilers use, so editors and CI logs link to it.

use std::fmt;
use std::ops::Range;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// The file as the user named it.
    pub file: String,
    /// 1-based line and column (in characters) of the start of the span.
    pub line: usize,
    pub column: usize,
    /// The source line the span starts on, and the span's extent within it.
    snippet: String,
    underline: Range<usize>,
    /// False for problems with no source text (an unreadable file, a missing path).
    has_source: bool,
}

impl Diagnostic {
    /// A diagnostic for the byte range `span` of `source`.
    pub fn new(
        severity: Severity,
        file: &str,
        source: &str,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        let start = span.start.min(source.len());
        let end = span.end.clamp(start, source.len());
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let snippet = source[line_start..line_end]
            .trim_end_matches('\r')
            .to_owned();
        let col_chars = |byte: usize| source[line_start..byte.min(line_end)].chars().count();
        let column = col_chars(start) + 1;
        let underline_end = col_chars(end.min(line_end)).max(column);
        Self {
            severity,
            message: message.into(),
            file: file.to_owned(),
            line,
            column,
            snippet,
            underline: column - 1..underline_end,
            has_source: !source.is_empty(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `line:column: severity: message` — the location-and-message line without the file.
    pub fn short(&self) -> String {
        format!(
            "{}:{}: {}: {}",
            self.line, self.column, self.severity, self.message
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.has_source {
            return write!(f, "{}: {}: {}", self.file, self.severity, self.message);
        }
        writeln!(f, "{}:{}", self.file, self.short())?;
        let gutter = self.line.to_string().len();
        writeln!(f, "{:gutter$} |", "")?;
        writeln!(f, "{} | {}", self.line, self.snippet)?;
        let width = (self.underline.end - self.underline.start).max(1);
        write!(
            f,
            "{:gutter$} | {}{}",
            "",
            " ".repeat(self.underline.start),
            "^".repeat(width)
        )
    }
}

/// The closest of `candidates` to `word`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal-string-alignment distance: edits, counting a swap of two neighbours as one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_and_caret() {
        let src = "a = 1\nneeds = [\"x\"]\n";
        let start = src.find("\"x\"").unwrap();
        let d = Diagnostic::new(
            Severity::Error,
            "w.toml",
            src,
            start..start + 3,
            "no step `x`",
        );
        assert_eq!(d.short(), "2:10: error: no step `x`");
        assert_eq!(
            d.to_string(),
            "w.toml:2:10: error: no step `x`\n  |\n2 | needs = [\"x\"]\n  |          ^^^"
        );
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("creat_record", ["create_record", "notify"]),
            Some("create_record")
        );
        assert_eq!(did_you_mean("zzz", ["create_record", "notify"]), None);
        assert_eq!(
            did_you_mean("nmae", ["name", "role"]),
            Some("name"),
            "a swap is one edit"
        );
    }
}

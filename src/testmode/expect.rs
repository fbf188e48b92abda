//! What a test expects of its run: a path into what the run came to
//! (`steps.assign_desk.state`, `sent.hr[0].text`) and what the value there must be —
//! equal to a value, contain a text, hold so many items, or not be there at all.

use std::ops::Range;

use serde_json::Value;

/// Where a path may start: the run's `state` and `error`, its `output`, what it used
/// (`usage`), each of its `steps`, what each agent was `sent`, and the `answers` its
/// questions got.
pub const ROOTS: &[&str] = &[
    "state", "error", "output", "usage", "steps", "sent", "answers",
];

/// One line of `[expect]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// As written.
    pub path: String,
    /// Its keys and indexes, as keys (`sent.hr[0]` is `sent`, `hr`, `0`).
    pub segments: Vec<String>,
    pub matcher: Matcher,
    /// Its line in the test file.
    pub line: usize,
    pub span: Range<usize>,
}

/// What the value at a path must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Equal to this (`state = "completed"`, `{ equals = … }`).
    Equals(Value),
    /// A text containing this (`{ contains = "E-1" }`).
    Contains(String),
    /// An array of this many items, or an object of this many keys (`{ count = 2 }`).
    Count(usize),
    /// Not there, or null (`{ absent = true }`).
    Absent,
}

const MATCHERS: &[&str] = &["equals", "contains", "count", "absent"];

impl Matcher {
    /// A matcher from its TOML value: a plain value is `equals`.
    pub fn read(v: &Value) -> Result<Matcher, String> {
        let Value::Object(m) = v else {
            return Ok(Matcher::Equals(v.clone()));
        };
        if m.len() != 1 {
            return Err(format!(
                "a check is one of {} (one key), not {{{}}}",
                MATCHERS.join(", "),
                m.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        let (k, v) = m.iter().next().expect("one key");
        match (k.as_str(), v) {
            ("equals", v) => Ok(Matcher::Equals(v.clone())),
            ("contains", Value::String(s)) => Ok(Matcher::Contains(s.clone())),
            ("contains", _) => Err("`contains` takes a text".into()),
            ("count", Value::Number(n)) => n
                .as_u64()
                .map(|n| Matcher::Count(n as usize))
                .ok_or_else(|| "`count` takes a whole number".into()),
            ("count", _) => Err("`count` takes a whole number".into()),
            ("absent", Value::Bool(true)) => Ok(Matcher::Absent),
            ("absent", _) => Err(
                "write `absent = true` (a path that must be there is checked by its value)".into(),
            ),
            (k, _) => Err(format!(
                "`{k}` is not a check (the checks: {})",
                MATCHERS.join(", ")
            )),
        }
    }

    /// How people read it, for a failure's line.
    pub fn describe(&self) -> String {
        match self {
            Matcher::Equals(v) => v.to_string(),
            Matcher::Contains(s) => format!("a text containing {}", Value::String(s.clone())),
            Matcher::Count(n) => format!("{n} item(s)"),
            Matcher::Absent => "nothing".into(),
        }
    }

    fn holds(&self, got: Option<&Value>) -> bool {
        match (self, got) {
            (Matcher::Absent, None | Some(Value::Null)) => true,
            (Matcher::Absent, _) => false,
            (Matcher::Equals(want), Some(got)) => equal(want, got),
            (Matcher::Equals(Value::Null), None) => true,
            (Matcher::Contains(part), Some(Value::String(s))) => s.contains(part.as_str()),
            (Matcher::Count(n), Some(Value::Array(a))) => a.len() == *n,
            (Matcher::Count(n), Some(Value::Object(o))) => o.len() == *n,
            _ => false,
        }
    }
}

/// Equal as JSON, numbers by value (`1` is `1.0`).
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Numbers as written match what sums of them come to (0.6 + 0.5 + 0.3 is
        // 1.4000000000000001): equal to one part in 10^9.
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// A path's keys and indexes: `sent.hr[0].text` is `sent`, `hr`, `0`, `text`.
pub fn parse_path(path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return Err(
                "a path is keys joined by `.` (`steps.x.state`), each with optional `[n]` indexes"
                    .into(),
            );
        }
        out.push(key.to_owned());
        while !rest.is_empty() {
            let Some(end) = rest.find(']').filter(|_| rest.starts_with('[')) else {
                return Err(format!("`{part}`: an index is `[n]`"));
            };
            let index = &rest[1..end];
            if index.parse::<usize>().is_err() {
                return Err(format!(
                    "`[{index}]` is not an index (a whole number from 0)"
                ));
            }
            out.push(index.to_owned());
            rest = &rest[end + 1..];
        }
    }
    Ok(out)
}

/// The value at `segments` in `doc`, if there is one.
fn at<'a>(doc: &'a Value, segments: &[String]) -> Option<&'a Value> {
    segments.iter().try_fold(doc, |v, s| match v {
        Value::Object(m) => m.get(s),
        Value::Array(a) => s.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// An expectation the run did not meet: what was wanted, and what was there.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub path: String,
    pub line: usize,
    pub wanted: String,
    pub got: String,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (line {}):\n      expected {}\n      got      {}",
            self.path, self.line, self.wanted, self.got
        )
    }
}

impl Expectation {
    /// Checks it against what the run came to.
    pub fn check(&self, doc: &Value) -> Option<Miss> {
        let got = at(doc, &self.segments);
        if self.matcher.holds(got) {
            return None;
        }
        if let (Matcher::Equals(Value::String(want)), Some(Value::String(had))) =
            (&self.matcher, got)
            && (want.chars().count() > 80 || had.chars().count() > 80)
        {
            return Some(text_miss(self, want, had));
        }
        let got = match got {
            None => "nothing there".to_owned(),
            Some(v) => shown(v),
        };
        Some(Miss {
            path: self.path.clone(),
            line: self.line,
            wanted: self.matcher.describe(),
            got,
        })
    }
}

/// Two long texts that differ, shown where they first differ: 40 characters before
/// and after, in each.
fn text_miss(e: &Expectation, want: &str, had: &str) -> Miss {
    let at = want
        .chars()
        .zip(had.chars())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.chars().count().min(had.chars().count()));
    let window = |s: &str| {
        let from = at.saturating_sub(40);
        let part: String = s.chars().skip(from).take(at - from + 40).collect();
        let before = if from > 0 { "…" } else { "" };
        let after = if s.chars().count() > at + 40 {
            "…"
        } else {
            ""
        };
        format!("{before}{}{after}", Value::String(part))
    };
    Miss {
        path: format!("{} (texts differ at character {at})", e.path),
        line: e.line,
        wanted: window(want),
        got: window(had),
    }
}

/// A value as a failure shows it: whole up to a few hundred characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 400 {
        return text;
    }
    let cut: String = text.chars().take(400).collect();
    format!("{cut}… ({} characters)", text.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(path: &str, m: Value) -> Expectation {
        Expectation {
            path: path.into(),
            segments: parse_path(path).unwrap(),
            matcher: Matcher::read(&m).unwrap(),
            line: 1,
            span: 0..0,
        }
    }

    #[test]
    fn paths_reach_keys_and_items_and_each_check_says_what_it_wanted() {
        let doc = json!({
            "state": "completed",
            "steps": {"a": {"state": "failed", "attempts": 3}},
            "sent": {"hr": [{"text": "Create Ada"}]},
        });
        assert!(expect("state", json!("completed")).check(&doc).is_none());
        assert!(expect("steps.a.attempts", json!(3.0)).check(&doc).is_none());
        assert!(
            expect("sent.hr[0].text", json!({"contains": "Ada"}))
                .check(&doc)
                .is_none()
        );
        assert!(expect("sent.hr", json!({"count": 1})).check(&doc).is_none());
        assert!(
            expect("sent.it", json!({"absent": true}))
                .check(&doc)
                .is_none()
        );
        let miss = expect("steps.a.state", json!("completed"))
            .check(&doc)
            .unwrap();
        assert_eq!(
            (miss.wanted.as_str(), miss.got.as_str()),
            ("\"completed\"", "\"failed\"")
        );
        let miss = expect("sent.hr[1].text", json!({"contains": "x"}))
            .check(&doc)
            .unwrap();
        assert_eq!(miss.got, "nothing there");
    }

    #[test]
    fn bad_paths_and_checks_say_what_is_wrong() {
        assert!(parse_path("steps..state").is_err());
        assert!(
            parse_path("sent.hr[x]")
                .unwrap_err()
                .contains("not an index")
        );
        assert!(parse_path("sent.hr[0").is_err());
        assert_eq!(parse_path("a[0][1].b").unwrap(), ["a", "0", "1", "b"]);
        assert!(
            Matcher::read(&json!({"contain": "x"}))
                .unwrap_err()
                .contains("not a check")
        );
        assert!(Matcher::read(&json!({"count": -1})).is_err());
    }
}

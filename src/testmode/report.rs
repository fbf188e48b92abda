//! How test results are told: one line per test and what each failure missed, for
//! people; JUnit XML, for CI systems.

use std::fmt::Write;

use super::file::TestCase;
use super::run::Outcome;

/// A test's line, and what its failure missed (indented), as the terminal shows them.
pub fn line(case: &TestCase, outcome: &Outcome) -> String {
    let virtual_time = orchestrator_core::config::format_duration(outcome.virtual_time);
    let mut out = match outcome.passed() {
        true => format!("test {} ... ok ({virtual_time} of virtual time)", case.name),
        false => format!(
            "test {} ... FAILED ({virtual_time} of virtual time; {})",
            case.name,
            case.file.display()
        ),
    };
    if let Some(why) = &outcome.broken {
        let _ = write!(out, "\n    {why}");
    }
    for miss in &outcome.misses {
        let _ = write!(out, "\n    {miss}");
    }
    out
}

/// The results as JUnit XML: one suite, a test case per test (its workflow as the
/// class), each failure with what it missed.
pub fn junit(results: &[(&TestCase, &Outcome)]) -> String {
    let failures = results.iter().filter(|(_, o)| !o.passed()).count();
    let time: f64 = results.iter().map(|(_, o)| o.wall_time.as_secs_f64()).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites tests=\"{}\" failures=\"{failures}\" time=\"{time:.3}\">",
        results.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"a2a-orchestrator test\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{time:.3}\">",
        results.len()
    );
    for (case, outcome) in results {
        let _ = write!(
            xml,
            "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{:.3}\"",
            escape(&case.name),
            escape(case.workflow.id.as_str()),
            escape(&case.file.display().to_string()),
            outcome.wall_time.as_secs_f64()
        );
        if outcome.passed() {
            xml.push_str("/>\n");
            continue;
        }
        let first = match (&outcome.broken, outcome.misses.first()) {
            (Some(why), _) => why.clone(),
            (None, Some(m)) => format!("{}: expected {}, got {}", m.path, m.wanted, m.got),
            (None, None) => "failed".into(),
        };
        let body: Vec<String> = (outcome.broken.iter().cloned())
            .chain(outcome.misses.iter().map(ToString::to_string))
            .collect();
        let _ = write!(
            xml,
            ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>\n",
            escape(&first),
            escape(&body.join("\n"))
        );
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Text fit for an XML attribute or element: the five special characters escaped, and
/// the characters XML 1.0 cannot hold at all (most control characters) left out.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_holds_no_markup_and_no_character_xml_refuses() {
        assert_eq!(escape("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\n");
    }
}

//! What goes into the logs from the outside, made safe to write: a client's strings
//! (ids, method names, versions) escaped — a newline cannot forge a log line — and cut
//! short, so a 5 MB id writes a few hundred bytes; URLs without their `user:password@`.

use std::fmt;

/// The most characters of an untrusted string a log line shows.
pub const MAX: usize = 128;

/// An untrusted string as it may be logged: control characters escaped (`\n`, `\u{1b}`),
/// at most [`MAX`] characters, with how long it was when cut.
pub struct Untrusted<'a>(pub &'a str);

impl fmt::Display for Untrusted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(MAX) {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        if chars.next().is_some() {
            write!(f, "…({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

/// Shorthand for [`Untrusted`].
pub fn untrusted(s: &str) -> Untrusted<'_> {
    Untrusted(s)
}

/// A URL as it may be logged: without `user:password@`, and untrusted otherwise.
pub fn url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) => {
            if !u.username().is_empty() || u.password().is_some() {
                let _ = u.set_username("");
                let _ = u.set_password(None);
            }
            untrusted(u.as_str()).to_string()
        }
        Err(_) => untrusted(raw).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_cannot_forge_lines_or_flood_the_log() {
        let forged = untrusted("id\n2026-01-01T00:00:00Z ERROR fake").to_string();
        assert!(!forged.contains('\n') && forged.contains("\\n"), "{forged}");
        let huge = "x".repeat(5_000_000);
        let shown = untrusted(&huge).to_string();
        assert!(
            shown.len() < 200 && shown.contains("5000000 bytes"),
            "{}",
            shown.len()
        );
    }

    #[test]
    fn urls_lose_their_credentials() {
        let shown = url("https://alice:s3cret@hooks.example.com/a?b=c");
        assert_eq!(shown, "https://hooks.example.com/a?b=c");
        assert_eq!(url("not a url\n"), "not a url\\n");
    }
}

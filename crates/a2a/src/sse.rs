//! A Server-Sent Events decoder (the WHATWG event-stream format), for the client side of
//! `message/stream` and `tasks/resubscribe`.
//!
//! Written here rather than taken from a crate because we need a hard bound on the size
//! of one event (a misbehaving agent must not make us buffer without limit), and because
//! the format is small: lines ending in LF, CRLF or CR; `data:` lines joined with `\n`;
//! comments (`:`) ignored; an event dispatched on a blank line.

use bytes::{Buf, BytesMut};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if this event set one.
    pub id: Option<String>,
}

/// Why a stream could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// An event is longer than the decoder takes.
    #[error("an SSE event exceeded the limit of {limit} bytes")]
    EventTooLarge {
        /// The most bytes an event may have.
        limit: usize,
    },
    /// A line is not UTF-8.
    #[error("an SSE line is not valid UTF-8")]
    InvalidUtf8,
}

/// Incremental decoder: feed it bytes as they arrive, take complete events out.
///
/// ```
/// use a2a_protocol::sse::SseDecoder;
///
/// let mut decoder = SseDecoder::new(1 << 20);
/// assert!(decoder.feed(b": keep-alive\r\n\r\ndata: {\"a\":").unwrap().is_empty());
/// let events = decoder.feed(b"\r\ndata: 1}\r\n\r\n").unwrap();
/// assert_eq!(events[0].data, "{\"a\":\n1}");
/// ```
#[derive(Debug)]
pub struct SseDecoder {
    buf: BytesMut,
    /// The previous chunk ended in CR: a LF at the start of the next one belongs to it.
    skip_lf: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    max_event_bytes: usize,
}

impl SseDecoder {
    /// A decoder refusing events (and lines) larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            skip_lf: false,
            data: String::new(),
            has_data: false,
            event: None,
            id: None,
            max_event_bytes,
        }
    }

    /// Feeds `chunk`; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if self.buf.is_empty() {
            // The usual case: lines read in place from the chunk, and only a line it
            // leaves unfinished copied, for the next chunk to complete.
            let rest = &chunk[self.lines(chunk, &mut out)?..];
            self.bound(rest.len())?;
            self.buf.extend_from_slice(rest);
        } else {
            // An unfinished line waits: the chunk is appended to it (amortized, never
            // the whole line copied again) and what is left stays where it is.
            self.buf.extend_from_slice(chunk);
            let mut buf = std::mem::take(&mut self.buf);
            let read = self.lines(&buf, &mut out)?;
            buf.advance(read);
            self.bound(buf.len())?;
            self.buf = buf;
        }
        Ok(out)
    }

    /// Reads the complete lines at the start of `input` into `out`; how many bytes they
    /// took, terminators included.
    fn lines(&mut self, input: &[u8], out: &mut Vec<SseEvent>) -> Result<usize, SseError> {
        let mut at = 0;
        loop {
            if self.skip_lf && at < input.len() {
                if input[at] == b'\n' {
                    at += 1;
                }
                self.skip_lf = false;
            }
            let Some(len) = memchr::memchr2(b'\n', b'\r', &input[at..]) else {
                return Ok(at);
            };
            let line = &input[at..at + len];
            if input[at + len] == b'\r' {
                self.skip_lf = true;
            }
            at += len + 1;
            let line = std::str::from_utf8(line).map_err(|_| SseError::InvalidUtf8)?;
            if let Some(ev) = self.line(line)? {
                out.push(ev);
            }
        }
    }

    /// Refuses an unfinished line longer than an event may be.
    fn bound(&self, pending: usize) -> Result<(), SseError> {
        if pending > self.max_event_bytes {
            return Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                } else {
                    // Most events are one `data:` line: its string made to its size.
                    self.data.reserve_exact(value.len());
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > self.max_event_bytes {
                    return Err(SseError::EventTooLarge {
                        limit: self.max_event_bytes,
                    });
                }
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry` and unknown fields are ignored, as the format says.
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let id = self.id.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new(1 << 20);
        chunks.iter().flat_map(|c| d.feed(c).unwrap()).collect()
    }

    #[test]
    fn joins_multi_line_data_and_ignores_comments() {
        let evs = decode_all(&[b": keep-alive\n\ndata: a\ndata: b\n\n"]);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].data, "a\nb");
    }

    #[test]
    fn handles_crlf_and_cr_split_across_chunks() {
        let evs = decode_all(&[b"id: 7\r", b"\ndata: x\r\n\r", b"\ndata: y\r\r"]);
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].data, "x");
        assert_eq!(evs[0].id.as_deref(), Some("7"));
        assert_eq!(evs[1].data, "y");
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        let input = b"event: e\ndata:{\"a\":1}\n\ndata: two\n\n";
        let whole = decode_all(&[input]);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(decode_all(&bytes), whole);
        assert_eq!(whole[0].event.as_deref(), Some("e"));
        assert_eq!(whole[0].data, "{\"a\":1}");
    }

    #[test]
    fn refuses_oversized_events() {
        let mut d = SseDecoder::new(8);
        assert_eq!(
            d.feed(b"data: 0123456789\n"),
            Err(SseError::EventTooLarge { limit: 8 })
        );
        let mut d = SseDecoder::new(8);
        assert!(
            d.feed(b"data: 0123456789").is_err(),
            "an unterminated line counts too"
        );
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        assert!(decode_all(&[b"event: x\n\n"]).is_empty());
    }
}

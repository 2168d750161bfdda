//! A [`Write`] that scrubs what passes through it, a line at a time: a report is written as
//! it is encoded, never held whole — a 5,000-transaction report's text is 3 MB, a million
//! transactions' a gigabyte, and holding it raised the run's peak memory by that much.
//!
//! Scrubbing line by line finds what scrubbing the whole text finds: in the JSON txpace writes,
//! a line break is only ever between values (one inside a string is escaped as `\n`), so no
//! secret can stand across two lines. (A spelling holding a raw line break — a key with `%0A`
//! in it, percent-decoded — could match the whole text only at such a break between values.)

use std::io::{self, Write};

use super::scrub_owned;

/// How much text is gathered before its complete lines are scrubbed and written.
const CHUNK: usize = 64 * 1024;

/// Scrubs complete lines into `inner`, in pieces of about 64 KB (so `inner` needs no buffer
/// of its own); [`ScrubWriter::finish`] writes the rest. Text with no line break yet (compact
/// JSON) is held until one comes or the finish.
pub struct ScrubWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> ScrubWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::with_capacity(CHUNK),
        }
    }

    /// Scrubs and writes the text gathered up to its last line break (all of it when `all`).
    fn drain(&mut self, all: bool) -> io::Result<()> {
        let end = if all {
            self.pending.len()
        } else {
            match self.pending.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => return Ok(()),
            }
        };
        if end == 0 {
            return Ok(());
        }
        let rest = self.pending.split_off(end);
        let done = std::mem::replace(&mut self.pending, rest);
        // Lossless for the UTF-8 that serde_json and `write!` produce; a line is whole, so no
        // character is split between two drains.
        let text = String::from_utf8(done)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        self.inner.write_all(scrub_owned(text).as_bytes())
    }

    /// Writes what is left, flushes and hands back the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.drain(true)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for ScrubWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= CHUNK {
            self.drain(false)?;
        }
        Ok(buf.len())
    }

    /// Writes the complete lines; a line still being written waits for its end.
    fn flush(&mut self) -> io::Result<()> {
        self.drain(false)?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::register_url;

    #[test]
    fn a_secret_across_chunks_is_scrubbed_as_in_the_whole_text() {
        register_url("https://rpc.writer-test.example/?api-key=WRITERSECRET42");
        let line = "{\"url\": \"https://rpc.writer-test.example/?api-key=WRITERSECRET42\"}\n";
        let text = line.repeat(CHUNK / line.len() * 3 + 7);
        let mut w = ScrubWriter::new(Vec::new());
        // Written in pieces that split lines and the secret itself.
        for piece in text.as_bytes().chunks(37) {
            w.write_all(piece).unwrap();
        }
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(out, scrub_owned(text.clone()));
        assert!(!out.contains("WRITERSECRET42"));
        assert_eq!(out.lines().count(), text.lines().count());
    }

    #[test]
    fn text_without_a_final_line_break_is_written_at_the_finish() {
        let mut w = ScrubWriter::new(Vec::new());
        w.write_all(b"first\nlast").unwrap();
        w.flush().unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out, b"first\nlast");
    }
}

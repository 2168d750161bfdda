//! Record framing: `length (u32 LE) | CRC-32 of payload (u32 LE) | payload`.
//!
//! The length lets a reader find the end of a record without parsing it; the checksum tells a
//! complete record from one a kill or power cut left half-written or zero-filled.

use std::io::{self, Read};

/// Largest payload accepted. Records are a few dozen bytes (a header with many input files a few
/// KiB); a larger length field is damage.
pub const MAX_RECORD: usize = 64 * 1024;
/// Bytes before each payload.
const FRAME_HEAD: u64 = 8;

/// Appends one framed payload to `out`.
pub(crate) fn encode(payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// What comes next in a journal.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next<'a> {
    /// A complete record with a good checksum.
    Record(&'a [u8]),
    /// Nothing more.
    End,
    /// The rest cannot be a record but could be one cut short by a crash: ignored.
    Torn(&'static str),
    /// A damaged record: the journal cannot be trusted past it.
    Corrupt(String),
}

/// Streams the frames of a journal of known length (the length tells a damaged last record,
/// which a crash explains, from a damaged one in the middle, which it does not).
pub(crate) struct Reader<R> {
    inner: R,
    /// Offset of the next frame.
    offset: u64,
    total: u64,
    buf: Vec<u8>,
}

impl<R: Read> Reader<R> {
    /// `inner` is positioned at `offset` of a file of `total` bytes.
    pub(crate) fn new(inner: R, offset: u64, total: u64) -> Self {
        Self {
            inner,
            offset,
            total,
            buf: Vec::new(),
        }
    }

    /// Where the frame [`next`](Self::next) reads begins: after the last good record.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn next(&mut self) -> io::Result<Next<'_>> {
        let remaining = self.total.saturating_sub(self.offset);
        if remaining == 0 {
            return Ok(Next::End);
        }
        if remaining < FRAME_HEAD {
            return Ok(Next::Torn("a record header cut short"));
        }
        let mut head = [0u8; FRAME_HEAD as usize];
        self.inner.read_exact(&mut head)?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let body = remaining - FRAME_HEAD;
        if len == 0 {
            // A file system may leave zeros where a write did not complete.
            let mut rest = Vec::new();
            (&mut self.inner).take(body).read_to_end(&mut rest)?;
            return Ok(if rest.iter().all(|&b| b == 0) {
                Next::Torn("zero bytes after the last record")
            } else {
                Next::Corrupt("a record of length 0".to_string())
            });
        }
        // Checked before "cut short": a damaged length field must not pass for a torn tail and
        // hide the records after it.
        if len > MAX_RECORD as u64 {
            return Ok(Next::Corrupt(format!("a record length of {len} bytes")));
        }
        if len > body {
            return Ok(Next::Torn("a record cut short"));
        }
        self.buf.resize(len as usize, 0);
        self.inner.read_exact(&mut self.buf)?;
        if crc32fast::hash(&self.buf) != crc {
            return Ok(if len == body {
                Next::Torn("the last record's checksum does not match")
            } else {
                Next::Corrupt("a record's checksum does not match".to_string())
            });
        }
        self.offset += FRAME_HEAD + len;
        Ok(Next::Record(&self.buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Vec<u8> {
        let mut out = Vec::new();
        encode(b"first", &mut out);
        encode(b"second record", &mut out);
        out
    }

    fn all(bytes: &[u8]) -> (Vec<Vec<u8>>, String) {
        let mut r = Reader::new(bytes, 0, bytes.len() as u64);
        let mut out = Vec::new();
        loop {
            match r.next().expect("in memory") {
                Next::Record(p) => out.push(p.to_vec()),
                Next::End => return (out, "end".into()),
                Next::Torn(why) => return (out, format!("torn: {why}")),
                Next::Corrupt(why) => return (out, format!("corrupt: {why}")),
            }
        }
    }

    #[test]
    fn frames_read_back_in_order() {
        let (recs, end) = all(&two());
        assert_eq!(recs, vec![b"first".to_vec(), b"second record".to_vec()]);
        assert_eq!(end, "end");
    }

    #[test]
    fn every_cut_of_the_last_record_is_torn_not_corrupt() {
        let bytes = two();
        let second = 8 + 5;
        for cut in second + 1..bytes.len() {
            let (recs, end) = all(&bytes[..cut]);
            assert_eq!(recs.len(), 1, "cut at {cut}");
            assert!(end.starts_with("torn"), "cut at {cut}: {end}");
        }
    }

    #[test]
    fn a_flipped_bit_in_the_middle_is_corrupt_and_at_the_end_torn() {
        let mut bytes = two();
        bytes[9] ^= 0x10;
        assert_eq!(
            all(&bytes),
            (
                vec![],
                "corrupt: a record's checksum does not match".to_string()
            )
        );
        let mut bytes = two();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        assert_eq!(
            all(&bytes),
            (
                vec![b"first".to_vec()],
                "torn: the last record's checksum does not match".to_string()
            )
        );
    }

    #[test]
    fn a_damaged_length_is_corrupt_even_when_it_points_past_the_end() {
        let mut bytes = two();
        bytes[3] = 0x40;
        assert_eq!(
            all(&bytes),
            (
                vec![],
                "corrupt: a record length of 1073741829 bytes".to_string()
            )
        );
    }

    #[test]
    fn zero_fill_after_the_last_record_is_torn() {
        let mut bytes = two();
        bytes.extend_from_slice(&[0; 4096]);
        let (recs, end) = all(&bytes);
        assert_eq!(recs.len(), 2);
        assert_eq!(end, "torn: zero bytes after the last record");
    }
}

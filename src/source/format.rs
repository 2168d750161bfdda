//! Recognising how a file is encoded, and turning one piece of text into wire bytes.
//!
//! # Binary or text
//!
//! A file is *binary* when its first [`SAMPLE_LEN`] bytes (after an optional UTF-8 BOM) contain
//! a control byte other than tab, LF and CR (0x00–0x08, 0x0B, 0x0C, 0x0E–0x1F, 0x7F); otherwise
//! it is *text*.
//!
//! We deliberately require neither valid UTF-8 nor the base64/base58 alphabets: a text file with
//! one mangled line (a typo, a Latin-1 comment) must be read as lines, so the user is told which
//! line is bad, instead of the whole file being misread as one binary transaction. The test is
//! still safe the other way round, because every wire transaction is full of control bytes.
//! Each signature costs 96 bytes (64 of signature, 32 of its signer's key), so a transaction of
//! at most 1232 bytes has at most 12 signatures: its first byte (the signature count) and its
//! message header's counts are all below 0x20. To pass as text, each would have to be 9 or 10
//! (tab or LF; 13 is too many) — so at least 9 signatures — *and* those 576+ bytes of ed25519
//! output, as good as random, would all have to avoid the 30 control values: a chance below
//! 10^-30.
//!
//! # base64 or base58
//!
//! Every base58 character is also a base64 character, so a line can be valid in both (about one
//! base58 line in four also decodes as base64; a base64 transaction line avoiding all of
//! `+ / = 0 O I l` is far rarer but possible). In auto mode each line is decided on its own,
//! deterministically:
//! 1. if it decodes in only one of the two, that one;
//! 2. if it decodes in both, the decoding whose bytes parse as a complete transaction (the other
//!    one is then noise: bytes of a different length that do not parse);
//! 3. if both or neither parse, the file's majority encoding ([`vote`]) — so that, say, a
//!    truncated line in a base58 file is reported as a truncated base58 transaction.

use base64::{
    Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};

use super::{PACKET_DATA_SIZE, validate};

/// How input files are encoded: one encoding for every file, or [`InputFormat::Auto`] to detect
/// each file's own ([`detect`]). A clap value so the command line can name it as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Detect per file
    Auto,
    Base64,
    Base58,
    Json,
    Binary,
}

/// How much of a file is looked at to tell binary from text and JSON from lines.
pub(crate) const SAMPLE_LEN: usize = 64 * 1024;

/// The longest base58 text that can hold [`PACKET_DATA_SIZE`] bytes: ceil(1232 · 8 / log2 58).
/// Longer base58 text always decodes to more than 1232 bytes (each leading `1` is one zero byte,
/// every other character at least log256 58 ≈ 0.73 bytes).
pub(crate) const MAX_BASE58_CHARS: usize = 1683;

/// Base58 decoding is quadratic, so text beyond twice the useful length is rejected as too
/// large without decoding it (up to here the exact byte count is reported, which is nicer).
const BASE58_DECODE_LIMIT: usize = 2 * MAX_BASE58_CHARS;

/// Standard alphabet; padding optional because some encoders drop it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One of the two text encodings of a single transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Base64,
    Base58,
}

/// How a piece of text is to be decoded: as the user forced it, or by [the rules above](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextDecoding {
    Only(Encoding),
    /// Auto, with the file's majority encoding as the tie-break.
    Auto(Encoding),
}

/// How a whole file is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One transaction per line; `None` = detect per line.
    Lines(Option<Encoding>),
    Json,
    Binary,
}

pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Detects the layout from the first bytes of a file.
pub(crate) fn detect(sample: &[u8]) -> Layout {
    let body = sample.strip_prefix(BOM).unwrap_or(sample);
    let control = |b: &u8| (*b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || *b == 0x7f;
    if body.iter().any(control) {
        Layout::Binary
    } else if body.trim_ascii_start().starts_with(b"[") {
        Layout::Json
    } else {
        Layout::Lines(None)
    }
}

/// The majority encoding of a file, from its first few text items: a line counts for base64 when
/// it uses a character base58 lacks, for base58 when it uses only base58 characters. Junk lines
/// count for neither, and a tie (including no evidence) goes to base64, the encoding of the RPC.
pub(crate) fn vote<'a>(texts: impl Iterator<Item = &'a str>) -> Encoding {
    let (mut b64, mut b58) = (0usize, 0usize);
    for text in texts {
        if text.bytes().all(is_base58_char) {
            b58 += 1;
        } else if text.bytes().all(is_base64_char) {
            b64 += 1;
        }
    }
    if b58 > b64 {
        Encoding::Base58
    } else {
        Encoding::Base64
    }
}

fn is_base58_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() && !matches!(b, b'0' | b'O' | b'I' | b'l')
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

enum Base58Failure {
    Invalid,
    TooLong(usize),
}

fn base58(text: &str) -> Result<Vec<u8>, Base58Failure> {
    if text.len() > BASE58_DECODE_LIMIT {
        // Only report "too long" for text that is base58 at all.
        return if text.bytes().all(is_base58_char) {
            Err(Base58Failure::TooLong(text.len()))
        } else {
            Err(Base58Failure::Invalid)
        };
    }
    bs58::decode(text)
        .into_vec()
        .map_err(|_| Base58Failure::Invalid)
}

fn base58_too_long(chars: usize) -> String {
    format!("too large: {chars} base58 characters hold more than {PACKET_DATA_SIZE} bytes")
}

/// Decodes one transaction's text (already trimmed) into bytes; the error is the user's reason.
pub(crate) fn decode_text(text: &str, decoding: TextDecoding) -> Result<Vec<u8>, String> {
    match decoding {
        TextDecoding::Only(Encoding::Base64) => {
            BASE64.decode(text).map_err(|_| "not base64".to_string())
        }
        TextDecoding::Only(Encoding::Base58) => base58(text).map_err(|e| match e {
            Base58Failure::Invalid => "not base58".to_string(),
            Base58Failure::TooLong(n) => base58_too_long(n),
        }),
        TextDecoding::Auto(hint) => {
            let b64 = BASE64.decode(text).ok();
            let b58 = base58(text);
            // Text too long to decode as base58 still *is* base58: it takes part in the tie-break.
            let is_b58 = !matches!(b58, Err(Base58Failure::Invalid));
            let use_b58 = match &b64 {
                None => true,
                Some(_) if !is_b58 => false,
                Some(b64) => {
                    let b58_parses = matches!(&b58, Ok(b58) if validate::parses(b58));
                    match (validate::parses(b64), b58_parses) {
                        (true, false) => false,
                        (false, true) => true,
                        _ => hint == Encoding::Base58,
                    }
                }
            };
            match (use_b58, b64) {
                (false, Some(b64)) => Ok(b64),
                _ => b58.map_err(|e| match e {
                    Base58Failure::Invalid => "not base64 or base58".to_string(),
                    Base58Failure::TooLong(n) => base58_too_long(n),
                }),
            }
        }
    }
}

/// The text form other commands write: standard base64 with padding, as RPC `sendTransaction`
/// expects.
pub fn encode_base64(wire: &[u8]) -> String {
    BASE64_WRITE.encode(wire)
}

const BASE64_WRITE: GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Bitcoin-alphabet base58, as the Solana CLI and older tools write it.
pub fn encode_base58(wire: &[u8]) -> String {
    bs58::encode(wire).into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_text_json_binary() {
        assert_eq!(detect(b""), Layout::Lines(None));
        assert_eq!(detect(b"AQID\r\n# note\n"), Layout::Lines(None));
        assert_eq!(detect(b"\xEF\xBB\xBF \t [\"AQID\"]"), Layout::Json);
        assert_eq!(detect(b"\x01\x00\xff"), Layout::Binary);
        assert_eq!(detect(b"AQID\x7f"), Layout::Binary);
        // Comments may hold any text, even non-UTF-8, and junk lines must still be lines.
        assert_eq!(
            detect("# café ✓\nnot base64!\n".as_bytes()),
            Layout::Lines(None)
        );
        assert_eq!(detect(b"# caf\xe9\n"), Layout::Lines(None));
        // 10 signatures start with LF; the message header's counts still give it away.
        assert_eq!(detect(&[10, b'a', b'b', 10, 0, 3]), Layout::Binary);
    }

    #[test]
    fn vote_majority_and_tie() {
        assert_eq!(vote(["AQID+w==", "3mJr7A"].into_iter()), Encoding::Base64);
        assert_eq!(
            vote(["3mJr7A", "3mJr7A", "AQ/D"].into_iter()),
            Encoding::Base58
        );
        assert_eq!(vote(["not base64!"].into_iter()), Encoding::Base64);
        assert_eq!(vote(std::iter::empty()), Encoding::Base64);
    }

    #[test]
    fn decode_forced_and_auto() {
        let only64 = TextDecoding::Only(Encoding::Base64);
        let only58 = TextDecoding::Only(Encoding::Base58);
        assert_eq!(decode_text("AQID", only64), Ok(vec![1, 2, 3]));
        assert_eq!(decode_text("AQI", only64), Ok(vec![1, 2]));
        assert_eq!(decode_text("!!", only64), Err("not base64".into()));
        assert_eq!(decode_text("0OIl", only58), Err("not base58".into()));
        assert_eq!(decode_text("Ldp", only58), Ok(vec![1, 2, 3]));
        // "ABCD" is both base58 ([27, 81, 90]) and base64 ([0, 16, 131]); neither is a
        // transaction, so the file's majority decides. "Ldp" is only base58: its last base64
        // character would leave non-zero bits over.
        let auto58 = TextDecoding::Auto(Encoding::Base58);
        let auto = TextDecoding::Auto(Encoding::Base64);
        assert_eq!(decode_text("ABCD", auto58), Ok(vec![27, 81, 90]));
        assert_eq!(decode_text("ABCD", auto), Ok(vec![0, 16, 131]));
        assert_eq!(decode_text("Ldp", auto), Ok(vec![1, 2, 3]));
        assert_eq!(decode_text("AQID", auto), Ok(vec![1, 2, 3]));
        assert_eq!(
            decode_text("A+/=", auto),
            Err("not base64 or base58".into())
        );
        assert_eq!(decode_text("#x", auto), Err("not base64 or base58".into()));
        // Base58 text longer than a transaction can be still decodes, for an exact size…
        assert_eq!(
            decode_text(&"2".repeat(1685), only58).map(|b| b.len()),
            Ok(1234)
        );
        // …up to a limit, beyond which it is not decoded at all (3367 is not base64 either).
        let long = "2".repeat(BASE58_DECODE_LIMIT + 1);
        let too_long = Err("too large: 3367 base58 characters hold more than 1232 bytes".into());
        assert_eq!(decode_text(&long, only58), too_long);
        assert_eq!(decode_text(&long, auto), too_long);
        // Too long for base58 but also base64: the file's majority decides.
        let both = "2".repeat(BASE58_DECODE_LIMIT + 2);
        assert_eq!(decode_text(&both, auto).map(|b| b.len()), Ok(2526));
        assert_eq!(
            decode_text(&both, auto58),
            Err("too large: 3368 base58 characters hold more than 1232 bytes".into())
        );
    }

    #[test]
    fn encoders_round_trip() {
        let bytes = [0u8, 0, 1, 2, 255];
        assert_eq!(encode_base64(&bytes), "AAABAv8=");
        assert_eq!(encode_base58(&bytes), "11LiA");
        let auto = TextDecoding::Auto(Encoding::Base64);
        assert_eq!(
            decode_text(&encode_base64(&bytes), auto),
            Ok(bytes.to_vec())
        );
    }
}

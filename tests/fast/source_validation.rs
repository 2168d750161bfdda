//! Every validation failure, with its exact reason and position, in every text layout; plus
//! big inputs (order, duplicates across chunks, progress) and random input that must not panic.

use crate::support;

use std::{cell::RefCell, collections::HashMap, path::PathBuf};

use base64::Engine as _;
use solana_transaction::versioned::VersionedTransaction;

use support::{encode, items, legacy, mixed_items, two_signers, v0};
use txpace::{
    cli::InputFormat,
    source::{self, Problem, Progress},
};

/// The mixed file in each text layout: every bad item named at its position with its reason.
#[test]
fn every_failure_has_its_reason_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let raw = mixed_items();
    let cases = [
        ("base64", "mixed64.txt", &["--crlf"][..]),
        ("base58", "mixed58.txt", &["--comments"][..]),
        ("json64", "mixed64.json", &[][..]),
        ("json58", "mixed58.json", &["--crlf", "--bom"][..]),
    ];
    for (format, name, flags) in cases {
        let path = encode(dir.path(), name, format, flags, &items(&raw));
        let p = path.display().to_string();
        let position = |i: usize| match format {
            "json64" | "json58" => format!("{p}[{i}]"),
            _ if flags.contains(&"--comments") => format!("{p}:{}", i + 3),
            _ => format!("{p}:{}", i + 1),
        };
        let expected: Vec<String> = raw
            .iter()
            .enumerate()
            .filter_map(|(i, (_, reason))| {
                let reason = reason.as_ref()?.replace('@', &format!("{p}:"));
                let reason = match format {
                    // Duplicates name the first one's position in the same layout.
                    "json64" | "json58" => reason.replace(&format!("{p}:1"), &format!("{p}[0]")),
                    _ if flags.contains(&"--comments") => {
                        reason.replace(&format!("{p}:1"), &format!("{p}:3"))
                    }
                    _ => reason,
                };
                Some(format!("{}: {reason}", position(i)))
            })
            .collect();
        let (loaded, got) = load_file(&path);
        assert_eq!(got, expected, "{format}");
        let valid: Vec<String> = loaded.valid.iter().map(|t| t.origin.to_string()).collect();
        assert_eq!(valid, [position(0), position(8)], "{format}");
    }
}

/// Every strict prefix of a transaction is reported as truncated, never as something stranger.
#[test]
fn every_prefix_is_truncated() {
    for wire in [legacy(1, 1), v0(2, 1), two_signers(3, 1)] {
        for n in 0..wire.len() {
            assert_eq!(
                source::decode_wire(&wire[..n]).unwrap_err(),
                format!("truncated: {n} bytes end mid-transaction")
            );
        }
        assert!(source::decode_wire(&wire).is_ok());
    }
}

#[test]
fn json_problems_have_positions() {
    let dir = tempfile::tempdir().unwrap();
    let a = legacy(1, 1);
    let path = dir.path().join("odd.json");
    let text = format!("[\n\"{}\",\n42,\n\"\",\n{{}}\n", source::encode_base64(&a));
    std::fs::write(&path, text).unwrap();
    let (loaded, got) = load_file(&path);
    let p = path.display();
    assert_eq!(
        got,
        [
            format!("{p}[1]: not a string but a number"),
            format!("{p}[2]: empty string"),
            format!("{p}[3]: not a string but an object"),
            format!("{p}:6: invalid JSON: EOF while parsing a list"),
        ]
    );
    assert_eq!(loaded.valid.len(), 1);

    std::fs::write(&path, "[\"AQID\"] x").unwrap();
    let (_, got) = load_file(&path);
    assert_eq!(
        got,
        [
            format!("{p}[0]: truncated: 3 bytes end mid-transaction"),
            format!("{p}:1: invalid JSON: trailing characters"),
        ]
    );
}

#[test]
fn overlong_and_non_utf8_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    let a = source::encode_base64(&legacy(1, 1));
    let text = [
        a.as_bytes(),
        b"\n",
        "A".repeat(20_000).as_bytes(),
        b"\n\xff\xfe junk\n",
        "/".repeat(1700).as_bytes(),
        b"\n# a long comment is fine ",
        "x".repeat(9000).as_bytes(),
        b"\n",
        "2".repeat(1701).as_bytes(),
        b"\n",
        "2".repeat(3367).as_bytes(),
    ]
    .concat();
    std::fs::write(&path, text).unwrap();
    let (_, got) = load_file(&path);
    let p = path.display();
    assert_eq!(
        got,
        [
            format!("{p}:2: too large: line of 20000 characters"),
            format!("{p}:3: not base64 or base58"),
            format!("{p}:4: too large: 1275 bytes > 1232"),
            format!("{p}:6: too large: 1245 bytes > 1232"),
            format!("{p}:7: too large: 3367 base58 characters hold more than 1232 bytes"),
        ]
    );
}

/// More items than one parallel chunk (2048): order kept across chunks, a duplicate found
/// across chunks, progress reported and finished. Most lines are cheap junk so the test stays
/// fast in debug builds, where every ed25519 operation costs milliseconds.
#[test]
fn big_input_keeps_order_and_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let lines = 5000usize;
    // Valid transactions at these lines (1-based); the last line repeats the first.
    let valid_at = [1, 2048, 2049, 4097, 4999];
    let mut text = String::new();
    for line in 1..lines {
        if valid_at.contains(&line) {
            text += &source::encode_base64(&legacy(9, line as u64));
        } else {
            text += "AQID";
        }
        text.push('\n');
    }
    text += &source::encode_base64(&legacy(9, 1));
    text.push('\n');
    let path = dir.path().join("big.txt");
    std::fs::write(&path, text).unwrap();

    let seen = RefCell::new(Vec::<Progress>::new());
    let loaded = source::load_with_progress(std::slice::from_ref(&path), InputFormat::Auto, &|p| {
        seen.borrow_mut().push(p)
    })
    .unwrap();
    let p = path.display();
    let valid: Vec<String> = loaded.valid.iter().map(|t| t.origin.to_string()).collect();
    let expected: Vec<String> = valid_at.iter().map(|line| format!("{p}:{line}")).collect();
    assert_eq!(valid, expected);
    assert_eq!(loaded.invalid.len(), lines - valid_at.len());
    for (problem, line) in loaded
        .invalid
        .iter()
        .zip((1..lines).filter(|l| !valid_at.contains(l)))
    {
        assert_eq!(problem.origin, format!("{p}:{line}"));
        assert_eq!(problem.reason, "truncated: 3 bytes end mid-transaction");
    }
    let last = loaded.invalid.last().unwrap();
    assert_eq!(last.to_string(), format!("{p}:{lines}: duplicate of {p}:1"));

    let seen = seen.into_inner();
    let done = Progress {
        decoded: lines,
        verified: lines,
        total: Some(lines),
    };
    assert_eq!(seen.last(), Some(&done));
    assert!(seen.len() >= 5, "progress reported while loading: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0].verified <= w[1].verified
        && w[0].decoded <= w[1].decoded
        && w[0].verified <= w[0].decoded));
}

/// A small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Random bytes and mutated transactions: decoding never panics, `decode_wire` accepts exactly
/// what the Solana SDK decodes and sanitizes, and a mutated transaction is accepted by the
/// loader exactly when the SDK says all its signatures still verify (or, the same bytes seen
/// before, it is named a duplicate).
#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let seeds = [legacy(1, 1), v0(2, 1), two_signers(3, 1)];
    let mut mutated = Vec::new();
    for _ in 0..3000 {
        let len = rng.below(1400);
        let mut bytes = rng.bytes(len);
        if let Some(first) = bytes.first_mut() {
            *first = (rng.below(4)) as u8; // plausible signature counts
        }
        let decoded = source::decode_wire(&bytes);
        assert_eq!(
            decoded.is_ok(),
            sdk_decodes(&bytes),
            "decode_wire disagrees with the SDK on {bytes:?}: {decoded:?}"
        );
        if decoded.is_ok() {
            assert!(
                source::parse_wire(&bytes).is_ok(),
                "decodes but does not parse"
            );
        }

        let mut wire = seeds[rng.below(seeds.len())].clone();
        for _ in 0..=rng.below(3) {
            let i = rng.below(wire.len());
            wire[i] = rng.next() as u8;
        }
        if rng.below(4) == 0 {
            wire.truncate(rng.below(wire.len() + 1));
        }
        if let Ok(tx) = source::parse_wire(&wire) {
            source::summarize(&tx, wire.len());
        }
        assert_eq!(
            source::decode_wire(&wire).is_ok(),
            sdk_decodes(&wire),
            "decode_wire disagrees with the SDK on a mutated transaction {wire:?}"
        );
        if !wire.is_empty() {
            mutated.push(wire);
        }
    }

    // One base64 line per mutated transaction, through the whole loader (signatures included).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutated.b64");
    let text: String = mutated
        .iter()
        .map(|w| base64::engine::general_purpose::STANDARD.encode(w) + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    let loaded = source::load(std::slice::from_ref(&path), InputFormat::Base64).expect("load");
    let p = path.display();
    let accepted: HashMap<String, &[u8]> = loaded
        .valid
        .iter()
        .map(|t| (t.origin.to_string(), &t.wire[..]))
        .collect();
    let rejected: HashMap<String, &str> = loaded
        .invalid
        .iter()
        .map(|pr| (pr.origin.clone(), pr.reason.as_str()))
        .collect();
    for (i, wire) in mutated.iter().enumerate() {
        let origin = format!("{p}:{}", i + 1);
        let sdk = sdk_accepts(wire);
        match (accepted.get(&origin), rejected.get(&origin)) {
            (Some(read), None) => {
                assert!(sdk, "{origin}: accepted, but the SDK rejects {wire:?}");
                assert_eq!(*read, &wire[..], "{origin}: accepted other bytes");
            }
            (None, Some(reason)) => assert!(
                !sdk || reason.starts_with("duplicate of"),
                "{origin}: rejected ({reason}), but the SDK accepts it"
            ),
            other => panic!("{origin}: no single outcome: {other:?}"),
        }
    }
    // Not vacuous: some mutations left a valid transaction, most broke it.
    assert!(!loaded.valid.is_empty(), "no mutated line was accepted");
    assert!(loaded.invalid.len() > mutated.len() / 2, "few rejections");
}

/// The SDK alone: exactly one transaction's bytes (its own serialization, within the packet
/// size) whose message sanitizes.
fn sdk_decodes(wire: &[u8]) -> bool {
    if wire.len() > source::PACKET_DATA_SIZE {
        return false;
    }
    let Ok(tx) = bincode::deserialize::<VersionedTransaction>(wire) else {
        return false;
    };
    bincode::serialize(&tx).ok().as_deref() == Some(wire) && tx.sanitize().is_ok()
}

/// [`sdk_decodes`], and signed: at least one signature, each verifying.
fn sdk_accepts(wire: &[u8]) -> bool {
    sdk_decodes(wire)
        && bincode::deserialize::<VersionedTransaction>(wire).is_ok_and(|tx| {
            !tx.signatures.is_empty() && tx.verify_with_results().iter().all(|ok| *ok)
        })
}

/// Random files in every format: loading never panics and never fails as a whole.
#[test]
fn random_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let a = source::encode_base64(&legacy(1, 1));
    let pieces: [&str; 14] = [
        "AQID", "3mJr", "+/=", "#", "[", "]", "\"", ",", "\r\n", "\n", " ", "é✓", "\u{0}", &a,
    ];
    let formats = [
        InputFormat::Auto,
        InputFormat::Base64,
        InputFormat::Base58,
        InputFormat::Json,
        InputFormat::Binary,
    ];
    for round in 0..150 {
        let bytes = if round % 3 == 0 {
            let len = rng.below(3000);
            rng.bytes(len)
        } else {
            let mut text = String::new();
            for _ in 0..rng.below(60) {
                text += pieces[rng.below(pieces.len())];
            }
            text.into_bytes()
        };
        let path: PathBuf = dir.path().join(format!("r{round}"));
        std::fs::write(&path, &bytes).unwrap();
        for format in formats {
            let loaded = source::load(std::slice::from_ref(&path), format)
                .expect("never a whole-input error");
            for problem in &loaded.invalid {
                assert!(!problem.reason.is_empty());
            }
        }
    }
}

/// Loads one file and renders its problems as `FILE:LINE: reason`, the way users see them.
fn load_file(path: &std::path::Path) -> (source::Loaded, Vec<String>) {
    let loaded = source::load(std::slice::from_ref(&path.to_path_buf()), InputFormat::Auto)
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    let got = loaded.invalid.iter().map(Problem::to_string).collect();
    (loaded, got)
}

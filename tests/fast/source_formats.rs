//! Every input format, made by an independent encoder (tests/fixtures/encode.py), read back by
//! `source::load` with the exact origins, signatures and bytes.

use crate::support;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use support::{Item, encode, legacy, nonced, signature_of, v0, write_bin};
use txpace::{
    cli::InputFormat,
    source::{self, Loaded, PACKET_DATA_SIZE, Problem, SourceError},
};

fn load(files: &[&Path], format: InputFormat) -> Loaded {
    let files: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
    source::load(&files, format).expect("load")
}

fn origins(loaded: &Loaded) -> Vec<String> {
    loaded.valid.iter().map(|t| t.origin.to_string()).collect()
}

fn problems(loaded: &Loaded) -> Vec<String> {
    loaded.invalid.iter().map(Problem::to_string).collect()
}

/// Legacy and v0 transactions, as the tests below expect them.
fn pair() -> [Vec<u8>; 2] {
    [legacy(1, 1), v0(2, 1)]
}

#[test]
fn line_formats_with_comments_crlf_and_bom() {
    let dir = tempfile::tempdir().unwrap();
    let txs = pair();
    let items = [Item::Tx(&txs[0]), Item::Tx(&txs[1])];
    for format in ["base64", "base58"] {
        for flags in [
            &[][..],
            &["--crlf"],
            &["--bom", "--comments"],
            &["--crlf", "--bom", "--comments"],
        ] {
            let name = format!("{format}{}.txt", flags.join(""));
            let path = encode(dir.path(), &name, format, flags, &items);
            let loaded = load(&[&path], InputFormat::Auto);
            assert_eq!(problems(&loaded), Vec::<String>::new(), "{name}");
            // With --comments the transactions sit on lines 3 and 4.
            let first = if flags.contains(&"--comments") { 3 } else { 1 };
            let p = path.display();
            assert_eq!(
                origins(&loaded),
                [format!("{p}:{first}"), format!("{p}:{}", first + 1)]
            );
            for (tx, wire) in loaded.valid.iter().zip(&txs) {
                assert_eq!(&tx.wire[..], &wire[..]);
                assert_eq!(tx.signature.to_string(), signature_of(wire));
                assert_eq!(tx.recent_blockhash, support::BLOCKHASH);
                assert!(!tx.durable_nonce);
            }
            // Forcing the right format gives the same result.
            let forced = if format == "base64" {
                InputFormat::Base64
            } else {
                InputFormat::Base58
            };
            assert_eq!(origins(&load(&[&path], forced)), origins(&loaded));
        }
    }
}

#[test]
fn json_arrays_of_base64_and_base58() {
    let dir = tempfile::tempdir().unwrap();
    let txs = pair();
    let items = [Item::Tx(&txs[0]), Item::Tx(&txs[1])];
    for format in ["json64", "json58"] {
        for flags in [&[][..], &["--crlf", "--bom"]] {
            let path = encode(
                dir.path(),
                &format!("{format}{}.json", flags.join("")),
                format,
                flags,
                &items,
            );
            for forced in [InputFormat::Auto, InputFormat::Json] {
                let loaded = load(&[&path], forced);
                assert_eq!(problems(&loaded), Vec::<String>::new());
                let p = path.display();
                assert_eq!(origins(&loaded), [format!("{p}[0]"), format!("{p}[1]")]);
                assert_eq!(&loaded.valid[1].wire[..], &txs[1][..]);
            }
        }
    }
}

#[test]
fn binary_files_hold_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    for (i, wire) in pair().iter().enumerate() {
        let path = write_bin(dir.path(), &format!("tx{i}.bin"), wire);
        for forced in [InputFormat::Auto, InputFormat::Binary] {
            let loaded = load(&[&path], forced);
            assert_eq!(problems(&loaded), Vec::<String>::new());
            assert_eq!(origins(&loaded), [path.display().to_string()]);
            assert_eq!(&loaded.valid[0].wire[..], &wire[..]);
        }
    }
    let big = write_bin(dir.path(), "big.bin", &support::garbage(70_000));
    let loaded = load(&[&big], InputFormat::Auto);
    assert_eq!(
        problems(&loaded),
        [format!("{}: too large: 70000 bytes > 1232", big.display())]
    );
}

#[test]
fn several_files_in_order_with_duplicates_across_them() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = pair();
    let c = nonced(3, 1);
    let f1 = encode(
        dir.path(),
        "one.txt",
        "base64",
        &[],
        &[Item::Tx(&a), Item::Tx(&b)],
    );
    let f2 = encode(
        dir.path(),
        "two.json",
        "json58",
        &[],
        &[Item::Tx(&c), Item::Tx(&a)],
    );
    let f3 = write_bin(dir.path(), "three.bin", &b);
    let loaded = load(&[&f1, &f2, &f3], InputFormat::Auto);
    let (p1, p2, p3) = (f1.display(), f2.display(), f3.display());
    assert_eq!(
        origins(&loaded),
        [format!("{p1}:1"), format!("{p1}:2"), format!("{p2}[0]")]
    );
    assert!(loaded.valid[2].durable_nonce);
    assert_eq!(
        problems(&loaded),
        [
            format!("{p2}[1]: duplicate of {p1}:1"),
            format!("{p3}: duplicate of {p1}:2")
        ]
    );
}

#[test]
fn forced_format_that_does_not_match() {
    let dir = tempfile::tempdir().unwrap();
    let [a, _] = pair();
    let path = encode(dir.path(), "b64.txt", "base64", &[], &[Item::Tx(&a)]);
    let loaded = load(&[&path], InputFormat::Base58);
    assert_eq!(
        problems(&loaded),
        [format!("{}:1: not base58", path.display())]
    );
    let loaded = load(&[&path], InputFormat::Json);
    assert_eq!(loaded.invalid.len(), 1);
    assert!(
        loaded.invalid[0].reason.starts_with("invalid JSON: "),
        "{:?}",
        loaded.invalid
    );
}

/// A base58 line that is also valid base64 is read as base58, whatever the file's majority.
#[test]
fn base58_line_that_is_also_base64() {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let ambiguous = (1..200)
        .map(|lamports| legacy(4, lamports))
        .find(|wire| engine.decode(bs58::encode(wire).into_string()).is_ok())
        .expect("one in four base58 lines is also base64");
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = pair();
    let alone = encode(
        dir.path(),
        "alone.txt",
        "base58",
        &[],
        &[Item::Tx(&ambiguous)],
    );
    let loaded = load(&[&alone], InputFormat::Auto);
    assert_eq!(problems(&loaded), Vec::<String>::new());
    assert_eq!(&loaded.valid[0].wire[..], &ambiguous[..]);

    // In a base64-majority file (lines 1–2 base64, line 3 the base58 one).
    let b64 = encode(
        dir.path(),
        "b64.txt",
        "base64",
        &[],
        &[Item::Tx(&a), Item::Tx(&b)],
    );
    let b58 = encode(
        dir.path(),
        "b58.txt",
        "base58",
        &[],
        &[Item::Tx(&ambiguous)],
    );
    let mixed = dir.path().join("mixed.txt");
    let text = std::fs::read_to_string(&b64).unwrap() + &std::fs::read_to_string(&b58).unwrap();
    std::fs::write(&mixed, text).unwrap();
    let loaded = load(&[&mixed], InputFormat::Auto);
    assert_eq!(problems(&loaded), Vec::<String>::new());
    assert_eq!(&loaded.valid[2].wire[..], &ambiguous[..]);
}

#[test]
fn whole_input_failures_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let err = source::load(std::slice::from_ref(&missing), InputFormat::Auto).unwrap_err();
    assert!(matches!(err, SourceError::Open { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "cannot open {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    let err = source::load(&["-".into(), "-".into()], InputFormat::Auto).unwrap_err();
    assert_eq!(
        err.to_string(),
        "standard input (-) is given more than once"
    );
    let err = source::load(&[dir.path().to_path_buf()], InputFormat::Auto).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read {}: Is a directory (os error 21)",
            dir.path().display()
        )
    );
    assert_eq!(
        source::load(&[], InputFormat::Auto)
            .unwrap_err()
            .to_string(),
        "no input files"
    );
}

#[test]
fn empty_and_comment_only_files_hold_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_bin(dir.path(), "empty.txt", b"");
    let comments = write_bin(
        dir.path(),
        "c.txt",
        b"\xEF\xBB\xBF# nothing yet\r\n\r\n   \n",
    );
    let loaded = load(&[&empty, &comments], InputFormat::Auto);
    assert!(loaded.valid.is_empty() && loaded.invalid.is_empty());
}

#[test]
fn encoders_match_the_independent_encoder() {
    let dir = tempfile::tempdir().unwrap();
    let [a, _] = pair();
    for (format, ours) in [
        ("base64", source::encode_base64(&a)),
        ("base58", source::encode_base58(&a)),
    ] {
        let path = encode(dir.path(), format, format, &[], &[Item::Tx(&a)]);
        assert_eq!(std::fs::read_to_string(path).unwrap(), format!("{ours}\n"));
    }
    assert!(a.len() <= PACKET_DATA_SIZE);
}

/// A million loaded transactions must fit in memory: the struct itself stays small (the wire
/// bytes are one shared allocation, the origin shares its file's name). 168 bytes: the
/// signature and blockhash (96), the wire's shared pointer (16), the origin (24: the name's
/// pointer and a line), the compute budget read once at load (24), so the report and preflight
/// never decode a transaction again, and the durable-nonce flag.
#[test]
fn loaded_tx_is_light() {
    assert!(
        std::mem::size_of::<source::LoadedTx>() <= 168,
        "{}",
        std::mem::size_of::<source::LoadedTx>()
    );
}

//! `txpace inspect`, run as the real binary on files made by the independent encoder.
//! Files are named relative to the working directory so the output is exact and stable.

use crate::support;

use std::{
    io::Write,
    path::Path,
    process::{Command, Output, Stdio},
};

use support::{Item, encode, items, legacy, mixed_items, nonced, plain, v0, write_bin};

fn inspect(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txpace"))
        .arg("inspect")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run txpace")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

/// Valid legacy and v0 transactions in all four formats (and CRLF, BOM, comments): exit 0, one
/// row each, nothing on stderr.
#[test]
fn accepts_every_format_and_shows_the_details() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b, n, p) = (legacy(1, 1), v0(2, 1), nonced(3, 1), plain(4, 7));
    encode(
        d,
        "a.b64",
        "base64",
        &["--crlf"],
        &[Item::Tx(&a), Item::Tx(&n)],
    );
    encode(
        d,
        "b.b58",
        "base58",
        &["--bom", "--comments"],
        &[Item::Tx(&b)],
    );
    encode(d, "c.json", "json64", &[], &[Item::Tx(&legacy(1, 2))]);
    encode(d, "d.json", "json58", &["--crlf"], &[Item::Tx(&v0(2, 2))]);
    write_bin(d, "e.bin", &p);

    let out = inspect(d, &["a.b64", "b.b58", "c.json", "d.json", "e.bin"]);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    // Fixed keys and blockhash make signatures deterministic (ed25519 signing is).
    let expected = "\
POSITION   SIGNATURE      FEE PAYER      VERSION  BLOCKHASH      CU PRICE  CU LIMIT  SIZE  IXS  STATUS
a.b64:1    61F5ZJsk…EanP  AKnL4NNf…RSZ9  legacy   US517G59…ELFx   1000000      1000   235    3  OK
a.b64:2    28a1PdkV…aUWD  GyGKxMyg…Udse  legacy   durable nonce   default   default   257    2  OK
b.b58:3    4WrCMQvQ…e9sZ  9hSR6S7W…GWBu  v0       US517G59…ELFx   1000000      1000   237    3  OK
c.json[0]  5Y4R1SnP…U7SD  AKnL4NNf…RSZ9  legacy   US517G59…ELFx   1000000      1000   235    3  OK
d.json[0]  2rShPBM4…XaJ9  9hSR6S7W…GWBu  v0       US517G59…ELFx   1000000      1000   237    3  OK
e.bin      3QmR15K6…RrPT  EdmxWPmx…EEh1  legacy   US517G59…ELFx   default   default   215    1  OK
6 transactions: 6 valid, 0 invalid
";
    assert_eq!(text(&out.stdout), expected);
}

/// The mixed file of the "done when": exit 2, every bad line named on stderr with its
/// exact reason, and each one a row of the table too.
#[test]
fn mixed_file_exits_2_naming_every_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let raw = mixed_items();
    encode(dir.path(), "mixed.txt", "base64", &["--crlf"], &items(&raw));
    let out = inspect(dir.path(), &["mixed.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let expected: String = raw
        .iter()
        .enumerate()
        .filter_map(|(i, (_, reason))| {
            let reason = reason.as_ref()?.replace('@', "mixed.txt:");
            Some(format!("mixed.txt:{}: {reason}\n", i + 1))
        })
        .collect();
    assert_eq!(text(&out.stderr), expected);
    let stdout = text(&out.stdout);
    for line in expected.lines() {
        let (position, reason) = line.split_once(": ").unwrap();
        assert!(
            stdout
                .lines()
                .any(|row| row.starts_with(&format!("{position} ")) && row.ends_with(reason)),
            "no row for {line} in\n{stdout}"
        );
    }
    assert!(
        stdout.ends_with("15 transactions: 2 valid, 13 invalid\n"),
        "{stdout}"
    );
}

#[test]
fn json_report() {
    let dir = tempfile::tempdir().unwrap();
    let a = legacy(1, 1);
    encode(
        dir.path(),
        "two.txt",
        "base64",
        &[],
        &[Item::Tx(&a), Item::Text("nope!")],
    );
    let out = inspect(dir.path(), &["--json", "two.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "two.txt:2: not base64 or base58\n");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let signature = support::signature_of(&a);
    let fee_payer = solana_signer::Signer::pubkey(&support::keypair(1)).to_string();
    assert_eq!(
        report,
        serde_json::json!({
            "transactions": [
                {
                    "position": "two.txt:1",
                    "valid": true,
                    "error": null,
                    "signature": signature,
                    "fee_payer": fee_payer,
                    "version": "legacy",
                    "recent_blockhash": support::BLOCKHASH.to_string(),
                    "durable_nonce": false,
                    "cu_price": 1_000_000,
                    "cu_limit": 1_000,
                    "fee_percentile": null,
                    "size": a.len(),
                    "instructions": 3
                },
                {
                    "position": "two.txt:2",
                    "valid": false,
                    "error": "not base64 or base58",
                    "signature": null,
                    "fee_payer": null,
                    "version": null,
                    "recent_blockhash": null,
                    "durable_nonce": null,
                    "cu_price": null,
                    "cu_limit": null,
                    "fee_percentile": null,
                    "size": null,
                    "instructions": null
                }
            ],
            "summary": { "total": 2, "valid": 1, "invalid": 1 },
            // Offline: no cluster named, no recent fees.
            "fees": null
        })
    );

    // `--output json` is the same document, `json-compact` the same on one line.
    let same = inspect(dir.path(), &["--output", "json", "two.txt"]);
    assert_eq!(same.stdout, out.stdout);
    let compact = inspect(dir.path(), &["--output", "json-compact", "two.txt"]);
    let line = text(&compact.stdout);
    assert_eq!(line.lines().count(), 1, "{line}");
    let compact: serde_json::Value = serde_json::from_str(&line).expect("one JSON line");
    assert_eq!(compact, report);
}

#[test]
fn reads_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = encode(dir.path(), "in.b58", "base58", &[], &[Item::Tx(&v0(2, 1))]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .args(["inspect", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = std::fs::read(path).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().nth(1).unwrap().starts_with("<stdin>:1 "),
        "{stdout}"
    );
}

#[test]
fn unreadable_input_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = inspect(dir.path(), &["missing.txt"]);
    assert_eq!(out.status.code(), Some(2), "bad input exits 2");
    assert_eq!(
        text(&out.stderr),
        "error: cannot open missing.txt: No such file or directory (os error 2)\n"
    );
    assert_eq!(text(&out.stdout), "");
    let out = inspect(dir.path(), &["-", "-"]);
    assert_eq!(out.status.code(), Some(2), "bad input exits 2");
    assert_eq!(
        text(&out.stderr),
        "error: standard input (-) is given more than once\n"
    );
}

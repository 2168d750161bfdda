//! Every numeric flag of every subcommand, run through the real binary with values that are not
//! a usable number (NaN, infinities, negatives, overflowing): each is a usage error (exit 2)
//! whose message names the flag, and none makes txpace panic.

use std::process::Command;

/// Values no numeric flag may take.
const BAD: [&str; 6] = [
    "NaN",
    "inf",
    "-1",
    "1e400",
    "99999999999999999999999",
    "-inf",
];

/// A subcommand with what it requires besides the flag under test, and its numeric flags.
struct Case {
    base: &'static [&'static str],
    flags: &'static [&'static str],
}

/// Flags of `SendOpts`, shared by send, demo and deploy.
const SEND_FLAGS: [&str; 5] = [
    "--rate",
    "--send-timeout",
    "--fanout",
    "--resend-interval",
    "--deadline",
];

fn cases() -> Vec<Case> {
    vec![
        Case {
            base: &["gen", "--out", "never-written.b64"],
            flags: &[
                "--count",
                "-n",
                "--with-compute-unit-price",
                "--cu-price",
                "--with-compute-unit-limit",
                "--cu-limit",
                "--payers",
                "--fee-percentile",
            ],
        },
        Case {
            base: &["send", "never-read.b64"],
            flags: &SEND_FLAGS,
        },
        Case {
            base: &["send", "never-read.b64", "--metrics", "127.0.0.1:0"],
            flags: &["--metrics-linger"],
        },
        Case {
            base: &["demo"],
            flags: &[
                "--count",
                "--with-compute-unit-price",
                "--with-compute-unit-limit",
            ],
        },
        Case {
            base: &["demo"],
            flags: &SEND_FLAGS,
        },
        Case {
            base: &["deploy", "never-read.so"],
            flags: &[
                "--max-len",
                "--max-sign-attempts",
                "--with-compute-unit-price",
                "--with-compute-unit-limit",
                "--fee-percentile",
            ],
        },
        Case {
            base: &["deploy", "never-read.so"],
            flags: &SEND_FLAGS,
        },
    ]
}

/// Runs `txpace ARGS` in an empty directory with an empty CLI config; returns (code, stderr).
fn run(dir: &std::path::Path, args: &[String]) -> (Option<i32>, String) {
    let config = dir.join("empty-cli-config.yml");
    std::fs::write(&config, "").expect("writing an empty CLI config");
    let out = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir)
        .arg("--config")
        .arg(&config)
        .args(args)
        .output()
        .expect("running txpace");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_numeric_flag_rejects_non_numbers_with_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wrong = Vec::new();
    for case in cases() {
        for flag in case.flags {
            for value in BAD {
                // Both spellings: `--flag VALUE`, which users type, and `--flag=VALUE`. Clap
                // takes `-inf` apart from its flag for an option of its own (as it must, or a
                // missing value would swallow the next flag); joined, it reaches the parser.
                let apart = [*flag, value].map(String::from).to_vec();
                let joined = vec![format!("{flag}={value}")];
                let spellings = if value == "-inf" {
                    vec![joined]
                } else {
                    vec![apart, joined]
                };
                for tail in spellings {
                    let args: Vec<String> = case
                        .base
                        .iter()
                        .map(|a| a.to_string())
                        .chain(tail)
                        .collect();
                    let (code, stderr) = run(dir.path(), &args);
                    // `-n` and the old compute-budget names are reported by their long names.
                    let named = match *flag {
                        "-n" => "--count",
                        "--cu-price" => "--with-compute-unit-price",
                        "--cu-limit" => "--with-compute-unit-limit",
                        other => other,
                    };
                    if code != Some(2) || !stderr.contains(named) || stderr.contains("panicked") {
                        wrong.push(format!(
                            "txpace {}: exit {code:?}\n{stderr}",
                            args.join(" ")
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// `--tpu` takes an address: a port that is no port number is refused the same way.
#[test]
fn tpu_port_must_be_a_port() {
    let dir = tempfile::tempdir().expect("tempdir");
    for port in ["NaN", "-1", "65536", "99999999999999999999999", "inf"] {
        let args = ["send", "never-read.b64", "--tpu"]
            .map(String::from)
            .into_iter()
            .chain([format!("127.0.0.1:{port}")])
            .collect::<Vec<_>>();
        let (code, stderr) = run(dir.path(), &args);
        assert_eq!(code, Some(2), "port {port}: {stderr}");
        assert!(stderr.contains("--tpu"), "port {port}: {stderr}");
        assert!(!stderr.contains("panicked"), "port {port}: {stderr}");
    }
}

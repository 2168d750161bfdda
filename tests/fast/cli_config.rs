//! txpace.toml, `TXPACE_*` variables and `txpace config path|show`, through the real binary:
//! precedence flag > environment > txpace.toml > Solana CLI config > default, located errors
//! with exit 2, and no secret in any output.

use std::{
    path::PathBuf,
    process::{Command, Output},
};

/// A home of its own, so neither the user's txpace.toml nor their Solana config is read.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn toml_path(&self) -> PathBuf {
        self.dir.path().join("config/txpace/txpace.toml")
    }

    fn write_toml(&self, text: &str) -> PathBuf {
        let p = self.toml_path();
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn txpace(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_txpace"));
        cmd.args(args)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"));
        for (k, _) in std::env::vars() {
            if k.starts_with("TXPACE_") || k == "RUST_LOG" {
                cmd.env_remove(k);
            }
        }
        cmd.envs(env.iter().copied()).output().unwrap()
    }
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// The `key = value  # source` line of `key` in `config show`.
fn shown<'a>(show: &'a str, key: &str) -> (&'a str, &'a str) {
    let line = show
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{show}"));
    let (kv, source) = line.split_once(" # ").unwrap();
    (kv.split_once(" = ").unwrap().1.trim(), source)
}

#[test]
fn path_is_in_the_config_directory_unless_named() {
    let home = Home::new();
    let out = home.txpace(&["config", "path"], &[]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout).trim(),
        home.toml_path().display().to_string()
    );
    let out = home.txpace(&["config", "path", "--txpace-config", "/x/t.toml"], &[]);
    assert_eq!(text(&out.stdout).trim(), "/x/t.toml");
    let out = home.txpace(&["config", "path"], &[("TXPACE_CONFIG", "/y/t.toml")]);
    assert_eq!(text(&out.stdout).trim(), "/y/t.toml");
    // A broken file does not hide where it is.
    home.write_toml("[send\n");
    let out = home.txpace(&["config", "path"], &[]);
    assert!(out.status.success());
}

#[test]
fn show_without_any_file_is_the_defaults() {
    let home = Home::new();
    let out = home.txpace(&["config", "show"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let show = text(&out.stdout);
    assert!(show.contains("(not found)"), "{show}");
    assert_eq!(
        shown(&show, "url"),
        ("\"http://127.0.0.1:8899/\"", "default")
    );
    assert_eq!(
        shown(&show, "ws"),
        ("\"ws://127.0.0.1:8900/\"", "from the RPC URL")
    );
    assert_eq!(shown(&show, "commitment"), ("\"confirmed\"", "default"));
    assert_eq!(shown(&show, "rate"), ("100", "default"));
    assert_eq!(
        shown(&show, "resend_interval"),
        ("\"4s\"", "default (10 slots)")
    );
    assert_eq!(shown(&show, "theme"), ("\"auto\"", "default"));
    assert_eq!(shown(&show, "pause"), ("[\"p\", \"space\"]", "default"));
    assert_eq!(shown(&show, "force_quit"), ("[\"ctrl-c\"]", "default"));
    // What show prints is a txpace.toml: it reads back.
    let copy = home.write_toml(&show);
    let again = home.txpace(
        &["config", "show", "--txpace-config", copy.to_str().unwrap()],
        &[],
    );
    assert!(again.status.success(), "{}", text(&again.stderr));
}

fn solana_config(home: &Home, url: &str) -> PathBuf {
    let p = home.dir.path().join("solana.yml");
    std::fs::write(
        &p,
        format!("json_rpc_url: \"{url}\"\ncommitment: processed\n"),
    )
    .unwrap();
    p
}

#[test]
fn flag_beats_environment_beats_file_beats_solana_config() {
    let home = Home::new();
    let yml = solana_config(&home, "http://10.0.0.1:7000");
    let yml = yml.to_str().unwrap();
    let show = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["config", "show", "-C", yml];
        all.extend_from_slice(args);
        let out = home.txpace(&all, env);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let s = show(&[], &[]);
    assert_eq!(
        shown(&s, "url"),
        ("\"http://10.0.0.1:7000/\"", "Solana CLI config")
    );
    assert_eq!(
        shown(&s, "commitment"),
        ("\"processed\"", "Solana CLI config")
    );

    home.write_toml(
        "url = \"http://10.0.0.2:7000\"\ncommitment = \"finalized\"\n[send]\nrate = 250\n",
    );
    let s = show(&[], &[]);
    assert_eq!(
        shown(&s, "url"),
        ("\"http://10.0.0.2:7000/\"", "txpace.toml")
    );
    assert_eq!(
        shown(&s, "ws"),
        ("\"ws://10.0.0.2:7001/\"", "from the RPC URL")
    );
    assert_eq!(shown(&s, "commitment"), ("\"finalized\"", "txpace.toml"));
    assert_eq!(shown(&s, "rate"), ("250", "txpace.toml"));

    let env = [
        ("TXPACE_URL", "http://10.0.0.3:7000"),
        ("TXPACE_COMMITMENT", "confirmed"),
    ];
    let s = show(&[], &env);
    assert_eq!(
        shown(&s, "url"),
        ("\"http://10.0.0.3:7000/\"", "environment TXPACE_URL")
    );
    assert_eq!(
        shown(&s, "commitment"),
        ("\"confirmed\"", "environment TXPACE_COMMITMENT")
    );

    let s = show(
        &["-u", "http://10.0.0.4:7000", "--commitment", "processed"],
        &env,
    );
    assert_eq!(shown(&s, "url"), ("\"http://10.0.0.4:7000/\"", "flag"));
    assert_eq!(shown(&s, "commitment"), ("\"processed\"", "flag"));
}

#[test]
fn a_bad_file_refuses_to_run_naming_file_line_and_reason() {
    let home = Home::new();
    let path = home.write_toml("[send]\nrate = 100\nfanout = 99\n");
    let want = format!(
        "error: {}:3:10: \"99\" is not a fan-out: give 0 to 16 upcoming leaders",
        path.display()
    );
    for args in [
        &["config", "show"][..],
        &["send", "txs.b64"],
        &["inspect", "txs.b64"],
    ] {
        let out = home.txpace(args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr).trim(), want, "{args:?}");
    }
    home.write_toml("[send\nrate = 1\n");
    let out = home.txpace(&["config", "show"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with(&format!("error: {}:1:", path.display())));
    // Describing txpace needs no settings.
    assert!(home.txpace(&["man"], &[]).status.success());
    assert!(home.txpace(&["completions", "bash"], &[]).status.success());
    // A named file that does not exist is an error too.
    let out = home.txpace(
        &["config", "show", "--txpace-config", "/nonexistent.toml"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("reading /nonexistent.toml"));
}

#[test]
fn keys_in_urls_reach_no_output() {
    let home = Home::new();
    home.write_toml("ws = \"wss://n.example/F1leKey/?api-key=F1leQuery\"\n");
    let env = [("TXPACE_URL", "https://n.example/EnvKey9/?api-key=EnvQuery9")];
    let out = home.txpace(&["config", "show"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let show = text(&out.stdout);
    assert_eq!(
        shown(&show, "url"),
        ("\"https://n.example/***?***\"", "environment TXPACE_URL")
    );
    assert_eq!(
        shown(&show, "ws"),
        ("\"wss://n.example/***?***\"", "txpace.toml")
    );
    let help = home.txpace(&["send", "--help"], &env);
    assert!(text(&help.stdout).contains("TXPACE_URL"));
    for out in [&out, &help] {
        for secret in ["EnvKey9", "EnvQuery9", "F1leKey", "F1leQuery"] {
            assert!(!text(&out.stdout).contains(secret), "{secret}");
            assert!(!text(&out.stderr).contains(secret), "{secret}");
        }
    }
}

#[test]
fn keys_rebound_in_the_file_show_as_such() {
    let home = Home::new();
    home.write_toml("[keys]\npause = \"x\"\nquit = [\"Q\", \"ctrl-q\"]\n");
    let out = home.txpace(&["config", "show"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let show = text(&out.stdout);
    assert_eq!(shown(&show, "pause"), ("[\"x\"]", "txpace.toml"));
    assert_eq!(shown(&show, "quit"), ("[\"Q\", \"ctrl-q\"]", "txpace.toml"));
    assert_eq!(shown(&show, "help"), ("[\"?\"]", "default"));
}

#[test]
fn verbosity_flags_parse_and_conflict() {
    let home = Home::new();
    assert!(
        home.txpace(&["-vv", "config", "path"], &[])
            .status
            .success()
    );
    assert!(home.txpace(&["config", "path", "-q"], &[]).status.success());
    assert_eq!(
        home.txpace(&["-v", "-q", "config", "path"], &[])
            .status
            .code(),
        Some(2)
    );
}

/// The default signer from `-k` or the Solana CLI config: a missing keypair is bad input, exit 2,
/// with the file named, before anything reaches the network.
#[test]
fn a_missing_keypair_is_a_usage_error_naming_the_file() {
    let home = Home::new();
    let missing = home.dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let runs: [&[&str]; 2] = [
        &["gen", "-n", "1", "--out", "never.b64", "-k", missing],
        &["deploy", "--close-buffer", "never.json", "-k", missing],
    ];
    for args in runs {
        let out = home.txpace(args, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("keypair file {missing} does not exist")),
            "{args:?}: {err}"
        );
    }
    // Neither a flag nor a Solana CLI config: the Solana CLI's default keypair, named.
    let out = home.txpace(&["gen", "-n", "1", "--out", "never.b64"], &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let default = home.dir.path().join(".config/solana/id.json");
    assert!(
        err.contains(&format!(
            "keypair file {} does not exist",
            default.display()
        )),
        "{err}"
    );
}

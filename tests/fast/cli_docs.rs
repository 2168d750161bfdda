//! Shell completions and man pages: generated from the same clap definition that parses the
//! command line, checked by the shells and groff that will read them.

use crate::common;

use std::process::{Command, Output};

fn txpace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txpace"))
        .args(args)
        .output()
        .expect("running txpace")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// Every command and a flag of each, which a completion script or man page must know.
const COMMANDS: [&str; 9] = [
    "inspect",
    "gen",
    "send",
    "demo",
    "deploy",
    "view",
    "completions",
    "man",
    "config",
];

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = txpace(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = stdout(&out);
        for word in COMMANDS.iter().chain(&["resend-interval", "commitment"]) {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
}

/// Runs `script` with the shell's syntax check (`-n`): a script the shell cannot parse would
/// break the user's shell startup.
fn syntax_check(shell: &str, package: &str, script: &[u8]) {
    common::tool::require(
        shell,
        &["-c", "true"],
        package,
        "to check completion scripts",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("txpace-completions");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(shell).arg("-n").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{shell} -n: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bash_zsh_and_fish_parse_their_scripts() {
    for (shell, package) in [("bash", "bash"), ("zsh", "zsh"), ("fish", "fish")] {
        syntax_check(shell, package, &txpace(&["completions", shell]).stdout);
    }
}

/// What bash offers for the last of `words` with the script loaded, as a user pressing Tab
/// gets it (an empty last word: Tab after a space).
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = txpace(&["completions", "bash"]).stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("txpace.bash");
    std::fs::write(&path, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let probe = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
         COMP_LINE=\"{}\"; COMP_POINT=${{#COMP_LINE}}; \
         _txpace txpace \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words.join(" ")
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_commands_and_flags() {
    assert_eq!(bash_complete(&["txpace", "se"]), ["send"]);
    assert!(bash_complete(&["txpace", "send", "--res"]).contains(&"--resend-interval".to_string()));
    assert_eq!(
        bash_complete(&["txpace", "send", "--commitment", "fin"]),
        ["finalized"]
    );
    let shells = bash_complete(&["txpace", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(shells.contains(&shell.to_string()), "{shells:?}");
    }
}

#[test]
fn no_shell_named_anywhere_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .arg("completions")
        .env("SHELL", "/bin/unknown-shell")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("name the shell"));
    // $SHELL decides when it names a known shell.
    let out = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .arg("completions")
        .env("SHELL", "/usr/bin/zsh")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("#compdef txpace"));
    assert_eq!(txpace(&["completions", "tcsh"]).status.code(), Some(2));
}

/// `groff` renders `page` as `man` would, with every warning on; the text is returned.
fn groff(page: &[u8]) -> String {
    common::tool::require("groff", &["-v"], "groff-base", "to check the man pages");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.1");
    std::fs::write(&path, page).unwrap();
    let out = Command::new("groff")
        // -k: read UTF-8 through preconv, as man does.
        .args(["-k", "-man", "-Tutf8", "-ww"])
        .arg(&path)
        .output()
        .unwrap();
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && warnings.is_empty(), "{warnings}");
    // Strip backspace overstrikes (bold and underline) to get the plain text.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn the_top_page_has_commands_environment_files_and_exit_status() {
    let out = txpace(&["man"]);
    assert!(out.status.success());
    let text = groff(&out.stdout);
    for word in COMMANDS.iter().chain(&[
        "ENVIRONMENT",
        "RUST_LOG",
        "NO_COLOR",
        "FILES",
        "EXIT STATUS",
        "--commitment",
    ]) {
        assert!(text.contains(word), "txpace(1) lacks {word}:\n{text}");
    }
    // VERSION stays last, as man pages have it.
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("ENVIRONMENT") < at("EXIT STATUS") && at("EXIT STATUS") < at("VERSION"));
    let status = text.split("EXIT STATUS").nth(1).unwrap();
    for (code, _) in txpace::exit::TABLE {
        let tagged = status
            .lines()
            .any(|l| l.split_whitespace().next() == Some(&code.to_string()));
        assert!(tagged, "exit {code}:\n{status}");
    }
}

#[test]
fn each_command_has_its_page() {
    let text = groff(&txpace(&["man", "send"]).stdout);
    assert!(text.contains("txpace-send"), "{text}");
    assert!(text.contains("--resend-interval"), "{text}");
    assert!(text.contains("EXIT STATUS"), "{text}");
    assert!(!text.contains("EXTRA"), "{text}");
    let out = txpace(&["man", "sned"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give one of inspect, gen, send"));
}

#[test]
fn man_dir_writes_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let man1 = dir.path().join("man1");
    let out = txpace(&["man", "--dir", man1.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let mut names: Vec<String> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = COMMANDS.iter().map(|c| format!("txpace-{c}.1")).collect();
    want.push("txpace.1".into());
    want.sort();
    assert_eq!(names, want);
    for name in &names {
        groff(&std::fs::read(man1.join(name)).unwrap());
    }
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .args(["man"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

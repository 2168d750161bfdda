//! Stopping cleanly, on a real `solana-test-validator`: the real binary's terminal closed under
//! it mid-run (a dropped SSH connection: every copy of the pseudo-terminal's master closed, so
//! the kernel hangs it up) during the `send` dashboard, while its RPC node is unreachable, during
//! a `deploy` whose RPC was cut, and during `demo` (its dashboard, and its validator's start);
//! SIGHUP to a headless run, and to one under `nohup`; and every output a run promises checked
//! before the first send.
//!
//! Each hang-up asserts: the process is gone within 3 s (a SIGTERM sent after the hang-up is
//! honoured too), exit 130, the report written and conforming to its schema, the journal
//! resuming and landing every transaction (checked on chain), the child validators gone.

use crate::common::scenarios::Scenarios;
use crate::support::{
    Running, assert_report_agrees_with_chain, chain_statuses, generate, proxy::TcpProxy,
    read_report, send_command,
};
use crate::{common, machine};

use std::{
    path::{Path, PathBuf},
    process::Command,
    str::FromStr,
    time::{Duration, Instant},
};

use common::pty::{Terminal, txpace_in_terminal};
use solana_signature::Signature;
use txpace::validator::{LocalValidator, ValidatorOptions};

/// How long a stopped txpace may take to be gone: the promise.
const GONE_WITHIN: Duration = Duration::from_secs(3);

#[test]
fn a_closed_terminal_or_a_signal_stops_every_phase_cleanly_and_bad_outputs_refuse_the_run() {
    let _machine = machine::whole();
    let v = common::start_validator(ValidatorOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let mut scenarios = Scenarios::new();
    scenarios.run("send dashboard hang-up", || {
        send_dashboard_hang_up(&v, &d.join("dash"))
    });
    scenarios.run("send hang-up while the RPC is unreachable", || {
        send_hang_up_while_rpc_unreachable(&v, &d.join("norpc"))
    });
    scenarios.run("deploy hang-up with its RPC cut", || {
        deploy_hang_up(&v, &d.join("deploy"))
    });
    scenarios.run("headless SIGHUP, and nohup", || {
        headless_sighup(&v, &d.join("headless"))
    });
    scenarios.run("outputs checked before the first send", || {
        bad_outputs_refuse_the_run(&v, &d.join("outputs"))
    });
    scenarios.run(
        "a report unwritable at the end is kept beside the journal",
        || report_kept_beside_the_journal(&v, &d.join("kept")),
    );
    drop(v);
    scenarios.run("demo hang-up: dashboard and validator start", || {
        demo_hang_ups(&d.join("demo"))
    });
    scenarios.finish();
}

/// `dir`, created.
fn fresh(dir: &Path) -> &Path {
    std::fs::create_dir_all(dir).expect("scenario dir");
    dir
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Closes `screen`'s terminal, sends SIGTERM after it (it must change nothing but be honoured),
/// and returns the exit code, failing unless the process is gone within [`GONE_WITHIN`].
fn hang_up_and_wait(screen: &mut Terminal, what: &str) -> u32 {
    let pid = screen.pid();
    let closed = Instant::now();
    screen.hang_up();
    std::thread::sleep(Duration::from_millis(300));
    // The process may be gone already; kill then fails, which is fine.
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let status = screen.wait_exit(GONE_WITHIN);
    let took = closed.elapsed();
    eprintln!(
        "{what}: gone {:.2} s after the hang-up, {status:?}",
        took.as_secs_f64()
    );
    assert!(took <= GONE_WITHIN, "{what}: took {took:?}");
    status.exit_code()
}

/// Exit 130 (interrupted), or a failure quoting the end of the run's log: after a hang-up the
/// terminal that showed any message is gone, and the log is where a panic says itself.
fn assert_interrupted(code: u32, dir: &Path, kind: &str) {
    if code != 130 {
        panic!(
            "exit {code}, not 130; the end of its log:\n{}",
            log_tail(dir, kind)
        );
    }
}

/// The last 40 lines of the run's log (see [`log_text`]), each with its time.
fn log_tail(dir: &Path, kind: &str) -> String {
    let log = log_text(dir, kind);
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// The run's log file under the data directory `dir` (XDG_DATA_HOME), its text.
fn log_text(dir: &Path, kind: &str) -> String {
    let logs = dir.join("txpace/logs");
    let mut text = String::new();
    for e in std::fs::read_dir(&logs).unwrap_or_else(|e| panic!("{}: {e}", logs.display())) {
        let p = e.expect("entry").path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(kind))
        {
            text.push_str(&std::fs::read_to_string(&p).expect("log"));
        }
    }
    text
}

/// Resumes the journal `journal` headless against `v` and checks that every one of `n`
/// transactions landed, on chain.
fn resume_lands_all(v: &LocalValidator, dir: &Path, file: &Path, journal: &Path, n: usize) {
    let report = dir.join("resumed.json");
    let out = send_command(
        dir,
        &v.rpc_url(),
        &v.ws_url(),
        file,
        &[
            "--resume",
            "--journal",
            utf8(journal),
            "--report",
            utf8(&report),
        ],
    )
    .output()
    .expect("resuming");
    assert_eq!(
        out.status.code(),
        Some(0),
        "resume:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report = read_report(&report);
    let (confirmed, failed, expired) = assert_report_agrees_with_chain(&v.rpc_client(), &report, n);
    assert_eq!((confirmed, failed, expired), (n, 0, 0));
}

fn send_dashboard_hang_up(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let n = 600;
    let file = generate(v, d, "batch.b64", n);
    let journal = d.join("run.jnl");
    let report = d.join("report.json");
    let mut screen = Terminal::spawn(txpace_in_terminal(
        d,
        &[
            "send",
            "--url",
            &v.rpc_url(),
            "--ws",
            &v.ws_url(),
            "--rate",
            "100",
            "--journal",
            utf8(&journal),
            "--report",
            utf8(&report),
            utf8(&file),
        ],
    ));
    screen.wait_for("sends on the dashboard", Duration::from_secs(60), |t| {
        t.contains("Pending")
            && t.contains("Confirmed")
            && !t.contains("Queues · 600 txs · 0 sends")
    });
    std::thread::sleep(Duration::from_secs(2));
    let code = hang_up_and_wait(&mut screen, "send dashboard");
    assert_interrupted(code, d, "send");
    let r = read_report(&report);
    let s = &r["summary"];
    assert!(
        s["unfinished"].as_u64().unwrap_or(0) > 0,
        "stopped mid-run, yet nothing is unfinished: {s:#}"
    );
    let log = log_text(d, "send");
    assert!(
        log.contains("hung up"),
        "the log does not say why it stopped:\n{log}"
    );
    assert!(
        log.contains("--resume"),
        "the log does not say how to resume:\n{log}"
    );
    resume_lands_all(v, d, &file, &journal, n);
}

fn send_hang_up_while_rpc_unreachable(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let n = 300;
    let file = generate(v, d, "batch.b64", n);
    let journal = d.join("run.jnl");
    let report = d.join("report.json");
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let mut screen = Terminal::spawn(txpace_in_terminal(
        d,
        &[
            "send",
            "--no-preflight",
            "--url",
            &format!("http://{dead}"),
            "--ws",
            &format!("ws://{dead}"),
            "--journal",
            utf8(&journal),
            "--report",
            utf8(&report),
            utf8(&file),
        ],
    ));
    screen.wait_for("the dashboard", Duration::from_secs(60), |t| {
        t.contains("Pending")
    });
    std::thread::sleep(Duration::from_secs(2));
    let code = hang_up_and_wait(&mut screen, "send, RPC unreachable");
    assert_interrupted(code, d, "send");
    let r = read_report(&report);
    assert_eq!(
        r["summary"]["unfinished"].as_u64(),
        Some(n as u64),
        "{:#}",
        r["summary"]
    );
    resume_lands_all(v, d, &file, &journal, n);
}

fn deploy_hang_up(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let so = d.join("token.so");
    std::fs::write(&so, crate::deploy::program("spl_token_2022.so")).expect("program");
    let proxy = TcpProxy::start(crate::support::socket_of(&v.rpc_url()));
    let report = d.join("deploy.json");
    let keypair = v.mint_keypair_path();
    let args = |url: &str, report: &Path| -> Vec<String> {
        [
            "deploy",
            "--url",
            url,
            "--ws",
            &v.ws_url(),
            "--keypair",
            utf8(keypair),
            "--rate",
            "50",
            "--report",
            utf8(report),
            "token.so",
        ]
        .map(String::from)
        .to_vec()
    };
    let first = args(&proxy.http_url(), &report);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let mut screen = Terminal::spawn(txpace_in_terminal(d, &first));
    screen.wait_for("the deploy's writes", Duration::from_secs(90), |t| {
        t.contains("Pending") && t.contains("write")
    });
    std::thread::sleep(Duration::from_secs(1));
    proxy.cut();
    std::thread::sleep(Duration::from_secs(1));
    let code = hang_up_and_wait(&mut screen, "deploy, RPC cut");
    assert_interrupted(code, d, "deploy");
    let r = common::read_deploy_report(&report);
    assert_eq!(r["outcome"], "interrupted", "{r:#}");
    // The same command again, straight to the node, finishes from the buffer.
    let again = d.join("again.json");
    let second = args(&v.rpc_url(), &again);
    let out = common::txpace(d)
        .current_dir(d)
        .env("XDG_DATA_HOME", d)
        .args(&second)
        .arg("--no-tui")
        .output()
        .expect("deploying again");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::read_deploy_report(&again);
    assert_eq!(r["outcome"], "deployed", "{r:#}");
    let program = r["program_id"].as_str().expect("program id");
    let account = v
        .rpc_client()
        .get_account(&solana_pubkey::Pubkey::from_str(program).expect("pubkey"))
        .expect("the program account, looked up on chain");
    assert!(account.executable, "{program} is not executable");
}

fn headless_sighup(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let n = 400;
    let file = generate(v, d, "batch.b64", n);
    let journal = d.join("run.jnl");
    let report = d.join("report.json");
    let args = [
        "--rate",
        "50",
        "--journal",
        utf8(&journal),
        "--report",
        utf8(&report),
    ];
    let mut cmd = send_command(d, &v.rpc_url(), &v.ws_url(), &file, &args);
    // Not what this test was started with: under `nohup` (a CI runner started so) every child
    // inherits SIGHUP ignored, and txpace then rightly carries on to the end.
    sighup_disposition(&mut cmd, libc::SIG_DFL);
    let running = Running::spawn(cmd, d, "hup");
    running.sleep_until(Duration::from_secs(4));
    let hup = Instant::now();
    kill("-HUP", running.pid());
    let stopped = running.wait(Duration::from_secs(30));
    eprintln!(
        "headless: gone {:.2} s after SIGHUP",
        hup.elapsed().as_secs_f64()
    );
    assert!(
        hup.elapsed() <= GONE_WITHIN,
        "took {:?}; the end of its log:\n{}",
        hup.elapsed(),
        log_tail(d, "send")
    );
    assert_eq!(stopped.code, 130, "{}", stopped.stderr);
    let r = read_report(&report);
    assert!(
        r["summary"]["unfinished"].as_u64().unwrap_or(0) > 0,
        "{:#}",
        r["summary"]
    );
    resume_lands_all(v, d, &file, &journal, n);

    // Under nohup the user chose to outlive the terminal: the run carries on to its end.
    let nohup = dir.join("nohup");
    let d = fresh(&nohup);
    let file = generate(v, d, "batch.b64", 200);
    let report = d.join("report.json");
    let mut cmd = send_command(
        d,
        &v.rpc_url(),
        &v.ws_url(),
        &file,
        &["--rate", "50", "--report", utf8(&report)],
    );
    ignore_sighup(&mut cmd);
    let running = Running::spawn(cmd, d, "nohup");
    running.sleep_until(Duration::from_secs(2));
    kill("-HUP", running.pid());
    let finished = running.wait(Duration::from_secs(60));
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let r = read_report(&report);
    assert_eq!(
        r["summary"]["confirmed"].as_u64(),
        Some(200),
        "{:#}",
        r["summary"]
    );
}

/// Starts `cmd` with SIGHUP ignored, as `nohup` does.
fn ignore_sighup(cmd: &mut Command) {
    sighup_disposition(cmd, libc::SIG_IGN);
}

/// Starts `cmd` with SIGHUP's disposition set to `handler` (`SIG_IGN` or `SIG_DFL`).
fn sighup_disposition(cmd: &mut Command, handler: libc::sighandler_t) {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGHUP, handler);
            Ok(())
        });
    }
}

fn kill(signal: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(ok.success(), "kill {signal} {pid}");
}

/// Every output a run promises is opened or bound before the first send: a bad one exits 2
/// naming it, and the chain shows that nothing was sent.
fn bad_outputs_refuse_the_run(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let n = 50;
    let file = generate(v, d, "batch.b64", n);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to hold");
    let taken = taken.local_addr().expect("its address").to_string();
    let not_a_dir = d.join("a-file");
    std::fs::write(&not_a_dir, "").expect("a plain file");
    let missing = d.join("no/such/dir");
    let report = missing.join("r.json");
    let events = missing.join("e.ndjson");
    let cases: [(&str, Vec<&str>, Option<&Path>, String); 4] = [
        (
            "--report",
            vec!["--report", utf8(&report)],
            None,
            utf8(&report).into(),
        ),
        (
            "--events",
            vec!["--events", utf8(&events)],
            None,
            utf8(&events).into(),
        ),
        ("--metrics", vec!["--metrics", &taken], None, taken.clone()),
        (
            "the log directory",
            vec![],
            Some(&not_a_dir),
            utf8(&not_a_dir).into(),
        ),
    ];
    for (what, extra, data_home, named) in cases {
        let journal = d.join(format!(
            "{}.jnl",
            what.trim_start_matches('-').replace(' ', "-")
        ));
        let mut args = vec!["--journal", utf8(&journal)];
        args.extend(extra);
        let mut cmd = send_command(d, &v.rpc_url(), &v.ws_url(), &file, &args);
        if let Some(home) = data_home {
            cmd.env("XDG_DATA_HOME", home);
        }
        let out = cmd.output().expect("txpace send");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains(&named),
            "{what}: the error does not name {named}: {stderr}"
        );
    }
    let sigs = signatures(&file);
    let landed: Vec<_> = chain_statuses(&v.rpc_client(), &sigs)
        .into_iter()
        .filter(|(_, st)| st.is_some())
        .collect();
    assert!(
        landed.is_empty(),
        "refused runs sent transactions: {landed:?}"
    );
}

/// The signatures of a base64 file's transactions (one per line).
fn signatures(file: &Path) -> Vec<Signature> {
    let loaded = txpace::source::load(&[file.to_path_buf()], txpace::source::InputFormat::Auto)
        .expect("loading the batch");
    loaded.valid.iter().map(|t| t.signature).collect()
}

fn report_kept_beside_the_journal(v: &LocalValidator, dir: &Path) {
    let d = fresh(dir);
    let n = 100;
    let file = generate(v, d, "batch.b64", n);
    let journal = d.join("run.jnl");
    let sub = d.join("reports");
    std::fs::create_dir_all(&sub).expect("report dir");
    let report = sub.join("r.json");
    let running = Running::spawn(
        send_command(
            d,
            &v.rpc_url(),
            &v.ws_url(),
            &file,
            &[
                "--rate",
                "50",
                "--journal",
                utf8(&journal),
                "--report",
                utf8(&report),
            ],
        ),
        d,
        "kept",
    );
    // The run has started (the report was checked); then its directory goes away.
    running.sleep_until(Duration::from_secs(1));
    std::fs::remove_dir_all(&sub).expect("removing the report's directory");
    let done = running.wait(Duration::from_secs(60));
    assert_eq!(done.code, 0, "{}", done.stderr);
    let kept: PathBuf = d.join("run.jnl.report.json");
    assert!(
        done.stderr.contains(utf8(&kept)),
        "the message does not say where the report went: {}",
        done.stderr
    );
    let r = read_report(&kept);
    assert_eq!(
        r["summary"]["confirmed"].as_u64(),
        Some(n as u64),
        "{:#}",
        r["summary"]
    );
}

/// `txpace demo` in a terminal closed under it: during its dashboard (report written, its
/// validator and ledger gone) and during its validator's start (gone too).
fn demo_hang_ups(dir: &Path) {
    let d = fresh(dir);
    let tmp = d.join("tmp");
    let tmp = fresh(&tmp);
    let report = d.join("demo.json");
    let mut cmd = txpace_in_terminal(d, &["demo", "--count", "3000", "--report", utf8(&report)]);
    // The validator's ledger goes under `tmp`, so what is left of it can be found.
    cmd.env("TMPDIR", tmp);
    let mut screen = Terminal::spawn(cmd);
    screen.wait_for("the demo's dashboard", Duration::from_secs(180), |t| {
        t.contains("Pending") && t.contains("Confirmed")
    });
    std::thread::sleep(Duration::from_secs(2));
    let code = hang_up_and_wait(&mut screen, "demo dashboard");
    assert_interrupted(code, d, "demo");
    read_report(&report);
    assert_nothing_left(tmp, "demo dashboard");

    let mut cmd = txpace_in_terminal(d, &["demo", "--count", "100"]);
    cmd.env("TMPDIR", tmp);
    let mut screen = Terminal::spawn(cmd);
    screen.wait_for("the validator starting", Duration::from_secs(30), |t| {
        t.contains("starting solana-test-validator")
    });
    std::thread::sleep(Duration::from_millis(1500));
    let code = hang_up_and_wait(&mut screen, "demo validator start");
    assert_interrupted(code, d, "demo");
    assert_nothing_left(tmp, "demo validator start");
}

/// No process runs from under `tmp` and no ledger is left in it (the shared port reservations
/// and kept logs aside).
fn assert_nothing_left(tmp: &Path, what: &str) {
    // A validator killed by its parent is reaped within moments; allow them.
    let deadline = Instant::now() + Duration::from_secs(2);
    let needle = utf8(tmp).to_string();
    loop {
        let running: Vec<String> = std::fs::read_dir("/proc")
            .expect("/proc")
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&needle) && !c.contains("--exact"))
            .collect();
        let left: Vec<_> = std::fs::read_dir(tmp)
            .expect("tmp")
            .flatten()
            .map(|e| e.path())
            // Kept on purpose: failed starts' logs, and the port reservations every
            // validator start on the machine shares (validator/ports.rs).
            .filter(|p| p.extension().is_none_or(|x| x != "log"))
            .filter(|p| !p.ends_with("txpace-validator-ports"))
            .collect();
        if running.is_empty() && left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: left behind: processes {running:?}, files {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

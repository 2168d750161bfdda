//! Large input: 1,000,000 signed transactions in one base64 file, loaded and verified.
//!
//! The goal (issue 5): a million-transaction file loads without holding its text twice, in at
//! most 2 KB per transaction plus a fixed base, with progress shown while it loads. Measured two
//! ways, each in a fresh process so the generator's own memory does not count:
//!
//! - `source::load_with_progress` alone (this binary re-run with `--child`): peak RSS (VmHWM)
//!   minus the RSS before loading, per transaction; the time; how many progress calls came;
//! - `txpace send --no-tui` on the same file against an unreachable RPC: the loading progress it
//!   prints, and its peak RSS once the engine holds all transactions (the whole program's cost
//!   per transaction, journal and engine state included); then SIGTERM.
//!
//! `cargo bench --bench load` (TXPACE_LOAD_N overrides the count). Exits non-zero when a goal is
//! missed: at most 2 KB per transaction loading, at most 700 bytes for the whole `txpace send`.

use std::{
    io::{BufWriter, Read, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rayon::prelude::*;
use solana_hash::Hash;
use solana_keypair::Keypair;
use txpace::{cli::InputFormat, source, workload};

/// The goal: bytes of memory per loaded transaction, beyond the fixed base.
const GOAL_BYTES_PER_TX: f64 = 2048.0;
/// The goal for the whole `txpace send` process once its engine holds every transaction
/// (issue 25): peak RSS over the count, at a million.
const GOAL_ENGINE_BYTES_PER_TX: f64 = 700.0;
/// Transactions signed per parallel batch while generating.
const BATCH: usize = 50_000;
/// Distinct signers: signing cost does not depend on how many there are.
const SIGNERS: usize = 8;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let file = args.get(i + 1).expect("--child FILE");
        child(Path::new(file));
        return;
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo test --benches` lists benchmarks: nothing to run here.
        return;
    }
    let n: usize = std::env::var("TXPACE_LOAD_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("million.b64");

    let t = Instant::now();
    let bytes = generate(&file, n);
    println!(
        "generated {n} signed transactions in {:.1} s: {:.0} MB of base64 ({:.0} bytes a line)",
        t.elapsed().as_secs_f64(),
        bytes as f64 / 1e6,
        bytes as f64 / n as f64
    );

    let mut ok = true;
    let load = measure_load(&file);
    let per_tx = load.grown_kb * 1024.0 / n as f64;
    println!(
        "load_with_progress: {} valid in {:.1} s ({:.0} tx/s); RSS {:.0} MB before, peak {:.0} MB; \
         {:.0} bytes per transaction (goal ≤ {GOAL_BYTES_PER_TX:.0}); {} progress calls",
        load.valid,
        load.secs,
        load.valid as f64 / load.secs,
        load.base_kb / 1024.0,
        load.peak_kb / 1024.0,
        per_tx,
        load.progress_calls,
    );
    if load.valid != n {
        println!("FAIL: {} of {n} loaded as valid", load.valid);
        ok = false;
    }
    if per_tx > GOAL_BYTES_PER_TX {
        println!("FAIL: {per_tx:.0} bytes per transaction > {GOAL_BYTES_PER_TX}");
        ok = false;
    }

    let send = measure_send(&file, dir.path(), n);
    let engine_per_tx = send.peak_kb * 1024.0 / n as f64;
    println!(
        "txpace send: loading line {:?}; {} progress updates; loaded in {:.1} s; peak RSS {:.0} MB \
         with the engine holding all ({engine_per_tx:.0} bytes per transaction, goal ≤ \
         {GOAL_ENGINE_BYTES_PER_TX:.0})",
        send.last_loading,
        send.updates,
        send.load_secs,
        send.peak_kb / 1024.0,
    );
    if engine_per_tx > GOAL_ENGINE_BYTES_PER_TX {
        println!(
            "FAIL: txpace send peaked at {engine_per_tx:.0} bytes per transaction > \
             {GOAL_ENGINE_BYTES_PER_TX}"
        );
        ok = false;
    }
    if let Some(why) = &send.ended_early {
        println!("FAIL: txpace send {why}: the peak above is not the engine's");
        ok = false;
    }
    if send.updates < 2 || !send.last_loading.contains(&format!("of {n}")) {
        println!("FAIL: txpace send showed no loading progress");
        ok = false;
    }
    if !ok {
        std::process::exit(1);
    }
}

/// Writes `n` self-transfers, base64 one per line, signed in parallel batches.
fn generate(path: &Path, n: usize) -> u64 {
    let signers: Vec<Keypair> = (0..SIGNERS).map(|_| Keypair::new()).collect();
    let blockhash = Hash::new_from_array([7; 32]);
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut bytes = 0u64;
    for start in (0..n).step_by(BATCH) {
        let end = (start + BATCH).min(n);
        let lines: Vec<String> = (start..end)
            .into_par_iter()
            .map(|i| {
                let tx = workload::self_transfer(
                    &signers[i % SIGNERS],
                    i as u64 + 1,
                    1_000_000,
                    1_000,
                    blockhash,
                )
                .expect("signing");
                source::encode_base64(&workload::wire_bytes(&tx).expect("serializing"))
            })
            .collect();
        for line in lines {
            out.write_all(line.as_bytes()).expect("write");
            out.write_all(b"\n").expect("write");
            bytes += line.len() as u64 + 1;
        }
    }
    out.flush().expect("flush");
    bytes
}

/// A `/proc/<pid>/status` field in kB.
fn status_kb(pid: &str, field: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

struct Load {
    valid: usize,
    secs: f64,
    base_kb: f64,
    peak_kb: f64,
    grown_kb: f64,
    progress_calls: usize,
}

/// In the child: load the file and print the figures as one line.
fn child(file: &Path) {
    let base = status_kb("self", "VmRSS:").unwrap_or(0.0);
    let calls = Arc::new(Mutex::new(0usize));
    let counter = calls.clone();
    let t = Instant::now();
    let loaded = source::load_with_progress(&[file.to_path_buf()], InputFormat::Auto, &|_| {
        if let Ok(mut c) = counter.lock() {
            *c += 1;
        }
    })
    .expect("loading");
    let secs = t.elapsed().as_secs_f64();
    let peak = status_kb("self", "VmHWM:").unwrap_or(0.0);
    let calls = calls.lock().map(|c| *c).unwrap_or(0);
    println!(
        "{} {secs} {base} {peak} {calls} {}",
        loaded.valid.len(),
        loaded.invalid.len()
    );
}

fn measure_load(file: &Path) -> Load {
    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .arg("--child")
        .arg(file)
        .output()
        .expect("running the loading child");
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<f64> = text
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(f64::NAN))
        .collect();
    assert_eq!(f.len(), 6, "child said {text:?}");
    Load {
        valid: f[0] as usize,
        secs: f[1],
        base_kb: f[2],
        peak_kb: f[3],
        grown_kb: f[3] - f[2],
        progress_calls: f[4] as usize,
    }
}

struct Send {
    /// Why `txpace send` ended before its engine had run for 3 s, when it did.
    ended_early: Option<String>,
    last_loading: String,
    updates: usize,
    load_secs: f64,
    peak_kb: f64,
}

/// Runs `txpace send` on the file against an RPC address nothing listens on, watches its
/// loading progress and memory, and stops it with SIGTERM once the engine has started.
fn measure_send(file: &Path, dir: &Path, n: usize) -> Send {
    let config = dir.join("empty-cli-config.yml");
    std::fs::write(&config, "").expect("config");
    let journal: PathBuf = dir.join("million.jnl");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .env("XDG_DATA_HOME", dir)
        .arg("--config")
        .arg(&config)
        .args([
            "send",
            "--no-tui",
            "--url",
            "http://127.0.0.1:9",
            "--ws",
            "ws://127.0.0.1:9",
            // The checks ask the RPC first; nothing answers, and the engine must start.
            "--no-preflight",
        ])
        .arg(file)
        .arg("--journal")
        .arg(&journal)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning txpace send");
    let pid = child.id().to_string();
    let stderr = child.stderr.take().expect("stderr");
    // Progress is `\r`-separated on one line; the first newline ends loading, and the engine's
    // first progress line (starting with `[`) says it runs.
    let (tx, rx) = std::sync::mpsc::channel::<(String, Instant)>();
    std::thread::spawn(move || {
        let mut stderr = stderr;
        let mut chunk = [0u8; 4096];
        let mut part = Vec::new();
        while let Ok(n) = stderr.read(&mut chunk) {
            if n == 0 {
                return;
            }
            for &b in &chunk[..n] {
                if b == b'\r' || b == b'\n' {
                    if !part.is_empty() {
                        let text = String::from_utf8_lossy(&part).into_owned();
                        if tx.send((text, Instant::now())).is_err() {
                            return;
                        }
                        part.clear();
                    }
                } else {
                    part.push(b);
                }
            }
        }
    });
    let mut last_loading = String::new();
    let mut updates = 0;
    let mut loaded_at = None;
    let mut running_since = None;
    let mut peak_kb: f64 = 0.0;
    let mut other = Vec::new();
    let mut ended_early = None;
    let deadline = Instant::now() + Duration::from_secs(600);
    while Instant::now() < deadline {
        while let Ok((part, at)) = rx.try_recv() {
            if part.starts_with("loading:") {
                updates += 1;
                if part.contains(&format!("of {n}")) && loaded_at.is_none() {
                    loaded_at = Some(at);
                }
                last_loading = part;
            } else if part.starts_with('[') {
                running_since.get_or_insert(at);
            } else {
                other.push(part);
            }
        }
        if let Some(kb) = status_kb(&pid, "VmHWM:") {
            peak_kb = peak_kb.max(kb);
        }
        if running_since.is_some_and(|t| t.elapsed() > Duration::from_secs(3)) {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            ended_early = Some(format!("exited by itself ({status}): {other:?}"));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if ended_early.is_none() && running_since.is_none() {
        ended_early = Some("its engine did not start within 600 s".to_string());
    }
    if matches!(child.try_wait(), Ok(None)) {
        let _ = Command::new("kill").arg("-TERM").arg(&pid).status();
    }
    let _ = child.wait();
    Send {
        ended_early,
        last_loading,
        updates,
        load_secs: loaded_at.map_or(f64::NAN, |t| (t - started).as_secs_f64()),
        peak_kb,
    }
}

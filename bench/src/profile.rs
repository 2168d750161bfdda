//! Where txpace's CPU goes on the founding workload: `txpace send --no-tui --rate 100` under
//! `perf record` (the kernel's cpu-clock, sampled with DWARF call stacks, which works where a
//! virtual machine has no hardware counters), each sample filed under the part of txpace it was
//! spent for by the frames of its stack. Prints the parts with their share and CPU seconds.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use anyhow::{Context, Result, bail};
use txpace::validator::ValidatorOptions;

use crate::{
    child,
    markdown::{self, Section},
    measure::txpace_bin,
    workload::{Endpoint, generate, start_validator, tempfile_dir},
};

#[derive(clap::Args)]
pub struct Args {
    /// Transactions sent (self-transfers at 1,000,000 µlamports/CU)
    #[arg(long, default_value_t = 5000)]
    count: usize,
    /// Samples per second of CPU time
    #[arg(long, default_value_t = 999)]
    frequency: u32,
    /// Also write the table as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<std::path::PathBuf>,
}

/// The parts a sample is filed under: the first whose marker appears in its stack (leaf to
/// root, any frame) wins, so the order goes from the most to the least specific.
const PARTS: &[(&str, &[&str])] = &[
    ("signature checks of the input", &["source::sigverify::"]),
    ("reading and decoding the input", &["txpace::source::"]),
    (
        "engine loop (decisions, store, snapshots)",
        &["Engine::run_batch"],
    ),
    ("journal writer thread", &["journal::writer::write_loop"]),
    (
        "send tasks (the streams of a wake-up)",
        &["Dispatcher::send_next", "Dispatcher::send_due"],
    ),
    (
        "QUIC connections (quinn, with their UDP sends)",
        &["ConnectionDriver"],
    ),
    ("QUIC endpoint: UDP in and out (quinn)", &["EndpointDriver"]),
    (
        "RPC calls (HTTP)",
        &["ChainSync::spawn", "hyper", "reqwest"],
    ),
    ("websocket slot feed", &["pubsub", "tungstenite"]),
    ("progress lines", &["print_progress"]),
    (
        "runtime waiting (epoll, timers)",
        &["Context::park", "park_internal", "Driver::turn"],
    ),
    (
        "kernel: other UDP sends (and their loopback delivery)",
        &["udp_sendmsg"],
    ),
    ("kernel: switching threads", &["__schedule"]),
    ("start-up, report and exit", &["txpace::main", "_dl_"]),
];

pub fn run(args: Args) -> Result<()> {
    if Command::new("perf").arg("--version").output().is_err() {
        bail!("perf is not installed: apt-get install linux-perf (Debian), then run this again");
    }
    let dir = tempfile_dir()?;
    let v = start_validator(ValidatorOptions::default())?;
    let ep = Endpoint::of_validator(&v);
    let file = generate(&ep, &dir, "profile.b64", args.count, 1)?;
    let data = dir.join("perf.data");
    let sandbox = child::sandbox()?;
    let status = sandbox
        .command("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-F"])
        .arg(args.frequency.to_string())
        .args(["--call-graph", "dwarf,32768", "-o"])
        .arg(&data)
        .arg("--")
        .arg(txpace_bin()?)
        .args(sandbox.txpace_globals())
        .args([
            "send", "--no-tui", "--rate", "100", "--url", &ep.rpc, "--ws", &ep.ws,
        ])
        .arg(&file)
        .arg("--report")
        .arg(dir.join("profile.report.json"))
        .stdout(Stdio::null())
        .status()
        .context("running perf record")?;
    if !status.success() {
        bail!("perf record of txpace send failed ({status})");
    }
    // In the sandbox too: perf keeps the build ids of what it recorded under its HOME.
    let mut script = sandbox
        .command("perf")
        .args(["script", "-F", "comm,ip,sym", "-i"])
        .arg(&data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running perf script")?;
    let out = script.stdout.take().context("perf script output")?;
    let (per_part, total) = file_samples(BufReader::new(out))?;
    script.wait()?;
    if total == 0 {
        bail!("perf recorded no samples of txpace");
    }
    let mut table = Section::new(format!(
        "Where txpace's CPU goes: {} self-transfers at 100 tx/s, headless, {} samples at {} Hz \
         ({:.2} s of CPU)",
        args.count,
        total,
        args.frequency,
        total as f64 / f64::from(args.frequency)
    ))
    .right("share")
    .right("CPU s")
    .left("part");
    let mut rows: Vec<(&str, u64)> = per_part.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (part, n) in rows {
        table.row(vec![
            format!("{:.1}%", 100.0 * n as f64 / total as f64),
            format!("{:.2}", n as f64 / f64::from(args.frequency)),
            part.to_string(),
        ]);
    }
    markdown::emit(&[table], args.markdown.as_deref())
}

/// Samples per part, and in all, from `perf script` output: a header line per sample, then
/// one indented frame a line, then a blank line.
fn file_samples(input: impl BufRead) -> Result<(HashMap<&'static str, u64>, u64)> {
    let mut per_part: HashMap<&'static str, u64> = HashMap::new();
    let mut total = 0u64;
    let mut frames: Vec<String> = Vec::new();
    let mut in_sample = false;
    let mut file = |frames: &mut Vec<String>| {
        let part = PARTS
            .iter()
            .find(|(_, markers)| frames.iter().any(|f| markers.iter().any(|m| f.contains(m))))
            .map_or("other", |(name, _)| *name);
        *per_part.entry(part).or_default() += 1;
        total += 1;
        frames.clear();
    };
    for line in input.lines() {
        let line = line.context("reading perf script output")?;
        if line.trim().is_empty() {
            if in_sample {
                file(&mut frames);
                in_sample = false;
            }
        } else if line.starts_with(char::is_whitespace) {
            frames.push(line);
        } else {
            if in_sample {
                file(&mut frames);
            }
            in_sample = true;
        }
    }
    if in_sample {
        file(&mut frames);
    }
    Ok((per_part, total))
}

//! txpace on a mainnet-like wire: three validators (`txpace-localnet`) each behind a relay with
//! the `mainnet` profile's link (node 0 in Europe at 20 ms, node 1 in North America at 85 ms,
//! node 2 in Asia-Pacific at 230 ms, with jitter and 0.1–2% loss each way, handshakes included),
//! and [`COMPETITORS`] other senders on the same leaders — each a `txpace send` of its own, so
//! each reaches the nodes from a source address of its own, as distinct hosts do.
//!
//! Checked: every one of txpace's transactions lands, per the chain read on a node it does not
//! talk to; the relays saw every sender from a distinct address (so each had an unstaked budget
//! of its own, as on the internet); the competitors' own runs ended; the nodes' own TPU
//! servers counted at least txpace's streams (their counters, `counters`, printed beside the
//! run: streams delayed by a budget, connections evicted or refused); the far node is named
//! `far` or `lossy` in the report, with a round trip no shorter than its relay's less 15%.
//! The run's figures (wall, time to land, the relays' drops) are printed, not judged: speed is
//! the benchmark's to judge (`txpace-bench`), not a timed test's on a shared machine.

use crate::common::{run_expect, txpace};
use crate::machine;
use crate::support::{self, Running, assert_report_agrees_with_chain, read_report};

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::Value;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::rpc_client::RpcClient;
use txpace::validator::{Localnet, LocalnetOptions};

/// txpace's own transactions, at [`RATE`].
const N: usize = 1_000;
const RATE: u64 = 100;
/// Other senders, each with [`COMPETITOR_N`] transactions at [`COMPETITOR_RATE`]: together twice
/// txpace's pace, on leaders whose TPU servers run one thread (as the local cluster's do).
const COMPETITORS: usize = 4;
const COMPETITOR_N: usize = 800;
const COMPETITOR_RATE: u64 = 50;
/// How long before txpace the competitors start, so it meets them from its first send.
const HEAD_START: Duration = Duration::from_secs(2);
/// How long the nodes' own counters may take to cover a run (a report every 5 s, a metrics
/// write every 10 s, and a margin).
const COUNTERS_SETTLE: Duration = Duration::from_secs(30);
/// Far beyond any healthy run (N / RATE is 10 s): a run that takes this long is hung.
const HUNG: Duration = Duration::from_secs(300);

#[test]
fn every_transaction_lands_through_the_mainnet_profile_with_competing_senders() {
    let _machine = machine::whole();
    let mut cluster = Localnet::start(LocalnetOptions {
        nodes: 3,
        tpu_relay: true,
        link_profile: Some("mainnet".to_string()),
        ..LocalnetOptions::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    // txpace talks to node 0; the chain is read back from node 2.
    let chain = RpcClient::new_with_commitment(
        cluster.nodes()[2].rpc.clone(),
        CommitmentConfig::confirmed(),
    );
    let ours = generate(&cluster, dir, "ours.b64", N, None);
    // Each competitor pays from fresh payers of its own: files signed by one payer under one
    // blockhash would hold the same transactions, and the senders would be one.
    let theirs: Vec<PathBuf> = (0..COMPETITORS)
        .map(|k| {
            let name = format!("competitor-{k}.b64");
            generate(&cluster, dir, &name, COMPETITOR_N, Some(2))
        })
        .collect();
    let mut seen = HashSet::new();
    for file in std::iter::once(&ours).chain(&theirs) {
        for sig in support::signatures_of(file) {
            assert!(seen.insert(sig), "{sig} is in two senders' files");
        }
    }

    let competitors: Vec<Running> = theirs
        .iter()
        .enumerate()
        .map(|(k, file)| {
            let cmd = support::send_command(
                dir,
                &cluster.rpc_url(),
                &cluster.ws_url(),
                file,
                &["--rate", &COMPETITOR_RATE.to_string()],
            );
            Running::spawn(cmd, dir, &format!("competitor-{k}"))
        })
        .collect();
    std::thread::sleep(HEAD_START);

    let report_path = dir.join("ours.json");
    let cmd = support::send_command(
        dir,
        &cluster.rpc_url(),
        &cluster.ws_url(),
        &ours,
        &[
            "--rate",
            &RATE.to_string(),
            "--report",
            report_path.to_str().expect("utf-8"),
        ],
    );
    let run = Running::spawn(cmd, dir, "ours");
    // Mid-run, every sender is a client of the relays: each seen from an address of its own.
    run.sleep_until(Duration::from_secs(5));
    let stats = cluster.relay_stats().unwrap_or_else(|e| panic!("{e}"));
    let done = run.wait(HUNG);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let report = read_report(&report_path);
    assert_report_agrees_with_chain(&chain, &report, N);
    assert_the_far_node_is_named(&cluster, &report);

    let sources = distinct_sources(&stats);
    assert!(
        sources.len() > COMPETITORS,
        "the relays saw {} source addresses for {} senders: {stats:#}",
        sources.len(),
        COMPETITORS + 1
    );
    for (k, competitor) in competitors.into_iter().enumerate() {
        let ended = competitor.wait(HUNG);
        assert_eq!(ended.code, 0, "competitor {k}: {}", ended.stderr);
    }
    let after = cluster.relay_stats().unwrap_or_else(|e| panic!("{e}"));
    print_figures(&report, done.took, &after);
    let counters = settled_counters(&mut cluster);
    eprintln!("the nodes' TPU servers, summed: {counters}");
    assert!(
        counters["reports"].as_u64() > Some(0)
            && counters["totals"]["new_streams"].as_i64() >= Some(N as i64),
        "the nodes' own counters saw fewer streams than txpace's {N} transactions: {counters}"
    );
}

/// Node 2's link (230 ms, 2% loss) is named for what it is, `far` or `lossy`, and the round
/// trip txpace measured to it is at least the relay's, less 15%. Only the floor is checked
/// here: a loaded machine adds to every round trip on loopback, so how close the figures come
/// from above, and that the near nodes are named `ok`, are `txpace-bench wan`'s to judge
/// ("txpace's link figures against the relays'").
fn assert_the_far_node_is_named(cluster: &Localnet, report: &Value) {
    let far = cluster.nodes()[2].identity.to_string();
    let link = report["leaders"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["identity"].as_str() == Some(far.as_str()))
        .map(|l| &l["link"])
        .unwrap_or_else(|| panic!("the report has no leader {far}: {:#}", report["leaders"]));
    let verdict = link["verdict"].as_str();
    assert!(
        matches!(verdict, Some("far" | "lossy")),
        "node 2 (230 ms, 2% loss) named {verdict:?}: {link:#}"
    );
    let srtt = link["srtt_ms"].as_f64().unwrap_or(0.0);
    assert!(
        srtt >= 230.0 * 0.85,
        "node 2's round trip measured {srtt} ms: {link:#}"
    );
}

/// The nodes' TPU server counters once they cover the run: each node reports every 5 s and its
/// metrics agent writes every 10 s, so the figures are read again until they stop changing
/// (at most [`COUNTERS_SETTLE`]).
fn settled_counters(cluster: &mut Localnet) -> Value {
    let deadline = std::time::Instant::now() + COUNTERS_SETTLE;
    let mut last = cluster.server_counters().unwrap_or_else(|e| panic!("{e}"));
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(6));
        let now = cluster.server_counters().unwrap_or_else(|e| panic!("{e}"));
        if now["totals"] == last["totals"] && now["reports"].as_u64() > Some(0) {
            return now;
        }
        last = now;
    }
    last
}

/// `n` self-transfers from the mint, or from `payers` fresh payers the mint funds.
fn generate(cluster: &Localnet, dir: &Path, name: &str, n: usize, payers: Option<u32>) -> PathBuf {
    let out = dir.join(name);
    let mut cmd = txpace(dir);
    cmd.args(["gen", "--url", &cluster.rpc_url(), "--keypair"])
        .arg(cluster.mint_keypair_path())
        .arg("--out")
        .arg(&out)
        .args(["-n", &n.to_string()]);
    if let Some(k) = payers {
        cmd.args(["--payers", &k.to_string()]);
    }
    run_expect(&mut cmd, 0);
    out
}

/// Every client of every relay, by the address the node sees it from: a relay maps each client
/// to an upstream socket bound to a source address of that client's own. Two clients sharing
/// an address anywhere would be one budget on the node, so that fails here.
fn distinct_sources(stats: &Value) -> HashSet<String> {
    let mut all = HashSet::new();
    for relay in stats.as_array().expect("one entry per relay") {
        let upstreams = relay["upstreams"].as_object().expect("upstreams");
        let ips: Vec<&str> = upstreams
            .values()
            .filter_map(Value::as_str)
            .filter_map(|a| a.rsplit_once(':').map(|(ip, _)| ip))
            .collect();
        let unique: HashSet<&str> = ips.iter().copied().collect();
        assert_eq!(
            unique.len(),
            ips.len(),
            "two clients share a source address at node {}: {upstreams:#?}",
            relay["node"]
        );
        all.extend(unique.into_iter().map(str::to_string));
    }
    all
}

/// The run as the user and the wire saw it: wall, time to land from the report, and what each
/// relay dropped by its link and delivered.
fn print_figures(report: &Value, took: Duration, stats: &Value) {
    let summary = &report["summary"];
    eprintln!(
        "mainnet profile, {COMPETITORS} competitors at {COMPETITOR_RATE} tx/s: {N} at {RATE} tx/s \
         in {:.1} s (pace bound {:.1} s); time to land p50 {} ms, p99 {} ms; {} sends ({} per landed)",
        took.as_secs_f64(),
        N as f64 / RATE as f64,
        summary["latency_ms"]["p50"],
        summary["latency_ms"]["p99"],
        summary["sends"],
        summary["sends_per_landed"],
    );
    for relay in stats.as_array().into_iter().flatten() {
        let dropped = |dir: &str| {
            let d = &relay[dir]["dropped"];
            ["loss", "burst", "queue"]
                .iter()
                .filter_map(|k| d[k].as_u64())
                .sum::<u64>()
        };
        eprintln!(
            "node {} ({}): to node {} delivered, {} dropped by the link; to clients {} delivered, {} dropped",
            relay["node"],
            relay["link"].as_str().unwrap_or("?"),
            relay["to_node"]["delivered"],
            dropped("to_node"),
            relay["to_clients"]["delivered"],
            dropped("to_clients"),
        );
    }
}

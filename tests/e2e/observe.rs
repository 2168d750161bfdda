//! Watching a run from outside, end to end on a real `solana-test-validator`: `--metrics`
//! (scraped during the run, and after it while `--metrics-linger` holds the endpoint open),
//! `--events` and `--report-sends`, each checked against the final report, and the report's
//! per-transaction fields against what was signed and what the chain says; then `txpace view`
//! on that report, and `--preflight` refusing batches that cannot land.

use crate::common::scenarios::Scenarios;
use crate::{common, machine};

use std::{
    collections::HashMap,
    io::{BufRead, BufReader},
    net::SocketAddr,
    process::{Child, Stdio},
    str::FromStr,
    sync::mpsc,
    time::{Duration, Instant},
};

use common::{
    gen_command,
    metrics::{Scrape, get, scrape},
    pty::{Terminal, txpace_in_terminal},
    read_report, run_expect, send_command, start_validator,
};
use serde_json::Value;
use solana_pubkey::Pubkey;
use txpace::validator::ValidatorOptions;

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads the child's stderr in the background, handing each line over.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let err = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("txpace: {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// One run watched three ways, and recent fees (in inspect, the header's figures, the report
/// and a gauge) against what an earlier batch paid.
#[test]
fn metrics_events_and_the_report_agree_with_each_other_and_the_chain() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    // A first batch at 1,000 µlamports/CU gives the cluster recent fees for the payer.
    let warmup = dir.path().join("warmup.b64");
    run_expect(
        gen_command(&v, dir.path(), &warmup).args([
            "-n",
            "20",
            "--with-compute-unit-price",
            "1000",
        ]),
        0,
    );
    run_expect(send_command(&v, dir.path()).arg(&warmup), 0);
    let file = dir.path().join("observed.b64");
    let n = 300u64;
    run_expect(
        gen_command(&v, dir.path(), &file).args([
            "-n",
            &n.to_string(),
            "--with-compute-unit-price",
            "4321",
            "--with-compute-unit-limit",
            "900",
        ]),
        0,
    );
    // inspect with a cluster named places each price among the recent fees (the warm-up's).
    let out = run_expect(
        common::txpace(dir.path())
            .args(["inspect", "--url", &v.rpc_url(), "--output", "json"])
            .arg(&file),
        0,
    );
    let inspected: Value = serde_json::from_slice(&out.stdout).expect("inspect's JSON");
    assert!(
        inspected["fees"]["slots"].as_u64() >= Some(1),
        "{:#}",
        inspected["fees"]
    );
    assert_eq!(inspected["fees"]["below_median"], 0);
    let rows = inspected["transactions"].as_array().expect("rows");
    assert!(rows.iter().all(|r| r["fee_percentile"] == 100), "{rows:#?}");
    let out = run_expect(
        common::txpace(dir.path())
            .args(["inspect", "--url", &v.rpc_url()])
            .arg(&file),
        0,
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("4321 (p100)") && table.contains("recent fees"),
        "{table}"
    );

    let report_path = dir.path().join("report.json");
    let events_path = dir.path().join("events.ndjson");
    let mut child = send_command(&v, dir.path())
        .arg(&file)
        .args(["--rate", "50", "--report-sends", "--report"])
        .arg(&report_path)
        .args([
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "120",
            "--events",
        ])
        .arg(&events_path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting txpace send");
    let lines = lines_of(&mut child);

    // The endpoint is announced before anything is sent.
    let addr: SocketAddr = loop {
        let line = match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(l) => l,
            Err(e) => {
                kill(&mut child);
                panic!("no metrics address announced: {e}");
            }
        };
        if let Some(rest) = line.strip_prefix("metrics: http://") {
            let addr = rest.trim_end_matches("/metrics");
            break addr.parse().expect("a socket address");
        }
    };

    // Scrape during the run, then until the engine says done (the endpoint stays up).
    let started = Instant::now();
    let mut during: Option<Scrape> = None;
    let last = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run did not finish"
        );
        std::thread::sleep(Duration::from_millis(300));
        let Some(s) = scrape(addr) else { continue };
        if get(&s, r#"txpace_run_state{state="done"}"#) == 1.0 {
            break s;
        }
        if during.is_none()
            && get(&s, r#"txpace_run_state{state="running"}"#) == 1.0
            && get(&s, "txpace_sends_total") > 0.0
        {
            during = Some(s);
        }
    };
    // The report is written before the linger begins.
    while !report_path.exists() {
        assert!(started.elapsed() < Duration::from_secs(150), "no report");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SIGTERM ends the linger; the run's own exit code stands.
    let pid = child.id().to_string();
    common::tool::require("kill", &["-l"], "procps", "to end the linger with SIGTERM");
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let status = child.wait().expect("waiting for txpace");
    assert_eq!(status.code(), Some(0), "exit after the linger");

    let report = read_report(&report_path);
    let s = &report["summary"];
    assert_eq!(s["confirmed"], n, "{s:#}");
    let num = |v: &Value| v.as_u64().expect("a count") as f64;

    let mut scenarios = Scenarios::new();
    scenarios.run("recent fees", || {
        // Recent fees (the warm-up batch paid 1,000): the batch's place among them, per
        // transaction and as a gauge, as the report has them.
        let fees = s["fees"].as_object().expect("recent fees known");
        assert_eq!(fees["batch_price"], 4321, "{s:#}");
        assert_eq!(fees["batch_percentile"], 100, "{s:#}");
        assert_eq!(get(&last, "txpace_fees_batch_percentile"), 100.0);
        let txs = report["transactions"].as_array().expect("transactions");
        assert!(txs.iter().all(|t| t["fee_percentile"] == 100));
    });

    scenarios.run("metrics during and after the run", || {
        // During the run: counters no higher than at the end, and the run was under way.
        let during = during.expect("a scrape while the run was sending");
        assert!(get(&during, "txpace_sends_total") <= num(&s["sends"]));
        assert!(get(&during, r#"txpace_transactions{state="confirmed"}"#) <= n as f64);

        // After the run: exactly the report's figures.
        assert_eq!(get(&last, "txpace_sends_total"), num(&s["sends"]));
        assert_eq!(
            get(&last, "txpace_send_errors_total"),
            num(&s["send_errors"])
        );
        assert_eq!(
            get(&last, "txpace_streams_sent_total"),
            num(&s["streams"]["sent"])
        );
        for outcome in ["accepted", "throttled", "connection", "timeout", "other"] {
            assert_eq!(
                get(
                    &last,
                    &format!(r#"txpace_streams_total{{outcome="{outcome}"}}"#)
                ),
                num(&s["streams"][outcome]),
                "{outcome}"
            );
        }
        for state in ["confirmed", "failed", "expired"] {
            assert_eq!(
                get(&last, &format!(r#"txpace_transactions{{state="{state}"}}"#)),
                num(&s[state]),
                "{state}"
            );
        }
        assert_eq!(get(&last, "txpace_time_to_land_seconds_count"), n as f64);
        assert_eq!(
            get(&last, "txpace_stream_ack_seconds_count"),
            num(&s["streams"]["sent"])
        );
        assert_eq!(get(&last, "txpace_rate_target_tps"), 50.0);
        let leaders = report["leaders"].as_array().expect("leaders");
        assert!(!leaders.is_empty());
        for l in leaders {
            let id = l["identity"].as_str().expect("identity");
            assert_eq!(
                get(
                    &last,
                    &format!(r#"txpace_leader_streams_sent_total{{leader="{id}"}}"#)
                ),
                num(&l["streams"]["sent"])
            );
            assert_eq!(
                get(
                    &last,
                    &format!(r#"txpace_leader_landed_total{{leader="{id}"}}"#)
                ),
                num(&l["landed"])
            );
            assert!(l["ack_ms_p50"].as_u64().is_some(), "{l:#}");
        }
    });

    scenarios.run("events and the report, transaction by transaction", || {
        // Events: one line per stream, and every transaction's state changes ending where the
        // report says it ended.
        let text = std::fs::read_to_string(&events_path).expect("events file");
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
            .collect();
        let sends: Vec<&Value> = events.iter().filter(|e| e["event"] == "send").collect();
        assert_eq!(sends.len() as f64, num(&s["streams"]["sent"]));
        let mut last_state: HashMap<u64, String> = HashMap::new();
        let mut streams_of: HashMap<u64, usize> = HashMap::new();
        for e in &events {
            // A leader's new link verdict: no transaction, its figures as the report has them.
            if e["event"] == "link" {
                assert!(
                    e["leader"].is_string()
                        && e["tpu"].is_string()
                        && e["link"]["verdict"].is_string()
                        && e.get("id").is_none(),
                    "{e}"
                );
                continue;
            }
            let id = e["id"].as_u64().unwrap_or_else(|| panic!("an id: {e}"));
            match e["event"].as_str() {
                Some("state") => {
                    last_state.insert(id, e["to"].as_str().unwrap_or("").to_string());
                }
                Some("send") => {
                    *streams_of.entry(id).or_default() += 1;
                    assert!(
                        e["ack_ms"].as_u64().is_some() && e["tpu"].is_string(),
                        "{e}"
                    );
                }
                other => panic!("unexpected event {other:?}: {e}"),
            }
        }

        // The report, transaction by transaction: what was signed, where it landed by the chain's
        // own schedule, and its streams as the events had them.
        let rpc = v.rpc_client();
        let txs = report["transactions"].as_array().expect("transactions");
        assert_eq!(txs.len() as u64, n);
        let mut leader_of_slot: HashMap<u64, Pubkey> = HashMap::new();
        for (id, t) in txs.iter().enumerate() {
            assert_eq!(t["cu_price"], 4321, "{t:#}");
            assert_eq!(t["cu_limit"], 900, "{t:#}");
            assert_eq!(
                last_state.get(&(id as u64)).map(String::as_str),
                Some("confirmed")
            );
            let slot = t["landed_slot"].as_u64().expect("landed");
            let chain_leader = *leader_of_slot
                .entry(slot)
                .or_insert_with(|| rpc.get_slot_leaders(slot, 1).expect("getSlotLeaders")[0]);
            let landed_leader =
                Pubkey::from_str(t["landed_leader"].as_str().expect("named")).expect("a pubkey");
            assert_eq!(landed_leader, chain_leader, "tx {id} at slot {slot}");
            assert!(
                t["leaders"]
                    .as_array()
                    .expect("leaders")
                    .iter()
                    .any(|l| l.as_str() == Some(&chain_leader.to_string())),
                "tx {id} landed with a leader it was sent to"
            );
            let streams = t["streams"].as_array().expect("--report-sends");
            assert_eq!(t["streams_dropped"], 0);
            assert_eq!(
                Some(&streams.len()),
                streams_of.get(&(id as u64)),
                "tx {id}"
            );
            assert!(
                streams.iter().all(|st| st["outcome"].is_string()),
                "every stream finished: {t:#}"
            );
        }
    });

    scenarios.run("view of the report", || {
        // The same report on the dashboard, read-only, in a real terminal; q leaves it.
        let report_arg = report_path.to_str().expect("utf-8 path");
        let mut term = Terminal::spawn(txpace_in_terminal(dir.path(), &["view", report_arg]));
        term.wait_for("the viewed run", Duration::from_secs(30), |t| {
            t.contains("read-only") && t.contains("DONE") && t.contains(&format!("Confirmed {n}"))
        });
        term.keys(b"q");
        let status = term.wait_exit(Duration::from_secs(10));
        assert!(status.success(), "view exits 0 on q: {status:?}");
    });

    scenarios.run("view of the journal", || {
        // The run's journal, for a run that wrote no report: the same fates, no times.
        let journal = common::files_under(dir.path())
            .into_iter()
            .find(|f| {
                f.extension().is_some_and(|e| e == "jnl")
                    && f.file_name()
                        .is_some_and(|n| n.to_string_lossy().contains("observed"))
            })
            .expect("the run's journal");
        let journal_arg = journal.to_str().expect("utf-8 path");
        let mut term = Terminal::spawn(txpace_in_terminal(dir.path(), &["view", journal_arg]));
        term.wait_for("the journaled run", Duration::from_secs(30), |t| {
            t.contains(&format!("journal of {n} transactions"))
                && t.contains("DONE")
                && t.contains(&format!("Confirmed {n}"))
        });
        term.keys(b"q");
        let status = term.wait_exit(Duration::from_secs(10));
        assert!(
            status.success(),
            "view of a journal exits 0 on q: {status:?}"
        );
    });
    scenarios.finish();
}

/// `--preflight`, on by default for `send`: a good batch passes every check and is sent; an
/// unfunded fee payer, an expired blockhash, a transaction that fails in simulation and a
/// durable nonce its account no longer holds are each refused with exit 2 before anything is
/// sent; `--force` sends the failing one anyway, and it lands as failed, as the table warned;
/// a durable-nonce transaction with its account's current value passes and lands.
#[test]
fn preflight_refuses_what_cannot_land_and_force_sends_it() {
    let _machine = machine::share();
    use solana_keypair::Keypair;
    use solana_message::{Message, VersionedMessage};
    use solana_signer::Signer;
    use solana_transaction::versioned::VersionedTransaction;
    use txpace::{
        cli::OutputFormat,
        workload::{build_self_transfers, write_transactions},
    };

    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let send = |name: &str, extra: &[&str], code: i32| -> (String, Value) {
        let report = dir.path().join(format!("{name}.report.json"));
        let out = run_expect(
            send_command(&v, dir.path())
                .arg(dir.path().join(name))
                .arg("--report")
                .arg(&report)
                .args(extra),
            code,
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!("{name} {extra:?}:\n{stderr}");
        let json = if report.exists() {
            read_report(&report)
        } else {
            Value::Null
        };
        (stderr, json)
    };
    let write = |name: &str, txs: &[VersionedTransaction]| {
        write_transactions(&dir.path().join(name), txs, OutputFormat::Base64).expect("writing");
    };
    let rpc = v.rpc_client();
    let fresh = || rpc.get_latest_blockhash().expect("getLatestBlockhash");
    let mint = v.mint_keypair();

    // A good batch: every check passes and it is sent.
    let good = build_self_transfers(std::slice::from_ref(mint), 20, 1_000, 1_000, fresh())
        .expect("signing");
    write("good.b64", &good);
    let (stderr, report) = send("good.b64", &[], 0);
    for check in ["blockhashes", "fee payers", "simulation", "fees"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.trim_start().starts_with(check) && l.contains(" ok ")),
            "{check} ok:\n{stderr}"
        );
    }
    assert_eq!(report["summary"]["confirmed"], 20);

    // An unfunded payer: refused, nothing sent (no report, no journal).
    let broke = Keypair::new();
    write(
        "broke.b64",
        &build_self_transfers(&[broke], 5, 1_000, 1_000, fresh()).expect("signing"),
    );
    let (stderr, report) = send("broke.b64", &[], 2);
    assert!(
        stderr.contains("fee payers")
            && stderr.contains("FATAL")
            && stderr.contains("nothing was sent"),
        "{stderr}"
    );
    assert!(report.is_null(), "nothing was run");

    // An expired blockhash: refused.
    let dead = solana_hash::Hash::new_from_array([9; 32]);
    write(
        "expired.b64",
        &build_self_transfers(std::slice::from_ref(mint), 5, 1_000, 1_000, dead).expect("signing"),
    );
    let (stderr, _) = send("expired.b64", &[], 2);
    assert!(
        stderr.contains("blockhashes") && stderr.contains("expired"),
        "{stderr}"
    );

    // A transfer of more than the payer holds fails in simulation: refused, then sent with
    // --force, where it lands as failed (exit 1) with the fee paid.
    let transfer = solana_system_interface::instruction::transfer(
        &mint.pubkey(),
        &Pubkey::new_unique(),
        u64::MAX / 2,
    );
    let message = Message::new_with_blockhash(&[transfer], Some(&mint.pubkey()), &fresh());
    let tx =
        VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[mint]).expect("signing");
    write("overdraw.b64", &[tx]);
    let (stderr, _) = send("overdraw.b64", &[], 2);
    assert!(
        stderr.contains("simulation")
            && stderr.contains("FATAL")
            && stderr.contains("overdraw.b64:1"),
        "{stderr}"
    );
    let (stderr, report) = send("overdraw.b64", &["--force"], 1);
    assert!(stderr.contains("sending anyway"), "{stderr}");
    assert_eq!(report["summary"]["failed"], 1, "{report:#}");

    // Durable nonces: a transaction carrying a value its nonce account does not hold can never
    // land and is refused; one carrying the account's current value passes and lands.
    let nonce = Keypair::new();
    let rent = rpc
        .get_minimum_balance_for_rent_exemption(solana_nonce::state::State::size())
        .expect("rent");
    let create = solana_system_interface::instruction::create_nonce_account(
        &mint.pubkey(),
        &nonce.pubkey(),
        &mint.pubkey(),
        rent,
    );
    let tx = solana_transaction::Transaction::new_signed_with_payer(
        &create,
        Some(&mint.pubkey()),
        &[mint, &nonce],
        fresh(),
    );
    rpc.send_and_confirm_transaction(&tx)
        .expect("creating the nonce account");
    let value = txpace::preflight::nonce_value(
        &rpc.get_account_data(&nonce.pubkey())
            .expect("nonce account"),
    )
    .expect("an initialized nonce account");
    let durable = |hash: solana_hash::Hash| {
        let ixs = [
            solana_system_interface::instruction::advance_nonce_account(
                &nonce.pubkey(),
                &mint.pubkey(),
            ),
            solana_system_interface::instruction::transfer(&mint.pubkey(), &mint.pubkey(), 1),
        ];
        let message = Message::new_with_blockhash(&ixs, Some(&mint.pubkey()), &hash);
        VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[mint]).expect("signing")
    };
    write(
        "stale-nonce.b64",
        &[durable(solana_hash::Hash::new_from_array([7; 32]))],
    );
    let (stderr, _) = send("stale-nonce.b64", &[], 2);
    assert!(
        stderr
            .lines()
            .any(|l| l.trim_start().starts_with("nonces") && l.contains("FATAL")),
        "{stderr}"
    );
    write("nonce.b64", &[durable(value)]);
    let (stderr, report) = send("nonce.b64", &[], 0);
    assert!(
        stderr
            .lines()
            .any(|l| l.trim_start().starts_with("nonces") && l.contains(" ok ")),
        "{stderr}"
    );
    assert_eq!(report["summary"]["confirmed"], 1, "{report:#}");
}

/// `--via rpc`: the same paced, tracked run through the RPC node's sendTransaction. Everything
/// lands, every stream went to the RPC node (whose identity the leaders panel and the report
/// name), each landing is credited to its slot's leader by the chain's schedule, and the
/// report says which route was taken.
#[test]
fn via_rpc_lands_everything_through_send_transaction() {
    let _machine = machine::share();
    use txpace::{
        cli::OutputFormat,
        workload::{build_self_transfers, write_transactions},
    };

    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let rpc = v.rpc_client();
    let blockhash = rpc.get_latest_blockhash().expect("getLatestBlockhash");
    let txs = build_self_transfers(
        std::slice::from_ref(v.mint_keypair()),
        200,
        1_000,
        1_000,
        blockhash,
    )
    .expect("signing");
    let file = dir.path().join("via-rpc.b64");
    write_transactions(&file, &txs, OutputFormat::Base64).expect("writing");
    let report_path = dir.path().join("via-rpc.report.json");
    let events_path = dir.path().join("via-rpc.events");
    run_expect(
        send_command(&v, dir.path())
            .arg(&file)
            .args(["--via", "rpc", "--rate", "100", "--report"])
            .arg(&report_path)
            .arg("--events")
            .arg(&events_path),
        0,
    );
    let report = read_report(&report_path);
    let s = &report["summary"];
    assert_eq!(s["confirmed"], 200, "{s:#}");
    assert_eq!(s["via_rpc"], s["rpc_url"], "{s:#}");
    assert!(
        s["via_rpc"]
            .as_str()
            .is_some_and(|u| u.starts_with(&v.rpc_url()))
    );
    let node = rpc.get_identity().expect("getIdentity").to_string();
    let leaders = report["leaders"].as_array().expect("leaders");
    assert_eq!(
        leaders.len(),
        1,
        "every stream went to the RPC node: {leaders:#?}"
    );
    assert_eq!(leaders[0]["identity"], node.as_str());
    let rpc_addr = v
        .rpc_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert_eq!(leaders[0]["tpu_quic"], rpc_addr.as_str());
    assert_eq!(
        leaders[0]["landed"], 200,
        "landings credited to the slot's leader"
    );
    for t in report["transactions"].as_array().expect("transactions") {
        assert_eq!(t["landed_leader"], node.as_str(), "{t:#}");
    }
    let events = std::fs::read_to_string(&events_path).expect("events");
    let sends: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
        .filter(|e| e["event"] == "send")
        .collect();
    assert_eq!(
        sends.len() as u64,
        s["streams"]["sent"].as_u64().expect("sent")
    );
    assert!(
        sends
            .iter()
            .all(|e| e["tpu"] == rpc_addr.as_str() && e["outcome"] == "accepted")
    );
}

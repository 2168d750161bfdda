//! End to end on a real `solana-test-validator`: `txpace gen` writes transactions the chain
//! accepts (every one confirms), and the harness that every other end-to-end test stands on
//! starts validators side by side and fails loudly when the binary is missing.
//!
//! These tests need `solana-test-validator` (see `scripts/setup.sh`); without it they fail with
//! the install instructions, they are never skipped.

use crate::{common, machine};

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    thread,
    time::Duration,
};

use common::{gen_command, own_process, run_expect, start_validator, submit_and_confirm, txpace};
use solana_keypair::read_keypair_file;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use txpace::{
    cli::InputFormat,
    validator::{LocalValidator, ValidatorOptions},
};

/// Landing 50 transactions takes a few slots; the bound only catches a hang.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(90);

/// Loads a `gen` output with txpace's own reader, which checks every signature, and decodes it.
fn load(path: &Path) -> Vec<VersionedTransaction> {
    let loaded = txpace::source::load(&[path.to_path_buf()], InputFormat::Auto)
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    assert!(
        loaded.invalid.is_empty(),
        "invalid transactions: {:?}",
        loaded.invalid
    );
    loaded
        .valid
        .iter()
        .map(|t| bincode::deserialize(&t.wire).expect("decoding a loaded transaction"))
        .collect()
}

fn fee_payer(tx: &VersionedTransaction) -> solana_pubkey::Pubkey {
    tx.message.static_account_keys()[0]
}

/// `txpace inspect --json` accepts every transaction and reads back gen's compute-budget settings.
fn inspect_accepts_all(dir: &Path, file: &Path, count: usize) {
    let out = run_expect(txpace(dir).args(["inspect", "--json"]).arg(file), 0);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON");
    assert_eq!(
        report["summary"],
        serde_json::json!({ "total": count, "valid": count, "invalid": 0 }),
        "{report:#}"
    );
    let rows = report["transactions"].as_array().expect("transactions");
    assert_eq!(rows.len(), count);
    for row in rows {
        assert_eq!(row["cu_price"], 1_000_000, "{row:#}");
        assert_eq!(row["cu_limit"], 1_000, "{row:#}");
        assert_eq!(row["instructions"], 3, "{row:#}");
    }
}

/// The one compute-unit price every transaction of `file` carries, as `inspect --json` reads it.
fn the_price_of(dir: &Path, file: &Path) -> u64 {
    let out = run_expect(txpace(dir).args(["inspect", "--json"]).arg(file), 0);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON");
    let prices: HashSet<u64> = report["transactions"]
        .as_array()
        .expect("transactions")
        .iter()
        .map(|row| row["cu_price"].as_u64().expect("a cu_price"))
        .collect();
    assert_eq!(prices.len(), 1, "{prices:?}");
    prices.into_iter().next().expect("one price")
}

/// A price no other transaction of this test pays, in micro-lamports per compute unit.
const CHEAP: u64 = 777;

/// `--with-compute-unit-price auto` prices by what recent slots charged for writing the payer.
/// The mint's 50 transfers at 1,000,000 µlamports/CU have landed; a few more at [`CHEAP`] land
/// in slots of their own. Then the 100th percentile is the first price and the 0th the cheap
/// one, as an independent `getRecentPrioritizationFees` reads them.
fn auto_price_follows_recent_fees(v: &LocalValidator, dir: &Path) {
    let rpc = v.rpc_client();
    let mint = v.mint_keypair().pubkey();
    let cheap = dir.join("cheap.b64");
    run_expect(
        gen_command(v, dir, &cheap).args(["-n", "5", "--with-compute-unit-price", "777"]),
        0,
    );
    let landing = submit_and_confirm(&rpc, &load(&cheap), CONFIRM_TIMEOUT);
    assert_eq!(landing.confirmed.len(), 5, "{landing:?}");

    let fees = || -> Vec<u64> {
        let mut fees: Vec<u64> = rpc
            .get_recent_prioritization_fees(&[mint])
            .expect("getRecentPrioritizationFees")
            .iter()
            .map(|f| f.prioritization_fee)
            .collect();
        fees.sort_unstable();
        fees
    };
    // The fee cache takes a slot in once it is finalized.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let seen = fees();
        if seen.first() == Some(&CHEAP) && seen.last() == Some(&1_000_000) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the landed transfers' fees never showed in getRecentPrioritizationFees: {seen:?}"
        );
        thread::sleep(Duration::from_millis(500));
    }
    for (percentile, expected) in [("100", 1_000_000), ("0", CHEAP)] {
        let file = dir.join(format!("auto-p{percentile}.b64"));
        let out = run_expect(
            gen_command(v, dir, &file).args([
                "-n",
                "3",
                "--with-compute-unit-price",
                "auto",
                "--fee-percentile",
                percentile,
            ]),
            0,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("{expected} µlamports/CU (auto: p{percentile} of ")),
            "{stdout}"
        );
        assert_eq!(the_price_of(dir, &file), expected, "p{percentile}");
    }
}

#[test]
fn gen_writes_transactions_the_chain_accepts() {
    let _machine = machine::share();
    let validator = start_validator(ValidatorOptions::default());
    let dir = tempfile::tempdir().expect("temp dir");
    let rpc = validator.rpc_client();
    let mint = validator.mint_keypair().pubkey();

    // One payer (the keypair itself), default base64.
    let single = dir.path().join("single.b64");
    let out = run_expect(
        gen_command(&validator, dir.path(), &single).args(["-n", "50"]),
        0,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "wrote 50 transactions (base64, one per line) to {}",
            single.display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("valid until block height "), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&single).unwrap().lines().count(),
        50
    );

    inspect_accepts_all(dir.path(), &single, 50);
    let txs = load(&single);
    assert_eq!(txs.len(), 50);
    assert!(txs.iter().all(|t| fee_payer(t) == mint));

    // What one of them costs, to keep the documented compute-unit need honest.
    let sim = rpc
        .simulate_transaction(&txs[0])
        .expect("simulateTransaction")
        .value;
    assert_eq!(sim.err, None, "{:?}", sim.logs);
    let units = sim.units_consumed.expect("unitsConsumed");
    eprintln!("a self-transfer with two compute-budget instructions consumed {units} CU");
    assert!(
        units <= u64::from(txpace::workload::SELF_TRANSFER_UNITS),
        "{units} CU"
    );

    let landing = submit_and_confirm(&rpc, &txs, CONFIRM_TIMEOUT);
    assert!(landing.failed.is_empty(), "failed: {:?}", landing.failed);
    assert!(landing.missing.is_empty(), "missing: {:?}", landing.missing);
    assert_eq!(landing.confirmed.len(), 50);

    auto_price_follows_recent_fees(&validator, dir.path());

    // Two funded payers, JSON output.
    let spread = dir.path().join("spread.json");
    let out = run_expect(
        gen_command(&validator, dir.path(), &spread)
            .args(["-n", "50", "--payers", "2", "--format", "json"]),
        0,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("wrote 50 transactions (JSON array of base64)"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("funded with ").count(), 2, "{stdout}");
    let payer_files: Vec<PathBuf> = (1..=2)
        .map(|i| dir.path().join(format!("spread.json.payer-{i}.json")))
        .collect();
    let mut payers = Vec::new();
    for path in &payer_files {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
        payers.push(read_keypair_file(path).unwrap().pubkey());
    }
    inspect_accepts_all(dir.path(), &spread, 50);
    let txs = load(&spread);
    assert_eq!(txs.len(), 50);
    let mut per_payer: HashMap<_, usize> = HashMap::new();
    for (i, tx) in txs.iter().enumerate() {
        assert_eq!(fee_payer(tx), payers[i % 2], "transaction {i}");
        *per_payer.entry(fee_payer(tx)).or_default() += 1;
    }
    assert_eq!(per_payer[&payers[0]], 25);
    assert_eq!(per_payer[&payers[1]], 25);

    let landing = submit_and_confirm(&rpc, &txs, CONFIRM_TIMEOUT);
    assert!(landing.failed.is_empty(), "failed: {:?}", landing.failed);
    assert!(landing.missing.is_empty(), "missing: {:?}", landing.missing);
    assert_eq!(landing.confirmed.len(), 50);

    // A rerun reuses the funded payers instead of making new ones.
    let out = run_expect(
        gen_command(&validator, dir.path(), &spread)
            .args(["-n", "10", "--payers", "2", "--format", "base58"]),
        0,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("already funded").count(), 2, "{stdout}");
    let txs = load(&spread);
    assert_eq!(txs.len(), 10);
    let landing = submit_and_confirm(&rpc, &txs, CONFIRM_TIMEOUT);
    assert_eq!(
        (
            landing.confirmed.len(),
            landing.failed.len(),
            landing.missing.len()
        ),
        (10, 0, 0),
        "{landing:?}"
    );
}

#[test]
fn validators_started_in_parallel_do_not_collide() {
    let _machine = machine::whole();
    let handles: Vec<_> = (0..2)
        .map(|_| thread::spawn(|| start_validator(ValidatorOptions::default())))
        .collect();
    let validators: Vec<LocalValidator> = handles
        .into_iter()
        .map(|h| h.join().expect("a starter thread panicked"))
        .collect();

    let rpc_urls: HashSet<_> = validators.iter().map(|v| v.rpc_url()).collect();
    let tpus: HashSet<_> = validators.iter().map(|v| v.tpu_quic()).collect();
    let identities: HashSet<_> = validators
        .iter()
        .map(|v| v.identity_keypair().pubkey())
        .collect();
    assert_eq!(
        (rpc_urls.len(), tpus.len(), identities.len()),
        (2, 2, 2),
        "{rpc_urls:?} {tpus:?}"
    );
    for v in &validators {
        let rpc = v.rpc_client();
        assert!(rpc.get_slot().expect("getSlot") > 0);
        assert_eq!(
            rpc.get_identity().expect("getIdentity"),
            v.identity_keypair().pubkey(),
            "each RPC port answers for its own validator"
        );
        assert!(
            rpc.get_balance(&v.mint_keypair().pubkey())
                .expect("getBalance")
                > 0
        );
        assert!(v.tpu_quic().ip().is_loopback(), "{}", v.tpu_quic());
        assert!(v.log_path().exists(), "{}", v.log_path().display());
        assert_eq!(
            read_keypair_file(v.mint_keypair_path()).unwrap().pubkey(),
            v.mint_keypair().pubkey()
        );
    }
}

/// What later fault tests rely on: a paused validator stops answering and resumes, a restart
/// continues the same chain, and a kept ledger brings its mint keypair back.
#[test]
fn pause_restart_and_a_kept_ledger_continue_the_chain() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = dir.path().join("ledger");
    let options = ValidatorOptions::default().ledger(&ledger);
    let mut v = start_validator(options.clone());
    let mint = v.mint_keypair().pubkey();
    let identity = v.identity_keypair().pubkey();

    v.pause().expect("pause");
    let impatient = solana_rpc_client::rpc_client::RpcClient::new_with_timeout(
        v.rpc_url(),
        Duration::from_secs(1),
    );
    assert!(impatient.get_slot().is_err(), "a paused validator answered");
    v.resume().expect("resume");
    let before = v.rpc_client().get_slot().expect("getSlot after resume");

    v.restart().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("restart ready in {:.1} s", v.startup_time().as_secs_f64());
    let rpc = v.rpc_client();
    assert!(rpc.get_slot().expect("getSlot after restart") >= before);
    assert_eq!(rpc.get_identity().expect("getIdentity"), identity);
    assert!(rpc.get_balance(&mint).expect("getBalance") > 0);
    drop(v);

    let v = start_validator(options);
    assert_eq!(v.mint_keypair().pubkey(), mint, "the kept ledger's mint");
    assert!(v.rpc_client().get_balance(&mint).expect("getBalance") > 0);
    assert!(ledger.join("genesis.bin").exists());
}

/// `TXPACE_VALIDATOR` naming a file that does not exist: starting a validator fails with the
/// install instructions. In a process of its own (`common::own_process`): changing the environment
/// of this multi-threaded process would race with the other tests' starts.
#[test]
fn missing_binary_gives_the_install_hint() {
    let _machine = machine::share();
    own_process::run(
        &[(
            "TXPACE_VALIDATOR",
            Some("/nonexistent/solana-test-validator"),
        )],
        || {
            let message = match LocalValidator::start() {
                Ok(v) => panic!("started {} from a nonexistent binary", v.rpc_url()),
                Err(e) => e.to_string(),
            };
            assert!(
                message.starts_with(
                    "TXPACE_VALIDATOR=/nonexistent/solana-test-validator is not an executable file."
                ),
                "{message}"
            );
            assert!(message.contains("scripts/setup.sh"), "{message}");
            assert!(
                message.contains(
                    "cargo install agave-validator --version 4.0.0 --locked --bin solana-test-validator"
                ),
                "{message}"
            );
            assert!(
                message.contains(
                    "clang libclang-dev protobuf-compiler libudev-dev pkg-config libssl-dev cmake"
                ),
                "{message}"
            );
        },
    );
}

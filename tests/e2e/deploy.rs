//! `txpace deploy` end to end on a real `solana-test-validator` with a real SBF program:
//! spl-token-2022 (615,936 bytes) from the `litesvm` crate, fetched by
//! `scripts/fetch-programs.sh` through cargo.
//!
//! One validator serves every scenario, one after another (a 2-core machine running several
//! validators would measure the machine): a new deploy, an upgrade, a deploy killed mid-writes
//! and resumed from its buffer, and an abandoned buffer closed for its lamports; a deploy
//! through an endpoint URL carrying API keys, which no output may quote; priced deploys with a
//! separate fee payer, read back from the chain; `--final`; `--buffer-only` with a hand-over;
//! an upgrade to a larger build, which extends the program first; and signers from stdin,
//! a typed seed phrase and a USB wallet.

use crate::common::scenarios::Scenarios;
use crate::{common, machine};

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    str::FromStr,
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use common::read_deploy_report;
use common::secrets::{assert_no_key_anywhere, assert_private, keyed, refused_addr, shown};
use serde_json::Value;
use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, read_keypair_file, write_keypair_file};
use solana_loader_v3_interface::get_program_data_address;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_sdk_ids::bpf_loader_upgradeable;
use solana_signature::Signature;
use solana_signer::Signer;
use txpace::{
    deploy::{
        accounts::{BUFFER_HEADER, PROGRAMDATA_HEADER},
        chunks::{Chunks, WriteSigners},
    },
    validator::{LocalValidator, ValidatorOptions},
};

/// Where `scripts/fetch-programs.sh` caches the programs for this build.
fn programs_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("programs")
}

/// A program from the cache, fetching it first when missing.
pub(crate) fn program(name: &str) -> Vec<u8> {
    let dir = programs_dir();
    let path = dir.join(name);
    if !path.exists() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-programs.sh");
        let out = Command::new("bash")
            .arg(&script)
            .env("PROGRAMS_DIR", &dir)
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
        assert!(
            out.status.success() && path.exists(),
            "{} did not produce {} ({}): the deploy tests need it.\n--- stdout:\n{}\n--- stderr:\n{}",
            script.display(),
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// [`common::txpace`] with its data directory in `dir` and no colours.
fn txpace(dir: &Path) -> Command {
    let mut cmd = common::txpace(dir);
    cmd.env("XDG_DATA_HOME", dir).env("NO_COLOR", "1");
    cmd
}

fn deploy_cmd(v: &LocalValidator, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = txpace(dir);
    cmd.current_dir(dir)
        .args([
            "deploy",
            "--no-tui",
            "--url",
            &v.rpc_url(),
            "--ws",
            &v.ws_url(),
        ])
        .arg("--keypair")
        .arg(v.mint_keypair_path())
        .args(args);
    cmd
}

fn show(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout:\n{}\n--- stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a deploy to its end, expecting `code`; returns its output and its report.
fn deploy(v: &LocalValidator, dir: &Path, args: &[&str], code: i32) -> (Output, Option<Value>) {
    let report = dir.join(format!("report-{}.json", rand_suffix()));
    let started = Instant::now();
    let out = deploy_cmd(v, dir, args)
        .arg("--report")
        .arg(&report)
        .output()
        .expect("running txpace deploy");
    let text = show(&format!("txpace deploy {args:?}"), &out);
    eprintln!("{text}\n(took {:.1} s)", started.elapsed().as_secs_f64());
    assert_eq!(out.status.code(), Some(code), "{text}");
    let report = report.exists().then(|| read_deploy_report(&report));
    (out, report)
}

fn rand_suffix() -> String {
    Keypair::new().pubkey().to_string()[..8].to_string()
}

fn account_data(rpc: &RpcClient, address: &Pubkey) -> Option<Vec<u8>> {
    rpc.get_account_with_commitment(address, CommitmentConfig::confirmed())
        .expect("getAccountInfo")
        .value
        .map(|a| a.data)
}

/// The program's account is an executable of the upgradeable loader, and its program data holds
/// `expected` followed by zeros.
fn assert_deployed(rpc: &RpcClient, program_id: &Pubkey, expected: &[u8], authority: &Pubkey) {
    let acc = rpc
        .get_account_with_commitment(program_id, CommitmentConfig::confirmed())
        .expect("getAccountInfo")
        .value
        .unwrap_or_else(|| panic!("no program account at {program_id}"));
    assert!(acc.executable, "program account not executable");
    assert_eq!(acc.owner, bpf_loader_upgradeable::id());
    let data = account_data(rpc, &get_program_data_address(program_id)).expect("program data");
    let body = &data[PROGRAMDATA_HEADER..];
    assert!(body.len() >= expected.len());
    assert!(
        body[..expected.len()] == *expected,
        "program data differs from the file"
    );
    assert!(body[expected.len()..].iter().all(|b| *b == 0));
    // ProgramData { slot: u64, upgrade_authority_address: Option<Pubkey> } after a u32 tag.
    assert_eq!(data[12], 1, "no upgrade authority");
    assert_eq!(&data[13..45], authority.as_ref());
}

fn phase<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no {name} phase in {report:#}"))
}

fn phase_names(report: &Value) -> Vec<String> {
    report["phases"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| p["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn copy_program(dir: &Path, name: &str, bytes: &[u8]) -> String {
    std::fs::write(dir.join(name), bytes).expect("copying the program");
    name.to_string()
}

fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(200));
    }
}

/// Reads the buffer until it stops changing: writes a killed process had in flight may still
/// land for a few slots.
fn settled_buffer(rpc: &RpcClient, buffer: &Pubkey) -> Vec<u8> {
    let mut last = account_data(rpc, buffer).expect("buffer account");
    let mut stable_since = Instant::now();
    while stable_since.elapsed() < Duration::from_secs(4) {
        thread::sleep(Duration::from_millis(500));
        let now = account_data(rpc, buffer).expect("buffer account");
        if now != last {
            last = now;
            stable_since = Instant::now();
        }
    }
    last[BUFFER_HEADER..].to_vec()
}

fn spawn_deploy(v: &LocalValidator, dir: &Path, args: &[&str]) -> Child {
    deploy_cmd(v, dir, args)
        .stdout(Stdio::from(
            std::fs::File::create(dir.join("child.out")).expect("child stdout"),
        ))
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("child.err")).expect("child stderr"),
        ))
        .spawn()
        .expect("spawning txpace deploy")
}

#[test]
fn refuses_a_file_that_is_not_a_program_before_spending_anything() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("temp dir");
    let payer = dir.path().join("payer.json");
    write_keypair_file(&Keypair::new(), &payer).expect("payer keypair");
    std::fs::write(dir.path().join("notes.so"), "just some text\n").expect("writing");
    // Nothing listens on port 1: any attempt to reach the cluster would fail differently.
    for (file, reason) in [
        (dir.path().join("notes.so"), "not an ELF file"),
        (PathBuf::from("/bin/true"), "built for x86-64"),
    ] {
        let out = txpace(dir.path())
            .args(["deploy", "--no-tui", "--url", "http://127.0.0.1:1"])
            .arg(&file)
            .arg("--keypair")
            .arg(&payer)
            .output()
            .expect("running txpace deploy");
        let text = show("deploy", &out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(reason), "{text}");
        assert!(stderr.contains("nothing was sent"), "{text}");
    }
}

/// Refused at a URL with a path key and a query key, with `RUST_LOG=debug`: the error names the
/// endpoint redacted, and no output or file holds a key.
#[test]
fn a_refused_keyed_endpoint_is_never_quoted() {
    let _machine = machine::share();
    let memo = program("spl_memo.so");
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let payer = d.join("payer.json");
    write_keypair_file(&Keypair::new(), &payer).expect("payer keypair");
    let so = copy_program(d, "memo.so", &memo);
    let refused = format!("http://{}", refused_addr());
    let out = txpace(d)
        .current_dir(d)
        .env("RUST_LOG", "debug")
        .args(["deploy", "--no-tui", "--url", &keyed(&refused), &so])
        .arg("--keypair")
        .arg(&payer)
        .output()
        .expect("running txpace deploy");
    let text = show("deploy to a refused keyed URL", &out);
    assert_ne!(out.status.code(), Some(0), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "error sending request for url ({})",
            shown(&refused)
        )),
        "{text}"
    );
    let files = assert_no_key_anywhere(&String::from_utf8_lossy(&out.stdout), &stderr, d);
    assert_private(&files);
}

/// How a program of `len` bytes is cut into writes when the mint pays and signs alone.
fn one_signer_chunks(mint: &Arc<Keypair>, buffer: Pubkey, len: usize) -> Chunks {
    let one_signer = WriteSigners {
        payer: mint.clone(),
        authority: mint.clone(),
        buffer,
    };
    Chunks {
        size: one_signer.max_chunk(&[]).expect("chunk size"),
        len,
    }
}

#[test]
fn deploys_upgrades_resumes_and_closes_on_a_real_validator() {
    let _machine = machine::whole();
    let token = program("spl_token_2022.so");
    let memo = program("spl_memo.so");
    let v = common::start_validator(ValidatorOptions::default());
    let rpc = v.rpc_client();
    let mint = Arc::new(v.mint_keypair().insecure_clone());

    let mut scenarios = Scenarios::new();
    scenarios.run("a new program, then its upgrades", || {
        // 1. A new program, with an upgrade authority other than the payer (two signers per write).
        let dir1 = tempfile::tempdir().expect("temp dir");
        let d1 = dir1.path();
        let auth = Keypair::new();
        let auth_path = d1.join("auth.json");
        write_keypair_file(&auth, &auth_path).expect("authority keypair");
        let so = copy_program(d1, "token.so", &token);
        let (out, report) = deploy(
            &v,
            d1,
            &[
                &so,
                "--upgrade-authority",
                "auth.json",
                "--events",
                "events.ndjson",
            ],
            0,
        );
        let report = report.expect("a report");
        assert_eq!(report["outcome"], "deployed", "{report:#}");
        // --events across the phases: one line per stream, named by phase, as each phase's report
        // counts them, on one clock.
        let events: Vec<Value> = std::fs::read_to_string(d1.join("events.ndjson"))
            .expect("events file")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let mut t = 0;
        for e in &events {
            let now = e["t_ms"].as_u64().expect("t_ms");
            assert!(
                now + 1_000 >= t,
                "events go forward in time (within a writer's batch): {e}"
            );
            t = t.max(now);
        }
        for name in ["buffer", "writes", "deploy"] {
            let sends = events
                .iter()
                .filter(|e| e["event"] == "send" && e["phase"] == name)
                .count() as u64;
            assert_eq!(
                Some(sends),
                phase(&report, name)["report"]["summary"]["streams"]["sent"].as_u64(),
                "{name}"
            );
        }
        assert!(String::from_utf8_lossy(&out.stdout).contains("events: events.ndjson"));
        let program_id = Pubkey::from_str(report["program_id"].as_str().expect("program_id"))
            .expect("a program id");
        let saved =
            read_keypair_file(d1.join("token-keypair.json")).expect("program keypair saved");
        assert_eq!(saved.pubkey(), program_id);
        assert!(
            !d1.join("token-buffer.json").exists(),
            "the default buffer keypair outlived its buffer"
        );
        assert_eq!(phase_names(&report), ["buffer", "writes", "deploy"]);
        let chunks = report["chunks"].as_u64().expect("chunks");
        let writes = phase(&report, "writes");
        assert_eq!(
            writes["report"]["summary"]["confirmed"],
            report["chunks_to_write"]
        );
        assert!(report["chunks_to_write"].as_u64().expect("count") <= chunks);
        let chunk_size = report["chunk_size"].as_u64().expect("chunk_size") as usize;
        let two_signers = WriteSigners {
            payer: mint.clone(),
            authority: Arc::new(auth.insecure_clone()),
            buffer: Pubkey::new_unique(),
        };
        assert_eq!(chunk_size, two_signers.max_chunk(&[]).expect("chunk size"));
        assert_deployed(&rpc, &program_id, &token, &auth.pubkey());
        assert!(String::from_utf8_lossy(&out.stdout).contains("deployed program"));

        // 2. Upgrades: refused before spending without the authority (bad input, exit 2), done
        // with it.
        let memo_so = copy_program(d1, "memo.so", &memo);
        let pid = program_id.to_string();
        let (out, _) = deploy(&v, d1, &[&memo_so, "--program-id", &pid], 2);
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains(&format!("has upgrade authority {}", auth.pubkey())),
            "{}",
            show("unauthorized upgrade", &out)
        );
        let (_, report) = deploy(
            &v,
            d1,
            &[
                &memo_so,
                "--program-id",
                &pid,
                "--upgrade-authority",
                "auth.json",
            ],
            0,
        );
        let report = report.expect("a report");
        assert_eq!(report["outcome"], "upgraded", "{report:#}");
        assert_eq!(phase_names(&report), ["buffer", "writes", "upgrade"]);
        assert_deployed(&rpc, &program_id, &memo, &auth.pubkey());
    });

    scenarios.run("killed mid-writes, resumed", || {
        // 3. Killed mid-writes, then resumed with the same --buffer: only what is missing is sent.
        let dir3 = tempfile::tempdir().expect("temp dir");
        let d3 = dir3.path();
        let so = copy_program(d3, "token.so", &token);
        let mut child = spawn_deploy(&v, d3, &[&so, "--buffer", "buf.json", "--rate", "40"]);
        let buffer = wait_for("the buffer keypair", Duration::from_secs(60), || {
            read_keypair_file(d3.join("buf.json")).ok()
        })
        .pubkey();
        let cut = one_signer_chunks(&mint, buffer, token.len());
        let total = cut.count();
        wait_for("a quarter of the writes", Duration::from_secs(120), || {
            let data = account_data(&rpc, &buffer)?;
            let missing = cut.differing(&token, &data[BUFFER_HEADER..]).len();
            (missing <= total * 3 / 4).then_some(())
        });
        child.kill().expect("killing txpace deploy");
        let status = child.wait().expect("waiting for the killed deploy");
        assert!(!status.success());
        let written = settled_buffer(&rpc, &buffer);
        let missing = cut.differing(&token, &written);
        eprintln!(
            "killed after {} of {total} chunks; {} missing",
            total - missing.len(),
            missing.len()
        );
        assert!(!missing.is_empty() && missing.len() < total);
        let (_, report) = deploy(&v, d3, &[&so, "--buffer", "buf.json"], 0);
        let report = report.expect("a report");
        assert_eq!(report["outcome"], "deployed", "{report:#}");
        assert_eq!(phase_names(&report), ["writes", "deploy"]);
        assert_eq!(report["chunks_to_write"], missing.len());
        let writes = &phase(&report, "writes")["report"];
        assert_eq!(writes["summary"]["total"], missing.len());
        assert_eq!(writes["summary"]["confirmed"], missing.len());
        let resumed_program =
            Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
        assert_deployed(&rpc, &resumed_program, &token, &mint.pubkey());
        assert!(
            d3.join("buf.json").exists(),
            "an explicit --buffer is the user's file"
        );
    });

    scenarios.run("abandoned, its buffer closed", || {
        // 4. Abandoned: Ctrl-C says how to recover the buffer's lamports, --close-buffer does it.
        let dir4 = tempfile::tempdir().expect("temp dir");
        let d4 = dir4.path();
        let so = copy_program(d4, "token.so", &token);
        let child = spawn_deploy(&v, d4, &[&so, "--buffer", "buf.json", "--rate", "20"]);
        let buffer = wait_for("the buffer keypair", Duration::from_secs(60), || {
            read_keypair_file(d4.join("buf.json")).ok()
        })
        .pubkey();
        wait_for("the buffer account", Duration::from_secs(60), || {
            account_data(&rpc, &buffer)
        });
        let status = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill -INT");
        assert!(status.success());
        let out = child.wait_with_output().expect("waiting for the deploy");
        let stderr = std::fs::read_to_string(d4.join("child.err")).unwrap_or_default();
        assert_eq!(out.status.code(), Some(130), "stderr:\n{stderr}");
        assert!(
            stderr.contains("txpace deploy --close-buffer"),
            "stderr:\n{stderr}"
        );
        let before = rpc.get_balance(&mint.pubkey()).expect("getBalance");
        let out = txpace(d4)
            .current_dir(d4)
            .args([
                "deploy",
                "--url",
                &v.rpc_url(),
                "--close-buffer",
                "buf.json",
                "--output",
                "json",
            ])
            .arg("--keypair")
            .arg(v.mint_keypair_path())
            .output()
            .expect("running txpace deploy --close-buffer");
        assert_eq!(out.status.code(), Some(0), "{}", show("close", &out));
        let closed: Value = serde_json::from_slice(&out.stdout).expect("--output json prints JSON");
        assert_eq!(closed["closed_buffer"], buffer.to_string(), "{closed:#}");
        assert_eq!(closed["recipient"], mint.pubkey().to_string(), "{closed:#}");
        assert!(closed["lamports"].as_u64().unwrap_or(0) > 0, "{closed:#}");
        let close_sig =
            Signature::from_str(closed["signature"].as_str().unwrap_or("")).expect("sig");
        assert!(
            rpc.get_signature_status(&close_sig)
                .expect("status")
                .is_some_and(|r| r.is_ok()),
            "the close {close_sig} is not on the chain"
        );
        assert!(account_data(&rpc, &buffer).is_none(), "buffer still open");
        let after = rpc.get_balance(&mint.pubkey()).expect("getBalance");
        assert!(after > before, "no lamports came back ({before} → {after})");
    });

    scenarios.run("frozen past the blockhash's lifetime", || {
        // 5. Frozen mid-writes past the blockhash's lifetime (150 blocks, about a minute): the
        // writes that had not landed expire, are signed again with a fresh blockhash and land.
        let dir5 = tempfile::tempdir().expect("temp dir");
        let d5 = dir5.path();
        let so = copy_program(d5, "token.so", &token);
        let report5 = d5.join("frozen.json");
        let report5_arg = report5.to_str().expect("utf-8 path");
        let mut child = spawn_deploy(
            &v,
            d5,
            &[
                &so,
                "--buffer",
                "buf.json",
                "--rate",
                "40",
                "--report",
                report5_arg,
            ],
        );
        let buffer = wait_for("the buffer keypair", Duration::from_secs(60), || {
            read_keypair_file(d5.join("buf.json")).ok()
        })
        .pubkey();
        let cut = one_signer_chunks(&mint, buffer, token.len());
        let total = cut.count();
        wait_for("the first writes", Duration::from_secs(120), || {
            let data = account_data(&rpc, &buffer)?;
            let missing = cut.differing(&token, &data[BUFFER_HEADER..]).len();
            (missing < total).then_some(())
        });
        let pid = child.id().to_string();
        let stop = Command::new("kill").args(["-STOP", &pid]).status();
        assert!(stop.is_ok_and(|s| s.success()), "kill -STOP");
        let frozen_at = rpc.get_block_height().expect("getBlockHeight");
        wait_for("151 blocks to pass", Duration::from_secs(180), || {
            let h = rpc.get_block_height().ok()?;
            (h > frozen_at + 151).then_some(())
        });
        let cont = Command::new("kill").args(["-CONT", &pid]).status();
        assert!(cont.is_ok_and(|s| s.success()), "kill -CONT");
        let status = child.wait().expect("waiting for the thawed deploy");
        let stderr = std::fs::read_to_string(d5.join("child.err")).unwrap_or_default();
        assert!(status.success(), "{status}; stderr:\n{stderr}");
        let report = read_deploy_report(&report5);
        assert_eq!(report["outcome"], "deployed", "{report:#}");
        let resigned = phase(&report, "writes")["resigns"].as_u64().unwrap_or(0);
        assert!(resigned > 0, "no write was signed again: {report:#}");
        eprintln!("frozen deploy: {resigned} writes signed again after their blockhash expired");
        let frozen_program =
            Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
        assert_deployed(&rpc, &frozen_program, &token, &mint.pubkey());
    });

    scenarios.run("through a keyed URL", || {
        // 6. Through a URL with a path key and a query key (the websocket derived from it), with
        // `RUST_LOG=debug`: deployed, and no output, log or report holds a key.
        let dir6 = tempfile::tempdir().expect("temp dir");
        let d6 = dir6.path();
        let so = copy_program(d6, "memo.so", &memo);
        let report6 = d6.join("report.json");
        let out = txpace(d6)
            .current_dir(d6)
            .env("RUST_LOG", "debug")
            .args(["deploy", "--no-tui", "--url", &keyed(&v.rpc_url()), &so])
            .arg("--keypair")
            .arg(v.mint_keypair_path())
            .arg("--report")
            .arg(&report6)
            .output()
            .expect("running txpace deploy");
        let text = show("deploy through a keyed URL", &out);
        assert_eq!(out.status.code(), Some(0), "{text}");
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report6).expect("report"))
                .expect("json");
        assert_eq!(report["outcome"], "deployed", "{report:#}");
        let keyed_program =
            Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
        assert_deployed(&rpc, &keyed_program, &memo, &mint.pubkey());
        let files = assert_no_key_anywhere(
            &String::from_utf8_lossy(&out.stdout),
            &String::from_utf8_lossy(&out.stderr),
            d6,
        );
        assert!(files.contains(&report6));
        assert_private(&files);
    });

    scenarios.run("priced, with a separate fee payer", || {
        budgeted_deploys(&v, &rpc, &memo);
    });

    scenarios.run("--buffer-only, then handed over", || {
        buffer_only_then_handed_over(&v, &rpc, &memo);
    });

    scenarios.run("a larger upgrade", || {
        a_larger_upgrade_extends_the_program_first(&v, &rpc, &memo, &token);
    });

    scenarios.run("signers as the Solana CLI takes them", || {
        signers_as_the_solana_cli_takes_them(&v, &rpc, &memo);
    });
    scenarios.finish();
}

/// A well-known BIP39 test phrase (all "abandon" but the checksum word).
const SEED_PHRASE: &str =
    "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";

/// Sends `to` 10 SOL from the validator's mint and waits until it is confirmed.
fn fund(v: &LocalValidator, rpc: &RpcClient, to: &Pubkey) {
    let mint = v.mint_keypair();
    let ix = solana_system_interface::instruction::transfer(&mint.pubkey(), to, 10_000_000_000);
    let blockhash = rpc.get_latest_blockhash().expect("blockhash");
    let tx = solana_transaction::Transaction::new_signed_with_payer(
        &[ix],
        Some(&mint.pubkey()),
        &[mint],
        blockhash,
    );
    rpc.send_and_confirm_transaction(&tx).expect("funding");
}

/// Step 10: signers as the Solana CLI takes them. A fee payer read from `stdin`; a default
/// signer from a seed phrase typed at `prompt://?key=0/0` in a terminal, never echoed nor
/// written anywhere; and `usb://ledger`, looked for through Agave's remote-wallet code and, with
/// no device plugged in, refused with a usage error naming the URI.
fn signers_as_the_solana_cli_takes_them(v: &LocalValidator, rpc: &RpcClient, memo: &[u8]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();

    // --fee-payer stdin.
    let payer = Keypair::new();
    fund(v, rpc, &payer.pubkey());
    let so = copy_program(d, "memo.so", memo);
    let report_path = d.join("stdin-report.json");
    let mut child = deploy_cmd(v, d, &[so.as_str(), "--fee-payer", "stdin"])
        .arg("--report")
        .arg(&report_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("txpace deploy");
    let json = serde_json::to_string(&payer.to_bytes().to_vec()).expect("json");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(json.as_bytes())
        .expect("writing the keypair");
    let out = child.wait_with_output().expect("deploy");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        show("stdin fee payer", &out)
    );
    let report = read_deploy_report(&report_path);
    for (sig, _) in landed_signatures(&report) {
        assert_eq!(common::budget::landed(rpc, &sig).fee_payer, payer.pubkey());
    }

    // -k prompt://?key=0/0 in a terminal.
    let seed = solana_seed_phrase::generate_seed_from_seed_phrase_and_passphrase(SEED_PHRASE, "");
    let derived = solana_keypair::seed_derivable::keypair_from_seed_and_derivation_path(
        &seed,
        Some(solana_derivation_path::DerivationPath::from_key_str("0/0").expect("path")),
    )
    .expect("derived keypair");
    fund(v, rpc, &derived.pubkey());
    let so = copy_program(d, "memo2.so", memo);
    let report_path = d.join("prompt-report.json");
    let mut screen = common::pty::Terminal::spawn(common::pty::txpace_in_terminal(
        d,
        &[
            "deploy",
            "--no-tui",
            "--url",
            &v.rpc_url(),
            "--ws",
            &v.ws_url(),
            "-k",
            "prompt://?key=0/0",
            "--report",
            report_path.to_str().expect("utf-8"),
            &so,
        ],
    ));
    screen.wait_for("the seed phrase prompt", Duration::from_secs(30), |t| {
        t.contains("seed phrase:")
    });
    screen.keys(format!("{SEED_PHRASE}\r").as_bytes());
    screen.wait_for("the passphrase prompt", Duration::from_secs(10), |t| {
        t.contains("passphrase")
    });
    screen.keys(b"\r");
    let status = screen.wait_exit(Duration::from_secs(120));
    let screen_text = String::from_utf8_lossy(&screen.raw()).to_string();
    assert_eq!(status.exit_code(), 0, "{screen_text}");
    assert!(
        !screen_text.contains("abandon"),
        "the seed phrase was echoed:\n{screen_text}"
    );
    let report = read_deploy_report(&report_path);
    let program =
        Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
    // The derived key paid and is the upgrade authority.
    assert_deployed(rpc, &program, memo, &derived.pubkey());
    for file in common::files_under(d) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("abandon"),
            "{} holds the seed phrase",
            file.display()
        );
    }

    // usb://ledger: Agave's remote-wallet code looks for the device (none is plugged in here).
    let so = copy_program(d, "memo3.so", memo);
    let out = deploy_cmd(v, d, &[so.as_str(), "--fee-payer", "usb://ledger"])
        .output()
        .expect("deploy");
    let text = show("usb fee payer", &out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "usb://ledger: the fee payer's hardware wallet cannot be reached: no device found"
        ),
        "{text}"
    );
}

/// Step 9: upgrading a small program with a larger build: the program-data account is extended
/// (ExtendProgramChecked on agave 4.0) in a phase of its own, then upgraded; the program holds
/// the larger build.
fn a_larger_upgrade_extends_the_program_first(
    v: &LocalValidator,
    rpc: &RpcClient,
    small: &[u8],
    large: &[u8],
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let so = copy_program(d, "small.so", small);
    let (_, report) = deploy(v, d, &[so.as_str()], 0);
    let report = report.expect("a report");
    let pid = report["program_id"].as_str().expect("id").to_string();
    let program = Pubkey::from_str(&pid).expect("a program id");
    let large_so = copy_program(d, "large.so", large);
    let (out, report) = deploy(v, d, &[large_so.as_str(), "--program-id", &pid], 0);
    let report = report.expect("a report");
    assert_eq!(report["outcome"], "upgraded", "{report:#}");
    assert_eq!(
        phase_names(&report),
        ["buffer", "writes", "extend", "upgrade"]
    );
    let extend = large.len() - small.len();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&format!("then extend program {pid} by {extend} bytes")),
        "{}",
        show("larger upgrade", &out)
    );
    assert_deployed(rpc, &program, large, &v.mint_keypair().pubkey());
}

/// Step 8: `--buffer-only --new-buffer-authority KEY` (a multisig deploy's first half, and the
/// way txpace tells a hardware-wallet owner to deploy): the buffer holds the program, belongs to
/// KEY, and its keypair file is kept; no program is deployed. Then `deploy --upgrade-authority
/// KEY` from that buffer sends no write and one transaction signed by KEY (the one approval a
/// wallet gives; a keypair file stands in for the device), and the program is live under KEY.
fn buffer_only_then_handed_over(v: &LocalValidator, rpc: &RpcClient, memo: &[u8]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let so = copy_program(d, "memo.so", memo);
    let wallet = Keypair::new();
    write_keypair_file(&wallet, d.join("wallet.json")).expect("wallet keypair");
    let vault = wallet.pubkey().to_string();
    let args = [
        so.as_str(),
        "--buffer-only",
        "--buffer",
        "buf.json",
        "--new-buffer-authority",
        vault.as_str(),
    ];
    let (out, report) = deploy(v, d, &args, 0);
    let report = report.expect("a report");
    assert_eq!(report["outcome"], "buffer-written", "{report:#}");
    assert_eq!(phase_names(&report), ["buffer", "writes", "hand-over"]);
    assert!(report["signature"].is_string(), "{report:#}");
    let buffer = read_keypair_file(d.join("buf.json"))
        .expect("the buffer keypair is kept")
        .pubkey();
    assert_eq!(report["buffer"], buffer.to_string());
    let data = account_data(rpc, &buffer).expect("the buffer account");
    // Buffer { authority_address: Option<Pubkey> } after a u32 tag.
    assert_eq!(data[4], 1, "the buffer has no authority");
    assert_eq!(
        data[5..37],
        *Pubkey::from_str(&vault).expect("key").as_ref()
    );
    assert_eq!(&data[BUFFER_HEADER..], memo);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("now belongs to {vault}")),
        "{}",
        show("buffer-only", &out)
    );
    assert!(
        !d.join("memo-keypair.json").exists(),
        "--buffer-only wrote a program keypair"
    );

    let args = [
        so.as_str(),
        "--buffer",
        "buf.json",
        "--upgrade-authority",
        "wallet.json",
    ];
    let (_, report) = deploy(v, d, &args, 0);
    let report = report.expect("a report");
    assert_eq!(phase_names(&report), ["deploy"], "{report:#}");
    let landed = landed_signatures(&report);
    assert_eq!(landed.len(), 1, "{report:#}");
    let program =
        Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
    assert_deployed(rpc, &program, memo, &wallet.pubkey());
}

/// Every signature a deploy report lists, with its phase's recorded unit limit.
fn landed_signatures(report: &Value) -> Vec<(Signature, Option<u64>)> {
    report["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .flat_map(|p| {
            let limit = p["unit_limit"].as_u64();
            p["report"]["transactions"]
                .as_array()
                .expect("transactions")
                .iter()
                .map(move |t| {
                    let sig = Signature::from_str(t["signature"].as_str().expect("signature"))
                        .expect("a signature");
                    (sig, limit)
                })
        })
        .collect()
}

/// Step 7: compute budgets, read back from the chain: a price with each phase's limit measured by
/// simulation, paid by a `--fee-payer` apart from the upgrade authority; then `auto` with an
/// explicit limit. Every landed transaction carries the report's price and limit, its fee
/// payer is the one named, and its fee is the base fee plus price × limit. Last, `--final`
/// leaves the program without an upgrade authority.
fn budgeted_deploys(v: &LocalValidator, rpc: &RpcClient, memo: &[u8]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let payer = Keypair::new();
    write_keypair_file(&payer, d.join("payer.json")).expect("payer keypair");
    fund(v, rpc, &payer.pubkey());

    let so = copy_program(d, "memo.so", memo);
    let args = [
        so.as_str(),
        "--fee-payer",
        "payer.json",
        "--with-compute-unit-price",
        "1000",
        "--output",
        "json",
    ];
    let (out, report) = deploy(v, d, &args, 0);
    let report = report.expect("a report");
    assert_eq!(report["outcome"], "deployed", "{report:#}");
    // `--output json`: standard output is the report the file holds, and only that.
    let printed: Value = serde_json::from_slice(&out.stdout).expect("the report as JSON");
    assert_eq!(printed, report);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("CU price 1,000 µlamports"),
        "{}",
        show("priced deploy", &out)
    );
    let budget = &report["compute_budget"];
    assert_eq!(budget["unit_price"], 1_000, "{budget:#}");
    assert_eq!(budget["price_from"], "flag");
    assert_eq!(budget["unit_limit"], Value::Null);
    let landed = landed_signatures(&report);
    assert!(landed.len() >= 3, "{report:#}");
    for (sig, limit) in &landed {
        let limit = limit.unwrap_or_else(|| panic!("no measured limit for {sig}: {report:#}"));
        let got = common::budget::landed(rpc, sig);
        assert_eq!(got.price, Some(1_000), "{sig}: {got:?}");
        assert_eq!(got.limit.map(u64::from), Some(limit), "{sig}: {got:?}");
        assert_eq!(got.fee_payer, payer.pubkey(), "{sig}");
        let priority = (1_000 * limit).div_ceil(1_000_000);
        assert_eq!(
            got.fee,
            got.signatures as u64 * 5_000 + priority,
            "{sig}: {got:?}"
        );
    }
    let program =
        Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
    // The upgrade authority is the -k signer (the mint), not the fee payer.
    assert_deployed(rpc, &program, memo, &v.mint_keypair().pubkey());

    let so = copy_program(d, "memo2.so", memo);
    let args = [
        so.as_str(),
        "--with-compute-unit-price",
        "auto",
        "--with-compute-unit-limit",
        "60000",
    ];
    let (_, report) = deploy(v, d, &args, 0);
    let report = report.expect("a report");
    let budget = &report["compute_budget"];
    assert_eq!(budget["price_from"], "recent", "{budget:#}");
    assert_eq!(budget["percentile"], 75);
    assert_eq!(budget["unit_limit"], 60_000);
    let price = budget["unit_price"].as_u64().expect("a price");
    for (sig, limit) in landed_signatures(&report) {
        assert_eq!(limit, Some(60_000), "{report:#}");
        let got = common::budget::landed(rpc, &sig);
        assert_eq!((got.price, got.limit), (Some(price), Some(60_000)), "{sig}");
    }
    eprintln!("auto price on the test validator: {price} µlamports per CU");

    // `--final`: deployed, and its program data holds no upgrade authority.
    let so = copy_program(d, "memo3.so", memo);
    let (out, report) = deploy(v, d, &[so.as_str(), "--final"], 0);
    let report = report.expect("a report");
    assert_eq!(report["outcome"], "deployed", "{report:#}");
    assert_eq!(report["final"], true);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("can never be upgraded again"),
        "{}",
        show("final deploy", &out)
    );
    let program =
        Pubkey::from_str(report["program_id"].as_str().expect("id")).expect("a program id");
    let data = account_data(rpc, &get_program_data_address(&program)).expect("program data");
    assert_eq!(data[12], 0, "--final left an upgrade authority");
    assert_eq!(&data[PROGRAMDATA_HEADER..][..memo.len()], memo);
}

/// `--metrics` on a deploy: each phase's series carry its name, keep their final values once
/// the phase is over, and equal the phase's figures in the deploy report (scraped after the
/// run, while `--metrics-linger` holds the endpoint open).
#[test]
fn deploy_metrics_carry_each_phase_and_match_the_report() {
    let _machine = machine::share();
    use common::metrics::{announced, get, scrape};

    let memo = program("spl_memo.so");
    let v = common::start_validator(ValidatorOptions::default());
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let so = copy_program(d, "memo.so", &memo);
    let report_path = d.join("deploy-report.json");
    let report_arg = report_path.to_str().expect("utf-8 path");
    let mut child = spawn_deploy(
        &v,
        d,
        &[
            &so,
            "--report",
            report_arg,
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "120",
        ],
    );
    let addr = wait_for("the metrics address", Duration::from_secs(60), || {
        announced(&std::fs::read_to_string(d.join("child.err")).unwrap_or_default())
    });
    // The report is written before the linger begins.
    wait_for("the deploy report", Duration::from_secs(120), || {
        report_path.exists().then_some(())
    });
    thread::sleep(Duration::from_millis(300));
    let scraped = scrape(addr).expect("a scrape after the deploy");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    let exit = child.wait().expect("waiting for txpace deploy");
    assert_eq!(exit.code(), Some(0), "the deploy's own exit code stands");
    let report = read_deploy_report(&report_path);
    assert_eq!(report["outcome"], "deployed", "{report:#}");
    for name in phase_names(&report) {
        let s = &phase(&report, &name)["report"]["summary"];
        let n = |v: &Value| v.as_u64().expect("a count") as f64;
        assert_eq!(
            get(
                &scraped,
                &format!(r#"txpace_sends_total{{phase="{name}"}}"#)
            ),
            n(&s["sends"]),
            "{name}"
        );
        assert_eq!(
            get(
                &scraped,
                &format!(r#"txpace_transactions{{phase="{name}",state="confirmed"}}"#)
            ),
            n(&s["confirmed"]),
            "{name}"
        );
        assert_eq!(
            get(
                &scraped,
                &format!(r#"txpace_streams_sent_total{{phase="{name}"}}"#)
            ),
            n(&s["streams"]["sent"]),
            "{name}"
        );
    }
}

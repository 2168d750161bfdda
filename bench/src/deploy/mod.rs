//! The deploy benchmark: spl-token-2022 (615,936 bytes, from `scripts/fetch-programs.sh`)
//! deployed by `txpace deploy` (at its default pace and at Agave's 100 tx/s) and by three Agave
//! deployers ([`agave::Via`]: `solana program deploy` over the TPU and over RPC, and a deployer
//! on tpu-client-next), on the same validator in one run, each as a measured child process.
//! Every deploy is checked on chain by the benchmark itself: the program's data account must
//! hold the program's bytes.
//!
//! Sends per landed write, per transaction per leader address: txpace's streams (its report);
//! tpu-client-next's counted where it hands them to a leader's worker (`next_sends`); the TPU
//! client's counted by its QUIC connection cache (`agave_metrics`; a lower bound, "≥"); the RPC
//! deployer's calls are not sends to leaders and are not counted.

mod agave;
mod table;

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use txpace::validator::{LocalValidator, ValidatorOptions};

use crate::child;
use crate::measure::{self, Sends, Usage};
use crate::workload::start_validator;
pub use agave::Via;

#[derive(clap::Args)]
pub struct Args {
    /// The program to deploy [default: spl_token_2022.so from scripts/fetch-programs.sh]
    #[arg(long)]
    program: Option<PathBuf>,
    /// Skip the Agave deployers
    #[arg(long)]
    no_agave: bool,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the table as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// (internal) run an Agave deployer as the measured child, against this RPC URL
    #[arg(long, hide = true, requires_all = ["ws", "keypair", "via"])]
    agave_child: Option<String>,
    #[arg(long, hide = true)]
    ws: Option<String>,
    #[arg(long, hide = true)]
    keypair: Option<PathBuf>,
    #[arg(long, hide = true, value_enum)]
    via: Option<Via>,
}

/// One deployer's run, as the table shows it.
#[derive(Debug, Serialize)]
pub struct Contender {
    pub name: &'static str,
    /// An Agave deployer (compared with), or txpace (judged).
    pub agave: bool,
    pub usage: Usage,
    /// From the first write sent to the last write confirmed.
    pub writes_s: f64,
    pub writes: u64,
    pub landed_writes: u64,
    pub sends: Option<Sends>,
    /// The program's data account holds the program's bytes, as the benchmark read it.
    pub deployed: bool,
    /// Why its process failed, when it did: its exit and the tail of its standard error.
    pub failure: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(url) = &args.agave_child {
        return agave::child(
            url,
            args.ws.as_deref().context("--ws")?,
            args.keypair.as_deref().context("--keypair")?,
            &program_path(&args)?,
            args.via.context("--via")?,
        );
    }
    let program = program_path(&args)?;
    let bytes =
        std::fs::read(&program).with_context(|| format!("reading {}", program.display()))?;
    let dir = std::env::temp_dir().join(format!("txpace-bench-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let v = start_validator(ValidatorOptions::default())?;
    let chain = RpcClient::new_with_commitment(v.rpc_url(), CommitmentConfig::confirmed());
    // txpace between Agave's deployers, so neither meets the validator only fresh or only late.
    let mut contenders = vec![txpace_deploy(&v, &chain, &dir, &program, &bytes, "100")?];
    if !args.no_agave {
        contenders.push(agave_deploy(&v, &chain, &program, &bytes, Via::Tpu)?);
        contenders.push(agave_deploy(&v, &chain, &program, &bytes, Via::Next)?);
    }
    contenders.push(txpace_deploy(&v, &chain, &dir, &program, &bytes, "max")?);
    if !args.no_agave {
        contenders.push(agave_deploy(&v, &chain, &program, &bytes, Via::Rpc)?);
    }
    crate::markdown::emit(
        &[table::section(&contenders, bytes.len())],
        args.markdown.as_deref(),
    )?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&contenders)?)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn program_path(args: &Args) -> Result<PathBuf> {
    if let Some(p) = &args.program {
        return Ok(p.clone());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the bench package sits in the txpace checkout")?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let path = target.join("programs").join("spl_token_2022.so");
    if !path.exists() {
        let status = Command::new("bash")
            .arg(root.join("scripts/fetch-programs.sh"))
            .env("PROGRAMS_DIR", target.join("programs"))
            .status()
            .context("running scripts/fetch-programs.sh")?;
        if !status.success() || !path.exists() {
            bail!(
                "scripts/fetch-programs.sh did not produce {}",
                path.display()
            );
        }
    }
    Ok(path)
}

/// Whether the program at `program_id` is deployed with `bytes`: an executable account of the
/// upgradeable loader whose data account holds them after its header. Read from the chain,
/// whatever the deployer said.
fn on_chain(chain: &RpcClient, program_id: &str, bytes: &[u8]) -> Result<bool> {
    let id: Pubkey = program_id
        .parse()
        .with_context(|| format!("{program_id:?} is not a program id"))?;
    let Some(program) = chain
        .get_account_with_commitment(&id, CommitmentConfig::confirmed())?
        .value
    else {
        return Ok(false);
    };
    let data_address = solana_loader_v3_interface::get_program_data_address(&id);
    let Some(data) = chain
        .get_account_with_commitment(&data_address, CommitmentConfig::confirmed())?
        .value
    else {
        return Ok(false);
    };
    Ok(program.executable
        && program.owner == solana_sdk_ids::bpf_loader_upgradeable::id()
        && holds_program(&data.data, bytes))
}

/// Whether a program-data account's data holds `bytes` after its header (and nothing but
/// padding past them).
fn holds_program(data: &[u8], bytes: &[u8]) -> bool {
    let header =
        solana_loader_v3_interface::state::UpgradeableLoaderState::size_of_programdata_metadata();
    data.get(header..)
        .and_then(|d| d.get(..bytes.len()).map(|p| (p, &d[bytes.len()..])))
        .is_some_and(|(p, rest)| p == bytes && rest.iter().all(|&b| b == 0))
}

fn agave_deploy(
    v: &LocalValidator,
    chain: &RpcClient,
    program: &Path,
    bytes: &[u8],
    via: Via,
) -> Result<Contender> {
    let mut cmd = child::command(std::env::current_exe()?)?;
    cmd.args(["deploy", "--agave-child", &v.rpc_url(), "--ws", &v.ws_url()])
        .args(["--via", via.arg()])
        .arg("--keypair")
        .arg(v.mint_keypair_path())
        .arg("--program")
        .arg(program);
    eprintln!("{}…", via.name());
    let done = measure::run(&mut cmd)?;
    let out = agave::ChildOutput::parse(&done.stdout);
    let mut failure = measure::failure(done.status, &done.stderr, &[0]);
    if failure.is_none() && (out.writes.is_none() || out.landed.is_none()) {
        failure = Some(format!(
            "exit 0 without its writes / landed lines: {}",
            measure::stderr_tail(&done.stdout, 3)
        ));
    }
    let deployed = match &out.deployed {
        Some(id) => on_chain(chain, id, bytes)?,
        None => false,
    };
    let mut usage = done.usage;
    usage.wall_s -= out.metrics_wait_s;
    Ok(Contender {
        name: via.name(),
        agave: true,
        usage,
        writes_s: out.writes_s.unwrap_or(0.0),
        writes: out.writes.unwrap_or(0),
        landed_writes: out.landed.unwrap_or(0),
        sends: out.sends,
        deployed,
        failure,
    })
}

fn txpace_deploy(
    v: &LocalValidator,
    chain: &RpcClient,
    dir: &Path,
    program: &Path,
    bytes: &[u8],
    rate: &str,
) -> Result<Contender> {
    // A fresh name each time: a new program id and a new buffer.
    let so = dir.join(format!("program-{rate}.so"));
    std::fs::copy(program, &so)?;
    let report = dir.join(format!("deploy-{rate}.report.json"));
    let mut cmd = child::txpace()?;
    cmd.args([
        "deploy",
        "--no-tui",
        "--url",
        &v.rpc_url(),
        "--ws",
        &v.ws_url(),
    ])
    .arg(&so)
    .args(["--rate", rate])
    .arg("--keypair")
    .arg(v.mint_keypair_path())
    .arg("--report")
    .arg(&report);
    eprintln!("txpace deploy --rate {rate}…");
    let done = measure::run(&mut cmd)?;
    eprintln!("{}", done.stdout.trim_end());
    let text = std::fs::read_to_string(&report)
        .with_context(|| format!("no report from txpace deploy: {}", done.stderr))?;
    let r: Value = serde_json::from_str(&text)?;
    let writes = r["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "writes"))
        .map(|p| &p["report"]["summary"])
        .context("no writes phase in the report")?;
    let landed_writes = writes["confirmed"].as_u64().unwrap_or(0);
    let sends = Sends::txpace(writes);
    let deployed = match r["program_id"].as_str() {
        Some(id) => on_chain(chain, id, bytes)?,
        None => false,
    };
    Ok(Contender {
        name: if rate == "max" {
            "txpace deploy --rate max"
        } else {
            "txpace deploy --rate 100"
        },
        agave: false,
        usage: done.usage,
        writes_s: writes["elapsed_s"].as_f64().unwrap_or(0.0),
        writes: writes["total"].as_u64().unwrap_or(0),
        landed_writes,
        sends,
        deployed,
        failure: measure::failure(done.status, &done.stderr, &[0]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The program's bytes must follow the header exactly, with only zeroes (room to grow)
    /// past them: a short, different or truncated account is not the program.
    #[test]
    fn a_program_data_account_holds_the_program_byte_for_byte() {
        let header =
            solana_loader_v3_interface::state::UpgradeableLoaderState::size_of_programdata_metadata(
            );
        let program = [7u8, 1, 2, 3];
        let mut data = vec![9u8; header];
        data.extend_from_slice(&program);
        assert!(holds_program(&data, &program));
        data.extend_from_slice(&[0, 0]);
        assert!(holds_program(&data, &program), "zero padding past it");
        data.push(5);
        assert!(!holds_program(&data, &program), "bytes past it");
        assert!(!holds_program(&data[..header + 3], &program), "truncated");
        assert!(
            !holds_program(&data[..2], &program),
            "shorter than the header"
        );
        let mut other = data[..header + 4].to_vec();
        other[header] = 8;
        assert!(!holds_program(&other, &program), "a byte differs");
    }
}

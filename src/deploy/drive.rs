//! Running a planned deploy: each phase signed against a fresh blockhash and run as one batch of
//! a single engine host (which keeps the cluster's view, the leaders' backoffs and the
//! connections from one phase to the next), the dashboard relayed across them, the buffer
//! checked against the program and the final transaction simulated before it is sent.

use std::sync::Arc;

use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_loader_v3_interface::instruction as loader;
use solana_pubkey::Pubkey;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
use solana_signature::Signature;
use solana_signer::Signer;

use super::{
    DeployError,
    chunks::WriteSigners,
    compute::{self, ComputeBudget},
    fetch::read_slices,
    plan::{Action, Plan},
    readback::BufferCheck,
    relay::{Phase, Relay},
    txs::{Planned, TxSet},
};
use crate::engine::{
    Batch, EngineConfig, RunOutcome,
    lifecycle::TxState,
    net::{Chain, Transport},
    slots::spawn_slot_feed,
    snapshot::RunState,
    spawn_host,
};
use crate::{events::EventTap, signer::SharedSigner};

/// Everything a deploy needs once it is planned.
pub struct Deploy {
    pub program: Arc<[u8]>,
    pub plan: Plan,
    pub payer: SharedSigner,
    pub authority: SharedSigner,
    pub buffer: Arc<Keypair>,
    pub program_id: Pubkey,
    /// Needed for a new program only.
    pub program_keypair: Option<Arc<Keypair>>,
    pub max_sign_attempts: u32,
    /// Compute-unit price and limit every transaction carries.
    pub budget: ComputeBudget,
    /// `--final`: the last transaction also removes the upgrade authority.
    pub finalize: bool,
    /// Extend with `ExtendProgramChecked` (the cluster refuses the unchecked instruction).
    pub extend_checked: bool,
    /// Rent for the buffer and the program account, as planned.
    pub buffer_rent: u64,
    pub program_rent: u64,
}

/// Where the engine runs and how the chain is read between phases.
pub struct Cluster {
    /// Settings for the engine; the re-signer, events and watched accounts are each phase's.
    pub engine: EngineConfig,
    pub chain: Arc<dyn Chain>,
    pub transport: Arc<dyn Transport>,
    /// Websocket for the slot feed; `None` polls `getSlot`.
    pub ws_url: Option<String>,
    /// `--events`: each phase streams its events here, named by phase.
    pub events: Option<EventTap>,
    pub rpc: Arc<RpcClient>,
}

/// One phase's engine run, for the report.
pub struct PhaseRun {
    pub name: &'static str,
    /// The compute-unit limit its transactions carried, when they carried one.
    pub unit_limit: Option<u32>,
    pub outcome: RunOutcome,
}

/// What a deploy did, whether or not it finished.
pub struct Outcome {
    pub phases: Vec<PhaseRun>,
    /// The deploy, upgrade or buffer hand-over transaction, once it landed; `Ok(None)` for a
    /// `--buffer-only` run that ends with the writes.
    pub result: Result<Option<Signature>, DeployError>,
}

struct PhaseJob {
    name: &'static str,
    txs: TxSet,
    /// The final transaction: check the buffer and simulate before sending.
    last: bool,
}

pub async fn run(deploy: Deploy, cluster: Cluster, mut relay: Relay) -> Outcome {
    let mut phases = Vec::new();
    let result = run_phases(&deploy, &cluster, &mut relay, &mut phases).await;
    // The dashboard and the progress lines wait for a final state: always give them one.
    match &result {
        Ok(_) => {}
        Err(DeployError::Interrupted(_)) => relay.finish(RunState::Stopped),
        Err(e) => relay.finish(RunState::Failed(e.to_string())),
    }
    Outcome { phases, result }
}

async fn run_phases(
    d: &Deploy,
    c: &Cluster,
    relay: &mut Relay,
    done: &mut Vec<PhaseRun>,
) -> Result<Option<Signature>, DeployError> {
    let jobs = jobs(d)?;
    let ends_with_writes = !jobs.iter().any(|j| j.last);
    let steps = jobs.len() as u8;
    let total = d.program.len() as u64;
    let mut bytes_before = d.plan.bytes_present();
    let mut landed = None;
    // The loader refuses an upgrade in the slot the program was extended in, and simulates
    // against the bank of that slot until a later one is confirmed: the upgrade waits for it.
    let mut extended_in: Option<u64> = None;
    // Started before the first phase's checks, so it learns the cluster meanwhile; dropped
    // (and so ended) when the deploy returns.
    let feed = c.ws_url.clone().map(spawn_slot_feed);
    let host = spawn_host(c.engine.clone(), c.chain.clone(), c.transport.clone(), feed);
    for (k, mut job) in jobs.into_iter().enumerate() {
        let phase = Phase {
            name: job.name,
            step: k as u8 + 1,
            steps,
            bytes_before,
            bytes: job.txs.bytes().into(),
            bytes_total: total,
        };
        if relay.stopped() {
            return Err(DeployError::Interrupted(job.name));
        }
        if job.last {
            relay.announce(&phase);
            check_buffer(d, c).await?;
            if let Some(slot) = extended_in {
                confirmed_past(c, slot).await?;
            }
        }
        let unit_limit = budget_phase(&mut job, d.budget, c).await?;
        let (blockhash, _) = c
            .rpc
            .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
            .await
            .map_err(|e| DeployError::rpc("getLatestBlockhash", e))?;
        let loaded = job.txs.sign_all(blockhash)?;
        log::info!("{} phase: {} transactions", job.name, loaded.len());
        let handle = host.run(Batch {
            fee_accounts: crate::fees::most_written(&loaded),
            txs: loaded,
            resigner: Some(Arc::new(job.txs)),
            events: c.events.as_ref().map(|t| t.engine_channel(Some(job.name))),
        });
        let outcome = relay
            .run(&phase, handle, job.last)
            .await
            .map_err(DeployError::Engine)?;
        let verdict = verdict(job.name, &outcome);
        bytes_before += phase.bytes.iter().sum::<u64>();
        if job.last {
            landed = outcome.snapshot.txs.get(0).map(|v| v.signature);
        }
        if job.name == "extend" {
            extended_in = outcome.snapshot.txs.get(0).and_then(|v| v.landed_slot);
        }
        done.push(PhaseRun {
            name: job.name,
            unit_limit,
            outcome,
        });
        verdict?;
    }
    if ends_with_writes {
        // A --buffer-only run without a hand-over ends with its writes; the dashboard's DONE
        // waits for the buffer to be read back and found to hold exactly the program.
        check_buffer(d, c).await?;
        relay.finish(RunState::Done);
        return Ok(None);
    }
    landed.map(Some).ok_or(DeployError::Unsigned)
}

/// The phases `d`'s plan calls for, in order.
fn jobs(d: &Deploy) -> Result<Vec<PhaseJob>, DeployError> {
    let payer = d.payer.pubkey();
    let authority = d.authority.pubkey();
    let buffer = d.buffer.pubkey();
    let len = d.program.len();
    let mut jobs = Vec::new();
    if d.plan.create_buffer {
        let create = Planned {
            origin: format!("create buffer {buffer}"),
            instructions: loader::create_buffer(&payer, &buffer, &authority, d.buffer_rent, len)
                .map_err(|e| DeployError::Instruction(e.to_string()))?,
            signers: vec![d.buffer.clone()],
            bytes: 0,
        };
        jobs.push(PhaseJob {
            name: "buffer",
            txs: TxSet::new(d.payer.clone(), vec![create], d.max_sign_attempts),
            last: false,
        });
    }
    if !d.plan.writes.is_empty() {
        let w = WriteSigners {
            payer: d.payer.clone(),
            authority: d.authority.clone(),
            buffer,
        };
        let writes = w.plan(&d.program, d.plan.chunks, &d.plan.writes, &[]);
        jobs.push(PhaseJob {
            name: "writes",
            txs: TxSet::new(d.payer.clone(), writes, d.max_sign_attempts),
            last: false,
        });
    }
    let (name, last) = match d.plan.action {
        Action::BufferOnly { hand_to: None } => return Ok(jobs),
        Action::BufferOnly { hand_to: Some(new) } => (
            "hand-over",
            Planned {
                origin: format!("hand buffer {buffer} to {new}"),
                instructions: vec![loader::set_buffer_authority(&buffer, &authority, &new)],
                signers: vec![d.authority.clone()],
                bytes: 0,
            },
        ),
        Action::Deploy { max_len } => (
            "deploy",
            Planned {
                origin: format!("deploy {}", d.program_id),
                instructions: loader::deploy_with_max_program_len(
                    &payer,
                    &d.program_id,
                    &buffer,
                    &authority,
                    d.program_rent,
                    max_len,
                )
                .map_err(|e| DeployError::Instruction(e.to_string()))?,
                signers: d
                    .program_keypair
                    .iter()
                    .map(|k| k.clone() as SharedSigner)
                    .chain([d.authority.clone()])
                    .collect(),
                bytes: 0,
            },
        ),
        Action::Upgrade { extend, .. } => {
            if extend > 0 {
                jobs.push(extend_job(d, extend)?);
            }
            (
                "upgrade",
                Planned {
                    origin: format!("upgrade {}", d.program_id),
                    instructions: vec![loader::upgrade(&d.program_id, &buffer, &authority, &payer)],
                    signers: vec![d.authority.clone()],
                    bytes: 0,
                },
            )
        }
    };
    let mut last = last;
    if d.finalize {
        // In the same transaction: a program is never live with an authority the user meant
        // to give up.
        last.instructions.push(loader::set_upgrade_authority(
            &d.program_id,
            &authority,
            None,
        ));
        last.origin.push_str(", then immutable");
    }
    jobs.push(PhaseJob {
        name,
        txs: TxSet::new(d.payer.clone(), vec![last], d.max_sign_attempts),
        last: true,
    });
    Ok(jobs)
}

/// The phase that grows the program-data account by `extend` bytes before an upgrade, paid by
/// the payer and signed by the upgrade authority.
fn extend_job(d: &Deploy, extend: usize) -> Result<PhaseJob, DeployError> {
    let bytes = u32::try_from(extend)
        .map_err(|_| DeployError::Instruction(format!("extending a program by {extend} bytes")))?;
    let payer = d.payer.pubkey();
    let authority = d.authority.pubkey();
    let ix = if d.extend_checked {
        loader::extend_program_checked(&d.program_id, &authority, Some(&payer), bytes)
    } else {
        loader::extend_program(&d.program_id, Some(&payer), bytes)
    };
    let planned = Planned {
        origin: format!("extend {} by {extend} bytes", d.program_id),
        instructions: vec![ix],
        signers: vec![d.authority.clone()],
        bytes: 0,
    };
    Ok(PhaseJob {
        name: "extend",
        txs: TxSet::new(d.payer.clone(), vec![planned], d.max_sign_attempts),
        last: false,
    })
}

/// Waits (up to 30 s) until the cluster has confirmed a slot after `slot`.
async fn confirmed_past(c: &Cluster, slot: u64) -> Result<(), DeployError> {
    let started = tokio::time::Instant::now();
    loop {
        let now = c
            .rpc
            .get_slot_with_commitment(CommitmentConfig::confirmed())
            .await
            .map_err(|e| DeployError::rpc("getSlot", e))?;
        if now > slot {
            return Ok(());
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            return Err(DeployError::rpc(
                "getSlot",
                format!("no slot after {slot} confirmed in 30 s"),
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Whether a phase's run lets the deploy go on.
fn verdict(name: &'static str, outcome: &RunOutcome) -> Result<(), DeployError> {
    let s = &outcome.snapshot;
    if s.run == RunState::Stopped {
        return Err(DeployError::Interrupted(name));
    }
    let c = s.counts;
    if c.confirmed == c.total {
        return Ok(());
    }
    let mut detail = format!(
        "{} of {} transactions confirmed, {} failed, {} expired",
        c.confirmed, c.total, c.failed, c.expired
    );
    if let Some(v) = s.txs.iter().find(|v| v.state == TxState::Failed) {
        detail.push_str(&format!(
            "; {} ({}) failed: {}",
            v.origin,
            v.signature,
            v.last_error.as_deref().unwrap_or("unknown error")
        ));
    } else if let Some(v) = s.txs.iter().find(|v| v.state == TxState::Expired) {
        detail.push_str(&format!(
            "; {} expired after {} signings (raise --max-sign-attempts, or lower --rate on a busy cluster)",
            v.origin,
            v.resigns + 1
        ));
    }
    if let RunState::Failed(e) = &s.run {
        detail.push_str(&format!("; engine: {e}"));
    }
    Err(DeployError::PhaseFailed {
        phase: name,
        detail,
    })
}

/// Reads the buffer back and compares it with the program, a slice at a time: the deploy must
/// not make permanent anything but the file's bytes.
async fn check_buffer(d: &Deploy, c: &Cluster) -> Result<(), DeployError> {
    let buffer = d.buffer.pubkey();
    let mut check = BufferCheck::new(buffer, &d.program, d.plan.chunks);
    if !read_slices(&c.rpc, &buffer, |offset, slice| check.feed(offset, slice)).await? {
        return Err(DeployError::NotABuffer {
            address: buffer,
            what: "missing".into(),
        });
    }
    check.finish()
}

/// Gives the phase's transactions their compute budget, and returns the unit limit they carry.
/// A priced deploy without an explicit limit measures the phase's: its first transaction is
/// simulated with the most units a transaction may ask for (every transaction of a phase does
/// the same work on a like-sized account). The final transaction is always simulated first,
/// so a deploy that would fail shows the program logs and spends nothing.
async fn budget_phase(
    job: &mut PhaseJob,
    budget: ComputeBudget,
    c: &Cluster,
) -> Result<Option<u32>, DeployError> {
    let measured = if budget.measures_limits() {
        job.txs
            .set_budget(budget.instructions(Some(compute::MAX_UNIT_LIMIT)));
        let units = simulate(job, c).await?;
        let limit = compute::limit_for(units);
        log::info!(
            "{} phase: {units} compute units simulated, limit {limit} per transaction",
            job.name
        );
        Some(limit)
    } else {
        if job.last {
            job.txs.set_budget(budget.instructions(None));
            simulate(job, c).await?;
        }
        None
    };
    job.txs.set_budget(budget.instructions(measured));
    Ok(budget.limit.or(measured))
}

/// Simulates the phase's first transaction and returns the compute units it consumed; a failure
/// shows the program logs and spends nothing.
async fn simulate(job: &PhaseJob, c: &Cluster) -> Result<u64, DeployError> {
    let (blockhash, _) = c
        .rpc
        .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
        .await
        .map_err(|e| DeployError::rpc("getLatestBlockhash", e))?;
    let tx = job.txs.sign(0, blockhash)?;
    let config = RpcSimulateTransactionConfig {
        sig_verify: false,
        replace_recent_blockhash: true,
        commitment: Some(CommitmentConfig::confirmed()),
        ..Default::default()
    };
    let result = c
        .rpc
        .simulate_transaction_with_config(&tx, config)
        .await
        .map_err(|e| DeployError::rpc("simulateTransaction", e))?
        .value;
    match result.err {
        None => Ok(result.units_consumed.unwrap_or(0)),
        Some(err) => Err(DeployError::Simulation {
            what: job.name,
            err: err.to_string(),
            logs: result.logs.unwrap_or_default(),
        }),
    }
}

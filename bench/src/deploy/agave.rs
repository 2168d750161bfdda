//! Agave's deployers, each a measured child process (`txpace-bench deploy --agave-child URL
//! --via …`): the buffer created over RPC, the very write messages txpace sends (same chunking,
//! same instructions), then `DeployWithMaxDataLen` over RPC — the writes sent three ways:
//!
//! - [`Via::Tpu`], `solana program deploy` as the Solana CLI runs it: the writes through
//!   `send_and_confirm_transactions_in_parallel_v2` with a QUIC `TpuClient` (at most 5
//!   signings), one send every 10 ms — its own 100 tx/s (`SEND_INTERVAL` in `solana-client`
//!   4.0.0's `send_and_confirm_transactions_in_parallel.rs`);
//! - [`Via::Rpc`], `solana program deploy --use-rpc`: the same function with no TPU client, so
//!   each write is an RPC `sendTransaction` and the node's send-transaction service forwards
//!   and retries it;
//! - [`Via::Next`], a deployer built on Agave's best client, since Agave's own deploy path does
//!   not use it: the writes through `solana-tpu-client-next` driven as the send-transaction
//!   service drives it (`next_sends`), at the same 100 tx/s, every unconfirmed write resent
//!   every 2 s.
//!
//! The child prints `key value` lines ([`ChildOutput`]); the parent checks the deployed program
//! on chain itself.

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, bail};
use solana_client::{
    connection_cache::ConnectionCache,
    nonblocking::{rpc_client::RpcClient, tpu_client::TpuClient},
    rpc_config::RpcSendTransactionConfig,
    send_and_confirm_transactions_in_parallel::{
        SendAndConfirmConfigV2, send_and_confirm_transactions_in_parallel_v2,
    },
    tpu_client::TpuClientConfig,
};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, read_keypair_file};
use solana_loader_v3_interface::{instruction as loader, state::UpgradeableLoaderState};
use solana_message::Message;
use solana_signer::Signer;
use solana_transaction::Transaction;
use txpace::deploy::chunks::{Chunks, WriteSigners};

use crate::agave_metrics::MetricsSink;
use crate::measure::Sends;
use crate::next_sends::{self, Params};

/// Name of the TPU deployer's connection cache, and of the metrics points it reports.
const AGAVE_CACHE: &str = "txpace-bench-agave-deploy";

/// How an Agave deployer sends its writes (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    Tpu,
    Next,
    Rpc,
}

impl Via {
    /// How the benchmark's table names the deployer, its pace included.
    pub fn name(self) -> &'static str {
        match self {
            Via::Tpu => "Agave program deploy, TpuClient (its own 100 tx/s)",
            Via::Rpc => "Agave program deploy --use-rpc (its own 100 tx/s)",
            Via::Next => "Agave tpu-client-next deployer (100 tx/s, resent every 2 s)",
        }
    }

    /// The value of `--via` that selects it.
    pub fn arg(self) -> &'static str {
        match self {
            Via::Tpu => "tpu",
            Via::Next => "next",
            Via::Rpc => "rpc",
        }
    }
}

/// The `key value` lines an Agave deployer prints on standard output.
#[derive(Debug, Default, PartialEq)]
pub struct ChildOutput {
    pub writes: Option<u64>,
    /// Writes the client saw confirmed.
    pub landed: Option<u64>,
    /// From the first write sent to the last confirmed, in the child's clock.
    pub writes_s: Option<f64>,
    /// The program id, printed once `DeployWithMaxDataLen` was confirmed.
    pub deployed: Option<String>,
    /// The writes' sends in the benchmarks' unit: counted where tpu-client-next makes them
    /// (`sends`), or the TPU client's connection-cache packets (`sent_packets`, a lower bound).
    /// The RPC deployer's calls are not sends to leaders and are not printed.
    pub sends: Option<Sends>,
    /// Time spent after the deploy waiting for the connection cache's metrics, which the
    /// parent takes off the measured wall time.
    pub metrics_wait_s: f64,
}

impl ChildOutput {
    pub fn parse(stdout: &str) -> ChildOutput {
        let text = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::trim)
        };
        let number = |key: &str| text(key).and_then(|v| v.parse::<f64>().ok());
        let count = |key: &str| text(key).and_then(|v| v.parse::<u64>().ok());
        ChildOutput {
            writes: count("writes"),
            landed: count("landed"),
            writes_s: number("writes_s").filter(|s| s.is_finite()),
            deployed: text("deployed").map(String::from),
            sends: count("sends")
                .map(Sends::counted)
                .or_else(|| count("sent_packets").map(Sends::lower_bound)),
            metrics_wait_s: number("metrics_wait_s")
                .filter(|s| s.is_finite() && *s >= 0.0)
                .unwrap_or(0.0),
        }
    }
}

/// The child: deploys `program` with `keypair` paying and as the authority, its writes sent
/// `via`, and prints its [`ChildOutput`] lines.
pub fn child(url: &str, ws: &str, keypair: &Path, program: &Path, via: Via) -> Result<()> {
    let program =
        std::fs::read(program).with_context(|| format!("reading {}", program.display()))?;
    let payer = Arc::new(
        read_keypair_file(keypair).map_err(|e| anyhow!("reading {}: {e}", keypair.display()))?,
    );
    // Installed before any client exists, so the TPU deployer's cache reports to it.
    let sink = (via == Via::Tpu)
        .then(|| MetricsSink::install(AGAVE_CACHE))
        .transpose()?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rpc = Arc::new(RpcClient::new_with_commitment(
            url.to_string(),
            CommitmentConfig::confirmed(),
        ));
        let buffer = Keypair::new();
        let program_kp = Keypair::new();
        let len = program.len();
        let rent = rpc
            .get_minimum_balance_for_rent_exemption(UpgradeableLoaderState::size_of_buffer(len))
            .await?;
        let create = loader::create_buffer(
            &payer.pubkey(),
            &buffer.pubkey(),
            &payer.pubkey(),
            rent,
            len,
        )
        .map_err(|e| anyhow!("{e}"))?;
        send_rpc(&rpc, &create, &[&*payer, &buffer]).await?;

        let w = WriteSigners {
            payer: payer.clone(),
            authority: payer.clone(),
            buffer: buffer.pubkey(),
        };
        let chunks = Chunks {
            size: w.max_chunk(&[])?,
            len,
        };
        let which = chunks.differing(&program, &[]);
        let messages: Vec<Message> = w
            .plan(&program, chunks, &which, &[])
            .iter()
            .map(|p| Message::new(&p.instructions, Some(&payer.pubkey())))
            .collect();
        println!("writes {}", messages.len());
        let cache = match via {
            Via::Tpu => match ConnectionCache::new(AGAVE_CACHE) {
                ConnectionCache::Quic(c) => Some(c),
                ConnectionCache::Udp(_) => bail!("expected a QUIC connection cache"),
            },
            Via::Next | Via::Rpc => None,
        };
        let (landed, writes_s) = match via {
            Via::Next => {
                let params = Params {
                    url: url.to_string(),
                    ws: ws.to_string(),
                    rate: 100.0,
                };
                let out = next_sends::send_all(&params, &payer, messages).await?;
                println!("sends {}", out.sends);
                (out.book.confirmed, out.first_send.elapsed().as_secs_f64())
            }
            Via::Tpu | Via::Rpc => {
                let tpu = match &cache {
                    Some(cache) => Some(
                        TpuClient::new_with_connection_cache(
                            rpc.clone(),
                            ws,
                            TpuClientConfig::default(),
                            cache.clone(),
                        )
                        .await
                        .map_err(|e| anyhow!("TpuClient: {e}"))?,
                    ),
                    None => None,
                };
                let started = Instant::now();
                let errors = send_and_confirm_transactions_in_parallel_v2(
                    rpc.clone(),
                    tpu,
                    &messages,
                    &[&*payer],
                    SendAndConfirmConfigV2 {
                        with_spinner: false,
                        resign_txs_count: Some(5),
                        rpc_send_transaction_config: RpcSendTransactionConfig {
                            skip_preflight: true,
                            ..Default::default()
                        },
                    },
                )
                .await
                .map_err(|e| anyhow!("send_and_confirm_transactions_in_parallel_v2: {e}"))?;
                let landed = errors.iter().filter(|e| e.is_none()).count() as u64;
                (landed, started.elapsed().as_secs_f64())
            }
        };
        println!("landed {landed}");
        println!("writes_s {writes_s:.3}");

        let deploy = loader::deploy_with_max_program_len(
            &payer.pubkey(),
            &program_kp.pubkey(),
            &buffer.pubkey(),
            &payer.pubkey(),
            rpc.get_minimum_balance_for_rent_exemption(UpgradeableLoaderState::size_of_program())
                .await?,
            len,
        )
        .map_err(|e| anyhow!("{e}"))?;
        send_rpc(&rpc, &deploy, &[&*payer, &program_kp]).await?;
        println!("deployed {}", program_kp.pubkey());
        if let (Some(cache), Some(sink)) = (cache, &sink) {
            // The cache reports its counters at most every 2 s, when a connection is taken:
            // wait out the interval, take one, and flush the metrics agent. The parent takes
            // this wait off the measured time.
            let wait = Instant::now();
            tokio::time::sleep(Duration::from_millis(2_100)).await;
            let tpu_addr = rpc
                .get_cluster_nodes()
                .await?
                .into_iter()
                .find_map(|n| n.tpu_quic)
                .context("no TPU QUIC address")?;
            let _ = cache.get_nonblocking_connection(&tpu_addr);
            println!("sent_packets {}", sink.flush_and_count());
            println!("metrics_wait_s {:.3}", wait.elapsed().as_secs_f64());
        }
        Ok(())
    })
}

async fn send_rpc(
    rpc: &RpcClient,
    ixs: &[solana_instruction::Instruction],
    signers: &[&Keypair],
) -> Result<()> {
    let hash = rpc.get_latest_blockhash().await?;
    let tx = Transaction::new_signed_with_payer(ixs, Some(&signers[0].pubkey()), signers, hash);
    rpc.send_and_confirm_transaction(&tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_deployer_s_lines_are_parsed_by_their_keys() {
        let tpu = ChildOutput::parse(
            "writes 609\nlanded 609\nwrites_s 7.301\ndeployed Prog1111\nsent_packets 729\n\
             metrics_wait_s 2.104\n",
        );
        assert_eq!(
            tpu,
            ChildOutput {
                writes: Some(609),
                landed: Some(609),
                writes_s: Some(7.301),
                deployed: Some("Prog1111".into()),
                sends: Some(Sends::lower_bound(729)),
                metrics_wait_s: 2.104,
            }
        );
        let next = ChildOutput::parse("writes 609\nsends 1218\nlanded 609\nwrites_s 6.5\n");
        assert_eq!(next.sends, Some(Sends::counted(1218)));
        assert_eq!(next.deployed, None, "no deployed line: not deployed");
        assert_eq!(next.metrics_wait_s, 0.0);
        let rpc = ChildOutput::parse("writes 609\nlanded 609\nwrites_s 8.0\ndeployed P\n");
        assert_eq!(rpc.sends, None, "RPC calls are not sends to leaders");
    }

    /// A key is a whole word, a value a number; a wait that is not a time takes nothing off.
    #[test]
    fn malformed_lines_are_not_read_as_figures() {
        let out = ChildOutput::parse(
            "writes_extra 5\nlanded many\nwrites_s NaN\nmetrics_wait_s -3\nsends -1\n",
        );
        assert_eq!(out, ChildOutput::default());
    }

    /// The parent's `--via` values parse as the child's.
    #[test]
    fn every_deployer_is_selected_by_its_via() {
        use clap::ValueEnum;
        for via in [Via::Tpu, Via::Next, Via::Rpc] {
            assert_eq!(Via::from_str(via.arg(), false), Ok(via));
        }
    }
}

//! Agave's best client, `solana-tpu-client-next` 4.0.0, driven the way Agave's own
//! send-transaction service drives it (`solana-send-transaction-service` 4.0.0,
//! `transaction_client.rs` and `send_transaction_service.rs`), inside the `next-send` child:
//!
//! - the scheduler configured as the service's `TpuClientNextClient::create_config`: 1,024
//!   cached connections, transaction age unchecked, worker channels of 64 batches, 4 reconnect
//!   attempts, and a leader fan-out of the service's default `leader_forward_count` 2: sends to
//!   2 leaders, connections to 3; its batches queued on a channel of 128; one transaction a
//!   batch (the service's default `batch_size`);
//! - the leaders from tpu-client-next's own leader updater for a client outside a validator
//!   (`WebsocketNodeAddressService`: the RPC node's leader schedule and cluster nodes, the
//!   current slot from its websocket), looking 3 leaders ahead. The service in a validator
//!   reads the same schedule and addresses from its bank and gossip instead;
//! - the service's retry loop: every transaction not yet seen by the node is resent through
//!   the same scheduler every 2 s (`retry_rate_ms`), one seen but not yet confirmed is left
//!   alone, and one whose blockhash is past its last valid block height at the finalized block
//!   height is given up. The service reads statuses from its own bank; a client reads them from
//!   RPC (`getSignatureStatuses`), every 400 ms (one slot);
//! - new transactions paced at the benchmark's rate, each signed with the latest blockhash.
//!
//! Every send is counted where the client makes it, in the unit txpace's streams are counted
//! in: one per transaction per leader, when the scheduler hands a batch to that leader's
//! connection worker ([`CountingBroadcaster`], Agave's `NonblockingBroadcaster` with counters).
//! A batch a full or missing worker would not take was never sent and is counted as dropped.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, bail};
use solana_client::nonblocking::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_message::Message;
use solana_signature::Signature;
use solana_tpu_client_next::{
    ConnectionWorkersScheduler, ConnectionWorkersSchedulerError,
    connection_workers_scheduler::{
        BindTarget, ConnectionWorkersSchedulerConfig, Fanout, WorkersBroadcaster,
    },
    node_address_service::LeaderTpuCacheServiceConfig,
    transaction_batch::TransactionBatch,
    websocket_node_address_service::WebsocketNodeAddressService,
    workers_cache::{WorkersCache, WorkersCacheError, shutdown_worker},
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// The send-transaction service's settings (see the module's documentation).
pub const MAX_CONNECTIONS: usize = 1024;
pub const WORKER_CHANNEL_SIZE: usize = 64;
pub const MAX_RECONNECT_ATTEMPTS: usize = 4;
pub const LEADER_FORWARD_COUNT: usize = 2;
pub const SENDER_CHANNEL_SIZE: usize = 128;
pub const RETRY_RATE: Duration = Duration::from_secs(2);
/// How often the child asks RPC for statuses and the block height.
const STATUS_POLL: Duration = Duration::from_millis(400);
/// How long RPC may stay unreachable before the child gives up (a restart takes ~20 s).
const RPC_GIVE_UP: Duration = Duration::from_secs(120);

/// The scheduler's configuration, as the send-transaction service builds it.
pub fn config() -> ConnectionWorkersSchedulerConfig {
    ConnectionWorkersSchedulerConfig {
        bind: BindTarget::Address(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)),
        stake_identity: None,
        num_connections: MAX_CONNECTIONS,
        skip_check_transaction_age: true,
        worker_channel_size: WORKER_CHANNEL_SIZE,
        max_reconnect_attempts: MAX_RECONNECT_ATTEMPTS,
        leaders_fanout: Fanout {
            connect: LEADER_FORWARD_COUNT + 1,
            send: LEADER_FORWARD_COUNT,
        },
        override_initial_congestion_window: None,
    }
}

/// Transactions handed to a leader's worker, and those no worker took.
#[derive(Clone, Default)]
pub struct Counts {
    pub sends: Arc<AtomicU64>,
    pub dropped: Arc<AtomicU64>,
}

/// Agave's `NonblockingBroadcaster` (each batch offered to each send leader's worker without
/// waiting; a worker whose receiver is gone is removed), counting what it hands over.
pub struct CountingBroadcaster(pub Counts);

#[async_trait::async_trait]
impl WorkersBroadcaster for CountingBroadcaster {
    async fn send_to_workers(
        &self,
        workers: &mut WorkersCache,
        leaders: &[SocketAddr],
        batch: TransactionBatch,
    ) -> Result<(), ConnectionWorkersSchedulerError> {
        let n = batch.clone().into_iter().count() as u64;
        for leader in leaders {
            match workers.try_send_transactions_to_address(leader, batch.clone()) {
                Ok(()) => crate::first_send::note(self.0.sends.fetch_add(n, Ordering::Relaxed)),
                Err(err) => {
                    if err == WorkersCacheError::ReceiverDropped
                        && let Some(worker) = workers.pop(*leader)
                    {
                        shutdown_worker(worker);
                    }
                    self.0.dropped.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }
}

/// What the node says of a transaction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Seen {
    Unknown,
    Processed,
    Confirmed,
    Failed,
}

impl Seen {
    fn of(status: Option<&solana_transaction_status_client_types::TransactionStatus>) -> Seen {
        match status {
            None => Seen::Unknown,
            Some(s) if s.err.is_some() => Seen::Failed,
            Some(s) if s.satisfies_commitment(CommitmentConfig::confirmed()) => Seen::Confirmed,
            Some(_) => Seen::Processed,
        }
    }
}

struct InFlight {
    wire: Arc<[u8]>,
    last_valid_block_height: u64,
    last_sent: Instant,
}

/// The retry pool: every transaction sent and not yet confirmed, failed or expired.
#[derive(Default)]
pub struct Book {
    in_flight: HashMap<Signature, InFlight>,
    /// New transactions sent so far.
    pub sent_new: usize,
    pub confirmed: u64,
    pub expired: u64,
    pub failed: u64,
}

impl Book {
    pub fn add(&mut self, sig: Signature, wire: Arc<[u8]>, last_valid: u64, now: Instant) {
        self.sent_new += 1;
        self.in_flight.insert(
            sig,
            InFlight {
                wire,
                last_valid_block_height: last_valid,
                last_sent: now,
            },
        );
    }

    pub fn in_flight(&self) -> Vec<Signature> {
        self.in_flight.keys().copied().collect()
    }

    /// Files what the node said of some transactions at `block_height` (finalized), as the
    /// service's retry loop does, and returns those to resend now: unseen and last sent at
    /// least [`RETRY_RATE`] ago.
    pub fn file(
        &mut self,
        seen: &[(Signature, Seen)],
        block_height: u64,
        now: Instant,
    ) -> Vec<Arc<[u8]>> {
        let mut resend = Vec::new();
        for (sig, seen) in seen {
            let Some(tx) = self.in_flight.get_mut(sig) else {
                continue;
            };
            let expired = tx.last_valid_block_height < block_height;
            match seen {
                Seen::Confirmed => self.confirmed += 1,
                Seen::Failed => self.failed += 1,
                _ if expired => self.expired += 1,
                Seen::Processed => continue,
                Seen::Unknown => {
                    if now.saturating_duration_since(tx.last_sent) >= RETRY_RATE {
                        tx.last_sent = now;
                        resend.push(tx.wire.clone());
                    }
                    continue;
                }
            }
            self.in_flight.remove(sig);
        }
        resend
    }
}

/// Where the child sends and how fast.
pub struct Params {
    pub url: String,
    pub ws: String,
    pub rate: f64,
}

/// How the run ended, in the client's own view and counts.
pub struct Outcome {
    pub book: Book,
    pub sends: u64,
    pub dropped: u64,
    /// When the first new transaction went to the scheduler (the run's start, past the leader
    /// updater's).
    pub first_send: Instant,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Attempts, 100 ms apart, tpu-client-next's leader cache makes to read the cluster at its
/// start (and failures in a row it tolerates after).
const INIT_ATTEMPTS: usize = 50;

/// Sends `messages` signed by `payer` through tpu-client-next until each is confirmed, failed
/// or expired.
pub async fn send_all(params: &Params, payer: &Keypair, messages: Vec<Message>) -> Result<Outcome> {
    let rpc = Arc::new(RpcClient::new_with_commitment(
        params.url.clone(),
        CommitmentConfig::confirmed(),
    ));
    let cancel = CancellationToken::new();
    let leaders = WebsocketNodeAddressService::run(
        rpc.clone(),
        params.ws.clone(),
        LeaderTpuCacheServiceConfig {
            lookahead_leaders: (LEADER_FORWARD_COUNT + 1) as u8,
            // Its default, 10 attempts 100 ms apart, gave up now and then on a local cluster
            // whose RPC was slow to answer at the start ("Failed to initialize
            // LeaderTpuCacheService"), leaving a round without the strongest contender; 5 s
            // of attempts, charged to its wall time like any start-up.
            max_consecutive_failures: INIT_ATTEMPTS,
            ..LeaderTpuCacheServiceConfig::default()
        },
        cancel.clone(),
    )
    .await
    .map_err(|e| anyhow!("tpu-client-next's leader updater: {e}"))?;
    let (sender, receiver) = mpsc::channel(SENDER_CHANNEL_SIZE);
    let (_identity, identity) = watch::channel(None);
    let counts = Counts::default();
    let scheduler =
        ConnectionWorkersScheduler::new(Box::new(leaders), receiver, identity, cancel.clone());
    let broadcaster = Box::new(CountingBroadcaster(counts.clone()));
    let scheduler = tokio::spawn(scheduler.run_with_broadcaster(config(), broadcaster));

    let blockhash = Arc::new(Mutex::new(
        rpc.get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
            .await
            .context("the latest blockhash")?,
    ));
    let book = Arc::new(Mutex::new(Book::default()));
    let total = messages.len();
    let retry = tokio::spawn(retry_loop(
        rpc.clone(),
        book.clone(),
        blockhash.clone(),
        sender.clone(),
        total,
    ));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / params.rate.max(0.001)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut first_send = None;
    for message in messages {
        tick.tick().await;
        first_send.get_or_insert_with(Instant::now);
        let (hash, last_valid): (Hash, u64) = *lock(&blockhash);
        let tx = solana_transaction::Transaction::new(&[payer], message, hash);
        let sig = tx.signatures[0];
        let wire: Arc<[u8]> = txpace::workload::wire_bytes(&tx.into())?.into();
        lock(&book).add(sig, wire.clone(), last_valid, Instant::now());
        sender
            .send(TransactionBatch::new(vec![wire]))
            .await
            .map_err(|_| anyhow!("tpu-client-next's scheduler stopped"))?;
    }
    drop(sender);
    retry.await.context("the retry loop")??;
    // Every transaction is settled: stop the scheduler (its workers and leader updater),
    // waiting at most 2 s, since the leader updater's websocket task ends only when the node
    // sends its next slot update.
    cancel.cancel();
    match tokio::time::timeout(Duration::from_secs(2), scheduler).await {
        Ok(Ok(Err(e))) => bail!("tpu-client-next's scheduler: {e}"),
        Ok(Err(e)) => bail!("tpu-client-next's scheduler task: {e}"),
        Ok(Ok(Ok(_))) | Err(_) => {}
    }
    let book = std::mem::take(&mut *lock(&book));
    Ok(Outcome {
        book,
        sends: counts.sends.load(Ordering::Relaxed),
        dropped: counts.dropped.load(Ordering::Relaxed),
        first_send: first_send.unwrap_or_else(Instant::now),
    })
}

/// The service's retry loop, reading statuses from RPC; ends when all `total` transactions
/// were sent and each is settled.
async fn retry_loop(
    rpc: Arc<RpcClient>,
    book: Arc<Mutex<Book>>,
    blockhash: Arc<Mutex<(Hash, u64)>>,
    sender: mpsc::Sender<TransactionBatch>,
    total: usize,
) -> Result<()> {
    let mut poll = tokio::time::interval(STATUS_POLL);
    // After a slow answer (a frozen node), the next poll waits its full period again.
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut answered = Instant::now();
    let mut hash_read = Instant::now();
    loop {
        poll.tick().await;
        let (sigs, all_sent) = {
            let b = lock(&book);
            (b.in_flight(), b.sent_new == total)
        };
        if all_sent && sigs.is_empty() {
            return Ok(());
        }
        match statuses(&rpc, &sigs).await {
            Ok((seen, height)) => {
                answered = Instant::now();
                let resend = lock(&book).file(&seen, height, Instant::now());
                for wire in resend {
                    sender
                        .send(TransactionBatch::new(vec![wire]))
                        .await
                        .map_err(|_| anyhow!("tpu-client-next's scheduler stopped"))?;
                }
            }
            Err(e) if answered.elapsed() > RPC_GIVE_UP => {
                bail!("RPC unanswered for {RPC_GIVE_UP:?}: {e}")
            }
            Err(_) => continue,
        }
        if hash_read.elapsed() >= RETRY_RATE
            && let Ok(h) = rpc
                .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
                .await
        {
            *lock(&blockhash) = h;
            hash_read = Instant::now();
        }
    }
}

/// What the node says of `sigs`, and its finalized block height.
async fn statuses(rpc: &RpcClient, sigs: &[Signature]) -> Result<(Vec<(Signature, Seen)>, u64)> {
    let mut seen = Vec::with_capacity(sigs.len());
    for chunk in sigs.chunks(256) {
        let statuses = rpc.get_signature_statuses(chunk).await?.value;
        seen.extend(
            chunk
                .iter()
                .copied()
                .zip(statuses.iter().map(|s| Seen::of(s.as_ref()))),
        );
    }
    let height = rpc
        .get_block_height_with_commitment(CommitmentConfig::finalized())
        .await?;
    Ok((seen, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(n: u8) -> Signature {
        Signature::from([n; 64])
    }

    /// The service's settings, as `TpuClientNextClient::create_config` sets them with its
    /// default `leader_forward_count` of 2.
    #[test]
    fn the_scheduler_is_configured_as_the_send_transaction_service() {
        let c = config();
        assert_eq!(c.worker_channel_size, 64);
        assert_eq!(c.max_reconnect_attempts, 4);
        assert_eq!((c.leaders_fanout.send, c.leaders_fanout.connect), (2, 3));
        assert_eq!(c.num_connections, 1024);
        assert!(c.skip_check_transaction_age);
        assert!(c.stake_identity.is_none());
        assert_eq!(RETRY_RATE, Duration::from_secs(2));
    }

    /// Confirmed, failed and expired transactions leave the pool; an unseen one is resent once
    /// 2 s have passed since its last send, and not before; a processed one waits.
    #[test]
    fn the_retry_pool_resends_the_unseen_every_2_s_until_settled() {
        let t0 = Instant::now();
        let mut book = Book::default();
        for n in 1..=5 {
            book.add(sig(n), Arc::from(vec![n]), 100, t0);
        }
        let seen = [
            (sig(1), Seen::Confirmed),
            (sig(2), Seen::Failed),
            (sig(3), Seen::Processed),
            (sig(4), Seen::Unknown),
            (sig(5), Seen::Unknown),
        ];
        assert!(
            book.file(&seen, 90, t0 + Duration::from_millis(1_999))
                .is_empty()
        );
        assert_eq!((book.confirmed, book.failed), (1, 1));
        let resent = book.file(&seen, 90, t0 + RETRY_RATE);
        assert_eq!(resent.len(), 2);
        // Resent just now: not again until another 2 s.
        assert!(book.file(&seen, 90, t0 + RETRY_RATE).is_empty());
        // Past its last valid block height, an unseen or processed one is given up.
        book.file(&seen, 101, t0 + RETRY_RATE * 2);
        assert_eq!(book.expired, 3);
        assert!(book.in_flight().is_empty());
        assert_eq!(book.sent_new, 5);
    }

    /// A batch handed to a leader's worker counts one send per transaction per leader; one no
    /// worker takes (none for that leader, or its channel full) is dropped, not sent.
    #[test]
    fn the_broadcaster_counts_what_each_worker_takes() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let cancel = CancellationToken::new();
            let mut workers = WorkersCache::new(8, cancel.clone());
            let a: SocketAddr = "127.0.0.1:8009".parse().expect("an address");
            let b: SocketAddr = "127.0.0.1:8010".parse().expect("an address");
            let (tx, _rx) = mpsc::channel(1);
            let handle = tokio::spawn(async {});
            workers.push(a, workers_cache_worker(tx, handle, cancel.child_token()));
            let counts = Counts::default();
            let broadcaster = CountingBroadcaster(counts.clone());
            let batch = || TransactionBatch::new(vec![vec![1u8], vec![2u8]]);
            broadcaster
                .send_to_workers(&mut workers, &[a, b], batch())
                .await
                .expect("no error");
            assert_eq!(counts.sends.load(Ordering::Relaxed), 2);
            assert_eq!(counts.dropped.load(Ordering::Relaxed), 2);
            // a's channel (1 batch) is full now.
            broadcaster
                .send_to_workers(&mut workers, &[a], batch())
                .await
                .expect("no error");
            assert_eq!(counts.sends.load(Ordering::Relaxed), 2);
            assert_eq!(counts.dropped.load(Ordering::Relaxed), 4);
        });
    }

    fn workers_cache_worker(
        tx: mpsc::Sender<TransactionBatch>,
        handle: tokio::task::JoinHandle<()>,
        cancel: CancellationToken,
    ) -> solana_tpu_client_next::workers_cache::WorkerInfo {
        solana_tpu_client_next::workers_cache::WorkerInfo::new(tx, handle, cancel)
    }
}

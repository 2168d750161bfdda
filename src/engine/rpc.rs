//! [`Chain`] over a real RPC node, with Agave's nonblocking RPC client.
//!
//! Client errors can quote the request URL, which may carry an API key, so every message is
//! scrubbed (by [`crate::redact::Scrubber`]) before it leaves this module.

use std::{collections::HashMap, net::SocketAddr, str::FromStr, sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use solana_commitment_config::CommitmentConfig;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_signature::Signature;
use solana_transaction_status_client_types::TransactionConfirmationStatus;

use super::net::{Chain, ChainError, ChainStatus};
use crate::{config::Commitment, redact::Scrubber};

/// The TPU QUIC port is the UDP TPU port + 6 on nodes that do not advertise `tpuQuic`.
const QUIC_PORT_OFFSET: u16 = 6;
const RPC_TIMEOUT: Duration = Duration::from_secs(5);

pub struct RpcChain {
    client: Arc<RpcClient>,
    scrub: Arc<Scrubber>,
}

/// Turns a client error into a [`ChainError`] whose text names no secret of the endpoint.
trait ScrubbedErr {
    fn err(&self, call: &'static str, e: impl std::fmt::Display) -> ChainError;
}

impl ScrubbedErr for Scrubber {
    fn err(&self, call: &'static str, e: impl std::fmt::Display) -> ChainError {
        ChainError::new(call, self.text(e))
    }
}

impl RpcChain {
    pub fn new(url: &str) -> Self {
        Self {
            client: Arc::new(RpcClient::new_with_timeout_and_commitment(
                url.to_string(),
                RPC_TIMEOUT,
                CommitmentConfig::processed(),
            )),
            scrub: Arc::new(Scrubber::new(url)),
        }
    }

    /// Runs one RPC call off the engine's task, with scrubbed errors.
    fn call<T, F, Fut>(&self, f: F) -> BoxFuture<'static, Result<T, ChainError>>
    where
        F: FnOnce(Arc<RpcClient>, Arc<Scrubber>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ChainError>> + Send + 'static,
    {
        f(self.client.clone(), self.scrub.clone()).boxed()
    }
}

fn commitment_of(status: &solana_transaction_status_client_types::TransactionStatus) -> Commitment {
    match &status.confirmation_status {
        Some(TransactionConfirmationStatus::Finalized) => Commitment::Finalized,
        Some(TransactionConfirmationStatus::Confirmed) => Commitment::Confirmed,
        Some(TransactionConfirmationStatus::Processed) => Commitment::Processed,
        // Nodes that predate confirmationStatus: no confirmations count means rooted.
        None if status.confirmations.is_none() => Commitment::Finalized,
        None => Commitment::Processed,
    }
}

impl Chain for RpcChain {
    fn slot(&self) -> BoxFuture<'static, Result<u64, ChainError>> {
        self.call(move |c, s| async move {
            c.get_slot_with_commitment(CommitmentConfig::processed())
                .await
                .map_err(|e| s.err("getSlot", e))
        })
    }

    fn block_height(&self, commitment: Commitment) -> BoxFuture<'static, Result<u64, ChainError>> {
        let commitment = CommitmentConfig {
            commitment: commitment.level(),
        };
        self.call(move |c, s| async move {
            c.get_block_height_with_commitment(commitment)
                .await
                .map_err(|e| s.err("getBlockHeight", e))
        })
    }

    fn slot_leaders(
        &self,
        start: u64,
        limit: u64,
    ) -> BoxFuture<'static, Result<Vec<Pubkey>, ChainError>> {
        self.call(move |c, s| async move {
            c.get_slot_leaders(start, limit)
                .await
                .map_err(|e| s.err("getSlotLeaders", e))
        })
    }

    fn tpu_quic_addresses(
        &self,
    ) -> BoxFuture<'static, Result<HashMap<Pubkey, SocketAddr>, ChainError>> {
        self.call(move |c, s| async move {
            let nodes = c
                .get_cluster_nodes()
                .await
                .map_err(|e| s.err("getClusterNodes", e))?;
            Ok(nodes
                .into_iter()
                .filter_map(|n| {
                    let key = Pubkey::from_str(&n.pubkey).ok()?;
                    let addr = n.tpu_quic.or_else(|| {
                        n.tpu.and_then(|mut a| {
                            a.set_port(a.port().checked_add(QUIC_PORT_OFFSET)?);
                            Some(a)
                        })
                    })?;
                    Some((key, addr))
                })
                .collect())
        })
    }

    fn signature_statuses(
        &self,
        signatures: Vec<Signature>,
        history: bool,
    ) -> BoxFuture<'static, Result<Vec<Option<ChainStatus>>, ChainError>> {
        self.call(move |c, s| async move {
            let resp = if history {
                c.get_signature_statuses_with_history(&signatures).await
            } else {
                c.get_signature_statuses(&signatures).await
            }
            .map_err(|e| s.err("getSignatureStatuses", e))?;
            Ok(resp
                .value
                .into_iter()
                .map(|st| {
                    st.map(|st| ChainStatus {
                        slot: st.slot,
                        commitment: commitment_of(&st),
                        err: st.err.as_ref().map(|e| e.to_string()),
                    })
                })
                .collect())
        })
    }

    fn blockhash_valid(
        &self,
        hash: Hash,
        commitment: Commitment,
    ) -> BoxFuture<'static, Result<bool, ChainError>> {
        let commitment = CommitmentConfig {
            commitment: commitment.level(),
        };
        self.call(move |c, s| async move {
            c.is_blockhash_valid(&hash, commitment)
                .await
                .map_err(|e| s.err("isBlockhashValid", e))
        })
    }

    fn latest_blockhash(&self) -> BoxFuture<'static, Result<(Hash, u64), ChainError>> {
        self.call(move |c, s| async move {
            c.get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
                .await
                .map_err(|e| s.err("getLatestBlockhash", e))
        })
    }

    fn is_staked(&self, identity: Pubkey) -> BoxFuture<'static, Result<bool, ChainError>> {
        self.call(move |c, s| async move {
            let accounts = c
                .get_vote_accounts()
                .await
                .map_err(|e| s.err("getVoteAccounts", e))?;
            let id = identity.to_string();
            Ok(accounts
                .current
                .iter()
                .chain(accounts.delinquent.iter())
                .any(|a| a.node_pubkey == id && a.activated_stake > 0))
        })
    }

    fn recent_fees(
        &self,
        accounts: Vec<Pubkey>,
    ) -> BoxFuture<'static, Result<Vec<u64>, ChainError>> {
        self.call(move |c, s| async move {
            Ok(c.get_recent_prioritization_fees(&accounts)
                .await
                .map_err(|e| s.err("getRecentPrioritizationFees", e))?
                .iter()
                .map(|f| f.prioritization_fee)
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_errors_never_quote_the_secret_url() {
        let s = Scrubber::new("https://u:p@rpc.example.com/PathKey123/?api-key=SECRET");
        let e = s.err(
            "getSlot",
            "error sending request for url (https://rpc.example.com/PathKey123/?api-key=SECRET)",
        );
        assert_eq!(
            e.to_string(),
            "getSlot: error sending request for url (https://***@rpc.example.com/***?***)"
        );
    }
}

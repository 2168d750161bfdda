//! The simulated cluster as the engine's [`Chain`]: its RPC calls answered from the scripted
//! state, with the scripted latency and outages.

use super::*;

impl Chain for SimCluster {
    fn slot(&self) -> BoxFuture<'static, Result<u64, ChainError>> {
        self.rpc("getSlot", |c| c.slot_now())
    }

    fn block_height(&self, commitment: Commitment) -> BoxFuture<'static, Result<u64, ChainError>> {
        self.rpc("getBlockHeight", move |c| c.height_at(commitment))
    }

    fn slot_leaders(
        &self,
        start: u64,
        limit: u64,
    ) -> BoxFuture<'static, Result<Vec<Pubkey>, ChainError>> {
        // Like any call, a refusal comes after the latency, and not at all while the RPC is down.
        self.rpc("getSlotLeaders", move |c| {
            if let Some(e) = c.lock().epoch_slots {
                // Known: the current epoch and the next.
                let unknown_epoch = c.slot_now() / e + 2;
                if start + limit > unknown_epoch * e {
                    return Err(ChainError::new(
                        "getSlotLeaders",
                        format!(
                            "RPC response error -32602: Invalid slot range: leader schedule \
                             for epoch {unknown_epoch} is unavailable"
                        ),
                    ));
                }
            }
            Ok((start..start + limit).map(|s| c.leader_at(s)).collect())
        })
        .map(Result::flatten)
        .boxed()
    }

    fn tpu_quic_addresses(
        &self,
    ) -> BoxFuture<'static, Result<HashMap<Pubkey, SocketAddr>, ChainError>> {
        self.rpc("getClusterNodes", |c| {
            c.leaders
                .iter()
                .filter_map(|l| Some((*l, c.addr_of(l)?)))
                .collect()
        })
    }

    fn signature_statuses(
        &self,
        signatures: Vec<Signature>,
        history: bool,
    ) -> BoxFuture<'static, Result<Vec<Option<ChainStatus>>, ChainError>> {
        self.rpc("getSignatureStatuses", move |c| {
            let slot = c.slot_now();
            signatures
                .iter()
                .map(|s| c.status_of(s, slot, history))
                .collect()
        })
    }

    /// A registered blockhash was produced at `last_valid - 150` and is valid in banks from
    /// that height through `last_valid`; unregistered ones are always valid.
    fn blockhash_valid(
        &self,
        hash: Hash,
        commitment: Commitment,
    ) -> BoxFuture<'static, Result<bool, ChainError>> {
        self.rpc("isBlockhashValid", move |c| {
            let (lv, replaying) = {
                let s = c.lock();
                (s.blockhashes.get(&hash).copied(), s.replaying)
            };
            if replaying && commitment != Commitment::Finalized {
                return false;
            }
            let h = c.height_at(commitment);
            lv.is_none_or(|lv| {
                lv.saturating_sub(crate::engine::expiry::BLOCKHASH_VALID_BLOCKS) <= h && h <= lv
            })
        })
    }

    fn latest_blockhash(&self) -> BoxFuture<'static, Result<(Hash, u64), ChainError>> {
        self.rpc("getLatestBlockhash", |c| {
            let latest = c.lock().latest;
            latest.unwrap_or((Hash::new_from_array([7; 32]), c.height_now() + 150))
        })
    }

    fn is_staked(&self, _identity: Pubkey) -> BoxFuture<'static, Result<bool, ChainError>> {
        self.rpc("getVoteAccounts", |c| c.lock().staked)
    }

    fn recent_fees(
        &self,
        _accounts: Vec<Pubkey>,
    ) -> BoxFuture<'static, Result<Vec<u64>, ChainError>> {
        self.rpc("getRecentPrioritizationFees", |c| {
            c.lock().recent_fees.clone()
        })
    }
}

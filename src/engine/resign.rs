//! Signing an expired transaction again against the cluster's latest blockhash, for runs where
//! txpace holds the signers (deploys): the transaction goes round once more instead of expiring.

use std::sync::Arc;

use solana_hash::Hash;
use solana_signature::Signature;
use tokio::time::Instant;

use super::{config::Resigner, fact::TxFact, lifecycle::TxEvent, store::TxStore};

/// The resigner, when there is one, and the blockhash it would sign against.
pub(super) struct Resigning {
    resigner: Option<Arc<dyn Resigner>>,
    /// The cluster's latest blockhash and its last valid height.
    latest: Option<(Hash, u64)>,
}

/// A transaction signed again: it moved from blockhash `old` to `hash`.
pub(super) struct Resigned {
    pub old: Hash,
    pub hash: Hash,
    pub last_valid: u64,
    /// For the journal: its new signature.
    pub fact: TxFact,
    /// The signature it had: the journal's identity for it if this is the first fact it
    /// keeps of the transaction.
    pub previous: Signature,
}

impl Resigning {
    pub(super) fn new(resigner: Option<Arc<dyn Resigner>>) -> Self {
        Self {
            resigner,
            latest: None,
        }
    }

    pub(super) fn on_latest(&mut self, hash: Hash, last_valid: u64) {
        self.latest = Some((hash, last_valid));
    }

    /// Signs `id` again against the latest blockhash, when a resigner is configured and agrees,
    /// and records the new signing in `store`; `None` leaves the transaction as it was.
    pub(super) fn resign(&self, id: u32, store: &mut TxStore, now: Instant) -> Option<Resigned> {
        let (Some(resigner), Some((hash, last_valid))) = (&self.resigner, self.latest) else {
            return None;
        };
        let old = store.record(id)?.blockhash;
        if old == hash {
            return None;
        }
        let (previous, resigns) = store.view(id).map(|v| (v.signature, v.resigns))?;
        let attempt = resigns + 1;
        let (signature, wire) = resigner.resign(id, attempt, hash)?;
        let note = Some(format!(
            "re-signed (attempt {attempt}) with blockhash {hash}"
        ));
        store.apply(id, TxEvent::Resigned, now, note).ok()?;
        store.replace_signing(id, signature, wire, hash, now);
        store.set_last_valid_block_height(id, last_valid, true);
        Some(Resigned {
            old,
            hash,
            last_valid,
            fact: TxFact::Resigned {
                id,
                signature,
                attempt,
            },
            previous,
        })
    }
}

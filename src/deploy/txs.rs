//! The deploy's transactions as instructions plus the keypairs that sign them, so each can be
//! signed — and signed again when its blockhash runs out — against any blockhash.
//!
//! txpace holds the signers during a deploy, which is what makes re-signing possible at all:
//! files of pre-signed transactions expire for good, a deploy's writes need not.

use std::sync::Arc;

use solana_hash::Hash;
use solana_instruction::Instruction;
use solana_message::{Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

use super::DeployError;
use crate::{engine::Resigner, signer::SharedSigner, source::LoadedTx};

/// One transaction to be: what it does, who signs it, and how many program bytes it carries.
pub struct Planned {
    /// Shown in the dashboard's detail view and the report, e.g. `write 17 @ 17204`.
    pub origin: String,
    pub instructions: Vec<Instruction>,
    /// Every signer whose signature the instructions need besides the payer's.
    pub signers: Vec<SharedSigner>,
    /// Program bytes written by it, for the bytes-written figure.
    pub bytes: u64,
}

/// The transactions of one phase, signable on demand.
pub struct TxSet {
    payer: SharedSigner,
    txs: Vec<Planned>,
    /// Compute-budget instructions put in front of every transaction's own.
    budget: Vec<Instruction>,
    /// Signings allowed per transaction, the first one included.
    max_sign_attempts: u32,
}

impl TxSet {
    pub fn new(payer: SharedSigner, txs: Vec<Planned>, max_sign_attempts: u32) -> Self {
        Self {
            payer,
            txs,
            budget: Vec::new(),
            max_sign_attempts,
        }
    }

    /// Sets the compute-budget instructions every transaction of the set carries from now on.
    pub fn set_budget(&mut self, budget: Vec<Instruction>) {
        self.budget = budget;
    }

    pub fn len(&self) -> usize {
        self.txs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.txs.is_empty()
    }

    /// Program bytes each transaction carries, by id.
    pub fn bytes(&self) -> Vec<u64> {
        self.txs.iter().map(|t| t.bytes).collect()
    }

    /// Transaction `id` signed against `blockhash`.
    pub fn sign(&self, id: usize, blockhash: Hash) -> Result<VersionedTransaction, DeployError> {
        let planned = self.txs.get(id).ok_or(DeployError::NoSuchTransaction(id))?;
        sign_with_budget(self.payer.as_ref(), &self.budget, planned, blockhash)
    }

    /// Every transaction signed against `blockhash`, as the engine takes them.
    pub fn sign_all(&self, blockhash: Hash) -> Result<Vec<LoadedTx>, DeployError> {
        (0..self.txs.len())
            .map(|id| {
                let tx = self.sign(id, blockhash)?;
                loaded(&self.txs[id].origin, &tx, blockhash)
            })
            .collect()
    }
}

impl Resigner for TxSet {
    /// Signs again while the transaction has signings left (`attempt` counts re-signings from 1,
    /// the first signing being the one before any).
    fn resign(&self, id: u32, attempt: u32, blockhash: Hash) -> Option<(Signature, Arc<[u8]>)> {
        if attempt >= self.max_sign_attempts {
            log::warn!(
                "transaction {id} expired after {} signings (--max-sign-attempts {}): giving up on it",
                attempt,
                self.max_sign_attempts
            );
            return None;
        }
        let result = self.sign(id as usize, blockhash).and_then(|tx| {
            let wire = wire(&tx)?;
            Ok((*tx.signatures.first().ok_or(DeployError::Unsigned)?, wire))
        });
        match result {
            Ok(signed) => {
                log::info!(
                    "re-signed transaction {id} with blockhash {blockhash} (signing {} of at most {})",
                    attempt + 1,
                    self.max_sign_attempts
                );
                Some(signed)
            }
            Err(e) => {
                log::warn!("re-signing transaction {id}: {e}");
                None
            }
        }
    }
}

/// Signs `planned` with the payer first and every other signer once.
pub fn sign(
    payer: &dyn Signer,
    planned: &Planned,
    blockhash: Hash,
) -> Result<VersionedTransaction, DeployError> {
    sign_with_budget(payer, &[], planned, blockhash)
}

/// Signs `planned` with `budget`'s compute-budget instructions in front of its own.
pub fn sign_with_budget(
    payer: &dyn Signer,
    budget: &[Instruction],
    planned: &Planned,
    blockhash: Hash,
) -> Result<VersionedTransaction, DeployError> {
    let payer_key = payer.pubkey();
    let mut signers: Vec<&dyn Signer> = vec![payer];
    for signer in &planned.signers {
        if !signers.iter().any(|s| s.pubkey() == signer.pubkey()) {
            signers.push(signer.as_ref());
        }
    }
    let instructions: Vec<Instruction> = budget
        .iter()
        .chain(&planned.instructions)
        .cloned()
        .collect();
    let message = Message::new_with_blockhash(&instructions, Some(&payer_key), &blockhash);
    VersionedTransaction::try_new(VersionedMessage::Legacy(message), &signers).map_err(|e| {
        DeployError::Sign {
            what: planned.origin.clone(),
            reason: e.to_string(),
        }
    })
}

/// The exact bytes that go on the wire.
pub fn wire(tx: &VersionedTransaction) -> Result<Arc<[u8]>, DeployError> {
    bincode::serialize(tx)
        .map(Arc::from)
        .map_err(|e| DeployError::Serialize(e.to_string()))
}

fn loaded(
    origin: &str,
    tx: &VersionedTransaction,
    blockhash: Hash,
) -> Result<LoadedTx, DeployError> {
    Ok(LoadedTx {
        origin: origin.into(),
        signature: *tx.signatures.first().ok_or(DeployError::Unsigned)?,
        wire: wire(tx)?,
        recent_blockhash: blockhash,
        durable_nonce: false,
        budget: crate::source::compute_budget(tx),
    })
}

/// The first signature's key: who pays.
pub fn fee_payer(tx: &VersionedTransaction) -> Option<Pubkey> {
    tx.message.static_account_keys().first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_keypair::Keypair;
    use solana_system_interface::instruction::transfer;

    fn set(max: u32) -> (TxSet, Pubkey) {
        let payer: SharedSigner = Arc::new(Keypair::new());
        let other: SharedSigner = Arc::new(Keypair::new());
        let me = payer.pubkey();
        // A transfer from `other` needs its signature as well as the payer's.
        let planned = Planned {
            origin: "t".into(),
            instructions: vec![transfer(&other.pubkey(), &me, 1)],
            signers: vec![other.clone(), payer.clone()],
            bytes: 7,
        };
        (TxSet::new(payer, vec![planned], max), me)
    }

    #[test]
    fn signs_with_the_payer_first_and_each_signer_once() {
        let (set, payer) = set(5);
        let tx = set.sign(0, Hash::new_from_array([1; 32])).unwrap();
        assert_eq!(tx.signatures.len(), 2);
        assert_eq!(fee_payer(&tx), Some(payer));
        assert!(tx.verify_with_results().iter().all(|ok| *ok));
        let loaded = set.sign_all(Hash::new_from_array([1; 32])).unwrap();
        assert_eq!(loaded[0].signature, tx.signatures[0]);
        assert_eq!(set.bytes(), vec![7]);
    }

    #[test]
    fn resigns_against_the_new_blockhash_until_attempts_run_out() {
        let (set, _) = set(3);
        let first = set.sign(0, Hash::new_from_array([1; 32])).unwrap();
        let fresh = Hash::new_from_array([2; 32]);
        let (sig, wire) = set.resign(0, 1, fresh).unwrap();
        assert_ne!(sig, first.signatures[0]);
        let tx: VersionedTransaction = bincode::deserialize(&wire).unwrap();
        assert_eq!(*tx.message.recent_blockhash(), fresh);
        assert_eq!(tx.signatures[0], sig);
        assert!(set.resign(0, 2, fresh).is_some());
        // Three signings in all: the first and two re-signings.
        assert!(set.resign(0, 3, fresh).is_none());
        assert!(set.resign(9, 1, fresh).is_none());
    }
}

//! Cutting the program into buffer writes, and finding which of them a buffer still needs.
//!
//! Each chunk is the largest that keeps its write transaction within the 1232-byte packet limit.
//! The size is measured on a real signed write transaction with the deploy's actual signers and
//! instructions rather than hard-coded: one signer or two (payer and buffer authority) moves the
//! answer by 96 bytes, and so would a compute-budget instruction.

use std::{ops::Range, sync::Arc};

use solana_hash::Hash;
use solana_instruction::Instruction;
use solana_loader_v3_interface::instruction as loader;
use solana_pubkey::Pubkey;
use solana_signer::{Signer, null_signer::NullSigner};

use super::{
    DeployError,
    txs::{Planned, sign, wire},
};
use crate::{signer::SharedSigner, source::PACKET_DATA_SIZE};

/// How the program is cut: chunk `i` covers `[i * size, min((i + 1) * size, len))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunks {
    pub size: usize,
    pub len: usize,
}

impl Chunks {
    pub fn count(&self) -> usize {
        self.len.div_ceil(self.size.max(1))
    }

    pub fn range(&self, i: usize) -> Range<usize> {
        let start = (i * self.size).min(self.len);
        start..(start + self.size).min(self.len)
    }

    /// Chunks whose bytes in `written` (the buffer's program area) differ from `program`. A
    /// buffer starts zero-filled, so bytes past the end of `written` count as zeros, and a chunk
    /// of the program that is all zeros needs no write into a fresh buffer.
    pub fn differing(&self, program: &[u8], written: &[u8]) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .differing_in(program, 0, written)
            .chain(self.unwritten(program, written.len()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Chunks whose bytes of `program` at `at..` differ from `bytes`, read from the buffer's
    /// program area at that offset (a slice of it: `readback` compares one at a time).
    pub fn differing_in<'a>(
        &'a self,
        program: &'a [u8],
        at: usize,
        bytes: &'a [u8],
    ) -> impl Iterator<Item = usize> + 'a {
        let end = at + bytes.len();
        (at / self.size.max(1)..end.div_ceil(self.size.max(1)).min(self.count())).filter(
            move |&i| {
                let r = self.range(i);
                let (s, e) = (r.start.max(at), r.end.min(end));
                s < e && program.get(s..e) != Some(&bytes[s - at..e - at])
            },
        )
    }

    /// Chunks with program bytes past the first `written` of the buffer's program area that
    /// are not zeros: a buffer starts zero-filled, so those still need a write.
    pub fn unwritten<'a>(
        &'a self,
        program: &'a [u8],
        written: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        (0..self.count()).filter(move |&i| {
            let r = self.range(i);
            let r = r.start.max(written).min(r.end)..r.end.min(program.len());
            program.get(r).is_some_and(|t| t.iter().any(|b| *b != 0))
        })
    }
}

/// Who signs the writes and where they go.
pub struct WriteSigners {
    pub payer: SharedSigner,
    pub authority: SharedSigner,
    pub buffer: Pubkey,
}

impl WriteSigners {
    /// The write of `bytes` at `offset`, with any extra instructions in front of it.
    pub fn write(&self, offset: usize, bytes: &[u8], extra: &[Instruction]) -> Vec<Instruction> {
        let mut ixs = extra.to_vec();
        ixs.push(loader::write(
            &self.buffer,
            &self.authority.pubkey(),
            offset as u32,
            bytes.to_vec(),
        ));
        ixs
    }

    /// Serialized size of a write transaction carrying `n` bytes. Signed by stand-ins for the
    /// same keys (a signature's size does not depend on its bytes), so a hardware wallet is
    /// never asked to approve a probe.
    pub fn tx_size(&self, n: usize, extra: &[Instruction]) -> Result<usize, DeployError> {
        let planned = Planned {
            origin: "size probe".into(),
            instructions: self.write(0, &vec![0u8; n], extra),
            signers: vec![Arc::new(NullSigner::new(&self.authority.pubkey()))],
            bytes: n as u64,
        };
        let payer = NullSigner::new(&self.payer.pubkey());
        let tx = sign(&payer, &planned, Hash::new_from_array([0xab; 32]))?;
        Ok(wire(&tx)?.len())
    }

    /// The largest chunk whose write transaction fits in a packet.
    pub fn max_chunk(&self, extra: &[Instruction]) -> Result<usize, DeployError> {
        let overhead = self.tx_size(0, extra)?;
        if overhead >= PACKET_DATA_SIZE {
            return Err(DeployError::NoRoomForData(overhead));
        }
        // Sizes grow one for one with the data except where a length prefix gains a byte, so
        // start at the one-for-one answer and step down the byte or two that costs.
        let mut n = PACKET_DATA_SIZE - overhead;
        while n > 0 && self.tx_size(n, extra)? > PACKET_DATA_SIZE {
            n -= 1;
        }
        if n == 0 {
            return Err(DeployError::NoRoomForData(overhead));
        }
        Ok(n)
    }

    /// One write transaction per chunk in `which`.
    pub fn plan(
        &self,
        program: &[u8],
        chunks: Chunks,
        which: &[usize],
        extra: &[Instruction],
    ) -> Vec<Planned> {
        which
            .iter()
            .map(|&i| {
                let r = chunks.range(i);
                Planned {
                    origin: format!("write {i} @ {}", r.start),
                    instructions: self.write(r.start, &program[r.clone()], extra),
                    signers: vec![self.authority.clone()],
                    bytes: r.len() as u64,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_compute_budget_interface::ComputeBudgetInstruction;
    use solana_keypair::Keypair;

    fn signers(same: bool) -> WriteSigners {
        let payer: SharedSigner = Arc::new(Keypair::new());
        WriteSigners {
            authority: if same {
                payer.clone()
            } else {
                Arc::new(Keypair::new())
            },
            payer,
            buffer: Pubkey::new_unique(),
        }
    }

    #[test]
    fn chunk_is_the_largest_that_fits() {
        for same in [true, false] {
            let s = signers(same);
            let n = s.max_chunk(&[]).unwrap();
            assert_eq!(s.tx_size(n, &[]).unwrap(), PACKET_DATA_SIZE, "same={same}");
            assert!(s.tx_size(n + 1, &[]).unwrap() > PACKET_DATA_SIZE);
        }
        // A second signer costs a signature and an account key.
        let one = signers(true).max_chunk(&[]).unwrap();
        let two = signers(false).max_chunk(&[]).unwrap();
        assert_eq!(one - two, 64 + 32);
        let price = [ComputeBudgetInstruction::set_compute_unit_price(1)];
        assert!(signers(true).max_chunk(&price).unwrap() < one);
    }

    #[test]
    fn cuts_and_diffs() {
        let c = Chunks { size: 4, len: 10 };
        assert_eq!(c.count(), 3);
        assert_eq!(c.range(2), 8..10);
        let program = [1, 2, 3, 4, 0, 0, 0, 0, 9, 9];
        // A fresh buffer: the all-zero chunk is already right.
        assert_eq!(c.differing(&program, &[0; 10]), vec![0, 2]);
        let mut partial = program;
        partial[9] = 7;
        assert_eq!(c.differing(&program, &partial), vec![2]);
        assert_eq!(c.differing(&program, &program[..6]), vec![2]);
        assert!(c.differing(&program, &program).is_empty());
    }

    #[test]
    fn plans_one_signed_write_per_chunk() {
        let s = signers(false);
        let program: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8 + 1).collect();
        let size = s.max_chunk(&[]).unwrap();
        let chunks = Chunks {
            size,
            len: program.len(),
        };
        let planned = s.plan(&program, chunks, &[0, 2], &[]);
        assert_eq!(planned.len(), 2);
        assert_eq!(planned[1].bytes as usize, 2500 - 2 * size);
        assert_eq!(planned[1].origin, format!("write 2 @ {}", 2 * size));
        let tx = sign(&s.payer, &planned[0], Hash::default()).unwrap();
        assert_eq!(tx.signatures.len(), 2);
        assert_eq!(tx.message.static_account_keys()[0], s.payer.pubkey());
        assert!(wire(&tx).unwrap().len() <= PACKET_DATA_SIZE);
    }
}

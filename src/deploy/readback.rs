//! The buffer read back before the deploy makes it permanent, compared with the program a slice
//! at a time as the slices arrive ([`super::fetch::read_slices`]): the whole buffer is never
//! held, where holding it — with the body and the base64 text it came in — was the largest
//! thing a deploy held at once. Everything here is decided from account bytes, so it is tested
//! without a cluster.

use std::collections::BTreeSet;

use solana_pubkey::Pubkey;

use super::{
    DeployError,
    accounts::{AccountData, BUFFER_HEADER, BufferState},
    chunks::Chunks,
};

/// What the slices of a buffer account said so far, against the program it must hold.
pub struct BufferCheck<'a> {
    address: Pubkey,
    program: &'a [u8],
    chunks: Chunks,
    /// Chunks of the program whose bytes in the buffer differ.
    differing: BTreeSet<usize>,
    /// Account data bytes seen, header included.
    seen: usize,
    /// The account's fields and first bytes, until the buffer's header is whole and read.
    header: Option<AccountData>,
    header_read: bool,
}

impl<'a> BufferCheck<'a> {
    pub fn new(address: Pubkey, program: &'a [u8], chunks: Chunks) -> Self {
        Self {
            address,
            program,
            chunks,
            differing: BTreeSet::new(),
            seen: 0,
            header: None,
            header_read: false,
        }
    }

    /// Takes the slice of the account's data at `offset` (slices come in order, the first at
    /// 0). The account must be a buffer: anything else is refused as [`BufferState::read`]
    /// refuses it, once the slices hold its header.
    pub fn feed(&mut self, offset: usize, slice: AccountData) -> Result<(), DeployError> {
        let end = offset + slice.data.len();
        let from = offset.max(BUFFER_HEADER);
        if end > from {
            let at = from - BUFFER_HEADER;
            let bytes = &slice.data[from - offset..];
            self.differing
                .extend(self.chunks.differing_in(self.program, at, bytes));
        }
        self.seen = self.seen.max(end);
        if !self.header_read {
            let take = BUFFER_HEADER.saturating_sub(offset).min(slice.data.len());
            match &mut self.header {
                Some(h) => h.data.extend_from_slice(&slice.data[..take]),
                None => {
                    let mut data = slice.data;
                    data.truncate(take);
                    self.header = Some(AccountData { data, ..slice });
                }
            }
            if self.seen >= BUFFER_HEADER {
                self.read_header()?;
            }
        }
        Ok(())
    }

    fn read_header(&mut self) -> Result<(), DeployError> {
        self.header_read = true;
        BufferState::read(&self.address, self.header.take())?;
        Ok(())
    }

    /// The verdict once every slice is in: the buffer holds exactly the program, or how many
    /// chunks it still lacks. A buffer starts zero-filled, so program bytes past what was
    /// read count as written where they are zeros (as `Chunks::differing` counts them).
    pub fn finish(mut self) -> Result<(), DeployError> {
        if !self.header_read {
            self.read_header()?;
        }
        let written = self.seen.saturating_sub(BUFFER_HEADER);
        self.differing
            .extend(self.chunks.unwritten(self.program, written));
        if self.differing.is_empty() && written == self.program.len() {
            Ok(())
        } else {
            Err(DeployError::BufferIncomplete(self.differing.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use solana_loader_v3_interface::state::UpgradeableLoaderState;
    use solana_sdk_ids::bpf_loader_upgradeable;

    use super::*;

    fn buffer(program_area: &[u8]) -> Vec<u8> {
        let mut data = bincode::serialize(&UpgradeableLoaderState::Buffer {
            authority_address: Some(Pubkey::new_unique()),
        })
        .unwrap();
        data.extend_from_slice(program_area);
        data
    }

    fn slice(data: &[u8]) -> AccountData {
        AccountData {
            owner: bpf_loader_upgradeable::id(),
            lamports: 1,
            executable: false,
            data: data.to_vec(),
        }
    }

    /// The account's data fed in slices of `step` bytes.
    fn check(program: &[u8], data: &[u8], step: usize) -> Result<(), DeployError> {
        let chunks = Chunks {
            size: 10,
            len: program.len(),
        };
        let mut c = BufferCheck::new(Pubkey::new_unique(), program, chunks);
        for (k, piece) in data.chunks(step).enumerate() {
            c.feed(k * step, slice(piece))?;
        }
        c.finish()
    }

    fn program() -> Vec<u8> {
        (0..95u8).map(|b| b + 1).collect()
    }

    /// However the account is sliced — inside a chunk, across the header, one byte at a time —
    /// a buffer holding the program passes, and one differing in a chunk names that many
    /// chunks, as the whole-buffer comparison did.
    #[test]
    fn a_buffer_is_judged_the_same_whatever_its_slices() {
        let p = program();
        let good = buffer(&p);
        let mut bad = good.clone();
        bad[BUFFER_HEADER + 3] = 0; // chunk 0
        bad[BUFFER_HEADER + 19] ^= 1; // chunk 1
        bad[BUFFER_HEADER + 20] ^= 1; // chunk 2
        bad[BUFFER_HEADER + 94] ^= 1; // chunk 9, the short last one
        for step in [1, 7, 10, 37, 40, 64, good.len()] {
            assert!(check(&p, &good, step).is_ok(), "step {step}");
            match check(&p, &bad, step) {
                Err(DeployError::BufferIncomplete(4)) => {}
                other => panic!("step {step}: {other:?}"),
            }
            let chunks = Chunks {
                size: 10,
                len: p.len(),
            };
            assert_eq!(chunks.differing(&p, &bad[BUFFER_HEADER..]).len(), 4);
        }
    }

    /// A buffer shorter than the program lacks the chunks past its end that are not zeros;
    /// one longer is not the program either.
    #[test]
    fn a_buffer_of_another_length_is_incomplete() {
        let p = program();
        let short = buffer(&p[..45]);
        let chunks = Chunks {
            size: 10,
            len: p.len(),
        };
        // Chunk 4 half written, 5 to 9 not at all: as the whole-buffer comparison counts.
        assert_eq!(chunks.differing(&p, &p[..45]).len(), 6);
        match check(&p, &short, 16) {
            Err(DeployError::BufferIncomplete(n)) => assert_eq!(n, 6),
            other => panic!("{other:?}"),
        }
        let mut long = buffer(&p);
        long.push(0);
        assert!(matches!(
            check(&p, &long, 16),
            Err(DeployError::BufferIncomplete(0))
        ));
    }

    /// The first slice must be a buffer's, as when the whole account was read.
    #[test]
    fn what_is_not_a_buffer_is_refused() {
        let p = program();
        let mut data = bincode::serialize(&UpgradeableLoaderState::Program {
            programdata_address: Pubkey::new_unique(),
        })
        .unwrap();
        data.resize(BUFFER_HEADER + p.len(), 0);
        let err = check(&p, &data, 50).unwrap_err().to_string();
        assert!(err.contains("a program account"), "{err}");
        let mut wallet = slice(&buffer(&p));
        wallet.owner = solana_sdk_ids::system_program::id();
        let mut c = BufferCheck::new(
            Pubkey::new_unique(),
            &p,
            Chunks {
                size: 10,
                len: p.len(),
            },
        );
        assert!(c.feed(0, wallet).is_err());
    }
}

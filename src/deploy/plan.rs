//! Deciding, before anything is spent, what a deploy will do: create the buffer or resume it,
//! which chunks to write, deploy or upgrade — and whether the payer can afford it. Every refusal
//! here costs the user nothing; the same refusal from the loader would cost a buffer's worth of
//! write fees.

use solana_pubkey::Pubkey;

use super::{
    DeployError,
    accounts::{BufferState, ProgramState},
    chunks::Chunks,
    compute::ComputeBudget,
    elf::MAX_PROGRAM_LEN,
};
use crate::workload::LAMPORTS_PER_SIGNATURE;

/// What the caller knows before planning.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    pub program: &'a [u8],
    pub payer: Pubkey,
    /// Buffer authority, and upgrade authority of the program.
    pub authority: Pubkey,
    pub program_id: Pubkey,
    /// Whether we hold the program-id keypair (a new program's account must sign its creation).
    pub have_program_keypair: bool,
    pub buffer: Pubkey,
    pub max_len: Option<usize>,
    pub chunk_size: usize,
    /// The compute budget every transaction carries: its priority fee is part of the cost.
    pub budget: ComputeBudget,
    /// `--buffer-only`, and the key to hand the written buffer to.
    pub buffer_only: Option<Option<Pubkey>>,
}

/// The chain as read just before planning.
#[derive(Clone, Debug)]
pub struct ChainState {
    pub buffer: BufferState,
    pub program: Option<ProgramState>,
    pub balance: u64,
    pub rent: Rents,
    /// Whether the cluster takes `ExtendProgramChecked` (and refuses the unchecked
    /// `ExtendProgram`): the `enable_extend_program_checked` feature is active.
    pub extend_checked: bool,
}

/// Bytes a program-data account must grow by to hold `len` program bytes where it holds
/// `max_len`.
pub fn extension(len: usize, max_len: usize) -> usize {
    len.saturating_sub(max_len)
}

/// Rent-exempt minimums for the accounts a deploy creates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rents {
    /// A buffer holding the whole program.
    pub buffer: u64,
    /// The 36-byte program account.
    pub program: u64,
    /// A program-data account of the planned `max_len`.
    pub programdata: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A new program with room for `max_len` bytes.
    Deploy { max_len: usize },
    /// Replace the bytes of the existing program, first growing its program-data account by
    /// `extend` bytes when the new build is larger than it holds.
    Upgrade { max_len: usize, extend: usize },
    /// Only write the buffer (`--buffer-only`), then hand it to `hand_to` if given.
    BufferOnly { hand_to: Option<Pubkey> },
}

/// Lamports the deploy spends at its peak, itemised for the refusal message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Rent for the buffer, 0 when it exists already.
    pub buffer_rent: u64,
    pub fees: u64,
    /// Program account and program-data rent, less what the drained buffer gives back.
    pub program_rent: u64,
}

impl Cost {
    pub fn total(&self) -> u64 {
        self.buffer_rent
            .saturating_add(self.fees)
            .saturating_add(self.program_rent)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub create_buffer: bool,
    pub chunks: Chunks,
    /// Chunks to write, in order.
    pub writes: Vec<usize>,
    pub action: Action,
    pub cost: Cost,
}

impl Plan {
    /// Program bytes already in the buffer, right.
    pub fn bytes_present(&self) -> u64 {
        let missing: usize = self
            .writes
            .iter()
            .map(|&i| self.chunks.range(i).len())
            .sum();
        (self.chunks.len - missing) as u64
    }
}

pub fn plan(i: &Inputs, chain: &ChainState) -> Result<Plan, DeployError> {
    let len = i.program.len();
    let chunks = Chunks {
        size: i.chunk_size,
        len,
    };
    let (create_buffer, writes, buffer_lamports) = match &chain.buffer {
        BufferState::Missing => (true, chunks.differing(i.program, &[]), chain.rent.buffer),
        BufferState::Found {
            authority,
            program,
            lamports,
        } => {
            if *authority != Some(i.authority) {
                return Err(DeployError::BufferAuthority {
                    buffer: i.buffer,
                    found: *authority,
                    expected: i.authority,
                });
            }
            if program.len() != len {
                return Err(DeployError::BufferSize {
                    buffer: i.buffer,
                    found: program.len(),
                    expected: len,
                });
            }
            (false, chunks.differing(i.program, program), *lamports)
        }
    };
    // Base fees per signature, plus the most priority fee each transaction can be charged
    // (counted by its instructions besides the compute budget's: a write is one; creating the
    // buffer, and deploying, are an account creation and the loader's instruction).
    let priority = |instructions| i.budget.max_priority_fee(instructions);
    let write_fee =
        (signatures(&[i.payer, i.authority]) * LAMPORTS_PER_SIGNATURE).saturating_add(priority(1));
    let create_fee = (2 * LAMPORTS_PER_SIGNATURE).saturating_add(priority(2));
    let (action, final_fee, program_rent) = match (i.buffer_only, &chain.program) {
        (Some(hand_to), _) => (
            Action::BufferOnly { hand_to },
            match hand_to {
                Some(_) => (signatures(&[i.payer, i.authority]) * LAMPORTS_PER_SIGNATURE)
                    .saturating_add(priority(1)),
                None => 0,
            },
            0,
        ),
        (None, Some(state)) => {
            if state.authority != Some(i.authority) {
                return Err(DeployError::UpgradeAuthority {
                    program: i.program_id,
                    found: state.authority,
                    expected: i.authority,
                });
            }
            // A larger build first grows the program-data account (a transaction of its own:
            // the loader refuses an upgrade in the slot the program was extended in), topping
            // its rent up to that of the new size.
            let extend = extension(len, state.max_len);
            let one_signer_tx = (signatures(&[i.payer, i.authority]) * LAMPORTS_PER_SIGNATURE)
                .saturating_add(priority(1));
            let (extend_fee, extend_rent) = if extend > 0 {
                (
                    one_signer_tx,
                    chain.rent.programdata.saturating_sub(state.lamports),
                )
            } else {
                (0, 0)
            };
            (
                Action::Upgrade {
                    max_len: state.max_len.max(len),
                    extend,
                },
                one_signer_tx.saturating_add(extend_fee),
                extend_rent,
            )
        }
        (None, None) => {
            if !i.have_program_keypair {
                return Err(DeployError::NoProgramKeypair(i.program_id));
            }
            let max_len = i.max_len.unwrap_or(len);
            if max_len < len {
                return Err(DeployError::MaxLenTooSmall { max_len, len });
            }
            if max_len > MAX_PROGRAM_LEN {
                return Err(DeployError::MaxLenTooLarge(max_len));
            }
            let rent = chain
                .rent
                .program
                .saturating_add(chain.rent.programdata.saturating_sub(buffer_lamports));
            (
                Action::Deploy { max_len },
                (signatures(&[i.payer, i.program_id, i.authority]) * LAMPORTS_PER_SIGNATURE)
                    .saturating_add(priority(2)),
                rent,
            )
        }
    };
    let cost = Cost {
        buffer_rent: if create_buffer { chain.rent.buffer } else { 0 },
        fees: (writes.len() as u64)
            .saturating_mul(write_fee)
            .saturating_add(if create_buffer { create_fee } else { 0 })
            .saturating_add(final_fee),
        program_rent,
    };
    if chain.balance < cost.total() {
        return Err(DeployError::InsufficientFunds {
            payer: i.payer,
            balance: chain.balance,
            cost,
        });
    }
    Ok(Plan {
        create_buffer,
        chunks,
        writes,
        action,
        cost,
    })
}

/// Distinct signers among `keys`.
fn signatures(keys: &[Pubkey]) -> u64 {
    let mut seen: Vec<&Pubkey> = Vec::new();
    for k in keys {
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    seen.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOL: u64 = 1_000_000_000;

    fn inputs(program: &[u8]) -> Inputs<'_> {
        let payer = Pubkey::new_unique();
        Inputs {
            program,
            payer,
            authority: payer,
            program_id: Pubkey::new_unique(),
            have_program_keypair: true,
            buffer: Pubkey::new_unique(),
            max_len: None,
            chunk_size: 4,
            budget: ComputeBudget::default(),
            buffer_only: None,
        }
    }

    fn chain(buffer: BufferState, program: Option<ProgramState>) -> ChainState {
        ChainState {
            buffer,
            program,
            balance: 100 * SOL,
            rent: Rents {
                buffer: 2 * SOL,
                program: SOL / 100,
                programdata: 3 * SOL,
            },
            extend_checked: true,
        }
    }

    #[test]
    fn a_new_deploy_creates_writes_and_deploys() {
        let program = [1u8; 10];
        let i = inputs(&program);
        let p = plan(&i, &chain(BufferState::Missing, None)).unwrap();
        assert!(p.create_buffer);
        assert_eq!(p.writes, vec![0, 1, 2]);
        assert_eq!(p.action, Action::Deploy { max_len: 10 });
        assert_eq!(p.bytes_present(), 0);
        // The buffer's 2 SOL come back before program-data takes 3.
        assert_eq!(
            p.cost,
            Cost {
                buffer_rent: 2 * SOL,
                fees: 3 * 5_000 + 10_000 + 10_000,
                program_rent: SOL / 100 + SOL,
            }
        );
    }

    /// A priced deploy budgets each transaction's priority fee at its most: the explicit
    /// limit, or the default allotment per instruction while the limit is still to be measured.
    #[test]
    fn priority_fees_are_part_of_the_cost() {
        let program = [1u8; 10];
        let mut i = inputs(&program);
        i.budget = ComputeBudget {
            price: Some(1_000_000),
            limit: Some(5_000),
        };
        let p = plan(&i, &chain(BufferState::Missing, None)).unwrap();
        // Five transactions (create, three writes, deploy), 5,000 lamports of priority each.
        assert_eq!(p.cost.fees, 3 * 5_000 + 10_000 + 10_000 + 5 * 5_000);
        i.budget.limit = None;
        let p = plan(&i, &chain(BufferState::Missing, None)).unwrap();
        // 200,000 units a write, 400,000 for the two-instruction create and deploy.
        assert_eq!(
            p.cost.fees,
            3 * 5_000 + 10_000 + 10_000 + 3 * 200_000 + 2 * 400_000
        );
    }

    #[test]
    fn a_resumed_buffer_writes_only_what_differs() {
        let program = [1u8, 1, 1, 1, 2, 2, 2, 2, 3, 3];
        let i = inputs(&program);
        let found = BufferState::Found {
            authority: Some(i.authority),
            program: vec![1, 1, 1, 1, 0, 0, 0, 0, 3, 3],
            lamports: 2 * SOL,
        };
        let p = plan(&i, &chain(found, None)).unwrap();
        assert!(!p.create_buffer);
        assert_eq!(p.writes, vec![1]);
        assert_eq!(p.bytes_present(), 6);
        assert_eq!(p.cost.buffer_rent, 0);
    }

    #[test]
    fn refusals_cost_nothing_and_say_why() {
        let program = [1u8; 10];
        let i = inputs(&program);
        let other = Pubkey::new_unique();
        let wrong_auth = BufferState::Found {
            authority: Some(other),
            program: vec![0; 10],
            lamports: 1,
        };
        assert!(matches!(
            plan(&i, &chain(wrong_auth, None)),
            Err(DeployError::BufferAuthority { .. })
        ));
        let wrong_size = BufferState::Found {
            authority: Some(i.authority),
            program: vec![0; 12],
            lamports: 1,
        };
        let err = plan(&i, &chain(wrong_size, None)).unwrap_err();
        assert!(err.to_string().contains("holds 12 program bytes"), "{err}");
        let mut poor = chain(BufferState::Missing, None);
        poor.balance = SOL;
        let err = plan(&i, &poor).unwrap_err().to_string();
        assert!(err.contains("needs 3.01"), "{err}");
        let mut small = inputs(&program);
        small.max_len = Some(5);
        assert!(matches!(
            plan(&small, &chain(BufferState::Missing, None)),
            Err(DeployError::MaxLenTooSmall { .. })
        ));
        let mut no_key = inputs(&program);
        no_key.have_program_keypair = false;
        assert!(matches!(
            plan(&no_key, &chain(BufferState::Missing, None)),
            Err(DeployError::NoProgramKeypair(_))
        ));
    }

    #[test]
    fn an_existing_program_is_upgraded_by_its_authority() {
        let program = [1u8; 10];
        let i = inputs(&program);
        let state = |authority, max_len| ProgramState {
            programdata: Pubkey::new_unique(),
            authority,
            max_len,
            slot: 1,
            lamports: SOL,
        };
        let p = plan(
            &i,
            &chain(BufferState::Missing, Some(state(Some(i.authority), 20))),
        )
        .unwrap();
        assert_eq!(
            p.action,
            Action::Upgrade {
                max_len: 20,
                extend: 0
            }
        );
        assert_eq!(p.cost.program_rent, 0);
        let err = plan(&i, &chain(BufferState::Missing, Some(state(None, 20)))).unwrap_err();
        assert!(err.to_string().contains("immutable"), "{err}");
        // A build larger than the program-data account holds extends it first, topping its
        // rent up from 1 SOL to that of the new size (3 SOL in `chain`), with one more fee.
        let p = plan(
            &i,
            &chain(BufferState::Missing, Some(state(Some(i.authority), 8))),
        )
        .unwrap();
        assert_eq!(
            p.action,
            Action::Upgrade {
                max_len: 10,
                extend: 2
            }
        );
        assert_eq!(p.cost.program_rent, 2 * SOL);
        assert_eq!(p.cost.fees, 2 * 5_000 + 3 * 5_000 + 2 * 5_000);
    }
}

//! Reading the upgradeable loader's accounts as the chain holds them: a buffer to resume, a
//! program to upgrade. Everything here is decided from account bytes, so it is tested without a
//! cluster.

use solana_loader_v3_interface::state::UpgradeableLoaderState;
use solana_pubkey::Pubkey;
use solana_sdk_ids::bpf_loader_upgradeable;

use super::DeployError;

/// The fields of an on-chain account txpace looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountData {
    pub owner: Pubkey,
    pub lamports: u64,
    pub executable: bool,
    pub data: Vec<u8>,
}

pub const BUFFER_HEADER: usize = UpgradeableLoaderState::size_of_buffer_metadata();
pub const PROGRAMDATA_HEADER: usize = UpgradeableLoaderState::size_of_programdata_metadata();

/// A buffer account as found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferState {
    /// No account at the address yet: it will be created.
    Missing,
    /// An initialized buffer; `program` is its data after the header.
    Found {
        authority: Option<Pubkey>,
        program: Vec<u8>,
        lamports: u64,
    },
}

impl BufferState {
    pub fn read(address: &Pubkey, account: Option<AccountData>) -> Result<Self, DeployError> {
        let Some(acc) = account else {
            return Ok(BufferState::Missing);
        };
        if acc.owner != bpf_loader_upgradeable::id() {
            return Err(DeployError::NotABuffer {
                address: *address,
                what: format!("an account owned by {}", acc.owner),
            });
        }
        match bincode::deserialize::<UpgradeableLoaderState>(&acc.data) {
            Ok(UpgradeableLoaderState::Buffer { authority_address }) => {
                // The program's bytes are the data past the header, taken rather than copied:
                // they are a whole program.
                let mut program = acc.data;
                program.drain(..BUFFER_HEADER.min(program.len()));
                Ok(BufferState::Found {
                    authority: authority_address,
                    program,
                    lamports: acc.lamports,
                })
            }
            Ok(other) => Err(DeployError::NotABuffer {
                address: *address,
                what: describe(&other).to_string(),
            }),
            Err(e) => Err(DeployError::NotABuffer {
                address: *address,
                what: format!("a loader account that does not parse ({e})"),
            }),
        }
    }
}

/// A deployed upgradeable program, from its program and program-data accounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramState {
    pub programdata: Pubkey,
    /// `None`: the program is final (immutable).
    pub authority: Option<Pubkey>,
    /// Bytes the program-data account holds for the program: the largest upgrade it takes.
    pub max_len: usize,
    pub slot: u64,
    /// Lamports the program-data account holds: what extending it must top up.
    pub lamports: u64,
}

impl ProgramState {
    /// `None` when no account exists at `program_id`; an error when one exists but is not an
    /// upgradeable program txpace can upgrade.
    pub fn read(
        program_id: &Pubkey,
        program: Option<AccountData>,
        programdata: impl FnOnce(&Pubkey) -> Result<Option<AccountData>, DeployError>,
    ) -> Result<Option<Self>, DeployError> {
        let Some(acc) = program else {
            return Ok(None);
        };
        let not_program = |what: String| DeployError::NotAProgram {
            address: *program_id,
            what,
        };
        if acc.owner != bpf_loader_upgradeable::id() {
            return Err(not_program(if acc.executable {
                format!(
                    "a program of loader {}, which cannot be upgraded in place",
                    acc.owner
                )
            } else {
                format!(
                    "an account owned by {} holding {} lamports",
                    acc.owner, acc.lamports
                )
            }));
        }
        let programdata_address = match bincode::deserialize::<UpgradeableLoaderState>(&acc.data) {
            Ok(UpgradeableLoaderState::Program {
                programdata_address,
            }) => programdata_address,
            Ok(other) => return Err(not_program(describe(&other).to_string())),
            Err(e) => {
                return Err(not_program(format!(
                    "a loader account that does not parse ({e})"
                )));
            }
        };
        let data = programdata(&programdata_address)?.ok_or_else(|| {
            not_program(format!(
                "a program whose program-data account {programdata_address} is missing (closed)"
            ))
        })?;
        match bincode::deserialize::<UpgradeableLoaderState>(&data.data) {
            Ok(UpgradeableLoaderState::ProgramData {
                slot,
                upgrade_authority_address,
            }) => Ok(Some(ProgramState {
                programdata: programdata_address,
                authority: upgrade_authority_address,
                max_len: data.data.len().saturating_sub(PROGRAMDATA_HEADER),
                slot,
                lamports: data.lamports,
            })),
            _ => Err(not_program(format!(
                "a program whose program-data account {programdata_address} does not parse"
            ))),
        }
    }
}

fn describe(state: &UpgradeableLoaderState) -> &'static str {
    match state {
        UpgradeableLoaderState::Uninitialized => "an uninitialized loader account",
        UpgradeableLoaderState::Buffer { .. } => "a buffer account",
        UpgradeableLoaderState::Program { .. } => "a program account",
        UpgradeableLoaderState::ProgramData { .. } => "a program-data account",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loader_account(state: UpgradeableLoaderState, tail: &[u8]) -> AccountData {
        let mut data = bincode::serialize(&state).unwrap();
        data.extend_from_slice(tail);
        AccountData {
            owner: bpf_loader_upgradeable::id(),
            lamports: 42,
            executable: matches!(state, UpgradeableLoaderState::Program { .. }),
            data,
        }
    }

    #[test]
    fn reads_a_buffer_and_its_bytes() {
        let addr = Pubkey::new_unique();
        let auth = Pubkey::new_unique();
        assert_eq!(
            BufferState::read(&addr, None).unwrap(),
            BufferState::Missing
        );
        let acc = loader_account(
            UpgradeableLoaderState::Buffer {
                authority_address: Some(auth),
            },
            &[1, 2, 3],
        );
        assert_eq!(acc.data.len(), BUFFER_HEADER + 3);
        assert_eq!(
            BufferState::read(&addr, Some(acc)).unwrap(),
            BufferState::Found {
                authority: Some(auth),
                program: vec![1, 2, 3],
                lamports: 42
            }
        );
    }

    #[test]
    fn refuses_what_is_not_a_buffer() {
        let addr = Pubkey::new_unique();
        let wallet = AccountData {
            owner: solana_sdk_ids::system_program::id(),
            lamports: 5,
            executable: false,
            data: vec![],
        };
        let err = BufferState::read(&addr, Some(wallet))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("an account owned by 11111111111111111111111111111111"),
            "{err}"
        );
        let program = loader_account(
            UpgradeableLoaderState::Program {
                programdata_address: Pubkey::new_unique(),
            },
            &[],
        );
        let err = BufferState::read(&addr, Some(program))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a program account"), "{err}");
    }

    #[test]
    fn reads_a_program_and_its_authority_and_room() {
        let id = Pubkey::new_unique();
        let pd = Pubkey::new_unique();
        let auth = Pubkey::new_unique();
        let program = loader_account(
            UpgradeableLoaderState::Program {
                programdata_address: pd,
            },
            &[],
        );
        let programdata = loader_account(
            UpgradeableLoaderState::ProgramData {
                slot: 9,
                upgrade_authority_address: Some(auth),
            },
            &[0; 1000],
        );
        let state = ProgramState::read(&id, Some(program.clone()), |a| {
            assert_eq!(*a, pd);
            Ok(Some(programdata.clone()))
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            state,
            ProgramState {
                programdata: pd,
                authority: Some(auth),
                max_len: 1000,
                slot: 9,
                lamports: programdata.lamports,
            }
        );
        assert_eq!(ProgramState::read(&id, None, |_| Ok(None)).unwrap(), None);
        let err = ProgramState::read(&id, Some(program), |_| Ok(None))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing"), "{err}");
    }
}

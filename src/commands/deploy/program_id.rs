//! Which program a deploy targets: `--program-id` as a keypair file or an address, or the
//! keypair next to the `.so` file, made when missing.

use std::{
    path::{Path, PathBuf},
    str::FromStr,
    sync::Arc,
};

use anyhow::{Result, bail};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;

use super::sibling;
use crate::keyfile::read_keypair;

/// The program's address, and its keypair when we have it.
pub(super) struct ProgramId {
    pub(super) pubkey: Pubkey,
    pub(super) keypair: Option<Arc<Keypair>>,
    /// Where a freshly made keypair is to be saved.
    pub(super) new_file: Option<PathBuf>,
}

impl ProgramId {
    pub(super) fn resolve(arg: Option<&str>, program: &Path) -> Result<Self> {
        let from_file = |p: &Path| -> Result<Self> {
            let kp = read_keypair(p)?;
            Ok(ProgramId {
                pubkey: kp.pubkey(),
                keypair: Some(Arc::new(kp)),
                new_file: None,
            })
        };
        match arg {
            Some(s) if Path::new(s).exists() => from_file(Path::new(s)),
            Some(s) => match Pubkey::from_str(s) {
                Ok(pubkey) => Ok(ProgramId {
                    pubkey,
                    keypair: None,
                    new_file: None,
                }),
                Err(_) => bail!("--program-id {s}: no such keypair file, and not a public key"),
            },
            None => {
                let default = sibling(program, "keypair.json");
                if default.exists() {
                    return from_file(&default);
                }
                let kp = Keypair::new();
                Ok(ProgramId {
                    pubkey: kp.pubkey(),
                    keypair: Some(Arc::new(kp)),
                    new_file: Some(default),
                })
            }
        }
    }
}

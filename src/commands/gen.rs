//! `txpace gen` (being written).

use crate::cli::{GenArgs, GlobalOpts};

pub fn run(_global: &GlobalOpts, _args: GenArgs) -> anyhow::Result<u8> {
    anyhow::bail!("txpace gen is being written")
}

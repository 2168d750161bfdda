//! `txpace inspect` (being written).

use crate::cli::{InspectArgs, GlobalOpts};

pub fn run(_global: &GlobalOpts, _args: InspectArgs) -> anyhow::Result<u8> {
    anyhow::bail!("txpace inspect is being written")
}

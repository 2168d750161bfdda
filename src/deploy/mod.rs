//! Program deploys with the upgradeable BPF loader, paced through the send engine.
//!
//! A deploy is three phases, each a batch of one engine host ([`crate::engine::host`]): create the buffer account, write the
//! program into it in packet-sized chunks, then deploy (or upgrade) from it. Everything that can
//! be checked is checked before the first lamport is spent ([`elf`], [`plan`]); writes whose
//! blockhash expires are signed again ([`txs`]); an interrupted deploy resumes from what its
//! buffer holds ([`chunks`]); and the dashboard shows which phase runs and how many program
//! bytes are in the buffer ([`relay`]). Every transaction can carry a compute-unit price and
//! limit ([`compute`]).

pub mod accounts;
pub mod chunks;
pub mod compute;
pub mod drive;
pub mod elf;
mod error;
pub mod fetch;
pub mod plan;
pub mod readback;
pub mod relay;
pub mod txs;

pub use error::{DeployError, sol};

//! The send engine: pacer, QUIC sender, leader tracker, confirmer and expiry watch. It knows
//! nothing of terminals; a UI reads [`snapshot::Snapshot`]s and sends [`command::Command`]s.

pub mod command;
pub mod lifecycle;
pub mod snapshot;

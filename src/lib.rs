//! txpace: a paced Solana TPU (QUIC) sender whose engine publishes snapshots of every
//! transaction's fate for a terminal dashboard or a headless report.

// First: its macros are in scope only in the modules after it.
#[macro_use]
pub mod console;
pub mod cli;
pub mod commands;
pub mod config;
pub mod confirmed_send;
pub mod deploy;
pub mod engine;
pub mod events;
pub mod exit;
pub mod fees;
pub mod headless;
#[cfg(test)]
mod house_rules;
pub mod interrupt;
pub mod journal;
pub mod keyfile;
pub mod logging;
pub mod malloc;
pub mod metrics;
pub mod preflight;
pub mod private_fs;
pub mod redact;
pub mod report;
pub mod settings;
pub mod signer;
pub mod source;
pub mod ui;
pub mod validator;
pub mod workload;

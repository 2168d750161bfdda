//! Commands on standard input while the cluster runs, one per line, each answered with one line
//! on standard output:
//!
//! ```text
//! blackhole N   node N's TPU relay drops everything      → "ok blackhole N"
//! restore N     node N's TPU relay carries traffic again → "ok restore N"
//! ```
//!
//! Node numbers are the manifest's order, from 0. Only with `--tpu-relay`; a wrong command is
//! answered with `error: …` and changes nothing. End of input is a stop only with
//! `--stop-on-eof` (it raises SIGTERM, so the stop is the signal's: nodes stopped, state
//! removed); otherwise a cluster started with its input closed keeps running until a signal.

use std::{
    io::{BufRead, Write},
    sync::Arc,
    thread,
};

use anyhow::{Context, Result};

use crate::relay::Relay;

/// Reads commands on a thread of its own until standard input ends.
pub fn spawn(relays: Arc<Vec<Relay>>, stop_on_eof: bool) -> Result<()> {
    thread::Builder::new()
        .name("localnetCtl".to_string())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let answer = match apply(&relays, &line) {
                    Ok(done) => format!("ok {done}"),
                    Err(e) => format!("error: {e}"),
                };
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{answer}").and_then(|()| out.flush());
            }
            if stop_on_eof {
                let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
            }
        })
        .context("starting the command reader")?;
    Ok(())
}

fn apply(relays: &[Relay], line: &str) -> Result<String, String> {
    let mut words = line.split_whitespace();
    let (Some(verb), Some(node), None) = (words.next(), words.next(), words.next()) else {
        return Err(format!(
            "expected `blackhole N` or `restore N`, got {line:?}"
        ));
    };
    let blackhole = match verb {
        "blackhole" => true,
        "restore" => false,
        _ => return Err(format!("unknown command {verb:?}: blackhole or restore")),
    };
    let index: usize = node
        .parse()
        .map_err(|_| format!("{node:?} is not a node number"))?;
    let relay = relays.get(index).ok_or_else(|| {
        if relays.is_empty() {
            "no TPU relays: start with --tpu-relay".to_string()
        } else {
            format!("no node {index}: nodes 0 to {}", relays.len() - 1)
        }
    })?;
    relay.set_blackholed(blackhole);
    Ok(format!("{verb} {index}"))
}

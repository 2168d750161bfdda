//! Commands on standard input while the cluster runs, one per line, each answered with one line
//! on standard output (the full list and the answers: `txpace_relay::control`):
//!
//! ```text
//! blackhole N / restore N   node N's TPU relay drops everything / carries traffic again
//! link N SPEC               node N's link becomes SPEC (`rtt:85ms,jitter:5ms,loss:0.5%`, `off`)
//! profile NAME              every node's link from a profile (eu, na, apac, hostile, mainnet)
//! stats [N]                 the relays' counters as JSON: received, delivered, dropped by cause
//! counters                  the nodes' own TPU server counters (streams delayed by a budget,
//!                           connections evicted, refused, rate-limited), summed over the nodes
//! ```
//!
//! Node numbers are the manifest's order, from 0. Only with relays (`--tpu-relay`, `--link` or
//! `--link-profile`); a wrong command is answered with `error: …` and changes nothing. End of
//! input is a stop only with `--stop-on-eof` (it raises SIGTERM, so the stop is the signal's:
//! nodes stopped, state removed); otherwise a cluster started with its input closed keeps
//! running until a signal.

use std::{sync::Arc, thread};

use anyhow::{Context, Result};
use txpace_relay::{Relays, counters::CounterSink};

/// Reads commands on a thread of its own until standard input ends.
pub fn spawn(relays: Arc<Relays>, counters: CounterSink, stop_on_eof: bool) -> Result<()> {
    thread::Builder::new()
        .name("localnetCtl".to_string())
        .spawn(move || {
            txpace_relay::control::serve(
                &relays,
                Some(&counters),
                std::io::stdin().lock(),
                std::io::stdout(),
            );
            if stop_on_eof {
                let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
            }
        })
        .context("starting the command reader")?;
    Ok(())
}

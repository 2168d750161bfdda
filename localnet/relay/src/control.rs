//! Commands that change the relays while they run, one per line, each answered with one line:
//!
//! ```text
//! blackhole N        node N's relay drops everything       → ok blackhole N
//! restore N          node N's relay carries traffic again  → ok restore N
//! link N SPEC        node N's link becomes SPEC            → ok link N SPEC
//! profile NAME       every node's link from profile NAME   → ok profile NAME
//! stats N            node N's counters                     → ok stats N {json}
//! stats              every node's counters                 → ok stats [{json},…]
//! counters           the nodes' own TPU server counters    → ok counters {json}
//! ```
//!
//! `counters` needs the nodes' metrics written to a [`CounterSink`] (see [`crate::counters`]).
//!
//! SPEC is written as [`crate::spec`] describes (`rtt:85ms,jitter:5ms,loss:0.5%`, `off`) and
//! echoed as typed, so a caller can match the answer to its command. Node numbers are the
//! manifest's order, from 0. A wrong command is answered `error: …` and changes nothing.

use std::io::{BufRead, Write};

use crate::{counters::CounterSink, relays::Relays, spec};

const USAGE: &str = "blackhole N, restore N, link N SPEC, profile NAME, stats [N] or counters";

/// Answers every line of `input` on `output` until `input` ends.
pub fn serve(
    relays: &Relays,
    counters: Option<&CounterSink>,
    input: impl BufRead,
    mut output: impl Write,
) {
    for line in input.lines() {
        let Ok(line) = line else { break };
        let answer = match answer(relays, counters, &line) {
            Ok(done) => format!("ok {done}"),
            Err(e) => format!("error: {e}"),
        };
        if writeln!(output, "{answer}")
            .and_then(|()| output.flush())
            .is_err()
        {
            break;
        }
    }
}

/// Carries out one command; the answer without its `ok ` or `error: `.
pub fn answer(
    relays: &Relays,
    counters: Option<&CounterSink>,
    line: &str,
) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["blackhole", node] | ["restore", node] => {
            let (index, relay) = node_of(relays, node)?;
            relay.set_blackholed(words[0] == "blackhole");
            Ok(format!("{} {index}", words[0]))
        }
        ["link", node, link @ ..] if !link.is_empty() => {
            let (index, relay) = node_of(relays, node)?;
            let text = link.join(" ");
            let spec = text.parse().map_err(|e| format!("link {text:?}: {e}"))?;
            relay.set_link(spec);
            Ok(format!("link {index} {text}"))
        }
        ["profile", name] => {
            if relays.is_empty() {
                return Err(no_relays());
            }
            let links = spec::profile(name, relays.len()).map_err(|e| e.to_string())?;
            for (relay, link) in relays.iter().zip(links) {
                relay.set_link(link);
            }
            Ok(format!("profile {name}"))
        }
        ["stats", node] => {
            let (index, relay) = node_of(relays, node)?;
            let json = serde_json::to_string(&relay.stats()).map_err(|e| e.to_string())?;
            Ok(format!("stats {index} {json}"))
        }
        ["stats"] => {
            let json = serde_json::to_string(&relays.stats()).map_err(|e| e.to_string())?;
            Ok(format!("stats {json}"))
        }
        ["counters"] => {
            let sink = counters.ok_or("the nodes' metrics are not collected here")?;
            let json = serde_json::to_string(&sink.snapshot()).map_err(|e| e.to_string())?;
            Ok(format!("counters {json}"))
        }
        [] => Err(format!("an empty line: {USAGE}")),
        [verb, ..] => Err(format!(
            "{verb:?} with these arguments is not a command: {USAGE}"
        )),
    }
}

fn node_of<'a>(relays: &'a Relays, node: &str) -> Result<(usize, &'a crate::Relay), String> {
    let index: usize = node
        .parse()
        .map_err(|_| format!("{node:?} is not a node number"))?;
    let relay = relays.get(index).ok_or_else(|| {
        if relays.is_empty() {
            no_relays()
        } else {
            format!("no node {index}: nodes 0 to {}", relays.len() - 1)
        }
    })?;
    Ok((index, relay))
}

fn no_relays() -> String {
    "no TPU relays: start with --tpu-relay, --link or --link-profile".to_string()
}

//! The moment a contender first sends, read from its own output, so that a fault meets every
//! contender the same time after its first send and not after its spawn: the contenders take
//! different times to start (reading a file, fetching the leader schedule, connecting), and a
//! fault timed from the spawn would meet a slow starter earlier in its sending than a quick one.
//!
//! - txpace says so in its `--events -` stream, a public format: the first transaction that
//!   moves to `sent` (the engine's decision to send it, right before its stream is opened).
//! - The Agave children (`agave-send`, `next-send`, `rpc-send`) print [`MARKER`] on standard
//!   error right before their first send call ([`note`]).
//!
//! The benchmark reads the line a few milliseconds after it was written, the same for all.

use std::{
    sync::{Mutex, mpsc},
    time::Instant,
};

/// The line an Agave child prints on standard error as it first sends.
pub const MARKER: &str = "txpace-bench: first send";

/// Prints [`MARKER`] if `before`, the count of sends before this one, is zero.
pub fn note(before: u64) {
    if before == 0 {
        eprintln!("{MARKER}");
    }
}

/// Whether a line of a child's output says it sent its first transaction.
pub fn is_first_send(line: &str) -> bool {
    let line = line.trim_end();
    if line == MARKER {
        return true;
    }
    if !is_event(line) {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|v| v["event"] == "state" && v["to"] == "sent")
}

/// Whether a line is one of txpace's `--events` lines (kept out of the output the benchmark
/// prints and reads failures from).
pub fn is_event(line: &str) -> bool {
    line.starts_with('{') && line.contains("\"event\":")
}

/// A child's start: when it was spawned, and when it first sent (once its output says so).
pub struct Started {
    pub spawned: Instant,
    /// The child's word, and what it said once it did.
    first: Mutex<(mpsc::Receiver<Instant>, Option<Instant>)>,
}

impl Started {
    pub(crate) fn new(spawned: Instant, first: mpsc::Receiver<Instant>) -> Self {
        Self {
            spawned,
            first: Mutex::new((first, None)),
        }
    }

    /// Blocks until the child first sends, and says when; `None` if it ended without saying
    /// so (a child that never sent, or one that does not say: see the module's list).
    pub fn first_send(&self) -> Option<Instant> {
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.1.is_none() {
            first.1 = first.0.recv().ok();
        }
        first.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_and_txpace_s_first_sent_state_are_first_sends_and_nothing_else() {
        assert!(is_first_send(MARKER));
        assert!(is_first_send(&format!("{MARKER}\n")));
        let sent = r#"{"unix_ms":1,"t_ms":2,"event":"state","at_ms":2,"id":0,"signature":"x","from":"queued","to":"sent","note":null}"#;
        assert!(is_first_send(sent));
        let confirmed = sent.replace(r#""to":"sent""#, r#""to":"confirmed""#);
        assert!(!is_first_send(&confirmed));
        let stream = r#"{"unix_ms":1,"t_ms":2,"event":"send","at_ms":2,"to":"sent"}"#;
        assert!(!is_first_send(stream));
        assert!(!is_first_send("[    1.0s] running sends 1 | pending 0"));
        assert!(!is_first_send("{\"event\": truncated"));
    }

    #[test]
    fn a_first_send_is_the_moment_said_and_none_when_never_said() {
        let (tx, rx) = mpsc::channel();
        let started = Started::new(Instant::now(), rx);
        let at = Instant::now();
        tx.send(at).expect("send");
        drop(tx);
        assert_eq!(started.first_send(), Some(at));
        assert_eq!(started.first_send(), Some(at), "the same moment each time");
        let (tx, rx) = mpsc::channel::<Instant>();
        drop(tx);
        assert_eq!(Started::new(Instant::now(), rx).first_send(), None);
    }
}

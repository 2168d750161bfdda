//! Commands to a running `txpace-localnet` on its standard input, each answered with one line
//! on its standard output (`localnet/src/control.rs` lists them): cutting and restoring a
//! node's TPU, changing its link, and reading the relays' and the nodes' own counters.

use std::{
    io::Write,
    time::{Duration, Instant},
};

use super::{Localnet, ValidatorError};

/// How long a command's answer may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

impl Localnet {
    /// Node `node`'s TPU relay drops everything both ways (needs `tpu_relay`).
    pub fn blackhole(&mut self, node: usize) -> Result<(), ValidatorError> {
        self.control(&format!("blackhole {node}"))
    }

    /// Node `node`'s TPU relay carries traffic again.
    pub fn restore(&mut self, node: usize) -> Result<(), ValidatorError> {
        self.control(&format!("restore {node}"))
    }

    /// Node `node`'s link becomes `spec` (`rtt:85ms,jitter:5ms,loss:0.5%`, `off`; needs relays).
    pub fn set_link(&mut self, node: usize, spec: &str) -> Result<(), ValidatorError> {
        self.control(&format!("link {node} {spec}"))
    }

    /// Every node's link from the named profile (`eu`, `na`, `apac`, `hostile`, `mainnet`;
    /// `profile NAME`), as `--link-profile` sets it at start (needs relays).
    pub fn set_profile(&mut self, name: &str) -> Result<(), ValidatorError> {
        self.control(&format!("profile {name}"))
    }

    /// Every relay's counters (`stats`): what each node's relay received, delivered and
    /// dropped each way and why, and the source address the node sees each client from — the
    /// wire as it was, to print beside a run's figures (needs relays).
    pub fn relay_stats(&mut self) -> Result<serde_json::Value, ValidatorError> {
        let answer = self.ask("stats")?;
        serde_json::from_str(&answer).map_err(|e| ValidatorError::Control {
            command: "stats".to_string(),
            reason: format!("not JSON ({e}): {answer}"),
        })
    }

    /// The nodes' own TPU server counters (`counters`), summed over the nodes: streams they
    /// delayed for a sender's budget, connections evicted, refused and rate-limited, each
    /// node's points trailing its server by up to 15 s (see `txpace_relay::counters`).
    pub fn server_counters(&mut self) -> Result<serde_json::Value, ValidatorError> {
        let answer = self.ask("counters")?;
        serde_json::from_str(&answer).map_err(|e| ValidatorError::Control {
            command: "counters".to_string(),
            reason: format!("not JSON ({e}): {answer}"),
        })
    }

    fn control(&mut self, command: &str) -> Result<(), ValidatorError> {
        self.ask(command).map(drop)
    }

    /// Sends `command` and returns what its `ok` answer carries after the command's own words
    /// (empty for most).
    fn ask(&mut self, command: &str) -> Result<String, ValidatorError> {
        let failed = |reason: String| ValidatorError::Control {
            command: command.to_string(),
            reason,
        };
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| failed(e.to_string()))?;
        let deadline = Instant::now() + CONTROL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == format!("ok {command}") => return Ok(String::new()),
                Ok(line) if line.starts_with(&format!("ok {command} ")) => {
                    return Ok(line[format!("ok {command} ").len()..].to_string());
                }
                Ok(line) if line.starts_with("error:") => return Err(failed(line)),
                Ok(_) => {}
                Err(e) => return Err(failed(format!("no answer ({e})"))),
            }
        }
    }
}

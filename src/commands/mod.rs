//! One module per subcommand; each exposes `run`, returning the process exit code.

mod blocking;
pub mod completions;
pub mod config;
pub mod demo;
pub mod deploy;
pub mod exit_code;
pub mod r#gen;
pub mod inspect;
pub mod man;
pub mod send;
pub mod session;
pub mod view;

use std::io::Write;

/// Writes generated text (a completion script, a man page) to stdout. A reader that closed the
/// pipe early (`txpace man | head`) is not an error: it has what it wanted.
pub fn print_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(()),
    }
}

//! One module per subcommand; each exposes `run`, returning the process exit code.

pub mod gen;
pub mod inspect;

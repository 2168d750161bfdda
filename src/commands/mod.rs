//! One module per subcommand; each exposes `run`, returning the process exit code.

pub mod demo;
pub mod deploy;
pub mod r#gen;
pub mod inspect;
pub mod send;

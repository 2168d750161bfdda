//! The options every subcommand understands, and `--output`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use crate::config::{Commitment, GlobalArgs};

/// Options every subcommand understands. Each can also come from a `TXPACE_*` environment
/// variable (a flag wins over it) and the endpoints and commitment from txpace.toml (see
/// `txpace config show`). Environment values are never shown in `--help`: a URL there can carry
/// a provider's API key.
#[derive(Debug, Args, Clone)]
pub struct GlobalOpts {
    /// RPC URL or moniker: m/mainnet-beta, d/devnet, t/testnet, l/localhost
    #[arg(
        short = 'u',
        long = "url",
        global = true,
        value_name = "URL_OR_MONIKER",
        value_hint = ValueHint::Url,
        env = "TXPACE_URL",
        hide_env_values = true
    )]
    pub url: Option<String>,
    /// Websocket URL [default: from the RPC URL: http→ws, https→wss, port + 1]
    #[arg(
        long = "ws",
        global = true,
        value_name = "URL",
        value_hint = ValueHint::Url,
        env = "TXPACE_WS",
        hide_env_values = true
    )]
    pub ws: Option<String>,
    /// Commitment at which a transaction counts as confirmed [default: confirmed]
    #[arg(
        long,
        global = true,
        value_enum,
        env = "TXPACE_COMMITMENT",
        hide_env_values = true
    )]
    pub commitment: Option<Commitment>,
    /// Solana CLI config file [default: ~/.config/solana/cli/config.yml when it exists]
    #[arg(
        short = 'C',
        long = "config",
        global = true,
        value_name = "PATH",
        value_hint = ValueHint::FilePath,
        env = "TXPACE_SOLANA_CONFIG",
        hide_env_values = true
    )]
    pub config: Option<PathBuf>,
    /// txpace's own settings file [default: txpace.toml in the config directory,
    /// ~/.config/txpace/txpace.toml on Linux, when it exists; `txpace config path` prints it]
    #[arg(
        long = "txpace-config",
        global = true,
        value_name = "PATH",
        value_hint = ValueHint::FilePath,
        env = "TXPACE_CONFIG",
        hide_env_values = true
    )]
    pub txpace_config: Option<PathBuf>,
    /// How the result is printed on standard output: display (lines for people), or json /
    /// json-compact (the run's report, as --report writes it, with nothing else on standard
    /// output; progress and file names go to standard error). `inspect` prints its table as JSON
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        default_value_t = OutputMode::Display,
        env = "TXPACE_OUTPUT"
    )]
    pub output: OutputMode,
    /// More log detail, on the dashboard's log pane, stderr and the log file alike: -v debug,
    /// -vv trace (every level RUST_LOG or the default sets, one step per v)
    #[arg(short = 'v', long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Less log detail: -q warnings and errors, -qq errors only
    #[arg(short = 'q', long, global = true, action = clap::ArgAction::Count)]
    pub quiet: u8,
}

/// `--output`, as the Solana CLI names its formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputMode {
    #[default]
    Display,
    Json,
    JsonCompact,
}

impl OutputMode {
    pub fn is_json(self) -> bool {
        self != OutputMode::Display
    }
}

impl GlobalOpts {
    /// Log verbosity: positive for `-v`, negative for `-q`.
    pub fn verbosity(&self) -> i8 {
        self.verbose.min(5) as i8 - self.quiet.min(5) as i8
    }

    pub fn to_args(&self, keypair: Option<PathBuf>) -> GlobalArgs {
        GlobalArgs {
            url: self.url.clone(),
            ws: self.ws.clone(),
            commitment: self.commitment,
            config: self.config.clone(),
            keypair,
        }
    }
}

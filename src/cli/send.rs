//! The arguments of `send` and `inspect`, and the send options `demo` and `deploy` share.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use super::{InputFormat, MAX_FANOUT, RateArg, ResendInterval, Route, numeric};

/// Input files shared by every command that reads transactions.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Files of signed transactions, read in order; `-` reads standard input
    #[arg(required = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    /// Input encoding
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub format: InputFormat,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON instead of a table (the same as --output json)
    #[arg(long)]
    pub json: bool,
}

impl SendOpts {
    /// `--via`, checked.
    pub fn route(&self) -> Result<Route, String> {
        self.via.parse()
    }
}

#[derive(Debug, Args, Clone)]
pub struct SendOpts {
    /// Target pace in transactions per second, or `max` to find the highest pace that lands
    /// (deploy: `max` unless given here or in txpace.toml)
    #[arg(
        long,
        default_value = "100",
        value_name = "TX_PER_S|max",
        allow_negative_numbers = true
    )]
    pub rate: RateArg,
    /// Hold a fixed pace strictly after an outage. By default the sends an outage held back
    /// (no leader would take them: frozen, unreachable) are made up afterwards at up to twice
    /// the pace, within an unstaked peer's stream budget, and a throttled stream ends that
    #[arg(long, overrides_with = "catch_up")]
    pub no_catch_up: bool,
    /// Make up what an outage held back although txpace.toml says `catch_up = false`
    #[arg(long, overrides_with = "no_catch_up")]
    pub catch_up: bool,
    /// Bound on every network send, in seconds (0.05 to 600)
    #[arg(long, default_value_t = 5.0, value_name = "SECS", allow_negative_numbers = true,
          value_parser = numeric::send_timeout)]
    pub send_timeout: f64,
    /// Upcoming distinct leaders that also get each send besides the current one. 1 covers the
    /// hand-over between two leaders (a send near the end of a 4-slot turn still reaches the
    /// next leader) at twice the traffic; more multiplies load on every leader's unstaked
    /// stream budget for little gain (at most 16). Not under `--rate max` while unstaked: each
    /// send then goes to the current leader alone (and the next near the turn's end), and the
    /// later leaders take sends of their own ahead of their turns
    #[arg(long, default_value_t = 1, value_name = "K", allow_negative_numbers = true,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(0..=MAX_FANOUT as u64))]
    pub fanout: usize,
    /// QUIC client identity keypair [default: a fresh ephemeral keypair, i.e. unstaked]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub identity: Option<PathBuf>,
    /// Send only to this TPU QUIC address instead of following the leader schedule
    #[arg(long, value_name = "ADDR", conflicts_with = "via")]
    pub tpu: Option<std::net::SocketAddr>,
    /// Send QUIC from this local IP address [default: any]. A leader counts an unstaked
    /// sender's budget (200 streams a second) per source address: two senders on one host
    /// share it unless each sends from its own address
    #[arg(long, value_name = "ADDR", conflicts_with = "via")]
    pub bind: Option<std::net::IpAddr>,
    /// How sends reach the cluster: `tpu` (QUIC streams to the current and next leaders), or
    /// `rpc` / `rpc=URL` (the RPC node's sendTransaction, skipPreflight and maxRetries 0, at
    /// -u's URL or the one given) — the same pace, tracking, journal and report either way
    // Parsed by `SendOpts::route`, not by clap: clap's error would echo the value, and a URL
    // given here may carry an API key.
    #[arg(long, value_name = "tpu|rpc[=URL]", default_value = "tpu")]
    pub via: String,
    /// Resend an unconfirmed transaction after this many slots, or a time (`4s`, `1500ms`)
    #[arg(
        long,
        default_value = "10",
        value_name = "SLOTS|TIME",
        allow_negative_numbers = true
    )]
    pub resend_interval: ResendInterval,
    /// Give up on durable-nonce transactions that have not landed after this many seconds
    #[arg(long, value_name = "SECS", allow_negative_numbers = true,
          value_parser = numeric::deadline)]
    pub deadline: Option<f64>,
    /// Print progress lines and a summary instead of the dashboard (implied without a terminal)
    #[arg(long)]
    pub no_tui: bool,
    /// Write a JSON report of the run and of every transaction here
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub report: Option<PathBuf>,
    /// Put every stream of every transaction in the report (time, leader, TPU, outcome,
    /// acknowledgement time): larger, for looking into why something did not land
    #[arg(long)]
    pub report_sends: bool,
    /// Serve Prometheus metrics of the run at http://ADDR/metrics while it goes on, e.g.
    /// 127.0.0.1:9464 (port 0 picks a free port and prints it)
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// After the run, keep serving --metrics this many seconds (at most 3600) so a scraper
    /// collects the final figures; Ctrl-C ends it sooner
    #[arg(long, value_name = "SECS", default_value_t = 0.0, requires = "metrics",
          allow_negative_numbers = true, value_parser = numeric::linger)]
    pub metrics_linger: f64,
    /// Stream the run as NDJSON to PATH, or `-` for standard output (not with the dashboard
    /// or --output json): a line per state change of a transaction and per stream to a
    /// leader, with its outcome and acknowledgement time
    #[arg(long, value_name = "PATH|-", value_hint = ValueHint::FilePath)]
    pub events: Option<PathBuf>,
    /// Close the dashboard by itself when every transaction is final
    #[arg(long)]
    pub exit_when_done: bool,
    /// Start paused (the dashboard shows everything; press p to start)
    #[arg(long)]
    pub paused: bool,
    /// Dashboard colors: `light` for a light terminal background; `auto` picks light when the
    /// terminal says its background is light (COLORFGBG) [default: auto]. NO_COLOR turns colors
    /// off whatever this says
    #[arg(long, value_enum)]
    pub theme: Option<crate::ui::theme::ThemeName>,
    /// Leave the mouse to the terminal (for selecting text) instead of clicking rows and tabs
    /// and scrolling with the wheel
    #[arg(long, overrides_with = "mouse")]
    pub no_mouse: bool,
    /// Take the mouse although txpace.toml says `mouse = false`
    #[arg(long, overrides_with = "no_mouse")]
    pub mouse: bool,
    /// The dashboard's keys: the defaults with txpace.toml's `[keys]` applied.
    #[arg(skip)]
    pub keymap: crate::ui::keymap::Keymap,
}

#[derive(Debug, Args)]
pub struct SendArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub opts: SendOpts,
    /// Send the valid transactions and list the invalid ones in the report, instead of refusing
    #[arg(long)]
    pub skip_invalid: bool,
    /// Check the batch against the cluster before sending (the default): blockhashes still
    /// valid, fee payers able to pay, durable nonces current, a sample simulated as signed, and
    /// the price against recent fees. A fatal finding refuses the run (exit 2) unless --force
    #[arg(long, overrides_with = "no_preflight")]
    pub preflight: bool,
    /// Send without the preflight checks
    #[arg(long, overrides_with = "preflight")]
    pub no_preflight: bool,
    /// Send even when preflight finds transactions that cannot land as signed
    #[arg(long)]
    pub force: bool,
    /// Keep this run's journal here [default: `journals/` in the data directory, named after the
    /// first input file and a hash of the transactions]. Every send and outcome is journaled,
    /// synced to disk at least once a second, so a run that was killed can be resumed
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub journal: Option<PathBuf>,
    /// Continue the run recorded in the journal: transactions it shows landed, failed or expired
    /// are not sent again, those it shows sent are looked up on chain before any resend, the
    /// rest are sent. Without --resume, a journal that already records sends is refused, so a
    /// batch is never sent twice by accident
    #[arg(long)]
    pub resume: bool,
}

//! The command line: global options as Solana users type them, one subcommand per job.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};

use crate::{
    config::{Commitment, GlobalArgs},
    deploy::elf::MAX_PROGRAM_LEN,
};
pub use crate::{source::InputFormat, workload::OutputFormat};

#[derive(Debug, Parser)]
#[command(
    name = "txpace",
    version,
    about = "Paced Solana TPU sender with a live dashboard of every transaction's fate",
    after_help = crate::exit::HELP
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand understands. Each can also come from a `TXPACE_*` environment
/// variable (a flag wins over it) and the endpoints and commitment from txpace.toml (see
/// [`crate::settings`]). Environment values are never shown in `--help`: a URL there can carry
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode and validate signed transactions and show one row per transaction
    #[command(after_help = crate::exit::HELP)]
    Inspect(InspectArgs),
    /// Generate the founding workload: N unique signed self-transfers
    #[command(after_help = crate::exit::HELP)]
    Gen(GenArgs),
    /// Send signed transactions at a steady pace over QUIC (or an RPC node's sendTransaction,
    /// --via rpc) and watch every one land
    #[command(after_help = crate::exit::HELP)]
    Send(SendArgs),
    /// Start a local validator, generate the founding workload and send it with the dashboard
    #[command(after_help = crate::exit::HELP)]
    Demo(DemoArgs),
    /// Deploy or upgrade a program with the upgradeable BPF loader, its buffer writes paced
    /// through the engine and watched on the dashboard; an interrupted deploy resumes
    #[command(after_help = crate::exit::HELP)]
    Deploy(DeployArgs),
    /// Open the dashboard on a finished run's report (--report) or journal, read-only: queues,
    /// leaders, latency, and every transaction's detail — to look at a headless run later
    #[command(after_help = crate::exit::HELP)]
    View(ViewArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_help = crate::commands::completions::INSTALL)]
    Completions(CompletionsArgs),
    /// Print the manual page of txpace or of one of its commands, or write them all to a directory
    #[command(after_help = crate::commands::man::INSTALL)]
    Man(ManArgs),
    /// Where txpace.toml is, and the settings in force with where each comes from
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A report written by `send --report` or `demo --report`, a deploy's report (one phase at
    /// a time, see --phase), or a send's journal (for a run that wrote no report: its
    /// transactions' fates, without times)
    #[arg(value_hint = ValueHint::FilePath)]
    pub report: PathBuf,
    /// Which phase of a deploy's report to show [default: the writes, else the last phase]
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Dashboard colors [default: auto, or txpace.toml's theme]
    #[arg(long, value_enum)]
    pub theme: Option<crate::ui::theme::ThemeName>,
    /// Leave the mouse to the terminal
    #[arg(long)]
    pub no_mouse: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of txpace.toml (whether or not it exists yet)
    Path,
    /// Print every setting in force as txpace.toml would write it, each with where it comes
    /// from: flag, environment, txpace.toml, Solana CLI config or default
    Show,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for [default: the one $SHELL names]
    #[arg(value_enum)]
    pub shell: Option<clap_complete::Shell>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`send` prints txpace-send(1)) [default: txpace(1)]
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write every page (txpace.1, txpace-send.1, ...) into this directory instead, creating it
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

/// `--with-compute-unit-price`: a price, or `auto` to take it from recent fees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitPrice {
    /// Micro-lamports per compute unit.
    Fixed(u64),
    Auto,
}

fn parse_unit_price(s: &str) -> Result<UnitPrice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(UnitPrice::Auto);
    }
    s.parse::<u64>().map(UnitPrice::Fixed).map_err(|_| {
        format!(
            "{s:?} is neither a price in micro-lamports (0 to {}) nor `auto`",
            u64::MAX
        )
    })
}

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

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of transactions
    #[arg(short = 'n', long, default_value_t = 5000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Signing and funding keypair [default: the CLI config's keypair_path]
    #[arg(short = 'k', long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub keypair: Option<PathBuf>,
    /// Output file
    #[arg(short = 'o', long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub out: PathBuf,
    /// Output encoding
    #[arg(long, value_enum, default_value_t = OutputFormat::Base64)]
    pub format: OutputFormat,
    /// Compute-unit price in micro-lamports per CU, or `auto`: the --fee-percentile of recent
    /// prioritization fees for the payers' accounts
    #[arg(long = "with-compute-unit-price", visible_alias = "cu-price",
          value_name = "MICROLAMPORTS|auto", default_value = "1000000",
          allow_negative_numbers = true, value_parser = parse_unit_price)]
    pub cu_price: UnitPrice,
    /// Which percentile of recent fees `--with-compute-unit-price auto` pays
    #[arg(long, default_value_t = 75, value_name = "0-100", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub fee_percentile: u8,
    /// Compute-unit limit per transaction (at most 1400000, the most a transaction can use)
    #[arg(long = "with-compute-unit-limit", visible_alias = "cu-limit",
          default_value_t = 1_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_CU_LIMIT)))]
    pub cu_limit: u32,
    /// Fund K fresh payer keypairs (saved next to the output) and spread the transfers over them
    #[arg(long, value_name = "K", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub payers: Option<u32>,
}

/// The compute-unit limit a transaction can ask for (the runtime's `MAX_COMPUTE_UNIT_LIMIT`).
pub const MAX_CU_LIMIT: u32 = crate::deploy::compute::MAX_UNIT_LIMIT;

/// The highest fixed pace accepted, in transactions per second: far above what one sender
/// reaches, low enough that the pacer's interval stays a meaningful duration.
pub const MAX_RATE: f64 = 1_000_000.0;

/// A target pace: a number of transactions per second, or `max` for the closed loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateArg {
    Fixed(f64),
    Max,
}

impl std::str::FromStr for RateArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("max") {
            return Ok(RateArg::Max);
        }
        match s.trim().parse::<f64>() {
            Ok(r) if r.is_finite() && (1.0..=MAX_RATE).contains(&r) => Ok(RateArg::Fixed(r)),
            Ok(r) if r.is_finite() && r > MAX_RATE => Err(format!(
                "{s:?} is too fast: give at most {MAX_RATE} transactions per second, or `max`"
            )),
            _ => Err(format!(
                "{s:?} is not a rate: give transactions per second (at least 1) or `max`"
            )),
        }
    }
}

/// The resend interval: a number of slots (`10`, `10slots`) or a time (`4s`, `1500ms`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResendInterval(pub std::time::Duration);

/// Slot time the interval's slot count is converted with.
pub const SLOT_MS: u64 = 400;

/// The longest resend interval: a blockhash expires after about a minute, so a longer wait
/// only matters for durable-nonce transactions, and an hour is plenty for those.
pub const MAX_RESEND_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

impl std::str::FromStr for ResendInterval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let (num, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix('s').filter(|n| !n.ends_with("slot")) {
            (n, 1000.0)
        } else if let Some(n) = t.strip_suffix("slots").or_else(|| t.strip_suffix("slot")) {
            (n, SLOT_MS as f64)
        } else {
            (t, SLOT_MS as f64)
        };
        let secs = match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v * unit_ms / 1000.0,
            _ => {
                return Err(format!(
                    "{s:?} is not an interval: give slots (`10`) or a time (`4s`, `1500ms`)"
                ));
            }
        };
        // Compared as seconds first: a huge count of slots does not fit in a Duration.
        if secs > MAX_RESEND_INTERVAL.as_secs_f64() {
            return Err(format!(
                "{s:?} is too long: the resend interval is at most {} s",
                MAX_RESEND_INTERVAL.as_secs()
            ));
        }
        Ok(ResendInterval(std::time::Duration::from_secs_f64(secs)))
    }
}

/// `--via`: where sends go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// QUIC streams to the leaders' TPUs.
    Tpu,
    /// An RPC node's `sendTransaction`: at `-u`'s URL (`None`) or this one.
    Rpc(Option<String>),
}

impl std::str::FromStr for Route {
    type Err = String;

    /// The value is never quoted back: `rpc=URL` may carry an API key.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tpu" => Ok(Route::Tpu),
            "rpc" => Ok(Route::Rpc(None)),
            _ => match s.strip_prefix("rpc=") {
                Some(url) if !url.is_empty() => {
                    crate::redact::register_url(url);
                    Ok(Route::Rpc(Some(url.to_string())))
                }
                _ => Err("--via takes tpu, rpc, or rpc=URL".to_string()),
            },
        }
    }
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
    /// stream budget for little gain (at most 16).
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

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Number of self-transfers to generate and send
    #[arg(long, default_value_t = 5000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Compute-unit price in micro-lamports per CU
    #[arg(long = "with-compute-unit-price", visible_alias = "cu-price",
          default_value_t = 1_000_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64))]
    pub cu_price: u64,
    /// Compute-unit limit per transaction (at most 1400000)
    #[arg(long = "with-compute-unit-limit", visible_alias = "cu-limit",
          default_value_t = 1_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_CU_LIMIT)))]
    pub cu_limit: u32,
    /// Send with the validator's own (staked) identity instead of an unstaked ephemeral one
    /// (with --nodes, node 0's)
    #[arg(long, conflicts_with = "identity")]
    pub staked: bool,
    /// Validators to run: 1 is a solana-test-validator; 2 to 8 are an equally staked cluster
    /// (txpace-localnet), where the leader changes every 4 slots
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u8).range(1..=8))]
    pub nodes: u8,
    #[command(flatten)]
    pub send: SendOpts,
}

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The program: the .so that `cargo build-sbf` writes to target/deploy/
    #[arg(
        value_name = "PROGRAM.so",
        required_unless_present = "close_buffer",
        value_hint = ValueHint::FilePath
    )]
    pub program: Option<PathBuf>,
    /// Default signer: the fee payer and upgrade authority unless --fee-payer or
    /// --upgrade-authority name others. Every signer is a keypair file, stdin, prompt://
    /// (a seed phrase), ASK or usb://ledger [default: the CLI config's keypair_path]
    #[arg(short = 'k', long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub keypair: Option<PathBuf>,
    /// Fee payer of every transaction (and the buffer's and program's rent), apart from the
    /// upgrade authority [default: the -k/--keypair signer]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub fee_payer: Option<PathBuf>,
    /// Compute-unit price in micro-lamports for every transaction of the deploy (buffer
    /// creation, writes, deploy or upgrade), or `auto`: the --fee-percentile of recent
    /// prioritization fees for the accounts the deploy writes
    #[arg(long, value_name = "MICROLAMPORTS|auto", allow_negative_numbers = true,
          value_parser = parse_unit_price)]
    pub with_compute_unit_price: Option<UnitPrice>,
    /// Compute-unit limit of every transaction [default: with a price, each phase's is
    /// measured by simulating its first transaction, plus a margin; without, none is set]
    #[arg(long, value_name = "UNITS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CU_LIMIT)))]
    pub with_compute_unit_limit: Option<u32>,
    /// Make the program immutable: the deploy or upgrade transaction itself removes its upgrade
    /// authority, so it can never be upgraded again
    #[arg(long = "final", conflicts_with = "buffer_only")]
    pub finalize: bool,
    /// Only create (or resume) and write the buffer; deploy or upgrade from it later, e.g. from
    /// a multisig (the Solana CLI's `program write-buffer`)
    #[arg(long, conflicts_with_all = ["program_id", "max_len"])]
    pub buffer_only: bool,
    /// Signer of the buffer's writes with --buffer-only [default: the upgrade authority]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath, requires = "buffer_only")]
    pub buffer_authority: Option<PathBuf>,
    /// With --buffer-only: once written and checked, hand the buffer to this key (a multisig's
    /// vault, say) in a last transaction
    #[arg(long, value_name = "PUBKEY", requires = "buffer_only")]
    pub new_buffer_authority: Option<String>,
    /// Which percentile of recent fees `--with-compute-unit-price auto` pays
    #[arg(long, default_value_t = 75, value_name = "0-100", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub fee_percentile: u8,
    /// The program's address: a keypair file to deploy a new program (an existing one is
    /// upgraded), or the public key of a program to upgrade [default: NAME-keypair.json next to
    /// the .so, created when missing, as `cargo build-sbf` does]
    #[arg(long, value_name = "KEYPAIR|PUBKEY")]
    pub program_id: Option<String>,
    /// Upgrade authority of the program, which also owns the buffer [default: the -k/--keypair
    /// signer]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub upgrade_authority: Option<PathBuf>,
    /// Buffer account keypair: created when no account exists at its address, resumed when one
    /// does (only the chunks missing or different are written) [default: NAME-buffer.json next
    /// to the .so, removed after a successful deploy]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub buffer: Option<PathBuf>,
    /// Bytes reserved for the program, for later upgrades of a larger build (at most 10 MiB less
    /// the program-data header) [default: the program's size]
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_PROGRAM_LEN as u64))]
    pub max_len: Option<usize>,
    /// Signings allowed per transaction: one whose blockhash expires before it lands is signed
    /// again with a fresh blockhash and re-queued until this many signings (at most 1000)
    #[arg(long, default_value_t = 5, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_sign_attempts: u32,
    /// Close this buffer and return its lamports to the payer instead of deploying (signed by
    /// --upgrade-authority, default the payer)
    #[arg(long, value_name = "KEYPAIR|PUBKEY",
          conflicts_with_all = ["program", "program_id", "buffer", "max_len"])]
    pub close_buffer: Option<String>,
    #[command(flatten)]
    pub send: SendOpts,
}

/// The most upcoming leaders `--fanout` may add to each send: every one multiplies the load on
/// the leaders' stream budgets, and the schedule window the engine follows is only so long.
pub const MAX_FANOUT: usize = 16;

/// Value parsers of the fractional numeric flags. Each rejects what is not a number, NaN,
/// infinities, negatives and values out of the flag's range with a message that says why;
/// clap prefixes it with the flag and exits with 2, a usage error, before anything runs (so no
/// such value can reach `Duration::from_secs_f64`, which panics on them).
pub mod numeric {
    /// `--send-timeout`: shorter than 50 ms no QUIC handshake completes; longer than 10
    /// minutes a stuck send would hold its slot in the pipeline for no purpose.
    pub const SEND_TIMEOUT_S: std::ops::RangeInclusive<f64> = 0.05..=600.0;
    /// `--deadline`: positive, at most a year (it must fit a `Duration` with room to add).
    pub const MAX_DEADLINE_S: f64 = 365.0 * 24.0 * 3600.0;
    /// `--metrics-linger`: up to an hour, several scrape intervals of any setup.
    pub const MAX_LINGER_S: f64 = 3600.0;

    /// A finite, non-negative number of seconds.
    fn seconds(s: &str) -> Result<f64, String> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not a number of seconds"))?;
        if v.is_nan() {
            return Err(format!("{s:?} is not a number of seconds"));
        }
        if v.is_infinite() {
            return Err(format!("{s:?} is not a finite number of seconds"));
        }
        if v < 0.0 {
            return Err(format!("{s:?} is negative: give a number of seconds"));
        }
        Ok(v)
    }

    pub fn send_timeout(s: &str) -> Result<f64, String> {
        let v = seconds(s)?;
        if !SEND_TIMEOUT_S.contains(&v) {
            return Err(format!(
                "{s:?} is out of range: give {} to {} seconds",
                SEND_TIMEOUT_S.start(),
                SEND_TIMEOUT_S.end()
            ));
        }
        Ok(v)
    }

    pub fn linger(s: &str) -> Result<f64, String> {
        let v = seconds(s)?;
        if v > MAX_LINGER_S {
            return Err(format!(
                "{s:?} is out of range: give 0 to {MAX_LINGER_S} seconds"
            ));
        }
        Ok(v)
    }

    pub fn deadline(s: &str) -> Result<f64, String> {
        let v = seconds(s)?;
        if v <= 0.0 || v > MAX_DEADLINE_S {
            return Err(format!(
                "{s:?} is out of range: give more than 0 and at most {MAX_DEADLINE_S} seconds"
            ));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!("100".parse::<RateArg>(), Ok(RateArg::Fixed(100.0)));
        assert_eq!("MAX".parse::<RateArg>(), Ok(RateArg::Max));
        assert_eq!(
            "0.5".parse::<RateArg>(),
            Err("\"0.5\" is not a rate: give transactions per second (at least 1) or `max`".into())
        );
        assert!("fast".parse::<RateArg>().is_err());
    }

    #[test]
    fn resend_intervals_parse_as_slots_or_time() {
        let d = |s: &str| s.parse::<ResendInterval>().map(|r| r.0);
        assert_eq!(d("10"), Ok(Duration::from_millis(4_000)));
        assert_eq!(d("5slots"), Ok(Duration::from_millis(2_000)));
        assert_eq!(d("1 slot"), Ok(Duration::from_millis(400)));
        assert_eq!(d("4s"), Ok(Duration::from_secs(4)));
        assert_eq!(d("1500ms"), Ok(Duration::from_millis(1_500)));
        assert_eq!(
            d("-1"),
            Err("\"-1\" is not an interval: give slots (`10`) or a time (`4s`, `1500ms`)".into())
        );
    }

    #[test]
    fn rates_and_intervals_have_upper_bounds() {
        assert_eq!("1000000".parse::<RateArg>(), Ok(RateArg::Fixed(1e6)));
        assert!("1000001".parse::<RateArg>().is_err());
        assert!("inf".parse::<RateArg>().is_err());
        let d = |s: &str| s.parse::<ResendInterval>().map(|r| r.0);
        assert_eq!(d("3600s"), Ok(Duration::from_secs(3600)));
        assert!(d("3601s").is_err());
        // A count of slots too large for a Duration is an error, not a panic.
        assert!(d("99999999999999999999999").is_err());
    }

    #[test]
    fn seconds_flags_take_their_range_only() {
        assert_eq!(numeric::send_timeout("0.05"), Ok(0.05));
        assert_eq!(numeric::send_timeout("600"), Ok(600.0));
        for bad in ["0.01", "601", "NaN", "inf", "-1", "1e400", "x"] {
            assert!(numeric::send_timeout(bad).is_err(), "{bad}");
        }
        assert_eq!(numeric::deadline("30"), Ok(30.0));
        for bad in ["0", "-0.5", "NaN", "-inf", "1e30"] {
            assert!(numeric::deadline(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integer_flags_keep_their_bounds() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|c| c.command);
        let Ok(Command::Send(send)) = parse(&["txpace", "send", "--fanout", "16", "a"]) else {
            panic!("--fanout 16 is accepted");
        };
        assert_eq!(send.opts.fanout, 16);
        assert!(parse(&["txpace", "send", "--fanout", "17", "a"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "-n", "0"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "--payers", "0"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "--cu-limit", "1400001"]).is_err());
        assert!(parse(&["txpace", "deploy", "p.so", "--max-len", "10485761"]).is_err());
    }

    #[test]
    fn send_defaults() {
        let cli = Cli::try_parse_from(["txpace", "send", "a.b64"]).expect("parses");
        let Command::Send(args) = cli.command else {
            panic!("not send");
        };
        assert_eq!(args.opts.rate, RateArg::Fixed(100.0));
        assert_eq!(args.opts.fanout, 1);
        assert_eq!(args.opts.send_timeout, 5.0);
        assert_eq!(args.opts.resend_interval.0, Duration::from_secs(4));
        assert!(!args.skip_invalid);
    }
}

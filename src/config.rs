//! Where txpace talks to: the RPC and websocket URLs, commitment and default keypair, resolved the
//! way a Solana CLI user expects — flags first, then the CLI's `config.yml`, then local defaults.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use solana_commitment_config::CommitmentLevel;

use crate::redact::{redact_url, register_url};

/// Commitment as a user types it; `processed` is allowed for watching but a transaction is only
/// called Confirmed once it reaches the level asked for.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Commitment {
    Processed,
    Confirmed,
    Finalized,
}

impl Commitment {
    pub fn level(self) -> CommitmentLevel {
        match self {
            Commitment::Processed => CommitmentLevel::Processed,
            Commitment::Confirmed => CommitmentLevel::Confirmed,
            Commitment::Finalized => CommitmentLevel::Finalized,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Commitment::Processed => "processed",
            Commitment::Confirmed => "confirmed",
            Commitment::Finalized => "finalized",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "processed" | "recent" => Some(Commitment::Processed),
            "confirmed" | "single" | "singlegossip" => Some(Commitment::Confirmed),
            "finalized" | "max" | "root" => Some(Commitment::Finalized),
            _ => None,
        }
    }
}

/// The subset of `~/.config/solana/cli/config.yml` that txpace reads.
#[derive(Debug, Default, Deserialize)]
struct CliConfigFile {
    json_rpc_url: Option<String>,
    websocket_url: Option<String>,
    keypair_path: Option<String>,
    commitment: Option<String>,
}

/// Global options as given on the command line (all optional; see [`Resolved`]).
#[derive(Debug, Default, Clone)]
pub struct GlobalArgs {
    pub url: Option<String>,
    pub ws: Option<String>,
    pub commitment: Option<Commitment>,
    pub config: Option<PathBuf>,
    pub keypair: Option<PathBuf>,
}

/// Fully resolved connection settings.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub rpc_url: String,
    pub ws_url: String,
    pub commitment: Commitment,
    /// Keypair from `--keypair` or the CLI config; read only by commands that sign.
    pub keypair_path: Option<PathBuf>,
}

/// The Solana CLI's default config location, if a home directory is known.
pub fn default_cli_config_path() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().join(".config/solana/cli/config.yml"))
}

/// The Solana CLI config `args` name (explicitly, or the default one when it exists) and what it
/// says. An explicit `--config` that cannot be read is an error; the default one is optional.
fn cli_config(args: &GlobalArgs) -> Result<(Option<PathBuf>, CliConfigFile)> {
    Ok(match &args.config {
        Some(path) => (Some(path.clone()), read_cli_config(path)?),
        None => match default_cli_config_path() {
            Some(p) if p.exists() => {
                let file = read_cli_config(&p)?;
                (Some(p), file)
            }
            _ => (None, CliConfigFile::default()),
        },
    })
}

/// Which of the settings txpace reads the Solana CLI config gives, for `txpace config show`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliConfigGives {
    /// The file read; `None` when there is none.
    pub path: Option<PathBuf>,
    pub url: bool,
    pub ws: bool,
    pub commitment: bool,
}

pub fn cli_config_gives(args: &GlobalArgs) -> Result<CliConfigGives> {
    let (path, file) = cli_config(args)?;
    Ok(CliConfigGives {
        path,
        url: file.json_rpc_url.is_some(),
        ws: file.websocket_url.is_some_and(|w| !w.trim().is_empty()),
        commitment: file
            .commitment
            .as_deref()
            .and_then(Commitment::parse)
            .is_some(),
    })
}

/// Resolves global options: flags override the config file, which overrides localhost defaults.
/// An explicit `--config` that cannot be read is an error; the default one is optional.
pub fn resolve(args: &GlobalArgs) -> Result<Resolved> {
    let (_, file) = cli_config(args)?;
    let rpc_url = match (&args.url, &file.json_rpc_url) {
        (Some(u), _) => normalize_url(u)?,
        (None, Some(u)) => normalize_url(u)?,
        (None, None) => "http://127.0.0.1:8899".to_string(),
    };
    let ws_url = match (&args.ws, &args.url, &file.websocket_url) {
        (Some(ws), _, _) => ws.clone(),
        // A URL given on the command line wins over the file's websocket, which belonged to the
        // file's RPC URL.
        (None, Some(_), _) => derive_ws_url(&rpc_url)?,
        (None, None, Some(ws)) if !ws.trim().is_empty() => ws.clone(),
        _ => derive_ws_url(&rpc_url)?,
    };
    let commitment = match (args.commitment, &file.commitment) {
        (Some(c), _) => c,
        (None, Some(c)) => Commitment::parse(c).unwrap_or(Commitment::Confirmed),
        (None, None) => Commitment::Confirmed,
    };
    // From here on every output that passes through `redact::scrub` hides these endpoints' keys.
    register_url(&rpc_url);
    register_url(&ws_url);
    let keypair_path = args
        .keypair
        .clone()
        .or_else(|| file.keypair_path.as_deref().map(expand_tilde))
        .or_else(|| {
            directories::BaseDirs::new().map(|b| b.home_dir().join(".config/solana/id.json"))
        });
    Ok(Resolved {
        rpc_url,
        ws_url,
        commitment,
        keypair_path,
    })
}

fn read_cli_config(path: &Path) -> Result<CliConfigFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading Solana CLI config {}", path.display()))?;
    if text.trim().is_empty() {
        return Ok(CliConfigFile::default());
    }
    serde_yaml::from_str(&text)
        .with_context(|| format!("parsing Solana CLI config {}", path.display()))
}

fn expand_tilde(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), directories::BaseDirs::new()) {
        (Some(rest), Some(b)) => b.home_dir().join(rest),
        _ => PathBuf::from(p),
    }
}

/// Expands the CLI's cluster monikers and checks that the result is an http(s) URL.
pub fn normalize_url(input: &str) -> Result<String> {
    let url = match input.trim() {
        "m" | "mainnet-beta" => "https://api.mainnet-beta.solana.com",
        "d" | "devnet" => "https://api.devnet.solana.com",
        "t" | "testnet" => "https://api.testnet.solana.com",
        "l" | "localhost" => "http://localhost:8899",
        other => other,
    };
    let parsed =
        url::Url::parse(url).with_context(|| format!("invalid RPC URL {:?}", redact_url(url)))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        bail!(
            "RPC URL {} must start with http:// or https://",
            redact_url(url)
        );
    }
    Ok(url.to_string())
}

/// The websocket URL the CLI derives from an RPC URL: http→ws, https→wss, and when an explicit
/// port is given, port + 1 (the pubsub port convention of validators). Path and query are
/// carried over, so a provider's key in either reaches the websocket too.
pub fn derive_ws_url(rpc_url: &str) -> Result<String> {
    let mut url = url::Url::parse(rpc_url)
        .with_context(|| format!("invalid RPC URL {}", redact_url(rpc_url)))?;
    let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
    url.set_scheme(scheme)
        .map_err(|_| anyhow::anyhow!("cannot derive websocket URL from {}", redact_url(rpc_url)))?;
    if let Some(port) = url.port() {
        let next = port
            .checked_add(1)
            .with_context(|| format!("RPC port {port} has no next port for the websocket"))?;
        url.set_port(Some(next))
            .map_err(|_| anyhow::anyhow!("cannot set websocket port"))?;
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monikers_expand() {
        assert_eq!(normalize_url("l").unwrap(), "http://localhost:8899");
        assert_eq!(
            normalize_url("mainnet-beta").unwrap(),
            "https://api.mainnet-beta.solana.com"
        );
        assert_eq!(normalize_url("d").unwrap(), "https://api.devnet.solana.com");
        assert_eq!(
            normalize_url("t").unwrap(),
            "https://api.testnet.solana.com"
        );
        assert_eq!(
            normalize_url("ftp://x").unwrap_err().to_string(),
            "RPC URL ftp://x/ must start with http:// or https://"
        );
    }

    #[test]
    fn ws_is_derived_like_the_cli() {
        assert_eq!(
            derive_ws_url("http://127.0.0.1:8899").unwrap(),
            "ws://127.0.0.1:8900/"
        );
        assert_eq!(
            derive_ws_url("https://api.devnet.solana.com").unwrap(),
            "wss://api.devnet.solana.com/"
        );
        assert_eq!(
            derive_ws_url("https://rpc.example.com:443/k?x=1").unwrap(),
            "wss://rpc.example.com/k?x=1"
        );
    }

    #[test]
    fn flags_override_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config.yml");
        std::fs::write(
            &cfg,
            "json_rpc_url: \"http://10.0.0.1:7000\"\nwebsocket_url: \"\"\nkeypair_path: /k/id.json\ncommitment: finalized\n",
        )
        .unwrap();
        let from_file = resolve(&GlobalArgs {
            config: Some(cfg.clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(from_file.rpc_url, "http://10.0.0.1:7000");
        assert_eq!(from_file.ws_url, "ws://10.0.0.1:7001/");
        assert_eq!(from_file.commitment, Commitment::Finalized);
        assert_eq!(from_file.keypair_path.unwrap(), PathBuf::from("/k/id.json"));

        let flags = resolve(&GlobalArgs {
            config: Some(cfg),
            url: Some("l".into()),
            commitment: Some(Commitment::Processed),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(flags.rpc_url, "http://localhost:8899");
        assert_eq!(flags.ws_url, "ws://localhost:8900/");
        assert_eq!(flags.commitment, Commitment::Processed);
    }

    #[test]
    fn resolved_endpoints_are_scrubbed_from_every_output() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config.yml");
        std::fs::write(&cfg, "").unwrap();
        let r = resolve(&GlobalArgs {
            config: Some(cfg),
            url: Some("https://n.example:8443/Res0lvedKey/?api-key=Res0lvedQuery".into()),
            ..Default::default()
        })
        .unwrap();
        // The websocket carries the path and query over.
        assert_eq!(
            r.ws_url,
            "wss://n.example:8444/Res0lvedKey/?api-key=Res0lvedQuery"
        );
        assert_eq!(
            crate::redact::scrub(format!("rpc {} ws {}", r.rpc_url, r.ws_url)),
            "rpc https://n.example:8443/***?*** ws wss://n.example:8444/***?***"
        );
        assert_eq!(crate::redact::scrub("key Res0lvedKey"), "key ***");
    }

    #[test]
    fn explicit_missing_config_is_an_error() {
        let err = resolve(&GlobalArgs {
            config: Some(PathBuf::from("/nonexistent/config.yml")),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "reading Solana CLI config /nonexistent/config.yml"
        );
    }
}

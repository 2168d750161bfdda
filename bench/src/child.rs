//! The one place every child process of a benchmark is built: txpace (`send`, `gen`, `deploy`,
//! under `perf` too) and the Agave contenders alike. A child gets a clean, explicit
//! configuration, so no file or variable on the machine that runs the benchmark can change a
//! figure:
//!
//! - its environment is cleared: no `TXPACE_*` (txpace's flags read `TXPACE_URL`,
//!   `TXPACE_CONFIG`, …), no `SOLANA_*` (`SOLANA_METRICS_CONFIG` turns on Agave's metrics
//!   agent), no `RUST_LOG` (log volume is CPU), no `NO_COLOR`/`COLORFGBG` (the dashboard's
//!   theme). Only `PATH` is kept, to find programs;
//! - `HOME` and the XDG directories point into the benchmark's scratch directory, so txpace's
//!   data directory (journals, logs; `XDG_DATA_HOME`) and any default config file it could look
//!   for are the run's own;
//! - txpace is given `--config` (the Solana CLI config) and `--txpace-config` (its settings
//!   file), each an empty file: the same as a machine with neither, named explicitly.
//!
//! The Agave contenders hard-code their settings; they get the same environment.

use std::{
    ffi::{OsStr, OsString},
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

use anyhow::{Context, Result};

use crate::measure::txpace_bin;

/// The variables a child keeps from the benchmark's environment.
const KEPT: &[&str] = &["PATH"];

/// A scratch home for children: its directories and the empty configuration files.
#[derive(Debug)]
pub(crate) struct Sandbox {
    home: PathBuf,
    config_home: PathBuf,
    data_home: PathBuf,
    state_home: PathBuf,
    cache_home: PathBuf,
    /// An empty Solana CLI config, for `--config`.
    solana_config: PathBuf,
    /// An empty txpace.toml, for `--txpace-config`.
    txpace_config: PathBuf,
}

impl Sandbox {
    /// Creates the sandbox's directories and empty files under `root`.
    pub fn new(root: &Path) -> Result<Self> {
        let home = root.join("home");
        let sandbox = Sandbox {
            config_home: home.join(".config"),
            data_home: home.join(".local/share"),
            state_home: home.join(".local/state"),
            cache_home: home.join(".cache"),
            solana_config: root.join("empty-solana-cli-config.yml"),
            txpace_config: root.join("empty-txpace.toml"),
            home,
        };
        for dir in [
            &sandbox.config_home,
            &sandbox.data_home,
            &sandbox.state_home,
            &sandbox.cache_home,
        ] {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        for file in [&sandbox.solana_config, &sandbox.txpace_config] {
            std::fs::write(file, "").with_context(|| format!("writing {}", file.display()))?;
        }
        Ok(sandbox)
    }

    /// `program` with the sandbox's environment, built from this process's environment.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        self.command_from(program, std::env::vars_os())
    }

    /// `program` with the sandbox's environment: `parent`'s [`KEPT`] variables and the
    /// sandbox's home and XDG directories, nothing else.
    pub fn command_from(
        &self,
        program: impl AsRef<OsStr>,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear();
        cmd.envs(
            parent
                .into_iter()
                .filter(|(k, _)| KEPT.iter().any(|kept| k == OsStr::new(kept))),
        );
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("XDG_DATA_HOME", &self.data_home)
            .env("XDG_STATE_HOME", &self.state_home)
            .env("XDG_CACHE_HOME", &self.cache_home);
        cmd
    }

    /// txpace's global options naming the empty configuration files; they go before the
    /// subcommand.
    pub fn txpace_globals(&self) -> [OsString; 4] {
        [
            "--config".into(),
            self.solana_config.clone().into(),
            "--txpace-config".into(),
            self.txpace_config.clone().into(),
        ]
    }

    /// `bin` (txpace) in the sandbox, given the empty configuration files; the caller adds the
    /// subcommand and its arguments.
    pub fn txpace_from(
        &self,
        bin: &Path,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Command {
        let mut cmd = self.command_from(bin, parent);
        cmd.args(self.txpace_globals());
        cmd
    }
}

/// A scratch directory of this benchmark process.
pub(crate) fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("txpace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// This benchmark process's sandbox, in its scratch directory, made on first use.
pub(crate) fn sandbox() -> Result<&'static Sandbox> {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    if let Some(s) = SANDBOX.get() {
        return Ok(s);
    }
    let made = Sandbox::new(&tempfile_dir()?.join("child"))?;
    Ok(SANDBOX.get_or_init(|| made))
}

/// The txpace binary beside this benchmark, in the sandbox with the empty configuration files;
/// the caller adds the subcommand and its arguments.
pub(crate) fn txpace() -> Result<Command> {
    Ok(sandbox()?.txpace_from(&txpace_bin()?, std::env::vars_os()))
}

/// `program` (this benchmark's own binary for an Agave contender, or a tool) in the sandbox.
pub(crate) fn command(program: impl AsRef<OsStr>) -> Result<Command> {
    Ok(sandbox()?.command(program))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine set up to mislead a benchmark: every txpace and Solana variable set, a
    /// txpace.toml asking for 1 tx/s, a Solana CLI config pointing at another cluster, and
    /// `HOME` / `XDG_CONFIG_HOME` leading to both.
    fn hostile_machine(dir: &Path) -> Vec<(OsString, OsString)> {
        let home = dir.join("hostile-home");
        let txpace_dir = home.join(".config/txpace");
        let solana_dir = home.join(".config/solana/cli");
        std::fs::create_dir_all(&txpace_dir).unwrap();
        std::fs::create_dir_all(&solana_dir).unwrap();
        let toml = txpace_dir.join("txpace.toml");
        std::fs::write(&toml, "url = \"devnet\"\n[send]\nrate = 1\nfanout = 1\n").unwrap();
        let yml = solana_dir.join("config.yml");
        std::fs::write(
            &yml,
            "json_rpc_url: https://api.devnet.solana.com\ncommitment: finalized\n",
        )
        .unwrap();
        [
            ("PATH", "/usr/bin:/bin".into()),
            ("HOME", home.clone()),
            ("XDG_CONFIG_HOME", home.join(".config")),
            ("XDG_DATA_HOME", home.join(".local/share")),
            ("TXPACE_CONFIG", toml),
            ("TXPACE_SOLANA_CONFIG", yml),
            ("TXPACE_URL", "https://api.devnet.solana.com".into()),
            ("TXPACE_WS", "wss://api.devnet.solana.com".into()),
            ("TXPACE_COMMITMENT", "finalized".into()),
            ("TXPACE_OUTPUT", "json".into()),
            ("TXPACE_RATE", "1".into()),
            (
                "SOLANA_METRICS_CONFIG",
                "host=http://198.51.100.1:8086".into(),
            ),
            ("RUST_LOG", "trace".into()),
            ("NO_COLOR", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (OsString::from(k), v.into_os_string()))
        .collect()
    }

    /// The environment `cmd` is given, as strings (a cleared environment lists only what was
    /// set).
    fn env_of(cmd: &Command) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
            .collect();
        env.sort();
        env
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("txpace-bench-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// On a hostile machine the txpace child's environment is exactly `PATH` and the sandbox's
    /// home and XDG directories, and its command line names the sandbox's empty config files.
    #[test]
    fn a_hostile_environment_reaches_no_txpace_child() {
        let dir = scratch("hostile-env");
        let sandbox = Sandbox::new(&dir.join("child")).unwrap();
        let cmd = sandbox.txpace_from(Path::new("/bin/txpace"), hostile_machine(&dir));
        let home = dir.join("child/home");
        let s = |p: PathBuf| p.to_str().unwrap().to_string();
        let expected = vec![
            ("HOME".to_string(), s(home.clone())),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("XDG_CACHE_HOME".to_string(), s(home.join(".cache"))),
            ("XDG_CONFIG_HOME".to_string(), s(home.join(".config"))),
            ("XDG_DATA_HOME".to_string(), s(home.join(".local/share"))),
            ("XDG_STATE_HOME".to_string(), s(home.join(".local/state"))),
        ];
        assert_eq!(env_of(&cmd), expected);
        let args: Vec<&OsStr> = cmd.get_args().collect();
        assert_eq!(
            args,
            [
                OsStr::new("--config"),
                dir.join("child/empty-solana-cli-config.yml").as_os_str(),
                OsStr::new("--txpace-config"),
                dir.join("child/empty-txpace.toml").as_os_str(),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The configuration the txpace child is given, read by txpace's own command line and
    /// parsers: the config files it names are the sandbox's and empty, so the settings file
    /// gives no pace, fan-out, endpoint or commitment, and the endpoints are the ones the
    /// benchmark passes — not the hostile files' 1 tx/s and devnet.
    #[test]
    fn a_txpace_child_is_given_only_the_benchmarks_settings() {
        let dir = scratch("txpace-settings");
        let sandbox = Sandbox::new(&dir.join("child")).unwrap();
        let mut cmd = sandbox.txpace_from(Path::new("/bin/txpace"), hostile_machine(&dir));
        cmd.args([
            "send",
            "--no-tui",
            "--url",
            "http://127.0.0.1:8899",
            "in.b64",
        ]);
        let argv: Vec<OsString> = std::iter::once(cmd.get_program().to_os_string())
            .chain(cmd.get_args().map(OsStr::to_os_string))
            .collect();
        let cli = <txpace::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
        let toml = cli.global.txpace_config.clone().unwrap();
        let yml = cli.global.config.clone().unwrap();
        assert!(toml.starts_with(&dir) && yml.starts_with(&dir));
        assert_eq!(std::fs::read_to_string(&toml).unwrap(), "");
        assert_eq!(std::fs::read_to_string(&yml).unwrap(), "");
        let settings = txpace::settings::load(Some(&toml)).unwrap();
        assert!(settings.rate.is_none() && settings.fanout.is_none());
        assert!(settings.url.is_none() && settings.commitment.is_none());
        let resolved = txpace::config::resolve(&cli.global.to_args(None)).unwrap();
        assert_eq!(resolved.rpc_url, "http://127.0.0.1:8899");
        assert_eq!(resolved.commitment, txpace::config::Commitment::Confirmed);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The cleared environment is what a spawned child really gets: `env` run through the
    /// builder prints the sandbox's variables and none of this test process's own (cargo sets
    /// `CARGO_*` for every test it runs).
    #[test]
    fn a_spawned_child_sees_only_the_sandbox_environment() {
        let dir = scratch("spawned");
        let sandbox = Sandbox::new(&dir.join("child")).unwrap();
        let env = ["/usr/bin/env", "/bin/env"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("no env program at /usr/bin/env or /bin/env: install coreutils");
        let mut parent: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        parent.extend(
            hostile_machine(&dir)
                .into_iter()
                .filter(|(k, _)| k != "PATH"),
        );
        let out = sandbox.command_from(env, parent).output().unwrap();
        assert!(out.status.success());
        let mut names: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect();
        names.sort();
        let mut expected: Vec<String> = [
            "HOME",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
        ]
        .map(String::from)
        .to_vec();
        if std::env::var_os("PATH").is_some() {
            expected.push("PATH".into());
            expected.sort();
        }
        assert_eq!(names, expected);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

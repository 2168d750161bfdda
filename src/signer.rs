//! Signers as the Solana CLI takes them, wherever txpace takes a keypair (`-k/--keypair`,
//! `--fee-payer`, `--upgrade-authority`, `--buffer-authority`, `--identity`, the CLI config's
//! `keypair_path`):
//!
//! | source | what it reads |
//! | --- | --- |
//! | a path | a JSON keypair file |
//! | `stdin` | a JSON keypair on standard input |
//! | `prompt://` | a seed phrase (and passphrase) typed at the terminal, never echoed; `?key=0/0` or `?full-path=m/44'/501'/0'/0'` picks the derivation |
//! | `ASK` | a seed phrase, derived the legacy way (no derivation path) |
//! | `usb://ledger` | a hardware wallet; this build has no USB wallet support and says so |
//!
//! The seed phrase is read by Agave's own `solana-clap-utils`, so a phrase that works with the
//! Solana CLI works here, and the phrase itself never reaches an output or an error.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use solana_derivation_path::DerivationPath;
use solana_keypair::Keypair;

use crate::keyfile;

/// Where a signer comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    File(String),
    Stdin,
    /// A seed phrase typed at the terminal; `legacy` for `ASK`.
    Prompt {
        derivation: Option<DerivationPath>,
        legacy: bool,
    },
    Usb(String),
}

impl Source {
    /// Reads a source as the Solana CLI writes it. A string that is no URI is a file path.
    pub fn parse(text: &str) -> Result<Source> {
        if text == "ASK" {
            return Ok(Source::Prompt {
                derivation: None,
                legacy: true,
            });
        }
        if text == "stdin" || text == "-" {
            return Ok(Source::Stdin);
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return Ok(Source::File(text.to_string()));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "prompt" => Ok(Source::Prompt {
                derivation: derivation(text, rest)?,
                legacy: false,
            }),
            "usb" => Ok(Source::Usb(text.to_string())),
            "file" => Ok(Source::File(rest.to_string())),
            "stdin" => Ok(Source::Stdin),
            other => bail!(
                "{text}: unknown signer scheme {other}:// (use a keypair file, stdin, prompt://, \
                 ASK or usb://ledger)"
            ),
        }
    }
}

/// The derivation path in a `prompt://` URI's query: `key=ACCOUNT[/CHANGE]` or
/// `full-path=m/44'/501'/…`; none without a query.
fn derivation(uri: &str, rest: &str) -> Result<Option<DerivationPath>> {
    let Some((_, query)) = rest.split_once('?') else {
        return Ok(None);
    };
    let mut found = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let path = match name {
            "key" => DerivationPath::from_key_str(value),
            "full-path" => DerivationPath::from_absolute_path_str(value),
            other => bail!("{uri}: unknown query {other} (use key=ACCOUNT/CHANGE or full-path=…)"),
        }
        .map_err(|e| anyhow!("{uri}: derivation path {value:?}: {e}"))?;
        found = Some(path);
    }
    Ok(found)
}

/// The default signer: `-k/--keypair`, or else the Solana CLI config's `keypair_path`.
pub fn default_signer(keypair_path: Option<&Path>) -> Result<Keypair> {
    let path = keypair_path
        .context("no keypair: pass --keypair or set keypair_path in the Solana CLI config")?;
    read_signer(path, "keypair")
}

/// The keypair `source` names; `name` labels the prompt (`fee payer`, `upgrade authority`).
pub fn read_signer(source: &Path, name: &str) -> Result<Keypair> {
    let text = source.to_string_lossy();
    match Source::parse(&text)? {
        Source::File(path) => keyfile::read_keypair(Path::new(&path)),
        Source::Stdin => solana_keypair::read_keypair(&mut std::io::stdin())
            .map_err(|e| anyhow!("reading the {name} keypair from standard input: {e}")),
        Source::Prompt { derivation, legacy } => {
            solana_clap_utils::keypair::keypair_from_seed_phrase(
                name, false, false, derivation, legacy,
            )
            // The error names what went wrong, never the phrase typed.
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("reading the {name} seed phrase ({text})"))
        }
        Source::Usb(uri) => bail!(
            "{uri}: no USB hardware wallet can be reached: this txpace is built without USB \
             wallet support (hidapi). Sign with a keypair file, stdin or prompt:// instead"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_as_the_solana_cli_writes_them() {
        assert_eq!(
            Source::parse("id.json").unwrap(),
            Source::File("id.json".into())
        );
        assert_eq!(
            Source::parse("file:///tmp/id.json").unwrap(),
            Source::File("/tmp/id.json".into())
        );
        assert_eq!(Source::parse("stdin").unwrap(), Source::Stdin);
        assert_eq!(
            Source::parse("ASK").unwrap(),
            Source::Prompt {
                derivation: None,
                legacy: true
            }
        );
        assert_eq!(
            Source::parse("prompt://").unwrap(),
            Source::Prompt {
                derivation: None,
                legacy: false
            }
        );
        assert_eq!(
            Source::parse("prompt://?key=1/0").unwrap(),
            Source::Prompt {
                derivation: Some(DerivationPath::from_key_str("1/0").unwrap()),
                legacy: false
            }
        );
        assert_eq!(
            Source::parse("usb://ledger").unwrap(),
            Source::Usb("usb://ledger".into())
        );
        assert!(Source::parse("prompt://?key=x/y").is_err());
        assert!(Source::parse("prompt://?colour=blue").is_err());
        assert!(Source::parse("ftp://x").is_err());
    }

    #[test]
    fn a_usb_wallet_is_refused_naming_the_device() {
        let err = read_signer(Path::new("usb://ledger?key=0"), "fee payer")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("usb://ledger?key=0: no USB hardware wallet"),
            "{err}"
        );
    }

    #[test]
    fn a_file_is_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let kp = Keypair::new();
        keyfile::write_private_keypair(&kp, &path).unwrap();
        let read = read_signer(&path, "payer").unwrap();
        assert_eq!(read.to_bytes(), kp.to_bytes());
        let missing = read_signer(&dir.path().join("none.json"), "payer").unwrap_err();
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}

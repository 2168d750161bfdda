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
//! | `usb://ledger` | a hardware wallet (`?key=` as for `prompt://`), through Agave's remote-wallet crate; it asks its owner to approve each signature on the device |
//!
//! The seed phrase is read by Agave's own `solana-clap-utils`, so a phrase that works with the
//! Solana CLI works here, and the phrase itself never reaches an output or an error.

mod hosted;

use std::{path::Path, sync::Arc};

use anyhow::{Context, Result, anyhow, bail};
use solana_derivation_path::DerivationPath;
use solana_keypair::Keypair;
use solana_signer::Signer;

pub use hosted::HostedSigner;

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

/// A signer any thread may use: a keypair, or a hardware wallet hosted on its own thread.
pub type SharedSigner = Arc<dyn Signer + Send + Sync>;

/// The default signer: `-k/--keypair`, or else the Solana CLI config's `keypair_path`.
pub fn default_signer(keypair_path: Option<&Path>) -> Result<SharedSigner> {
    let path = keypair_path
        .context("no keypair: pass --keypair or set keypair_path in the Solana CLI config")?;
    read_signer(path, "keypair")
}

/// The signer `source` names; `name` labels the prompt (`fee payer`, `upgrade authority`).
pub fn read_signer(source: &Path, name: &str) -> Result<SharedSigner> {
    let text = source.to_string_lossy();
    match Source::parse(&text)? {
        Source::Usb(uri) => usb_signer(&uri, name),
        other => Ok(Arc::new(keypair_from(other, &text, name)?)),
    }
}

/// A keypair `source` names, for a role that needs the private key itself: the QUIC identity
/// signs its TLS certificate with it. `why` says so when a hardware wallet is named.
pub fn read_keypair_signer(source: &Path, name: &str, why: &str) -> Result<Keypair> {
    let text = source.to_string_lossy();
    match Source::parse(&text)? {
        Source::Usb(uri) => bail!(
            "{uri}: the {name} must be a keypair ({why}); a hardware wallet cannot be one. \
             Give a keypair file, stdin or prompt://"
        ),
        other => keypair_from(other, &text, name),
    }
}

fn keypair_from(source: Source, text: &str, name: &str) -> Result<Keypair> {
    match source {
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
        Source::Usb(uri) => bail!("{uri}: not a keypair"),
    }
}

/// A hardware wallet through Agave's remote-wallet crate (the locator and `?key=` read as the
/// Solana CLI reads them), hosted on a thread of its own. With no wallet plugged in, unlocked
/// and in its Solana app, the error names the URI and what to check.
fn usb_signer(uri: &str, name: &str) -> Result<SharedSigner> {
    let owned = (uri.to_string(), name.to_string());
    let signer = HostedSigner::spawn(name, move || {
        let (uri, name) = owned;
        let mut manager = None;
        solana_clap_utils::keypair::signer_from_path(
            &clap2::ArgMatches::default(),
            &uri,
            &name,
            &mut manager,
        )
        .map_err(|e| e.to_string())
    })
    .map_err(|e| {
        anyhow!(
            "{uri}: the {name}'s hardware wallet cannot be reached: {e}. Plug it in, unlock it \
             and open its Solana app (on Linux the user also needs the device's udev rules)"
        )
    })?;
    log::info!("{name}: hardware wallet {} at {uri}", signer.pubkey());
    Ok(Arc::new(signer))
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
    fn a_missing_usb_wallet_is_named_with_what_to_check() {
        // No hardware wallet is plugged into a build or CI machine.
        let err = read_signer(Path::new("usb://ledger?key=0"), "fee payer")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("usb://ledger?key=0: the fee payer's hardware wallet cannot be reached: no device found"),
            "{err}"
        );
        assert!(err.contains("Solana app"), "{err}");
        let identity = read_keypair_signer(Path::new("usb://ledger"), "identity", "it signs TLS")
            .unwrap_err()
            .to_string();
        assert!(
            identity.contains("must be a keypair (it signs TLS)"),
            "{identity}"
        );
    }

    #[test]
    fn a_file_is_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let kp = Keypair::new();
        keyfile::write_private_keypair(&kp, &path).unwrap();
        let read = read_signer(&path, "payer").unwrap();
        assert_eq!(read.pubkey(), kp.pubkey());
        assert!(!read.is_interactive());
        let keypair = read_keypair_signer(&path, "identity", "tls").unwrap();
        assert_eq!(keypair.to_bytes(), kp.to_bytes());
        let missing = read_signer(&dir.path().join("none.json"), "payer")
            .err()
            .unwrap();
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}

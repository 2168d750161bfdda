//! The workload as a file `txpace send` reads: base64 or base58 one per line, or a JSON array.

use std::{fs, io::Write, path::Path};

use anyhow::{Context, Result};
use solana_transaction::versioned::VersionedTransaction;

use super::wire_bytes;
use crate::source::{encode_base58, encode_base64};

/// The encodings `gen` writes: every one of them `txpace send` reads back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Base64,
    Base58,
    Json,
}

/// The file contents for `format`: base64 or base58 one per line, or a JSON array of base64.
pub fn encode_transactions(txs: &[VersionedTransaction], format: OutputFormat) -> Result<String> {
    let encoded: Vec<String> = txs
        .iter()
        .map(|tx| {
            let bytes = wire_bytes(tx)?;
            Ok(match format {
                OutputFormat::Base58 => encode_base58(&bytes),
                OutputFormat::Base64 | OutputFormat::Json => encode_base64(&bytes),
            })
        })
        .collect::<Result<_>>()?;
    Ok(match format {
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&encoded).context("encoding JSON")?;
            s.push('\n');
            s
        }
        OutputFormat::Base64 | OutputFormat::Base58 => {
            let mut s = encoded.join("\n");
            s.push('\n');
            s
        }
    })
}

/// Writes the transactions to `path` (replacing it).
pub fn write_transactions(
    path: &Path,
    txs: &[VersionedTransaction],
    format: OutputFormat,
) -> Result<()> {
    let text = encode_transactions(txs, format)?;
    let mut file =
        fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::build_self_transfers;
    use solana_hash::Hash;
    use solana_keypair::Keypair;

    fn decode(line: &str) -> VersionedTransaction {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(line)
            .unwrap();
        bincode::deserialize(&bytes).unwrap()
    }

    #[test]
    fn all_formats_round_trip() {
        let payer = Keypair::new();
        let txs = build_self_transfers(&[payer], 3, 7, 500, Hash::new_from_array([7; 32])).unwrap();
        let b64 = encode_transactions(&txs, OutputFormat::Base64).unwrap();
        let lines: Vec<&str> = b64.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(b64.ends_with('\n'));
        for (line, tx) in lines.iter().zip(&txs) {
            assert_eq!(decode(line), *tx);
        }
        let b58 = encode_transactions(&txs, OutputFormat::Base58).unwrap();
        for (line, tx) in b58.lines().zip(&txs) {
            let bytes = bs58::decode(line).into_vec().unwrap();
            assert_eq!(
                bincode::deserialize::<VersionedTransaction>(&bytes).unwrap(),
                *tx
            );
        }
        let json = encode_transactions(&txs, OutputFormat::Json).unwrap();
        let array: Vec<String> = serde_json::from_str(&json).unwrap();
        assert_eq!(array.len(), 3);
        for (s, tx) in array.iter().zip(&txs) {
            assert_eq!(decode(s), *tx);
        }
    }

    #[test]
    fn the_source_reader_accepts_every_output_format() {
        let dir = tempfile::tempdir().unwrap();
        let payers = [Keypair::new(), Keypair::new()];
        let txs = build_self_transfers(&payers, 4, 1_000_000, 1_000, Hash::new_from_array([9; 32]))
            .unwrap();
        for (format, name) in [
            (OutputFormat::Base64, "t.b64"),
            (OutputFormat::Base58, "t.b58"),
            (OutputFormat::Json, "t.json"),
        ] {
            let path = dir.path().join(name);
            write_transactions(&path, &txs, format).unwrap();
            let loaded = crate::source::load(&[path], crate::source::InputFormat::Auto).unwrap();
            assert!(
                loaded.invalid.is_empty(),
                "{format:?}: {:?}",
                loaded.invalid
            );
            let sigs: Vec<_> = loaded.valid.iter().map(|t| t.signature).collect();
            let want: Vec<_> = txs.iter().map(|t| t.signatures[0]).collect();
            assert_eq!(sigs, want, "{format:?}");
        }
    }
}

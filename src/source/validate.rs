//! The checks a transaction must pass before txpace will send it.
//!
//! The order is the order a user fixes things in: the bytes (size, decoding, trailing bytes), then
//! the message's own consistency, then the signatures. Each failure is one short sentence that
//! names what is wrong with *this* transaction; the wording is part of the interface (tests assert
//! it, users grep for it).

use bincode::Options as _;
use solana_hash::Hash;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;

use super::{
    PACKET_DATA_SIZE,
    sigverify::{self, SigCheck},
};

/// What the rest of txpace needs from a transaction that passed every check.
#[derive(Debug)]
pub(crate) struct Checked {
    pub signature: Signature,
    pub recent_blockhash: Hash,
    pub durable_nonce: bool,
    pub budget: super::ComputeBudget,
}

/// Why a transaction was rejected, and whether its bytes were at least a transaction (so that
/// `inspect` can still show what it is).
#[derive(Debug)]
pub(crate) struct Rejection {
    pub reason: String,
    pub parsed: bool,
}

/// Size check, bincode decode and the no-trailing-bytes rule, without sanitizing: what `inspect`
/// needs to describe a transaction that failed a later check.
pub fn parse_wire(bytes: &[u8]) -> Result<VersionedTransaction, String> {
    if bytes.len() > PACKET_DATA_SIZE {
        return Err(format!(
            "too large: {} bytes > {PACKET_DATA_SIZE}",
            bytes.len()
        ));
    }
    let mut rest = bytes;
    // Fixed-int encoding is what `bincode::deserialize` (and so the validator) uses; trailing
    // bytes are allowed here only so that we can count them.
    let tx: VersionedTransaction = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .deserialize_from(&mut rest)
        .map_err(|err| match *err {
            bincode::ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                format!("truncated: {} bytes end mid-transaction", bytes.len())
            }
            other => format!("not a transaction: {other}"),
        })?;
    match rest.len() {
        0 => Ok(tx),
        1 => Err("1 trailing byte after the transaction".to_string()),
        n => Err(format!("{n} trailing bytes after the transaction")),
    }
}

/// Whether `bytes` are exactly one transaction's wire form (used to break base64/base58 ties).
pub(crate) fn parses(bytes: &[u8]) -> bool {
    parse_wire(bytes).is_ok()
}

/// Size check, bincode decode, no trailing bytes, and `sanitize()`: a transaction the runtime
/// would look at. Signatures are not verified here (that is the expensive part, done in bulk by
/// [`super::load`]).
pub fn decode_wire(bytes: &[u8]) -> Result<VersionedTransaction, String> {
    let tx = parse_wire(bytes)?;
    sanitize(&tx)?;
    Ok(tx)
}

fn sanitize(tx: &VersionedTransaction) -> Result<(), String> {
    // `sanitize()` reports a count mismatch as a bare "index out of bounds"; say what it means.
    let needed = usize::from(tx.message.header().num_required_signatures);
    let have = tx.signatures.len();
    if have != needed {
        let noun = if have == 1 { "signature" } else { "signatures" };
        return Err(format!("has {have} {noun} but its message needs {needed}"));
    }
    tx.sanitize()
        .map_err(|err| format!("does not sanitize: {err}"))
}

/// A transaction that passed every check but its signatures', and those to check.
struct Unverified<'a> {
    checked: Checked,
    signatures: Vec<SigCheck<'a>>,
}

/// Runs every check on each of `wires`; a rejection says whether the bytes were at least a
/// transaction. Their signatures are verified together (see [`sigverify`]), and one by one only
/// when that fails, to say which.
pub(crate) fn check_all(wires: &[&[u8]]) -> Vec<Result<Checked, Rejection>> {
    let prepared: Vec<Result<Unverified, Rejection>> = wires.iter().map(|w| prepare(w)).collect();
    let together: Vec<SigCheck> = prepared
        .iter()
        .flatten()
        .flat_map(|u| u.signatures.iter().copied())
        .collect();
    let all_verify = sigverify::all_verify(&together);
    prepared
        .into_iter()
        .map(|p| {
            let u = p?;
            let failed = if all_verify {
                None
            } else {
                u.signatures.iter().position(|c| !sigverify::strict(c))
            };
            match failed {
                Some(i) => Err(Rejection {
                    reason: format!("signature {i} does not verify"),
                    parsed: true,
                }),
                None => Ok(u.checked),
            }
        })
        .collect()
}

/// Runs every check but the signatures' verification on `wire`.
fn prepare(wire: &[u8]) -> Result<Unverified<'_>, Rejection> {
    let tx = parse_wire(wire).map_err(|reason| Rejection {
        reason,
        parsed: false,
    })?;
    let parsed = |reason| Rejection {
        reason,
        parsed: true,
    };
    sanitize(&tx).map_err(parsed)?;
    let signatures = signatures(&tx, wire).map_err(parsed)?;
    let signature = tx
        .signatures
        .first()
        .copied()
        .ok_or_else(|| parsed("has no signatures".to_string()))?;
    Ok(Unverified {
        checked: Checked {
            signature,
            recent_blockhash: *tx.message.recent_blockhash(),
            durable_nonce: tx.uses_durable_nonce(),
            budget: super::compute_budget(&tx),
        },
        signatures,
    })
}

/// The signatures to verify, each over the message bytes exactly as they arrived, as the
/// validator's sigverify stage does (they equal the re-serialized message because the decoder
/// rejects non-canonical, aliased, lengths); an error for a missing one.
fn signatures<'a>(tx: &VersionedTransaction, wire: &'a [u8]) -> Result<Vec<SigCheck<'a>>, String> {
    let count = tx.signatures.len();
    let message = wire
        .get(compact_u16_len(count) + count * 64..)
        .unwrap_or_default();
    let is_zero = |sig: &Signature| sig.as_ref().iter().all(|&b| b == 0);
    if tx.signatures.iter().all(is_zero) {
        return Err("signature 0 is missing (all zeros): unsigned".to_string());
    }
    let keys = tx.message.static_account_keys();
    tx.signatures
        .iter()
        .enumerate()
        .map(|(i, sig)| {
            if is_zero(sig) {
                return Err(format!(
                    "signature {i} is missing (all zeros): partially signed"
                ));
            }
            // Sanitized: every signature has its key.
            let key = keys
                .get(i)
                .ok_or_else(|| format!("signature {i} does not verify"))?;
            Ok(SigCheck {
                key: key.to_bytes(),
                sig: <[u8; 64]>::from(*sig),
                message,
            })
        })
        .collect()
}

/// Length of the compact-u16 encoding of `n` (7 bits per byte).
fn compact_u16_len(n: usize) -> usize {
    match n {
        0..0x80 => 1,
        0x80..0x4000 => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_rejected_with_reasons() {
        assert_eq!(
            parse_wire(&[0; 1300]).unwrap_err(),
            "too large: 1300 bytes > 1232"
        );
        assert_eq!(
            parse_wire(&[]).unwrap_err(),
            "truncated: 0 bytes end mid-transaction"
        );
        assert_eq!(
            parse_wire(&[1, 2, 3]).unwrap_err(),
            "truncated: 3 bytes end mid-transaction"
        );
        // A 3-byte alias of the length 1 is not canonical compact-u16.
        assert!(
            parse_wire(&[0x81, 0x80, 0x00])
                .unwrap_err()
                .starts_with("not a transaction: ")
        );
    }

    #[test]
    fn compact_u16_lengths() {
        assert_eq!(compact_u16_len(0), 1);
        assert_eq!(compact_u16_len(127), 1);
        assert_eq!(compact_u16_len(128), 2);
        assert_eq!(compact_u16_len(0x3fff), 2);
        assert_eq!(compact_u16_len(0x4000), 3);
    }
}

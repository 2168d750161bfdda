//! Ed25519 checks of the input's signatures, many at once.
//!
//! The validator checks each signature with `verify_strict`. One at a time that costs about
//! 40 µs a signature, most of txpace's start on a file of thousands; a batch (ed25519-dalek's
//! `verify_batch`: one multiscalar multiplication for up to a few hundred signatures) costs about
//! a third of it. A batch that fails says only that something in it is wrong, so its signatures
//! are then checked one by one, strictly, and every rejection still names its transaction and
//! signature.
//!
//! What `verify_strict` refuses and a batch would not notice is checked here first, for every
//! signature: a key or an R of small order, an R whose encoding is not canonical (the strict
//! check compares encodings), and an s that is not reduced (the batch refuses that itself). One
//! difference remains: an R that its signer built with a small-order part on purpose passes a
//! batch with probability at most 1/8, where the strict check refuses it. Only the holder of the
//! key can build one, and the validator refuses it, so such a transaction would not land; no one
//! can make another's transaction pass.

use std::{cell::RefCell, collections::HashMap, sync::LazyLock};

use curve25519_dalek::constants::EIGHT_TORSION;
use ed25519_dalek::{Signature, VerifyingKey};

/// One signature to check: by `key`, over `message`.
#[derive(Clone, Copy)]
pub(crate) struct SigCheck<'a> {
    pub key: [u8; 32],
    pub sig: [u8; 64],
    pub message: &'a [u8],
}

/// Signers' keys, decompressed, per verifying thread, up to this many (then started afresh).
const KEY_CACHE: usize = 4096;

thread_local! {
    /// A file's transactions mostly share a few fee payers, and decompressing the same key
    /// for every signature was a quarter of the one-by-one verification time. `None`
    /// remembers a key that is no curve point.
    static KEYS: RefCell<HashMap<[u8; 32], Option<VerifyingKey>>> = RefCell::new(HashMap::new());
}

/// The key `bytes` decompress to (remembered), or `None` off the curve.
fn key(bytes: [u8; 32]) -> Option<VerifyingKey> {
    KEYS.with_borrow_mut(|keys| {
        if keys.len() >= KEY_CACHE && !keys.contains_key(&bytes) {
            keys.clear();
        }
        *keys
            .entry(bytes)
            .or_insert_with(|| VerifyingKey::from_bytes(&bytes).ok())
    })
}

/// `check` exactly as [`solana_signature::Signature::verify`] (and the validator's sigverify)
/// does it — `verify_strict`, which refuses small-order keys and non-canonical points.
pub(crate) fn strict(check: &SigCheck) -> bool {
    let sig = Signature::from_bytes(&check.sig);
    key(check.key).is_some_and(|k| k.verify_strict(check.message, &sig).is_ok())
}

/// Whether every one of `checks` verifies, in one batch; `false` says only that at least one
/// may not (check them with [`strict`] to know which). Empty is `true`.
pub(crate) fn all_verify(checks: &[SigCheck]) -> bool {
    let mut keys = Vec::with_capacity(checks.len());
    for check in checks {
        match key(check.key) {
            Some(k) if !k.is_weak() && r_is_usable(&check.sig) => keys.push(k),
            _ => return false,
        }
    }
    let messages: Vec<&[u8]> = checks.iter().map(|c| c.message).collect();
    let sigs: Vec<Signature> = checks
        .iter()
        .map(|c| Signature::from_bytes(&c.sig))
        .collect();
    ed25519_dalek::verify_batch(&messages, &sigs, &keys).is_ok()
}

/// The y coordinates (sign bit cleared) of the eight points of small order. A point with one of
/// them is one of these or its negation, which is of small order too.
static SMALL_ORDER_Y: LazyLock<Vec<[u8; 32]>> = LazyLock::new(|| {
    EIGHT_TORSION
        .iter()
        .map(|p| {
            let mut y = p.compress().to_bytes();
            y[31] &= 0x7f;
            y
        })
        .collect()
});

/// R (the signature's first half) is canonically encoded and not of small order, as
/// `verify_strict` requires and a batch does not check.
fn r_is_usable(sig: &[u8; 64]) -> bool {
    let mut y = [0u8; 32];
    y.copy_from_slice(&sig[..32]);
    y[31] &= 0x7f;
    // y ≥ p = 2^255 − 19: the strict check's canonical re-encoding would differ.
    let non_canonical = y[0] >= 0xed && y[1..31].iter().all(|&b| b == 0xff) && y[31] == 0x7f;
    !non_canonical && !SMALL_ORDER_Y.contains(&y)
}

#[cfg(test)]
mod tests {
    use solana_keypair::Keypair;
    use solana_signer::Signer;

    use super::*;

    fn signed(kp: &Keypair, message: &'static [u8]) -> SigCheck<'static> {
        SigCheck {
            key: kp.pubkey().to_bytes(),
            sig: <[u8; 64]>::from(kp.sign_message(message)),
            message,
        }
    }

    /// The remembered key changes nothing: each signature is still checked against its own
    /// message, a key off the curve is refused every time, and the answers equal the SDK's.
    #[test]
    fn remembered_keys_verify_as_the_sdk_does() {
        let kp = Keypair::new();
        let (a, b) = (b"message a".as_slice(), b"message b".as_slice());
        let off_curve = (0u8..=255)
            .map(|i| [i; 32])
            .find(|k| VerifyingKey::from_bytes(k).is_err())
            .expect("an off-curve key");
        let sig_a = signed(&kp, b"message a").sig;
        let sig_b = signed(&kp, b"message b").sig;
        for _ in 0..2 {
            for (key, sig, message) in [
                (kp.pubkey().to_bytes(), sig_a, a),
                (kp.pubkey().to_bytes(), sig_b, b),
                (kp.pubkey().to_bytes(), sig_a, b),
                (kp.pubkey().to_bytes(), sig_b, a),
                (off_curve, sig_a, a),
            ] {
                let sdk = solana_signature::Signature::from(sig).verify(&key, message);
                assert_eq!(strict(&SigCheck { key, sig, message }), sdk);
            }
        }
    }

    #[test]
    fn a_batch_passes_only_when_every_signature_verifies() {
        let (one, two) = (Keypair::new(), Keypair::new());
        let good = vec![signed(&one, b"a"), signed(&two, b"b"), signed(&one, b"c")];
        assert!(all_verify(&good));
        assert!(all_verify(&[]));
        let mut swapped = vec![signed(&one, b"a"), signed(&two, b"b")];
        swapped[1].message = b"a";
        assert!(!all_verify(&swapped));
        assert!(!strict(&swapped[1]));
        let mut wrong_key = vec![signed(&one, b"a")];
        wrong_key[0].key = two.pubkey().to_bytes();
        assert!(!all_verify(&wrong_key));
    }

    /// What `verify_strict` refuses before its equation, the batch refuses too: an R or a key
    /// of small order, and an R encoded with y ≥ p.
    #[test]
    fn small_order_and_non_canonical_points_are_refused_before_the_batch() {
        let kp = Keypair::new();
        let mut check = signed(&kp, b"m");
        assert!(r_is_usable(&check.sig));
        for torsion in EIGHT_TORSION {
            let mut sig = check.sig;
            sig[..32].copy_from_slice(&torsion.compress().to_bytes());
            assert!(!r_is_usable(&sig));
            // The same y with the sign bit flipped is the negated point, also of small order.
            sig[31] ^= 0x80;
            assert!(!r_is_usable(&sig));
        }
        let mut non_canonical = check.sig;
        non_canonical[0] = 0xee;
        non_canonical[1..31].fill(0xff);
        non_canonical[31] = 0x7f;
        assert!(!r_is_usable(&non_canonical));
        let identity = EIGHT_TORSION[0].compress().to_bytes();
        check.key = identity;
        assert!(!all_verify(&[check]));
    }
}

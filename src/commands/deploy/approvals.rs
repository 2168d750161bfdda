//! A hardware wallet asks its owner to approve every signature on the device. A deploy that
//! would have it approve each buffer write is refused before anything is spent, with the way
//! that needs one approval: write the buffer under a keypair, hand the buffer to the wallet,
//! deploy from it.

use std::path::Path;

use anyhow::{Result, bail};
use solana_signer::Signer;

use crate::deploy::plan::Plan;

/// Approvals one person can give on a device, one by one, before a deploy is refused.
const MOST_APPROVALS: usize = 4;

/// Refuses a plan whose writes a hardware wallet would have to approve one by one.
pub(super) fn check(
    plan: &Plan,
    program: &Path,
    payer: &dyn Signer,
    authority: &dyn Signer,
    authority_source: &str,
) -> Result<()> {
    let writes = plan.writes.len();
    if writes <= MOST_APPROVALS {
        return Ok(());
    }
    let program = program.display();
    if payer.is_interactive() {
        bail!(
            "the fee payer {} is a hardware wallet: it signs every transaction, so it would have \
             to approve each of the {writes} buffer writes on the device. Pay with a keypair \
             (--fee-payer KEYPAIR) and keep the wallet as the upgrade authority",
            payer.pubkey()
        );
    }
    if authority.is_interactive() {
        let wallet = authority.pubkey();
        bail!(
            "the authority {wallet} is a hardware wallet: as the buffer's authority it would \
             have to approve each of the {writes} buffer writes on the device. Write the buffer \
             under a keypair and hand it to the wallet, then deploy from it with one approval:\n  \
             txpace deploy {program} --buffer-only --buffer-authority KEYPAIR \
             --new-buffer-authority {wallet}\n  \
             txpace deploy {program} --upgrade-authority {authority_source}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use solana_keypair::Keypair;
    use solana_pubkey::Pubkey;
    use solana_signature::Signature;
    use solana_signer::SignerError;

    use super::*;
    use crate::deploy::{
        chunks::Chunks,
        plan::{Action, Cost},
    };

    /// Stands in for a hardware wallet: interactive, and never asked to sign here.
    struct Wallet(Pubkey);

    impl Signer for Wallet {
        fn try_pubkey(&self) -> Result<Pubkey, SignerError> {
            Ok(self.0)
        }
        fn try_sign_message(&self, _: &[u8]) -> Result<Signature, SignerError> {
            Err(SignerError::Custom("not in this test".into()))
        }
        fn is_interactive(&self) -> bool {
            true
        }
    }

    fn plan(writes: usize) -> Plan {
        Plan {
            create_buffer: true,
            chunks: Chunks {
                size: 1000,
                len: 1000 * writes,
            },
            writes: (0..writes).collect(),
            action: Action::Deploy { max_len: 0 },
            cost: Cost::default(),
        }
    }

    #[test]
    fn a_wallet_is_never_asked_to_approve_every_write() {
        let keypair = Keypair::new();
        let wallet = Wallet(Pubkey::new_unique());
        let so = Path::new("p.so");
        check(&plan(100), so, &keypair, &keypair, "k.json").unwrap();
        check(&plan(MOST_APPROVALS), so, &wallet, &wallet, "usb://ledger").unwrap();

        let err = check(&plan(100), so, &keypair, &wallet, "usb://ledger?key=1")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("approve each of the 100 buffer writes"),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "--buffer-only --buffer-authority KEYPAIR --new-buffer-authority {}",
                wallet.0
            )),
            "{err}"
        );
        assert!(
            err.ends_with("txpace deploy p.so --upgrade-authority usb://ledger?key=1"),
            "{err}"
        );
        let err = check(&plan(100), so, &wallet, &keypair, "k.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("the fee payer"), "{err}");
        assert!(err.contains("--fee-payer KEYPAIR"), "{err}");
    }
}

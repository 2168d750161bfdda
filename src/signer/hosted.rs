//! Signers that must stay on the thread that made them, usable from every thread.
//!
//! Agave's hardware-wallet signer holds its USB device behind an `Rc`, so it can be neither
//! sent nor shared; txpace signs on the engine's tasks and on blocking threads. A
//! [`HostedSigner`] keeps such a signer on a thread of its own and signs there: a message goes
//! in over a channel and its signature comes back. A hardware wallet is a serial device that
//! asks its owner to approve each signature, so one thread is also what it can serve.

use std::{sync::mpsc, thread};

use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::{Signer, SignerError};

/// One message to sign, and where its signature goes.
type Request = (Vec<u8>, mpsc::SyncSender<Result<Signature, SignerError>>);

/// A signer living on its own thread; see the module doc.
pub struct HostedSigner {
    /// The role it signs in (`fee payer`), for the approval prompt in the log.
    name: String,
    pubkey: Pubkey,
    interactive: bool,
    requests: mpsc::Sender<Request>,
}

impl HostedSigner {
    /// Makes a signer with `make` on a new thread named `name` and keeps it there until this
    /// handle is dropped. `make`'s error comes back as it is.
    pub fn spawn<F>(name: &str, make: F) -> Result<Self, String>
    where
        F: FnOnce() -> Result<Box<dyn Signer>, String> + Send + 'static,
    {
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let (requests, inbox) = mpsc::channel::<Request>();
        thread::Builder::new()
            .name(format!("signer {name}"))
            .spawn(move || {
                let signer = match make() {
                    Ok(signer) => signer,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let made = signer
                    .try_pubkey()
                    .map(|key| (key, signer.is_interactive()))
                    .map_err(|e| e.to_string());
                let failed = made.is_err();
                let _ = ready_tx.send(made);
                if failed {
                    return;
                }
                // Ends when every handle is gone.
                for (message, reply) in inbox {
                    let _ = reply.send(signer.try_sign_message(&message));
                }
            })
            .map_err(|e| format!("starting the {name} signer's thread: {e}"))?;
        let (pubkey, interactive) = ready_rx
            .recv()
            .map_err(|_| format!("the {name} signer's thread ended before it was ready"))??;
        Ok(Self {
            name: name.to_string(),
            pubkey,
            interactive,
            requests,
        })
    }
}

impl Signer for HostedSigner {
    fn try_pubkey(&self) -> Result<Pubkey, SignerError> {
        Ok(self.pubkey)
    }

    /// Blocks until the hosted signer answers: for a hardware wallet, until its owner approved
    /// or rejected the signature on the device.
    fn try_sign_message(&self, message: &[u8]) -> Result<Signature, SignerError> {
        let gone = || SignerError::Connection("the signer's thread has ended".into());
        if self.interactive {
            // The log panel shows it on the dashboard; Agave's wallet code also prints a line.
            log::warn!(
                "approve the {}'s signature ({}) on the hardware wallet",
                self.name,
                self.pubkey
            );
        }
        let (reply, answer) = mpsc::sync_channel(1);
        self.requests
            .send((message.to_vec(), reply))
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }

    fn is_interactive(&self) -> bool {
        self.interactive
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use solana_keypair::Keypair;

    use super::*;

    /// Like a hardware wallet's handle: an `Rc`, so neither `Send` nor `Sync`.
    struct ThreadBound(Rc<Keypair>);

    impl Signer for ThreadBound {
        fn try_pubkey(&self) -> Result<Pubkey, SignerError> {
            Ok(self.0.pubkey())
        }
        fn try_sign_message(&self, message: &[u8]) -> Result<Signature, SignerError> {
            self.0.try_sign_message(message)
        }
        fn is_interactive(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_thread_bound_signer_signs_from_other_threads() {
        let kp = Keypair::new();
        let bytes = kp.to_bytes();
        let hosted = std::sync::Arc::new(
            HostedSigner::spawn("test", move || {
                let kp = Keypair::try_from(&bytes[..]).map_err(|e| e.to_string())?;
                Ok(Box::new(ThreadBound(Rc::new(kp))) as Box<dyn Signer>)
            })
            .unwrap(),
        );
        assert_eq!(hosted.pubkey(), kp.pubkey());
        assert!(hosted.is_interactive());
        let signers: Vec<_> = (0..4u8)
            .map(|i| {
                let hosted = hosted.clone();
                thread::spawn(move || (i, hosted.sign_message(&[i; 8])))
            })
            .collect();
        for handle in signers {
            let (i, sig) = handle.join().unwrap();
            assert_eq!(sig, kp.sign_message(&[i; 8]));
        }
    }

    #[test]
    fn a_signer_that_cannot_be_made_says_why() {
        let err = HostedSigner::spawn("fee payer", || Err("no device found".into()))
            .err()
            .unwrap();
        assert_eq!(err, "no device found");
    }
}

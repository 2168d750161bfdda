//! The one transaction state machine. Every change to a transaction's state goes through
//! [`transition`]; counters and queue membership are derived from the transitions it returns, so
//! they can never disagree with the states.
//!
//! ```text
//!            send            send             landed ok (at commitment)
//!   Queued ───────► Sent ─────────► Resent(n) ───────────────► Confirmed
//!                    │                 │      landed with err
//!                    ├─────────────────┼────────────────────► Failed
//!                    │                 │      blockhash no longer valid / deadline
//!                    └─────────────────┴────────────────────► Expired
//!   (re-signed with a fresh blockhash, when the engine holds the signer) ───► Queued
//! ```
//! A transaction can also be confirmed or failed while still Queued (a resumed run, or someone
//! else sent it). Final states accept no event.

use serde::Serialize;

/// Where a transaction is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxState {
    /// Never sent.
    Queued,
    /// Sent once, not yet seen at the requested commitment.
    Sent,
    /// Sent more than once, not yet final.
    Resent,
    /// Landed without error at the requested commitment.
    Confirmed,
    /// Landed with an error: final, never resent.
    Failed,
    /// Its blockhash (or deadline) ran out before it landed: final.
    Expired,
}

impl TxState {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TxState::Confirmed | TxState::Failed | TxState::Expired
        )
    }

    /// The dashboard queue this state belongs to.
    pub fn queue(self) -> Queue {
        match self {
            TxState::Queued | TxState::Sent => Queue::Pending,
            TxState::Resent => Queue::Resent,
            TxState::Confirmed => Queue::Confirmed,
            TxState::Failed => Queue::Failed,
            TxState::Expired => Queue::Expired,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TxState::Queued => "queued",
            TxState::Sent => "sent",
            TxState::Resent => "resent",
            TxState::Confirmed => "confirmed",
            TxState::Failed => "failed",
            TxState::Expired => "expired",
        }
    }
}

/// The five queues users see. `Pending` = never confirmed and sent at most once; `Resent` = sent
/// more than once and not final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Queue {
    Pending = 0,
    Resent = 1,
    Confirmed = 2,
    Failed = 3,
    Expired = 4,
}

impl Queue {
    pub const ALL: [Queue; 5] = [
        Queue::Pending,
        Queue::Resent,
        Queue::Confirmed,
        Queue::Failed,
        Queue::Expired,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Queue::Pending => "Pending",
            Queue::Resent => "Resent",
            Queue::Confirmed => "Confirmed",
            Queue::Failed => "Failed",
            Queue::Expired => "Expired",
        }
    }
}

/// Something that happened to a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxEvent {
    /// A send went out (to at least one leader), whatever its outcome.
    Sent,
    /// Seen on chain at the requested commitment without error.
    Landed,
    /// Seen on chain with an error.
    LandedWithError(String),
    /// Its blockhash is no longer valid (or its deadline passed) and it has not landed.
    Expired,
    /// Its blockhash ran out, but its signer is at hand (deploy): signed again against a fresh
    /// blockhash, it starts over as a new transaction.
    Resigned,
}

/// A state change that [`transition`] accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    pub from: TxState,
    pub to: TxState,
}

/// Why an event was refused; the engine logs these, they never panic.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LifecycleError {
    #[error("transaction is already {0:?}; {1:?} ignored")]
    AlreadyFinal(TxState, TxEvent),
    #[error("no transaction with id {0}")]
    UnknownTransaction(u32),
}

/// Applies `event` to a transaction in `state` that has been sent `sends` times before it.
/// Returns the transition; `from == to` when the state does not change (a third send of a
/// Resent transaction).
pub fn transition(state: TxState, event: &TxEvent) -> Result<Transition, LifecycleError> {
    if state.is_final() {
        return Err(LifecycleError::AlreadyFinal(state, event.clone()));
    }
    let to = match event {
        TxEvent::Sent => match state {
            TxState::Queued => TxState::Sent,
            _ => TxState::Resent,
        },
        TxEvent::Landed => TxState::Confirmed,
        TxEvent::LandedWithError(_) => TxState::Failed,
        TxEvent::Expired => TxState::Expired,
        TxEvent::Resigned => TxState::Queued,
    };
    Ok(Transition { from: state, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_move_queued_to_sent_to_resent() {
        let t = transition(TxState::Queued, &TxEvent::Sent).unwrap();
        assert_eq!((t.from, t.to), (TxState::Queued, TxState::Sent));
        let t = transition(TxState::Sent, &TxEvent::Sent).unwrap();
        assert_eq!(t.to, TxState::Resent);
        let t = transition(TxState::Resent, &TxEvent::Sent).unwrap();
        assert_eq!((t.from, t.to), (TxState::Resent, TxState::Resent));
    }

    #[test]
    fn outcomes_are_final() {
        for s in [TxState::Queued, TxState::Sent, TxState::Resent] {
            assert_eq!(
                transition(s, &TxEvent::Landed).unwrap().to,
                TxState::Confirmed
            );
            assert_eq!(
                transition(s, &TxEvent::LandedWithError("x".into()))
                    .unwrap()
                    .to,
                TxState::Failed
            );
            assert_eq!(
                transition(s, &TxEvent::Expired).unwrap().to,
                TxState::Expired
            );
        }
        for f in [TxState::Confirmed, TxState::Failed, TxState::Expired] {
            for e in [TxEvent::Sent, TxEvent::Landed, TxEvent::Expired] {
                assert_eq!(
                    transition(f, &e).unwrap_err(),
                    LifecycleError::AlreadyFinal(f, e.clone())
                );
            }
        }
    }

    #[test]
    fn resigning_starts_over() {
        for s in [TxState::Queued, TxState::Sent, TxState::Resent] {
            assert_eq!(
                transition(s, &TxEvent::Resigned).unwrap().to,
                TxState::Queued
            );
        }
        assert!(transition(TxState::Expired, &TxEvent::Resigned).is_err());
    }

    #[test]
    fn queues_follow_states() {
        assert_eq!(TxState::Queued.queue(), Queue::Pending);
        assert_eq!(TxState::Sent.queue(), Queue::Pending);
        assert_eq!(TxState::Resent.queue(), Queue::Resent);
        assert_eq!(TxState::Expired.queue(), Queue::Expired);
        assert_eq!(
            LifecycleError::AlreadyFinal(TxState::Confirmed, TxEvent::Sent).to_string(),
            "transaction is already Confirmed; Sent ignored"
        );
    }
}

//! Continuing an interrupted run from its journal: final transactions stay final and are never
//! sent again; sent ones are looked up on chain (with history) before any resend.

use tokio::time::Instant;

use super::{
    confirm::Confirmer, dispatch::Dispatcher, fact::Prior, lifecycle::TxEvent, store::TxStore,
};

/// Carries over what an interrupted run's journal knew; see [`super::spawn_resumed`].
pub(super) fn apply_prior(
    prior: Vec<Option<Prior>>,
    store: &mut TxStore,
    confirmer: &mut Confirmer,
    dispatcher: &mut Dispatcher,
    now: Instant,
) {
    for (id, p) in prior.into_iter().enumerate() {
        let id = id as u32;
        let Some(p) = p else { continue };
        let note = Some("before resume".to_string());
        match p {
            Prior::Sent { sends } => {
                if store.restore_sends(id, sends, now).is_ok() {
                    confirmer.look_up_with_history(id);
                    dispatcher.resend_later(id, now);
                }
            }
            Prior::Confirmed {
                slot,
                commitment,
                sends,
            } => {
                restore_final_sends(store, id, sends, now);
                store.record_landed(id, slot, now);
                if store.apply(id, TxEvent::Landed, now, note).is_ok() {
                    confirmer.settled(id, Some(commitment), store);
                }
            }
            Prior::Failed { slot, error, sends } => {
                restore_final_sends(store, id, sends, now);
                store.record_landed(id, slot, now);
                if store
                    .apply(id, TxEvent::LandedWithError(error), now, note)
                    .is_ok()
                {
                    confirmer.settled(id, None, store);
                }
            }
            Prior::Expired { sends } => {
                restore_final_sends(store, id, sends, now);
                if store.apply(id, TxEvent::Expired, now, note).is_ok() {
                    confirmer.settled(id, None, store);
                }
            }
        }
    }
    dispatcher.keep_queued(store);
}

/// A final transaction's sends from before the resume still count in its record and in the
/// run's sends-per-landed.
fn restore_final_sends(store: &mut TxStore, id: u32, sends: u32, now: Instant) {
    if sends > 0 {
        let _ = store.restore_sends(id, sends, now);
    }
}

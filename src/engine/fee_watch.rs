//! Recent fees for the batch's most-written accounts, asked at the start of the run and every
//! [`REFRESH`] after, so the header and the detail view say where the batch's price sits while
//! the cluster's appetite changes. A node that does not answer this call (some providers
//! refuse it) only leaves the fee line out: it says nothing about the RPC's health. When the
//! batch pays less than most recent slots charged, a warning says so once (and again if it
//! recovers and falls behind later): that is often why a batch lands slowly.

use std::{sync::Arc, time::Duration};

use solana_pubkey::Pubkey;
use tokio::{sync::mpsc, time::Instant};

use super::{
    net::{Chain, ChainError},
    snapshot::FeeView,
    update::{ChainUpdate, Update},
};

/// How often recent fees are asked again: the cluster keeps 150 slots (a minute) of them.
pub const REFRESH: Duration = Duration::from_secs(30);

pub(super) struct FeeWatch {
    accounts: Vec<Pubkey>,
    batch_price: u64,
    view: Option<FeeView>,
    asked_at: Option<Instant>,
    inflight: bool,
    /// The last answer found the batch below the median (warned once per fall).
    below: bool,
}

impl FeeWatch {
    pub(super) fn new(accounts: Vec<Pubkey>, batch_price: u64) -> Self {
        Self {
            accounts,
            batch_price,
            view: None,
            asked_at: None,
            inflight: false,
            below: false,
        }
    }

    /// Asks again when the last answer is [`REFRESH`] old.
    pub(super) fn poll(
        &mut self,
        now: Instant,
        chain: &Arc<dyn Chain>,
        updates: &mpsc::UnboundedSender<Update>,
    ) {
        if self.accounts.is_empty()
            || self.inflight
            || self.asked_at.is_some_and(|t| now - t < REFRESH)
        {
            return;
        }
        self.inflight = true;
        self.asked_at = Some(now);
        let (chain, accounts, tx) = (chain.clone(), self.accounts.clone(), updates.clone());
        tokio::spawn(async move {
            let result = chain.recent_fees(accounts).await;
            let _ = tx.send(Update::Chain(ChainUpdate::Fees(result)));
        });
    }

    pub(super) fn on_answer(&mut self, result: Result<Vec<u64>, ChainError>) {
        self.inflight = false;
        match result {
            Ok(mut recent) if !recent.is_empty() => {
                recent.sort_unstable();
                let view = FeeView {
                    recent: Arc::new(recent),
                    batch_price: self.batch_price,
                };
                let below = view.below_median();
                if below && !self.below {
                    log::warn!(
                        "the batch's median price, {} µlamports/CU, is p{} of what the last {} \
                         slots charged for its accounts (median {}): it may wait behind \
                         better-paying transactions",
                        view.batch_price,
                        view.rank(view.batch_price),
                        view.recent.len(),
                        view.median()
                    );
                }
                self.below = below;
                self.view = Some(view);
            }
            Ok(_) => {}
            Err(e) => log::debug!("recent fees: {e}"),
        }
    }

    pub(super) fn view(&self) -> Option<FeeView> {
        self.view.clone()
    }
}

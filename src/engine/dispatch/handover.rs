//! The hand-over between two leaders' turns: a transaction whose streams are all still
//! unanswered when the next leader's turn begins — held by a slow leader, one that delays
//! reading us (its budget spent, its credit withheld) or whose link repairs a loss — and that
//! was not sent to the new leader goes to it too, as a copy beside the pace (see `copies`). The
//! old leader leads no more: what it has not read by now it may never include, and waiting a
//! whole resend interval (4 s) to find out cost ten slots per such transaction. A send whose
//! targets included the new leader (the fan-out: see `engine::leaders::fanout`) is not sent
//! again; nor is any while our own streams to the new leader wait on our side for the wire
//! (`LeaderBook::link_full`): those are waiting for the link, not held by a leader, and more
//! would only queue behind them.

use solana_pubkey::Pubkey;

use super::Dispatcher;

impl Dispatcher {
    /// `leader`'s turn has begun: the sends still unanswered that did not go to it are due now.
    /// Returns how many.
    pub(in crate::engine) fn hand_over(&mut self, leader: Pubkey) -> usize {
        let mut due: Vec<u32> = self
            .rounds
            .iter()
            .filter(|(_, r)| !r.accepted && !r.leaders.contains(&leader))
            .map(|((id, _), _)| *id)
            .collect();
        due.sort_unstable();
        due.dedup();
        for id in &due {
            self.copy(*id);
        }
        if !due.is_empty() {
            log::debug!(
                "{} unanswered sends go to {leader} too: its turn has begun",
                due.len()
            );
        }
        due.len()
    }
}

//! The simulated cluster's senders and 4.0 leaders, as tests script them: other senders beside
//! the engine's, each leader's rules and counters, a leader that stops reading.

use super::*;

impl SimCluster {
    /// The sender the engine uses when given the cluster itself as its transport.
    pub fn engine_sender(&self) -> SimSender {
        SimSender {
            cluster: self.clone(),
            inner: self.me.clone(),
        }
    }

    /// Another sender, from `ip` (the engine's is [`DEFAULT_SENDER_IP`]), with a fresh
    /// identity holding `stake_share` of the stake (unstaked below 1/50,000). It connects
    /// whenever told, with no limit of its own on new connections (a scripted client, to drive
    /// the leader's rules).
    pub fn sender(&self, ip: IpAddr, stake_share: f64) -> SimSender {
        SimSender {
            cluster: self.clone(),
            inner: SenderInner::new(ip, Pubkey::new_unique(), Some(stake_share), false),
        }
    }

    /// A sender from `ip` presenting `identity`, which holds `stake_share` of the stake: senders
    /// sharing a staked identity share its key, wherever they send from.
    pub fn sender_with(&self, ip: IpAddr, identity: Pubkey, stake_share: f64) -> SimSender {
        SimSender {
            cluster: self.clone(),
            inner: SenderInner::new(ip, identity, Some(stake_share), false),
        }
    }

    /// The server of the leader at `addr` (`None`: no node there).
    pub(super) fn server(&self, addr: SocketAddr) -> Option<Arc<Leader>> {
        self.leader_of_addr(addr)?;
        let mut s = self.lock();
        let rules = s.rules.get(&addr).copied().unwrap_or_default();
        Some(
            s.servers
                .entry(addr)
                .or_insert_with(|| Leader::new(rules))
                .clone(),
        )
    }

    pub(super) fn link(&self, addr: SocketAddr) -> Option<Arc<LinkModel>> {
        self.lock().links.get(&addr).cloned()
    }

    /// The leader at `addr` follows `rules` (the test validator's, [`Rules::default`], unless
    /// set).
    pub fn set_rules(&self, addr: SocketAddr, rules: Rules) {
        let server = {
            let mut s = self.lock();
            s.rules.insert(addr, rules);
            s.servers.get(&addr).cloned()
        };
        if let Some(l) = server {
            l.set_rules(rules);
        }
    }

    /// What the leader at `addr` counted (its `StreamerStats`).
    pub fn leader_counters(&self, addr: SocketAddr) -> LeaderCounters {
        self.server(addr).map(|l| l.counters()).unwrap_or_default()
    }

    /// While off, the leader at `addr` reads none of anyone's streams (a frozen or overloaded
    /// node; to a sender, also what its budget taken by others on its address looks like):
    /// the credit it granted is used up, then opens wait.
    pub fn set_reading(&self, addr: SocketAddr, on: bool) {
        if let Some(l) = self.server(addr) {
            l.set_reading(on);
        }
    }

    /// The leader at `addr` reads at most `per_second` streams a second from each unstaked key
    /// (in its 100 ms windows; 200, Agave's `MAX_UNSTAKED_TPS`, unless set); `None` puts back
    /// the default. Over it, reads wait for the window to end.
    pub fn set_stream_limit(&self, addr: SocketAddr, per_second: Option<u32>) {
        let mut rules = self.lock().rules.get(&addr).copied().unwrap_or_default();
        rules.unstaked_per_window = match per_second {
            Some(k) => u64::from(k.div_ceil(10)),
            None => Rules::default().unstaked_per_window,
        };
        self.set_rules(addr, rules);
    }
}

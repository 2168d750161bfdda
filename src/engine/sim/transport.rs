//! The simulated cluster as the engine's [`Transport`]: the engine's own sender (`client`),
//! and any other sender a test makes, each sending to the cluster's 4.0 leaders (`leader`).

use super::*;

impl SimCluster {
    /// A send to a hanging leader: it never completes, until the engine gives the connection
    /// up (or its send timeout ends it).
    pub(super) async fn hang(&self, addr: SocketAddr) -> SendError {
        let seen = self.abandons(addr);
        loop {
            let notified = self.abandon_signal.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.abandons(addr) != seen {
                return SendError::Connection(ABANDONED.into());
            }
            notified.await;
        }
    }
}

impl Transport for SimSender {
    fn send(
        &self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        self.clone().send(addr, wire, handoff).boxed()
    }

    fn prepare(&self, addrs: &[SocketAddr]) {
        SimSender::prepare(self, addrs);
    }

    fn abandon(&self, addr: SocketAddr) {
        *self.cluster.lock().abandoned.entry(addr).or_default() += 1;
        SimSender::abandon(self, addr);
        self.cluster.abandon_signal.notify_waiters();
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        SimSender::link_state(self, addr)
    }
}

impl Transport for SimCluster {
    fn send(
        &self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        self.engine_sender().send(addr, wire, handoff).boxed()
    }

    fn prepare(&self, addrs: &[SocketAddr]) {
        self.engine_sender().prepare(addrs);
    }

    fn abandon(&self, addr: SocketAddr) {
        Transport::abandon(&self.engine_sender(), addr);
    }

    fn path_figures(&self, addr: SocketAddr) -> Option<crate::engine::net::PathFigures> {
        let link = self.lock().links.get(&addr).map(|l| l.figures());
        self.engine_sender().path_figures(addr, link)
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        self.engine_sender().link_state(addr)
    }
}

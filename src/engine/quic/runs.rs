//! Which of a leader's connections takes the next stream: the least loaded — and, on a link
//! that loses datagrams, the same one for a run of [`RUN_STREAMS`] consecutive streams.
//!
//! A 4.0 leader reads each connection's streams one at a time, so a datagram lost on its way
//! holds back every later stream of that connection until the repair reaches the leader, a
//! loss detection and half a round trip later (about 1.6 round trips after it was sent), and
//! it then reads them at once; past 20 of an unstaked address's streams in a 100 ms window it
//! delays the rest. Links lose datagrams in bursts (`hostile` loses four in a row on average),
//! and a burst is mostly consecutive streams. Given to the least loaded connection each,
//! consecutive streams went round the pool, so one burst held back a round trip's worth of
//! streams on four connections at once, repaired together: one release of 20 or so. Given in
//! runs, a burst mostly lands in one run (two at a boundary), and the connection holding it
//! usually takes its next run only after the others took theirs — its held streams keep it
//! the most loaded (nothing else orders the runs). What one repair releases is then
//! about a run, beside the 10 per window the pace brings at 100 tx/s — as long as a
//! connection's next run starts after the loss is detected (streams sent then reach the leader
//! after the repair): the other connections' runs must last about 1.1 round trips, 36 streams
//! at 100 tx/s on a 320 ms link, and the other seven of a full pool of eight take 35.
//!
//! Measured against a server reading as a 4.0 leader does, through a 320 ms link losing 5% in
//! bursts of 4 (`wan_tests::through_bursts_of_loss_the_pool_spreads_and_every_stream_is_accepted`,
//! 1,000 streams at 100 tx/s, 17 runs each way): streams delayed after the pool's first 3 s,
//! 4–27 (mean 12.6) given least-loaded, 2–12 (mean 6.6) in runs of five; the streams' time to
//! the server's acknowledgment the same either way (p99 0.98–1.04 s, three runs each). On a
//! clean link a run buys nothing, and each stream goes to the least loaded connection; a link
//! is lossy here once quinn counted one datagram of the pool lost, as for the pool's growth.
//!
//! A stream that waits for credit and moves to a connection that just joined takes the least
//! loaded ([`least_loaded`]) without touching the run: the run is the fresh streams'.

/// Consecutive streams one connection takes on a link that loses datagrams.
pub(super) const RUN_STREAMS: usize = 5;

/// One connection as the choice sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    /// The connection's id in its pool (`Pooled::id`: never reused, unlike quinn's
    /// `stable_id`, an address).
    pub(super) id: u64,
    /// Our streams on it.
    pub(super) streams: usize,
    /// Whether the leader has granted it credit (a new one takes streams once admitted).
    pub(super) admitted: bool,
}

/// The run under way: which connection takes it, and how many more streams it takes.
#[derive(Debug, Default)]
pub(super) struct Runs {
    current: Option<(u64, usize)>,
}

impl Runs {
    /// The index in `candidates` of the connection to take the next stream: the run's, while
    /// the link is `lossy`, it is still there and admitted and the run is not over; else the
    /// admitted connection with the fewest of our streams (the first of equals), else the one
    /// with fewest among all, which starts the next run. `None` when there is none.
    pub(super) fn pick(&mut self, candidates: &[Candidate], lossy: bool) -> Option<usize> {
        if lossy
            && let Some((id, left)) = self.current.as_mut()
            && *left > 0
            && let Some(i) = candidates.iter().position(|c| c.id == *id && c.admitted)
        {
            *left -= 1;
            return Some(i);
        }
        let picked = least_loaded(candidates);
        self.current = picked
            .filter(|_| lossy)
            .map(|i| (candidates[i].id, RUN_STREAMS - 1));
        picked
    }
}

/// The index in `candidates` of the admitted connection with the fewest of our streams (the
/// first of equals), else of the one with fewest among all; `None` when there is none.
pub(super) fn least_loaded(candidates: &[Candidate]) -> Option<usize> {
    let fewest = |admitted_only: bool| {
        candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.admitted || !admitted_only)
            .min_by_key(|(_, c)| c.streams)
            .map(|(i, _)| i)
    };
    fewest(true).or_else(|| fewest(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(loads: &[usize]) -> Vec<Candidate> {
        loads
            .iter()
            .enumerate()
            .map(|(id, &streams)| Candidate {
                id: id as u64,
                streams,
                admitted: true,
            })
            .collect()
    }

    /// Picks `n` streams, each adding one to its connection's load; the connections chosen.
    fn picks(runs: &mut Runs, conns: &mut [Candidate], lossy: bool, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let i = runs.pick(conns, lossy).expect("a connection");
                conns[i].streams += 1;
                conns[i].id
            })
            .collect()
    }

    #[test]
    fn on_a_lossy_link_consecutive_streams_go_to_one_connection_in_runs() {
        let mut conns = pool(&[0, 0, 0]);
        let got = picks(&mut Runs::default(), &mut conns, true, 3 * RUN_STREAMS);
        let run = |id| vec![id; RUN_STREAMS];
        assert_eq!(got, [run(0), run(1), run(2)].concat());
    }

    #[test]
    fn on_a_clean_link_each_stream_goes_to_the_least_loaded() {
        let mut conns = pool(&[0, 0, 0]);
        let got = picks(&mut Runs::default(), &mut conns, false, 6);
        assert_eq!(got, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn a_run_ends_when_its_connection_goes_or_is_not_admitted() {
        let mut runs = Runs::default();
        let mut conns = pool(&[0, 3, 4]);
        assert_eq!(picks(&mut runs, &mut conns, true, 2), [0, 0]);
        conns.remove(0);
        assert_eq!(picks(&mut runs, &mut conns, true, 2), [1, 1]);
        conns[0].admitted = false;
        assert_eq!(picks(&mut runs, &mut conns, true, 1), [2]);
    }

    #[test]
    fn a_stream_moving_to_the_least_loaded_leaves_the_run_as_it_was() {
        let mut runs = Runs::default();
        let mut conns = pool(&[0, 3]);
        assert_eq!(picks(&mut runs, &mut conns, true, 2), [0, 0]);
        conns.push(Candidate {
            id: 2,
            streams: 0,
            admitted: true,
        });
        assert_eq!(least_loaded(&conns), Some(2));
        let rest = picks(&mut runs, &mut conns, true, RUN_STREAMS - 2);
        assert_eq!(rest, vec![0; RUN_STREAMS - 2]);
    }

    #[test]
    fn a_new_connection_takes_streams_only_once_admitted_unless_it_is_the_only_one() {
        let mut conns = pool(&[9, 0]);
        conns[1].admitted = false;
        assert_eq!(Runs::default().pick(&conns, true), Some(0));
        let only = [Candidate {
            id: 7,
            streams: 0,
            admitted: false,
        }];
        assert_eq!(Runs::default().pick(&only, true), Some(0));
        assert_eq!(Runs::default().pick(&[], true), None);
    }
}

//! One direction of a link: what happens to each datagram that enters it, decided the moment it
//! enters. Pure and deterministic: the time is an argument and the randomness a seeded RNG, so
//! the same seed and the same arrivals give the same fates.
//!
//! A datagram first waits for the bandwidth cap (tail-dropped when its queue is full), may then
//! be lost, and otherwise arrives one one-way delay plus the jitter's offset after it left the
//! cap. Without `reorder` an arrival is never earlier than the previous one's: the queueing
//! jitter already moves too slowly to reorder, and this guarantees it when the link changes.

use std::time::{Duration, Instant};

use rand::{SeedableRng, rngs::StdRng};

use crate::{
    bottleneck::Bottleneck,
    jitter::Jitter,
    loss::{GilbertElliott, Lost},
    spec::LinkSpec,
};

/// Why a datagram did not get through; the relay counts each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// An independent loss of the link.
    Loss,
    /// A loss inside a burst (Gilbert–Elliott's bad state).
    Burst,
    /// The bandwidth cap's queue was full (tail drop).
    Queue,
    /// The relay is blackholed.
    Blackhole,
    /// The relay's own socket would not take the datagram (its send buffer was full).
    SendFailed,
    /// The relay could not open an upstream socket for a new client.
    NoUpstream,
}

impl Cause {
    pub const ALL: [Cause; 6] = [
        Cause::Loss,
        Cause::Burst,
        Cause::Queue,
        Cause::Blackhole,
        Cause::SendFailed,
        Cause::NoUpstream,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Loss => "loss",
            Cause::Burst => "burst",
            Cause::Queue => "queue",
            Cause::Blackhole => "blackhole",
            Cause::SendFailed => "send_failed",
            Cause::NoUpstream => "no_upstream",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// What becomes of one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Delivered at this time.
    Deliver(Instant),
    Drop(Cause),
}

/// One direction of a link with its state.
#[derive(Debug, Clone)]
pub struct Direction {
    delay: Duration,
    reorder: bool,
    jitter: Jitter,
    loss: GilbertElliott,
    cap: Option<Bottleneck>,
    last_arrival: Option<Instant>,
    rng: StdRng,
}

impl Direction {
    /// A fresh direction with `spec`'s conditions; `seed` fixes every random choice.
    pub fn new(spec: &LinkSpec, seed: u64, now: Instant) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let jitter = Jitter::new(spec.one_way_jitter(), spec.reorder, now, &mut rng);
        let loss = match spec.burst {
            Some(burst) => GilbertElliott::bursty(spec.loss, burst, &mut rng),
            None => GilbertElliott::independent(spec.loss),
        };
        let cap = spec
            .rate
            .zip(spec.queue_bytes())
            .map(|(rate, queue)| Bottleneck::new(rate, queue));
        Direction {
            delay: spec.one_way(),
            reorder: spec.reorder,
            jitter,
            loss,
            cap,
            last_arrival: None,
            rng,
        }
    }

    /// The same as [`Direction::new`], but never delivering before what `previous` already
    /// scheduled (unless the new link reorders): a change of link does not reorder by itself.
    pub fn replacing(spec: &LinkSpec, seed: u64, now: Instant, previous: &Direction) -> Self {
        let mut next = Direction::new(spec, seed, now);
        next.last_arrival = previous.last_arrival;
        next
    }

    /// Decides the fate of a datagram of `len` bytes entering at `now`.
    pub fn admit(&mut self, now: Instant, len: usize) -> Fate {
        let left = match &mut self.cap {
            Some(cap) => match cap.admit(now, len) {
                Some(left) => left,
                None => return Fate::Drop(Cause::Queue),
            },
            None => now,
        };
        if let Some(lost) = self.loss.next(&mut self.rng) {
            return Fate::Drop(match lost {
                Lost::Random => Cause::Loss,
                Lost::Burst => Cause::Burst,
            });
        }
        let offset = self.jitter.offset(now, &mut self.rng);
        let delay = (self.delay.as_secs_f64() + offset).max(0.0);
        let mut at = left + Duration::from_secs_f64(delay);
        if !self.reorder
            && let Some(last) = self.last_arrival
        {
            at = at.max(last);
        }
        self.last_arrival = Some(self.last_arrival.map_or(at, |last| last.max(at)));
        Fate::Deliver(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(spec: &str, seed: u64, n: usize) -> (Instant, Vec<Fate>) {
        let t0 = Instant::now();
        let mut link = Direction::new(&spec.parse().unwrap(), seed, t0);
        let fates = (0..n)
            .map(|i| link.admit(t0 + Duration::from_millis(i as u64), 100))
            .collect();
        (t0, fates)
    }

    #[test]
    fn the_same_seed_gives_the_same_fates() {
        let spec = "rtt:100ms,jitter:20ms,reorder,loss:3%,burst:2";
        // Each run has its own start: compare delays from it.
        let delays = |seed| -> Vec<Option<Duration>> {
            let (t0, fates) = fates(spec, seed, 2000);
            fates
                .into_iter()
                .map(|f| match f {
                    Fate::Deliver(at) => Some(at - t0),
                    Fate::Drop(_) => None,
                })
                .collect()
        };
        assert_eq!(delays(9), delays(9));
        assert_ne!(delays(9), delays(10));
    }

    #[test]
    fn a_clean_link_delivers_at_once() {
        let (t0, fates) = fates("off", 1, 10);
        for (i, fate) in fates.into_iter().enumerate() {
            assert_eq!(fate, Fate::Deliver(t0 + Duration::from_millis(i as u64)));
        }
    }

    #[test]
    fn queueing_jitter_keeps_the_order_and_independent_jitter_does_not() {
        let arrivals = |spec| -> Vec<Instant> {
            fates(spec, 5, 3000)
                .1
                .into_iter()
                .filter_map(|f| match f {
                    Fate::Deliver(at) => Some(at),
                    Fate::Drop(_) => None,
                })
                .collect()
        };
        let overtaken = |a: &[Instant]| a.windows(2).filter(|w| w[1] < w[0]).count();
        assert_eq!(overtaken(&arrivals("rtt:100ms,jitter:40ms")), 0);
        assert!(overtaken(&arrivals("rtt:100ms,jitter:40ms,reorder")) > 500);
    }
}

//! Time rules derived from the measured link rather than tuned on loopback.
//!
//! Every wait the engine reads as a verdict on a leader — "it stopped answering", "it withholds
//! stream credit", "it never acknowledged the stream", "its handshake will not finish" — was a
//! fixed figure chosen where a round trip takes 0.1 ms. On a link of 320 ms with 5% loss each
//! way each of them fires against a healthy leader: a lost datagram is repaired only after a
//! probe timeout (PTO, RFC 9002 §6.2), which on such a link is a second or more, and a
//! stream's answer is then a PTO late. So each rule here is a multiple of the PTO measured on
//! that very link, with the old figure kept as a floor: nothing gets stricter where it worked.
//!
//! The PTO is QUIC's own: the smoothed round trip plus four times its variation (plus the
//! peer's acknowledgement delay), the time after which a sender may conclude a datagram or its
//! acknowledgement was lost. Samples are what the engine and transport see — the time from a
//! stream's hand-off to its answer — so they include the link's loss repair as it happens on
//! the wire, which quinn's own smoothed RTT (a floor fed with [`RttEstimator::floor`]) leaves
//! out.
//!
//! This module is a leaf: it imports nothing of the engine.

use std::time::Duration;

use tokio::time::Instant;

/// The RTT assumed before any sample, RFC 9002 §6.2.2's `kInitialRtt`: with the variation at
/// half of it, the PTO starts at one second, which is what the loopback-tuned rules assumed.
pub const INITIAL_RTT: Duration = Duration::from_millis(333);
/// The peer's largest acknowledgement delay (QUIC's default `max_ack_delay`): an answer may
/// come this late without anything being lost.
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);
/// The timer granularity RFC 9002 puts under the variation term.
const GRANULARITY: Duration = Duration::from_millis(1);
/// The server abandons a handshake after this long (`solana-streamer` 4.0.0,
/// `QUIC_CONNECTION_HANDSHAKE_TIMEOUT`): waiting less gives up on handshakes it would finish.
pub const SERVER_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// Floor of [`LinkTiming::silence`]: the loopback-tuned figure, two and a half slots. Above a
/// busy leader's slow reads (a QUIC server answers a stream once it has read it, and a leader
/// short of CPU reads late: on a 2-core machine running three validators, answers took
/// hundreds of ms), well below the send timeout.
pub const SILENCE_FLOOR: Duration = Duration::from_millis(1_000);
/// Floor of [`LinkTiming::open_stall`]: the loopback-tuned figure.
pub const OPEN_STALL_FLOOR: Duration = Duration::from_millis(1_000);
/// Floor of [`LinkTiming::stream_deadline`]: a 4.0 leader abandons a stream it has not read
/// within 2 s, so an answer is not given up on sooner than that on any link.
pub const STREAM_DEADLINE_FLOOR: Duration = Duration::from_secs(2);
/// A 4.0 leader counts an unstaked peer's streams in windows of this length and withholds
/// credit until the window ends (see `design.md`, "How a 4.0 leader treats senders";
/// `solana-streamer` 4.0.0, `stream_throttle.rs`: `STREAM_THROTTLING_INTERVAL`).
pub const BUDGET_WINDOW: Duration = Duration::from_millis(100);

/// The longest PTO the rules are built on. Agave takes 320 ms as the largest legitimate round
/// trip; a datagram lost twice on such a link is answered about 1 s late (320 ms + 2 × 9/8 of
/// it). A larger estimate comes from a stall (a leader frozen for a while, then answering
/// everything at once), and rules built on it would wait minutes on the next one: silence at
/// most 6 s, a stream's deadline 8 s.
pub const PTO_MAX: Duration = Duration::from_secs(2);
/// How fast [`RttEstimator`]'s peak deviation fades: it halves in this long.
const PEAK_HALF_LIFE: Duration = Duration::from_secs(2);

/// RFC 6298 / RFC 9002 smoothing of round-trip samples: `srtt` moves 1/8 of the way to each
/// sample, `rttvar` 1/4 of the way to the sample's distance from `srtt`, plus the largest
/// recent distance, fading by half every [`PEAK_HALF_LIFE`].
///
/// The peak is there because the RFC's variation is tuned for one sample a round trip: the
/// engine gets one per stream, a hundred a second, and on a link losing 5% the variation
/// decays between two repaired losses (a fifth of a second apart) to a few ms, so the PTO
/// forgot the very delays the rules must allow for. The peak remembers how late a repaired
/// answer came for a few seconds, whatever the sample rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttEstimator {
    srtt: Duration,
    rttvar: Duration,
    /// The largest recent distance of a sample from `srtt`, and when it was last updated.
    peak: Duration,
    peak_at: Option<Instant>,
    /// Whether any sample came in: until then the estimate is [`INITIAL_RTT`]'s.
    sampled: bool,
    /// Quinn's smoothed RTT of the connection: the answer to a stream cannot be expected
    /// sooner, whatever the samples (a sample can be short when the stream's hand-off was
    /// marked late).
    floor: Duration,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self {
            srtt: INITIAL_RTT,
            rttvar: INITIAL_RTT / 2,
            peak: Duration::ZERO,
            peak_at: None,
            sampled: false,
            floor: Duration::ZERO,
        }
    }
}

impl RttEstimator {
    /// Feeds one round-trip sample taken at `now`: the time from a stream's hand-off to its
    /// answer.
    pub fn sample(&mut self, rtt: Duration, now: Instant) {
        if !self.sampled {
            self.sampled = true;
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            self.peak_at = Some(now);
            return;
        }
        let dev = self.srtt.abs_diff(rtt);
        self.rttvar = (self.rttvar * 3 + dev) / 4;
        self.srtt = (self.srtt * 7 + rtt) / 8;
        let faded = match self.peak_at {
            Some(at) => {
                let halvings =
                    now.saturating_duration_since(at).as_secs_f64() / PEAK_HALF_LIFE.as_secs_f64();
                self.peak.mul_f64(0.5f64.powf(halvings))
            }
            None => Duration::ZERO,
        };
        self.peak = faded.max(dev);
        self.peak_at = Some(now);
    }

    /// Quinn's smoothed RTT of the connection (`Connection::rtt`), measured from QUIC's own
    /// acknowledgements: the smoothed estimate never goes below it. Before any stream sample
    /// it is the estimate (the handshake measured it), with RFC 9002's initial variation.
    pub fn floor(&mut self, rtt: Duration) {
        self.floor = rtt;
        if !self.sampled && !rtt.is_zero() {
            self.sampled = true;
            self.srtt = rtt;
            self.rttvar = rtt / 2;
        }
    }

    /// Whether a sample (or quinn's figure) has come in.
    pub fn sampled(&self) -> bool {
        self.sampled
    }

    /// The rules this estimate implies.
    pub fn timing(&self) -> LinkTiming {
        LinkTiming {
            srtt: self.srtt.max(self.floor),
            rttvar: self.rttvar,
            peak: self.peak,
        }
    }
}

/// The time rules of one link, from its smoothed RTT, its variation and the largest recent
/// deviation (see [`RttEstimator`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    pub srtt: Duration,
    pub rttvar: Duration,
    pub peak: Duration,
}

impl Default for LinkTiming {
    /// A link nothing is known of: [`INITIAL_RTT`], whose PTO is a second.
    fn default() -> Self {
        RttEstimator::default().timing()
    }
}

impl LinkTiming {
    /// QUIC's probe timeout: after this long without an acknowledgement a datagram (or its
    /// acknowledgement) is taken as lost and probed for again (RFC 9002 §6.2.1) — with the
    /// recent peak deviation in place of four variations when larger: an answer came that
    /// late a moment ago, so one may again. Never above [`PTO_MAX`].
    pub fn pto(&self) -> Duration {
        let pto = self.srtt + (self.rttvar * 4).max(self.peak).max(GRANULARITY) + MAX_ACK_DELAY;
        pto.min(PTO_MAX)
    }

    /// How long streams may wait on a leader without any answer before it counts as not
    /// answering (its connection is then given up, `Liveness`): three PTOs, RFC 9002's span
    /// for persistent congestion (§7.6.2) — one lost datagram or acknowledgement costs one
    /// PTO and the next probe a second, so a live link answers within three unless three
    /// datagrams in a row are lost ((2 × 5%)³ = 0.1% on a 5% link, and every stream in
    /// flight would have to be). Never below [`SILENCE_FLOOR`].
    pub fn silence(&self) -> Duration {
        (self.pto() * 3).max(SILENCE_FLOOR)
    }

    /// How long an `open_uni` may wait for stream credit before it is read as the leader
    /// throttling us: a 4.0 leader over a peer's budget withholds credit until its 100 ms
    /// window ends, and the credit then takes half a round trip to arrive — a PTO more when
    /// that datagram is lost, and two more when its repair is lost too (RFC 9002 doubles the
    /// PTO for the second probe). Three PTOs past the window cover both; with two (0.8 s on a
    /// 320 ms link with little jitter, so the 1 s floor) two losses in a row on a 5% link read
    /// as throttling (the transport's far-lossy-link test, whose relay has no jitter, saw an
    /// open stall past that bound in 2 of 3 clean-clone CI runs). Shorter waits are the
    /// link's, not the leader's, and count against nobody. Never below [`OPEN_STALL_FLOOR`].
    pub fn open_stall(&self) -> Duration {
        (BUDGET_WINDOW + self.pto() * 3).max(OPEN_STALL_FLOOR)
    }

    /// How long an open may wait for stream credit before that says the leader is behind on
    /// our streams. A 4.0 leader returns credit as it reads, one stream at a time, at most its
    /// budget a window: while our sends keep within the budget, an open that finds none waits
    /// at most for the next window and the credit's way back (half a round trip, a PTO when
    /// that datagram is lost). Longer, and the leader has a full credit's worth of our streams
    /// unread — it reads slower than we send: throttling, though it refuses nothing. Shorter
    /// than [`LinkTiming::open_stall`], which gives the open up.
    pub fn credit_wait_bound(&self) -> Duration {
        BUDGET_WINDOW + self.pto()
    }

    /// How long after its hand-off a stream may go unanswered before that counts as the
    /// leader's timeout: four PTOs — the stream's datagram and its acknowledgement each lost
    /// once, and the two probes repairing them, with a PTO to spare for the variation of a
    /// lossy link. A later answer is still followed and still counts as accepted (see
    /// `follow`). Never below [`STREAM_DEADLINE_FLOOR`].
    pub fn stream_deadline(&self) -> Duration {
        (self.pto() * 4).max(STREAM_DEADLINE_FLOOR)
    }

    /// How long a handshake may take: three PTOs (a lost Initial is re-sent after one, and a
    /// lost server flight after another), never below the server's own 2 s
    /// ([`SERVER_HANDSHAKE_TIMEOUT`]), since giving up sooner abandons handshakes the server
    /// would still finish.
    pub fn handshake_timeout(&self) -> Duration {
        (self.pto() * 3).max(SERVER_HANDSHAKE_TIMEOUT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Feeds `samples` one every 10 ms (a stream's answer at 100 tx/s) from `start`.
    fn feed(e: &mut RttEstimator, start: Instant, samples: impl Iterator<Item = Duration>) {
        for (i, s) in samples.enumerate() {
            e.sample(s, start + ms(10) * i as u32);
        }
    }

    #[test]
    fn a_link_nothing_is_known_of_keeps_the_loopback_rules() {
        let t = LinkTiming::default();
        assert_eq!(t.pto(), ms(333 + 666 + 25));
        assert_eq!(t.silence(), t.pto() * 3);
        assert!(t.silence() >= SILENCE_FLOOR);
        assert!(t.handshake_timeout() >= SERVER_HANDSHAKE_TIMEOUT);
    }

    #[test]
    fn a_near_link_keeps_the_floors() {
        let mut e = RttEstimator::default();
        feed(&mut e, Instant::now(), std::iter::repeat_n(ms(1), 50));
        let t = e.timing();
        assert_eq!(t.silence(), SILENCE_FLOOR);
        assert_eq!(t.open_stall(), OPEN_STALL_FLOOR);
        assert_eq!(t.stream_deadline(), STREAM_DEADLINE_FLOOR);
        assert_eq!(t.handshake_timeout(), SERVER_HANDSHAKE_TIMEOUT);
    }

    /// 320 ms with one answer in twenty (5%) repaired after a loss, about a round trip and a
    /// half late: every rule is longer than the loopback figure that fired against such a
    /// leader, even right after nineteen answers on time.
    #[test]
    fn a_far_lossy_link_stretches_every_rule() {
        let mut e = RttEstimator::default();
        let samples = (0..400).map(|i| if i % 20 == 0 { ms(320 + 450) } else { ms(320) });
        feed(&mut e, Instant::now(), samples);
        let t = e.timing();
        assert!(t.srtt >= ms(320), "{t:?}");
        assert!(
            t.rttvar * 4 < ms(100),
            "the RFC's variation alone forgot: {t:?}"
        );
        assert!(t.pto() > ms(700), "{t:?}");
        assert!(t.silence() > SILENCE_FLOOR * 2, "{t:?}");
        assert!(t.open_stall() > OPEN_STALL_FLOOR, "{t:?}");
        assert!(t.stream_deadline() > STREAM_DEADLINE_FLOOR, "{t:?}");
        assert!(t.handshake_timeout() > SERVER_HANDSHAKE_TIMEOUT, "{t:?}");
    }

    /// A stall's answers (a leader frozen for 10 s, then answering) do not stretch the rules
    /// past those of the worst legitimate link.
    #[test]
    fn a_stall_does_not_stretch_the_rules_past_the_worst_link() {
        let mut e = RttEstimator::default();
        let t0 = Instant::now();
        feed(&mut e, t0, std::iter::repeat_n(ms(320), 50));
        feed(&mut e, t0 + ms(500), std::iter::repeat_n(ms(10_000), 20));
        let t = e.timing();
        assert_eq!(t.pto(), PTO_MAX, "{t:?}");
        assert_eq!(t.silence(), ms(6_000));
        assert_eq!(t.stream_deadline(), ms(8_000));
    }

    /// Once the losses stop, the peak fades and the rules come back to the link's RTT.
    #[test]
    fn the_peak_fades_when_the_losses_stop() {
        let mut e = RttEstimator::default();
        let t0 = Instant::now();
        feed(&mut e, t0, std::iter::once(ms(320)).chain([ms(1_000)]));
        let lossy = e.timing().pto();
        let later = t0 + Duration::from_secs(20);
        feed(&mut e, later, std::iter::repeat_n(ms(320), 100));
        assert!(e.timing().pto() < lossy / 2, "{:?}", e.timing());
    }

    #[test]
    fn quinns_rtt_is_the_estimate_before_samples_and_a_floor_after() {
        let mut e = RttEstimator::default();
        e.floor(ms(230));
        assert!(e.sampled());
        assert_eq!(e.timing().srtt, ms(230));
        feed(&mut e, Instant::now(), std::iter::repeat_n(ms(10), 100));
        assert_eq!(e.timing().srtt, ms(230), "never below quinn's figure");
    }
}

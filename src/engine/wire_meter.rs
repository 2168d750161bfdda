//! The header's last minute on the wire: how many streams waited for stream credit, and where
//! the landed transactions' time to land went (queue, wire, leader, confirmation; see
//! [`LandParts`]). Per-second buckets of the last minute, so a long run costs nothing more.

use std::{collections::VecDeque, time::Duration};

use tokio::time::Instant;

use super::{
    snapshot::{LandParts, WireView, millis},
    store::Marks,
};

const WINDOW_SECS: u64 = 60;

#[derive(Default, Clone, Copy)]
struct Second {
    sec: u64,
    credit_streams: u64,
    credit_waited: u64,
    landed: u64,
    /// Sums of the parts of the time to land, in ms: queue, wire, leader, confirmation.
    parts: [u64; 4],
}

#[derive(Default)]
pub struct WireMeter {
    seconds: VecDeque<Second>,
}

/// Cuts a time to land into its parts (see [`LandParts`]): `first_sent` to `confirmed`, at the
/// first hand-off, acknowledgement and sighting in `marks`. Each cut is clamped between the one
/// before and `confirmed`, so the parts always add up to the whole; a step that did not happen
/// is cut where the step before was — except the sighting, which without a lookup of its own
/// is the confirming one.
pub fn split(first_sent: Instant, marks: Marks, confirmed: Instant) -> LandParts {
    let confirmed = confirmed.max(first_sent);
    let cut = |t: Option<Instant>, prev: Instant| t.map_or(prev, |t| t.clamp(prev, confirmed));
    let handed = cut(marks.handed, first_sent);
    let acked = cut(marks.acked, handed);
    let seen = marks.seen.map_or(confirmed, |t| t.clamp(acked, confirmed));
    let ms = |a: Instant, b: Instant| millis(b.saturating_duration_since(a));
    LandParts {
        queue_ms: ms(first_sent, handed),
        wire_ms: ms(handed, acked),
        leader_ms: ms(acked, seen),
        confirmation_ms: ms(seen, confirmed),
    }
}

impl WireMeter {
    fn second(&mut self, elapsed: Duration) -> &mut Second {
        let sec = elapsed.as_secs();
        if self.seconds.back().is_none_or(|s| s.sec != sec) {
            self.seconds.push_back(Second {
                sec,
                ..Second::default()
            });
            while self
                .seconds
                .front()
                .is_some_and(|s| s.sec + WINDOW_SECS <= sec)
            {
                self.seconds.pop_front();
            }
        }
        let last = self.seconds.len() - 1;
        &mut self.seconds[last]
    }

    /// A stream ended: it got credit or waited for it (`asked`), and waited (`waited`).
    pub fn on_stream(&mut self, elapsed: Duration, asked: bool, waited: bool) {
        if !asked {
            return;
        }
        let s = self.second(elapsed);
        s.credit_streams += 1;
        s.credit_waited += u64::from(waited);
    }

    /// A transaction landed, its time to land cut into `parts`.
    pub fn on_landed(&mut self, elapsed: Duration, parts: LandParts) {
        let s = self.second(elapsed);
        s.landed += 1;
        for (sum, part) in s.parts.iter_mut().zip([
            parts.queue_ms,
            parts.wire_ms,
            parts.leader_ms,
            parts.confirmation_ms,
        ]) {
            *sum += part;
        }
    }

    /// The last minute (the second still filling included: a share has no dip to fear).
    pub fn view(&self, elapsed: Duration) -> WireView {
        let from = elapsed.as_secs().saturating_sub(WINDOW_SECS - 1);
        let mut v = WireView::default();
        let mut sums = [0u64; 4];
        for s in self.seconds.iter().filter(|s| s.sec >= from) {
            v.credit_streams += s.credit_streams;
            v.credit_waited += s.credit_waited;
            v.landed += s.landed;
            for (sum, part) in sums.iter_mut().zip(s.parts) {
                *sum += part;
            }
        }
        if v.landed > 0 {
            let [queue_ms, wire_ms, leader_ms, confirmation_ms] = sums.map(|s| s / v.landed);
            v.parts = Some(LandParts {
                queue_ms,
                wire_ms,
                leader_ms,
                confirmation_ms,
            });
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_parts_add_up_to_the_time_to_land() {
        let t0 = Instant::now();
        let marks = Marks {
            handed: Some(t0 + ms(30)),
            acked: Some(t0 + ms(350)),
            seen: Some(t0 + ms(1_200)),
        };
        let p = split(t0, marks, t0 + ms(1_900));
        assert_eq!(
            p,
            LandParts {
                queue_ms: 30,
                wire_ms: 320,
                leader_ms: 850,
                confirmation_ms: 700,
            }
        );
    }

    #[test]
    fn missing_and_out_of_order_steps_still_add_up() {
        let t0 = Instant::now();
        // Never acknowledged (its answer came after it landed, or never), never seen below the
        // commitment: the wire part is 0, the leader's runs to the confirming lookup.
        let marks = Marks {
            handed: Some(t0 + ms(10)),
            acked: None,
            seen: None,
        };
        let p = split(t0, marks, t0 + ms(800));
        assert_eq!((p.queue_ms, p.wire_ms, p.leader_ms), (10, 0, 790));
        assert_eq!(p.confirmation_ms, 0);
        // Acknowledged after it was seen: the cut is at the sighting.
        let marks = Marks {
            handed: Some(t0 + ms(10)),
            acked: Some(t0 + ms(900)),
            seen: Some(t0 + ms(500)),
        };
        let p = split(t0, marks, t0 + ms(1_000));
        let sum = p.queue_ms + p.wire_ms + p.leader_ms + p.confirmation_ms;
        assert_eq!(sum, 1_000);
        assert_eq!((p.wire_ms, p.leader_ms, p.confirmation_ms), (890, 0, 100));
    }

    #[test]
    fn the_view_is_the_last_minute() {
        let mut m = WireMeter::default();
        let parts = LandParts {
            queue_ms: 10,
            wire_ms: 100,
            leader_ms: 1_000,
            confirmation_ms: 400,
        };
        m.on_landed(ms(500), parts);
        for i in 0..10 {
            m.on_stream(ms(1_000 + i), true, i < 3);
        }
        m.on_stream(ms(1_000), false, false);
        m.on_landed(
            ms(2_000),
            LandParts {
                queue_ms: 30,
                ..parts
            },
        );
        let v = m.view(ms(2_500));
        assert_eq!((v.credit_streams, v.credit_waited, v.landed), (10, 3, 2));
        assert_eq!(v.credit_share(), Some(0.3));
        assert_eq!(v.parts.map(|p| p.queue_ms), Some(20));
        // A minute on, the first second is out.
        let v = m.view(ms(60_500));
        assert_eq!((v.landed, v.credit_streams), (1, 10));
        let v = m.view(ms(62_000));
        assert_eq!(v, WireView::default());
    }
}

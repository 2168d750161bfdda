//! The deploy benchmark's table: one row per deployer, then each txpace row's ratios to the
//! best Agave deployer — the one that deployed in the least time — and the goal's verdict.

use super::Contender;
use crate::markdown::Section;
use crate::measure::{self, Sends};

pub fn section(c: &[Contender], len: usize) -> Section {
    let mut t = Section::new(format!(
        "Deploy of a {len}-byte program on one local validator"
    ))
    .left("deployer")
    .right("total s")
    .right("writes s")
    .right("writes")
    .right("CPU s")
    .right("peak MB")
    .right("sends")
    .right("sends/tx")
    .left("note");
    for x in c {
        t.row(vec![
            x.name.to_string(),
            format!("{:.1}", x.usage.wall_s),
            format!("{:.1}", x.writes_s),
            format!("{}/{}", x.landed_writes, x.writes),
            format!("{:.2}", x.usage.cpu_s),
            format!("{:.1}", x.usage.peak_rss_mb),
            Sends::show(x.sends),
            Sends::show_per_landed(x.sends, x.landed_writes),
            format!(
                "{}{}",
                if x.deployed { "" } else { "(NOT deployed)" },
                measure::row_note(x.failure.as_deref(), 0)
            )
            .trim()
            .to_string(),
        ]);
    }
    t.note(
        "(deployed: the program's data account holds the program's bytes, read from the chain; \
         sends: per transaction per leader address; \"≥\": the TPU client's count leaves out \
         sends its own 5 s timeout dropped; n/a: RPC calls, not sends to leaders)",
    );
    let Some(best) = best_agave(c) else {
        if c.iter().any(|x| x.agave) {
            t.note("no Agave deployer deployed: no ratio is taken");
        }
        return t;
    };
    for x in c.iter().filter(|x| !x.agave) {
        let r = Ratios::of(x, best);
        t.note(format!(
            "{} / best Agave ({}): total {:.3}, writes {:.3}, CPU {:.2}, memory {:.2}",
            x.name, best.name, r.total, r.writes, r.cpu, r.memory
        ));
    }
    // The goal is for the default pace (`--rate max`), the deploy a user gets.
    if let Some(x) = c.iter().find(|x| x.name.ends_with("--rate max")) {
        let r = Ratios::of(x, best).total;
        t.note(format!(
            "goal whole deploy ≤ 0.8 × the best Agave deployer at the default pace: {} ({r:.3})",
            measure::verdict(r <= 0.8 && x.deployed && x.failure.is_none())
        ));
    }
    t
}

/// The Agave deployer that deployed (checked on chain, its process finished) in the least
/// wall time.
fn best_agave(c: &[Contender]) -> Option<&Contender> {
    c.iter()
        .filter(|x| x.agave && x.deployed && x.failure.is_none())
        .min_by(|a, b| a.usage.wall_s.total_cmp(&b.usage.wall_s))
}

/// A txpace deploy's figures over an Agave deployer's.
#[derive(Debug, PartialEq)]
struct Ratios {
    total: f64,
    writes: f64,
    cpu: f64,
    memory: f64,
}

impl Ratios {
    fn of(x: &Contender, agave: &Contender) -> Ratios {
        Ratios {
            total: measure::ratio(x.usage.wall_s, agave.usage.wall_s),
            writes: measure::ratio(x.writes_s, agave.writes_s),
            cpu: measure::ratio(x.usage.cpu_s, agave.usage.cpu_s),
            memory: measure::ratio(x.usage.peak_rss_mb, agave.usage.peak_rss_mb),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Usage;

    fn row(name: &'static str, agave: bool, wall_s: f64, deployed: bool) -> Contender {
        Contender {
            name,
            agave,
            usage: Usage {
                wall_s,
                cpu_s: wall_s / 10.0,
                peak_rss_mb: 20.0,
            },
            writes_s: wall_s - 1.0,
            writes: 609,
            landed_writes: 609,
            sends: Some(Sends::counted(609)),
            deployed,
            failure: None,
        }
    }

    /// The best Agave deployer is the quickest that deployed; one that did not, or whose
    /// process failed, is never the yardstick, however quick.
    #[test]
    fn ratios_are_to_the_quickest_agave_deployer_that_deployed() {
        let mut failed = row("Agave rpc", true, 3.0, true);
        failed.failure = Some("exit 1: boom".into());
        let c = [
            row("txpace deploy --rate max", false, 4.0, true),
            row("Agave tpu", true, 8.0, true),
            row("Agave next", true, 2.0, false),
            failed,
            row("Agave tpu-client-next", true, 6.4, true),
        ];
        let best = best_agave(&c).expect("one deployed");
        assert_eq!(best.name, "Agave tpu-client-next");
        let r = Ratios::of(&c[0], best);
        assert_eq!(r.total, 4.0 / 6.4);
        assert_eq!(r.writes, 3.0 / 5.4);
        assert_eq!(r.cpu, 0.4 / 0.64);
        assert_eq!(r.memory, 1.0);
        let text = section(&c, 615_936).text();
        assert!(
            text.contains("/ best Agave (Agave tpu-client-next): total 0.625"),
            "{text}"
        );
        assert!(text.contains("at the default pace: met (0.625)"), "{text}");
        assert!(text.contains("(NOT deployed)"), "{text}");
    }

    /// A txpace deploy that did not deploy misses the goal, whatever its time.
    #[test]
    fn the_goal_needs_the_program_on_chain() {
        let c = [
            row("txpace deploy --rate max", false, 1.0, false),
            row("Agave tpu", true, 8.0, true),
        ];
        let text = section(&c, 1).text();
        assert!(
            text.contains("at the default pace: NOT met (0.125)"),
            "{text}"
        );
    }

    /// With no Agave deployer deployed there is nothing to compare with, and the table says so.
    #[test]
    fn no_ratio_without_an_agave_deployer_that_deployed() {
        let c = [
            row("txpace deploy --rate max", false, 4.0, true),
            row("Agave tpu", true, 8.0, false),
        ];
        let text = section(&c, 1).text();
        assert!(text.contains("no Agave deployer deployed"), "{text}");
        assert!(!text.contains("goal"), "{text}");
    }
}

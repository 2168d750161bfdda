//! The send benchmark's tables and goal lines: txpace over the best Agave TPU client of each
//! round (`versus`: the legacy `TpuClient` or tpu-client-next, whichever finished with the
//! lower wall time), named in every line, and over RPC `sendTransaction`; the wall goal over
//! the best of all three; headless txpace against the pace bound N/rate. The CPU and memory
//! goals compare with the TPU clients alone: RPC `sendTransaction`'s process leaves the
//! sending to its node, so its CPU and memory are not the same work's.

use std::collections::BTreeSet;

use super::{Contender, Figures, Sender};
use crate::{
    markdown::Section,
    measure::{self, Sends, Usage},
    rpc_child,
    versus::{self, Finish},
    workload::CU_PRICE,
};

/// The best Agave TPU client of a round, `None` without one that finished.
fn best_agave(founding: &[Contender], round: u32) -> Option<&Contender> {
    versus::best(
        founding
            .iter()
            .filter(|c| c.round == round && c.sender.is_agave_tpu()),
        |c| Finish {
            wall_s: c.usage.wall_s,
            landed: c.landed,
            total: c.total,
            failed: c.failure.is_some(),
        },
    )
}

/// txpace over the best Agave TPU client and over RPC `sendTransaction` in one round; `None`
/// where that run is missing or failed.
#[derive(Debug, PartialEq)]
pub(super) struct RoundRatios {
    pub round: u32,
    /// The Agave TPU client compared with.
    pub versus: Option<&'static str>,
    /// Headless txpace over it: wall, CPU, peak memory.
    pub headless: Option<[f64; 3]>,
    /// Headless txpace's wall over RPC `sendTransaction`'s.
    pub rpc_wall: Option<f64>,
    /// txpace with its dashboard over it: CPU.
    pub dashboard_cpu: Option<f64>,
    /// The runs of the round that failed, and why.
    pub failed: Option<String>,
}

/// The ratios of every round in which an Agave contender ran.
pub(super) fn round_ratios(founding: &[Contender]) -> Vec<RoundRatios> {
    let rounds: BTreeSet<u32> = founding
        .iter()
        .filter(|c| c.sender.is_agave())
        .map(|c| c.round)
        .collect();
    let of = |round: u32, sender: Sender| {
        founding
            .iter()
            .find(|c| c.round == round && c.sender == sender && c.failure.is_none())
    };
    let mut out = Vec::new();
    for round in rounds {
        let failed: Vec<String> = founding
            .iter()
            .filter(|c| c.round == round)
            .filter_map(|c| {
                c.failure
                    .as_ref()
                    .map(|f| format!("{} failed: {f}", c.name))
            })
            .collect();
        let a = best_agave(founding, round);
        let versus = |t: &Contender, pick: fn(&Usage) -> f64| {
            a.map(|a| measure::ratio(pick(&t.usage), pick(&a.usage)))
        };
        let headless = of(round, Sender::Headless).and_then(|t| {
            Some([
                versus(t, |u| u.wall_s)?,
                versus(t, |u| u.cpu_s)?,
                versus(t, |u| u.peak_rss_mb)?,
            ])
        });
        let dashboard_cpu = of(round, Sender::Dashboard).and_then(|d| versus(d, |u| u.cpu_s));
        let rpc_wall = of(round, Sender::Headless)
            .zip(of(round, Sender::AgaveRpc).filter(|r| r.landed >= r.total))
            .map(|(t, r)| measure::ratio(t.usage.wall_s, r.usage.wall_s));
        out.push(RoundRatios {
            round,
            versus: a.map(|a| a.sender.short()),
            headless,
            rpc_wall,
            dashboard_cpu,
            failed: (!failed.is_empty()).then(|| failed.join("; ")),
        });
    }
    out
}

/// How far over the pace bound N/rate headless txpace's wall time may be: its start-up,
/// preflight and the last transaction's confirmation (issue 24 asks for within 2% of the
/// bound where no contender can beat it).
pub(super) const PACE_BOUND_SLACK: f64 = 0.02;

/// Headless txpace's worst wall time over the pace bound N/rate, and whether every round kept
/// within [`PACE_BOUND_SLACK`] of it with no run failed; `None` without a headless run.
pub(super) fn pace_bound_goal(founding: &[Contender]) -> Option<(f64, bool)> {
    let runs: Vec<&Contender> = founding
        .iter()
        .filter(|c| c.sender == Sender::Headless)
        .collect();
    let worst = runs.iter().map(|c| c.vs_bound).reduce(f64::max)?;
    let failed = runs.iter().any(|c| c.failure.is_some());
    Some((worst, worst <= 1.0 + PACE_BOUND_SLACK && !failed))
}

/// CPU seconds of `sender` and of each round's best Agave TPU client over the rounds where
/// both finished.
pub(super) fn cpu_together(founding: &[Contender], sender: Sender) -> (f64, f64) {
    founding
        .iter()
        .filter(|c| c.sender == sender && c.failure.is_none())
        .filter_map(|c| Some((c, best_agave(founding, c.round)?)))
        .fold((0.0, 0.0), |(t, a), (tc, ac)| {
            (t + tc.usage.cpu_s, a + ac.usage.cpu_s)
        })
}

/// The ratio and goal lines under the founding table: txpace over the best Agave TPU client per
/// round (headless, and with the dashboard) and over RPC `sendTransaction`, the spread over the
/// rounds, and whether each goal held: wall time over the best of all in every round (the goal
/// says every time); CPU, against the TPU clients, over the run's rounds
/// together (the goal says every run of the benchmark), since on a machine the validator
/// shares either sender's CPU varies from one round to the next by more than the two differ —
/// the worst round is printed beside it. A failed txpace run fails the goals.
pub(super) fn ratio_lines(founding: &[Contender]) -> Vec<String> {
    let mut lines = Vec::new();
    let ratios = round_ratios(founding);
    for r in &ratios {
        let mut line = format!(
            "round {}: txpace / the best Agave TPU client ({})",
            r.round,
            r.versus.unwrap_or("none finished")
        );
        if let Some(h) = r.headless {
            line += &format!(" wall {:.3}, CPU {:.2}, memory {:.2}", h[0], h[1], h[2]);
        }
        if let Some(d) = r.dashboard_cpu {
            line += &format!("; with the dashboard CPU {d:.2}");
        }
        if let Some(w) = r.rpc_wall {
            line += &format!("; / {} wall {w:.3}", rpc_child::NAME);
        }
        if let Some(f) = &r.failed {
            line += &format!(" ({f})");
        }
        lines.push(line);
    }
    let headless: Vec<[f64; 3]> = ratios.iter().filter_map(|r| r.headless).collect();
    // Each round's wall over the best Agave contender of all: the TPU client's or RPC's.
    let walls: Vec<f64> = ratios
        .iter()
        .filter_map(|r| match (r.headless, r.rpc_wall) {
            (Some(h), Some(w)) => Some(h[0].max(w)),
            (Some(h), None) => Some(h[0]),
            (None, w) => w,
        })
        .collect();
    let dashboard: Vec<f64> = ratios.iter().filter_map(|r| r.dashboard_cpu).collect();
    let column = |i: usize| headless.iter().map(|r| r[i]).collect::<Vec<_>>();
    let (wall, cpu, mem) = (
        measure::spread(&column(0)),
        measure::spread(&column(1)),
        measure::spread(&column(2)),
    );
    let txpace_failed = founding
        .iter()
        .any(|c| !c.sender.is_agave() && c.failure.is_some());
    if !headless.is_empty() {
        lines.push(format!(
            "over {} rounds: wall {:.3}–{:.3}, CPU {:.2}–{:.2}, memory {:.2}–{:.2}",
            headless.len(),
            wall.0,
            wall.1,
            cpu.0,
            cpu.1,
            mem.0,
            mem.1
        ));
        let worst = measure::spread(&walls).1;
        lines.push(format!(
            "goal wall ≤ 1.0 × the best Agave contender (either TPU client or RPC \
             sendTransaction) in every round: {} (worst {worst:.3})",
            measure::verdict(worst <= 1.0 && !txpace_failed)
        ));
    }
    if let Some((worst, met)) = pace_bound_goal(founding) {
        lines.push(format!(
            "goal wall ≤ {:.2} × the pace bound N/rate in every round (no sender can do better \
             than N/rate): {} (worst {worst:.3})",
            1.0 + PACE_BOUND_SLACK,
            measure::verdict(met)
        ));
    }
    for (sender, what, limit, per_round) in [
        (Sender::Headless, "CPU headless", 1.0, column(1)),
        (Sender::Dashboard, "CPU with the dashboard", 1.5, dashboard),
    ] {
        let (cpu, agave) = cpu_together(founding, sender);
        if per_round.is_empty() || agave <= 0.0 {
            continue;
        }
        let r = measure::ratio(cpu, agave);
        let verdict = measure::verdict(r <= limit && !txpace_failed);
        lines.push(format!(
            "goal {what} ≤ {limit:.1} × each round's best Agave TPU client over this run's \
             rounds together: {verdict} ({cpu:.2} s / {agave:.2} s = {r:.3}; worst round {:.3})",
            measure::spread(&per_round).1
        ));
    }
    lines
}

/// The benchmark's three tables: the founding workload, the pace on the wire, `--rate max`.
pub(super) fn sections(f: &Figures, n: usize) -> Vec<Section> {
    let mut founding = Section::new(format!(
        "Founding workload: {n} self-transfers at {CU_PRICE} µlamports/CU, 100 tx/s (bound \
         N/rate = {:.1} s)",
        n as f64 / 100.0
    ))
    .right("round")
    .left("sender")
    .right("landed")
    .right("wall s")
    .right("x bound")
    .right("CPU s")
    .right("peak MB")
    .right("sends/tx")
    .left("note");
    for c in &f.founding {
        founding.row(vec![
            c.round.to_string(),
            c.name.clone(),
            format!("{}/{}", c.landed, c.total),
            format!("{:.1}", c.usage.wall_s),
            format!("{:.3}", c.vs_bound),
            format!("{:.2}", c.usage.cpu_s),
            format!("{:.1}", c.usage.peak_rss_mb),
            Sends::show_per_landed(c.sends, c.landed),
            measure::row_note(c.failure.as_deref(), c.duplicates)
                .trim()
                .to_string(),
        ]);
    }
    founding.note(
        "(landed: unique messages, from the chain; sends: per transaction per leader address, \
         counted where each sender makes them — n/a for RPC sendTransaction, whose node makes \
         its streams, and whose CPU and memory leave out that work: the CPU and memory ratios \
         are over the TPU clients)",
    );
    for line in ratio_lines(&f.founding) {
        founding.note(line);
    }
    let mut pacing = Section::new(
        "Pacing on the wire (streams by hand-off to QUIC; 1,000 tx/s with the staked identity)",
    )
    .right("target tx/s")
    .right("achieved tx/s")
    .right("ratio")
    .right("busiest 100 ms x target");
    for p in &f.pacing {
        pacing.row(vec![
            format!("{:.0}", p.target),
            format!("{:.1}", p.achieved),
            format!("{:.4}", p.ratio),
            format!("{:.2}", p.burst),
        ]);
    }
    let mut max = Section::new(format!(
        "--rate max ({n} self-transfers over 8 payers; landed from the chain, over the process's \
         wall time)"
    ))
    .left("identity")
    .right("landed")
    .right("wall s")
    .right("landed tx/s")
    .right("sends/landed")
    .left("note");
    for m in &f.max_rate {
        max.row(vec![
            m.identity.to_string(),
            format!("{}/{}", m.landed, m.total),
            format!("{:.1}", m.wall_s),
            format!("{:.0}", m.landed_per_s),
            Sends::show_per_landed(m.sends, m.landed),
            measure::row_note(m.failure.as_deref(), 0)
                .trim()
                .to_string(),
        ]);
    }
    vec![founding, pacing, max]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contender(round: u32, sender: Sender, wall_s: f64, cpu_s: f64, failed: bool) -> Contender {
        Contender {
            round,
            sender,
            name: format!("{sender:?}"),
            landed: 100,
            total: 100,
            usage: Usage {
                wall_s,
                cpu_s,
                peak_rss_mb: 30.0,
            },
            vs_bound: wall_s,
            sends: None,
            sends_per_landed: None,
            duplicates: 0,
            failure: failed.then(|| "exit 1: gave up".to_string()),
        }
    }

    /// Each round's ratios are txpace's figure over the Agave TPU client with the lower wall
    /// time, which the round names.
    #[test]
    fn a_rounds_ratios_are_over_the_best_agave_contender() {
        let founding = [
            contender(1, Sender::Headless, 50.4, 1.0, false),
            contender(1, Sender::Dashboard, 50.6, 3.0, false),
            contender(1, Sender::Agave, 55.0, 4.0, false),
            contender(1, Sender::AgaveNext, 50.0, 2.0, false),
        ];
        assert_eq!(
            round_ratios(&founding),
            vec![RoundRatios {
                round: 1,
                versus: Some("Agave tpu-client-next"),
                headless: Some([50.4 / 50.0, 0.5, 1.0]),
                rpc_wall: None,
                dashboard_cpu: Some(1.5),
                failed: None,
            }]
        );
        assert_eq!(cpu_together(&founding, Sender::Headless), (1.0, 2.0));
        let lines = ratio_lines(&founding);
        assert!(
            lines[0].starts_with(
                "round 1: txpace / the best Agave TPU client (Agave tpu-client-next) wall 1.008"
            ),
            "{lines:?}"
        );
    }

    /// RPC `sendTransaction` quicker than both TPU clients sets the wall goal, and the line
    /// names its ratio; the CPU goal stays over the TPU clients, RPC's process leaving the
    /// sending to its node.
    #[test]
    fn the_wall_goal_is_over_rpc_too_and_the_cpu_goal_over_the_tpu_clients() {
        let founding = [
            contender(1, Sender::Headless, 50.4, 1.0, false),
            contender(1, Sender::Agave, 55.0, 4.0, false),
            contender(1, Sender::AgaveNext, 51.0, 2.0, false),
            contender(1, Sender::AgaveRpc, 50.2, 0.5, false),
        ];
        let r = round_ratios(&founding);
        assert_eq!(r[0].versus, Some("Agave tpu-client-next"));
        assert_eq!(r[0].rpc_wall, Some(50.4 / 50.2));
        assert_eq!(cpu_together(&founding, Sender::Headless), (1.0, 2.0));
        let lines = ratio_lines(&founding);
        assert!(
            lines[0].ends_with(&format!("; / {} wall {:.3}", rpc_child::NAME, 50.4 / 50.2)),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(
                |l| l.starts_with("goal wall ≤ 1.0 × the best Agave contender")
                    && l.contains("NOT met (worst 1.004)")
            ),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("goal CPU headless") && l.contains(": met")),
            "{lines:?}"
        );
    }

    /// A failed Agave run is passed over for the other; with every Agave run of a round failed
    /// the round has no ratio and says why; a failed txpace run has no ratio.
    #[test]
    fn a_failed_run_is_compared_with_nothing() {
        let founding = [
            contender(1, Sender::Headless, 50.4, 1.0, false),
            contender(1, Sender::Agave, 40.0, 2.0, true),
            contender(1, Sender::AgaveNext, 50.0, 2.5, false),
            contender(2, Sender::Headless, 50.2, 1.1, false),
            contender(2, Sender::Agave, 50.0, 2.2, true),
            contender(2, Sender::AgaveNext, 50.0, 2.2, true),
            contender(3, Sender::Headless, 50.2, 1.1, true),
            contender(3, Sender::Agave, 50.0, 2.2, false),
        ];
        let r = round_ratios(&founding);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].versus, Some("Agave tpu-client-next"));
        assert_eq!(r[0].headless.map(|h| h[0]), Some(50.4 / 50.0));
        assert_eq!(
            r[0].failed.as_deref(),
            Some("Agave failed: exit 1: gave up")
        );
        assert_eq!((r[1].versus, r[1].headless), (None, None));
        assert_eq!(
            (r[2].versus, r[2].headless),
            (Some("Agave TpuClient"), None)
        );
        assert_eq!(cpu_together(&founding, Sender::Headless), (1.0, 2.5));
        let lines = ratio_lines(&founding);
        assert!(
            lines.iter().any(|l| l.contains("every round: NOT met")),
            "{lines:?}"
        );
    }

    /// The worst headless round against N/rate; a failed run fails the goal; the dashboard
    /// and Agave rounds are not judged by it.
    #[test]
    fn the_pace_bound_goal_takes_the_worst_headless_round() {
        let mut founding = [
            contender(1, Sender::Headless, 0.0, 1.0, false),
            contender(1, Sender::Dashboard, 0.0, 1.0, false),
            contender(2, Sender::Headless, 0.0, 1.0, false),
        ];
        for (c, vs_bound) in founding.iter_mut().zip([1.008, 1.5, 1.019]) {
            c.vs_bound = vs_bound;
        }
        assert_eq!(pace_bound_goal(&founding), Some((1.019, true)));
        founding[2].vs_bound = 1.021;
        assert_eq!(pace_bound_goal(&founding), Some((1.021, false)));
        founding[2].vs_bound = 1.0;
        founding[2].failure = Some("exit 3: crashed".into());
        assert_eq!(pace_bound_goal(&founding), Some((1.008, false)));
        assert_eq!(pace_bound_goal(&founding[1..2]), None);
    }
}

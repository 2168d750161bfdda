//! The fault benchmark's table and lines: txpace's bound through a freeze and whether it kept
//! to it, and txpace's wall time over the best Agave contender of the same fault and round
//! (`versus`: either TPU client or RPC `sendTransaction`), named in the line.

use super::{Fault, Run, Sender};
use crate::{
    bound::{FREEZE_SLACK_S, UNSTAKED_BUDGET_TPS},
    markdown::Section,
    measure::{self, Sends},
    versus::{self, Finish},
};

/// The best Agave run of a fault and round (`versus::best`), if one finished.
fn best_agave(runs: &[Run], fault: Fault, round: u32) -> Option<&Run> {
    versus::best(
        runs.iter()
            .filter(|a| a.sender != Sender::Txpace && a.fault == fault && a.round == round),
        |a| Finish {
            wall_s: a.wall_s,
            landed: a.landed,
            total: a.total,
            failed: a.failure.is_some(),
        },
    )
}

/// The lines under the table: txpace's bound through a freeze and its goal, and txpace's wall
/// time over the best Agave run of the same fault and round.
fn goal_lines(runs: &[Run]) -> Vec<String> {
    let mut lines = Vec::new();
    for t in runs.iter().filter(|r| r.sender == Sender::Txpace) {
        if let Some(b) = t.bound {
            lines.push(format!(
                "{}, round {}: bound {:.1} s = thaw {:.1} s + {} owed / {:.0} tx/s + one \
                 confirmation {:.2} s (the run's median time to land); goal txpace wall ≤ bound \
                 + {FREEZE_SLACK_S} s: {} ({:.1} s)",
                t.fault.label(),
                t.round,
                b.total_s(),
                b.thaw_s,
                b.owed,
                UNSTAKED_BUDGET_TPS,
                b.confirmation_s,
                measure::verdict(b.met(t.wall_s) && t.failure.is_none()),
                t.wall_s
            ));
        }
        let agaves: Vec<&Run> = runs
            .iter()
            .filter(|a| a.sender != Sender::Txpace && a.fault == t.fault && a.round == t.round)
            .collect();
        if agaves.is_empty() {
            continue;
        }
        let best = best_agave(runs, t.fault, t.round);
        let mut line = format!(
            "{}, round {}: txpace / the best Agave contender, wall {}{}",
            t.fault.label(),
            t.round,
            versus::ratio_words(
                t.wall_s,
                t.failure.is_some(),
                best.map(|a| (a.sender.label(), a.wall_s))
            ),
            landing_note(t),
        );
        for a in agaves {
            line += &landing_note(a);
        }
        lines.push(line);
    }
    lines
}

pub(super) fn sections(runs: &[Run], n: usize) -> Vec<Section> {
    let mut table = Section::new(format!(
        "Faults: {n} self-transfers at 100 tx/s (bound N/rate = {:.1} s without the fault)",
        n as f64 / 100.0
    ))
    .left("fault")
    .right("round")
    .left("sender")
    .right("landed")
    .right("first send s")
    .right("wall s")
    .right("CPU s")
    .right("sends/tx")
    .left("outcome");
    for r in runs {
        table.row(vec![
            r.fault.label().to_string(),
            r.round.to_string(),
            r.sender.label().to_string(),
            format!("{}/{}", r.landed, r.total),
            r.first_send_s
                .map_or_else(|| "–".to_string(), |s| format!("{s:.2}")),
            format!("{:.1}", r.wall_s),
            format!("{:.2}", r.cpu_s),
            Sends::show_per_landed(r.sends, r.landed),
            format!(
                "{}{}",
                r.outcome,
                measure::row_note(r.failure.as_deref(), r.duplicates)
            ),
        ]);
    }
    table.note("(sends: per transaction per leader address, counted where each sender makes them — n/a for RPC sendTransaction, whose node makes its streams; first send: from the sender's spawn to its first send, which the fault's moment counts from; wall: from the spawn)");
    for line in goal_lines(runs) {
        table.note(line);
    }
    vec![table]
}

/// What a run's landings say beside its time: nothing when its whole batch landed (each message
/// counted once, so never more than its batch).
fn landing_note(r: &Run) -> String {
    if r.landed >= r.total {
        return String::new();
    }
    format!(
        " ({}: {} of {} landed, so the times are not like for like)",
        r.sender.label(),
        r.landed,
        r.total
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::next_child;

    fn run(sender: Sender, wall_s: f64, landed: u64, failed: bool) -> Run {
        Run {
            fault: Fault::Freeze,
            round: 1,
            sender,
            landed,
            total: 1500,
            outcome: if failed { "failed" } else { "done" }.into(),
            failure: failed.then(|| "exit 1: gave up".into()),
            duplicates: 0,
            bound: None,
            first_send_s: Some(0.1),
            wall_s,
            cpu_s: 1.0,
            sends: None,
            sends_per_landed: None,
        }
    }

    /// txpace over the best Agave run of the same fault and round, named, with the runs that
    /// lost transactions said beside it.
    #[test]
    fn the_ratio_is_over_the_best_agave_run_and_names_it() {
        let runs = [
            run(Sender::Txpace, 21.9, 1500, false),
            run(Sender::Agave, 30.0, 1500, false),
            run(Sender::AgaveNext, 22.1, 1500, false),
        ];
        assert_eq!(
            goal_lines(&runs),
            vec![format!(
                "freeze, round 1: txpace / the best Agave contender, wall {:.3} (vs {})",
                21.9 / 22.1,
                next_child::NAME
            )]
        );
        // tpu-client-next gave up on 100 transactions: the legacy client, which landed all,
        // is the one compared with.
        let runs = [
            run(Sender::Txpace, 21.9, 1500, false),
            run(Sender::Agave, 30.0, 1500, false),
            run(Sender::AgaveNext, 20.0, 1400, false),
        ];
        let lines = goal_lines(&runs);
        assert!(
            lines[0].contains("wall 0.730 (vs Agave TpuClient)"),
            "{lines:?}"
        );
        assert!(lines[0].ends_with(&format!(
            "({}: 1400 of 1500 landed, so the times are not like for like)",
            next_child::NAME
        )));
        assert_eq!(
            super::super::order(1),
            [
                Sender::Txpace,
                Sender::Agave,
                Sender::AgaveNext,
                Sender::AgaveRpc
            ]
        );
        assert_eq!(
            super::super::order(2),
            [
                Sender::AgaveRpc,
                Sender::AgaveNext,
                Sender::Agave,
                Sender::Txpace
            ]
        );
    }
}

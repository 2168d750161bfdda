//! The wide-area benchmark's tables: each contender's figures per scenario and round, the wire
//! beside them (the nodes' counters, the relays, the load), txpace's link figures against the
//! relays', and the goal lines (`goals`) under the first.

use super::{Run, Sender, goals::goal_lines};
use crate::{
    markdown::Section,
    measure::{self, Sends},
};

pub(super) fn sections(runs: &[Run], n: usize, load: &str) -> Vec<Section> {
    let mut table = Section::new(format!(
        "Wide-area scenarios on 3 nodes (txpace-localnet, link profiles through its relays): \
         {n} self-transfers per run (at 100 tx/s the bound N/rate is {:.1} s); competitors: \
         {load}",
        n as f64 / 100.0
    ))
    .left("scenario")
    .right("round")
    .left("sender")
    .left("pace")
    .right("landed")
    .right("wall s")
    .right("slots p50")
    .right("slots p99")
    .right("sends/tx")
    .left("note");
    let mut wire = Section::new("The wire during each run")
        .left("scenario")
        .right("round")
        .left("sender")
        .right("delayed")
        .right("evicted")
        .right("refused")
        .right("ignored")
        .right("new conn/leader")
        .left("relays: to nodes · to clients")
        .left("load");
    for r in runs {
        table.row(vec![
            r.scenario.clone(),
            r.round.to_string(),
            r.sender.label().to_string(),
            r.pace.clone(),
            format!("{}/{}", r.landed, r.total),
            format!("{:.1}", r.wall_s),
            r.slots_p50.map_or("n/a".into(), |s| s.to_string()),
            r.slots_p99.map_or("n/a".into(), |s| s.to_string()),
            Sends::show_per_landed(r.sends, r.landed),
            measure::row_note(r.failure.as_deref(), r.duplicates)
                .trim()
                .to_string(),
        ]);
        let c = &r.counters;
        let mark = if c.settled { "" } else { "*" };
        wire.row(vec![
            r.scenario.clone(),
            r.round.to_string(),
            r.sender.label().to_string(),
            format!("{}{mark}", c.delayed),
            format!("{}{mark}", c.evicted),
            format!("{}{mark}", c.refused),
            format!("{}{mark}", c.ignored),
            format!("{:.1}", c.connections_per_leader(super::NODES)),
            r.relays.show(),
            r.load.as_ref().map_or("none".into(), |l| l.show()),
        ]);
    }
    table.note(
        "(landed: unique messages, from the chain on node 2, which no contender sends to; \
         slots p50/p99: each landed transaction's slot less the node's slot when it was due at \
         its sender's pace (in the max scenario, for every contender, at the fastest pace one is \
         asked for: tpu-client-next's), counted from the sender's process start; \
         sends/tx: streams per landed, per transaction per leader address, counted where each \
         sender makes them — n/a for RPC sendTransaction, whose node makes its streams; the \
         goals compare txpace with the better of Agave's two TPU clients, not with RPC)",
    );
    for line in goal_lines(runs) {
        table.note(line);
    }
    for r in runs {
        if let Some(d) = r.dark {
            wire.note(format!(
                "{}, round {}, {}: the dark node (node {}, the one leading the most of the \
                 window) led {} slots while its TPU was cut; what they allow any sender, p99 {} \
                 slots to land; of this run's transactions {} landed in them and {} sooner \
                 than they allow them",
                r.scenario,
                r.round,
                r.sender.label(),
                d.node,
                d.dark_slots,
                d.p99_bound,
                d.landed_in_dark,
                d.under_floor
            ));
        }
    }
    wire.note(
        "(delayed, evicted, refused, ignored: the nodes' own TPU server counters over the \
         run, summed over the nodes — unstaked streams whose read was delayed for a budget, \
         unstaked connections evicted, connections refused for too many open, handshakes \
         ignored by the per-address rate limit — every sender's on the wire, the load's \
         included; * where they had not stopped changing when read. New connections per leader: \
         the counters' new connections over the run, over 3 nodes. Relays: \
         datagrams delivered / dropped by the links, summed over the nodes. Load: its \
         transactions sent at least once and landed, from its reports and the chain)",
    );
    let links: Vec<_> = runs
        .iter()
        .filter(|r| r.sender == Sender::Txpace)
        .map(|r| (r.scenario.clone(), r.round, r.links.clone()))
        .collect();
    vec![table, wire, super::agree::section(&links)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wan::goals::tests::run;

    #[test]
    fn the_tables_have_a_row_per_run_and_the_goals_under_them() {
        let runs = [
            run("apac", Sender::Txpace, 5.6, 8, 500),
            run("apac", Sender::Legacy, 7.0, 6, 500),
        ];
        let s = sections(&runs, 500, "4 × 200 tx/s unstaked");
        // The contenders, the wire, and txpace's link figures against the relays'.
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].rows.len(), 2);
        assert_eq!(
            s[0].rows[0][..6],
            ["apac", "1", "txpace", "100 tx/s", "500/500", "5.6"]
        );
        assert_eq!(
            s[1].rows[1][3..],
            ["0", "0", "0", "0", "0.0", "0/0 · 0/0", "none"]
        );
        assert!(
            s[0].notes
                .iter()
                .any(|n| n.contains("lands every transaction"))
        );
        let mut dark = run("mainnet-dark", Sender::Next, 5.3, 5, 500);
        dark.dark = Some(crate::wan::dark::DarkFigures {
            node: 2,
            dark_slots: 8,
            p99_bound: 4,
            landed_in_dark: 2,
            under_floor: 0,
        });
        let s = sections(&[dark], 500, "none");
        assert!(
            s[1].notes.iter().any(|n| n
                == "mainnet-dark, round 1, Agave tpu-client-next: the dark node (node 2, the \
                    one leading the most of the window) led 8 slots while its TPU was cut; \
                    what they allow any sender, p99 4 slots to land; of this run's \
                    transactions 2 landed in them and 0 sooner than they allow them"),
            "{:?}",
            s[1].notes
        );
    }
}

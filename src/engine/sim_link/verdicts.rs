//! The link verdicts on the simulated cluster (tokio's paused clock): four leaders, one on a
//! near clean link, one far, one near and losing 5% each way, one near and dark (it never
//! answers). The verdicts name the far, the lossy and the dark one — and call the near clean
//! one `ok`, in every snapshot that judges it.

use std::time::Duration;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{
    EngineConfig,
    sim::SimCluster,
    snapshot::{RateTarget, Verdict},
};

const N: usize = 1_500;

#[tokio::test(start_paused = true)]
async fn the_verdicts_name_the_far_the_lossy_and_the_dark_leader_and_no_other() {
    let ls: Vec<Pubkey> = (0..4).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let links = [
        SimLink::new(20, 0.0),
        SimLink::new(320, 0.0),
        SimLink::new(20, 0.05),
        SimLink::new(20, 0.0),
    ];
    for (l, link) in ls.iter().zip(links) {
        let addr = cluster.addr_of(l).expect("an address");
        cluster.set_link(addr, Some(link));
    }
    let dark = cluster.addr_of(&ls[3]).expect("an address");
    cluster.set_hanging(dark, true);
    let expected = [Verdict::Ok, Verdict::Far, Verdict::Lossy, Verdict::Dark];

    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let h = cluster.start_engine(cfg, cluster.transactions(N, hash));
    // Every verdict any snapshot gave each leader.
    let mut seen: Vec<Vec<Verdict>> = vec![Vec::new(); ls.len()];
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        for row in snap.leaders.iter() {
            let i = ls
                .iter()
                .position(|l| *l == row.identity)
                .expect("a leader");
            if let Some(v) = row.link.verdict
                && !seen[i].contains(&v)
            {
                seen[i].push(v);
            }
        }
    }
    let out = h.task.await.expect("engine");
    let snap = out.snapshot;
    eprintln!("verdicts seen: {seen:?}");
    for t in snap.leader_totals.iter() {
        eprintln!("{} {:?}", t.identity, t.link);
    }
    assert_eq!(snap.counts.confirmed, N as u64);
    for (i, want) in expected.iter().enumerate() {
        let total = snap
            .leader_totals
            .iter()
            .find(|t| t.identity == ls[i])
            .expect("every leader was sent to");
        assert_eq!(
            total.link.verdict,
            Some(*want),
            "leader {i}: {:?}",
            total.link
        );
    }
    // The near clean one was never named anything else, and the far one far from its first
    // reading; the lossy one was `ok` until enough datagrams were sent to judge its loss.
    assert_eq!(seen[0], vec![Verdict::Ok], "the near clean leader");
    assert_eq!(seen[1], vec![Verdict::Far], "the far leader");
    assert!(
        seen[2]
            .iter()
            .all(|v| matches!(v, Verdict::Ok | Verdict::Lossy)),
        "the lossy leader: {:?}",
        seen[2]
    );
    // The dark one was judged by no evidence until its streams went unanswered, then dark.
    assert_eq!(seen[3].last(), Some(&Verdict::Dark), "the dark leader");
    assert!(
        seen[3]
            .iter()
            .all(|v| matches!(v, Verdict::Ok | Verdict::Dark)),
        "the dark leader: {:?}",
        seen[3]
    );
    // The figures are the link's: the far one's round trip, the lossy one's share.
    let far = snap.leader_totals.iter().find(|t| t.identity == ls[1]);
    assert_eq!(far.and_then(|t| t.link.srtt_ms), Some(320));
    let lossy = snap.leader_totals.iter().find(|t| t.identity == ls[2]);
    let loss = lossy.and_then(|t| t.link.loss()).expect("measured loss");
    assert!((0.03..0.07).contains(&loss), "{loss}");
}

//! The relay's link conditions, measured through a real UDP relay on loopback under tokio's
//! paused clock (see `support`): what a node and its clients see is what was set.

mod support;

use std::time::Duration;

use support::{Wire, mean, missing, settle, within};
use txpace_relay::SourceMode;

const MS: Duration = Duration::from_millis(1);

/// 20,000 datagrams through `rtt:100ms,loss:5%`: the node sees them 50 ms after they were sent
/// and misses 5% of them; the client's echoes come back after 100 ms, with 5% more lost on the
/// way back. The relay's counters account for every missing datagram, and the kernel dropped
/// none.
#[tokio::test(start_paused = true)]
async fn delay_and_loss_each_way_are_what_was_set() {
    let mut wire = Wire::new("rtt:100ms,loss:5%", 1, SourceMode::Client).await;
    wire.stream(0, 20, 100, 1000 * MS).await;
    wire.step(150 * MS).await;
    let sent = 20_000u32;

    let at_node = wire.at_node();
    let one_way = mean(at_node.iter().map(|s| s.delay()));
    assert!(
        within(one_way.as_secs_f64(), 0.050, 0.10),
        "one-way {one_way:?}"
    );
    assert!(
        at_node.iter().all(|s| s.delay() == 50 * MS),
        "a delay other than 50 ms"
    );
    let lost_up = missing(&at_node, sent).len();
    assert!(
        within(lost_up as f64 / f64::from(sent), 0.05, 0.10),
        "lost {lost_up} of {sent} to the node"
    );

    let echoes = wire.echoes(0);
    let rtt = mean(echoes.iter().map(|s| s.delay()));
    assert!(within(rtt.as_secs_f64(), 0.100, 0.10), "rtt {rtt:?}");
    let lost_down = at_node.len() - echoes.len();
    assert!(
        within(lost_down as f64 / at_node.len() as f64, 0.05, 0.10),
        "lost {lost_down} of {} on the way back",
        at_node.len()
    );

    eprintln!(
        "rtt:100ms,loss:5%: one-way {one_way:?}, rtt {rtt:?}, lost {:.2}% to the node and \
         {:.2}% back",
        100.0 * lost_up as f64 / f64::from(sent),
        100.0 * lost_down as f64 / at_node.len() as f64
    );
    let stats = wire.stats();
    assert_eq!(stats["to_node"]["received"], u64::from(sent));
    assert_eq!(stats["to_node"]["dropped"]["loss"], lost_up as u64);
    assert_eq!(stats["to_clients"]["dropped"]["loss"], lost_down as u64);
    assert_eq!(stats["to_node"]["in_flight"], 0);
    assert_eq!(stats["kernel_drops_relay"], 0);
}

/// Losses in bursts (`burst:4`): 40,000 datagrams lose 5% on average, in runs of about four.
#[tokio::test(start_paused = true)]
async fn bursty_loss_averages_the_loss_in_runs_of_the_burst_length() {
    let mut wire = Wire::new("loss:5%,burst:4", 1, SourceMode::Client).await;
    wire.stream(0, 40, 100, 1000 * MS).await;
    wire.step(10 * MS).await;
    let sent = 40_000u32;
    let lost = missing(&wire.at_node(), sent);
    assert!(
        within(lost.len() as f64 / f64::from(sent), 0.05, 0.10),
        "lost {} of {sent}",
        lost.len()
    );
    let runs = 1 + lost.windows(2).filter(|w| w[1] != w[0] + 1).count();
    let burst = lost.len() as f64 / runs as f64;
    assert!(within(burst, 4.0, 0.15), "mean burst {burst:.2}");
    eprintln!(
        "loss:5%,burst:4: lost {:.2}% in bursts of {burst:.2} on average",
        100.0 * lost.len() as f64 / f64::from(sent)
    );
    let stats = wire.stats();
    assert_eq!(stats["to_node"]["dropped"]["burst"], lost.len() as u64);
    assert_eq!(stats["to_node"]["dropped"]["loss"], 0);
}

/// `jitter:20ms` (the round trip within ±20 ms) spreads each one-way delay over 50 ± 10 ms. Queueing jitter (the default)
/// never reorders; `reorder` jitter, independent per datagram, does, datagrams being 1 ms apart.
#[tokio::test(start_paused = true)]
async fn independent_jitter_reorders_and_queueing_jitter_does_not() {
    for (link, reorders) in [
        ("rtt:100ms,jitter:20ms", false),
        ("rtt:100ms,jitter:20ms,reorder", true),
    ] {
        let mut wire = Wire::new(link, 1, SourceMode::Client).await;
        wire.stream(0, 1, 100, 3000 * MS).await;
        wire.step(100 * MS).await;
        let seen = wire.at_node();
        assert_eq!(seen.len(), 3000, "{link}: every datagram arrives");
        let overtaken = seen.windows(2).filter(|w| w[1].seq < w[0].seq).count();
        let delays: Vec<Duration> = seen.iter().map(|s| s.delay()).collect();
        let (low, high) = (*delays.iter().min().unwrap(), *delays.iter().max().unwrap());
        assert!(
            low >= 40 * MS && high <= 61 * MS,
            "{link}: {low:?}..{high:?}"
        );
        assert!(
            high - low >= 10 * MS,
            "{link}: hardly any jitter, {low:?}..{high:?}"
        );
        assert!(
            within(mean(delays.into_iter()).as_secs_f64(), 0.050, 0.10),
            "{link}: mean delay"
        );
        eprintln!("{link}: delays {low:?}..{high:?}, {overtaken} of 3000 overtaken");
        if reorders {
            assert!(overtaken > 300, "{link}: only {overtaken} reordered");
        } else {
            assert_eq!(overtaken, 0, "{link}: reordered");
        }
    }
}

/// `rate:1mbit,queue:10000B`: a burst of 100 datagrams of 1,000 bytes fills the queue with 10
/// (the rest are tail-dropped) which leave 8 ms apart; a steady 2 Mbit/s then gets through at
/// 1 Mbit/s, the rest dropped at the queue.
#[tokio::test(start_paused = true)]
async fn a_bandwidth_cap_paces_and_tail_drops() {
    let mut wire = Wire::new("rate:1mbit,queue:10000B", 1, SourceMode::Client).await;
    wire.send(0, 0, 100, 1000);
    settle().await;
    wire.step(200 * MS).await;
    let burst = wire.at_node();
    let seqs: Vec<u32> = burst.iter().map(|s| s.seq).collect();
    assert_eq!(
        seqs,
        (0..10).collect::<Vec<u32>>(),
        "the queue keeps the first ten"
    );
    let at: Vec<Duration> = burst.iter().map(|s| s.at).collect();
    assert_eq!(at, (1..=10).map(|k| k * 8 * MS).collect::<Vec<_>>());
    assert_eq!(wire.stats()["to_node"]["dropped"]["queue"], 90);

    // 2 Mbit/s for 2 s: one datagram every 4 ms.
    let start = wire.at_node().len();
    for _ in 0..500 {
        wire.send(0, 0, 1, 1000);
        settle().await;
        wire.step(4 * MS).await;
    }
    wire.step(200 * MS).await;
    let steady = &wire.at_node()[start..];
    let (first, last) = (steady[0].at, steady[steady.len() - 1].at);
    let rate = (steady.len() - 1) as f64 * 8000.0 / (last - first).as_secs_f64();
    assert!(
        within(rate, 1e6, 0.10),
        "{rate:.0} bit/s through a 1 Mbit/s cap"
    );
    eprintln!("rate:1mbit,queue:10000B: {rate:.0} bit/s delivered of 2 Mbit/s offered");
    let stats = wire.stats();
    let dropped = stats["to_node"]["dropped"]["queue"].as_u64().unwrap() - 90;
    assert_eq!(dropped as usize + steady.len(), 500);
}

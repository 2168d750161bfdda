use super::*;
use crate::ui::fixtures;

fn scrape(snaps: &[Snapshot]) -> String {
    let runs = Runs::default();
    for s in snaps {
        runs.note(Arc::new(s.clone()));
    }
    runs.render()
}

/// The value of the series whose line starts with `series` (name and labels as printed).
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .parse()
        .expect("a number")
}

/// Every figure equals the snapshot's: queues, sends, per-leader streams and landings, and
/// the histograms' counts and sums; counters are typed as counters.
#[test]
fn a_scrape_shows_the_snapshots_own_figures() {
    let snap = fixtures::running(500);
    let text = scrape(std::slice::from_ref(&snap));
    let c = snap.counts;
    assert_eq!(
        value(&text, r#"txpace_transactions{state="confirmed"}"#),
        c.confirmed as f64
    );
    assert_eq!(
        value(&text, r#"txpace_transactions{state="pending"}"#),
        c.pending as f64
    );
    assert_eq!(value(&text, "txpace_sends_total"), c.sends as f64);
    assert_eq!(
        value(&text, r#"txpace_streams_total{outcome="throttled"}"#),
        c.streams.throttled as f64
    );
    assert!(text.contains("# TYPE txpace_sends_total counter"), "{text}");
    assert!(
        text.contains("# TYPE txpace_time_to_land_seconds histogram"),
        "{text}"
    );
    let l = &snap.leader_totals[0];
    let leader = l.identity.to_string();
    assert_eq!(
        value(
            &text,
            &format!(r#"txpace_leader_streams_total{{leader="{leader}",outcome="accepted"}}"#)
        ),
        l.streams.accepted as f64
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"txpace_leader_landed_total{{leader="{leader}"}}"#)
        ),
        l.landed as f64
    );
    let landed: u64 = snap.latency.histogram.iter().sum();
    assert_eq!(
        value(&text, "txpace_time_to_land_seconds_count"),
        landed as f64
    );
    assert_eq!(
        value(&text, r#"txpace_time_to_land_seconds_bucket{le="+Inf"}"#),
        landed as f64
    );
    assert_eq!(
        value(&text, r#"txpace_time_to_land_seconds_bucket{le="0.4"}"#),
        snap.latency.histogram[0] as f64
    );
    assert_eq!(
        value(&text, "txpace_time_to_land_seconds_sum"),
        snap.latency.sum_ms as f64 / 1000.0
    );
    assert_eq!(
        value(&text, "txpace_stream_ack_seconds_count"),
        c.streams.sent as f64
    );
    assert_eq!(value(&text, r#"txpace_run_state{state="running"}"#), 1.0);
    assert_eq!(value(&text, r#"txpace_run_state{state="done"}"#), 0.0);
    assert_eq!(value(&text, "txpace_rate_target_tps"), 100.0);
}

/// A deploy's phases each keep their own series, labelled with the phase, and a finished
/// phase keeps its last values.
#[test]
fn each_deploy_phase_keeps_its_own_series() {
    let mut writes = fixtures::deploying(40);
    let mut deploy = fixtures::done(2);
    deploy.phase = writes.phase.clone().map(|mut p| {
        p.name = "deploy".into();
        p.step += 1;
        p
    });
    writes.run = crate::engine::snapshot::RunState::Done;
    let text = scrape(&[writes.clone(), deploy.clone()]);
    let name = writes.phase.as_ref().expect("phase").name.to_string();
    assert_eq!(
        value(&text, &format!(r#"txpace_sends_total{{phase="{name}"}}"#)),
        writes.counts.sends as f64
    );
    assert_eq!(
        value(&text, r#"txpace_sends_total{phase="deploy"}"#),
        deploy.counts.sends as f64
    );
    // One HELP and TYPE per family, whatever the number of phases.
    assert_eq!(text.matches("# TYPE txpace_sends_total ").count(), 1);
}

/// An API key in the endpoint never reaches a scrape.
#[test]
fn a_scrape_never_shows_a_secret() {
    let mut snap = fixtures::running(10);
    crate::redact::register_url("https://rpc.example.com/v1/metricsecret0123456789?api-key=k3y");
    snap.cluster.rpc_url = "https://rpc.example.com/v1/metricsecret0123456789?api-key=k3y".into();
    let text = scrape(&[snap]);
    assert!(!text.contains("metricsecret0123456789"), "{text}");
    assert!(!text.contains("k3y"), "{text}");
    assert!(text.contains("rpc.example.com"), "{text}");
}

/// A phase that ended between two wake-ups still shows its final figures: the next phase's
/// picture carries them.
#[test]
fn an_ended_phase_missed_by_the_keeper_keeps_its_final_figures() {
    let mut writes = fixtures::deploying(40);
    writes.run = crate::engine::snapshot::RunState::Running;
    let mut deploy = fixtures::running(2);
    deploy.phase = writes.phase.clone().map(|mut p| {
        p.name = "deploy".into();
        p.step += 1;
        p
    });
    deploy.finished_phases = Arc::new(vec![Arc::new(writes.clone())]);
    // Only the later picture is ever seen.
    let text = scrape(&[deploy]);
    let name = writes.phase.as_ref().expect("phase").name.to_string();
    assert_eq!(
        value(&text, &format!(r#"txpace_sends_total{{phase="{name}"}}"#)),
        writes.counts.sends as f64
    );
}

/// Each leader's link figures and verdict are the snapshot's, and the last minute on the wire.
#[test]
fn a_scrape_shows_each_leaders_link_and_the_last_minute() {
    let snap = fixtures::link_verdicts(300);
    let text = scrape(std::slice::from_ref(&snap));
    let far = &snap.leader_totals[0];
    assert_eq!(
        far.link.verdict,
        Some(crate::engine::snapshot::Verdict::Far)
    );
    let key = far.identity.to_string();
    let verdict =
        |v: &str| format!(r#"txpace_leader_link_verdict{{leader="{key}",verdict="{v}"}}"#);
    assert_eq!(value(&text, &verdict("far")), 1.0);
    assert_eq!(value(&text, &verdict("ok")), 0.0);
    assert_eq!(
        value(
            &text,
            &format!(r#"txpace_leader_rtt_seconds{{leader="{key}"}}"#)
        ),
        0.32
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"txpace_leader_packets_lost_total{{leader="{key}"}}"#)
        ),
        far.link.lost_packets as f64
    );
    let evicted = snap
        .leader_totals
        .iter()
        .find(|l| l.link.verdict == Some(crate::engine::snapshot::Verdict::Evicted))
        .expect("an evicted leader");
    assert_eq!(
        value(
            &text,
            &format!(
                r#"txpace_leader_closes_total{{leader="{}",code="1"}}"#,
                evicted.identity
            )
        ),
        2.0
    );
    assert_eq!(value(&text, "txpace_credit_waited_share"), 355.0 / 11_820.0);
    assert_eq!(
        value(&text, r#"txpace_time_to_land_part_seconds{part="leader"}"#),
        1.08
    );
    // A leader with nothing measured has no verdict series and no round trip.
    let unmeasured = snap
        .leader_totals
        .iter()
        .find(|l| l.link.verdict.is_none())
        .expect("an unmeasured leader")
        .identity
        .to_string();
    assert!(!text.contains(&format!(
        r#"txpace_leader_rtt_seconds{{leader="{unmeasured}"}}"#
    )));
}

/// Every family served is listed in docs/metrics-and-events.md (counters by their `_total`
/// name, as served).
#[test]
fn every_metric_is_documented() {
    let docs = include_str!("../../docs/metrics-and-events.md");
    let text = scrape(&[fixtures::link_verdicts(300)]);
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let (name, _kind) = rest.split_once(' ').expect("a TYPE line");
        assert!(
            docs.contains(&format!("`{name}")),
            "{name} is not in docs/metrics-and-events.md"
        );
    }
}

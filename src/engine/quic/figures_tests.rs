//! The link figures the transport gives the operator, from quinn against a TPU-like server on
//! loopback: what its connections measured, the handshakes' times and timeouts, the close
//! codes, and the streams' waits for credit.

use super::{
    tests::{stingy_server, tpu_server},
    *,
};

fn transport(connect_timeout: Duration) -> QuicTransport {
    QuicTransport::with_options(
        &Keypair::new(),
        QuicOptions {
            connect_timeout,
            evict_after: Duration::from_secs(60),
            ..QuicOptions::default()
        },
    )
    .expect("client endpoint")
}

/// After streams to a healthy leader: quinn's round trip, datagrams sent, one handshake this
/// minute and how long it took, one live connection, nothing closed — and the round trip
/// still once that connection is gone.
#[tokio::test]
async fn a_healthy_leaders_figures_are_quinns() {
    let (addr, _events) = tpu_server();
    let t = transport(Duration::from_secs(2));
    assert_eq!(
        t.path_figures(addr),
        None,
        "nothing measured before a connection"
    );
    for _ in 0..20 {
        t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
            .await
            .expect("accepted");
    }
    let f = t.path_figures(addr).expect("figures");
    eprintln!("{f:?}");
    assert!(
        f.srtt.is_some_and(|r| r < Duration::from_millis(100)),
        "{f:?}"
    );
    assert!(f.sent_packets >= 20, "{f:?}");
    assert!(f.handshake.is_some(), "{f:?}");
    assert_eq!((f.new_last_minute, f.connections), (1, 1), "{f:?}");
    assert_eq!((f.handshake_timeouts, f.ignored_ago), (0, None));
    assert!(f.closes.is_empty() && f.evicted_ago.is_none(), "{f:?}");
    // Its connection given up, the round trip it measured stays: the link was measured.
    t.abandon(addr);
    let gone = t.path_figures(addr).expect("figures");
    assert_eq!(gone.connections, 0, "{gone:?}");
    assert!(
        gone.srtt.is_some_and(|r| r < Duration::from_millis(100)),
        "{gone:?}"
    );
}

/// A handshake to an address that never answers times out: counted, and not read as ignored
/// (no other connection to it was up), with no round trip measured.
#[tokio::test]
async fn a_timed_out_handshake_is_counted() {
    let silent = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let addr = silent.local_addr().expect("address");
    let t = transport(Duration::from_millis(300));
    let r = t
        .send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await;
    assert!(matches!(r, Err(SendError::Connection(_))), "{r:?}");
    let f = t.path_figures(addr).expect("figures");
    assert_eq!(f.handshake_timeouts, 1, "{f:?}");
    assert_eq!((f.srtt, f.handshake, f.ignored_ago), (None, None, None));
    assert_eq!(f.new_last_minute, 1);
}

/// A leader that grants two streams at a time and reads them late: streams opened past its
/// credit wait for it, and their hand-offs say how long; one that closes a connection with
/// code 4 has the code counted.
#[tokio::test]
async fn credit_waits_and_close_codes_are_recorded() {
    let (addr, _accepted) = stingy_server(Duration::from_millis(150), false);
    let t = transport(Duration::from_secs(2));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the first send");
    let handoffs: Vec<Handoff> = (0..6).map(|_| Handoff::default()).collect();
    let sends: Vec<_> = handoffs
        .iter()
        .map(|h| tokio::spawn(t.send(addr, Arc::from(&b"tx"[..]), h.clone())))
        .collect();
    for s in sends {
        let _ = s.await.expect("send task");
    }
    let waited: Vec<Duration> = handoffs.iter().filter_map(Handoff::credit_wait).collect();
    assert!(!waited.is_empty(), "no stream waited for credit");
    assert!(
        waited.iter().all(|w| *w > Duration::ZERO),
        "a wait of nothing: {waited:?}"
    );

    let (server, _) = stingy_server(Duration::from_millis(150), true);
    let addr = super::relay::start(server, Duration::from_millis(40), 0.1).await;
    let t = transport(Duration::from_secs(2));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the first send");
    for _ in 0..4 {
        let sends: Vec<_> = (0..20)
            .map(|_| tokio::spawn(t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())))
            .collect();
        for s in sends {
            let _ = s.await.expect("send task");
        }
    }
    let f = t.path_figures(addr).expect("figures");
    assert_eq!(f.closes, vec![(4, 1)], "{f:?}");
    assert_eq!(f.evicted_ago, None, "code 4 is not an eviction");
    assert!(f.lost_packets > 0, "a 10% lossy relay lost nothing: {f:?}");
}

/// `--bind`: QUIC sends from the address given, and an address the host does not have is
/// refused when the transport is set up, before anything is sent.
#[tokio::test]
async fn the_transport_sends_from_the_bound_address() {
    let (addr, _events) = tpu_server();
    let options = QuicOptions {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        ..QuicOptions::default()
    };
    let t = QuicTransport::with_options(&Keypair::new(), options).expect("bound to loopback");
    let local = t.inner.endpoint.local_addr().expect("local address");
    assert_eq!(local.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("accepted from the bound address");
    let elsewhere = QuicOptions {
        // TEST-NET-1 (RFC 5737): no host has it.
        bind: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
        ..QuicOptions::default()
    };
    let refused = QuicTransport::with_options(&Keypair::new(), elsewhere);
    assert!(matches!(refused, Err(QuicSetupError::Bind(_))));
}

/// A leader whose connections were closed for idleness (its turn over) keeps the round trip
/// they measured, so its verdict does not turn to "none" at the end of a run (`txpace-bench
/// wan`: a 20 ms node's verdict read `–` after its connection idled out); what only live
/// connections have (their count, the last minute's handshakes) is zero.
#[test]
fn an_idle_leader_keeps_its_last_round_trip() {
    let t0 = tokio::time::Instant::now();
    let mut gone = super::figures::Gone::default();
    let addr: SocketAddr = "127.0.0.1:9".parse().expect("address");
    let measured = PathFigures {
        srtt: Some(Duration::from_millis(23)),
        sent_packets: 196,
        connections: 1,
        new_last_minute: 1,
        ..PathFigures::default()
    };
    gone.keep(addr, measured, t0);
    let f = gone
        .with(addr, None, t0 + Duration::from_secs(5))
        .expect("kept");
    assert_eq!(f.srtt, Some(Duration::from_millis(23)));
    assert_eq!(
        (f.sent_packets, f.connections, f.new_last_minute),
        (196, 0, 0)
    );
}

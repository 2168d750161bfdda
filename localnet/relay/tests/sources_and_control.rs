//! What the node sees of the relay's clients (an address of its own for each), and the
//! commands that change the relays while they run — through real UDP sockets on loopback under
//! tokio's paused clock (see `support`).

mod support;

use std::{
    net::{IpAddr, Ipv4Addr},
    time::Duration,
};

use support::{Seen, Wire, missing, settle, source_ips};
use txpace_relay::SourceMode;

const MS: Duration = Duration::from_millis(1);

fn from_client(seen: &[Seen], k: u8) -> Vec<Seen> {
    seen.iter().filter(|s| s.client == k).copied().collect()
}

/// Two clients of one relay reach the node from two addresses of 127.0.0.0/8, neither of them
/// the relay's own 127.0.0.1; each gets its own answers back; and a second node sees a client
/// from the same address as the first does (one host, one address).
#[tokio::test(start_paused = true)]
async fn each_client_reaches_the_node_from_an_address_of_its_own() {
    let mut wire = Wire::new("rtt:10ms", 2, SourceMode::Client).await;
    let second_node = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    wire.relays
        .add(second_node.local_addr().unwrap(), "off".parse().unwrap())
        .unwrap();
    wire.send(0, 0, 5, 100);
    wire.send(1, 0, 7, 100);
    wire.send(1, 1, 1, 100);
    settle().await;
    wire.step(20 * MS).await;

    let seen = wire.at_node();
    assert_eq!(seen.len(), 12);
    let (zero, one) = (
        source_ips(&from_client(&seen, 0)),
        source_ips(&from_client(&seen, 1)),
    );
    assert_eq!((zero.len(), one.len()), (1, 1), "{zero:?} {one:?}");
    assert_ne!(zero, one, "two clients share a source address");
    for ip in [zero[0], one[0]] {
        let IpAddr::V4(v4) = ip else {
            panic!("{ip} is not IPv4")
        };
        assert!(v4.is_loopback() && v4 != Ipv4Addr::LOCALHOST, "{ip}");
    }
    // `stats` names the address the node sees each client from.
    let upstreams = wire.stats()["upstreams"].clone();
    let seen_from: Vec<String> = [0, 1]
        .map(|k| from_client(&seen, k)[0].from.to_string())
        .into();
    let mut listed: Vec<String> = upstreams
        .as_object()
        .expect("an object")
        .values()
        .map(|v| v.as_str().expect("an address").to_string())
        .collect();
    listed.sort();
    let mut expected = seen_from.clone();
    expected.sort();
    assert_eq!(listed, expected, "{upstreams}");
    // Each client's echoes came back to it, and only its own.
    assert_eq!(wire.echoes(0).len(), 5);
    assert_eq!(wire.echoes(1).len(), 7);
    assert!(wire.echoes(1).iter().all(|s| s.client == 1));

    let mut buf = [0u8; 64];
    let (_, at_second) = second_node
        .try_recv_from(&mut buf)
        .expect("client 1's datagram at node 1");
    assert_eq!(at_second.ip(), one[0], "node 1 sees client 1 elsewhere");
}

/// With `shared` sources every client comes from 127.0.0.1, as before distinct sources.
#[tokio::test(start_paused = true)]
async fn shared_sources_put_every_client_on_one_address() {
    let mut wire = Wire::new("off", 2, SourceMode::Shared).await;
    wire.send(0, 0, 3, 100);
    wire.send(1, 0, 3, 100);
    settle().await;
    wire.step(2 * MS).await;
    assert_eq!(
        source_ips(&wire.at_node()),
        [IpAddr::V4(Ipv4Addr::LOCALHOST)]
    );
    assert_eq!(wire.echoes(0).len() + wire.echoes(1).len(), 6);
}

/// Commands change a running relay's link, and what it does changes with them: a link that
/// loses everything, then a 40 ms round trip, then a blackhole and its end; `stats` counts each
/// cause; wrong commands are refused with the reason and change nothing.
#[tokio::test(start_paused = true)]
async fn commands_change_the_link_while_it_runs() {
    let mut wire = Wire::new("off", 1, SourceMode::Client).await;
    let burst = |wire: &mut Wire| wire.send(0, 0, 100, 100);

    assert_eq!(wire.command("link 0 loss:100%"), "ok link 0 loss:100%");
    burst(&mut wire);
    settle().await;
    wire.step(5 * MS).await;
    assert_eq!(wire.at_node().len(), 0);
    assert_eq!(wire.stats()["to_node"]["dropped"]["loss"], 100);
    assert_eq!(wire.stats()["link"], "loss:100%");

    assert_eq!(wire.command("link 0 rtt:40ms"), "ok link 0 rtt:40ms");
    burst(&mut wire);
    settle().await;
    wire.step(19 * MS).await;
    assert_eq!(wire.at_node().len(), 0, "arrived before 20 ms");
    wire.step(MS).await;
    let seen = wire.at_node();
    assert_eq!(seen.len(), 100);
    assert!(seen.iter().all(|s| s.delay() == 20 * MS));
    assert_eq!(missing(&seen, 200), (0..100).collect::<Vec<u32>>());

    assert_eq!(wire.command("blackhole 0"), "ok blackhole 0");
    burst(&mut wire);
    settle().await;
    wire.step(50 * MS).await;
    assert_eq!(wire.at_node().len(), 100);
    assert_eq!(wire.stats()["to_node"]["dropped"]["blackhole"], 100);
    assert_eq!(wire.command("restore 0"), "ok restore 0");
    burst(&mut wire);
    settle().await;
    wire.step(50 * MS).await;
    assert_eq!(wire.at_node().len(), 200);

    for (command, says) in [
        ("link 1 off", "no node 1"),
        ("link 0 rtt:40", "duration"),
        ("link 0", "not a command"),
        ("profile moon", "unknown profile"),
        ("jam 0", "not a command"),
    ] {
        let answer = wire.command(command);
        assert!(
            answer.starts_with("error: ") && answer.contains(says),
            "{command}: {answer}"
        );
    }
    assert_eq!(wire.stats()["link"], "rtt:40ms");
    assert_eq!(wire.command("profile apac"), "ok profile apac");
    assert_eq!(wire.stats()["link"], "rtt:230ms,jitter:15ms,loss:2%");
    let all = wire.command("stats");
    assert!(
        all.starts_with("ok stats [{") && all.ends_with("}]"),
        "{all}"
    );
}

/// Several commands in one input: one answer line each, in order.
#[tokio::test(start_paused = true)]
async fn every_line_of_input_gets_one_answer() {
    let wire = Wire::new("off", 0, SourceMode::Client).await;
    let answers = wire.command("link 0 rtt:85ms,jitter:5ms,loss:0.5%\nbogus\n\nrestore 0");
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines.len(), 4, "{answers}");
    assert_eq!(lines[0], "ok link 0 rtt:85ms,jitter:5ms,loss:0.5%");
    assert!(lines[1].starts_with("error: ") && lines[2].starts_with("error: "));
    assert_eq!(lines[3], "ok restore 0");
}

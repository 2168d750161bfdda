//! The nodes' own TPU server counters, as ground truth beside a run's figures: how many streams
//! the QUIC server delayed for being over a sender's budget, how many connections it evicted,
//! refused or never let finish a handshake.
//!
//! Agave reports them through its metrics: every 5 s each node's TPU server
//! (`solana-streamer`'s `StreamerStats::report`, the `quic_streamer_tpu` measurement) submits a
//! datapoint whose counters are deltas since the last, and the metrics agent posts the points
//! it collected every 10 s to an InfluxDB `/write` endpoint in line protocol. With
//! `SOLANA_METRICS_CONFIG` pointed at a [`CounterSink`], this process is that endpoint: it sums
//! each counter over every point. The nodes of one local cluster share a process and so one
//! metrics agent, which tags their points alike: the sums are the cluster's, not one node's.
//! They trail the servers by up to 15 s (the report interval plus the agent's).

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{Arc, Mutex},
    thread,
};

use serde::Serialize;

/// The measurement of the TPU server's counters (`solana-core`'s `tpu.rs` names its server so).
pub const MEASUREMENT: &str = "quic_streamer_tpu";

/// The counters summed: those `StreamerStats::report` resets at each report (so a sum is a
/// total), and that say how the server treated senders. Its gauges (open connections, the
/// stream load) are not summed.
pub const COUNTERS: &[&str] = &[
    "new_connections",
    "new_streams",
    "throttled_streams",
    "throttled_unstaked_streams",
    "throttled_staked_streams",
    "evictions_unstaked",
    "evictions_staked",
    "connection_added_from_unstaked_peer",
    "connection_added_from_staked_peer",
    "connection_removed",
    "connection_add_failed",
    "connection_setup_timeout",
    "connection_setup_error",
    "connection_rate_limited_per_ipaddr",
    "connection_rate_limited_across_all",
    "refused_connections_too_many_open_connections",
    "stream_read_timeouts",
    "stream_read_errors",
    "invalid_stream_size",
];

/// The largest request body read (the agent posts at most 10 s × 1,000 points).
const MAX_BODY: usize = 16 << 20;

/// What the sink has summed so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServerCounters {
    /// `quic_streamer_tpu` points received (each node reports one every 5 s while it runs).
    pub reports: u64,
    /// Each of [`COUNTERS`], summed over the points.
    pub totals: BTreeMap<String, i64>,
}

/// An HTTP endpoint on loopback that takes the metrics agent's writes and sums the TPU
/// servers' counters.
#[derive(Clone)]
pub struct CounterSink {
    addr: SocketAddr,
    counters: Arc<Mutex<ServerCounters>>,
}

impl CounterSink {
    /// Listens on a free loopback port, serving on a thread of its own for the process's life.
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let sink = Self {
            addr: listener.local_addr()?,
            counters: Arc::default(),
        };
        let counters = sink.counters.clone();
        thread::Builder::new()
            .name("counterSink".to_string())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let counters = counters.clone();
                    // One thread per connection: the agent keeps one alive and posts on it.
                    let _ = thread::Builder::new()
                        .name("counterConn".to_string())
                        .spawn(move || serve(stream, &counters));
                }
            })?;
        Ok(sink)
    }

    /// What `SOLANA_METRICS_CONFIG` must say for the agent to write here.
    pub fn metrics_config(&self) -> String {
        format!(
            "host=http://{},db=localnet,u=localnet,p=localnet",
            self.addr
        )
    }

    pub fn snapshot(&self) -> ServerCounters {
        self.counters
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }
}

/// Answers every request on one connection, `204 No Content`, until it closes or misbehaves.
fn serve(stream: TcpStream, counters: &Mutex<ServerCounters>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(body) = read_request(&mut reader) {
        if let Ok(text) = std::str::from_utf8(&body)
            && let Ok(mut c) = counters.lock()
        {
            add_lines(&mut c, text);
        }
        let reply = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";
        if writer
            .write_all(reply)
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

/// One HTTP/1.1 request's body (by its `Content-Length`); `None` at the end of the connection
/// or on a request this sink does not take (chunked, too large).
fn read_request(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = 0usize;
    let mut first = true;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            if first {
                continue;
            }
            break;
        }
        first = false;
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return None;
            }
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Adds the `quic_streamer_tpu` points of a line-protocol body
/// (`name,tag=v field=12i,other=3i 1700000000000000000`) to `c`.
pub fn add_lines(c: &mut ServerCounters, body: &str) {
    for line in body.lines() {
        let Some((series, rest)) = line.split_once(' ') else {
            continue;
        };
        let name = series.split(',').next().unwrap_or_default();
        if name != MEASUREMENT {
            continue;
        }
        c.reports += 1;
        let fields = rest.split(' ').next().unwrap_or_default();
        for field in fields.split(',') {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            if !COUNTERS.contains(&key) {
                continue;
            }
            if let Ok(n) = value.trim_end_matches('i').parse::<i64>() {
                *c.totals.entry(key.to_string()).or_default() += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_of_the_tpu_server_are_summed_and_nothing_else() {
        let mut c = ServerCounters::default();
        add_lines(
            &mut c,
            "quic_streamer_tpu,host_id=abc active_connections=7i,throttled_unstaked_streams=12i,new_streams=100i 1\n\
             quic_streamer_tpu_forwards,host_id=abc throttled_unstaked_streams=1000i 2\n\
             quic_streamer_tpu,host_id=abc throttled_unstaked_streams=3i,evictions_unstaked=1i 3\n\
             garbage\n",
        );
        assert_eq!(c.reports, 2);
        assert_eq!(c.totals["throttled_unstaked_streams"], 15);
        assert_eq!(c.totals["new_streams"], 100);
        assert_eq!(c.totals["evictions_unstaked"], 1);
        // A gauge is not a total.
        assert!(!c.totals.contains_key("active_connections"));
    }

    #[test]
    fn the_sink_answers_posts_on_one_connection_and_sums_them() {
        let sink = CounterSink::start().unwrap();
        let host = sink
            .metrics_config()
            .split(',')
            .next()
            .and_then(|h| h.strip_prefix("host=http://"))
            .unwrap()
            .to_string();
        let mut conn = TcpStream::connect(&host).unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        for n in [2, 5] {
            let body =
                format!("quic_streamer_tpu,host_id=x connection_rate_limited_per_ipaddr={n}i 1\n");
            write!(
                conn,
                "POST /write?db=localnet HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            let mut status = String::new();
            reader.read_line(&mut status).unwrap();
            assert!(status.starts_with("HTTP/1.1 204"), "{status}");
            let mut rest = String::new();
            while reader.read_line(&mut rest).unwrap() > 0 && !rest.ends_with("\r\n\r\n") {}
        }
        let got = sink.snapshot();
        assert_eq!(got.reports, 2);
        assert_eq!(got.totals["connection_rate_limited_per_ipaddr"], 7);
    }
}

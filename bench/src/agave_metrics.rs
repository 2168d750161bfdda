//! Counting the sends of Agave's QUIC connection cache in the deploy benchmark, whose
//! `send_and_confirm_transactions_in_parallel_v2` takes a TPU client of Agave's own QUIC types
//! only, so a cache that counts sends where they are made (`agave_sends`) cannot be given to
//! it. Agave's clients do not expose how many transactions they sent, but the connection cache
//! reports `num_packets` (one per transaction per leader address) to the metrics agent: the
//! child installs a stand-in InfluxDB on loopback and sums that field of its own cache's points.
//!
//! The cache adds to `num_packets` when a send finishes, delivered or failed
//! (`solana-quic-client` 4.0.0, `QuicClientConnection::send_data`). Agave's clients wrap each
//! send in a 5 s timeout (`send_wire_transaction_futures` in `solana-tpu-client`,
//! `SEND_TIMEOUT_INTERVAL` in `send_and_confirm_transactions_in_parallel`) and drop a send
//! still unfinished then, so that send is never counted: the sum is a lower bound on the sends
//! made, and the tables mark it "≥" (`measure::Sends`).

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpListener,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use anyhow::{Result, anyhow};

/// Lets `datapoint_info!` through (it is skipped unless `info` is enabled) and prints nothing.
struct InfoOnly;

impl log::Log for InfoOnly {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, _: &log::Record) {}
    fn flush(&self) {}
}

/// A stand-in InfluxDB: accepts the metrics agent's line-protocol posts and sums the
/// `num_packets` field (sends finished, delivered or failed) of our connection cache's points.
pub struct MetricsSink {
    sent: Arc<AtomicU64>,
}

impl MetricsSink {
    /// Starts the sink for the connection cache named `cache` and points the metrics agent at
    /// it. Call it while the process is still single-threaded: the agent reads its
    /// configuration from the environment on first use.
    pub fn install(cache: &'static str) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let sent = Arc::new(AtomicU64::new(0));
        let total = sent.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = serve(stream, &total, cache);
            }
        });
        // SAFETY: single-threaded until here apart from the sink, which reads no environment.
        unsafe {
            std::env::set_var(
                "SOLANA_METRICS_CONFIG",
                format!("host=http://{addr},db=bench,u=bench,p=bench"),
            );
        }
        log::set_boxed_logger(Box::new(InfoOnly)).map_err(|e| anyhow!("{e}"))?;
        log::set_max_level(log::LevelFilter::Info);
        Ok(Self { sent })
    }

    /// Flushes the metrics agent and returns the packets counted. The cache reports its
    /// counters at most every 2 s, when a connection is taken: take one after that interval
    /// before calling this.
    pub fn flush_and_count(&self) -> u64 {
        solana_metrics::flush();
        self.sent.load(Ordering::SeqCst)
    }
}

fn serve(stream: std::net::TcpStream, total: &AtomicU64, cache: &str) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line
            .to_ascii_lowercase()
            .strip_prefix("content-length:")
            .map(|v| v.trim().to_string())
        {
            len = v.parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    for point in String::from_utf8_lossy(&body).lines() {
        if !point.starts_with(cache) {
            continue;
        }
        if let Some(v) = point
            .split([' ', ','])
            .find_map(|f| f.strip_prefix("num_packets="))
            .and_then(|v| v.trim_end_matches('i').parse::<u64>().ok())
        {
            total.fetch_add(v, Ordering::SeqCst);
        }
    }
    let mut stream = stream;
    stream
        .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    Ok(())
}

//! A TCP proxy that delays each direction: a node's RPC and websocket as a remote provider's.
//!
//! Every chunk read from one side is written to the other one one-way delay (half the round
//! trip) after it was read, in order; the end of the stream is passed on with the same delay.
//! TCP itself recovers losses, so only the delay is modelled: what a client of a provider 80 ms
//! away sees is an 80 ms round trip on every request, and connection setup takes one more.

use std::{io, net::SocketAddr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{
        TcpListener, TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
    runtime::Handle,
    sync::mpsc,
    time::Instant,
};

/// Listens on an ephemeral 127.0.0.1 port and carries every connection to `target`, each way
/// `rtt / 2` late; returns the proxy's address. Runs as long as `runtime`.
pub fn delay_proxy(target: SocketAddr, rtt: Duration, runtime: &Handle) -> io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    runtime.spawn(accept(listener, target, rtt / 2));
    Ok(addr)
}

async fn accept(listener: std::net::TcpListener, target: SocketAddr, one_way: Duration) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => {
            log::error!("delay proxy for {target} did not start: {e}");
            return;
        }
    };
    loop {
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(e) => {
                log::warn!("delay proxy for {target}: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            // Connecting takes a round trip of the emulated path: the SYN one way and the
            // SYN-ACK back.
            tokio::time::sleep(2 * one_way).await;
            match TcpStream::connect(target).await {
                Ok(server) => {
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (from_client, to_client) = client.into_split();
                    let (from_server, to_server) = server.into_split();
                    tokio::spawn(pump(from_client, to_server, one_way));
                    tokio::spawn(pump(from_server, to_client, one_way));
                }
                Err(e) => log::warn!("delay proxy: connecting to {target}: {e}"),
            }
        });
    }
}

/// Carries one direction: reads as they come, writes each `delay` after it was read.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, delay: Duration) {
    let (chunks, mut due) = mpsc::unbounded_channel::<(Instant, Option<Vec<u8>>)>();
    let writer = tokio::spawn(async move {
        while let Some((at, chunk)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            let Some(chunk) = chunk else { break };
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let read = from.read(&mut buf).await;
        let at = Instant::now() + delay;
        let chunk = match read {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(buf[..n].to_vec()),
        };
        let end = chunk.is_none();
        if chunks.send((at, chunk)).is_err() || end {
            break;
        }
    }
    drop(chunks);
    let _ = writer.await;
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpListener;

    use super::*;

    /// A request and its answer through an 80 ms proxy: the connection takes 80 ms, each
    /// exchange 80 ms more, and the close is passed on.
    #[tokio::test(start_paused = true)]
    async fn each_direction_is_half_the_round_trip_late() {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = server.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut conn, _) = server.accept().await.unwrap();
            let mut buf = [0u8; 64];
            loop {
                let n = conn.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                conn.write_all(&buf[..n]).await.unwrap();
            }
        });
        let proxy = delay_proxy(target, Duration::from_millis(80), &Handle::current()).unwrap();
        let t0 = Instant::now();
        let mut client = TcpStream::connect(proxy).await.unwrap();
        for round in 1..=3u8 {
            let asked = Instant::now();
            client.write_all(&[round; 10]).await.unwrap();
            let mut answer = [0u8; 10];
            client.read_exact(&mut answer).await.unwrap();
            assert_eq!(answer, [round; 10]);
            // The first exchange also waits for the connection to the server.
            let rtt = if round == 1 { 160 } else { 80 };
            assert_eq!(asked.elapsed(), Duration::from_millis(rtt), "round {round}");
        }
        client.shutdown().await.unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        assert_eq!(t0.elapsed(), Duration::from_millis(400));
    }
}

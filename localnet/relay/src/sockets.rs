//! The relay's sockets, with buffers large enough that the kernel does not drop what the link
//! model did not, and the kernel's own drop counts, so that a drop it did make shows as the
//! kernel's and is not mistaken for the link's.
//!
//! A link with 160 ms of delay holds a burst of datagrams inside the relay, then hands them back
//! all at once; Linux's default 208 KiB buffers overflow at a few hundred datagrams. Each socket
//! asks for [`BUFFER`] each way: Linux caps the request at `net.core.rmem_max`/`wmem_max`
//! (208 KiB on a fresh machine), so it then forces it (`SO_RCVBUFFORCE`, allowed to root and
//! CAP_NET_ADMIN); what it got is reported with the counters.

use std::{
    collections::HashSet,
    io,
    net::{SocketAddr, UdpSocket},
};

use socket2::{Domain, Protocol, Socket, Type};

/// What each relay socket asks for, each way.
pub const BUFFER: usize = 4 << 20;

/// A nonblocking UDP socket bound to `addr` with enlarged buffers.
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    // Best effort: a smaller buffer still works, and the report says what it got.
    let _ = socket.set_recv_buffer_size(BUFFER);
    let _ = socket.set_send_buffer_size(BUFFER);
    let (rcv, snd) = buffers_of(&socket);
    if rcv < BUFFER {
        force(&socket, libc::SO_RCVBUFFORCE);
    }
    if snd < BUFFER {
        force(&socket, libc::SO_SNDBUFFORCE);
    }
    socket.bind(&addr.into())?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The receive and send buffer sizes a socket got, in bytes (Linux reports twice the request:
/// half of it is its bookkeeping).
pub fn buffers(socket: &UdpSocket) -> (usize, usize) {
    buffers_of(&socket2::SockRef::from(socket))
}

fn buffers_of(socket: &Socket) -> (usize, usize) {
    (
        socket.recv_buffer_size().unwrap_or(0),
        socket.send_buffer_size().unwrap_or(0),
    )
}

/// Sets a buffer past the system's maximum; fails quietly without the privilege.
fn force(socket: &Socket, option: libc::c_int) {
    use std::os::fd::AsRawFd;
    let size = libc::c_int::try_from(BUFFER).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid socket descriptor, and a c_int option value of the size passed.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&raw const size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Datagrams the kernel dropped at the IPv4 UDP sockets bound to any of `ports` on loopback or
/// on every address (its receive buffer was full), from `/proc/net/udp`; `None` where that file
/// cannot be read.
pub fn kernel_drops(ports: &HashSet<u16>) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    Some(drops_in(&table, ports))
}

fn drops_in(table: &str, ports: &HashSet<u16>) -> u64 {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
            let (ip, port) = fields.get(1)?.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let ip = u32::from_str_radix(ip, 16).ok()?;
            // The address is the kernel's 32-bit word printed in host order: 127/8 ends in 7F.
            let loopback = ip.to_ne_bytes()[0] == 127;
            let local = loopback || ip == 0;
            (local && ports.contains(&port))
                .then(|| fields.get(12)?.parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drops_column_of_the_named_ports_is_summed() {
        let table = "\
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  1: 0100007F:1F90 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 111 2 0000000000000000 5
  2: 0101007F:1F91 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 112 2 0000000000000000 7
  3: 00000000:1F90 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 113 2 0000000000000000 1
  4: 0100000A:1F90 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 114 2 0000000000000000 100
";
        let ports = HashSet::from([0x1F90]);
        // Loopback and the wildcard on port 8080, not 10.0.0.1's (a little-endian table).
        if cfg!(target_endian = "little") {
            assert_eq!(drops_in(table, &ports), 6);
            assert_eq!(drops_in(table, &HashSet::from([0x1F91, 0x1F90])), 13);
        }
    }

    #[test]
    fn a_relay_socket_gets_the_buffers_it_asks_for() {
        let socket = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let (rcv, snd) = buffers(&socket);
        assert!(
            rcv >= BUFFER && snd >= BUFFER,
            "rcv {rcv} snd {snd}, asked for {BUFFER}: run as root (SO_RCVBUFFORCE) or raise \
             net.core.rmem_max and net.core.wmem_max (sysctl -w net.core.rmem_max=8388608)"
        );
        let port = socket.local_addr().unwrap().port();
        assert_eq!(kernel_drops(&HashSet::from([port])), Some(0));
    }
}

//! The UDP backend on loopback (127.0.0.1 and ::1 only): bursts both ways,
//! native sources, batching, member fan-out, error isolation, encap rules,
//! truncation, pool exhaustion, and the link's counters (the kernel's
//! drops of a flooded socket, bytes). Unprivileged.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use ports::udp::{UdpConfig, UdpPort};
use ports::{BURST, Burst, HeapBuf, PacketBuf, Port};
use rrp::{LinkKind, NativeAddr};

fn v4() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn v6() -> SocketAddr {
    "[::1]:0".parse().unwrap()
}

fn open(bind: SocketAddr) -> UdpPort {
    UdpPort::open(UdpConfig::new(bind).pool_size(256)).expect("open UDP port")
}

/// Whether IPv6 loopback works here (it may be disabled in containers).
fn have_v6(test: &str) -> bool {
    if UdpSocket::bind("[::1]:0").is_ok() {
        return true;
    }
    testkit::skip(test, "no IPv6 loopback (::1)");
    false
}

/// A payload of `len` bytes that differs per packet.
fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

/// Sends each payload to `dst` in one burst; returns what tx_burst returned
/// and the number left in the burst.
fn send(port: &mut UdpPort, dst: NativeAddr, payloads: &[Vec<u8>]) -> (usize, usize) {
    let mut burst: Burst<HeapBuf> = Burst::new();
    for p in payloads {
        let mut b = port.alloc().expect("buffer");
        b.append(p.len()).unwrap().copy_from_slice(p);
        assert!(port.encap(&mut b, &dst), "encap to {dst}");
        burst.push(b);
    }
    let n = port.tx_burst(&mut burst);
    let left = burst.len();
    for b in burst.drain(..) {
        port.recycle(b);
    }
    (n, left)
}

/// Waits until the port's socket is readable (or `timeout`).
fn wait_readable(port: &UdpPort, timeout: Duration) -> bool {
    let fd = port.wait_fd().expect("wait fd");
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) };
    r == 1
}

/// Receives until `n` packets came or `timeout` passed; returns bytes and
/// native sources.
fn recv(port: &mut UdpPort, n: usize, timeout: Duration) -> Vec<(Vec<u8>, NativeAddr)> {
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < deadline {
        let mut burst = Burst::new();
        port.rx_burst(&mut burst);
        if burst.is_empty() {
            wait_readable(port, Duration::from_millis(20));
            continue;
        }
        for b in burst.drain(..) {
            assert!(!b.rx_error());
            got.push((b.data().to_vec(), b.native_src()));
            port.recycle(b);
        }
    }
    got
}

fn exchange(a: &mut UdpPort, b: &mut UdpPort) {
    let lens = [1usize, 2, 20, 64, 1000, 1472, 8000];
    for dir in 0..2 {
        let (from, to) = if dir == 0 {
            (&mut *a, &mut *b)
        } else {
            (&mut *b, &mut *a)
        };
        let pkts: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &l)| payload(i, l))
            .collect();
        assert_eq!(send(from, to.native_addr(), &pkts), (pkts.len(), 0));
        let got = recv(to, pkts.len(), Duration::from_secs(2));
        assert_eq!(got.len(), pkts.len());
        for (g, p) in got.iter().zip(&pkts) {
            assert_eq!(&g.0, p);
            assert_eq!(g.1, from.native_addr());
            assert_eq!(g.1, NativeAddr::udp(from.local_addr()));
        }
    }
}

#[test]
fn ipv4_bursts_both_ways() {
    let mut a = open(v4());
    let mut b = open(v4());
    assert_eq!(a.link_kind(), LinkKind::Udp);
    assert_eq!(a.native_addr().as_bytes().len(), 6);
    assert_ne!(a.local_addr().port(), 0);
    exchange(&mut a, &mut b);
    let s = a.stats();
    assert_eq!((s.tx_packets, s.rx_packets), (7, 7));
    assert_eq!((s.tx_errors, s.rx_errors, s.rx_truncated), (0, 0, 0));
}

#[test]
fn ipv6_bursts_both_ways() {
    if !have_v6("ports::udp::ipv6_bursts_both_ways") {
        return;
    }
    let mut a = open(v6());
    let mut b = open(v6());
    assert_eq!(a.native_addr().as_bytes().len(), 18);
    exchange(&mut a, &mut b);
}

#[test]
fn dual_stack_maps_ipv4_senders_to_6_byte_natives() {
    if !have_v6("ports::udp::dual_stack_maps_ipv4_senders") {
        return;
    }
    let mut dual = open("[::]:0".parse().unwrap());
    let mut a = open(v4());
    let to: SocketAddr = SocketAddr::new("127.0.0.1".parse().unwrap(), dual.local_addr().port());
    assert_eq!(send(&mut a, NativeAddr::udp(to), &[payload(1, 40)]).0, 1);
    let got = recv(&mut dual, 1, Duration::from_secs(2));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, payload(1, 40));
    assert_eq!(got[0].1, a.native_addr(), "IPv4 sender as a 6-byte native");
    // The reply goes to the 6-byte native through the IPv6 socket.
    assert_eq!(send(&mut dual, got[0].1, &[payload(2, 50)]).0, 1);
    let back = recv(&mut a, 1, Duration::from_secs(2));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, payload(2, 50));
    assert_eq!(back[0].1, NativeAddr::udp(to));
}

#[test]
fn a_burst_of_32_is_one_syscall_each_way() {
    let mut a = open(v4());
    let mut b = open(v4());
    let pkts: Vec<Vec<u8>> = (0..BURST).map(|i| payload(i, 100 + i)).collect();
    for dir in 0..2 {
        let (from, to) = if dir == 0 {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let tx0 = from.stats();
        assert_eq!(send(from, to.native_addr(), &pkts), (BURST, 0));
        let tx1 = from.stats();
        assert_eq!(tx1.tx_calls - tx0.tx_calls, 1, "one sendmmsg");
        assert_eq!(tx1.tx_packets - tx0.tx_packets, BURST as u64);
        // Loopback delivers during sendmmsg; leave a margin anyway.
        assert!(wait_readable(to, Duration::from_secs(2)));
        std::thread::sleep(Duration::from_millis(30));
        let rx0 = to.stats();
        let mut burst = Burst::new();
        to.rx_burst(&mut burst);
        let rx1 = to.stats();
        assert_eq!(burst.len(), BURST);
        assert_eq!(rx1.rx_calls - rx0.rx_calls, 1, "one recvmmsg");
        for (b, p) in burst.iter().zip(&pkts) {
            assert_eq!(b.data(), &p[..]);
        }
        for b in burst.drain(..) {
            to.recycle(b);
        }
    }
}

/// A port number nobody listens on (bound, then closed).
fn closed_port(ip: &str) -> SocketAddr {
    let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
    s.local_addr().unwrap()
}

#[test]
fn member_fan_out_reaches_every_member_but_self() {
    // Bind `a` to a known port so that its own address can be listed.
    let own = closed_port("127.0.0.1");
    let mut b = open(v4());
    let mut c = open(v4());
    let cfg = UdpConfig::new(own).pool_size(64).members([
        b.local_addr(),
        own,
        c.local_addr(),
        b.local_addr(),
    ]);
    let mut a = UdpPort::open(cfg).unwrap();
    assert_eq!(a.members(), &[b.local_addr(), c.local_addr()]);
    let pkts: Vec<Vec<u8>> = (0..3).map(|i| payload(i, 30)).collect();
    assert_eq!(send(&mut a, NativeAddr::NONE, &pkts), (3, 0));
    let s = a.stats();
    assert_eq!(s.tx_packets, 6, "one datagram per member");
    assert_eq!(s.tx_calls, 1);
    for to in [&mut b, &mut c] {
        let got = recv(to, 3, Duration::from_secs(2));
        assert_eq!(got.len(), 3);
        for (g, p) in got.iter().zip(&pkts) {
            assert_eq!(&g.0, p);
            assert_eq!(g.1, a.native_addr());
        }
    }
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        recv(&mut a, 1, Duration::from_millis(50)).is_empty(),
        "not to self"
    );
}

#[test]
fn errors_for_one_destination_do_not_wedge_the_port() {
    let mut a = open(v4());
    let mut b = open(v4());
    let closed = closed_port("127.0.0.1");
    // To a closed port (ICMP port unreachable comes back), then to b.
    for round in 0..3 {
        let pkts: Vec<Vec<u8>> = (0..4).map(|i| payload(round * 4 + i, 60)).collect();
        assert_eq!(send(&mut a, NativeAddr::udp(closed), &pkts), (4, 0));
        assert_eq!(send(&mut a, b.native_addr(), &pkts), (4, 0));
        let got = recv(&mut b, 4, Duration::from_secs(2));
        assert_eq!(got.len(), 4);
        // a's own receive path stays usable after the ICMP errors.
        assert!(recv(&mut a, 1, Duration::from_millis(20)).is_empty());
    }
    // A destination the kernel refuses outright (port 0: EINVAL) in the
    // middle of a burst: dropped and counted, the others go out.
    let bad = NativeAddr::udp("127.0.0.1:0".parse().unwrap());
    let mut burst: Burst<HeapBuf> = Burst::new();
    for (i, dst) in [b.native_addr(), bad, b.native_addr()]
        .into_iter()
        .enumerate()
    {
        let mut buf = a.alloc().unwrap();
        buf.append(10)
            .unwrap()
            .copy_from_slice(&payload(100 + i, 10));
        assert!(a.encap(&mut buf, &dst));
        burst.push(buf);
    }
    let e0 = a.stats().tx_errors;
    assert_eq!(a.tx_burst(&mut burst), 3);
    assert!(burst.is_empty());
    assert_eq!(a.stats().tx_errors - e0, 1);
    let got = recv(&mut b, 2, Duration::from_secs(2));
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, payload(100, 10));
    assert_eq!(got[1].0, payload(102, 10));
}

#[test]
fn encap_accepts_only_natives_of_the_socket_family() {
    let a = open(v4());
    let mut buf = HeapBuf::from_bytes(&[1, 2, 3]);
    let mac_sized = NativeAddr::mac([10, 0, 0, 1, 0x88, 0xb5]);
    assert!(
        a.encap(&mut buf, &mac_sized),
        "6 bytes are IPv4 + port here"
    );
    assert_eq!(buf.data(), &[1, 2, 3], "no header on UDP");
    assert!(!a.encap(&mut buf, &NativeAddr::from_bytes(&[1; 7]).unwrap()));
    let v6n = NativeAddr::udp("[::1]:35061".parse().unwrap());
    assert!(!a.encap(&mut buf, &v6n), "IPv6 on an IPv4 socket");
    assert!(!a.encap(&mut buf, &NativeAddr::NONE), "no members");
    if have_v6("ports::udp::encap_accepts_only_natives_of_the_socket_family") {
        let b = open(v6());
        assert!(b.encap(&mut buf, &v6n));
        assert!(
            !b.encap(&mut buf, &mac_sized),
            "IPv4 on an IPv6 socket bound to ::1"
        );
        assert!(!b.encap(&mut buf, &NativeAddr::from_bytes(&[1; 7]).unwrap()));
        let v6only = UdpConfig {
            v6only: true,
            ..UdpConfig::new("[::]:0".parse().unwrap())
        };
        let c = UdpPort::open(v6only).unwrap();
        assert!(!c.encap(&mut buf, &mac_sized));
        let d = open("[::]:0".parse().unwrap());
        assert!(d.encap(&mut buf, &mac_sized), "dual-stack");
        // A member of the wrong family is refused at open.
        let cfg = UdpConfig::new(v6()).members([v4()]);
        assert!(UdpPort::open(cfg).is_err());
    }
}

#[test]
fn pool_exhaustion_stops_reception_without_losing_packets() {
    let mut a = open(v4());
    let mut b = UdpPort::open(UdpConfig::new(v4()).pool_size(4)).unwrap();
    let pkts: Vec<Vec<u8>> = (0..10).map(|i| payload(i, 50)).collect();
    assert_eq!(send(&mut a, b.native_addr(), &pkts).0, 10);
    assert!(wait_readable(&b, Duration::from_secs(2)));
    std::thread::sleep(Duration::from_millis(30));
    let mut held = Burst::new();
    b.rx_burst(&mut held);
    assert_eq!(held.len(), 4);
    assert!(b.alloc().is_none());
    let mut more = Burst::new();
    b.rx_burst(&mut more);
    assert!(more.is_empty());
    assert!(b.stats().rx_nobuf >= 2);
    let mut got: Vec<Vec<u8>> = held.iter().map(|x| x.data().to_vec()).collect();
    for x in held.drain(..) {
        b.recycle(x);
    }
    got.extend(
        recv(&mut b, 6, Duration::from_secs(2))
            .into_iter()
            .map(|g| g.0),
    );
    assert_eq!(got, pkts);
}

#[test]
fn oversized_datagrams_arrive_truncated_and_counted() {
    let mut a = open(v4());
    let mut b = UdpPort::open(
        UdpConfig::new(v4())
            .pool_size(8)
            .buf_size(ports::heap::DEFAULT_HEADROOM + 64),
    )
    .unwrap();
    let big = payload(7, 300);
    assert_eq!(
        send(&mut a, b.native_addr(), std::slice::from_ref(&big)).0,
        1
    );
    let got = recv(&mut b, 1, Duration::from_secs(2));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, big[..64]);
    assert_eq!(b.stats().rx_truncated, 1);
}

/// Takes every datagram waiting on `port` (none held); returns how many and
/// their bytes.
fn drain(port: &mut UdpPort) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    loop {
        let mut burst = Burst::new();
        port.rx_burst(&mut burst);
        if burst.is_empty() {
            return (n, bytes);
        }
        for b in burst.drain(..) {
            n += 1;
            bytes += b.len() as u64;
            port.recycle(b);
        }
    }
}

/// A flood into a small socket buffer that the port does not read: the
/// kernel drops most of it, and every datagram is then either received or
/// counted by the link as missed, exactly; the bytes are the datagrams'.
/// First from the socket's count read by `link_stats` (SO_MEMINFO), then
/// from the count the datagrams carry (SO_RXQ_OVFL) alone.
#[test]
fn datagrams_the_kernel_dropped_are_counted_by_the_link() {
    let mut cfg = UdpConfig::new(v4()).pool_size(64);
    // The kernel doubles it: room for a few datagrams only.
    cfg.socket_buf = 4096;
    let mut port = UdpPort::open(cfg).unwrap();
    let to = port.local_addr();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    const LEN: usize = 100;
    // Fewer than the kernel's backlog of 1000 per CPU, so that no datagram
    // is lost before the socket whatever the scheduling.
    let flood = |sent: &mut u64, base: usize| {
        for i in 0..500 {
            if tx.send_to(&payload(base + i, LEN), to).is_ok() {
                *sent += 1;
            }
        }
    };

    let mut sent = 0u64;
    flood(&mut sent, 0);
    let (mut received, mut bytes) = (0u64, 0u64);
    let deadline = Instant::now() + Duration::from_secs(5);
    let link = loop {
        let (n, b) = drain(&mut port);
        received += n;
        bytes += b;
        let l = port.link_stats();
        if received + l.rx_missed >= sent || Instant::now() > deadline {
            break l;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(link.rx_missed > 0, "the socket buffer overflowed");
    assert!(received > 0);
    assert_eq!(
        received + link.rx_missed,
        sent,
        "received or missed, exactly"
    );
    assert_eq!(bytes, received * LEN as u64);
    assert_eq!(link.rx_bytes, bytes);
    assert_eq!(port.stats().rx_missed, link.rx_missed);

    // A second flood, counted from the datagrams alone (no link_stats): a
    // datagram queued after drops carries them, so probes sent after
    // draining bring the count along once the flood has been taken in.
    let missed_before = port.stats().rx_missed;
    flood(&mut sent, 500);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut i = 1000;
    while received + port.stats().rx_missed < sent && Instant::now() < deadline {
        let (n, b) = drain(&mut port);
        received += n;
        bytes += b;
        if tx.send_to(&payload(i, LEN), to).is_ok() {
            sent += 1;
            i += 1;
        }
        std::thread::sleep(Duration::from_millis(2));
        let (n, b) = drain(&mut port);
        received += n;
        bytes += b;
    }
    assert!(
        port.stats().rx_missed > missed_before,
        "drops carried by datagrams"
    );
    assert_eq!(received + port.stats().rx_missed, sent);
    let link = port.link_stats();
    assert_eq!(received + link.rx_missed, sent, "SO_MEMINFO agrees");
    assert_eq!(link.rx_bytes, received * LEN as u64);
    assert_eq!(bytes, link.rx_bytes);
}

/// The bytes a port sends are the datagrams' sizes; datagrams it cannot
/// send (a destination of the wrong family taken off the burst) are the
/// link's transmit errors.
#[test]
fn transmitted_bytes_and_refused_datagrams_are_the_links() {
    let mut a = open(v4());
    let mut b = open(v4());
    let pkts: Vec<Vec<u8>> = (0..10).map(|i| payload(i, 40 + i)).collect();
    assert_eq!(send(&mut a, b.native_addr(), &pkts), (10, 0));
    let got = recv(&mut b, 10, Duration::from_secs(2));
    assert_eq!(got.len(), 10);
    let total: u64 = pkts.iter().map(|p| p.len() as u64).sum();
    assert_eq!(a.link_stats().tx_bytes, total);
    assert_eq!(b.link_stats().rx_bytes, total);
    assert_eq!(a.link_stats().rx_bytes, 0);
    // A buffer that skipped encap, with an 18-byte (IPv6) native on an IPv4
    // socket: taken off the burst, not sent.
    let mut burst: Burst<HeapBuf> = Burst::new();
    let mut x = a.alloc().unwrap();
    x.append(8).unwrap();
    x.set_native_dst(NativeAddr::udp("[::1]:9".parse().unwrap()));
    burst.push(x);
    assert_eq!(a.tx_burst(&mut burst), 1);
    let l = a.link_stats();
    assert_eq!(l.tx_link_errors, 1);
    assert_eq!(l.tx_bytes, total, "nothing sent");
    assert_eq!(l.rx_missed, 0);
}

#[test]
fn wait_fd_becomes_readable() {
    let mut a = open(v4());
    let b = open(v4());
    assert!(!wait_readable(&b, Duration::from_millis(10)));
    send(&mut a, b.native_addr(), &[payload(0, 8)]);
    assert!(wait_readable(&b, Duration::from_secs(2)));
}

/// A rough rate on loopback, one thread sending and receiving bursts of 32
/// 64-byte packets: `cargo test -p ports --release --test udp -- --ignored
/// --nocapture rough_rate`.
#[test]
#[ignore = "a measurement, not a check"]
fn rough_rate() {
    let mut a = open(v4());
    let mut b = open(v4());
    let dst = b.native_addr();
    let pkt = payload(0, 64);
    let start = Instant::now();
    let mut got = 0u64;
    while start.elapsed() < Duration::from_secs(1) {
        let mut burst: Burst<HeapBuf> = Burst::new();
        while !burst.is_full() {
            let mut buf = a.alloc().unwrap();
            buf.append(64).unwrap().copy_from_slice(&pkt);
            a.encap(&mut buf, &dst);
            burst.push(buf);
        }
        a.tx_burst(&mut burst);
        for x in burst.drain(..) {
            a.recycle(x);
        }
        let mut rx = Burst::new();
        b.rx_burst(&mut rx);
        got += rx.len() as u64;
        for x in rx.drain(..) {
            b.recycle(x);
        }
    }
    let s = a.stats();
    println!(
        "udp loopback: {got} packets received in 1 s ({} sent in {} sendmmsg calls, {} tx_full)",
        s.tx_packets, s.tx_calls, s.tx_full
    );
}

#[test]
fn free_loopback_ports_are_distinct_free_and_below_the_ephemeral_range() {
    let (lo, hi) = ports::udp::reservable_range();
    assert!(lo < hi);
    let got = ports::udp::free_loopback_ports(40).unwrap();
    assert_eq!(got.len(), 40);
    let mut sorted = got.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 40, "distinct");
    for p in got {
        assert!((lo..=hi).contains(&p), "{p} outside {lo}-{hi}");
        UdpSocket::bind(("127.0.0.1", p)).expect("released, free to bind");
    }
}

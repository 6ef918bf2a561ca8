//! The AF_PACKET backend on veth pairs the tests create and remove (root
//! only; otherwise `testkit::skip`): bursts both ways, padding of short
//! frames, native sources, broadcast, the EtherType filter against other
//! traffic, transmit-ring full, bad lengths, pool exhaustion, reopening,
//! a port inside a network namespace, and the link's counters (the frames
//! a full receive ring dropped, bytes, unsendable packets).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use ports::af_packet::{AfPacketConfig, AfPacketPort, BROADCAST, ETH_HLEN, ETH_ZLEN, ETHERTYPE};
use ports::{BURST, Burst, HeapBuf, PacketBuf, Port};
use rrp::{LinkKind, NativeAddr};
use testkit::{Netns, VethPair};

/// The two ends of a veth pair with a port on each; ports close first.
struct Link {
    a: AfPacketPort,
    b: AfPacketPort,
    veth: VethPair,
}

fn can_run(test: &str) -> bool {
    if testkit::is_root() {
        return true;
    }
    testkit::skip(test, "needs root (CAP_NET_RAW, veth pairs)");
    false
}

/// Waits until `ifname` (in this namespace) reports operstate "up".
fn wait_up(ifname: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let s = std::fs::read_to_string(format!("/sys/class/net/{ifname}/operstate"))
            .unwrap_or_default();
        if s.trim() == "up" {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn link_with(test: &str, cfg: impl Fn(&str) -> AfPacketConfig) -> Option<Link> {
    if !can_run(test) {
        return None;
    }
    let veth = match VethPair::new("mwp") {
        Ok(v) => v,
        Err(e) => {
            testkit::skip(test, &format!("cannot create a veth pair: {e}"));
            return None;
        }
    };
    wait_up(&veth.a);
    wait_up(&veth.b);
    let a = AfPacketPort::open(cfg(&veth.a)).expect("open port on a");
    let b = AfPacketPort::open(cfg(&veth.b)).expect("open port on b");
    Some(Link { a, b, veth })
}

fn link(test: &str) -> Option<Link> {
    link_with(test, |ifname| {
        let mut c = AfPacketConfig::new(ifname);
        c.pool_size = 256;
        c
    })
}

fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 29 + j * 3 + 1) as u8).collect()
}

/// Builds a burst of `payloads` for `dst`.
fn burst_for(port: &mut AfPacketPort, dst: NativeAddr, payloads: &[Vec<u8>]) -> Burst<HeapBuf> {
    let mut burst = Burst::new();
    for p in payloads {
        let mut b = port.alloc().expect("buffer");
        b.append(p.len()).unwrap().copy_from_slice(p);
        assert!(port.encap(&mut b, &dst), "encap to {dst}");
        burst.push(b);
    }
    burst
}

/// Sends all payloads to `dst` (retrying while the ring is full).
fn send(port: &mut AfPacketPort, dst: NativeAddr, payloads: &[Vec<u8>]) {
    let mut burst = burst_for(port, dst, payloads);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !burst.is_empty() {
        port.tx_burst(&mut burst);
        assert!(Instant::now() < deadline, "transmit ring stuck");
        if !burst.is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn wait_readable(port: &AfPacketPort, timeout: Duration) -> bool {
    let fd = port.wait_fd().expect("wait fd");
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) == 1 }
}

/// Receives until `n` packets came or `timeout` passed.
fn recv(port: &mut AfPacketPort, n: usize, timeout: Duration) -> Vec<(Vec<u8>, NativeAddr)> {
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

/// What a payload looks like after the wire: padded to the Ethernet minimum.
fn on_the_wire(p: &[u8]) -> Vec<u8> {
    let mut v = p.to_vec();
    v.resize(p.len().max(ETH_ZLEN - ETH_HLEN), 0);
    v
}

fn exchange(from: &mut AfPacketPort, to: &mut AfPacketPort, dst: NativeAddr, pkts: &[Vec<u8>]) {
    send(from, dst, pkts);
    let got = recv(to, pkts.len(), Duration::from_secs(3));
    assert_eq!(
        got.len(),
        pkts.len(),
        "{} -> {}",
        from.ifname(),
        to.ifname()
    );
    for (g, p) in got.iter().zip(pkts) {
        assert_eq!(g.0, on_the_wire(p));
        assert_eq!(&g.0[..p.len()], &p[..], "MessageWay bytes intact");
        assert_eq!(g.1, NativeAddr::mac(from.mac()));
        assert_eq!(g.1, from.native_addr());
    }
}

#[test]
fn bursts_both_ways_with_padding() {
    let Some(mut l) = link("ports::af_packet::bursts_both_ways_with_padding") else {
        return;
    };
    assert_eq!(l.a.link_kind(), LinkKind::Ethernet);
    assert_ne!(l.a.mac(), l.b.mac());
    assert_eq!(l.a.mtu(), 1500);
    let lens = [1usize, 10, 24, 45, 46, 47, 100, 1000, 1500];
    let pkts: Vec<Vec<u8>> = (0..BURST)
        .map(|i| payload(i, lens[i % lens.len()]))
        .collect();
    let (a, b) = (&mut l.a, &mut l.b);
    exchange(a, b, b.native_addr(), &pkts);
    exchange(b, a, a.native_addr(), &pkts);
    // PACKET_IGNORE_OUTGOING / the protocol binding: no echo of our own frames.
    assert!(recv(a, 1, Duration::from_millis(50)).is_empty());
    assert!(recv(b, 1, Duration::from_millis(50)).is_empty());
    let s = a.stats();
    assert_eq!((s.tx_packets, s.rx_packets), (BURST as u64, BURST as u64));
    assert_eq!((s.rx_other, s.rx_truncated, s.tx_errors), (0, 0, 0));
    drop(l.veth);
}

#[test]
fn a_full_burst_is_one_kick() {
    let Some(mut l) = link("ports::af_packet::a_full_burst_is_one_kick") else {
        return;
    };
    let pkts: Vec<Vec<u8>> = (0..BURST).map(|i| payload(i, 200)).collect();
    let dst = l.b.native_addr();
    let mut burst = burst_for(&mut l.a, dst, &pkts);
    assert_eq!(l.a.tx_burst(&mut burst), BURST);
    assert_eq!(l.a.stats().tx_kicks, 1);
    assert!(wait_readable(&l.b, Duration::from_secs(2)));
    std::thread::sleep(Duration::from_millis(20));
    let mut rx = Burst::new();
    l.b.rx_burst(&mut rx);
    assert_eq!(rx.len(), BURST, "one rx burst takes the whole burst");
}

#[test]
fn broadcast_reaches_the_peer() {
    let Some(mut l) = link("ports::af_packet::broadcast_reaches_the_peer") else {
        return;
    };
    let mut buf = l.a.alloc().unwrap();
    buf.append(20).unwrap().copy_from_slice(&payload(5, 20));
    assert!(l.a.encap(&mut buf, &NativeAddr::NONE));
    assert_eq!(&buf.data()[..6], &BROADCAST);
    assert_eq!(&buf.data()[6..12], &l.a.mac());
    assert_eq!(&buf.data()[12..14], &ETHERTYPE.to_be_bytes());
    let mut burst = Burst::new();
    burst.push(buf);
    assert_eq!(l.a.tx_burst(&mut burst), 1);
    let got = recv(&mut l.b, 1, Duration::from_secs(2));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, on_the_wire(&payload(5, 20)));
    assert_eq!(got[0].1, l.a.native_addr());
}

/// Sends a raw Ethernet frame on `ifname` through a plain packet socket.
fn inject_raw(ifname: &str, frame: &[u8]) {
    // SAFETY: plain socket(2) call, checked.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    assert!(fd >= 0);
    let name = std::ffi::CString::new(ifname).unwrap();
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
    assert!(ifindex > 0);
    // SAFETY: all-zero bytes are a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = ifindex;
    sll.sll_halen = 6;
    sll.sll_addr[..6].copy_from_slice(&frame[..6]);
    // SAFETY: `frame` and `sll` are valid for the lengths passed; fd is ours.
    let r = unsafe {
        let r = libc::sendto(
            fd,
            frame.as_ptr().cast(),
            frame.len(),
            0,
            (&raw const sll).cast(),
            size_of::<libc::sockaddr_ll>() as u32,
        );
        libc::close(fd);
        r
    };
    assert_eq!(
        r,
        frame.len() as isize,
        "{}",
        std::io::Error::last_os_error()
    );
}

fn eth(dst: [u8; 6], src: [u8; 6], et: u16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&et.to_be_bytes());
    f.extend_from_slice(body);
    f.resize(f.len().max(ETH_ZLEN), 0);
    f
}

#[test]
fn other_ethertypes_are_not_received() {
    let Some(mut l) = link("ports::af_packet::other_ethertypes_are_not_received") else {
        return;
    };
    let (amac, bmac) = (l.a.mac(), l.b.mac());
    // An IPv6 router solicitation to all-routers, IPv4, ARP, a neighbour
    // EtherType, a VLAN-tagged IPv6 frame, then one MessageWay frame.
    let rs_dst = [0x33, 0x33, 0, 0, 0, 2];
    let noise = [
        eth(rs_dst, amac, 0x86DD, &[0x60, 0, 0, 0, 0, 16, 58, 255]),
        eth(bmac, amac, 0x0800, &[0x45, 0, 0, 20]),
        eth(BROADCAST, amac, 0x0806, &[0, 1, 8, 0, 6, 4, 0, 1]),
        eth(bmac, amac, ETHERTYPE + 1, &[1, 2, 3, 4]),
        eth(bmac, amac, 0x8100, &[0, 5, 0x86, 0xDD, 0x60, 0, 0, 0]),
    ];
    for f in &noise {
        inject_raw(&l.veth.a, f);
    }
    inject_raw(&l.veth.a, &eth(bmac, amac, ETHERTYPE, &payload(9, 30)));
    let got = recv(&mut l.b, 2, Duration::from_millis(300));
    assert_eq!(got.len(), 1, "only the MessageWay frame");
    assert_eq!(got[0].0, on_the_wire(&payload(9, 30)));
    assert_eq!(got[0].1, NativeAddr::mac(amac));
    // Filtered by the kernel, not by the port.
    assert_eq!(l.b.stats().rx_other, 0);
}

#[test]
fn unicast_to_another_mac_is_not_delivered() {
    let Some(mut l) = link("ports::af_packet::unicast_to_another_mac_is_not_delivered") else {
        return;
    };
    let (amac, bmac) = (l.a.mac(), l.b.mac());
    // What a bridge floods: MessageWay to a MAC that is not b's. Then a
    // multicast and one to b: those two are b's.
    let other = [0x02, 0x4d, 0, 0, 0, 0x77];
    inject_raw(&l.veth.a, &eth(other, amac, ETHERTYPE, &payload(1, 30)));
    inject_raw(
        &l.veth.a,
        &eth([0x01, 0, 0x5e, 0, 0, 1], amac, ETHERTYPE, &payload(2, 30)),
    );
    inject_raw(&l.veth.a, &eth(bmac, amac, ETHERTYPE, &payload(3, 30)));
    let got = recv(&mut l.b, 3, Duration::from_millis(300));
    assert_eq!(got.len(), 2, "the multicast and the frame to b");
    assert_eq!(got[0].0, on_the_wire(&payload(2, 30)));
    assert_eq!(got[1].0, on_the_wire(&payload(3, 30)));
    assert_eq!(l.b.stats().rx_not_for_us, 1);
}

#[test]
fn vlan_tagged_messageway_is_received() {
    let Some(mut l) = link("ports::af_packet::vlan_tagged_messageway_is_received") else {
        return;
    };
    let (amac, bmac) = (l.a.mac(), l.b.mac());
    let mut body = vec![0x00, 0x07];
    body.extend_from_slice(&ETHERTYPE.to_be_bytes());
    body.extend_from_slice(&payload(3, 50));
    inject_raw(&l.veth.a, &eth(bmac, amac, 0x8100, &body));
    let got = recv(&mut l.b, 1, Duration::from_secs(1));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, payload(3, 50));
}

#[test]
fn encap_refuses_other_natives_and_bad_lengths_are_dropped() {
    let Some(mut l) = link("ports::af_packet::encap_refuses_other_natives") else {
        return;
    };
    let mut buf = HeapBuf::from_bytes(&[1, 2, 3]);
    assert!(!l.a.encap(&mut buf, &NativeAddr::from_bytes(&[1; 7]).unwrap()));
    assert!(!l.a.encap(&mut buf, &NativeAddr::udp("[::1]:1".parse().unwrap())));
    assert_eq!(buf.data(), &[1, 2, 3], "left untouched");
    let mut tight = HeapBuf::new(64, 4);
    assert!(!l.a.encap(&mut tight, &l.b.native_addr()), "no headroom");

    // Too short for an Ethernet header (encap skipped), too long for the
    // MTU, then a good one: the bad ones are dropped and counted.
    let mut burst: Burst<HeapBuf> = Burst::new();
    let mut short = l.a.alloc().unwrap();
    short.append(5).unwrap();
    burst.push(short);
    let mut long = l.a.alloc().unwrap();
    long.append(1501).unwrap();
    assert!(l.a.encap(&mut long, &l.b.native_addr()));
    burst.push(long);
    let mut good = l.a.alloc().unwrap();
    good.append(64).unwrap().copy_from_slice(&payload(1, 64));
    assert!(l.a.encap(&mut good, &l.b.native_addr()));
    burst.push(good);
    assert_eq!(l.a.tx_burst(&mut burst), 3);
    assert_eq!(l.a.stats().tx_errors, 2);
    let got = recv(&mut l.b, 2, Duration::from_millis(300));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, payload(1, 64));
}

#[test]
fn a_full_transmit_ring_leaves_packets_in_the_burst() {
    let Some(mut l) = link_with("ports::af_packet::a_full_transmit_ring", |ifname| {
        let mut c = AfPacketConfig::new(ifname);
        c.tx_frames = 2;
        c.pool_size = 128;
        c
    }) else {
        return;
    };
    let (_, _, txf) = l.a.ring_geometry();
    assert!(txf < BURST);
    let pkts: Vec<Vec<u8>> = (0..BURST).map(|i| payload(i, 100)).collect();
    let dst = l.b.native_addr();
    let mut burst = burst_for(&mut l.a, dst, &pkts);
    let n = l.a.tx_burst(&mut burst);
    assert_eq!(n, txf);
    assert_eq!(burst.len(), BURST - txf);
    assert_eq!(l.a.stats().tx_full, 1);
    // The rest goes out once the kernel has released the frames.
    let deadline = Instant::now() + Duration::from_secs(2);
    while !burst.is_empty() {
        l.a.tx_burst(&mut burst);
        assert!(Instant::now() < deadline);
    }
    let got = recv(&mut l.b, BURST, Duration::from_secs(2));
    let want: Vec<Vec<u8>> = pkts.iter().map(|p| on_the_wire(p)).collect();
    assert_eq!(got.into_iter().map(|g| g.0).collect::<Vec<_>>(), want);
}

#[test]
fn pool_exhaustion_leaves_frames_in_the_ring() {
    let Some(mut l) = link_with("ports::af_packet::pool_exhaustion", |ifname| {
        let mut c = AfPacketConfig::new(ifname);
        c.pool_size = 4;
        c
    }) else {
        return;
    };
    let pkts: Vec<Vec<u8>> = (0..4).map(|i| payload(i, 80)).collect();
    let dst = l.b.native_addr();
    send(&mut l.a, dst, &pkts);
    send(&mut l.a, dst, &pkts);
    assert!(wait_readable(&l.b, Duration::from_secs(2)));
    std::thread::sleep(Duration::from_millis(30));
    let mut held = Burst::new();
    l.b.rx_burst(&mut held);
    assert_eq!(held.len(), 4);
    let mut none = Burst::new();
    l.b.rx_burst(&mut none);
    assert!(none.is_empty());
    assert!(l.b.stats().rx_nobuf >= 1);
    for x in held.drain(..) {
        l.b.recycle(x);
    }
    assert_eq!(recv(&mut l.b, 4, Duration::from_secs(1)).len(), 4);
}

#[test]
fn close_and_reopen() {
    let Some(mut l) = link("ports::af_packet::close_and_reopen") else {
        return;
    };
    let pkts: Vec<Vec<u8>> = (0..8).map(|i| payload(i, 60)).collect();
    let dst = l.b.native_addr();
    exchange(&mut l.a, &mut l.b, dst, &pkts);
    for _ in 0..3 {
        let ifname = l.b.ifname().to_string();
        l.b = AfPacketPort::open(AfPacketConfig::new(&ifname)).expect("reopen");
        exchange(&mut l.a, &mut l.b, dst, &pkts);
        let back = l.a.native_addr();
        exchange(&mut l.b, &mut l.a, back, &pkts);
    }
}

#[test]
fn open_fails_cleanly() {
    if !can_run("ports::af_packet::open_fails_cleanly") {
        return;
    }
    assert!(AfPacketPort::open(AfPacketConfig::new("mw-no-such-if")).is_err());
    assert!(
        AfPacketPort::open(AfPacketConfig::new("lo")).is_err(),
        "not Ethernet"
    );
    assert!(AfPacketPort::open(AfPacketConfig::new("a-name-far-too-long")).is_err());
}

/// Runs `f` on a thread that has entered network namespace `ns`.
fn in_netns<T: Send>(ns: &Netns, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            let file = File::open(format!("/run/netns/{}", ns.name)).expect("netns file");
            // SAFETY: setns on this thread only, with a namespace fd we own.
            let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("netns thread")
    })
}

#[test]
fn a_port_inside_a_network_namespace() {
    let test = "ports::af_packet::a_port_inside_a_network_namespace";
    if !can_run(test) {
        return;
    }
    if !testkit::netns_available() {
        testkit::skip(test, "needs ip netns");
        return;
    }
    let ns = Netns::new("mwn").expect("netns");
    let veth = VethPair::new("mwq").expect("veth");
    veth.move_to(&veth.b.clone(), &ns).expect("move b");
    wait_up(&veth.a);
    let mut a = AfPacketPort::open(AfPacketConfig::new(&veth.a)).expect("open a");
    assert!(
        AfPacketPort::open(AfPacketConfig::new(&veth.b)).is_err(),
        "b is no longer here"
    );
    let bname = veth.b.clone();
    // The socket stays in the namespace it was made in, whichever thread uses it.
    let mut b = in_netns(&ns, move || {
        AfPacketPort::open(AfPacketConfig::new(&bname)).expect("open b in netns")
    });
    let pkts: Vec<Vec<u8>> = (0..BURST).map(|i| payload(i, 10 + i * 40)).collect();
    let (da, db) = (a.native_addr(), b.native_addr());
    let deadline = Instant::now() + Duration::from_secs(3);
    // The moved end comes up asynchronously: retry the first packet.
    loop {
        send(&mut a, db, &pkts[..1]);
        if recv(&mut b, 1, Duration::from_millis(100)).len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "no traffic into the namespace");
    }
    exchange(&mut a, &mut b, db, &pkts);
    exchange(&mut b, &mut a, da, &pkts);
    drop((a, b));
    drop(veth);
    drop(ns);
}

/// Takes every frame waiting on `port` (none held); returns how many.
fn drain(port: &mut AfPacketPort) -> u64 {
    let mut n = 0;
    loop {
        let mut burst = Burst::new();
        port.rx_burst(&mut burst);
        if burst.is_empty() {
            return n;
        }
        n += burst.len() as u64;
        port.recycle_burst(&mut burst);
    }
}

/// A flood into a receive ring of 4 frames that the port does not read,
/// the receiving end in a network namespace of its own: the kernel drops
/// what the ring cannot hold, and every frame sent is then either received
/// or counted by the link as missed (PACKET_STATISTICS), exactly; the
/// bytes both ways are the frames' (Ethernet header included).
#[test]
fn frames_the_full_ring_dropped_are_counted_by_the_link() {
    let test = "ports::af_packet::frames_the_full_ring_dropped_are_counted_by_the_link";
    if !can_run(test) {
        return;
    }
    if !testkit::netns_available() {
        testkit::skip(test, "needs ip netns");
        return;
    }
    let ns = Netns::new("mwn").expect("netns");
    let veth = VethPair::new("mwd").expect("veth");
    veth.move_to(&veth.b.clone(), &ns).expect("move b");
    wait_up(&veth.a);
    let mut a = AfPacketPort::open(AfPacketConfig::new(&veth.a)).expect("open a");
    let bname = veth.b.clone();
    let mut b = in_netns(&ns, move || {
        let mut c = AfPacketConfig::new(&bname);
        c.rx_frames = 4;
        c.pool_size = 64;
        AfPacketPort::open(c).expect("open b in netns")
    });
    let (_, rx_frames, _) = b.ring_geometry();
    assert_eq!(rx_frames, 4);
    let db = b.native_addr();
    // The moved end comes up asynchronously: retry a first packet, then
    // count from what both ends have seen so far.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        send(&mut a, db, &[payload(0, 8)]);
        if recv(&mut b, 1, Duration::from_millis(100)).len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "no traffic into the namespace");
    }
    std::thread::sleep(Duration::from_millis(20));
    drain(&mut b);
    let (a0, b0) = (a.link_stats(), b.link_stats());
    let rx0 = b.stats().rx_packets;

    // 300 frames of 14 + 100 bytes, fewer than the kernel's backlog of
    // 1000 per CPU: nothing is lost before the socket.
    const LEN: usize = 100;
    let pkts: Vec<Vec<u8>> = (0..300).map(|i| payload(i, LEN)).collect();
    for chunk in pkts.chunks(BURST) {
        send(&mut a, db, chunk);
    }
    let sent = pkts.len() as u64;
    let frame = (ETH_HLEN + LEN) as u64;
    let deadline = Instant::now() + Duration::from_secs(5);
    let (received, link) = loop {
        drain(&mut b);
        let l = b.link_stats();
        let received = b.stats().rx_packets - rx0;
        if received + (l.rx_missed - b0.rx_missed) >= sent || Instant::now() > deadline {
            break (received, l);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let missed = link.rx_missed - b0.rx_missed;
    assert!(missed > 0, "the ring overflowed");
    assert_eq!(received + missed, sent, "received or missed, exactly");
    assert_eq!(link.rx_bytes - b0.rx_bytes, received * frame);
    let la = a.link_stats();
    assert_eq!(la.tx_bytes - a0.tx_bytes, sent * frame);
    assert_eq!(la.tx_link_errors, 0);
    assert_eq!(link.rx_link_errors + link.rx_no_buffer, 0);
    assert_eq!(
        b.link_stats().rx_missed,
        link.rx_missed,
        "accumulated, not reset"
    );
    drop((a, b));
    drop(veth);
    drop(ns);
}

/// A packet the interface cannot carry (longer than its MTU) is taken off
/// the burst and counted as the link's transmit error; short frames are
/// counted at their padded length.
#[test]
fn unsendable_packets_are_link_transmit_errors() {
    let Some(mut l) = link("ports::af_packet::unsendable_packets_are_link_transmit_errors") else {
        return;
    };
    let dst = l.b.native_addr();
    let too_long = payload(1, l.a.mtu() + 1);
    let mut burst = burst_for(&mut l.a, dst, &[payload(0, 10), too_long]);
    assert_eq!(l.a.tx_burst(&mut burst), 2);
    assert_eq!(recv(&mut l.b, 1, Duration::from_secs(2)).len(), 1);
    let la = l.a.link_stats();
    assert_eq!(la.tx_link_errors, 1);
    assert_eq!(la.tx_bytes, ETH_ZLEN as u64, "padded to 60 bytes");
    let deadline = Instant::now() + Duration::from_secs(2);
    while l.b.link_stats().rx_bytes < ETH_ZLEN as u64 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(l.b.link_stats().rx_bytes, ETH_ZLEN as u64);
}

/// A rough rate on a veth pair, one thread sending and receiving bursts of
/// 32 64-byte packets: `cargo test -p ports --release --test af_packet --
/// --ignored --nocapture rough_rate`.
#[test]
#[ignore = "a measurement, not a check"]
fn rough_rate() {
    let Some(mut l) = link("ports::af_packet::rough_rate") else {
        return;
    };
    let dst = l.b.native_addr();
    let pkt = payload(0, 64);
    let start = Instant::now();
    let mut got = 0u64;
    while start.elapsed() < Duration::from_secs(1) {
        let mut burst: Burst<HeapBuf> = Burst::new();
        while !burst.is_full() {
            let mut buf = l.a.alloc().unwrap();
            buf.append(64).unwrap().copy_from_slice(&pkt);
            l.a.encap(&mut buf, &dst);
            burst.push(buf);
        }
        l.a.tx_burst(&mut burst);
        for x in burst.drain(..) {
            l.a.recycle(x);
        }
        let mut rx = Burst::new();
        l.b.rx_burst(&mut rx);
        got += rx.len() as u64;
        for x in rx.drain(..) {
            l.b.recycle(x);
        }
    }
    let s = l.a.stats();
    println!(
        "af_packet veth: {got} packets received in 1 s ({} queued, {} kicks, {} ring-full bursts, {} ring drops at b)",
        s.tx_packets,
        s.tx_kicks,
        s.tx_full,
        l.b.ring_drops()
    );
}

//! Acceptance test of the DPDK backend under the forwarding engine: a
//! `Worker` over two `DpdkPort`s, each the router end of an in-process ring
//! pair whose other end is a raw "host" queue driven by this test, runs on
//! its own thread registered with DPDK. L3 and L2 (router-hop L2RH) traffic
//! goes in as Ethernet frames; what comes out is compared byte for byte
//! (Ethernet header, EI shifted and ORed with the receive-error flag the
//! test set in `ol_flags`, consumed L2RH stripped, frame padding trimmed and
//! re-added), and so are punts, notices, counters and the mbuf pool.
//!
//! A second test forwards group packets out of several DPDK ports
//! (multicast replication): zero-copy replicas (header mbuf + indirect
//! clone) on chaining ports, copies on a copying port and for short
//! packets, each copy compared byte for byte, the mbuf pools whole at the
//! end.
//!
//! Runs with `cargo test -p dataplane --features dpdk`; without the feature
//! it reports a skip.

#[cfg(not(feature = "dpdk"))]
#[test]
fn dpdk_forward() {
    testkit::skip(
        "dataplane::dpdk_forward",
        "built without the `dpdk` feature (cargo test -p dataplane --features dpdk)",
    );
}

#[cfg(feature = "dpdk")]
mod with_dpdk {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use dataplane::{
        ChannelConfig, EngineConfig, FibSet, IdlePolicy, Injection, NextHop, Worker, channels,
        fib_channel,
    };
    use ports::dpdk::{
        DeviceSpec, DpdkPort, ETHERTYPE_MW, Eal, Mbuf, Pool, RawQueue, StartOptions, ring_pair, sys,
    };
    use ports::{Burst, PacketBuf};
    use rrp::Address;
    use rrp::DropReason;
    use rrp::NativeAddr;
    use rrp::PortId;
    use rrp::kind::PacketType;
    use rrp::router::NoticeKind;
    use rrp::wire::packet::shift_ei;
    use rrp::wire::{HeaderRepr, L2rhRepr, Message, PacketRepr, RouterHop};

    const TEST: &str = "dataplane::dpdk_forward";

    const HR0: Address = Address(0x0110);
    const HR1: Address = Address(0x0120);
    const R0_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x00];
    const R1_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x01];
    /// A node on SAN A (port 0).
    const HOST_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0A];
    /// Nodes on SAN B (port 1).
    const HOST_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0B];
    const HOST_C: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0C];
    /// The next router's HR and its next hop, for a two-hop L2 chain.
    const NEXT_HR: Address = Address(0x0555);
    const NEXT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x05, 0x55];

    fn packet(dst: u16, l2rhs: Vec<L2rhRepr>, data_len: usize, ei: u64) -> PacketRepr {
        PacketRepr {
            l2rhs,
            header: HeaderRepr {
                dst: Address(dst),
                src: Address(0x0101),
                packet_type: PacketType(0x0100),
                ..Default::default()
            },
            data: (0..data_len)
                .map(|i| (i * 3 + dst as usize) as u8)
                .collect(),
            ei,
        }
    }

    fn bytes(p: &PacketRepr) -> Vec<u8> {
        p.to_bytes().unwrap()
    }

    /// `p` forwarded by this router: EI shifted, `error` ORed in, the first
    /// L2RH consumed.
    fn forwarded(p: &PacketRepr, error: bool) -> Vec<u8> {
        let mut q = p.clone();
        q.ei = shift_ei(p.ei, error);
        if !q.l2rhs.is_empty() {
            q.l2rhs.remove(0);
        }
        bytes(&q)
    }

    fn hop(egress: Address, mac: Option<[u8; 6]>) -> L2rhRepr {
        RouterHop::new(egress, mac.map_or(NativeAddr::none(), NativeAddr::mac)).to_l2rh()
    }

    /// An Ethernet II frame (0x88B5 unless `vlan` adds an 802.1Q tag first),
    /// padded to 60 bytes with `pad`.
    fn frame(dst: [u8; 6], src: [u8; 6], vlan: Option<u16>, payload: &[u8], pad: u8) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&dst);
        f.extend_from_slice(&src);
        if let Some(tci) = vlan {
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
        }
        f.extend_from_slice(&ETHERTYPE_MW.to_be_bytes());
        f.extend_from_slice(payload);
        if f.len() < 60 {
            f.resize(60, pad);
        }
        f
    }

    /// Sends `frame` from `host`, with `flags` in the mbuf's receive flags
    /// (as a NIC would set them).
    fn send(host: &mut RawQueue, pool: Pool, frame: &[u8], flags: u64) {
        let mut m = pool.mbuf_from(frame).expect("mbuf");
        m.set_rx_flags(flags);
        host.send(m).expect("host ring has room");
    }

    /// Receives `n` frames at `host` (5 s at most), then checks that no
    /// more arrive for a moment.
    fn recv(host: &mut RawQueue, n: usize) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut b: Burst<Mbuf> = Burst::new();
        while got.len() < n && Instant::now() < deadline {
            host.rx_burst(&mut b);
            got.extend(b.drain(..).map(|m| m.data().to_vec()));
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_millis(20));
        host.rx_burst(&mut b);
        got.extend(b.drain(..).map(|m| m.data().to_vec()));
        got
    }

    fn assert_frames(got: &[Vec<u8>], want: &[(&str, Vec<u8>)]) {
        assert_eq!(
            got.len(),
            want.len(),
            "frames out: {got:02x?}\nexpected: {want:02x?}"
        );
        for (g, (what, w)) in got.iter().zip(want) {
            assert_eq!(g, w, "{what}: the frame differs");
        }
    }

    #[test]
    fn worker_forwards_l3_and_l2_over_dpdk_ports() {
        let eal = match Eal::init(testkit::dpdk_eal_args()) {
            Ok(eal) => eal,
            Err(e) => {
                testkit::skip(TEST, &format!("EAL does not start here: {e}"));
                return;
            }
        };
        // The test thread frees mbufs too: give it a cache like the worker's.
        ports::dpdk::register_thread();

        // SAN A: router port 0 <-> host A; SAN B: router port 1 <-> hosts B, C.
        let san_a = ring_pair(eal, "fwda", 1, 1024).unwrap();
        let san_b = ring_pair(eal, "fwdb", 1, 1024).unwrap();
        let devs = eal
            .start_ports(
                &[
                    DeviceSpec::new(&san_a.a).mac(R0_MAC),
                    DeviceSpec::new(&san_b.a).mac(R1_MAC),
                    DeviceSpec::new(&san_a.b).mac(HOST_A),
                    DeviceSpec::new(&san_b.b).mac(HOST_B),
                ],
                &StartOptions::default(),
            )
            .expect("start the ring ports");
        let pool = devs[0].pool();
        let mbufs_at_start = pool.avail_count();
        let router_ports: Vec<DpdkPort> = vec![devs[0].port(0).unwrap(), devs[1].port(0).unwrap()];
        let mut host_a = devs[2].raw_queue(0).unwrap();
        let mut host_b = devs[3].raw_queue(0).unwrap();

        let cfg = EngineConfig {
            hrs: vec![HR0, HR1],
            mtus: vec![1500, 1500],
        };
        let mut fib = FibSet::new(2, &cfg.hrs);
        let to_b = NextHop {
            port: PortId(1),
            native: NativeAddr::mac(HOST_B),
            mtu: 1500,
            redirect: false,
        };
        fib.set_all(Address(0x0202), to_b);
        fib.set_all(
            Address(0x0101),
            NextHop {
                port: PortId(0),
                native: NativeAddr::mac(HOST_A),
                mtu: 1500,
                redirect: false,
            },
        );
        fib.set_all(Address(0x0303), NextHop { mtu: 40, ..to_b });
        let (_publisher, mut readers) = fib_channel(fib, 1);
        let (wch, cch) = channels(ChannelConfig::default());
        let worker = Worker::new(0, &cfg, router_ports, readers.remove(0), wch);

        let stop = Arc::new(AtomicBool::new(false));
        let (lcore_tx, lcore_rx) = mpsc::channel();
        let handle = worker
            .spawn(None, IdlePolicy::LAB, stop.clone(), move || {
                ports::dpdk::register_thread();
                lcore_tx.send(ports::dpdk::lcore_id()).unwrap();
            })
            .unwrap();
        let worker_lcore = lcore_rx.recv().unwrap();
        assert!(
            worker_lcore.is_some_and(|id| id != eal.main_lcore()),
            "the worker thread has its own lcore id: {worker_lcore:?}"
        );

        let l4_bad = sys::RTE_MBUF_F_RX_L4_CKSUM_BAD as u64;
        let ip_bad = sys::RTE_MBUF_F_RX_IP_CKSUM_BAD as u64;
        let cksum_none =
            (sys::RTE_MBUF_F_RX_IP_CKSUM_NONE | sys::RTE_MBUF_F_RX_L4_CKSUM_NONE) as u64;

        // --- Phase 1: from host A into port 0 --------------------------------
        // 1. L3 to 0x0202.
        let l3 = packet(0x0202, vec![], 20, 1);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&l3), 0),
            0,
        );
        // 2. The same, flagged by the "NIC" with a bad L4 checksum.
        let l3_err = packet(0x0202, vec![], 21, 0x5);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&l3_err), 0),
            l4_bad,
        );
        // 3. A short packet (24 bytes: the frame is padded with 0xEE), EI
        //    with its top bit set (shifted out), and "no checksum" flags
        //    (not an error).
        let short = packet(0x0202, vec![], 0, 0x8000_0000_0000_0001);
        assert_eq!(bytes(&short).len(), 24);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&short), 0xEE),
            cksum_none,
        );
        // 4. L2: a two-hop chain; this router consumes the first L2RH (out
        //    through HR1 to host C), the second stays for the next router.
        //    The destination has no route: L2 does not look it up.
        let l2 = packet(
            0x0999,
            vec![hop(HR1, Some(HOST_C)), hop(NEXT_HR, Some(NEXT_MAC))],
            12,
            3,
        );
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&l2), 0),
            0,
        );
        // 5. L2, one hop to host B, flagged with a bad IP checksum, padded.
        let l2_err = packet(0x0777, vec![hop(HR1, Some(HOST_B))], 0, 0);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&l2_err), 0x77),
            ip_bad,
        );
        // 6. L2 egress-only through HR1: delivered to HR1 itself (punt).
        let for_hr1 = packet(0x0120, vec![hop(HR1, None)], 8, 0);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&for_hr1), 0),
            0,
        );
        // 7. RRP#7 to HR0: punted (protocol class).
        let who = bytes(&Message::WhoAreYou.to_packet(HR0, Address(0x0101)).unwrap());
        send(&mut host_a, pool, &frame(R0_MAC, HOST_A, None, &who, 0), 0);
        // 8. No route.
        let lost = packet(0x0777, vec![], 8, 0);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&lost), 0),
            0,
        );
        // 9. An L2RH naming an HR of another box: bad-l2rh.
        let alien = packet(0x0202, vec![hop(Address(0x0666), Some(HOST_B))], 8, 0);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&alien), 0),
            0,
        );
        // 10. L3 in an 802.1Q-tagged frame, to the broadcast MAC.
        let tagged = packet(0x0202, vec![], 40, 0x10);
        send(
            &mut host_a,
            pool,
            &frame([0xFF; 6], HOST_A, Some(0x0064), &bytes(&tagged), 0),
            0,
        );
        // 11. IPv4: refused by the port, never seen by the engine.
        let mut ipv4 = frame(R0_MAC, HOST_A, None, &[0x45; 40], 0);
        ipv4[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        send(&mut host_a, pool, &ipv4, 0);
        // 12. Larger than the route's MTU (48 > 40).
        let big = packet(0x0303, vec![], 20, 0);
        send(
            &mut host_a,
            pool,
            &frame(R0_MAC, HOST_A, None, &bytes(&big), 0),
            0,
        );

        let eth = |dst: [u8; 6], p: Vec<u8>| frame(dst, R1_MAC, None, &p, 0);
        let got_b = recv(&mut host_b, 6);
        assert_frames(
            &got_b,
            &[
                ("L3", eth(HOST_B, forwarded(&l3, false))),
                ("L3 + rx error", eth(HOST_B, forwarded(&l3_err, true))),
                ("short L3", eth(HOST_B, forwarded(&short, false))),
                ("L2 two hops", eth(HOST_C, forwarded(&l2, false))),
                ("L2 + rx error", eth(HOST_B, forwarded(&l2_err, true))),
                ("tagged L3", eth(HOST_B, forwarded(&tagged, false))),
            ],
        );
        // Spot checks of what the expectations encode.
        assert_eq!(got_b[0].len(), 14 + 48);
        assert_eq!(u64::from_be_bytes(got_b[0][54..62].try_into().unwrap()), 2);
        assert_eq!(
            u64::from_be_bytes(got_b[1][54..62].try_into().unwrap()),
            0xB
        );
        assert_eq!(got_b[2].len(), 60, "short frames are padded to 60");
        assert_eq!(&got_b[2][14 + 24..], &[0u8; 22], "with zeros, not the 0xEE");
        assert_eq!(&got_b[2][14 + 16..14 + 24], &2u64.to_be_bytes());
        let chain = PacketRepr::parse(&got_b[3][14..]).unwrap();
        assert_eq!(chain.l2rhs, vec![hop(NEXT_HR, Some(NEXT_MAC))]);
        assert_eq!(chain.ei, 6);
        assert_eq!(PacketRepr::parse(&got_b[4][14..]).unwrap().ei, 1);
        assert!(recv(&mut host_a, 0).is_empty(), "nothing back to SAN A");

        // --- Phase 2: from SAN B into port 1 ---------------------------------
        // 13. L3 to 0x0101 on SAN A.
        let to_a = packet(0x0101, vec![], 30, 0x21);
        send(
            &mut host_b,
            pool,
            &frame(R1_MAC, HOST_B, None, &bytes(&to_a), 0),
            0,
        );
        // 14. From host B to 0x0202, whose next hop is host B: a loop.
        let looped = packet(0x0202, vec![], 8, 0);
        send(
            &mut host_b,
            pool,
            &frame(R1_MAC, HOST_B, None, &bytes(&looped), 0),
            0,
        );
        // 15. From host C to 0x0202: back onto SAN B to host B, a redirect.
        let via_c = packet(0x0202, vec![], 16, 0x3);
        send(
            &mut host_b,
            pool,
            &frame(R1_MAC, HOST_C, None, &bytes(&via_c), 0),
            l4_bad,
        );

        let got_a = recv(&mut host_a, 1);
        assert_frames(
            &got_a,
            &[(
                "L3 to SAN A",
                frame(HOST_A, R0_MAC, None, &forwarded(&to_a, false), 0),
            )],
        );
        let got_b = recv(&mut host_b, 1);
        assert_frames(
            &got_b,
            &[("redirected L3", eth(HOST_B, forwarded(&via_c, true)))],
        );

        // --- Phase 3: a packet the control plane injects on port 0 ----------
        let hey = bytes(&Message::WhoAreYou.to_packet(Address(0x0101), HR0).unwrap());
        cch.inject(Injection {
            port: PortId(0),
            native_dst: NativeAddr::mac(HOST_A),
            data: hey.clone(),
        })
        .unwrap();
        let got_a = recv(&mut host_a, 1);
        assert_frames(
            &got_a,
            &[("injected", frame(HOST_A, R0_MAC, None, &hey, 0))],
        );

        // --- Stop, and account for everything ------------------------------
        stop.store(true, Ordering::Relaxed);
        let worker = handle.join().expect("worker thread");

        let mut punts = Vec::new();
        while let Some(p) = cch.recv_punt() {
            punts.push((
                p.in_port,
                p.hr_port,
                p.native_src,
                p.rx_error,
                p.data.clone(),
            ));
            cch.recycle(p);
        }
        // The egress-only punt carries the packet without its L2RH, EI
        // untouched; both carry the native source read from the Ethernet
        // header the port stripped (kept in the mbuf, past the L2RH strip).
        let mut for_hr1_eep = for_hr1.clone();
        for_hr1_eep.l2rhs.clear();
        assert_eq!(
            punts,
            vec![
                (
                    PortId(0),
                    PortId(0),
                    NativeAddr::mac(HOST_A),
                    false,
                    who.clone()
                ),
                (
                    PortId(0),
                    PortId(1),
                    NativeAddr::mac(HOST_A),
                    false,
                    bytes(&for_hr1_eep)
                ),
            ],
            "RRP#7 for HR0 (protocol class first), then the packet for HR1"
        );
        let mut notices = Vec::new();
        let mut redirect_to = None;
        while let Some(n) = cch.recv_notice() {
            if n.kind == NoticeKind::Redirect {
                redirect_to = Some(n.next_hop);
            }
            notices.push((n.kind, n.in_port, n.out_port, n.native_src));
        }
        assert_eq!(
            notices,
            vec![
                (
                    NoticeKind::NoRoute,
                    PortId(0),
                    PortId(0),
                    NativeAddr::mac(HOST_A)
                ),
                (
                    NoticeKind::Mtu,
                    PortId(0),
                    PortId(1),
                    NativeAddr::mac(HOST_A)
                ),
                (
                    NoticeKind::Redirect,
                    PortId(1),
                    PortId(1),
                    NativeAddr::mac(HOST_C)
                ),
            ]
        );
        assert_eq!(redirect_to, Some(NativeAddr::mac(HOST_B)));

        let c = worker.counters();
        // Port 0: 11 packets reached the engine (the IPv4 frame did not).
        assert_eq!(c[0].received, 11);
        assert_eq!(c[0].forwarded, 6);
        assert_eq!(c[0].punted, 2);
        assert_eq!(c[0].dropped(DropReason::NoRoute), 1, "no-route");
        assert_eq!(c[0].dropped(DropReason::BadL2rh), 1);
        assert_eq!(c[0].dropped(DropReason::Mtu), 1);
        assert_eq!(c[0].dropped_total(), 3);
        assert_eq!(c[0].rx_errors, 2);
        assert!(c[0].balanced(), "received = forwarded + dropped + punted");
        assert_eq!(c[0].transmitted, 2, "forwarded from port 1, and injected");
        assert_eq!(c[0].injected, 1);
        // Port 1.
        assert_eq!(c[1].received, 3);
        assert_eq!(c[1].forwarded, 2);
        assert_eq!(c[1].dropped(DropReason::Loop), 1);
        assert_eq!(c[1].rx_errors, 1);
        assert!(c[1].balanced());
        assert_eq!(c[1].transmitted, 7);
        assert_eq!(c[0].notices + c[1].notices, 3);

        // The ports' own view.
        let s0 = devs[0].stats().unwrap();
        assert_eq!(s0.ipackets, 12);
        assert_eq!(s0.rx_not_mw, 1, "the IPv4 frame");
        assert_eq!(s0.opackets, 2);
        let s1 = devs[1].stats().unwrap();
        assert_eq!(s1.ipackets, 3);
        assert_eq!(s1.opackets, 7);

        // Zero copy from rx to tx, and no mbuf lost on the way.
        drop(worker);
        drop((host_a, host_b));
        assert_eq!(pool.avail_count(), mbufs_at_start, "every mbuf is back");
    }

    /// A group packet received on port 0 leaves by ports 1, 2 and 3, to
    /// every member of each SAN (Ethernet broadcast), EI shifted once: as
    /// chained replicas (a header mbuf in front of the received mbuf, no
    /// copy of the payload) on ports 1 and 2, whose devices transmit
    /// chains; the received mbuf itself goes to the last port, 3, started
    /// with chains off, which copies it when replicas share it. The hosts
    /// get the replicas by pointer (ring pairs), chains and all, and read
    /// them whole.
    #[test]
    fn worker_replicates_group_packets_over_dpdk_ports() {
        use dataplane::McastFib;
        use ports::dpdk::Replication;
        use rrp::router::{McastGroup, McastTables, SourceSan};

        let eal = match Eal::init(testkit::dpdk_eal_args()) {
            Ok(eal) => eal,
            Err(e) => {
                testkit::skip(TEST, &format!("EAL does not start here: {e}"));
                return;
            }
        };
        ports::dpdk::register_thread();
        const G: u16 = 0x8123;
        const SRC: u16 = 0x0101;
        let macs: [[u8; 6]; 4] = std::array::from_fn(|i| [0x02, 0, 0, 0, 0x02, i as u8]);
        let hosts: [[u8; 6]; 4] = std::array::from_fn(|i| [0x02, 0, 0, 0, 0x0A, i as u8]);
        let pairs: Vec<_> = (0..4)
            .map(|i| ring_pair(eal, &format!("mc{i}"), 1, 1024).unwrap())
            .collect();
        let chained = eal
            .start_ports(
                &[
                    DeviceSpec::new(&pairs[0].a).mac(macs[0]),
                    DeviceSpec::new(&pairs[1].a).mac(macs[1]),
                    DeviceSpec::new(&pairs[2].a).mac(macs[2]),
                    DeviceSpec::new(&pairs[0].b).mac(hosts[0]),
                    DeviceSpec::new(&pairs[1].b).mac(hosts[1]),
                    DeviceSpec::new(&pairs[2].b).mac(hosts[2]),
                ],
                // Chains from the shortest packet that allows them (the
                // default copies packets under 256 bytes).
                &StartOptions {
                    chain_min_len: 0,
                    ..StartOptions::default()
                },
            )
            .expect("start the chaining ports");
        let copying = eal
            .start_ports(
                &[
                    DeviceSpec::new(&pairs[3].a).mac(macs[3]),
                    DeviceSpec::new(&pairs[3].b).mac(hosts[3]),
                ],
                &StartOptions {
                    chains: false,
                    ..StartOptions::default()
                },
            )
            .expect("start the copying port");
        let mut router_ports: Vec<DpdkPort> = vec![
            chained[0].port(0).unwrap(),
            chained[1].port(0).unwrap(),
            chained[2].port(0).unwrap(),
            copying[0].port(0).unwrap(),
        ];
        assert_eq!(router_ports[1].replication(), Replication::ChainOffload);
        assert_eq!(router_ports[3].replication(), Replication::Copy);
        let mut host_in = chained[3].raw_queue(0).unwrap();
        let mut hosts_out = [
            chained[4].raw_queue(0).unwrap(),
            chained[5].raw_queue(0).unwrap(),
            copying[1].raw_queue(0).unwrap(),
        ];
        let free = |ps: &mut [DpdkPort]| -> Vec<u32> {
            for p in ps.iter_mut() {
                p.release_spares();
            }
            let mut v = vec![ps[0].pool().avail_count(), ps[3].pool().avail_count()];
            v.push(ps[1].header_pool().unwrap().avail_count());
            v
        };
        let at_start = free(&mut router_ports);

        let hrs = vec![HR0, HR1, Address(0x0130), Address(0x0140)];
        let cfg = EngineConfig {
            hrs: hrs.clone(),
            mtus: vec![1500; 4],
        };
        let mut fib = FibSet::new(4, &hrs);
        fib.set_mcast(Arc::new(McastFib::from_tables(&McastTables {
            version: 1,
            sans: vec![SourceSan {
                san: Address(0x0201),
                up: PortId(0),
                from: None,
                df: 0b1110,
            }],
            sources: vec![(Address(SRC), 0)],
            groups: vec![McastGroup {
                group: Address(G),
                member_sans: vec![Address(0x0202), Address(0x0203), Address(0x0204)],
                branches: 0b1110,
                local: 0,
            }],
        })));
        let (_publisher, mut readers) = fib_channel(fib, 1);
        let (wch, _cch) = channels(ChannelConfig::default());
        let mut worker = Worker::new(0, &cfg, router_ports, readers.remove(0), wch);

        // 64-byte frames (a 48-byte packet: chained), a 24-byte packet
        // (padded: copied everywhere), 1500-byte frames.
        let group_pkt = |data_len: usize, ei: u64| {
            let mut p = packet(G, vec![], data_len, ei);
            p.header.src = Address(SRC);
            p
        };
        let pkts = [group_pkt(24, 1), group_pkt(0, 3), group_pkt(1472, 0)];
        assert_eq!(bytes(&pkts[0]).len(), 48);
        assert_eq!(bytes(&pkts[2]).len(), 1496);
        let pool = worker.ports_mut()[0].pool();
        for p in &pkts {
            send(
                &mut host_in,
                pool,
                &frame([0xFF; 6], HOST_A, None, &bytes(p), 0),
                0,
            );
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while worker.counters()[0].received < 3 && Instant::now() < deadline {
            worker.poll_once();
        }
        for (i, host) in hosts_out.iter_mut().enumerate() {
            let port = i + 1;
            let mut got: Vec<Mbuf> = Vec::new();
            let mut b: Burst<Mbuf> = Burst::new();
            while got.len() < 3 && Instant::now() < deadline {
                host.rx_burst(&mut b);
                got.extend(b.drain(..));
            }
            assert_eq!(got.len(), 3, "port {port}: one copy of each packet");
            for (k, (m, p)) in got.iter().zip(&pkts).enumerate() {
                let want = frame([0xFF; 6], macs[port], None, &forwarded(p, false), 0);
                assert_eq!(m.chain_bytes(), want, "port {port}, packet {k}");
                // Chains where the port chains and the packet needs no
                // padding; the last port copies the shared packet.
                let segs = if port != 3 && k != 1 { 2 } else { 1 };
                assert_eq!(m.nb_segs(), segs, "port {port}, packet {k}");
            }
        }
        let c = worker.counters();
        assert_eq!((c[0].received, c[0].forwarded), (3, 3));
        assert_eq!(
            (c[1].transmitted, c[2].transmitted, c[3].transmitted),
            (3, 3, 3)
        );
        let (slots, _) = worker.mcast_counters();
        assert_eq!((slots[0].packets, slots[0].copies), (3, 9));
        assert_eq!(slots[0].copy_failed, 0);
        let ps = worker.ports_mut();
        let (s1, s2) = (ps[1].stats().unwrap(), ps[2].stats().unwrap());
        assert_eq!((s1.replicas_chained, s1.replicas_copied), (2, 1));
        assert_eq!((s2.replicas_chained, s2.replicas_copied), (2, 1));
        assert_eq!(free(ps), at_start, "every mbuf of every pool is back");
    }
}

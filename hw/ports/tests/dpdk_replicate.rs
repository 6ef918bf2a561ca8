//! Multicast replication on DPDK ports (`Port::replicate`): each port's
//! mode from its driver (ring, null, pcap, memif, af_packet), replicas as a
//! header mbuf chained to the packet's own mbuf (bytes, reference counts,
//! the shared original's header in a header mbuf of its own, pools back to
//! where they started), the clone primitive, copies for short packets and
//! copying ports, chains transmitted by net_null (freed) and net_pcap
//! (written whole), and chains and shared frames received by a peer port
//! over a ring pair (made one private segment, counted).
//!
//! No hugepages, no NIC: vdevs are created at run time (`Eal::create_vdev`),
//! each test with its own names, so that the tests also run in one process
//! (`cargo test`). Without the `dpdk` feature the file holds one test that
//! reports a skip.

#[cfg(not(feature = "dpdk"))]
#[test]
fn dpdk_replicate() {
    testkit::skip(
        "ports::dpdk_replicate",
        "built without the `dpdk` feature (cargo test -p ports --features dpdk)",
    );
}

#[cfg(feature = "dpdk")]
mod with_dpdk {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use ports::dpdk::{
        CHAIN_FROM_LEN, CHAIN_MIN_LEN, DeviceSpec, DpdkPort, ETH_HLEN, ETHERTYPE_MW, Eal, Ethdev,
        MIN_FRAME, Mbuf, Pool, Replication, StartOptions, ring_pair,
    };
    use ports::{Burst, PacketBuf, Port};
    use rrp::NativeAddr;

    const A_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x01];
    const B_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x02];
    const BROADCAST: [u8; 6] = [0xFF; 6];

    fn eal(test: &str) -> Option<&'static Eal> {
        match Eal::init(testkit::dpdk_eal_args()) {
            Ok(eal) => {
                ports::dpdk::register_thread();
                Some(eal)
            }
            Err(e) => {
                testkit::skip(test, &format!("EAL does not start here: {e}"));
                None
            }
        }
    }

    /// Small pools; chains from the shortest packet that allows them, so
    /// that small packets exercise chains too (the default copies packets
    /// under `CHAIN_FROM_LEN`, tested on its own).
    fn small(chains: bool) -> StartOptions {
        StartOptions {
            queues: 1,
            cache: 32,
            extra_mbufs: 256,
            chains,
            chain_min_len: 0,
            ..StartOptions::default()
        }
    }

    fn start(eal: &Eal, specs: &[DeviceSpec], chains: bool) -> Vec<Ethdev> {
        let specs: Vec<DeviceSpec> = specs.iter().map(|s| s.clone().rings(256, 256)).collect();
        eal.start_ports(&specs, &small(chains))
            .expect("start ports")
    }

    /// A MessageWay-sized packet of `len` bytes (the bytes only matter).
    fn packet(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect()
    }

    /// The frame `port` sends for `pkt` to every member: broadcast, its
    /// MAC, 0x88B5, padded to 60 bytes.
    fn frame(src: [u8; 6], pkt: &[u8]) -> Vec<u8> {
        let mut f = BROADCAST.to_vec();
        f.extend_from_slice(&src);
        f.extend_from_slice(&ETHERTYPE_MW.to_be_bytes());
        f.extend_from_slice(pkt);
        if f.len() < MIN_FRAME {
            f.resize(MIN_FRAME, 0);
        }
        f
    }

    /// Free mbufs of every pool a port uses, to compare before and after
    /// (the port's spare mbufs given back first).
    fn free_counts(p: &mut DpdkPort) -> Vec<u32> {
        p.release_spares();
        let mut v = vec![p.pool().avail_count()];
        if let Some(h) = p.header_pool() {
            v.push(h.avail_count());
        }
        v
    }

    fn rx_n(mut rx: impl FnMut(&mut Burst<Mbuf>), n: usize) -> Vec<Mbuf> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = Vec::new();
        while got.len() < n && Instant::now() < deadline {
            let mut b = Burst::new();
            rx(&mut b);
            if b.is_empty() {
                std::thread::yield_now();
            }
            got.extend(b.drain(..));
        }
        got
    }

    fn send_all(port: &mut DpdkPort, bufs: Vec<Mbuf>) {
        let mut b: Burst<Mbuf> = Burst::new();
        for m in bufs {
            b.push(m);
        }
        let n = b.len();
        assert_eq!(port.tx_burst(&mut b), n, "the ring took the burst");
    }

    /// An empty classic pcap (Ethernet): an rx side for pcap vdevs that
    /// only transmit.
    fn empty_pcap(path: &Path) {
        let mut h = Vec::new();
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        std::fs::write(path, h).unwrap();
    }

    /// The frames of a classic pcap (µs or ns, little-endian).
    fn pcap_frames(path: &Path) -> Vec<Vec<u8>> {
        let d = std::fs::read(path).unwrap();
        assert!(d.len() >= 24, "{}: a pcap header", path.display());
        let u32_at = |at: usize| u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
        let mut out = Vec::new();
        let mut at = 24;
        while at + 16 <= d.len() {
            let (incl, orig) = (u32_at(at + 8), u32_at(at + 12));
            assert_eq!(incl, orig, "whole frames");
            out.push(d[at + 16..at + 16 + incl].to_vec());
            at += 16 + incl;
        }
        out
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("mwrouter-{name}-{}", std::process::id()))
    }

    #[test]
    fn each_driver_gets_its_mode() {
        let Some(eal) = eal("ports::dpdk_replicate::each_driver_gets_its_mode") else {
            return;
        };
        let pair = ring_pair(eal, "mode", 1, 256).unwrap();
        let null = eal.create_vdev("net_null_mode0", "").unwrap();
        let rx = scratch("mode-rx.pcap");
        empty_pcap(&rx);
        let tx = scratch("mode-tx.pcap");
        let pcap = eal
            .create_vdev(
                "net_pcap_mode0",
                &format!("rx_pcap={},tx_pcap={}", rx.display(), tx.display()),
            )
            .unwrap();
        let sock = scratch("mode.sock");
        let memif = eal
            .create_vdev(
                "net_memif_mode0",
                &format!("role=server,socket={},socket-abstract=no", sock.display()),
            )
            .unwrap();
        let devs = start(
            eal,
            &[
                DeviceSpec::new(&pair.a),
                DeviceSpec::new(&null),
                DeviceSpec::new(&pcap),
                DeviceSpec::new(&memif),
            ],
            true,
        );
        let modes: Vec<(String, Replication)> = devs
            .iter()
            .map(|d| (d.driver().to_string(), d.replication()))
            .collect();
        assert_eq!(
            modes,
            [
                ("net_ring".to_string(), Replication::ChainOffload),
                ("net_null".to_string(), Replication::ChainDriver),
                ("net_pcap".to_string(), Replication::ChainDriver),
                ("net_memif".to_string(), Replication::ChainOffload),
            ]
        );
        // Every port of a chaining device has the chain pools.
        let p = devs[1].port(0).unwrap();
        assert!(p.header_pool().is_some());
        assert_eq!(p.replication(), Replication::ChainDriver);
        drop(p);
        drop(devs);
        // Chains turned off: copies, no chain pools.
        let devs = start(eal, &[DeviceSpec::new(&pair.b)], false);
        assert_eq!(devs[0].replication(), Replication::Copy);
        assert!(devs[0].port(0).unwrap().header_pool().is_none());

        // The pure rule, for the drivers this machine may not have.
        use ports::dpdk::TX_OFFLOAD_MULTI_SEGS as MS;
        assert_eq!(
            Replication::for_driver("net_ice", MS, true),
            Replication::ChainOffload
        );
        assert_eq!(
            Replication::for_driver("net_af_xdp", 0, true),
            Replication::Copy
        );
        assert_eq!(
            Replication::for_driver("net_null", 0, false),
            Replication::Copy
        );
        // AF_PACKET advertises the flag (needs CAP_NET_RAW and an interface).
        if testkit::is_root() {
            let af = eal
                .create_vdev("net_af_packet_mode0", "iface=lo")
                .expect("net_af_packet on lo");
            let devs = start(eal, &[DeviceSpec::new(&af)], true);
            assert_eq!(
                (devs[0].driver(), devs[0].replication()),
                ("net_af_packet", Replication::ChainOffload)
            );
        }
        let _ = std::fs::remove_file(&rx);
        let _ = std::fs::remove_file(&tx);
    }

    #[test]
    fn replicas_share_the_payload_and_give_it_back() {
        let Some(eal) = eal("ports::dpdk_replicate::replicas_share_the_payload_and_give_it_back")
        else {
            return;
        };
        let pair = ring_pair(eal, "share", 1, 256).unwrap();
        let devs = start(
            eal,
            &[
                DeviceSpec::new(&pair.a).mac(A_MAC),
                DeviceSpec::new(&pair.b),
            ],
            true,
        );
        let mut port = devs[0].port(0).unwrap();
        let mut host = devs[1].raw_queue(0).unwrap();
        assert_eq!(port.replication(), Replication::ChainOffload);
        let start_counts = free_counts(&mut port);

        let pkt = packet(200, 1);
        let mut orig = port.pool().mbuf_from(&pkt).unwrap();
        let shared = orig.as_ptr();
        let mut reps = Vec::new();
        for i in 0..3 {
            let mut r = port.replicate(&orig).expect("a replica");
            assert_eq!(r.nb_segs(), 2, "a header, then the packet");
            assert!(r.is_empty(), "the header segment is empty before encap");
            assert_eq!(r.pkt_len(), 200);
            let seg = r.next_segment().unwrap();
            assert_eq!(seg.as_ptr(), shared, "the packet's own mbuf: no copy");
            assert_eq!(orig.refcnt(), 2 + i as u16);
            assert!(port.encap(&mut r, &NativeAddr::NONE));
            assert_eq!(r.len(), ETH_HLEN);
            assert_eq!(r.chain_bytes(), frame(A_MAC, &pkt));
            reps.push(r);
        }
        // The original goes out too, after the replicas were made (as the
        // engine does on the last branch): shared, so its header goes into
        // a header mbuf in front of it, its own fields untouched.
        assert!(port.encap(&mut orig, &NativeAddr::NONE));
        assert_eq!(orig.nb_segs(), 2);
        assert_eq!(orig.next_segment().unwrap().as_ptr(), shared);
        assert_eq!(orig.chain_bytes(), frame(A_MAC, &pkt));
        reps.push(orig);
        send_all(&mut port, reps);

        // The ring passes the chains by pointer: the host sees them as sent.
        let got = rx_n(
            |b| {
                host.rx_burst(b);
            },
            4,
        );
        assert_eq!(got.len(), 4);
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m.chain_bytes(), frame(A_MAC, &pkt), "frame {i}");
            assert_eq!(m.nb_segs(), 2);
            let seg = m.next_segment().unwrap();
            assert_eq!((seg.as_ptr(), seg.refcnt()), (shared, 4));
        }
        drop(got);
        let st = port.stats().unwrap();
        assert_eq!((st.replicas_chained, st.replicas_copied), (3, 0));
        assert_eq!(free_counts(&mut port), start_counts, "every mbuf went back");

        // The clone primitive (DPDK's other way, an indirect mbuf) works
        // too: the bytes in an indirect mbuf attached to the packet.
        let clones = ports::dpdk::Pool::create(eal, "t_clones", 255, 0, 0, -1).unwrap();
        let headers = port.header_pool().unwrap();
        let orig = port.pool().mbuf_from(&pkt).unwrap();
        let r = orig.clone_chain(headers, clones).unwrap();
        let seg = r.next_segment().unwrap();
        assert!(seg.is_indirect());
        assert_eq!(seg.data().as_ptr(), orig.data().as_ptr());
        assert_eq!((orig.refcnt(), r.chain_bytes()), (2, pkt.clone()));
        drop((r, orig));
        assert_eq!(clones.avail_count(), 255);
        assert_eq!(free_counts(&mut port), start_counts);
    }

    #[test]
    fn short_packets_and_copying_ports_copy() {
        let Some(eal) = eal("ports::dpdk_replicate::short_packets_and_copying_ports_copy") else {
            return;
        };
        let chained = ring_pair(eal, "shortc", 1, 256).unwrap();
        let copying = ring_pair(eal, "shortk", 1, 256).unwrap();
        let devs = start(
            eal,
            &[
                DeviceSpec::new(&chained.a).mac(A_MAC),
                DeviceSpec::new(&chained.b),
            ],
            true,
        );
        let devs_k = start(
            eal,
            &[
                DeviceSpec::new(&copying.a).mac(B_MAC),
                DeviceSpec::new(&copying.b),
            ],
            false,
        );
        let mut port = devs[0].port(0).unwrap();
        let mut host = devs[1].raw_queue(0).unwrap();
        let mut kport = devs_k[0].port(0).unwrap();
        let mut khost = devs_k[1].raw_queue(0).unwrap();
        let (c0, k0) = (free_counts(&mut port), free_counts(&mut kport));

        // Shorter than the minimum: padded, so copied.
        let short = packet(CHAIN_MIN_LEN - 6, 2);
        let orig = port.pool().mbuf_from(&short).unwrap();
        let mut r = port.replicate(&orig).unwrap();
        assert_eq!((r.nb_segs(), orig.refcnt()), (1, 1), "a copy");
        assert!(port.encap(&mut r, &NativeAddr::NONE));
        assert_eq!(r.data(), &frame(A_MAC, &short)[..]);
        // Exactly the minimum: chained, nothing to pad.
        let exact = packet(CHAIN_MIN_LEN, 3);
        let orig2 = port.pool().mbuf_from(&exact).unwrap();
        let mut r2 = port.replicate(&orig2).unwrap();
        assert_eq!(r2.nb_segs(), 2);
        assert!(port.encap(&mut r2, &NativeAddr::NONE));
        assert_eq!(r2.pkt_len(), MIN_FRAME);
        send_all(&mut port, vec![r, r2]);
        let got = rx_n(
            |b| {
                host.rx_burst(b);
            },
            2,
        );
        assert_eq!(got[0].chain_bytes(), frame(A_MAC, &short));
        assert_eq!(got[1].chain_bytes(), frame(A_MAC, &exact));
        drop((got, orig, orig2));
        let st = port.stats().unwrap();
        assert_eq!((st.replicas_chained, st.replicas_copied), (1, 1));

        // A copying port copies whatever the size.
        let big = packet(1496, 4);
        let orig = kport.pool().mbuf_from(&big).unwrap();
        let mut r = kport.replicate(&orig).unwrap();
        assert_eq!((r.nb_segs(), orig.refcnt()), (1, 1));
        assert!(kport.encap(&mut r, &NativeAddr::NONE));
        send_all(&mut kport, vec![r]);
        let got = rx_n(
            |b| {
                khost.rx_burst(b);
            },
            1,
        );
        assert_eq!(got[0].data(), &frame(B_MAC, &big)[..]);
        drop((got, orig));
        let st = kport.stats().unwrap();
        assert_eq!((st.replicas_chained, st.replicas_copied), (0, 1));
        assert_eq!(free_counts(&mut port), c0);
        assert_eq!(free_counts(&mut kport), k0);
    }

    #[test]
    fn by_default_small_packets_are_copied() {
        let Some(eal) = eal("ports::dpdk_replicate::by_default_small_packets_are_copied") else {
            return;
        };
        let pair = ring_pair(eal, "dflt", 1, 256).unwrap();
        let opts = StartOptions {
            cache: 32,
            extra_mbufs: 256,
            ..StartOptions::default()
        };
        let devs = eal
            .start_ports(
                &[
                    DeviceSpec::new(&pair.a).rings(256, 256),
                    DeviceSpec::new(&pair.b).rings(256, 256),
                ],
                &opts,
            )
            .unwrap();
        let mut port = devs[0].port(0).unwrap();
        assert_eq!(port.chain_min_len(), CHAIN_FROM_LEN);
        let below = port
            .pool()
            .mbuf_from(&packet(CHAIN_FROM_LEN - 8, 7))
            .unwrap();
        let at = port.pool().mbuf_from(&packet(CHAIN_FROM_LEN, 8)).unwrap();
        let r1 = port.replicate(&below).unwrap();
        let r2 = port.replicate(&at).unwrap();
        assert_eq!((r1.nb_segs(), r2.nb_segs()), (1, 2));
        drop((r1, r2, below, at, port, devs));
        // A threshold under the padding minimum is raised to it.
        let null = eal.create_vdev("net_null_dflt0", "no-rx=1").unwrap();
        let devs = eal
            .start_ports(
                &[DeviceSpec::new(null).rings(256, 256)],
                &StartOptions {
                    chain_min_len: 10,
                    ..opts
                },
            )
            .unwrap();
        assert_eq!(devs[0].port(0).unwrap().chain_min_len(), CHAIN_MIN_LEN);
    }

    #[test]
    fn a_peer_port_receives_chains_and_shared_originals_privately() {
        let Some(eal) = eal(
            "ports::dpdk_replicate::a_peer_port_receives_chains_and_shared_originals_privately",
        ) else {
            return;
        };
        // Two routers back to back: A's replicas arrive at B by pointer.
        let pair = ring_pair(eal, "peer", 1, 256).unwrap();
        let devs = start(
            eal,
            &[
                DeviceSpec::new(&pair.a).mac(A_MAC),
                DeviceSpec::new(&pair.b).mac(B_MAC),
            ],
            true,
        );
        let mut a = devs[0].port(0).unwrap();
        let mut b = devs[1].port(0).unwrap();
        let (a0, b0) = (free_counts(&mut a), free_counts(&mut b));

        // 64-byte frames: the header mbuf has the room, linearized in place;
        // 1500: copied into a new mbuf of B's pool.
        let small_pkt = packet(48, 5);
        let big_pkt = packet(1496, 6);
        let o1 = a.pool().mbuf_from(&small_pkt).unwrap();
        let o2 = a.pool().mbuf_from(&big_pkt).unwrap();
        let mut reps = Vec::new();
        for o in [&o1, &o2] {
            let mut r = a.replicate(o).unwrap();
            assert_eq!(r.nb_segs(), 2);
            assert!(a.encap(&mut r, &NativeAddr::NONE));
            reps.push(r);
        }
        // The original of the small one itself, first: shared with its
        // replica, it leaves behind a header mbuf of its own.
        let mut o1 = o1;
        assert!(a.encap(&mut o1, &NativeAddr::NONE));
        assert_eq!(o1.nb_segs(), 2);
        reps.insert(0, o1);
        // A single-segment frame whose mbuf a replica shares (as a NIC
        // never delivers, but a ring passes): B must copy it.
        let f = a
            .pool()
            .mbuf_from(&frame(A_MAC, &small_pkt)[..ETH_HLEN + 48])
            .unwrap();
        let held = a.replicate(&f).unwrap();
        assert_eq!(f.refcnt(), 2);
        reps.push(f);
        send_all(&mut a, reps);

        let mut got = rx_n(|x| b.rx_burst(x), 4);
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].data(), &small_pkt[..]);
        assert_eq!(got[1].data(), &small_pkt[..]);
        assert_eq!(got[2].data(), &big_pkt[..]);
        assert_eq!(got[3].data(), &small_pkt[..]);
        for m in &got {
            assert_eq!((m.nb_segs(), m.refcnt(), m.is_indirect()), (1, 1, false));
            assert_eq!(m.native_src(), NativeAddr::mac(A_MAC));
        }
        // All four are B's own: it may write into them (the EI update)
        // without touching A's packets, which the replicas shared.
        for m in &mut got {
            m.data_mut()[0] ^= 0xFF;
        }
        assert_eq!(o2.data(), &big_pkt[..], "A's original unchanged");
        assert_eq!(
            held.chain_bytes(),
            &frame(A_MAC, &small_pkt)[..ETH_HLEN + 48],
            "the shared frame unchanged"
        );
        drop(got);
        drop((o2, held));
        let st = b.stats().unwrap();
        assert_eq!(
            (st.rx_linearized, st.rx_unshared, st.rx_multiseg),
            (3, 1, 0)
        );
        assert_eq!(free_counts(&mut a), a0, "A's pools are whole again");
        assert_eq!(free_counts(&mut b), b0, "B's pools are whole again");
    }

    #[test]
    fn net_null_frees_chains_and_net_pcap_writes_them_whole() {
        let Some(eal) =
            eal("ports::dpdk_replicate::net_null_frees_chains_and_net_pcap_writes_them_whole")
        else {
            return;
        };
        let null = eal.create_vdev("net_null_chain0", "no-rx=1").unwrap();
        let rx = scratch("chain-rx.pcap");
        empty_pcap(&rx);
        let tx = scratch("chain-tx.pcap");
        let pcap = eal
            .create_vdev(
                "net_pcap_chain0",
                &format!("rx_pcap={},tx_pcap={}", rx.display(), tx.display()),
            )
            .unwrap();
        let devs = start(
            eal,
            &[
                DeviceSpec::new(&null).mac(A_MAC),
                DeviceSpec::new(&pcap).mac(B_MAC),
            ],
            true,
        );
        let pool: Pool = devs[0].pool();
        let mut np = devs[0].port(0).unwrap();
        let mut pp = devs[1].port(0).unwrap();
        let (n0, p0) = (free_counts(&mut np), free_counts(&mut pp));

        let sizes = [48usize, 200, 1496];
        let pkts: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| packet(n, i as u8))
            .collect();
        let origs: Vec<Mbuf> = pkts.iter().map(|p| pool.mbuf_from(p).unwrap()).collect();
        for port in [&mut np, &mut pp] {
            let mut reps = Vec::new();
            for o in &origs {
                let mut r = port.replicate(o).unwrap();
                assert_eq!(r.nb_segs(), 2);
                assert!(port.encap(&mut r, &NativeAddr::NONE));
                reps.push(r);
            }
            send_all(port, reps);
        }
        drop(origs);
        // (22.11's net_null counts packets, not bytes.)
        assert_eq!(np.stats().unwrap().opackets, 3);
        let st = pp.stats().unwrap();
        let want_bytes: usize = sizes.iter().map(|n| n + ETH_HLEN).sum();
        assert_eq!(
            (st.opackets, st.obytes),
            (3, want_bytes as u64),
            "net_pcap counts whole chains"
        );
        assert_eq!(free_counts(&mut np), n0, "net_null freed the chains");
        assert_eq!(free_counts(&mut pp), p0, "net_pcap freed the chains");
        // The pcap file is closed when the device stops.
        drop((np, pp, devs));
        let frames = pcap_frames(&tx);
        let want: Vec<Vec<u8>> = pkts.iter().map(|p| frame(B_MAC, p)).collect();
        assert_eq!(frames, want, "net_pcap wrote every chain whole");
        let _ = std::fs::remove_file(&rx);
        let _ = std::fs::remove_file(&tx);
    }
}

//! The DPDK backend without hugepages or NICs: `Mbuf` as a `PacketBuf`
//! (strip, prepend, trim, append, flags, native source, back to the pool on
//! drop), and `DpdkPort` over an in-process ring pair whose other end is a
//! raw "host" queue: exact bytes both ways, Ethernet decap/encap, padding to
//! 60 bytes, refused frames counted, receive errors from `ol_flags`, partial
//! transmission, queue ownership, one EAL per process, and how a device's
//! frames are spread over several workers (flow rules refused by the
//! vdevs: one worker owns each port's receive queues, every worker has a
//! transmit queue), and the device's counters as the link's (bytes and
//! `rx_nombuf` over a pcap vdev, reported by one port of a device).
//!
//! EAL is initialised once per test process (`Eal::init` keeps the first
//! outcome); every test of this file uses the same arguments. Without the
//! `dpdk` feature the file holds one test that reports a skip.

#[cfg(not(feature = "dpdk"))]
#[test]
fn dpdk_port() {
    testkit::skip(
        "ports::dpdk_port",
        "built without the `dpdk` feature (cargo test -p ports --features dpdk)",
    );
}

#[cfg(feature = "dpdk")]
mod with_dpdk {
    use std::time::{Duration, Instant};

    use ports::dpdk::sys;
    use ports::dpdk::{
        DeviceSpec, DpdkError, DpdkPort, ETH_HLEN, ETHERTYPE_MW, Eal, Ethdev, Mbuf, RX_ERROR_FLAGS,
        RX_FLAGS_MASK, RawQueue, RxSpread, Spread, StartOptions, ring_pair,
    };
    use ports::{BURST, Burst, PacketBuf, Port};
    use rrp::{LinkKind, NativeAddr};

    const ROUTER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x01];
    const HOST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x0A, 0x0A];

    /// The process's EAL, or `None` after reporting a skip (panics under
    /// MWROUTER_REQUIRE_ALL=1).
    fn eal(test: &str) -> Option<&'static Eal> {
        match Eal::init(testkit::dpdk_eal_args()) {
            Ok(eal) => Some(eal),
            Err(e) => {
                testkit::skip(test, &format!("EAL does not start here: {e}"));
                None
            }
        }
    }

    /// A router port and the raw host queue at the other end of a ring pair
    /// of `ring` slots per direction.
    fn link(eal: &Eal, tag: &str, ring: u32) -> (DpdkPort, RawQueue) {
        let pair = ring_pair(eal, tag, 1, ring).expect("ring pair");
        let devs = eal
            .start_ports(
                &[
                    DeviceSpec::new(&pair.a).mac(ROUTER_MAC).rings(256, 256),
                    DeviceSpec::new(&pair.b).mac(HOST_MAC).rings(256, 256),
                ],
                &StartOptions {
                    queues: 1,
                    cache: 32,
                    extra_mbufs: 256,
                    ..StartOptions::default()
                },
            )
            .expect("start ring ports");
        (devs[0].port(0).unwrap(), devs[1].raw_queue(0).unwrap())
    }

    fn frame(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = Vec::with_capacity(14 + payload.len());
        f.extend_from_slice(&dst);
        f.extend_from_slice(&src);
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn payload(i: usize, len: usize) -> Vec<u8> {
        (0..len).map(|j| (i * 37 + j * 5 + 1) as u8).collect()
    }

    /// Polls `rx` until `n` buffers arrived (or 5 s passed).
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

    #[test]
    fn mbuf_is_a_packet_buf() {
        let Some(eal) = eal("ports::dpdk_port::mbuf_is_a_packet_buf") else {
            return;
        };
        let lcore = ports::dpdk::try_register_thread().expect("register");
        assert_eq!(ports::dpdk::lcore_id(), Some(lcore));
        assert_eq!(
            ports::dpdk::try_register_thread().unwrap(),
            lcore,
            "idempotent"
        );

        let pool = ports::dpdk::Pool::create(
            eal,
            "t_mbuf",
            511,
            32,
            (sys::RTE_MBUF_DEFAULT_DATAROOM + sys::RTE_PKTMBUF_HEADROOM) as u16,
            0,
        )
        .expect("pool");
        assert_eq!(pool.size(), 511);
        assert_eq!(pool.avail_count(), 511);

        let mut m = pool.alloc().expect("mbuf");
        assert_eq!(pool.avail_count(), 510);
        assert_eq!(pool.in_use_count(), 1);
        assert_eq!(m.pool(), Some(pool));
        assert!(m.is_empty());
        assert_eq!(m.headroom(), sys::RTE_PKTMBUF_HEADROOM as usize);
        assert_eq!(m.tailroom(), sys::RTE_MBUF_DEFAULT_DATAROOM as usize);
        assert_eq!(m.native_src(), NativeAddr::NONE);
        assert!(!m.rx_error());

        m.append(10)
            .unwrap()
            .copy_from_slice(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(m.data(), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        // The Rust view agrees with DPDK's accessors (rte_pktmbuf_mtod,
        // rte_pktmbuf_data_len) and moves with them.
        let same_as_c = |m: &Mbuf| {
            // SAFETY: `m` is a live mbuf owned by this test; the accessors
            // only read it.
            let (p, l) = unsafe {
                (
                    sys::mw_pktmbuf_mtod(m.as_ptr()).cast::<u8>().cast_const(),
                    sys::mw_pktmbuf_data_len(m.as_ptr()),
                )
            };
            assert_eq!(m.data().as_ptr(), p);
            assert_eq!(m.len(), l as usize);
            assert_eq!(m.pkt_len(), l as usize);
        };
        same_as_c(&m);

        m.prepend(4).unwrap().fill(0xAA);
        assert_eq!(
            m.data(),
            &[0xAA, 0xAA, 0xAA, 0xAA, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!(m.headroom(), sys::RTE_PKTMBUF_HEADROOM as usize - 4);
        same_as_c(&m);
        m.adj(2);
        assert_eq!(m.data(), &[0xAA, 0xAA, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        m.trim(5);
        assert_eq!(m.data(), &[0xAA, 0xAA, 0, 1, 2]);
        m.trim(100);
        assert_eq!(m.len(), 5, "trim never grows");
        m.append(2).unwrap().copy_from_slice(&[7, 7]);
        assert_eq!(m.data(), &[0xAA, 0xAA, 0, 1, 2, 7, 7]);
        m.data_mut()[0] = 0x55;
        assert_eq!(m.data()[0], 0x55);
        same_as_c(&m);
        let head = m.headroom();
        assert!(m.prepend(head + 1).is_none(), "headroom too small");
        assert!(m.append(m.tailroom() + 1).is_none(), "tailroom too small");
        assert!(m.prepend(70_000).is_none());
        assert!(m.append(70_000).is_none());
        assert_eq!(m.len(), 7, "failed growth changes nothing");
        assert_eq!(m.prepend(head).unwrap().len(), head, "all of the headroom");
        m.adj(head);
        m.adj(1000);
        assert!(m.is_empty(), "adj past the end empties");

        // Receive-error verdicts from ol_flags.
        use sys::*;
        let bad = [
            RTE_MBUF_F_RX_IP_CKSUM_BAD,
            RTE_MBUF_F_RX_L4_CKSUM_BAD,
            RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD,
            RTE_MBUF_F_RX_OUTER_L4_CKSUM_BAD,
            RTE_MBUF_F_RX_SEC_OFFLOAD_FAILED,
            RTE_MBUF_F_RX_IP_CKSUM_BAD | RTE_MBUF_F_RX_L4_CKSUM_GOOD,
        ];
        for f in bad {
            m.set_rx_flags(f as u64);
            assert!(m.rx_error(), "{f:#x} is an error");
        }
        let fine = [
            0,
            RTE_MBUF_F_RX_IP_CKSUM_GOOD,
            RTE_MBUF_F_RX_IP_CKSUM_NONE,
            RTE_MBUF_F_RX_L4_CKSUM_GOOD,
            RTE_MBUF_F_RX_L4_CKSUM_NONE,
            RTE_MBUF_F_RX_OUTER_L4_CKSUM_GOOD,
            RTE_MBUF_F_RX_OUTER_L4_CKSUM_INVALID,
            RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_RSS_HASH,
            RTE_MBUF_F_RX_SEC_OFFLOAD,
        ];
        for f in fine {
            m.set_rx_flags(f as u64);
            assert!(!m.rx_error(), "{f:#x} is not an error");
        }
        m.set_rx_flags(u64::MAX);
        assert_eq!(m.ol_flags(), RX_FLAGS_MASK, "only receive bits are set");
        assert_eq!(RX_ERROR_FLAGS & !RX_FLAGS_MASK, 0);
        m.set_rx_flags(0);
        assert_eq!(m.ol_flags(), 0);

        m.set_native_src(Some(HOST_MAC));
        assert_eq!(m.native_src(), NativeAddr::mac(HOST_MAC));
        m.set_native_src(None);
        assert_eq!(m.native_src(), NativeAddr::NONE);

        drop(m);
        assert_eq!(pool.avail_count(), 511, "drop returns the mbuf");

        let m = pool.mbuf_from(&[1, 2, 3]).unwrap();
        assert_eq!(m.data(), &[1, 2, 3]);
        let raw = m.into_raw();
        assert_eq!(pool.avail_count(), 510, "into_raw does not free");
        // SAFETY: `raw` came from into_raw just above and is not used again.
        let m = unsafe { Mbuf::from_raw(raw) };
        assert_eq!(m.data(), &[1, 2, 3]);
        drop(m);
        assert_eq!(pool.avail_count(), 511);

        // Mbufs are Send: freed on a thread without an lcore id.
        let many: Vec<Mbuf> = (0..10).map(|_| pool.alloc().unwrap()).collect();
        assert_eq!(pool.avail_count(), 501);
        std::thread::spawn(move || {
            assert_eq!(ports::dpdk::lcore_id(), None);
            drop(many);
        })
        .join()
        .unwrap();
        assert_eq!(pool.avail_count(), 511);

        // Exhaustion.
        let all: Vec<Mbuf> = std::iter::from_fn(|| pool.alloc()).collect();
        assert_eq!(all.len(), 511);
        assert!(pool.alloc().is_none());
        drop(all);
        assert_eq!(pool.avail_count(), 511);
    }

    #[test]
    fn rx_tx_exact_bytes_over_a_ring_pair() {
        let Some(eal) = eal("ports::dpdk_port::rx_tx_exact_bytes_over_a_ring_pair") else {
            return;
        };
        ports::dpdk::register_thread();
        let (mut router, mut host) = link(eal, "rxtx", 512);
        let pool = router.pool();
        assert_eq!(host.pool(), pool, "one pool per socket");
        let base = pool.avail_count();
        assert_eq!(router.native_addr(), NativeAddr::mac(ROUTER_MAC));
        assert_eq!(router.link_kind(), LinkKind::Ethernet);
        assert!(router.wait_fd().is_none());
        assert_eq!(router.ethdev().mac(), ROUTER_MAC);
        assert_eq!(host.mac(), HOST_MAC);

        // Host -> router: lengths around the 60-byte minimum and large ones.
        let lens = [1usize, 8, 46, 47, 100, 1486, 1500];
        let mut sent_ptrs = Vec::new();
        for (i, &n) in lens.iter().enumerate() {
            let m = pool
                .mbuf_from(&frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(i, n)))
                .unwrap();
            sent_ptrs.push((m.as_ptr(), m.data().as_ptr()));
            host.send(m).unwrap();
        }
        let got = rx_n(|b| router.rx_burst(b), lens.len());
        assert_eq!(got.len(), lens.len());
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m.data(), payload(i, lens[i]), "packet {i} after decap");
            assert_eq!(m.native_src(), NativeAddr::mac(HOST_MAC));
            assert!(!m.rx_error());
            // Zero copy: the very mbuf, its data 14 bytes further in.
            assert_eq!(m.as_ptr(), sent_ptrs[i].0);
            assert_eq!(m.data().as_ptr(), sent_ptrs[i].1.wrapping_add(14));
        }

        // Router -> host: encap to the host's MAC, to broadcast, and padding.
        let mut out: Burst<Mbuf> = Burst::new();
        for (i, mut m) in got.into_iter().enumerate() {
            let dst = if i == 0 {
                NativeAddr::NONE
            } else {
                NativeAddr::mac(HOST_MAC)
            };
            assert!(router.encap(&mut m, &dst));
            out.push(m);
        }
        assert_eq!(router.tx_burst(&mut out), lens.len());
        assert!(out.is_empty());
        let back = rx_n(
            |b| {
                host.rx_burst(b);
            },
            lens.len(),
        );
        assert_eq!(back.len(), lens.len());
        for (i, m) in back.iter().enumerate() {
            let dst = if i == 0 { [0xFF; 6] } else { HOST_MAC };
            let mut want = frame(dst, ROUTER_MAC, ETHERTYPE_MW, &payload(i, lens[i]));
            if want.len() < 60 {
                want.resize(60, 0);
            }
            assert_eq!(m.data(), want, "frame {i} as transmitted");
            assert_eq!(m.native_src(), NativeAddr::NONE, "raw queues set none");
        }
        drop(back);

        // The link header a sender copies frames with is what encap writes:
        // the same frames, padding included (to the host's MAC and to
        // broadcast); none for other address kinds.
        for (i, &n) in lens.iter().enumerate() {
            let dst = if i == 0 {
                NativeAddr::NONE
            } else {
                NativeAddr::mac(HOST_MAC)
            };
            let h = router.link_header(&dst).expect("a header");
            assert_eq!(h.min_frame, 60);
            let mut encapsulated = router.alloc().unwrap();
            encapsulated
                .append(n)
                .unwrap()
                .copy_from_slice(&payload(i, n));
            assert!(router.encap(&mut encapsulated, &dst));
            let mut framed = h.bytes.to_vec();
            framed.extend_from_slice(&payload(i, n));
            if framed.len() < h.min_frame {
                framed.resize(h.min_frame, 0);
            }
            assert_eq!(encapsulated.data(), &framed[..], "frame {i}");
        }
        assert!(
            router
                .link_header(&NativeAddr::from_bytes(&[1, 2, 3, 4]).unwrap())
                .is_none()
        );

        // Encap refuses other address kinds; alloc'd buffers start clean.
        let mut m = router.alloc().unwrap();
        assert!(m.is_empty());
        assert_eq!(m.native_src(), NativeAddr::NONE);
        assert!(!router.encap(&mut m, &NativeAddr::from_bytes(&[1, 2, 3, 4]).unwrap()));
        assert!(m.is_empty(), "a refused encap leaves the buffer");
        m.append(100).unwrap().fill(3);
        assert!(router.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
        assert_eq!(m.len(), 114, "no padding above 60 bytes");
        router.recycle(m);

        // One 802.1Q tag is accepted (any VID) and stripped with the header.
        let mut tagged = frame(ROUTER_MAC, HOST_MAC, 0x8100, &[0x20, 0x05]);
        tagged.extend_from_slice(&ETHERTYPE_MW.to_be_bytes());
        tagged.extend_from_slice(&payload(9, 30));
        assert!(host.send_frame(&tagged));
        // Group addresses (broadcast, multicast) are for us too.
        assert!(host.send_frame(&frame([0xFF; 6], HOST_MAC, ETHERTYPE_MW, &payload(10, 5))));
        assert!(host.send_frame(&frame(
            [0x01, 0x80, 0xC2, 0, 0, 0x0E],
            HOST_MAC,
            ETHERTYPE_MW,
            &payload(11, 5)
        )));
        let got = rx_n(|b| router.rx_burst(b), 3);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].data(), payload(9, 30));
        assert_eq!(got[1].data(), payload(10, 5));
        assert_eq!(got[2].data(), payload(11, 5));
        drop(got);

        let st = router.stats().unwrap();
        assert_eq!(st.ipackets, lens.len() as u64 + 3);
        assert_eq!(st.opackets, lens.len() as u64);
        assert_eq!(
            (st.rx_not_mw, st.rx_runt, st.rx_multiseg, st.rx_not_for_us),
            (0, 0, 0, 0)
        );
        assert_eq!(pool.avail_count(), base, "every mbuf went back");
    }

    #[test]
    fn refused_frames_are_dropped_and_counted() {
        let Some(eal) = eal("ports::dpdk_port::refused_frames_are_dropped_and_counted") else {
            return;
        };
        ports::dpdk::register_thread();
        let (mut router, mut host) = link(eal, "refuse", 512);
        let pool = router.pool();
        let base = pool.avail_count();

        let ok = frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(0, 40));
        assert!(host.send_frame(&frame(ROUTER_MAC, HOST_MAC, 0x0800, &payload(1, 40))));
        assert!(host.send_frame(&ok));
        assert!(host.send_frame(&frame(ROUTER_MAC, HOST_MAC, 0x86DD, &payload(2, 40))));
        // A tag followed by another EtherType; a double tag (Q-in-Q).
        let mut t = frame(ROUTER_MAC, HOST_MAC, 0x8100, &[0, 1]);
        t.extend_from_slice(&0x0806u16.to_be_bytes());
        t.extend_from_slice(&payload(3, 40));
        assert!(host.send_frame(&t));
        let mut qq = frame(ROUTER_MAC, HOST_MAC, 0x8100, &[0, 1, 0x81, 0, 0, 2]);
        qq.extend_from_slice(&ETHERTYPE_MW.to_be_bytes());
        assert!(host.send_frame(&qq));
        // Runts: shorter than the header, and a tag without its EtherType.
        assert!(host.send_frame(&ok[..13]));
        assert!(host.send_frame(&frame(ROUTER_MAC, HOST_MAC, 0x8100, &[0, 1, 0x88])));
        // Unicast to someone else.
        assert!(host.send_frame(&frame(
            [0x02, 9, 9, 9, 9, 9],
            HOST_MAC,
            ETHERTYPE_MW,
            &payload(4, 40)
        )));
        // Two segments: made one (the first has the tailroom) and taken.
        let first = pool.mbuf_from(&ok[..30]).unwrap();
        let second = pool.mbuf_from(&ok[30..]).unwrap();
        let p = first.as_ptr();
        let q = second.into_raw().as_ptr();
        // SAFETY: both mbufs are owned by this test; chaining them as
        // rte_pktmbuf_chain would (next, nb_segs, pkt_len) hands the second
        // to the first, which frees the chain.
        unsafe {
            (*p).next = q;
            (*p).nb_segs = 2;
            (*p).pkt_len += (*q).data_len as u32;
        }
        assert_eq!(first.nb_segs(), 2);
        host.send(first).unwrap();
        // Two segments too long for one mbuf: refused.
        let big = frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(5, 1486));
        let first = pool.mbuf_from(&big).unwrap();
        let second = pool.mbuf_from(&big).unwrap();
        let p = first.as_ptr();
        // SAFETY: as above.
        unsafe {
            ports::dpdk::sys::mw_pktmbuf_chain(p, second.into_raw().as_ptr());
        }
        assert_eq!(first.pkt_len(), 3000);
        host.send(first).unwrap();
        assert!(host.send_frame(&ok));

        let got = rx_n(|b| router.rx_burst(b), 3);
        assert_eq!(got.len(), 3, "only the three MessageWay frames");
        for m in &got {
            assert_eq!(m.data(), &ok[14..]);
            assert_eq!(m.nb_segs(), 1);
        }
        let mut b = Burst::new();
        router.rx_burst(&mut b);
        assert!(b.is_empty());
        drop(got);

        let st = router.stats().unwrap();
        assert_eq!(st.ipackets, 11, "the device saw every frame");
        assert_eq!(st.rx_not_mw, 4, "IPv4, IPv6, tagged ARP, Q-in-Q");
        assert_eq!(st.rx_runt, 2);
        assert_eq!(st.rx_not_for_us, 1);
        assert_eq!(st.rx_linearized, 1);
        assert_eq!(st.rx_multiseg, 1, "the chain too long for one mbuf");
        assert_eq!(pool.avail_count(), base, "refused frames are freed");
    }

    #[test]
    fn rx_error_comes_from_ol_flags_and_encap_clears_it() {
        let Some(eal) = eal("ports::dpdk_port::rx_error_comes_from_ol_flags_and_encap_clears_it")
        else {
            return;
        };
        ports::dpdk::register_thread();
        let (mut router, mut host) = link(eal, "rxerr", 512);
        let pool = router.pool();
        let flags = [
            0,
            sys::RTE_MBUF_F_RX_L4_CKSUM_BAD as u64,
            sys::RTE_MBUF_F_RX_L4_CKSUM_NONE as u64,
            sys::RTE_MBUF_F_RX_IP_CKSUM_BAD as u64,
            sys::RTE_MBUF_F_RX_OUTER_L4_CKSUM_BAD as u64,
        ];
        for (i, &f) in flags.iter().enumerate() {
            let mut m = pool
                .mbuf_from(&frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(i, 64)))
                .unwrap();
            m.set_rx_flags(f);
            host.send(m).unwrap();
        }
        let got = rx_n(|b| router.rx_burst(b), flags.len());
        let verdicts: Vec<bool> = got.iter().map(|m| m.rx_error()).collect();
        assert_eq!(verdicts, [false, true, false, true, true]);
        let mut out = Burst::new();
        for mut m in got {
            assert!(router.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
            assert_eq!(m.ol_flags() & RX_ERROR_FLAGS, 0, "encap clears the verdict");
            out.push(m);
        }
        assert_eq!(router.tx_burst(&mut out), flags.len());
        let back = rx_n(
            |b| {
                host.rx_burst(b);
            },
            flags.len(),
        );
        assert!(back.iter().all(|m| !m.rx_error()));
    }

    #[test]
    fn a_full_ring_leaves_the_unsent_in_the_burst() {
        let Some(eal) = eal("ports::dpdk_port::a_full_ring_leaves_the_unsent_in_the_burst") else {
            return;
        };
        ports::dpdk::register_thread();
        // 32 slots: 31 usable.
        let (mut router, mut host) = link(eal, "full", 32);
        let pool = router.pool();
        let base = pool.avail_count();
        let mut out: Burst<Mbuf> = Burst::new();
        let mut ptrs = Vec::new();
        for i in 0..BURST {
            let mut m = router.alloc().unwrap();
            m.append(20).unwrap().copy_from_slice(&payload(i, 20));
            assert!(router.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
            ptrs.push(m.as_ptr());
            out.push(m);
        }
        assert_eq!(router.tx_burst(&mut out), 31);
        assert_eq!(out.len(), 1, "the unsent one stays");
        assert_eq!(out[0].as_ptr(), ptrs[31], "the last one, in order");
        assert_eq!(out[0].data()[14..34], payload(31, 20));
        assert_eq!(router.tx_burst(&mut out), 0, "still full");
        assert_eq!(out.len(), 1);
        let got = rx_n(
            |b| {
                host.rx_burst(b);
            },
            31,
        );
        assert_eq!(got.len(), 31);
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m.as_ptr(), ptrs[i]);
            assert_eq!(m.data()[14..34], payload(i, 20));
        }
        assert_eq!(router.tx_burst(&mut out), 1);
        assert!(out.is_empty());
        let last = rx_n(
            |b| {
                host.rx_burst(b);
            },
            1,
        );
        assert_eq!(last[0].as_ptr(), ptrs[31]);
        drop((got, last));
        assert_eq!(pool.avail_count(), base);
        // A burst never holds more than BURST: rx fills only the free room.
        for i in 0..31 {
            assert!(host.send_frame(&frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(i, 8))));
        }
        let mut b: Burst<Mbuf> = Burst::new();
        b.push(router.alloc().unwrap());
        let deadline = Instant::now() + Duration::from_secs(5);
        while b.len() < BURST && Instant::now() < deadline {
            router.rx_burst(&mut b);
        }
        assert_eq!(b.len(), BURST);
        assert_eq!(b[1].data(), payload(0, 8));
        assert_eq!(b[BURST - 1].data(), payload(30, 8));
        router.rx_burst(&mut b);
        assert_eq!(b.len(), BURST, "a full burst takes nothing");
        drop(b);
        let mut rest = Burst::new();
        router.rx_burst(&mut rest);
        assert!(rest.is_empty());
        assert_eq!(pool.avail_count(), base);
    }

    #[test]
    fn queues_have_one_owner_and_eal_starts_once() {
        let Some(eal) = eal("ports::dpdk_port::queues_have_one_owner_and_eal_starts_once") else {
            return;
        };
        assert!(std::ptr::eq(
            Eal::init(testkit::dpdk_eal_args()).unwrap(),
            eal
        ));
        assert_eq!(eal.args(), testkit::dpdk_eal_args());
        let mut other = testkit::dpdk_eal_args();
        other.push("--vdev=net_null0".into());
        match Eal::init(other) {
            Err(DpdkError::AlreadyInitialised { args }) => {
                assert_eq!(args, testkit::dpdk_eal_args())
            }
            r => panic!("a second EAL configuration: {r:?}"),
        }

        let pair = ring_pair(eal, "own", 2, 64).unwrap();
        let devs: Vec<Ethdev> = eal
            .start_ports(
                &[DeviceSpec::new(&pair.a), DeviceSpec::new(&pair.b)],
                &StartOptions {
                    queues: 2,
                    ..StartOptions::default()
                },
            )
            .unwrap();
        assert_eq!(devs[0].queues(), 2);
        let p0 = devs[0].port(0).unwrap();
        match devs[0].port(0) {
            Err(DpdkError::QueueTaken { queue: 0, .. }) => {}
            r => panic!("queue 0 twice: {r:?}"),
        }
        assert!(matches!(
            devs[0].raw_queue(0),
            Err(DpdkError::QueueTaken { .. })
        ));
        assert!(matches!(devs[0].port(2), Err(DpdkError::Config(_))));
        let p1 = devs[0].port(1).unwrap();
        drop(p0);
        let _p0 = devs[0].port(0).expect("free again after drop");
        drop(p1);

        // Queue q of one end reaches queue q of the other, and only it.
        let mut b = devs[1].ports().unwrap();
        let mut a1 = devs[0].raw_queue(1).unwrap();
        assert!(a1.send_frame(&frame(
            devs[1].mac(),
            [2, 0, 0, 0, 0, 3],
            ETHERTYPE_MW,
            &[5; 9]
        )));
        let got = rx_n(|x| b[1].rx_burst(x), 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data(), &[5; 9]);
        let mut none = Burst::new();
        b[0].rx_burst(&mut none);
        assert!(none.is_empty());

        assert!(matches!(
            eal.start_ports(
                &[DeviceSpec::new("net_ring_nosuch")],
                &StartOptions::default()
            ),
            Err(DpdkError::NoSuchDevice(_))
        ));
    }

    fn two_workers(spread: Spread) -> StartOptions {
        StartOptions {
            queues: 2,
            spread,
            cache: 32,
            extra_mbufs: 256,
            ..StartOptions::default()
        }
    }

    #[test]
    fn without_flow_rules_one_worker_owns_a_ports_receive_queues() {
        let Some(eal) =
            eal("ports::dpdk_port::without_flow_rules_one_worker_owns_a_ports_receive_queues")
        else {
            return;
        };
        let pair = ring_pair(eal, "spread", 2, 64).unwrap();
        let specs = [
            DeviceSpec::new(&pair.a).mac(ROUTER_MAC).rings(64, 64),
            DeviceSpec::new(&pair.b).mac(HOST_MAC).rings(64, 64),
        ];
        // auto: the ring PMD has no rte_flow: one receive side, and why.
        let devs = eal.start_ports(&specs, &two_workers(Spread::Auto)).unwrap();
        match devs[0].spread() {
            RxSpread::Single { why } => {
                assert!(why.contains("rte_flow_validate"), "{why}")
            }
            s => panic!("a ring PMD spread by rules: {s:?}"),
        }
        assert!(!devs[0].spread().is_flows());
        assert_eq!((devs[0].rx_queues(), devs[0].queues()), (2, 2));

        // Worker 0 owns the receive side (both queues), worker 1 transmits.
        let mut owner = devs[0].port_with(0..2, 0).unwrap();
        let mut other = devs[0].port_with(0..0, 1).unwrap();
        assert_eq!(owner.rx_queues(), 0..2);
        assert!(other.rx_queues().is_empty());
        assert!(matches!(
            devs[0].port_with(1..2, 1),
            Err(DpdkError::QueueTaken { .. })
        ));
        // A failed take leaves nothing taken: queue 1 is the owner's, and
        // transmit queue 1 is still the other worker's only.
        assert!(matches!(
            devs[0].port_with(0..0, 1),
            Err(DpdkError::QueueTaken { .. })
        ));

        // What the peer sends on either of its queues reaches the owner.
        let mut h0 = devs[1].raw_queue(0).unwrap();
        let mut h1 = devs[1].raw_queue(1).unwrap();
        for i in 0..4 {
            let h = if i % 2 == 0 { &mut h0 } else { &mut h1 };
            let f = frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(i, 20));
            assert!(h.send_frame(&f));
        }
        let got = rx_n(|b| owner.rx_burst(b), 4);
        assert_eq!(got.len(), 4);
        let mut seen: Vec<Vec<u8>> = got.iter().map(|m| m.data().to_vec()).collect();
        seen.sort();
        let mut sent: Vec<Vec<u8>> = (0..4).map(|i| payload(i, 20)).collect();
        sent.sort();
        assert_eq!(seen, sent);
        let mut none = Burst::new();
        other.rx_burst(&mut none);
        assert!(none.is_empty(), "a port without receive queues receives");

        // Both workers transmit, each on its own queue.
        for (q, p) in [&mut owner, &mut other].into_iter().enumerate() {
            let mut b = Burst::new();
            let mut m = devs[0].pool().mbuf_from(&payload(10 + q, 30)).unwrap();
            assert!(p.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
            b.push(m);
            assert_eq!(p.tx_burst(&mut b), 1);
        }
        let at0 = rx_n(
            |b| {
                h0.rx_burst(b);
            },
            1,
        );
        let at1 = rx_n(
            |b| {
                h1.rx_burst(b);
            },
            1,
        );
        assert_eq!(at0[0].data()[14..44], payload(10, 30)[..]);
        assert_eq!(at1[0].data()[14..44], payload(11, 30)[..]);
        drop((owner, other, h0, h1, devs));

        // ports: no rules tried.
        let pair = ring_pair(eal, "spread-ports", 2, 64).unwrap();
        let devs = eal
            .start_ports(
                &[DeviceSpec::new(&pair.a).rings(64, 64)],
                &two_workers(Spread::Ports),
            )
            .unwrap();
        assert_eq!(
            devs[0].spread(),
            &RxSpread::Single {
                why: "spread = ports".into()
            }
        );
        drop(devs);

        // flows: a device that refuses the rules is an error, which says so.
        let pair = ring_pair(eal, "spread-flows", 2, 64).unwrap();
        match eal.start_ports(
            &[DeviceSpec::new(&pair.a).rings(64, 64)],
            &two_workers(Spread::Flows),
        ) {
            Err(DpdkError::Config(e)) => {
                assert!(e.contains("spread = flows") && e.contains("refuses"), "{e}")
            }
            r => panic!("flows on a ring PMD: {r:?}"),
        }

        // A device with fewer transmit queues than workers is refused.
        let pair = ring_pair(eal, "spread-one", 1, 64).unwrap();
        match eal.start_ports(
            &[DeviceSpec::new(&pair.a).rings(64, 64)],
            &two_workers(Spread::Auto),
        ) {
            Err(DpdkError::Config(e)) => {
                assert!(e.contains("2 transmit queues"), "{e}")
            }
            r => panic!("two workers on one transmit queue: {r:?}"),
        }

        // One worker: one queue pair, nothing to spread.
        let pair = ring_pair(eal, "spread-single", 1, 64).unwrap();
        let devs = eal
            .start_ports(
                &[DeviceSpec::new(&pair.a).rings(64, 64)],
                &StartOptions {
                    cache: 32,
                    extra_mbufs: 256,
                    ..StartOptions::default()
                },
            )
            .unwrap();
        assert_eq!(
            devs[0].spread(),
            &RxSpread::Single {
                why: "one worker".into()
            }
        );
    }
    /// Writes a classic pcap (little-endian, µs, Ethernet) of `frames`.
    fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
        let mut d = Vec::new();
        d.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        d.extend_from_slice(&2u16.to_le_bytes());
        d.extend_from_slice(&4u16.to_le_bytes());
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(&65535u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        for (i, f) in frames.iter().enumerate() {
            d.extend_from_slice(&(i as u32).to_le_bytes());
            d.extend_from_slice(&0u32.to_le_bytes());
            d.extend_from_slice(&(f.len() as u32).to_le_bytes());
            d.extend_from_slice(&(f.len() as u32).to_le_bytes());
            d.extend_from_slice(f);
        }
        std::fs::write(path, d).unwrap();
    }

    /// The link's counters of a port are its device's: over a pcap vdev,
    /// the bytes of the frames received and transmitted, and the frames the
    /// driver read but could not store for want of mbufs (`rx_nombuf`): the
    /// packets are held here until the pool runs dry, and then every frame
    /// of the file is received or counted so, exactly.
    #[test]
    fn the_link_counts_bytes_and_frames_without_buffers() {
        let Some(eal) = eal("ports::dpdk_port::the_link_counts_bytes_and_frames_without_buffers")
        else {
            return;
        };
        ports::dpdk::register_thread();
        let dir = std::env::temp_dir();
        let rx = dir.join(format!("mwrouter-link-rx-{}.pcap", std::process::id()));
        let tx = dir.join(format!("mwrouter-link-tx-{}.pcap", std::process::id()));
        const N: usize = 600;
        const LEN: usize = 100;
        let frames: Vec<Vec<u8>> = (0..N)
            .map(|i| frame(ROUTER_MAC, HOST_MAC, ETHERTYPE_MW, &payload(i, LEN)))
            .collect();
        write_pcap(&rx, &frames);
        let dev = eal
            .create_vdev(
                "net_pcap_link0",
                &format!("rx_pcap={},tx_pcap={}", rx.display(), tx.display()),
            )
            .unwrap();
        let devs = eal
            .start_ports(
                &[DeviceSpec::new(&dev).mac(ROUTER_MAC).rings(64, 64)],
                &StartOptions {
                    queues: 1,
                    cache: 0,
                    extra_mbufs: 0,
                    ..StartOptions::default()
                },
            )
            .expect("start the pcap port");
        let mut port = devs[0].port(0).unwrap();
        assert!(port.link_reporter());
        let pool = port.pool().size() as usize;
        assert!(pool < N, "a pool of {pool} runs dry");

        // Hold every packet: once the pool is empty each read loses a
        // frame of the file to rx_nombuf, until the file ends.
        let mut held: Vec<Mbuf> = Vec::new();
        let mut link = port.link_stats();
        for _ in 0..4 * N {
            let mut b = Burst::new();
            port.rx_burst(&mut b);
            held.extend(b.drain(..));
            link = port.link_stats();
            if held.len() as u64 + link.rx_no_buffer >= N as u64 {
                break;
            }
        }
        assert!(link.rx_no_buffer > 0, "the pool ran dry");
        assert_eq!(held.len() as u64 + link.rx_no_buffer, N as u64);
        assert_eq!(link.rx_bytes, held.len() as u64 * (ETH_HLEN + LEN) as u64);
        assert_eq!(link.rx_bytes, port.stats().unwrap().ibytes);
        assert_eq!(link.tx_bytes, 0);

        // Transmit ten short packets: padded to 60 bytes on the wire.
        held.truncate(10);
        let mut out: Burst<Mbuf> = Burst::new();
        for mut m in held.drain(..) {
            m.trim(20);
            assert!(port.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
            out.push(m);
        }
        assert_eq!(port.tx_burst(&mut out), 10);
        let link = port.link_stats();
        assert_eq!(link.tx_bytes, 10 * 60);
        assert_eq!(
            (link.rx_missed, link.rx_link_errors, link.tx_link_errors),
            (0, 0, 0)
        );
        drop((port, devs));
        let _ = std::fs::remove_file(&rx);
        let _ = std::fs::remove_file(&tx);
    }

    /// With several workers on one device only the port of transmit queue
    /// 0 reports the device's counters, so that their sum counts them
    /// once: what worker 1 sends on its queue of a pcap vdev (two queues)
    /// is in worker 0's transmitted bytes.
    #[test]
    fn one_port_of_a_device_reports_its_counters() {
        let Some(eal) = eal("ports::dpdk_port::one_port_of_a_device_reports_its_counters") else {
            return;
        };
        ports::dpdk::register_thread();
        let dir = std::env::temp_dir();
        let path = |n: &str| dir.join(format!("mwrouter-linkq-{n}-{}.pcap", std::process::id()));
        let files = [path("rx0"), path("rx1"), path("tx0"), path("tx1")];
        write_pcap(&files[0], &[]);
        write_pcap(&files[1], &[]);
        let dev = eal
            .create_vdev(
                "net_pcap_linkq0",
                &format!(
                    "rx_pcap={},rx_pcap={},tx_pcap={},tx_pcap={}",
                    files[0].display(),
                    files[1].display(),
                    files[2].display(),
                    files[3].display()
                ),
            )
            .unwrap();
        let devs = eal
            .start_ports(
                &[DeviceSpec::new(&dev).mac(ROUTER_MAC).rings(64, 64)],
                &two_workers(Spread::Auto),
            )
            .unwrap();
        let mut w0 = devs[0].port_with(0..2, 0).unwrap();
        let mut w1 = devs[0].port_with(0..0, 1).unwrap();
        assert!(w0.link_reporter() && !w1.link_reporter());
        let mut b = Burst::new();
        for i in 0..5 {
            let mut m = devs[0].pool().mbuf_from(&payload(i, 100)).unwrap();
            assert!(w1.encap(&mut m, &NativeAddr::mac(HOST_MAC)));
            b.push(m);
        }
        assert_eq!(w1.tx_burst(&mut b), 5);
        let l0 = w0.link_stats();
        assert_eq!(l0.tx_bytes, 5 * (ETH_HLEN + 100) as u64);
        assert_eq!(l0, w0.stats().unwrap().link());
        assert_eq!(w1.link_stats(), rrp::LinkStats::default());
        drop((w0, w1, devs));
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
    }
}

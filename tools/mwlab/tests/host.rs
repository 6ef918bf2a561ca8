//! The lab host (mwlab::host) on loopback, with test UDP sockets standing in
//! for the HRs of its SAN: no router needed.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mwgen::probe::{self, PROBE_PT, Received};
use mwlab::host::{Client, HostLink, HostSpec, run};
use ports::af_packet::{AfPacketConfig, AfPacketPort};
use ports::{Burst, PacketBuf, Port};
use rrp::Address;
use rrp::NativeAddr;
use rrp::wire::{Message, NodeInfo, PacketRepr, RouterHop, SourceRoute};
use serde_json::{Value, json};

const H0: u16 = 0x0100;
const H1: u16 = 0x0101;
const HR1: u16 = 0x0111;
const HR2: u16 = 0x0112;
const DST: u16 = 0x0230;

/// A UDP socket on loopback: an HR of the SAN, played by the test.
fn udp() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    s
}

/// A free loopback endpoint for a host to bind.
fn free_endpoint() -> SocketAddr {
    let port = ports::udp::free_loopback_ports(1).expect("a free port")[0];
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// HR natives of UDP endpoints.
fn natives(hrs: Vec<(u16, SocketAddr)>) -> Vec<(u16, NativeAddr)> {
    hrs.into_iter()
        .map(|(a, e)| (a, NativeAddr::udp(e)))
        .collect()
}

/// A running host: its thread, stop flag, control socket and temp dir.
struct Running {
    spec: HostSpec,
    /// Its UDP endpoint (UDP hosts).
    bind: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), String>>>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn start(name: &str, address: u16, level: &str, hrs: Vec<(u16, SocketAddr)>) -> Running {
        Running::start_with(name, address, level, hrs, None)
    }

    fn start_with(
        name: &str,
        address: u16,
        level: &str,
        hrs: Vec<(u16, SocketAddr)>,
        default_hr: Option<u16>,
    ) -> Running {
        let bind = free_endpoint();
        Running::start_on(
            name,
            address,
            level,
            HostLink::Udp { bind },
            natives(hrs),
            default_hr,
        )
    }

    fn start_on(
        name: &str,
        address: u16,
        level: &str,
        link: HostLink,
        hrs: Vec<(u16, NativeAddr)>,
        default_hr: Option<u16>,
    ) -> Running {
        let dir = tempfile::tempdir().expect("temp dir");
        let spec = HostSpec {
            name: name.into(),
            address,
            level: level.into(),
            link,
            hrs,
            default_hr,
            control: dir.path().join(format!("{name}.sock")),
            management: None,
            members: Vec::new(),
            auth_key: None,
        };
        let bind = spec
            .native()
            .and_then(|n| n.as_udp())
            .unwrap_or_else(|| "0.0.0.0:0".parse().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (spec, stop) = (spec.clone(), stop.clone());
            std::thread::spawn(move || run(&spec, &stop))
        };
        Running {
            spec,
            bind,
            stop,
            thread: Some(thread),
            _dir: dir,
        }
    }

    fn client(&self) -> Client {
        Client::connect(&self.spec.control, Duration::from_secs(5)).expect("connect")
    }

    fn ask(&self, req: Value) -> Value {
        self.client().request(&req).expect("answer")
    }

    fn stats(&self) -> Value {
        let s = self.ask(json!({"cmd": "stats"}));
        assert_eq!(s["ok"], true, "{s}");
        s
    }

    /// Waits until `f(stats)` holds (a host counts asynchronously).
    fn wait_stats(&self, what: &str, f: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let s = self.stats();
            if f(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "{what}: {s:#}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn join(mut self) -> Result<(), String> {
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("no panic")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn packet(m: &Message, dst: u16, src: u16) -> Vec<u8> {
    m.to_packet(Address(dst), Address(src))
        .and_then(|p| p.to_bytes())
        .expect("small message")
}

/// Receives `n` datagrams on `s` (panics on timeout).
fn recv_n(s: &UdpSocket, n: usize) -> Vec<Vec<u8>> {
    let mut buf = [0u8; 2048];
    (0..n)
        .map(|i| {
            let (len, _) = s
                .recv_from(&mut buf)
                .unwrap_or_else(|e| panic!("datagram {i} of {n}: {e}"));
            buf[..len].to_vec()
        })
        .collect()
}

/// Whether anything arrives on `s` within `ms`.
fn nothing_within(s: &UdpSocket, ms: u64) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(ms)))
        .expect("timeout");
    let mut buf = [0u8; 2048];
    let r = s.recv_from(&mut buf).is_err();
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    r
}

fn sent(s: &Value, dst: &str) -> u64 {
    s["sent"][dst].as_u64().unwrap_or(0)
}

#[test]
fn answers_rrp7_with_its_address_and_name() {
    let hr = udp();
    let h = Running::start("H0", H0, "C", vec![(HR1, hr.local_addr().unwrap())]);
    h.stats(); // up
    hr.send_to(&packet(&Message::WhoAreYou, H0, HR1), h.bind)
        .unwrap();
    let reply = recv_n(&hr, 1).remove(0);
    let (p, m) = Message::parse_packet(&reply).expect("an RRP message");
    assert_eq!(p.header.dst, Address(HR1));
    assert_eq!(p.header.src, Address(H0));
    assert_eq!(
        m,
        Message::Info(vec![NodeInfo {
            address: Address(H0),
            name: Some(b"H0".to_vec()),
            capabilities: vec![],
            logical: None,
        }])
    );
    let s = h.wait_stats("rrp7 answered", |s| s["rrp7_answered"] == 1);
    assert_eq!(s["control"]["RRP#7"], 1);
    assert_eq!(s["datagrams"], 1);

    // Level A nodes do not answer RRP (rrp::node::Level), but count it.
    let a = Running::start("HA", H1, "A", vec![(HR1, hr.local_addr().unwrap())]);
    a.stats();
    hr.send_to(&packet(&Message::WhoAreYou, H1, HR1), a.bind)
        .unwrap();
    assert!(nothing_within(&hr, 300));
    let s = a.wait_stats("rrp7 counted", |s| s["control"]["RRP#7"] == 1);
    assert_eq!(s["rrp7_answered"], 0);
}

#[test]
fn send_puts_count_probes_on_the_default_hr() {
    let hr = udp();
    let h = Running::start("H0", H0, "B", vec![(HR1, hr.local_addr().unwrap())]);
    let a = h.ask(json!({"cmd": "send", "dst": DST, "count": 50, "rate_pps": 5000}));
    assert_eq!(a["ok"], true, "{a}");
    let got = recv_n(&hr, 50);
    assert!(nothing_within(&hr, 200), "more than count probes");
    for (i, pkt) in got.iter().enumerate() {
        let p = PacketRepr::parse(pkt).expect("a packet");
        assert!(p.l2rhs.is_empty());
        assert_eq!(p.header.dst, Address(DST));
        assert_eq!(p.header.src, Address(H0));
        assert_eq!(p.header.packet_type.0, PROBE_PT);
        assert_eq!(pkt.len(), 64);
        match probe::read(pkt) {
            Received::Probe(pr) => assert_eq!(pr.seq32, i as u32),
            r => panic!("{r:?}"),
        }
    }
    let s = h.wait_stats("sent", |s| s["busy"] == 0);
    assert_eq!(sent(&s, "0x0230"), 50);
    assert_eq!(s["send_errors"], 0);

    // Sequence numbers continue across sends; "wait" answers when done;
    // "size" and string addresses are taken.
    let a = h.ask(json!({"cmd": "send", "dst": "0x0230", "count": 2, "rate_pps": 0, "size": 128, "wait": true}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["first_seq"], 50);
    for pkt in recv_n(&hr, 2) {
        assert_eq!(pkt.len(), 128);
        assert!(matches!(probe::read(&pkt), Received::Probe(p) if p.seq32 >= 50));
    }
    assert_eq!(sent(&h.stats(), "0x0230"), 52);
}

#[test]
fn two_hosts_count_exactly() {
    let b = Running::start("H1", H1, "C", vec![]);
    b.stats();
    // A's only "HR" is B itself: B receives what A sends.
    let a = Running::start("H0", H0, "C", vec![(HR1, b.bind)]);
    let r = a.ask(json!({"cmd": "send", "dst": H1, "count": 300, "rate_pps": 20000}));
    assert_eq!(r["ok"], true, "{r}");
    let s = b.wait_stats("300 unique", |s| s["received"]["0x0100"]["unique"] == 300);
    let r = &s["received"]["0x0100"];
    assert_eq!(r["received"], 300);
    assert_eq!(r["duplicated"], 0);
    assert_eq!(r["reordered"], 0);
    assert_eq!(r["lost_hint"], 0);
    assert_eq!(s["probes"], 300);
    assert_eq!(s["datagrams"], 300);
    assert_eq!(s["ei"]["0x0"], 300);
    let lat = &r["latency_ns"];
    assert!(lat["min"].as_u64().unwrap() <= lat["p50"].as_u64().unwrap());
    assert!(
        lat["p99"].as_u64().unwrap()
            <= lat["max"].as_u64().unwrap() + lat["max"].as_u64().unwrap() / 100
    );
    assert_eq!(
        sent(&a.wait_stats("done", |s| s["busy"] == 0), "0x0101"),
        300
    );

    // reset clears the counters; the next probes continue the stream.
    assert_eq!(b.ask(json!({"cmd": "reset"}))["ok"], true);
    assert_eq!(b.stats()["datagrams"], 0);
    a.ask(json!({"cmd": "send", "dst": H1, "count": 10, "rate_pps": 0, "wait": true}));
    let s = b.wait_stats("10 more", |s| s["received"]["0x0100"]["unique"] == 10);
    assert_eq!(s["received"]["0x0100"]["duplicated"], 0);
    assert_eq!(s["received"]["0x0100"]["lost_hint"], 0);
}

/// The receive side's impairment (`impair` with loss, duplication and
/// reordering: the in-memory backend's seeded layer) against what the
/// host's receiver counts: per probe exact, also with other packets
/// interleaved, and the layer's own counts the same as a reference
/// `Impairer` with the same seed given as many packets.
#[test]
fn impairment_counts_are_exact() {
    use ports::clock::TestClock;
    use ports::impair::{ImpairConfig, Impairer};
    const N: u64 = 4000;
    const OTHER: u64 = 2000;
    const SEED: u64 = 0x5eed;
    const LOSS: f64 = 0.2;
    const DUP: f64 = 0.05;
    const REORDER: f64 = 0.2;
    let b = Running::start("H1", H1, "C", vec![]);
    let a = Running::start("H0", H0, "C", vec![(HR1, b.bind)]);
    let r = b.ask(
        json!({"cmd": "impair", "rx_loss": LOSS, "duplicate": DUP, "reorder": REORDER, "seed": SEED}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["seed"], SEED);
    // Packets that are not probes go through the layer too, among the
    // probes (RRP#7s, which the host answers), and are not counted as
    // probes: a probe held back behind one of them, or one of them lost
    // while a probe is held, is not a probe reordered.
    let bind = b.bind;
    let others = std::thread::spawn(move || {
        let hr = udp();
        for _ in 0..OTHER {
            hr.send_to(&packet(&Message::WhoAreYou, H1, HR1), bind)
                .unwrap();
            std::thread::sleep(Duration::from_micros(100));
        }
    });
    let r = a.ask(json!({"cmd": "send", "dst": H1, "count": N, "rate_pps": 20000}));
    assert_eq!(r["ok"], true, "{r}");
    others.join().unwrap();
    let s = b.wait_stats("every datagram through, nothing held", |s| {
        s["impair"]["seen"] == N + OTHER && s["impair"]["held"] == 0
    });
    let (imp, probes) = (&s["impair"], &s["impair"]["probes"]);
    let n = |v: &Value| v.as_u64().unwrap();
    assert_eq!(n(&probes["seen"]), N);
    for k in ["lost", "duplicated", "reordered"] {
        assert!(n(&probes[k]) > N / 40, "{k}: {imp}");
    }
    // The receiver, per probe: exactly what the layer did to them.
    let got = &s["received"]["0x0100"];
    assert_eq!(n(&got["unique"]), N - n(&probes["lost"]), "{s:#}");
    assert_eq!(got["duplicated"], probes["duplicated"], "{s:#}");
    assert_eq!(got["reordered"], probes["reordered"], "{s:#}");
    assert_eq!(
        n(&got["received"]),
        N - n(&probes["lost"]) + n(&probes["duplicated"])
    );
    // Every datagram: lost ones are not datagrams, copies are.
    assert_eq!(s["rx_lost"], imp["lost"]);
    assert_eq!(s["datagrams"], imp["passed"]);
    assert_eq!(
        n(&imp["passed"]),
        N + OTHER - n(&imp["lost"]) + n(&imp["duplicated"])
    );
    assert_eq!(s["probes"], got["received"]);
    // The same seed decides the same: loss and duplication by position.
    let reference = Impairer::new(
        ImpairConfig {
            loss: LOSS,
            duplicate: DUP,
            reorder: REORDER,
            ..ImpairConfig::seeded(SEED)
        },
        Arc::new(TestClock::new()),
        64,
    );
    for _ in 0..N + OTHER {
        reference
            .push(ports::HeapBuf::from_bytes(&[0u8; 64]))
            .unwrap();
        while reference.pop().is_some() {}
    }
    let want = reference.stats();
    assert_eq!(n(&imp["lost"]), want.lost);
    assert_eq!(n(&imp["duplicated"]), want.duplicated);
    // A datagram held with no successor within the poll interval is
    // delivered without being counted as reordered: at most as many.
    assert!(n(&imp["reordered"]) <= want.reordered, "{imp} {want:?}");

    // All three 0 ends it: nothing is held, nothing more is impaired.
    let r = b.ask(json!({"cmd": "impair"}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["seed"], Value::Null);
    let before = n(&b.stats()["datagrams"]);
    a.ask(json!({"cmd": "send", "dst": H1, "count": 200, "rate_pps": 20000, "wait": true}));
    let s = b.wait_stats("200 more", |s| n(&s["datagrams"]) == before + 200);
    assert_eq!(s["impair"]["seen"], N + OTHER);
    assert_eq!(s["impair"]["rx_loss"], 0.0);
    let r = b.ask(json!({"cmd": "impair", "duplicate": 1.5}));
    assert_eq!(r["ok"], false, "{r}");
}

#[test]
fn redirects_are_followed() {
    let (hr1, hr2) = (udp(), udp());
    let h = Running::start_with(
        "H0",
        H0,
        "B",
        vec![
            (HR1, hr1.local_addr().unwrap()),
            (HR2, hr2.local_addr().unwrap()),
        ],
        Some(HR1),
    );
    h.ask(json!({"cmd": "send", "dst": DST, "count": 3, "rate_pps": 0, "wait": true}));
    recv_n(&hr1, 3);
    assert!(nothing_within(&hr2, 100));
    let red = Message::Redirect {
        dst: Address(DST),
        via: Address(HR2),
    };
    hr1.send_to(&packet(&red, H0, HR1), h.bind).unwrap();
    let s = h.wait_stats("redirect", |s| s["redirects"]["0x0230"] == "0x0112");
    assert_eq!(s["control"]["RRP#3"], 1);
    h.ask(json!({"cmd": "send", "dst": DST, "count": 3, "rate_pps": 0, "wait": true}));
    recv_n(&hr2, 3);
    assert!(nothing_within(&hr1, 100));
    // Other destinations still go to the default HR.
    h.ask(json!({"cmd": "send", "dst": 0x0231, "count": 1, "rate_pps": 0, "wait": true}));
    recv_n(&hr1, 1);
}

/// Plays the HR: answers the next request the host sends with `answer`.
fn answer_next(hr: &UdpSocket, answer: impl Fn(Message) -> Option<Message>) -> Message {
    let mut buf = [0u8; 2048];
    let (n, from) = hr.recv_from(&mut buf).expect("a request");
    let (p, m) = Message::parse_packet(&buf[..n]).expect("an RRP request");
    if let Some(a) = answer(m.clone()) {
        hr.send_to(&packet(&a, p.header.src.0, p.header.dst.0), from)
            .unwrap();
    }
    m
}

#[test]
fn which_hr_asks_with_rrp6() {
    let (hr1, hr2) = (udp(), udp());
    let h = Running::start(
        "H0",
        H0,
        "B",
        vec![
            (HR1, hr1.local_addr().unwrap()),
            (HR2, hr2.local_addr().unwrap()),
        ],
    );
    let mut c = h.client();
    let t = std::thread::spawn(move || {
        c.request(&json!({"cmd": "which_hr", "dst": DST, "timeout_ms": 2000}))
    });
    let m = answer_next(&hr1, |m| match m {
        Message::WhichHr { dst } => Some(Message::Redirect {
            dst,
            via: Address(HR2),
        }),
        _ => None,
    });
    assert_eq!(m, Message::WhichHr { dst: Address(DST) });
    let a = t.join().unwrap().unwrap();
    assert_eq!(a, json!({"ok": true, "via": "0x0112"}));
    // Nothing back: via null.
    let a = h.ask(json!({"cmd": "which_hr", "dst": 0x0231, "timeout_ms": 100}));
    assert_eq!(a, json!({"ok": true, "via": null}));
    recv_n(&hr1, 1);
    // ERR UNK back: unknown destination.
    let mut c = h.client();
    let t = std::thread::spawn(move || {
        c.request(&json!({"cmd": "which_hr", "dst": 0x0232, "timeout_ms": 2000}))
    });
    answer_next(&hr1, |_| {
        Some(Message::Unknown {
            addr: Address(0x0232),
        })
    });
    let a = t.join().unwrap().unwrap();
    assert_eq!(a["ok"], false);
    assert_eq!(a["error"], "unknown destination");
    // Level A nodes do not ask.
    let a = Running::start("HA", H1, "A", vec![(HR1, hr1.local_addr().unwrap())]);
    assert_eq!(a.ask(json!({"cmd": "which_hr", "dst": DST}))["ok"], false);
}

fn udp_hop(egress: u16, at: SocketAddr) -> RouterHop {
    RouterHop::new(Address(egress), NativeAddr::udp(at))
}

#[test]
fn routes_are_learned_and_followed_by_send_l2() {
    let (hr1, hr2) = (udp(), udp());
    let far: SocketAddr = "127.0.0.1:4001".parse().unwrap();
    let h = Running::start(
        "H0",
        H0,
        "C",
        vec![
            (HR1, hr1.local_addr().unwrap()),
            (HR2, hr2.local_addr().unwrap()),
        ],
    );
    let routes = vec![
        // Through the answering HR: HR 0x011a leads to the destination.
        SourceRoute {
            q: 2,
            route: vec![udp_hop(0x011a, far).to_l2rh()],
            mtu: None,
        },
        // NativeAddr-only first hop: straight to hr2 on this SAN, then one router.
        SourceRoute {
            q: 3,
            route: vec![
                RouterHop::new(Address(0), NativeAddr::udp(hr2.local_addr().unwrap())).to_l2rh(),
                udp_hop(0x011b, far).to_l2rh(),
            ],
            mtu: None,
        },
    ];
    let mut c = h.client();
    let t = std::thread::spawn(move || {
        c.request(&json!({"cmd": "route", "dst": DST, "timeout_ms": 2000}))
    });
    let rs = routes.clone();
    let m = answer_next(&hr1, move |m| match m {
        Message::RouteRequest { dst } => Some(Message::Routes {
            dst,
            routes: rs.clone(),
        }),
        _ => None,
    });
    assert_eq!(m, Message::RouteRequest { dst: Address(DST) });
    let a = t.join().unwrap().unwrap();
    assert_eq!(a["ok"], true, "{a}");
    let hr2s = hr2.local_addr().unwrap().to_string();
    assert_eq!(
        a["routes"],
        json!([
            ["0x011a@127.0.0.1:4001"],
            [format!("@{hr2s}"), "0x011b@127.0.0.1:4001"]
        ])
    );
    assert_eq!(a["from"], "0x0111");
    assert_eq!(h.stats()["routes"]["0x0230"], a["routes"]);

    // Route 0: to the answering HR, the whole chain in front.
    let r = h.ask(json!({"cmd": "send_l2", "dst": DST, "route_index": 0, "count": 4, "rate_pps": 0, "wait": true}));
    assert_eq!(r["ok"], true, "{r}");
    for pkt in recv_n(&hr1, 4) {
        let p = PacketRepr::parse(&pkt).unwrap();
        assert_eq!(p.l2rhs, routes[0].route);
        assert_eq!(p.header.dst, Address(DST));
        assert!(matches!(probe::read(&pkt), Received::Probe(_)));
    }
    // Route 1: the native-only hop is the datagram's destination, not an L2RH.
    let r = h.ask(json!({"cmd": "send_l2", "dst": DST, "route_index": 1, "count": 2, "rate_pps": 0, "wait": true}));
    assert_eq!(r["ok"], true, "{r}");
    for pkt in recv_n(&hr2, 2) {
        let p = PacketRepr::parse(&pkt).unwrap();
        assert_eq!(p.l2rhs, routes[1].route[1..]);
    }
    // An explicit route, via another HR.
    let r = h.ask(json!({"cmd": "send_l2", "dst": DST, "route": ["0x011c@127.0.0.1:4002"], "via": HR2, "count": 1, "rate_pps": 0, "wait": true}));
    assert_eq!(r["ok"], true, "{r}");
    let pkt = recv_n(&hr2, 1).remove(0);
    assert_eq!(
        PacketRepr::parse(&pkt).unwrap().l2rhs,
        vec![udp_hop(0x011c, "127.0.0.1:4002".parse().unwrap()).to_l2rh()]
    );
    assert_eq!(sent(&h.stats(), "0x0230"), 7);
    // Out of range, and no routes known.
    assert_eq!(
        h.ask(json!({"cmd": "send_l2", "dst": DST, "route_index": 5}))["ok"],
        false
    );
    assert_eq!(
        h.ask(json!({"cmd": "send_l2", "dst": 0x0231, "route_index": 0}))["ok"],
        false
    );

    // ERR UNK answers RRP#1: unknown destination; no answer: "no answer".
    let mut c = h.client();
    let t = std::thread::spawn(move || {
        c.request(&json!({"cmd": "route", "dst": 0x0233, "timeout_ms": 2000}))
    });
    answer_next(&hr1, |_| {
        Some(Message::Unknown {
            addr: Address(0x0233),
        })
    });
    assert_eq!(t.join().unwrap().unwrap()["error"], "unknown destination");
    let a = h.ask(json!({"cmd": "route", "dst": 0x0234, "timeout_ms": 100}));
    assert_eq!(a, json!({"ok": false, "error": "no answer"}));
    // Level B nodes do not ask for routes.
    let b = Running::start("HB", H1, "B", vec![(HR1, hr1.local_addr().unwrap())]);
    assert_eq!(b.ask(json!({"cmd": "route", "dst": DST}))["ok"], false);
}

#[test]
fn errors_are_counted_by_kind() {
    let hr = udp();
    let h = Running::start("H0", H0, "C", vec![(HR1, hr.local_addr().unwrap())]);
    h.stats();
    let msgs = [
        Message::Unknown { addr: Address(DST) },
        Message::HrDown { hr: Address(HR2) },
        Message::LinkDown {
            a: Address(HR1),
            b: Address(HR2),
        },
        Message::General {
            enclosed: vec![0; 16],
        },
    ];
    for m in &msgs {
        hr.send_to(&packet(m, H0, HR1), h.bind).unwrap();
    }
    // Not a MessageWay packet, and a well-formed non-probe data packet.
    hr.send_to(&[1, 2, 3], h.bind).unwrap();
    let data = PacketRepr {
        l2rhs: vec![],
        header: rrp::wire::HeaderRepr {
            dst: Address(H0),
            packet_type: rrp::PacketType(0x0100),
            src: Address(HR1),
            ..Default::default()
        },
        data: vec![0; 8],
        ei: 0,
    };
    hr.send_to(&data.to_bytes().unwrap(), h.bind).unwrap();
    let s = h.wait_stats("all counted", |s| s["datagrams"] == 6);
    assert_eq!(
        s["errors_received"],
        json!({"UNK": 1, "HRDOWN": 1, "LINKDOWN": 1, "GENERAL": 1})
    );
    assert_eq!(s["unknown"], json!(["0x0230"]));
    assert_eq!(s["malformed"], 1);
    assert_eq!(s["other"], 1);
    assert_eq!(s["control"]["ERR UNK"], 1);
}

#[test]
fn bad_requests_are_refused_and_the_host_keeps_running() {
    let hr = udp();
    let h = Running::start("H0", H0, "C", vec![(HR1, hr.local_addr().unwrap())]);
    let mut c = h.client();
    for req in [
        json!({"cmd": "fly"}),
        json!({"nocmd": 1}),
        json!({"cmd": "send"}),
        json!({"cmd": "send", "dst": 0x0010}),
        json!({"cmd": "send", "dst": 70000}),
        json!({"cmd": "send", "dst": "zz"}),
        json!({"cmd": "send", "dst": DST, "count": -1}),
        json!({"cmd": "send", "dst": DST, "size": 8}),
        json!({"cmd": "send_l2", "dst": DST}),
        json!({"cmd": "send_l2", "dst": DST, "route": ["nonsense"]}),
        json!({"cmd": "route"}),
        json!([1, 2]),
    ] {
        let a = c.request(&req).expect("an answer");
        assert_eq!(a["ok"], false, "{req} -> {a}");
        assert!(a["error"].is_string(), "{a}");
    }
    // Not JSON at all, on a raw connection.
    use std::io::{BufRead, BufReader, Write};
    let mut raw = std::os::unix::net::UnixStream::connect(&h.spec.control).unwrap();
    raw.write_all(b"this is not json\n\n{\"cmd\":\"stats\"}\n")
        .unwrap();
    let mut r = BufReader::new(raw);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let a: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(a["ok"], false);
    line.clear();
    r.read_line(&mut line).unwrap();
    let a: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(a["ok"], true);
    assert_eq!(h.stats()["name"], "H0");
}

#[test]
fn quit_stops_run_and_removes_the_socket() {
    let h = Running::start("H0", H0, "C", vec![]);
    let a = h.ask(json!({"cmd": "quit"}));
    assert_eq!(a["ok"], true);
    let path: PathBuf = h.spec.control.clone();
    let t0 = Instant::now();
    h.join().expect("clean exit");
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(!path.exists());

    // The stop flag too, with a client still connected.
    let h = Running::start("H1", H1, "C", vec![]);
    let _idle = h.client();
    h.stop.store(true, Ordering::Relaxed);
    let path = h.spec.control.clone();
    h.join().expect("clean exit");
    assert!(!path.exists());
}

#[test]
fn a_bad_spec_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = HostSpec {
        name: "HX".into(),
        address: H0,
        level: "D".into(),
        link: HostLink::Udp {
            bind: free_endpoint(),
        },
        hrs: vec![],
        default_hr: None,
        control: dir.path().join("x.sock"),
        management: None,
        members: Vec::new(),
        auth_key: None,
    };
    let stop = AtomicBool::new(false);
    assert!(run(&spec, &stop).is_err());
    let spec = HostSpec {
        level: "C".into(),
        default_hr: Some(HR1),
        ..spec
    };
    assert!(run(&spec, &stop).is_err());
    // An HR native of the wrong kind: an IPv6 endpoint is no MAC (six bytes
    // could be either: a MAC, or an IPv4 endpoint).
    let v6 = NativeAddr::udp("[::1]:4001".parse().unwrap());
    let mac = NativeAddr::mac([2, 0x4d, 0x57, 0, 1, 0x11]);
    let eth = HostSpec {
        link: HostLink::AfPacket {
            interface: "eth0".into(),
        },
        hrs: vec![(HR1, v6)],
        default_hr: None,
        ..spec.clone()
    };
    assert!(eth.validate().is_err());
    let eth = HostSpec {
        hrs: vec![(HR1, mac)],
        ..eth
    };
    assert!(eth.validate().is_ok());
    assert_eq!(eth.native(), None);
    let eth_no_if = HostSpec {
        link: HostLink::AfPacket {
            interface: " ".into(),
        },
        ..eth.clone()
    };
    assert!(eth_no_if.validate().is_err());

    // The spec file mwlab writes (JSON) reads back; natives as text.
    let udp_spec = HostSpec {
        hrs: vec![(HR1, NativeAddr::udp("127.0.0.1:4001".parse().unwrap()))],
        ..spec
    };
    let f = dir.path().join("h.json");
    let text = serde_json::to_string(&udp_spec).unwrap();
    assert!(text.contains(r#""hrs":[[273,"127.0.0.1:4001"]]"#), "{text}");
    assert!(
        text.contains(r#""link":{"udp":{"bind":"127.0.0.1:"#),
        "{text}"
    );
    std::fs::write(&f, text).unwrap();
    let back = mwlab::host::read_spec(&f).unwrap();
    assert_eq!(back.default_hr, Some(HR1));
    assert_eq!(back.hrs, udp_spec.hrs);
    assert_eq!(back.link, udp_spec.link);
    let text = serde_json::to_string(&eth).unwrap();
    assert!(
        text.contains(r#""hrs":[[273,"02:4d:57:00:01:11"]]"#),
        "{text}"
    );
    assert!(
        text.contains(r#""link":{"af_packet":{"interface":"eth0"}}"#),
        "{text}"
    );
    std::fs::write(&f, text).unwrap();
    let back = mwlab::host::read_spec(&f).unwrap();
    assert_eq!(back.hrs, vec![(HR1, mac)]);
    assert_eq!(back.link, eth.link);
    // TOML too.
    let f = dir.path().join("h.toml");
    std::fs::write(
        &f,
        "name = \"H9\"\naddress = 256\nlevel = \"C\"\nhrs = [[273, \"02:4d:57:00:01:11\"]]\n\
         control = \"/tmp/h9.sock\"\n[link.af_packet]\ninterface = \"eth0\"\n",
    )
    .unwrap();
    let back = mwlab::host::read_spec(&f).unwrap();
    assert_eq!(back.hrs, vec![(HR1, mac)]);
    assert_eq!(back.link, eth.link);
    // A native that is neither.
    std::fs::write(
        &f,
        "name = \"H9\"\naddress = 256\nlevel = \"C\"\nhrs = [[273, \"nowhere\"]]\n\
         control = \"/tmp/h9.sock\"\n[link.udp]\nbind = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    assert!(mwlab::host::read_spec(&f).is_err());
}

// ----- AF_PACKET ---------------------------------------------------------------------

/// Sends `pkt` from the test's port to MAC `to`.
fn eth_send(port: &mut AfPacketPort, pkt: &[u8], to: NativeAddr) {
    let mut b = port.alloc().expect("a buffer");
    b.append(pkt.len()).expect("room").copy_from_slice(pkt);
    assert!(port.encap(&mut b, &to));
    let mut burst = Burst::new();
    burst.push(b);
    assert_eq!(port.tx_burst(&mut burst), 1);
}

/// Receives `n` MessageWay packets (padding cut at the end their DL gives)
/// with their source MACs on the test's port (panics after 3 s).
fn eth_recv(port: &mut AfPacketPort, n: usize) -> Vec<(Vec<u8>, NativeAddr)> {
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut out = Vec::new();
    while out.len() < n {
        assert!(
            Instant::now() < deadline,
            "{} of {n} frames in 3 s",
            out.len()
        );
        let mut burst = Burst::new();
        port.rx_burst(&mut burst);
        if burst.is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
        for b in burst.drain(..) {
            let d = b.data();
            let len = rrp::wire::locate(d, 16).map_or(d.len(), |l| l.total_len());
            out.push((d[..len].to_vec(), b.native_src()));
            port.recycle(b);
        }
    }
    out
}

/// Whether no MessageWay frame arrives on the test's port within `ms`.
fn eth_nothing_within(port: &mut AfPacketPort, ms: u64) -> bool {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline {
        let mut burst = Burst::new();
        port.rx_burst(&mut burst);
        if !burst.is_empty() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

#[test]
fn af_packet_host_answers_rrp7_and_sends_probes() {
    if !testkit::is_root() {
        testkit::skip("mwlab::host::af_packet", "needs root");
        return;
    }
    let veth = testkit::VethPair::new("mh").expect("a veth pair");
    // End b: the HR of the SAN, played by the test.
    let mut hr = AfPacketPort::open(AfPacketConfig::new(&veth.b)).expect("AF_PACKET on b");
    let hr_mac = NativeAddr::mac(hr.mac());
    let h = Running::start_on(
        "H0",
        H0,
        "C",
        HostLink::AfPacket {
            interface: veth.a.clone(),
        },
        vec![(HR1, hr_mac)],
        None,
    );
    assert_eq!(h.spec.native(), None);
    let s = h.stats();
    assert_eq!(s["link"], "af_packet");
    assert_eq!(s["bind"], veth.a.as_str());
    let host_mac: NativeAddr = s["native"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        mwlab::host::interface_mac(&veth.a).map(NativeAddr::mac),
        Some(host_mac)
    );
    assert_eq!(s["neighbours"]["0x0111"], hr_mac.to_string());

    // RRP#7 from b: an RRP#5 back to b's MAC (padded to 60 bytes on the
    // wire; the packet ends where its DL says).
    eth_send(&mut hr, &packet(&Message::WhoAreYou, H0, HR1), host_mac);
    let (reply, from) = eth_recv(&mut hr, 1).remove(0);
    assert_eq!(from, host_mac);
    let (p, m) = Message::parse_packet(&reply).expect("an RRP message");
    assert_eq!(p.header.dst, Address(HR1));
    assert_eq!(p.header.src, Address(H0));
    assert_eq!(
        m,
        Message::Info(vec![NodeInfo {
            address: Address(H0),
            name: Some(b"H0".to_vec()),
            capabilities: vec![],
            logical: None,
        }])
    );
    let s = h.wait_stats("rrp7 answered", |s| s["rrp7_answered"] == 1);
    assert_eq!(s["datagrams"], 1);
    assert_eq!(s["malformed"], 0);

    // send: count probes on b, to DST from H0, frames of `size` bytes.
    let a = h.ask(json!({"cmd": "send", "dst": DST, "count": 20, "rate_pps": 0, "wait": true}));
    assert_eq!(a["ok"], true, "{a}");
    let got = eth_recv(&mut hr, 20);
    assert!(eth_nothing_within(&mut hr, 200), "more than count probes");
    for (i, (pkt, from)) in got.iter().enumerate() {
        assert_eq!(*from, host_mac);
        let p = PacketRepr::parse(pkt).expect("a packet");
        assert!(p.l2rhs.is_empty());
        assert_eq!(p.header.dst, Address(DST));
        assert_eq!(p.header.src, Address(H0));
        assert_eq!(p.header.packet_type.0, PROBE_PT);
        // A 64-byte Ethernet frame: 14 bytes of header, 50 after it, of
        // which the packet its DL gives (data in 8-byte units) is 48.
        assert_eq!(pkt.len(), 48);
        match probe::read(pkt) {
            Received::Probe(pr) => assert_eq!(pr.seq32, i as u32),
            r => panic!("{r:?}"),
        }
    }
    let s = h.wait_stats("sent", |s| s["busy"] == 0);
    assert_eq!(sent(&s, "0x0230"), 20);
    assert_eq!(s["send_errors"], 0);

    // send_l2 with a native-only first hop (a MAC): the frame goes to it,
    // the rest of the route in front.
    let far = "02:4d:57:00:02:30";
    let r = h.ask(json!({"cmd": "send_l2", "dst": DST, "route": [format!("@{hr_mac}"), format!("0x011b@{far}")], "count": 2, "rate_pps": 0, "wait": true}));
    assert_eq!(r["ok"], true, "{r}");
    for (pkt, _) in eth_recv(&mut hr, 2) {
        let p = PacketRepr::parse(&pkt).unwrap();
        let hop = RouterHop::new(
            Address(0x011b),
            NativeAddr::mac(far.parse::<NativeAddr>().unwrap().as_mac().unwrap()),
        );
        assert_eq!(p.l2rhs, vec![hop.to_l2rh()]);
    }
    // A UDP endpoint is no first hop on Ethernet.
    let r = h
        .ask(json!({"cmd": "send_l2", "dst": DST, "route": ["@[::1]:4001", "0x011b"], "count": 1}));
    assert_eq!(r["ok"], false, "{r}");

    // Probes from b are counted; a short packet (padded on the wire) is cut
    // where its DL ends: a well-formed non-probe, not malformed.
    let p = mwgen::profile::Profile {
        src: Address(HR1),
        dsts: vec![Address(H0)],
        sizes: mwgen::profile::Sizes::Fixed(60),
        priority: 0,
        l2: vec![],
        partition: None,
        seed: 1,
    };
    let t = p.build(rrp::LinkKind::Ethernet, 7).unwrap().remove(0);
    for i in 0..5 {
        let mut b = t.bytes.clone();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        probe::patch(&mut b, t.hdr.unwrap_or(0), i, now);
        eth_send(&mut hr, &b, host_mac);
    }
    let data = PacketRepr {
        l2rhs: vec![],
        header: rrp::wire::HeaderRepr {
            dst: Address(H0),
            packet_type: rrp::PacketType(0x0100),
            src: Address(HR1),
            ..Default::default()
        },
        data: vec![0; 8],
        ei: 0,
    };
    let data = data.to_bytes().unwrap();
    assert!(data.len() < 60 - 14, "padded on the wire");
    eth_send(&mut hr, &data, host_mac);
    let s = h.wait_stats("probes from b", |s| s["datagrams"] == 7);
    assert_eq!(s["received"]["0x0111"]["unique"], 5, "{s:#}");
    assert_eq!(s["received"]["0x0111"]["lost_hint"], 0);
    assert_eq!(s["probes"], 5);
    assert_eq!(s["other"], 1);
    assert_eq!(s["malformed"], 0);
}

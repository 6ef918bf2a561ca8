//! The lab host (mwlab::host) on loopback, with test UDP sockets standing in
//! for the HRs of its SAN: no router needed.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mwgen::probe::{self, PROBE_PT, Received};
use mwlab::host::{Client, HostSpec, run};
use rrp::Address;
use rrp::wire::{Message, NativeAddr, NodeInfo, PacketRepr, RouterHop, SourceRoute};
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
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("ephemeral port")
}

/// A running host: its thread, stop flag, control socket and temp dir.
struct Running {
    spec: HostSpec,
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
        let dir = tempfile::tempdir().expect("temp dir");
        let spec = HostSpec {
            name: name.into(),
            address,
            level: level.into(),
            bind: free_endpoint(),
            hrs,
            default_hr,
            control: dir.path().join(format!("{name}.sock")),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (spec, stop) = (spec.clone(), stop.clone());
            std::thread::spawn(move || run(&spec, &stop))
        };
        Running {
            spec,
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
    hr.send_to(&packet(&Message::WhoAreYou, H0, HR1), h.spec.bind)
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
    hr.send_to(&packet(&Message::WhoAreYou, H1, HR1), a.spec.bind)
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
            Received::Probe(pr) => assert_eq!(pr.seq, i as u64),
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
        assert!(matches!(probe::read(&pkt), Received::Probe(p) if p.seq >= 50));
    }
    assert_eq!(sent(&h.stats(), "0x0230"), 52);
}

#[test]
fn two_hosts_count_exactly() {
    let b = Running::start("H1", H1, "C", vec![]);
    b.stats();
    // A's only "HR" is B itself: B receives what A sends.
    let a = Running::start("H0", H0, "C", vec![(HR1, b.spec.bind)]);
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
    hr1.send_to(&packet(&red, H0, HR1), h.spec.bind).unwrap();
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
        // Native-only first hop: straight to hr2 on this SAN, then one router.
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
        hr.send_to(&packet(m, H0, HR1), h.spec.bind).unwrap();
    }
    // Not a MessageWay packet, and a well-formed non-probe data packet.
    hr.send_to(&[1, 2, 3], h.spec.bind).unwrap();
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
    hr.send_to(&data.to_bytes().unwrap(), h.spec.bind).unwrap();
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
        bind: free_endpoint(),
        hrs: vec![],
        default_hr: None,
        control: dir.path().join("x.sock"),
    };
    let stop = AtomicBool::new(false);
    assert!(run(&spec, &stop).is_err());
    let spec = HostSpec {
        level: "C".into(),
        default_hr: Some(HR1),
        ..spec
    };
    assert!(run(&spec, &stop).is_err());
    // The spec file mwlab writes (JSON) reads back.
    let f = dir.path().join("h.json");
    std::fs::write(&f, serde_json::to_string(&spec).unwrap()).unwrap();
    let back = mwlab::host::read_spec(&f).unwrap();
    assert_eq!(back.default_hr, Some(HR1));
}

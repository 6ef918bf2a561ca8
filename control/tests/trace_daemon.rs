//! `mwctl trace-packets` against mwrouterd on loopback UDP
//! (docs/dataplane.md "Tracing packets"): routed, unroutable and
//! source-routed packets traced with their lookup, next hop, EI and
//! verdict, in text and JSON; the filters; the timeout; refused requests;
//! forwarding goes on.

use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, Instant};

use rrp::kind::PacketType;
use rrp::router::StaticNode;
use rrp::wire::{HeaderRepr, L2rhRepr, PacketRepr};
use rrp::{Address, NativeAddr};

mod common;

use common::{loopback, mwctl};

/// h2, the node behind HR 0x0512 (port 1), a static entry there.
const H2: u16 = 0x0502;

fn packet(dst: u16, l2rh: Option<&[u8]>) -> Vec<u8> {
    PacketRepr {
        l2rhs: l2rh
            .map(|c| vec![L2rhRepr::new(c).expect("an L2RH")])
            .unwrap_or_default(),
        header: HeaderRepr {
            dst: Address(dst),
            src: Address(0x0501),
            packet_type: PacketType(0x0100),
            ..Default::default()
        },
        data: vec![7; 24],
        ei: 0b1,
    }
    .to_bytes()
    .unwrap()
}

/// Runs mwctl with `args` while `send` sends a packet every 20 ms, until
/// mwctl ends (at most 15 s).
fn traced_while(sock: &Path, args: &[&str], send: impl Fn()) -> (i32, String, String) {
    let (s, a) = (
        sock.to_path_buf(),
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    );
    let t = std::thread::spawn(move || {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        mwctl(&s, &a)
    });
    let deadline = Instant::now() + Duration::from_secs(15);
    while !t.is_finished() && Instant::now() < deadline {
        send();
        std::thread::sleep(Duration::from_millis(20));
    }
    t.join().unwrap()
}

#[test]
fn mwctl_traces_what_mwrouterd_decides() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, p1, p2] = common::free_ports();
    let mut c = common::two_hr_box("trace", dir.path(), [r0, r1], [&[p1], &[p2]]);
    c.hrs[1].statics.push(StaticNode {
        address: Address(H2),
        native: NativeAddr::udp(loopback(p2)),
        name: Some(b"h2".to_vec()),
        capabilities: Vec::new(),
        groups: Vec::new(),
    });
    let cfg = dir.path().join("trace.toml");
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let sock = dir.path().join("mw.sock");
    let _daemon = common::start(&cfg, &sock, std::process::Stdio::null());
    common::wait_for("the admin socket", 10, || {
        mwctl(&sock, &["show", "router"]).0 == 0
    });
    let h1 = UdpSocket::bind(("127.0.0.1", p1)).unwrap();
    let h2 = UdpSocket::bind(("127.0.0.1", p2)).unwrap();
    h2.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let send = |b: &[u8]| {
        let _ = h1.send_to(b, ("127.0.0.1", r0));
    };
    let routed = packet(H2, None);
    let unroutable = packet(0x0777, None);
    // A source route: the L2RH names HR 0x0512 and h2's UDP endpoint.
    let mut hop = 0x0512u16.to_be_bytes().to_vec();
    hop.extend_from_slice(NativeAddr::udp(loopback(p2)).as_bytes());
    let source_routed = packet(0x0599, Some(&hop));
    let fib_version = {
        let (code, out, err) = mwctl(&sock, &["--json", "show", "router"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["fib_version"].as_u64().expect("a FIB version")
    };

    // Routed packets on port 0, to h2 only: forwarded out of port 1.
    let (code, out, err) = traced_while(
        &sock,
        &["trace-packets", "0", "-c", "2", "--dst", "0x0502", "--l3"],
        || {
            send(&unroutable);
            send(&routed);
        },
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "tracing 2 packets received on port 0 (HR 0x0511) to 0x0502, L3 only, for at most 10 s",
        "{out}"
    );
    assert_eq!(out.matches("\npacket ").count(), 2, "{out}");
    let want_hop = format!("  next hop: port 1 (HR 0x0512) 127.0.0.1:{p2}");
    for want in [
        "  received on port 0 (HR 0x0511): 48 bytes, 0x0501 -> 0x0502",
        want_hop.as_str(),
        "  EI: 0x1 -> 0x2",
        "  verdict: forwarded out of port 1",
    ] {
        assert_eq!(
            lines.iter().filter(|l| **l == want).count(),
            2,
            "{want:?} twice in:\n{out}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  lookup: L3 in FIB version ") && l.ends_with("(a next hop)")),
        "{out}"
    );
    assert_eq!(lines.last(), Some(&"2 of 2 packets traced"), "{out}");

    // JSON: the unroutable packet, dropped for no route.
    let (code, out, err) = traced_while(
        &sock,
        &["--json", "trace-packets", "-c", "1", "--dst", "0x0777"],
        || {
            send(&routed);
            send(&unroutable);
        },
    );
    assert_eq!(code, 0, "{out}{err}");
    let items: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 3, "{out}");
    let p = &items[1];
    assert_eq!(p["kind"], "packet");
    assert_eq!(
        (p["port"].as_u64(), p["worker"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(p["dst"], "0x0777");
    assert_eq!(p["lookup"]["kind"], "l3");
    assert!(p["lookup"]["fib_version"].as_u64().unwrap() >= fib_version);
    assert_eq!(p["lookup"]["entry"], "no_route");
    assert_eq!(
        p["verdict"],
        serde_json::json!({"kind": "dropped", "reason": "no-route"})
    );
    assert_eq!(p["ei_before"], 1);
    assert!(p.get("ei_after").is_none() && p.get("next_hop").is_none());
    assert_eq!(items[2]["recorded"], 1);
    assert_eq!(items[2]["ended"], "count");

    // L2 only: the source-routed packet, its hop's egress HR and native.
    let (code, out, err) = traced_while(&sock, &["trace-packets", "-c", "1", "--l2"], || {
        send(&routed);
        send(&source_routed);
    });
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("  lookup: L2: the L2RH names HR 0x0512\n"),
        "{out}"
    );
    assert!(out.contains(&format!("{want_hop}\n")), "{out}");
    assert!(
        out.contains("  verdict: forwarded out of port 1\n"),
        "{out}"
    );

    // Nothing matches: the timeout ends the trace, and says so.
    let start = Instant::now();
    let (code, out, err) = mwctl(
        &sock,
        &[
            "--timeout",
            "1",
            "trace-packets",
            "-c",
            "5",
            "--dst",
            "0x0666",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(start.elapsed() >= Duration::from_secs(1));
    assert!(
        out.ends_with("0 of 5 packets traced: the timeout passed (1 s)\n"),
        "{out}"
    );

    // Refused requests: typed errors, the daemon goes on.
    let too_many = (admin::proto::TRACE_MAX_COUNT + 1).to_string();
    for (args, says) in [
        (&["trace-packets", "-c", "0"][..], "bad_request"),
        (&["trace-packets", "-c", too_many.as_str()], "bad_request"),
        (
            &["trace-packets", "-c", "1", "--dst", "0x0001"],
            "bad_request",
        ),
        (&["trace-packets", "7", "-c", "1"], "not_found"),
    ] {
        let (code, out, err) = mwctl(&sock, args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }

    // Forwarding went on throughout: h2 has what was routed to it.
    let mut got = 0;
    let mut buf = [0u8; 2048];
    while let Ok((n, _)) = h2.recv_from(&mut buf) {
        if PacketRepr::parse(&buf[..n]).is_ok_and(|p| {
            p.header.dst == Address(H2) && p.header.packet_type == PacketType(0x0100)
        }) {
            got += 1;
        }
    }
    assert!(got >= 2, "h2 received {got}");
    let (code, out, _) = mwctl(&sock, &["--json", "show", "counters", "-p", "0"]);
    assert_eq!(code, 0);
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(c[0]["forwarded"].as_u64().unwrap() >= 3, "{c}");
}

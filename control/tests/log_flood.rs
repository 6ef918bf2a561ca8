//! A flood of malformed RRP packets from one sender gives a bounded log:
//! a burst of "bad packet" lines, then one summary with the count of the
//! rest, and the counters keep the full figure (docs/daemon.md "Logs").

use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, Instant};

use admin::LogLevel;
use rrp::Address;
use rrp::kind::PacketType;
use rrp::wire::{HeaderRepr, PacketRepr};

mod common;

const SENDER: u16 = 0x0599;

fn config(dir: &Path, r0: u16, r1: u16, h1: u16, h2: u16) -> String {
    let mut c = common::two_hr_box("flood", dir, [r0, r1], [&[h1], &[h2]]);
    c.log.level = LogLevel::Info;
    c.to_toml()
}

/// An RRP#9 to the HR whose body is not records.
fn bad_rrp() -> Vec<u8> {
    PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: Address(0x0511),
            src: Address(SENDER),
            packet_type: PacketType::RRP,
            type_ext: 9,
            ..Default::default()
        },
        data: vec![0xFF; 24],
        ei: 0,
    }
    .to_bytes()
    .expect("a packet")
}

fn parse_errors(sock: &Path) -> u64 {
    let area = sock.with_extension("stats").display().to_string();
    let args = [
        "mwctl".to_string(),
        "--json".into(),
        "stats".into(),
        "--area".into(),
        area,
    ];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(args.to_vec(), &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    v.pointer("/rrp/parse_errors")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("no rrp.parse_errors in {v}"))
}

#[test]
fn a_flood_of_bad_packets_gives_a_burst_and_one_summary() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, h1, h2] = common::free_ports();
    let cfg = dir.path().join("flood.toml");
    std::fs::write(&cfg, config(dir.path(), r0, r1, h1, h2)).unwrap();
    let log = dir.path().join("mwrouterd.log");
    let sock = dir.path().join("mw.sock");
    let mut daemon = common::start(&cfg, &sock, std::fs::File::create(&log).unwrap().into());

    // 5000 bad RRP packets from the SAN's member, paced so that the
    // worker's punt limit lets most through.
    let tx = UdpSocket::bind(("127.0.0.1", h1)).unwrap();
    let pkt = bad_rrp();
    for i in 0..5000 {
        tx.send_to(&pkt, ("127.0.0.1", r0)).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Every one the control plane got is counted.
    let t = Instant::now();
    let mut errors = 0;
    while t.elapsed() < Duration::from_secs(5) {
        let now = parse_errors(&sock);
        if now == errors && now > 0 {
            break;
        }
        errors = now;
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(errors > 100, "the control plane saw {errors} bad packets");

    let pid = rustix::process::Pid::from_raw(daemon.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let st = daemon.wait().unwrap();
    assert!(st.success(), "{st:?}");

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!("bad packet from {}", Address(SENDER))))
        .collect();
    let summaries: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("more like it"))
        .collect();
    let events = lines.len() - summaries.len();
    assert!(
        events <= 5,
        "{events} lines for one sender's bad packets:\n{text}"
    );
    assert!(!summaries.is_empty(), "no summary line:\n{text}");
    // The summaries count exactly the lines not logged.
    let suppressed: u64 = summaries
        .iter()
        .map(|l| {
            let after = l.split("... and ").nth(1).expect("a count");
            let n: String = after
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .filter(char::is_ascii_digit)
                .collect();
            n.parse::<u64>().expect("a number")
        })
        .sum();
    assert_eq!(
        events as u64 + suppressed,
        errors,
        "logged + summarised = the parse errors counted:\n{text}"
    );
    assert!(
        text.lines().count() < 60,
        "the whole log stays short: {} lines",
        text.lines().count()
    );
}

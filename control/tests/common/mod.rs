//! What control's end-to-end tests share: the daemon binary and starting it
//! under a guard that stops it, loopback UDP ports and HRs on them, the
//! two-HR box most of them run and the boxes of a chain, mwctl run
//! in-process against the daemon's admin socket, and waiting for a
//! condition. Not every test file uses every helper.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rrp::Address;
use rrp::kind::PacketType;
use rrp::node::{Learned, Level, Node, NodeConfig};
use rrp::wire::{HeaderRepr, PacketRepr};

use control::config::{Config, HrSection, PortConfig, UdpPortConfig};
use testkit::ChildGuard;

/// The mwrouterd binary of this build.
pub fn mwrouterd() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mwrouterd"))
}

/// `N` free UDP ports on loopback.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let v = ports::udp::free_loopback_ports(N).expect("free ports");
    v.try_into().expect("N ports")
}

/// `127.0.0.1:port`.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// An HR on loopback UDP with a 1500-byte MTU, bound to port `bind`, its
/// SAN's other members on `members`.
pub fn udp_hr(address: u16, san_id: u16, bind: u16, members: &[u16]) -> HrSection {
    let mut u = UdpPortConfig::new(loopback(bind));
    u.members = members.iter().map(|&p| loopback(p)).collect();
    HrSection::new(address, san_id, 1500, PortConfig::Udp(u))
}

/// The two-HR box the tests run: HR 0x0511 on SAN 0x0601 bound to
/// `binds[0]`, HR 0x0512 on SAN 0x0602 bound to `binds[1]`, each SAN's
/// other members `members[i]`; its admin socket `mw.sock` in `dir`, every
/// other setting at its default.
pub fn two_hr_box(name: &str, dir: &Path, binds: [u16; 2], members: [&[u16]; 2]) -> Config {
    let mut c = Config::new(
        name,
        vec![
            udp_hr(0x0511, 0x0601, binds[0], members[0]),
            udp_hr(0x0512, 0x0602, binds[1], members[1]),
        ],
    );
    c.admin.socket = dir.join("mw.sock");
    c
}

/// A box of a chain on loopback UDP: HR `a` and HR `b`, each given as
/// (address, SAN, UDP port, the SAN's other members' ports), its admin
/// socket `NAME.sock` in `dir`; fast timers, and a stopped neighbour kept in
/// the LRT for 20 s (100 keepalives missed) so that a walk tries it.
pub fn chained_box(
    dir: &Path,
    name: &str,
    a: (u16, u16, u16, &[u16]),
    b: (u16, u16, u16, &[u16]),
) -> Config {
    let mut c = Config::new(
        name,
        vec![udp_hr(a.0, a.1, a.2, a.3), udp_hr(b.0, b.1, b.2, b.3)],
    );
    c.timers.sweep_ms = 200;
    c.timers.keepalive_ms = 200;
    c.timers.keepalive_misses = 100;
    c.timers.advertise_ms = 20;
    c.timers.fib_ms = 10;
    c.admin.socket = dir.join(format!("{name}.sock"));
    c
}

/// Starts the box `name` on `config`, its configuration file and admin
/// socket named after it in `dir` (standard error discarded); returns the
/// guard and the socket.
pub fn start_named(dir: &Path, name: &str, config: &Config) -> (ChildGuard, PathBuf) {
    let cfg = dir.join(format!("{name}.toml"));
    std::fs::write(&cfg, config.to_toml()).unwrap();
    let sock = dir.join(format!("{name}.sock"));
    (start(&cfg, &sock, Stdio::null()), sock)
}

/// Starts mwrouterd on the configuration file `config` (standard output
/// discarded, standard error to `stderr`) and waits for its admin socket
/// `sock`; the guard kills it if the test ends first.
pub fn start(config: &Path, sock: &Path, stderr: Stdio) -> ChildGuard {
    let child = Command::new(mwrouterd())
        .arg("--config")
        .arg(config)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("starting mwrouterd");
    let daemon = ChildGuard::new(child);
    wait_for("the admin socket", 10, || sock.exists());
    daemon
}

/// `mwctl --socket SOCK ARGS...`, in-process: its exit code, standard
/// output and standard error.
pub fn mwctl(sock: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec![
        "mwctl".to_string(),
        "--socket".into(),
        sock.display().to_string(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// As [`mwctl`], its standard output and standard error in one text.
pub fn mwctl_all(sock: &Path, args: &[&str]) -> (i32, String) {
    let (code, out, err) = mwctl(sock, args);
    (code, out + &err)
}

/// Waits until `f` holds, checking every 20 ms; panics after `secs`
/// seconds, naming `what`.
pub fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A host: a UDP socket answering RRP#7 and keeping what it receives.
pub struct Host {
    pub received: Arc<Mutex<Vec<PacketRepr>>>,
    pub stop: Arc<AtomicBool>,
    pub sock: UdpSocket,
}

pub fn host(addr: u16, port: u16) -> Host {
    let sock = UdpSocket::bind(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let (s, r, st) = (sock.try_clone().unwrap(), received.clone(), stop.clone());
    std::thread::spawn(move || {
        let mut node = Node::new(NodeConfig {
            address: Address(addr),
            name: Some(format!("h{addr:x}").into_bytes()),
            capabilities: vec![],
            logical: None,
            level: Level::C,
        });
        let mut buf = [0u8; 9000];
        while !st.load(Ordering::Relaxed) {
            let Ok((n, from)) = s.recv_from(&mut buf) else {
                continue;
            };
            if let Ok((reply, learned)) = node.handle_packet(&buf[..n]) {
                if let Some(rep) = reply {
                    let _ = s.send_to(&rep, from);
                }
                if let Some(Learned::Data(p)) = learned {
                    r.lock().unwrap().push(p);
                }
            }
        }
    });
    Host {
        received,
        stop,
        sock,
    }
}

/// A data packet from `src` to `dst`, its 24 data bytes `tag`.
pub fn data(dst: u16, src: u16, tag: u8) -> Vec<u8> {
    data_in(dst, src, tag, 0)
}

/// [`data`] with Free `free` (a partition mark, docs/partitions.md "In
/// packets").
pub fn data_in(dst: u16, src: u16, tag: u8, free: u16) -> Vec<u8> {
    PacketRepr {
        l2rhs: vec![],
        header: HeaderRepr {
            dst: Address(dst),
            src: Address(src),
            packet_type: PacketType(0x0100),
            free,
            ..Default::default()
        },
        data: vec![tag; 24],
        ei: 0,
    }
    .to_bytes()
    .unwrap()
}

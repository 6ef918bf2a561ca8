//! End to end: `mwrouterd` with a keyed SAN (docs/configuration.md
//! "Authentication") on loopback UDP. What it sends there is signed; an
//! unsigned request, a replayed one and one under an unknown key are
//! refused and counted by reason; a signed one is answered; a key rollover
//! by reload changes the key it signs with; a key read from a file is
//! rotated by writing the file and reloading (SIGHUP); no secret reaches the
//! log.

use std::net::{SocketAddr, UdpSocket};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::Duration;

use rrp::Address;
use rrp::router::{AuthConfig, AuthKey};
use rrp::wire::auth;
use rrp::wire::{Message, Packet, locate};

mod common;

use common::{mwctl_all, wait_for};

const KEY1: &str = "00112233445566778899aabbccddeeff";
const KEY2: &str = "ffeeddccbbaa99887766554433221100";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// HR 0 on the keyed SAN with `member`, signing with key `send_key` of
/// `keys` (ID, secret in hex); HR 1 alone on its SAN.
fn config(
    dir: &Path,
    r0: u16,
    r1: u16,
    member: u16,
    keys: &[(u16, &str)],
    send_key: u16,
) -> String {
    let mut c = common::two_hr_box("keyed", dir, [r0, r1], [&[member], &[]]);
    c.hrs[0].auth = Some(AuthConfig {
        keys: keys
            .iter()
            .map(|&(id, secret)| AuthKey {
                id,
                secret: hex(secret),
            })
            .collect(),
        send_key,
        accept_unsigned: false,
    });
    c.timers.sweep_ms = 200;
    c.timers.keepalive_ms = 200;
    c.to_toml()
}

/// The router-wide counter `mwrouter_rrp_<name>_total`.
fn counter(sock: &Path, name: &str) -> u64 {
    let (code, out) = mwctl_all(sock, &["stats", "--prometheus"]);
    assert_eq!(code, 0, "{out}");
    let metric = format!("mwrouter_rrp_{name}_total ");
    out.lines()
        .find_map(|l| l.strip_prefix(&metric))
        .unwrap_or_else(|| panic!("no {metric} in\n{out}"))
        .trim()
        .parse()
        .unwrap()
}

/// The next packet from the router, with its authentication record.
fn next_signed(sock: &UdpSocket) -> (Vec<u8>, auth::AuthRecord) {
    let mut buf = [0u8; 2048];
    let (n, _) = sock.recv_from(&mut buf).expect("a packet from the router");
    let p = Packet::new_checked(&buf[..n], usize::MAX).unwrap();
    let r = auth::record(&p).expect("every control packet on the keyed SAN is signed");
    (buf[..n].to_vec(), r)
}

fn verifies(bytes: &[u8], key: &[u8]) -> bool {
    auth::verify(&Packet::new_checked(bytes, usize::MAX).unwrap(), key)
}

fn who_are_you(key_id: u16, key: Option<&[u8]>, seq: u64) -> Vec<u8> {
    let mut p = Message::WhoAreYou
        .to_packet(Address(0x0511), Address(0x0521))
        .unwrap()
        .to_bytes()
        .unwrap();
    if let Some(k) = key {
        let l = locate(&p, usize::MAX).unwrap();
        assert!(auth::sign(&mut p, l, key_id, k, seq));
    }
    p
}

#[test]
fn a_keyed_san_signs_refuses_by_reason_and_rolls_over() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, m] = common::free_ports();
    let member = UdpSocket::bind(("127.0.0.1", m)).unwrap();
    member
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let path = dir.path().join("r.toml");
    std::fs::write(&path, config(dir.path(), r0, r1, m, &[(1, KEY1)], 1)).unwrap();
    let sock = dir.path().join("mw.sock");
    let log = dir.path().join("log.txt");
    let _d = common::start(&path, &sock, std::fs::File::create(&log).unwrap().into());
    let router: SocketAddr = format!("127.0.0.1:{r0}").parse().unwrap();

    // Its sweeps (RRP#7) come signed with key 1.
    let (bytes, r) = next_signed(&member);
    assert_eq!(r.key_id, 1);
    assert!(verifies(&bytes, &hex(KEY1)));

    // Refused by reason: unsigned, unknown key, a guessed secret.
    member.send_to(&who_are_you(0, None, 0), router).unwrap();
    member
        .send_to(&who_are_you(7, Some(&hex(KEY1)), 10), router)
        .unwrap();
    member
        .send_to(&who_are_you(1, Some(&hex(KEY2)), 11), router)
        .unwrap();
    // Signed: answered (RRP#5, signed), then the same packet again: a replay.
    let good = who_are_you(1, Some(&hex(KEY1)), 12);
    member.send_to(&good, router).unwrap();
    wait_for("the signed request's answer", 10, || {
        let (bytes, _) = next_signed(&member);
        let p = Packet::new_checked(&bytes[..], usize::MAX).unwrap();
        p.header().type_ext() == 5 && verifies(&bytes, &hex(KEY1))
    });
    member.send_to(&good, router).unwrap();
    wait_for("the counters", 10, || {
        counter(&sock, "auth_refused_replay") == 1
    });
    assert_eq!(counter(&sock, "auth_refused_missing"), 1);
    assert_eq!(counter(&sock, "auth_refused_unknown_key"), 1);
    assert_eq!(counter(&sock, "auth_refused_bad_digest"), 1);
    assert!(counter(&sock, "auth_verified") >= 1);

    // Rollover: keys 1 and 2, signing with 2, by reload.
    let both = [(1, KEY1), (2, KEY2)];
    std::fs::write(&path, config(dir.path(), r0, r1, m, &both, 2)).unwrap();
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hr[0].auth.keys: IDs 1 -> 1, 2"), "{out}");
    assert!(out.contains("hr[0].auth.send_key: 1 -> 2"), "{out}");
    wait_for("packets signed with key 2", 10, || {
        let (bytes, r) = next_signed(&member);
        r.key_id == 2 && verifies(&bytes, &hex(KEY2))
    });
    // Key 1 is still taken during the rollover.
    std::thread::sleep(Duration::from_millis(300));
    let verified = counter(&sock, "auth_verified");
    member
        .send_to(&who_are_you(1, Some(&hex(KEY1)), 13), router)
        .unwrap();
    wait_for("key 1 taken", 10, || {
        counter(&sock, "auth_verified") > verified
    });
    assert_eq!(counter(&sock, "auth_refused_unknown_key"), 1);

    // No secret in the log.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(KEY1) && !text.contains(KEY2), "{text}");
    assert!(
        text.contains("authentication"),
        "refusals are logged: {text}"
    );
}

#[test]
fn a_key_in_a_file_is_rotated_by_writing_the_file_and_reloading() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, m] = common::free_ports();
    let member = UdpSocket::bind(("127.0.0.1", m)).unwrap();
    member
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let key = dir.path().join("san-a.key");
    std::fs::write(&key, format!("{KEY1}\n")).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut c = common::two_hr_box("keyfile", dir.path(), [r0, r1], [&[m], &[]]);
    c.hrs[0].auth = Some(AuthConfig {
        keys: vec![AuthKey {
            id: 1,
            secret: hex(KEY1),
        }],
        send_key: 1,
        accept_unsigned: false,
    });
    c.hrs[0].key_files.insert(1, key.clone());
    c.timers.sweep_ms = 200;
    let text = c.to_toml();
    assert!(!text.contains(KEY1), "{text}");
    let path = dir.path().join("r.toml");
    std::fs::write(&path, &text).unwrap();
    let sock = dir.path().join("mw.sock");
    let log = dir.path().join("log.txt");
    let daemon = common::start(&path, &sock, std::fs::File::create(&log).unwrap().into());

    // Signed with the key the file holds.
    let (bytes, r) = next_signed(&member);
    assert_eq!(r.key_id, 1);
    assert!(verifies(&bytes, &hex(KEY1)));
    // show config names the file, not the key.
    let (code, out) = mwctl_all(&sock, &["show", "config"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("secret_file = \"{}\"", key.display())),
        "{out}"
    );
    assert!(!out.contains(KEY1), "{out}");

    // Rotation: the new key into the file, SIGHUP; the text is the same.
    std::fs::write(&key, format!("{KEY2}\n")).unwrap();
    let pid = rustix::process::Pid::from_raw(daemon.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    wait_for("packets signed with the key in the file", 10, || {
        let (bytes, r) = next_signed(&member);
        r.key_id == 1 && verifies(&bytes, &hex(KEY2))
    });
    wait_for("the reload's log line", 10, || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains(&format!("{} holds a new key", key.display()))
    });

    // A key file others may read refuses the reload; the key stays.
    std::fs::write(&key, format!("{KEY1}\n")).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("hr[0].auth.keys[0].secret_file"), "{out}");
    assert!(
        out.contains("readable or writable by group or others"),
        "{out}"
    );
    assert!(!out.contains(KEY1), "{out}");
    // What was sent before the refusal drained, the next sweep.
    member.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 2048];
    while member.recv_from(&mut buf).is_ok() {}
    member.set_nonblocking(false).unwrap();
    let (bytes, _) = next_signed(&member);
    assert!(
        verifies(&bytes, &hex(KEY2)),
        "the running key stays in force"
    );

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(KEY1) && !text.contains(KEY2), "{text}");
}

//! End to end: event subscriptions (docs/management.md "Events") between
//! five mwrouterd on one loopback UDP SAN (0x0601): m (0x0511) its master,
//! s1 (0x0521) a standby, s2 (0x0531), k (0x0541) and e (0x0551). e
//! subscribes with a 1 s lease, s1 and s2 with 60 s (s2 through `mwctl
//! events --watch`); k is killed: s1 and s2 both get a Report of its HR
//! going down, e (its lease run out) nothing. Then m is killed: s1 takes
//! over with the subscriptions it copied, and e killed reaches s2 as a
//! Report from s1.
//!
//! And at an agent: four mwrouterd on SAN 0x0602, m (0x0611) its master,
//! s (0x0621), r (0x0631) and k (0x0641). s subscribes at r, which is not
//! the master (`mwctl events --at`); k is killed: r traps its HR down to m
//! and reports it to s, from r itself.

use std::path::{Path, PathBuf};

use control::config::Config;
use serde_json::Value;

mod common;

use common::{mwctl, start_named, udp_hr, wait_for};

/// The HR addresses of m, s1, s2, k, e.
const HRS: [u16; 5] = [0x0511, 0x0521, 0x0531, 0x0541, 0x0551];

/// Box `i` of five on SAN 0x0601, ports `ports`, a manager of `priority`.
fn config(dir: &Path, i: usize, ports: &[u16; 5], priority: Option<u8>) -> Config {
    let name = ["m", "s1", "s2", "k", "e"][i];
    let others: Vec<u16> = (0..5).filter(|j| *j != i).map(|j| ports[j]).collect();
    let mut c = Config::new(name, vec![udp_hr(HRS[i], 0x0601, ports[i], &others)]);
    c.timers.keepalive_ms = 200;
    c.timers.keepalive_misses = 3;
    c.timers.advertise_ms = 20;
    c.timers.fib_ms = 10;
    c.management.manager_priority = priority;
    c.admin.socket = dir.join(format!("{name}.sock"));
    c
}

fn json(sock: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = mwctl(sock, &all);
    assert_eq!(code, 0, "mwctl {args:?}: {out} {err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The state of the manager box `sock` runs.
fn manager_state(sock: &Path) -> String {
    let v = json(sock, &["show", "management"]);
    v["managers"][0]["state"].as_str().unwrap_or("").to_string()
}

/// The Reports the box keeps: (trap, the master that sent it, summary).
fn reports(sock: &Path) -> Vec<(u64, String, String)> {
    let v = json(sock, &["show", "management"]);
    v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["report"] == true)
        .map(|n| {
            (
                n["trap"].as_u64().unwrap(),
                n["from"].as_str().unwrap().to_string(),
                n["summary"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn hr_down_of(reports: &[(u64, String, String)], hr: &str) -> Option<String> {
    reports
        .iter()
        .find(|(t, _, s)| *t == 1024 && s.contains(hr))
        .map(|(_, from, _)| from.clone())
}

#[test]
fn subscribers_get_reports_of_a_killed_router_and_keep_them_across_a_failover() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ports = common::free_ports::<5>();
    let mut boxes: Vec<Option<(testkit::ChildGuard, PathBuf)>> = (0..5)
        .map(|i| {
            let prio = match i {
                0 => Some(7),
                1 => Some(3),
                _ => None,
            };
            let name = ["m", "s1", "s2", "k", "e"][i];
            Some(start_named(d, name, &config(d, i, &ports, prio)))
        })
        .collect();
    let sock = |b: &Vec<Option<(testkit::ChildGuard, PathBuf)>>, i: usize| {
        b[i].as_ref().unwrap().1.clone()
    };
    let (m, s1, s2, e) = (
        sock(&boxes, 0),
        sock(&boxes, 1),
        sock(&boxes, 2),
        sock(&boxes, 4),
    );
    wait_for("m master, s1 standby", 30, || {
        manager_state(&m) == "master" && manager_state(&s1) == "standby"
    });
    // The master's sweeps make it every agent's manager: traps go there.
    wait_for("the agents' manager address", 30, || {
        [&s1, &s2, &e]
            .iter()
            .all(|s| json(s, &["show", "management"])["manager"] == "0x0511")
    });

    // e with a 1 s lease; s1 and s2 with 60 s, s2 watching.
    let (code, text, err) = mwctl(&e, &["events", "--lease", "1"]);
    assert_eq!(code, 0, "{text} {err}");
    assert!(
        text.starts_with("subscribed at 0x0511 as 0x0551 for 1 s: every trap\n"),
        "{text}"
    );
    let v = json(&s1, &["events", "--trap", "1024"]);
    assert_eq!(
        (&v["manager"], &v["subscriber"], &v["lease_s"]),
        (
            &Value::from("0x0511"),
            &Value::from("0x0521"),
            &Value::from(60)
        )
    );
    let s2w = s2.clone();
    let watcher = std::thread::spawn(move || {
        mwctl(
            &s2w,
            &[
                "--json", "events", "--watch", "--count", "1", "--trap", "1024",
            ],
        )
    });
    wait_for("three subscriptions", 20, || {
        json(&m, &["show", "management"])["managers"][0]["counters"]["subscriptions"] == 3
    });
    let subs = json(&m, &["san", "show"])[0]["subscriptions"].clone();
    assert_eq!(subs.as_array().map(Vec::len), Some(3), "{subs}");
    let (code, text, _) = mwctl(&m, &["san", "show"]);
    assert_eq!(code, 0);
    eprintln!("mwctl san show on m:\n{text}");
    assert!(
        text.contains("SAN of 0x0511: 0x0531 subscribed to trap 1024 ("),
        "{text}"
    );
    // e's lease runs out.
    std::thread::sleep(std::time::Duration::from_millis(1_500));

    boxes[3] = None;
    let (code, out, err) = watcher.join().unwrap();
    assert_eq!(code, 0, "{out} {err}");
    let ev: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(ev["trap"], 1024, "{ev}");
    assert_eq!(ev["from"], "0x0511", "{ev}");
    assert!(ev["summary"].as_str().unwrap().contains("0x0541"), "{ev}");
    wait_for("s1's Report of k's HR down", 20, || {
        hr_down_of(&reports(&s1), "0x0541").is_some()
    });
    // As text: the subscription renewed, and the event.
    let (code, text, err) = mwctl(&s1, &["events", "--trap", "1024"]);
    assert_eq!(code, 0, "{text} {err}");
    eprintln!("mwctl events --trap 1024 on s1:\n{text}");
    eprintln!("mwctl --json events --watch --count 1 --trap 1024 on s2:\n{out}");
    assert!(
        text.starts_with("subscribed at 0x0511 as 0x0521 for 60 s: trap 1024\n"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.contains(" trap 1024 from ")
            && l.contains("(report from 0x0511): neighbour HR 0x0541")),
        "{text}"
    );
    // e gets nothing: its subscription ran out before k died.
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    assert!(reports(&e).is_empty(), "{:?}", reports(&e));
    let mc = &json(&m, &["show", "management"])["managers"][0]["counters"];
    assert!(mc["subscriptions_expired"].as_u64().unwrap() >= 1, "{mc}");
    assert!(mc["reports_sent"].as_u64().unwrap() >= 2, "{mc}");

    // The standby copied the two live subscriptions; m dies, s1 takes
    // over and forwards e's death to s2.
    wait_for("s1's copy of the subscriptions", 20, || {
        json(&s1, &["show", "management"])["managers"][0]["counters"]["synced"]
            .as_u64()
            .unwrap_or(0)
            > 0
    });
    let copied = json(&s1, &["san", "show"])[0]["subscriptions"].clone();
    assert_eq!(copied.as_array().map(Vec::len), Some(2), "{copied}");
    boxes[0] = None;
    wait_for("s1 master", 30, || manager_state(&s1) == "master");
    wait_for("s2's manager address is s1", 30, || {
        json(&s2, &["show", "management"])["manager"] == "0x0521"
    });
    boxes[4] = None;
    wait_for("s2's Report of e's HR down from s1", 30, || {
        hr_down_of(&reports(&s2), "0x0551").as_deref() == Some("0x0521")
    });
}

/// Box `i` of `names` on SAN 0x0602 (HRs 0x0611, 0x0621, ...), ports
/// `ports`, a manager of `priority`.
fn config_at(dir: &Path, names: &[&str], i: usize, ports: &[u16], priority: Option<u8>) -> Config {
    let others: Vec<u16> = (0..ports.len())
        .filter(|j| *j != i)
        .map(|j| ports[j])
        .collect();
    let hr = 0x0611 + 0x10 * i as u16;
    let mut c = Config::new(names[i], vec![udp_hr(hr, 0x0602, ports[i], &others)]);
    c.timers.keepalive_ms = 200;
    c.timers.keepalive_misses = 3;
    c.timers.advertise_ms = 20;
    c.timers.fib_ms = 10;
    c.management.manager_priority = priority;
    c.admin.socket = dir.join(format!("{}.sock", names[i]));
    c
}

#[test]
fn a_subscriber_at_a_router_that_is_not_master_gets_its_traps_as_reports() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = ["m", "s", "r", "k"];
    let ports = common::free_ports::<4>();
    let mut boxes: Vec<Option<(testkit::ChildGuard, PathBuf)>> = (0..4)
        .map(|i| {
            let prio = (i == 0).then_some(7);
            Some(start_named(
                d,
                names[i],
                &config_at(d, &names, i, &ports, prio),
            ))
        })
        .collect();
    let sock = |i: usize| boxes[i].as_ref().unwrap().1.clone();
    let (m, s, r) = (sock(0), sock(1), sock(2));
    wait_for("m master", 30, || manager_state(&m) == "master");
    wait_for("r's manager address is m", 30, || {
        json(&r, &["show", "management"])["manager"] == "0x0611"
    });

    // s subscribes at r's agent: r runs no master, its own table.
    let (code, text, err) = mwctl(&s, &["events", "--at", "0x0631", "--trap", "1024"]);
    assert_eq!(code, 0, "{text} {err}");
    eprintln!("mwctl events --at 0x0631 --trap 1024 on s:\n{text}");
    assert!(
        text.starts_with("subscribed at 0x0631 as 0x0621 for 60 s: trap 1024\n"),
        "{text}"
    );
    // --at and --manager do not go together.
    let (code, _, _) = mwctl(&s, &["events", "--at", "0x0631", "--manager", "0x0611"]);
    assert_ne!(code, 0);
    let rm = json(&r, &["show", "management"]);
    assert_eq!(rm["agent"]["subscriptions"], 1, "{rm}");
    assert_eq!(rm["subscribers"][0]["subscriber"], "0x0621", "{rm}");
    assert_eq!(rm["subscribers"][0]["trap"], 1024, "{rm}");
    let (code, text, _) = mwctl(&r, &["show", "management"]);
    assert_eq!(code, 0);
    assert!(
        text.contains("subscribed to this node's traps:\n0x0621 to trap 1024 ("),
        "{text}"
    );
    // The master's table is not involved.
    let mm = json(&m, &["show", "management"]);
    assert_eq!(mm["managers"][0]["counters"]["subscriptions"], 0, "{mm}");

    // k dies: r declares its HR down, traps it to m and reports it to s.
    boxes[3] = None;
    wait_for("s's Report of k's HR down from r", 20, || {
        hr_down_of(&reports(&s), "0x0641").as_deref() == Some("0x0631")
    });
    let (code, text, err) = mwctl(&s, &["events", "--at", "0x0631", "--trap", "1024"]);
    assert_eq!(code, 0, "{text} {err}");
    eprintln!("mwctl events --at 0x0631 --trap 1024 on s, after k was killed:\n{text}");
    assert!(
        text.lines().any(|l| l.contains(
            " trap 1024 from 0x0631 (report from 0x0631): neighbour HR 0x0641 on port 0 down"
        )),
        "{text}"
    );
    // Only r's traps: s subscribed nowhere else.
    assert!(
        reports(&s).iter().all(|(_, from, _)| from == "0x0631"),
        "{:?}",
        reports(&s)
    );
    let ra = &json(&r, &["show", "management"])["agent"];
    assert!(ra["reports_sent"].as_u64().unwrap() >= 1, "{ra}");
    assert!(ra["traps_sent"].as_u64().unwrap() >= 1, "{ra}");
    assert_eq!(ra["reports_given_up"], 0, "{ra}");
    // The trap reached the master too.
    wait_for("m's notice of r's trap", 20, || {
        json(&m, &["show", "management"])["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["trap"] == 1024 && n["from"] == "0x0631")
    });
}

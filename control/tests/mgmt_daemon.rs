//! End to end: in-band management between two mwrouterd processes on
//! loopback UDP, driven with `mwctl mad` and `mwctl query` on one of them:
//! Gets by address, by directed route and of the box itself (the link's
//! counters by PortCountersExtended among them); Sets with and
//! without the management key, applied as `mwctl` changes are and shown by
//! `mwctl show`; the refused Set counted and trapped to the manager; an RT
//! limit and packets refused by a keyed SAN's authentication trapped too;
//! `mwctl ping` of the other box and of an address nobody has; a master
//! setting a member's partition table from its partitions file.

use std::path::Path;

use control::config::Config;
use rrp::Address;
use serde_json::Value;

mod common;

use common::{mwctl_all, start_named, udp_hr, wait_for};

/// A box with two HRs: `a` on the shared SAN 0x0601 (UDP `bind`, the
/// other box at `peer`), `b` alone on its own SAN (UDP `lonely`).
fn config(
    dir: &Path,
    name: &str,
    a: (u16, u16),
    b: (u16, u16),
    [bind, peer, lonely]: [u16; 3],
) -> Config {
    let mut c = Config::new(
        name,
        vec![
            udp_hr(a.0, a.1, bind, &[peer]),
            udp_hr(b.0, b.1, lonely, &[]),
        ],
    );
    c.timers.sweep_ms = 200;
    c.timers.keepalive_ms = 200;
    c.timers.keepalive_misses = 5;
    c.timers.advertise_ms = 20;
    c.timers.fib_ms = 10;
    c.admin.socket = dir.join(format!("{name}.sock"));
    c
}

fn json(sock: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend(args);
    let (code, out) = mwctl_all(sock, &all);
    assert_eq!(code, 0, "mwctl {args:?}: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Prints what it says when the test fails (drops while panicking).
struct Dump(Box<dyn Fn() -> String>);

impl Drop for Dump {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", (self.0)());
        }
    }
}

#[test]
fn ping_answers_from_a_box_and_loses_every_echo_to_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb] = common::free_ports();
    let (_a, sa) = start_named(
        dir.path(),
        "a",
        &config(
            dir.path(),
            "a",
            (0x0511, 0x0601),
            (0x0512, 0x0602),
            [pa, pb, la],
        ),
    );
    // B's M_Key at protect 2 drops Subn Gets without it; ping's Perf Get
    // is answered all the same.
    let mut b = config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    );
    b.management.mkey = 0x4242;
    b.management.protect = 2;
    let (_b, _sb) = start_named(dir.path(), "b", &b);

    // B's HR on A's SAN, and its other HR behind it.
    wait_for("a route from a to b", 15, || {
        mwctl_all(&sa, &["ping", "0x0522", "-c", "1", "--timeout", "0.2"]).0 == 0
    });
    let (code, text) = mwctl_all(&sa, &["ping", "0x0521", "-c", "3", "-i", "0.2"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("reply from 0x0521: seq=1 time="), "{text}");
    assert!(text.contains("3 sent, "), "{text}");
    let v = json(&sa, &["ping", "0x0522", "-c", "2", "-i", "0.2"]);
    assert!(v["received"].as_u64().is_some_and(|n| n >= 1), "{v}");
    for r in v["replies"].as_array().unwrap() {
        if !r["rtt_us"].is_null() {
            assert!(r["rtt_us"].as_u64().is_some_and(|us| us > 0), "{v}");
            // Answered from the HR the echo reached (docs/management.md
            // "The agent").
            assert_eq!(r["from"], "0x0521", "{v}");
            assert_eq!(r["status"], 0, "{v}");
        }
    }
    // Nobody has 0x0599: every echo lost, exit 1, each within its wait
    // (2 echoes of 0.3 s; far below the 10 s the daemon is given by
    // default).
    let started = std::time::Instant::now();
    let (code, out, _) = common::mwctl(
        &sa,
        &[
            "--json",
            "ping",
            "0x0599",
            "-c",
            "2",
            "-i",
            "0.1",
            "--timeout",
            "0.3",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["loss_percent"], 100.0, "{v}");
    assert_eq!(v["received"], 0, "{v}");
    assert!(v["replies"][0]["rtt_us"].is_null(), "{v}");
}

#[test]
fn one_box_manages_another_in_band() {
    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb] = common::free_ports();
    // A is the manager (traps go to its HR 0x0511); B is protected by a
    // key at level 1 (Gets answered, the key reads as 0; Sets need it).
    let (_a, sa) = start_named(
        dir.path(),
        "a",
        &config(
            dir.path(),
            "a",
            (0x0511, 0x0601),
            (0x0512, 0x0602),
            [pa, pb, la],
        ),
    );
    let mut b = config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    );
    b.management.mkey = 0x4242;
    b.management.protect = 1;
    b.management.manager = Some(Address(0x0511));
    b.management.manager_priority = Some(5);
    b.management.manager_hrs = vec![Address(0x0521)];
    let (_b, sb) = start_named(dir.path(), "b", &b);

    // The box itself, by its own address.
    let me = json(&sa, &["mad", "0x0511", "get", "node_info"]);
    assert_eq!(me["status"], 0, "{me}");
    assert_eq!(me["fields"]["num_ports"], 2, "{me}");

    // B by address, once A has a route to it.
    wait_for("a route from a to b", 15, || {
        mwctl_all(
            &sa,
            &["mad", "0x0522", "get", "node_info", "-t", "200", "-r", "0"],
        )
        .0 == 0
    });
    let info = json(&sa, &["mad", "0x0522", "get", "node_info"]);
    assert_eq!(info["fields"]["node_type"], 3, "a router: {info}");
    let desc = json(&sa, &["query", "0x0521", "nodeinfo"]);
    assert_eq!(desc["node_description"], "b", "{desc}");
    let ports = json(&sa, &["query", "0x0521", "portinfo"]);
    let addrs: Vec<&Value> = ports
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["address"])
        .collect();
    assert_eq!(addrs.len(), 2, "{ports}");
    assert_eq!(
        ports[0]["mkey"], 0,
        "level 1: the key reads as 0 without it"
    );
    let counters = json(&sa, &["query", "0x0521", "counters", "-p", "0"]);
    assert!(
        counters[0]["counters"]["received"].as_u64().unwrap() > 0,
        "{counters}"
    );
    // The link's counters (PortCountersExtended), which B's worker reads
    // when it publishes: its HR on the shared SAN has received bytes.
    wait_for("b's link counters by PortCountersExtended", 15, || {
        let l = json(&sa, &["query", "0x0521", "link", "-p", "0"]);
        l[0]["counters"]["rx_bytes"].as_u64().unwrap_or(0) > 0
            && l[0]["counters"]["tx_bytes"].as_u64().unwrap_or(0) > 0
    });
    let routes = json(
        &sa,
        &[
            "query", "0x0521", "routes", "--from", "0x0500", "--to", "0x052f",
        ],
    );
    assert!(
        routes
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["destination"] == "0x0512" && r["kind"] == 2),
        "B routes to A's other HR: {routes}"
    );

    // B by directed route: out of A's HR 0x0511 to B's UDP port.
    let hop = format!("0x0511/127.0.0.1:{pb}");
    let dr = json(&sa, &["mad", "--dr", &hop, "get", "node_description"]);
    assert_eq!(dr["fields"], "b", "{dr}");

    // A Set with the wrong key: refused (status 0x0100), counted, trapped.
    let (code, out) = mwctl_all(
        &sa,
        &[
            "mad",
            "0x0521",
            "set",
            "port_info",
            "-m",
            "1",
            "cost=7",
            "-k",
            "0x4141",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("0x0100"), "{out}");
    let mb = json(&sb, &["show", "management"]);
    assert_eq!(mb["violations"], 1, "{mb}");
    let (sa2, sb2) = (sa.clone(), sb.clone());
    let _dump = Dump(Box::new(move || {
        format!(
            "a: {}\nb: {}",
            json(&sa2, &["show", "management"]),
            json(&sb2, &["show", "management"])
        )
    }));
    wait_for("trap 256 at the manager", 10, || {
        let m = json(&sa, &["show", "management"]);
        m["notices"].as_array().is_some_and(|n| {
            n.iter()
                .any(|n| n["trap"] == 256 && n["issuer"] == "0x0521")
        })
    });
    let hrs = json(&sb, &["show", "hrs"]);
    assert_eq!(hrs[1]["cost"], 1, "unchanged: {hrs}");
    // B's management in Prometheus: the violation, and its SAN manager on
    // 0x0521 (alone there: master).
    wait_for("B's manager master", 10, || {
        let (_, text) = mwctl_all(&sb, &["stats", "--prometheus"]);
        text.contains("mwrouter_san_manager_state{hr=\"0x0521\"} 3")
    });
    let (_, text) = mwctl_all(&sb, &["stats", "--prometheus"]);
    assert!(
        text.contains("mwrouter_mgmt_mkey_violations_total 1"),
        "{text}"
    );

    // With the key: applied, and shown by mwctl on B.
    let (code, out) = mwctl_all(
        &sa,
        &[
            "mad",
            "0x0521",
            "set",
            "port_info",
            "-m",
            "1",
            "cost=7",
            "mtu=1200",
            "-k",
            "0x4242",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let hrs = json(&sb, &["show", "hrs"]);
    assert_eq!(
        (&hrs[1]["cost"], &hrs[1]["mtu"]),
        (&7.into(), &1200.into()),
        "{hrs}"
    );

    // Port down by MAD: B's HR 0x0522 goes down and A loses its route.
    let (code, out) = mwctl_all(
        &sa,
        &[
            "mad",
            "0x0521",
            "set",
            "port_info",
            "-m",
            "1",
            "port_state=down",
            "-k",
            "0x4242",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let hrs = json(&sb, &["show", "hrs"]);
    assert_eq!(hrs[1]["up"], false, "{hrs}");
    wait_for("a's route to 0x0522 gone", 15, || {
        mwctl_all(
            &sa,
            &["mad", "0x0522", "get", "node_info", "-t", "200", "-r", "0"],
        )
        .0 != 0
    });

    // Both boxes count what they did.
    let ma = json(&sa, &["show", "management"]);
    assert!(ma["client"]["answered"].as_u64().unwrap() >= 8, "{ma}");
    let mb = json(&sb, &["show", "management"]);
    assert!(mb["agent"]["answered"].as_u64().unwrap() >= 8, "{mb}");
    assert!(mb["agent"]["sets"].as_u64().unwrap() >= 2, "{mb}");
}

/// A box at an RT limit traps it to its manager once (trap 1026), refuses
/// and counts the rest.
#[test]
fn an_rt_limit_is_trapped_to_the_manager() {
    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb, lc] = common::free_ports();
    // A has two SANs besides the shared one: it advertises two RTs to B,
    // and B keeps one RT per HR.
    let mut a = config(
        dir.path(),
        "a",
        (0x0511, 0x0601),
        (0x0512, 0x0602),
        [pa, pb, la],
    );
    a.hrs.push(udp_hr(0x0513, 0x0604, lc, &[]));
    let (_a, sa) = start_named(dir.path(), "a", &a);
    let mut b = config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    );
    b.management.manager = Some(Address(0x0511));
    b.limits.max_rts_per_hr = 1;
    let (_b, sb) = start_named(dir.path(), "b", &b);
    let (sa2, sb2) = (sa.clone(), sb.clone());
    let _dump = Dump(Box::new(move || {
        format!(
            "a: {}\nb: {}",
            json(&sa2, &["show", "management"]),
            json(&sb2, &["show", "management"])
        )
    }));
    wait_for("trap 1026 at the manager", 20, || {
        let m = json(&sa, &["show", "management"]);
        m["notices"].as_array().is_some_and(|n| {
            n.iter()
                .any(|n| n["trap"] == 1026 && n["issuer"] == "0x0521")
        })
    });
    let m = json(&sa, &["show", "management"]);
    let traps: Vec<&Value> = m["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["trap"] == 1026)
        .collect();
    assert_eq!(traps.len(), 1, "once, not per refusal: {m}");
    let (_, text) = mwctl_all(&sb, &["stats", "--prometheus"]);
    assert!(
        text.contains("mwrouter_rrp_rts_refused_total{reason=\"hr-full\"}"),
        "{text}"
    );
}

/// A keyed SAN: a box that refuses packets for their authentication traps
/// its manager once per source (trap 1027), with the HR, the source and the
/// reason; the refusals are all counted.
#[test]
fn authentication_refusals_are_trapped_to_the_manager_once_per_source() {
    use rrp::router::{AuthConfig, AuthKey};
    use rrp::wire::Message;

    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb, s1, s2] = common::free_ports();
    let keyed = |mut c: Config| {
        c.hrs[0].auth = Some(AuthConfig {
            keys: vec![AuthKey {
                id: 1,
                secret: b"the key of SAN 0x0601, 32 bytes.".to_vec(),
            }],
            send_key: 1,
            accept_unsigned: false,
        });
        c
    };
    let a = keyed(config(
        dir.path(),
        "a",
        (0x0511, 0x0601),
        (0x0512, 0x0602),
        [pa, pb, la],
    ));
    let (_a, sa) = start_named(dir.path(), "a", &a);
    let mut b = keyed(config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    ));
    b.management.manager = Some(Address(0x0511));
    let (_b, sb) = start_named(dir.path(), "b", &b);
    let (sa2, sb2) = (sa.clone(), sb.clone());
    let _dump = Dump(Box::new(move || {
        format!(
            "a: {}\nb: {}",
            json(&sa2, &["show", "management"]),
            json(&sb2, &["show", "management"])
        )
    }));
    // B reaches its manager over the keyed SAN.
    wait_for("a route from b to a", 15, || {
        mwctl_all(
            &sb,
            &["mad", "0x0511", "get", "node_info", "-t", "200", "-r", "0"],
        )
        .0 == 0
    });
    // Unsigned RRP#7 to B from two strangers on the SAN, three each.
    let b_at = common::loopback(pb);
    let who = |sa: u16| {
        Message::WhoAreYou
            .to_packet(Address(0x0521), Address(sa))
            .unwrap()
            .to_bytes()
            .unwrap()
    };
    let one = std::net::UdpSocket::bind(common::loopback(s1)).unwrap();
    let two = std::net::UdpSocket::bind(common::loopback(s2)).unwrap();
    for _ in 0..3 {
        one.send_to(&who(0x0599), b_at).unwrap();
        two.send_to(&who(0x0599), b_at).unwrap();
    }
    let traps = || -> Vec<Value> {
        let m = json(&sa, &["show", "management"]);
        m["notices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["trap"] == 1027 && n["issuer"] == "0x0521")
            .cloned()
            .collect()
    };
    wait_for("trap 1027 from b for each stranger", 20, || {
        traps().len() >= 2
    });
    wait_for("every refusal counted", 10, || {
        let (_, text) = mwctl_all(&sb, &["stats", "--prometheus"]);
        text.contains("mwrouter_rrp_auth_refused_missing_total 6")
    });
    // Once per source, however many packets.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let got = traps();
    assert_eq!(got.len(), 2, "{got:?}");
    for n in &got {
        let s = n["summary"].as_str().unwrap();
        assert!(
            s.starts_with("port 0: control packet with SA 0x0599 from ")
                && s.ends_with("refused: authentication missing"),
            "{s}"
        );
    }
    assert_ne!(got[0]["summary"], got[1]["summary"], "two native addresses");
}

#[test]
fn the_master_sets_a_members_partition_table_from_its_partitions_file() {
    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb] = common::free_ports();
    // A: a member without a key. B: the manager of SAN 0x0601 on its HR
    // 0x0521, with a partitions file making every node a limited member
    // of 0x0010 (A, a router, stays a full member of the default one).
    let (_a, _sa) = start_named(
        dir.path(),
        "a",
        &config(
            dir.path(),
            "a",
            (0x0511, 0x0601),
            (0x0512, 0x0602),
            [pa, pb, la],
        ),
    );
    let file = dir.path().join("partitions.conf");
    std::fs::write(
        &file,
        "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\nt=0x0010 : ALL=limited ;\n",
    )
    .unwrap();
    let mut b = config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    );
    b.management.manager_priority = Some(5);
    b.management.manager_hrs = vec![Address(0x0521)];
    b.management.partitions_file = Some(file);
    let (_b, sb) = start_named(dir.path(), "b", &b);
    let want = serde_json::json!([["0x0010", "limited"], ["0x7fff", "full"]]);
    let get = || {
        let (code, out) = mwctl_all(
            &sb,
            &[
                "--json",
                "mad",
                "0x0511",
                "get",
                "partition_table",
                "-m",
                "0",
                "-t",
                "200",
                "-r",
                "0",
            ],
        );
        (code, out)
    };
    wait_for("A's partition table set by B's master", 20, || {
        let (code, out) = get();
        code == 0
            && serde_json::from_str::<Value>(out.trim())
                .is_ok_and(|v| v["fields"]["entries"] == want)
    });
    let v = json(&sb, &["mad", "0x0511", "get", "partition_table", "-m", "0"]);
    assert_eq!(v["fields"]["entries"], want, "{v}");

    // `mwctl discover` shows each node's own table: A's as the master set
    // it, B's the default one (the manager's own node keeps it).
    let (code, out) = mwctl_all(&sb, &["--json", "discover", "-t", "300", "-r", "1"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let routers = v["routers"].as_array().unwrap();
    let of = |name: &str| {
        routers
            .iter()
            .find(|r| r["description"] == name)
            .unwrap_or_else(|| panic!("no router {name}: {v}"))["partitions"]
            .clone()
    };
    assert_eq!(of("a"), want, "{v}");
    assert_eq!(of("b"), serde_json::json!([["0x7fff", "full"]]), "{v}");
    let (code, text) = mwctl_all(&sb, &["discover", "-t", "300", "-r", "1"]);
    assert_eq!(code, 0, "{text}");
    println!("$ mwctl discover\n{text}");
    let block_of = |name: &str| {
        text.split("\n\n")
            .find(|b| b.contains(&format!("\"{name}\" level")))
            .unwrap_or_else(|| panic!("no router {name}:\n{text}"))
            .to_string()
    };
    assert!(
        block_of("a").contains("\n  partitions 0x0010(limited) 0x7fff\n"),
        "{text}"
    );
    assert!(block_of("b").contains("\n  partitions 0x7fff\n"), "{text}");
}

#[test]
fn a_router_learns_its_sans_member_tables_from_the_master_and_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let [pa, pb, la, lb] = common::free_ports();
    // A: a router on SAN 0x0601 (HR 0x0511, port 0). B: the manager of
    // that SAN on its HR 0x0521, with a partitions file.
    let (_a, sa) = start_named(
        dir.path(),
        "a",
        &config(
            dir.path(),
            "a",
            (0x0511, 0x0601),
            (0x0512, 0x0602),
            [pa, pb, la],
        ),
    );
    let file = dir.path().join("partitions.conf");
    std::fs::write(
        &file,
        "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\nt=0x0010 : ALL=limited ;\n",
    )
    .unwrap();
    let mut b = config(
        dir.path(),
        "b",
        (0x0521, 0x0601),
        (0x0522, 0x0603),
        [pb, pa, lb],
    );
    b.management.manager_priority = Some(5);
    b.management.manager_hrs = vec![Address(0x0521)];
    b.management.partitions_file = Some(file);
    let (_b, sb) = start_named(dir.path(), "b", &b);
    let dump_a = sa.clone();
    let _dump = Dump(Box::new(move || {
        let (_, out) = mwctl_all(&dump_a, &["show", "partitions"]);
        format!("A's show partitions:\n{out}")
    }));
    let port0 = |sock: &Path| {
        let (code, out) = mwctl_all(sock, &["--json", "show", "partitions"]);
        (code == 0)
            .then(|| serde_json::from_str::<Value>(out.trim()).ok())
            .flatten()
            .and_then(|v| v.as_array().and_then(|r| r.first().cloned()))
    };
    // A and B's own node: each table set at A by B's master.
    wait_for("A's port 0 enforcing SAN 0x0601's partitions", 30, || {
        port0(&sa).is_some_and(|r| r["open"] == false && r["nodes"] == 2)
    });
    let r = port0(&sa).unwrap();
    let mut keys: Vec<String> = serde_json::from_value(r["keys"].clone()).unwrap();
    keys.sort();
    assert_eq!(keys, ["0x0010", "0x7fff"], "{r}");
    assert_eq!(r["source"], "master", "{r}");
    assert_eq!(r["master"], "0x0521", "{r}");
    // Its other port: no master gave tables.
    let (code, out) = mwctl_all(&sa, &["--json", "show", "partitions"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v[1]["open"], true, "{v}");
    assert_eq!(v[1]["source"], "none", "{v}");
    // The text.
    let (code, text) = mwctl_all(&sa, &["show", "partitions"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("the master at 0x0521"), "{text}");
    println!("$ mwctl show partitions\n{text}");
    // B enforces the same from its own master.
    let r = port0(&sb).unwrap();
    assert_eq!(r["source"], "this-box", "{r}");
    assert_eq!(r["nodes"], 2, "{r}");
    assert_eq!(r["open"], false, "{r}");
    // The master counted its Sets to A.
    let m = json(&sb, &["show", "management"]);
    let sets = &m["managers"][0]["counters"]["member_tables_set"];
    assert!(sets.as_u64().is_some_and(|n| n >= 2), "{m}");
}

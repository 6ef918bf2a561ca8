//! Partitions in a lab of real processes (examples/appendix-b-partitions.toml,
//! docs/partitions.md): two tenants across SANs A, C and E, declared once
//! in the SAN managers' partitions file. Traffic within each tenant
//! arrives; across tenants, to a node of no tenant, and between two
//! limited members it is dropped by the routers and counted under
//! `partition`; a limited member reaches full members. The master of SAN
//! C killed, the standby's tables are the same and the routers go on
//! enforcing them; a broken partitions file reloaded everywhere changes
//! nothing. `mwctl trace` (mwtrace) reads the tables along a path and says
//! the same as the routers do: admitted within a tenant, refused (exit
//! status 4) across tenants and between two limited members.

use std::time::{Duration, Instant};

use mwlab::checks;
use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, Wiring, lab_timers};
use serde_json::{Value, json};

mod common;
use common::{example, host_stats, print_drops, up_converged, wait_master};

/// Probes each case sends.
const PROBES: u64 = 50;

fn up() -> (Lab, tempfile::TempDir) {
    up_converged(
        example("appendix-b-partitions.toml"),
        Wiring::Udp,
        lab_timers(),
        Some(LabManagement::default()),
    )
}

fn address(lab: &Lab, host: &str) -> u16 {
    lab.plan
        .hosts
        .iter()
        .find(|h| h.spec.name == host)
        .unwrap()
        .spec
        .address
}

/// Waits until `host`'s table has `key` with `membership`.
fn wait_table(lab: &Lab, host: &str, key: &str, membership: &str, within: Duration) {
    let t0 = Instant::now();
    loop {
        let s = host_stats(lab, host);
        if s["partitions"][key] == membership {
            return;
        }
        assert!(
            t0.elapsed() < within,
            "{host}: no {key}={membership} in its table within {within:?}: {}",
            s["partitions"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The unique probes `to` has received from `from`.
fn received(lab: &Lab, to: &str, from: &str) -> u64 {
    let s = host_stats(lab, to);
    let from = format!("{:#06x}", address(lab, from));
    s["received"][&from]["unique"].as_u64().unwrap_or(0)
}

/// Sends [`PROBES`] probes from `from` to `to` (in the host's own choice of
/// partition) and returns how many arrived, waiting up to `secs` for all.
fn probe(lab: &Lab, from: &str, to: &str, secs: u64) -> u64 {
    let before = received(lab, to, from);
    let mut c = host_client(&lab.plan, from).unwrap();
    c.request(&json!({
        "cmd": "send", "dst": address(lab, to), "count": PROBES, "rate_pps": 500, "wait": true
    }))
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let n = received(lab, to, from) - before;
        if n >= PROBES || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every live router's `partition` drops, summed; each router's drops by
/// partition key and port (`stats`' `partitions`) sum to the same.
fn partition_drops(lab: &Lab) -> u64 {
    let mut n = 0;
    for r in &lab.plan.routers {
        if !lab.router_alive(&r.name) {
            continue;
        }
        let s = mwctl(&r.socket, &["stats"]).unwrap();
        let by_reason: u64 = s["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["drops"]["partition"].as_u64().unwrap_or(0))
            .sum();
        let by_key: u64 = s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["dropped"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(by_key, by_reason, "{}: {s}", r.name);
        n += by_reason;
    }
    n
}

/// `mwctl discover` from router ab: each host's partitions, by its
/// description.
fn discovered_tables(lab: &Lab) -> std::collections::BTreeMap<String, Value> {
    let ab = lab.plan.admin_socket("ab").unwrap();
    let d = mwctl(ab, &["discover", "-r", "3"]).unwrap();
    d["sans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["nodes"].as_array().unwrap())
        .map(|n| {
            (
                n["description"].as_str().unwrap().to_string(),
                n["partitions"].clone(),
            )
        })
        .collect()
}

/// Within each tenant every probe arrives, across none; each refused one
/// is counted by a router under `partition`.
fn tenants_hold(lab: &Lab, what: &str) {
    let allowed = [
        ("H0", "H4"),
        ("H4", "H8"),
        ("H8", "H0"),
        ("H1", "H5"),
        ("H5", "H1"),
        ("H9", "H1"),
    ];
    for (from, to) in allowed {
        // The first probes after a change may meet routes or tables on
        // their way: a second round must be whole.
        let mut n = probe(lab, from, to, 5);
        if n < PROBES {
            n = probe(lab, from, to, 5);
        }
        if n < PROBES {
            print_drops(lab);
        }
        assert_eq!(n, PROBES, "{what}: {from} -> {to}, same tenant");
    }
    let refused = [
        ("H0", "H5", "tenant_a to a tenant_b member"),
        ("H5", "H8", "tenant_b to a tenant_a member"),
        ("H5", "H9", "two limited members"),
        ("H0", "H6", "a node of no tenant"),
    ];
    for (from, to, why) in refused {
        let before = partition_drops(lab);
        let n = probe(lab, from, to, 2);
        assert_eq!(n, 0, "{what}: {from} -> {to} ({why}) arrived");
        let counted = partition_drops(lab) - before;
        assert!(
            counted >= PROBES,
            "{what}: {from} -> {to} ({why}): {counted} counted under partition"
        );
    }
}

/// `mwctl trace ARGS` from `from`'s admin socket, as text and as JSON: the
/// exit status (the same both ways), the trace and the text.
fn trace(lab: &Lab, from: &str, args: &[&str]) -> (i32, Value, String) {
    let sock = lab.plan.admin_socket(from).unwrap();
    let run = |json: bool| {
        let mut all = vec!["mwctl".to_string(), "--socket".into()];
        all.push(sock.display().to_string());
        if json {
            all.push("--json".into());
        }
        all.push("trace".into());
        all.extend(args.iter().map(|s| s.to_string()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = mwctl::main_with(all, &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into_owned())
    };
    let (code, text) = run(false);
    eprintln!(
        "$ mwctl trace {}   (from {from})\n{text}exit {code}",
        args.join(" ")
    );
    let (json_code, out) = run(true);
    assert_eq!(json_code, code, "{out}");
    let v = serde_json::from_str(&out).unwrap_or_else(|_| json!({ "stdout": out }));
    (code, v, text)
}

/// The trace's verdict in each partition it tried: (key, verdict, reason).
fn verdicts(t: &Value) -> Vec<(String, String, String)> {
    t["partition"]["decisions"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            (s("key"), s("verdict"), s("reason"))
        })
        .collect()
}

/// mwtrace's verdicts agree with what the routers do (tenants_hold).
fn traces_agree(lab: &Lab) {
    let to = |h: &str| format!("{:#06x}", address(lab, h));
    let v = |k: &str, verdict: &str, reason: &str| (k.into(), verdict.into(), reason.into());
    let (code, t, text) = trace(lab, "H0", &["--partition", "0x0010", &to("H4")]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(verdicts(&t), [v("0x0010", "admitted", "")], "{t}");
    assert!(
        text.contains("partition 0x0010 full: admitted (source full, destination full)"),
        "{text}"
    );
    assert_eq!(
        t["partition"]["source_table"]["entries"][0][0], "0x0010",
        "{t}"
    );
    // The first router checks the source against the table it keeps for
    // it (its own manager's, or the master's copy): the same.
    assert_eq!(t["partition"]["source_judged_by"], "first_router", "{t}");
    assert_eq!(
        t["partition"]["first_router_table"], t["partition"]["source_table"],
        "{t}"
    );
    let (code, t, text) = trace(lab, "H0", &["--partition", "0x0010", &to("H5")]);
    assert_eq!(code, 4, "{t}");
    assert_eq!(
        verdicts(&t),
        [v("0x0010", "refused", "destination not a member")],
        "{t}"
    );
    assert!(
        text.contains("refused at the router ") || text.contains("refused at the last router "),
        "{text}"
    );
    let (code, t, _) = trace(lab, "H5", &["--partition", "0x0020", &to("H9")]);
    assert_eq!(code, 4, "{t}");
    assert_eq!(
        verdicts(&t),
        [v(
            "0x0020",
            "refused",
            "a limited sender to a limited destination"
        )],
        "{t}"
    );
    // Claiming full as a limited member: refused by the first router.
    let (code, t, text) = trace(lab, "H5", &["--partition", "0x0020:full", &to("H1")]);
    assert_eq!(code, 4, "{t}");
    assert_eq!(
        verdicts(&t),
        [v(
            "0x0020",
            "refused",
            "source a limited member, the packet claiming full"
        )],
        "{t}"
    );
    assert!(
        text.contains(": the packet is dropped with reason partition"),
        "{text}"
    );
    // Without --partition, every partition of the source's table: within
    // the tenant one lets it through; to a host of no tenant none does.
    let (code, t, _) = trace(lab, "H0", &["-v", &to("H4")]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(
        verdicts(&t),
        [
            v("0x0010", "admitted", ""),
            v(
                "0x7fff",
                "refused",
                "a limited sender to a limited destination"
            )
        ],
        "{t}"
    );
    let (code, t, _) = trace(lab, "H0", &[&to("H6")]);
    assert_eq!(code, 4, "{t}");
    assert_eq!(
        verdicts(&t)
            .iter()
            .map(|d| d.1.as_str())
            .collect::<Vec<_>>(),
        ["refused", "refused"],
        "{t}"
    );
}

#[test]
fn routers_enforce_the_tenants_the_managers_declare() {
    let (mut lab, _tmp) = up();
    for san in ["A", "C", "E"] {
        eprintln!(
            "SAN {san}: master {}",
            wait_master(&lab, san, Duration::from_secs(20))
        );
    }
    let within = Duration::from_secs(30);
    for h in ["H0", "H4", "H8", "H1"] {
        let key = if h == "H1" { "0x0020" } else { "0x0010" };
        wait_table(&lab, h, key, "full", within);
    }
    for h in ["H5", "H9"] {
        wait_table(&lab, h, "0x0020", "limited", within);
    }
    // mwctl discover reads every host's table from its agent.
    let tables = discovered_tables(&lab);
    let limited_default = json!(["0x7fff", "limited"]);
    for (h, want) in [
        ("H0", json!([["0x0010", "full"], limited_default])),
        ("H1", json!([["0x0020", "full"], limited_default])),
        ("H5", json!([["0x0020", "limited"], limited_default])),
        ("H6", json!([limited_default])),
    ] {
        assert_eq!(tables.get(h), Some(&want), "{h}: {tables:?}");
    }
    tenants_hold(&lab, "at start");
    traces_agree(&lab);

    // A broken file, reloaded by every router: nothing changes.
    let file = lab.plan.partitions_path();
    let good = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, "tenant_a=0x0010 : 0x01=sometimes ;\nbroken\n").unwrap();
    for r in &lab.plan.routers {
        mwctl(&r.socket, &["reload"]).unwrap();
    }
    let shown = mwctl(&lab.plan.routers[1].socket, &["san", "partitions"]).unwrap();
    assert!(
        shown["refused"]["count"].as_u64().is_some_and(|n| n >= 2),
        "the refusal is shown: {shown}"
    );
    assert_eq!(
        shown["partitions"].as_array().map(Vec::len),
        Some(3),
        "{shown}"
    );
    tenants_hold(&lab, "after a broken file");
    std::fs::write(&file, good).unwrap();

    // SAN C's master killed (cd: C's hosts' first HR is ac's, which stays):
    // a standby takes over with the same tables.
    let master = wait_master(&lab, "C", Duration::from_secs(5));
    lab.kill_router(&master).unwrap();
    let dead = vec![master.clone()];
    checks::converge(
        &lab.plan,
        &dead,
        Duration::from_millis(500),
        Duration::from_secs(60),
        &mut |_, _| {},
    )
    .unwrap();
    let standby = wait_master(&lab, "C", Duration::from_secs(30));
    assert_ne!(standby, master);
    eprintln!("SAN C: {master} killed, {standby} master");
    tenants_hold(&lab, "after the master of SAN C died");
}

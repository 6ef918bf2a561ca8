//! In-band management across a whole lab (docs/mwlab.md "Management"):
//! from host H0 of Appendix B, with mwctl on H0's admin socket, read
//! NodeInfo, NodeDescription, PortInfo and PortCounters of all seven
//! routers by address, and `mwctl discover` from router ab finds them all
//! and their SANs (`mwctl links` every HR, `mwctl errors` every port); a
//! Set with the wrong key is refused, counted and trapped to H0 (the
//! manager); with the key, ad's port on SAN A goes down by MAD and H0's
//! traffic to H8 goes around ad, then comes back.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use mwlab::checks;
use mwlab::lab::Lab;
use mwlab::plan::{LabManagement, lab_timers};
use serde_json::Value;

const KEY: &str = "0x5a5a17";

fn lab() -> (Lab, tempfile::TempDir) {
    common::appendix_b(
        LabManagement {
            mkey: 0x5a5a17,
            protect: 1,
            ..LabManagement::default()
        },
        lab_timers(),
    )
}

/// mwctl on `sock` with `--json`: the exit code and the answer.
fn mwctl(sock: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut all: Vec<String> = ["mwctl", "--socket", &sock.display().to_string(), "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    let v = serde_json::from_slice(&out).unwrap_or(Value::Null);
    (code, v, String::from_utf8_lossy(&err).into_owned())
}

fn ok(sock: &Path, args: &[&str]) -> Value {
    let (code, v, err) = mwctl(sock, args);
    assert_eq!(code, 0, "mwctl {args:?}: {err} {v}");
    v
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn hex(a: u16) -> String {
    format!("{a:#06x}")
}

#[test]
fn h0_reads_and_sets_every_router_of_appendix_b_in_band() {
    let (lab, _tmp) = lab();
    let h0 = lab.plan.admin_socket("H0").unwrap().to_path_buf();

    // Every router, by the address of its first HR.
    for r in &lab.plan.routers {
        let a = hex(r.hrs[0].0);
        let info = ok(&h0, &["mad", &a, "get", "node_info", "-r", "3"]);
        assert_eq!(info["fields"]["node_type"], 3, "{}: {info}", r.name);
        assert_eq!(
            info["fields"]["num_ports"],
            r.hrs.len(),
            "{}: {info}",
            r.name
        );
        let node = ok(&h0, &["query", &a, "nodeinfo", "-r", "3"]);
        assert_eq!(node["node_description"], r.name.as_str(), "{node}");
        let ports = ok(&h0, &["query", &a, "portinfo", "-r", "3"]);
        let addrs: Vec<&str> = ports
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["address"].as_str().unwrap())
            .collect();
        let want: Vec<String> = r.hrs.iter().map(|h| hex(h.0)).collect();
        assert_eq!(addrs, want, "{}: {ports}", r.name);
        for p in ports.as_array().unwrap() {
            assert_eq!(p["mkey"], 0, "protect 1: the key reads as 0 ({p})");
            assert_eq!(p["mkey_protect_bits"], 1, "{p}");
            assert_eq!(p["port_state"], 4, "active: {p}");
        }
        let counters = ok(&h0, &["query", &a, "counters", "-r", "3"]);
        for c in counters.as_array().unwrap() {
            assert!(
                c["counters"]["received"].as_u64().unwrap() > 0,
                "{}: {c}",
                r.name
            );
        }
    }
    // mwctl discover from router ab's own socket finds every router of
    // the lab, each once, their HRs and SANs.
    let ab = lab.plan.admin_socket("ab").unwrap().to_path_buf();
    let (code, d, err) = mwctl(&ab, &["discover", "-r", "3"]);
    assert_eq!(code, 0, "{err} {d}");
    let mut names: Vec<&str> = d["routers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["description"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    let mut want: Vec<&str> = lab.plan.routers.iter().map(|r| r.name.as_str()).collect();
    want.sort_unstable();
    assert_eq!(names, want, "{d}");
    let hrs: usize = lab.plan.routers.iter().map(|r| r.hrs.len()).sum();
    let sans: std::collections::BTreeSet<&String> =
        lab.plan.routers.iter().flat_map(|r| &r.sans).collect();
    assert_eq!(d["counts"]["hrs"], hrs, "{d}");
    assert_eq!(d["counts"]["sans"], sans.len(), "{d}");
    assert_eq!(d["counts"]["unanswered"], 0, "{d}");
    // And every host, on its SAN, by its name.
    assert_eq!(d["counts"]["nodes"], lab.plan.hosts.len(), "{d}");
    for san in d["sans"].as_array().unwrap() {
        assert!(san["mtu"].as_u64().unwrap() > 0, "{san}");
        for n in san["nodes"].as_array().unwrap() {
            let a =
                u16::from_str_radix(n["address"].as_str().unwrap().trim_start_matches("0x"), 16)
                    .unwrap();
            let h = lab.plan.hosts.iter().find(|h| h.address == a);
            assert!(h.is_some(), "{n} is not a host of the lab");
            assert_eq!(n["node_type_name"], "host", "{n}");
        }
    }
    // mwctl links from ab: every HR of every router, each with its LRT's
    // routers across; mwctl errors: every port of every router read.
    let (code, l, err) = mwctl(&ab, &["links", "-r", "3"]);
    assert_eq!(code, 0, "{err} {l}");
    assert_eq!(l["counts"]["routers"], want.len(), "{l}");
    assert_eq!(l["counts"]["hrs"], hrs, "{l}");
    for r in l["routers"].as_array().unwrap() {
        for h in r["hrs"].as_array().unwrap() {
            assert_eq!(h["state_name"], "active", "{l}");
            assert!(h["across"].is_array(), "{l}");
        }
    }
    let (_, e, err) = mwctl(&ab, &["errors", "-r", "3"]);
    assert_eq!(e["counts"]["nodes"], want.len(), "{err} {e}");
    assert_eq!(e["counts"]["unanswered"], 0, "{e}");
    assert_eq!(e["counts"]["ports"], hrs, "{e}");
    assert_eq!(e["counts"]["ports_unanswered"], 0, "{e}");

    // H0 itself, and another host.
    let me = ok(&h0, &["mad", "0x0100", "get", "node_info"]);
    assert_eq!(me["fields"]["node_type"], 1, "{me}");
    let h8 = ok(&h0, &["query", "0x0108", "portinfo", "-r", "3"]);
    assert_eq!(h8[0]["address"], "0x0108", "{h8}");

    // A Set with the wrong key: refused with status 0x0100, counted at ad,
    // trapped to H0 (issued by the HR the request came in by: 0x0119 on A).
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let (code, v, err) = mwctl(
        &h0,
        &[
            "mad",
            "0x011a",
            "set",
            "port_info",
            "-m",
            "0",
            "port_state=down",
            "-k",
            "0x1",
        ],
    );
    assert_eq!(code, 1, "{v} {err}");
    assert_eq!(v["status"], 0x0100, "{v}");
    let m = ok(&ad.socket, &["show", "management"]);
    assert_eq!(m["violations"], 1, "{m}");
    wait_for("trap 256 at H0", 10, || {
        let m = ok(&h0, &["show", "management"]);
        m["notices"].as_array().is_some_and(|n| {
            n.iter()
                .any(|n| n["trap"] == 256 && n["issuer"] == "0x0119")
        })
    });
    let hrs = ok(&ad.socket, &["show", "hrs"]);
    assert_eq!(hrs[0]["up"], true, "unchanged: {hrs}");

    // With the key: ad's port on SAN A down by MAD (sent to its D-side HR),
    // and H0 -> H8 goes around ad.
    ok(
        &h0,
        &[
            "mad",
            "0x011a",
            "set",
            "port_info",
            "-m",
            "0",
            "port_state=down",
            "-k",
            KEY,
            "-r",
            "3",
        ],
    );
    let hrs = ok(&ad.socket, &["show", "hrs"]);
    assert_eq!(hrs[0]["up"], false, "{hrs}");
    wait_for("H0 -> H8 around ad", 15, || {
        let f = mwlab::lab::fibs(&lab.plan, &[]);
        let p = checks::walk(&lab.plan, &f, "H0", "H8");
        p.complete && !p.routers.contains(&"ad".to_string())
    });
    // H0 was redirected to ad for H8 when it asked H8 above; a host forgets
    // a redirect no router repeats within its lifetime.
    std::thread::sleep(mwlab::host::REDIRECT_TTL * 2);
    let flows = checks::traffic(&lab.plan, &[("H0".into(), "H8".into())], 100, 2000).unwrap();
    assert_eq!(flows[0].lost, 0, "{flows:?}");
    // The port change was trapped too (128, from ad).
    wait_for("trap 128 at H0", 10, || {
        let m = ok(&h0, &["show", "management"]);
        m["notices"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n["trap"] == 128))
    });

    // Up again by MAD: the simulator's routes come back.
    ok(
        &h0,
        &[
            "mad",
            "0x011a",
            "set",
            "port_info",
            "-m",
            "0",
            "port_state=up",
            "-k",
            KEY,
            "-r",
            "3",
        ],
    );
    wait_for("the simulator's routes again", 30, || {
        let f = mwlab::lab::fibs(&lab.plan, &[]);
        checks::compare_with_sim(&lab.plan, &f)
            .map(|d| d.is_empty())
            .unwrap_or(false)
    });
    lab.down().unwrap();
}

/// mwctl on `sock` without `--json`: the exit code and the text.
fn mwctl_text(sock: &Path, args: &[&str]) -> (i32, String) {
    let mut all: Vec<String> = ["mwctl", "--socket", &sock.display().to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    let text = String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err);
    (code, text)
}

#[test]
fn discover_saves_appendix_b_and_its_diff_names_a_killed_router() {
    let (mut lab, tmp) = lab();
    let ab = lab.plan.admin_socket("ab").unwrap().to_path_buf();
    let cache = tmp.path().join("appendix-b.json");
    let cache = cache.display().to_string();
    let (code, text) = mwctl_text(&ab, &["discover", "-r", "3", "--cache", &cache]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("7 routers, 5 SANs, 14 HRs, 10 nodes, 0 did not answer"),
        "{text}"
    );
    let (code, text) = mwctl_text(&ab, &["discover", "-r", "3", "--diff", &cache]);
    assert_eq!(code, 0, "{text}");

    // The map page of the lab, loaded by headless Chromium: every router,
    // SAN and host is in the DOM it builds.
    let page = tmp.path().join("appendix-b.html");
    let (code, text) = mwctl_text(
        &ab,
        &["discover", "-r", "3", "--html", &page.display().to_string()],
    );
    assert_eq!(code, 0, "{text}");
    match testkit::chromium::find() {
        None => testkit::skip(
            "mwlab::management::discover_html_in_chromium",
            "chromium is not installed (apt-get install chromium)",
        ),
        Some(bin) => {
            let url = format!("file://{}", page.display());
            let dom =
                testkit::chromium::run(&bin, &tmp.path().join("chromium"), &["--dump-dom"], &url);
            for r in &lab.plan.routers {
                assert!(
                    dom.contains(&format!(">{}</text>", r.name)),
                    "router {}",
                    r.name
                );
            }
            for san in &lab.plan.topology.sans {
                assert!(
                    dom.contains(&format!(">SAN {}</text>", hex(san.id))),
                    "SAN {}",
                    san.name
                );
            }
            for h in &lab.plan.hosts {
                assert!(
                    dom.contains(&format!("id=\"h-{}\"", hex(h.address))),
                    "host {}",
                    hex(h.address)
                );
            }
        }
    }

    // de is the one router on SAN E (H8, H9): killed, the diff names it,
    // its two HRs, SAN E and its hosts.
    let de = lab.plan.routers.iter().find(|r| r.name == "de").unwrap();
    let hrs: Vec<String> = de.hrs.iter().map(|h| hex(h.0)).collect();
    lab.kill_router("de").unwrap();
    let mut last = String::new();
    wait_for("the diff to name de", 30, || {
        let (code, text) = mwctl_text(&ab, &["discover", "-t", "300", "-r", "1", "--diff", &cache]);
        last = text;
        code == mwctl::EXIT_DIFFERS
            && last.contains(&format!("\"de\" gone (HRs {})", hrs.join(", ")))
    });
    for want in [
        "- san 0x0205 gone",
        "\"H8\" 0x0108 on san 0x0205 gone",
        "\"H9\"",
    ] {
        assert!(last.contains(want), "missing {want}: {last}");
    }
    lab.down().unwrap();
}

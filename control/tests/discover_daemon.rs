//! End to end: `mwctl discover` from one of three mwrouterd chained on
//! loopback UDP (a -- SAN 0x0601 -- b -- SAN 0x0603 -- c, each with an HR
//! alone on a SAN of its own) finds every router and SAN; with c stopped,
//! c is listed as not answering and the exit status is 1.

use std::path::Path;

use serde_json::Value;

mod common;

use common::{chained_box as config, mwctl, start_named, wait_for};

/// `mwctl --json discover` with short waits: its exit status and object.
fn discover(sock: &Path) -> (i32, Value) {
    let (code, out, err) = mwctl(sock, &["--json", "discover", "-t", "300", "-r", "1"]);
    let v = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v)
}

#[test]
fn discover_walks_a_chain_and_lists_a_stopped_router() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let [pa, pa2, pb, pb2, pc, pc2] = common::free_ports();
    let (_a, sa) = start_named(
        d,
        "a",
        &config(
            d,
            "a",
            (0x0511, 0x0601, pa, &[pb]),
            (0x0512, 0x0602, pa2, &[]),
        ),
    );
    let (_b, _sb) = start_named(
        d,
        "b",
        &config(
            d,
            "b",
            (0x0521, 0x0601, pb, &[pa]),
            (0x0522, 0x0603, pb2, &[pc]),
        ),
    );
    let (c, _sc) = start_named(
        d,
        "c",
        &config(
            d,
            "c",
            (0x0531, 0x0603, pc, &[pb2]),
            (0x0532, 0x0604, pc2, &[]),
        ),
    );

    let mut last = Value::Null;
    wait_for("discover to find the three routers", 20, || {
        let (code, v) = discover(&sa);
        let done = code == 0 && v["counts"]["routers"] == 3;
        last = v;
        done
    });
    let v = last;
    assert_eq!(v["counts"]["sans"], 4, "{v}");
    assert_eq!(v["counts"]["hrs"], 6, "{v}");
    assert_eq!(v["counts"]["unanswered"], 0, "{v}");
    let names: Vec<&str> = v["routers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["description"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"], "{v}");
    // a's HR on the shared SAN sees b's across it.
    assert_eq!(
        v["routers"][0]["hrs"][0]["routers_across"][0], "0x0521",
        "{v}"
    );
    assert_eq!(v["routers"][0]["reached"]["start"], true, "{v}");
    let san = v["sans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "0x0603")
        .unwrap();
    assert_eq!(san["hrs"].as_array().unwrap().len(), 2, "{v}");

    let (code, text, _) = mwctl(&sa, &["discover", "-t", "300", "-r", "1"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(" \"b\" level D (2 HRs, read at 0x0521, reached by LRT of 0x0511"),
        "{text}"
    );
    assert!(
        text.contains("3 routers, 4 SANs, 6 HRs, 0 nodes, 0 did not answer"),
        "{text}"
    );
    // The same as a Graphviz graph: three routers, four SANs, an edge per HR.
    let (code, dot, _) = mwctl(&sa, &["discover", "--dot", "-t", "300", "-r", "1"]);
    assert_eq!(code, 0, "{dot}");
    assert!(dot.starts_with("graph messageway {"), "{dot}");
    assert_eq!(
        dot.matches("[shape=box, style=\"rounded,filled\"").count(),
        3,
        "{dot}"
    );
    assert_eq!(
        dot.matches("[shape=ellipse, style=filled").count(),
        4,
        "{dot}"
    );
    assert_eq!(dot.matches(" -- \"san-").count(), 6, "{dot}");

    // Saved now, compared with later: no difference yet.
    let cache = d.join("net.json");
    let cache_s = cache.display().to_string();
    let (code, _, err) = mwctl(&sa, &["discover", "-t", "300", "--cache", &cache_s]);
    assert_eq!(code, 0, "{err}");
    let (code, text, _) = mwctl(&sa, &["discover", "-t", "300", "--diff", &cache_s]);
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("0 differences from "), "{text}");

    // c stopped: b's LRT still lists it; discover tries it, lists it as
    // not answering, prints the rest and exits 1.
    drop(c);
    let (code, v) = discover(&sa);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["counts"]["routers"], 2, "{v}");
    assert_eq!(v["unanswered"][0]["answered"], false, "{v}");
    assert_eq!(v["unanswered"][0]["address"], "0x0531", "{v}");
    assert_eq!(v["unanswered"][0]["reached"]["hr"], "0x0522", "{v}");
    let (code, text, err) = mwctl(&sa, &["discover", "-t", "300", "-r", "1"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no answer from 0x0531"), "{text}");
    assert!(
        text.contains("2 routers, 3 SANs, 4 HRs, 0 nodes, 1 did not answer"),
        "{text}"
    );
    assert!(err.contains("did not answer"), "{err}");
    // --diff names c, its HRs and the address that did not answer, and
    // the SAN only c was on; exit 4.
    let (code, text, _) = mwctl(
        &sa,
        &["discover", "-t", "300", "-r", "1", "--diff", &cache_s],
    );
    assert_eq!(code, 4, "{text}");
    assert!(
        text.contains("\"c\" gone (HRs 0x0531, 0x0532), no answer at 0x0531"),
        "{text}"
    );
    assert!(text.contains("- san 0x0604 gone"), "{text}");
    assert!(text.contains("2 differences from "), "{text}");
    let (code, v) = {
        let (code, out, _) = mwctl(
            &sa,
            &["--json", "discover", "-t", "300", "--diff", &cache_s],
        );
        (code, serde_json::from_str::<Value>(&out).unwrap())
    };
    assert_eq!(code, 4, "{v}");
    assert_eq!(v["changes"][0]["what"], "router", "{v}");
    assert_eq!(v["changes"][0]["router"]["description"], "c", "{v}");

    // No daemon: exit 3.
    let (code, _, _) = mwctl(&d.join("nobody.sock"), &["discover"]);
    assert_eq!(code, 3);
}

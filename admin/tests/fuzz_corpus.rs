//! Replays the checked-in corpus of the cargo-fuzz target `admin_request`
//! (`fuzz/corpus/admin_request/*`) through `admin::fuzzing::request`, so
//! that the stable test suite runs the same checks as the fuzz target,
//! crash reproducers included.
//!
//! The seeds are the request lines of docs/admin-protocol.md, a request
//! of every command and `show` target, a few refused lines, and a session
//! of several lines. The ignored test `write_seed_corpus` (re)writes them
//! and leaves any other file (a minimised crash, what `fuzz/run-all`
//! merged) alone:
//! `cargo test -p admin --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use admin::fuzzing;
use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> PathBuf {
    workspace().join("fuzz/corpus/admin_request")
}

/// A request of every command and `show` target, and refused lines.
const LINES: [(&str, &str); 35] = [
    (
        "show-router",
        r#"{"v":1,"id":1,"cmd":"show","what":"router"}"#,
    ),
    ("show-config", r#"{"v":1,"cmd":"show","what":"config"}"#),
    ("show-hrs", r#"{"v":1,"cmd":"show","what":"hrs"}"#),
    ("show-ports", r#"{"v":1,"cmd":"show","what":"ports"}"#),
    (
        "show-lrt",
        r#"{"v":1,"cmd":"show","what":"lrt","port":"0x0115"}"#,
    ),
    (
        "show-rts",
        r#"{"v":1,"cmd":"show","what":"rts","port":1,"san":"0x0202"}"#,
    ),
    ("show-routes", r#"{"v":1,"cmd":"show","what":"routes"}"#),
    ("show-fib", r#"{"v":1,"cmd":"show","what":"fib","port":0}"#),
    (
        "show-neighbors",
        r#"{"v":1,"cmd":"show","what":"neighbors"}"#,
    ),
    (
        "show-counters",
        r#"{"v":1,"cmd":"show","what":"counters","port":1}"#,
    ),
    (
        "show-route",
        r#"{"v":1,"cmd":"show","what":"route","dst":"0x0102"}"#,
    ),
    (
        "show-management",
        r#"{"v":1,"cmd":"show","what":"management"}"#,
    ),
    ("show-mcast", r#"{"v":1,"cmd":"show","what":"mcast"}"#),
    ("show-workers", r#"{"v":1,"cmd":"show","what":"workers"}"#),
    ("show-punt", r#"{"v":1,"cmd":"show","what":"punt"}"#),
    (
        "port-down",
        r#"{"v":1,"id":2,"cmd":"port","port":1,"state":"down"}"#,
    ),
    (
        "route-add",
        r#"{"v":1,"cmd":"route","op":"add","port":1,"dst":"0x0103","native":"02:00:00:00:01:03","name":"h3","router":true,"groups":["0x8001"]}"#,
    ),
    (
        "route-del",
        r#"{"v":1,"cmd":"route","op":"del","port":0,"dst":"0x0101"}"#,
    ),
    (
        "clear",
        r#"{"v":1,"cmd":"clear","what":"counters","port":0}"#,
    ),
    ("log-level", r#"{"v":1,"cmd":"log_level","level":"trace"}"#),
    ("reload", r#"{"v":1,"cmd":"reload"}"#),
    (
        "capture",
        r#"{"v":1,"id":3,"cmd":"capture","port":0,"count":4,"drops":true,"snaplen":64}"#,
    ),
    (
        "trace-packets",
        r#"{"v":1,"id":4,"cmd":"trace_packets","port":"0x0115","count":3,"dst":"0x0102","only":"l3","timeout_ms":1000}"#,
    ),
    (
        "trace-count-zero",
        r#"{"v":1,"cmd":"trace_packets","count":0}"#,
    ),
    ("stats", r#"{"v":1,"cmd":"stats"}"#),
    (
        "stats-prometheus",
        r#"{"v":1,"cmd":"stats","format":"prometheus"}"#,
    ),
    ("version", r#"{"v":1,"cmd":"version"}"#),
    (
        "mad-get",
        r#"{"v":1,"cmd":"mad","dst":"0x0115","attribute":"node_info"}"#,
    ),
    (
        "mad-set-data",
        r#"{"v":1,"cmd":"mad","dst":"0x0116","method":"set","attribute":"port_info","modifier":1,"data":"00 01 02 03","timeout_ms":10,"retries":0}"#,
    ),
    (
        "mad-dr",
        r#"{"v":1,"cmd":"mad","dr":[{"hr":"0x0115","native":"02:00:00:00:01:17"}],"attribute":"PortCounters","class":"subn_dr"}"#,
    ),
    (
        "mad-via",
        r#"{"v":1,"cmd":"mad","via":"0x0117","route":["0x011a@127.0.0.1:4001"],"attribute":"source_route","mkey":"12345"}"#,
    ),
    ("bad-json", r#"{"v":1,"cmd":"show""#),
    ("bad-version", r#"{"v":2,"id":9,"cmd":"show","what":"hrs"}"#),
    ("bad-command", r#"{"v":1,"cmd":"shutdown"}"#),
    (
        "bad-field",
        r#"{"v":1,"cmd":"show","what":"lrt","port":0,"x":1}"#,
    ),
];

/// The request lines of docs/admin-protocol.md: every JSON object that
/// starts with `{"v"` and has a `cmd`.
fn doc_lines() -> Vec<String> {
    let doc = fs::read_to_string(workspace().join("docs/admin-protocol.md")).expect("the doc");
    let mut out = Vec::new();
    for line in doc.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("{\"v\"") {
            rest = &rest[at..];
            let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let used = it.byte_offset();
                    if v.get("cmd").is_some() {
                        out.push(rest[..used].to_string());
                    }
                    rest = &rest[used..];
                }
                _ => rest = &rest[1..],
            }
        }
    }
    out
}

/// The seeds: (file name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = LINES
        .iter()
        .map(|(n, l)| ((*n).to_string(), l.as_bytes().to_vec()))
        .collect();
    for (i, l) in doc_lines().into_iter().enumerate() {
        out.push((format!("doc-{i}"), l.into_bytes()));
    }
    // A session: a route added, then shown, a bad line, CRLF endings.
    let session = [LINES[15].1, LINES[4].1, "not json", LINES[17].1, LINES[9].1];
    out.push(("session".into(), session.join("\r\n").into_bytes()));
    out
}

#[test]
fn replay_corpus() {
    testkit::corpus::replay("admin_request", &corpus(), fuzzing::request);
}

#[test]
fn seeds_are_on_disk() {
    assert!(doc_lines().len() >= 3, "the doc's request lines");
    for (name, bytes) in seeds() {
        let parsed = admin::Request::parse(&bytes);
        assert_eq!(
            parsed.is_ok(),
            !name.starts_with("bad-") && name != "session",
            "{name}: {parsed:?}"
        );
        fuzzing::request(&bytes);
        let on_disk = fs::read(corpus().join(&name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}; run `cargo test -p admin --test fuzz_corpus -- --ignored write_seed_corpus`"
            )
        });
        assert!(on_disk == bytes, "{name} differs from its source");
    }
}

#[test]
#[ignore = "writes fuzz/corpus/admin_request/"]
fn write_seed_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).expect("corpus directory");
    for (name, bytes) in seeds() {
        fs::write(dir.join(name), bytes).expect("seed written");
    }
}

//! End to end: a SAN manager's partitions file (docs/partitions.md). A
//! daemon with a manager reads `management.partitions_file` at start;
//! `mwctl san partitions` lists the partitions in force. A broken file,
//! reloaded, is refused whole with its errors and their lines, logged in
//! one line, and the partitions in force stay; the reload itself applies.
//! The file fixed, a reload that changes nothing else in the configuration
//! takes it.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

mod common;

use common::{free_ports, mwctl, mwctl_all};

const GOOD: &str = "\
# partitions of SAN 0x0601
Default=0x7fff : ALL_ROUTERS=full, SELF=full ;
tenant_a=0x0010, defmember=full : 0x0000000000000100, 0x0000000000000104 ;
tenant_b=0x0020 : 0x0000000000000102=full, 0x0000000000000108=limited ;
";

const BROKEN: &str = "\
Default=0x7fff : ALL=full ;
nokey : 0x0000000000000100 ;
tenant_c=0x0030 : 0x0000000000000100=sometimes ;
tenant_d=0x8000 : ALL ;
";

const FIXED: &str = "\
Default=0x7fff : ALL=full ;
tenant_c=0x0030 : 0x0000000000000100=full, 0x000000000000010a ;
";

fn partitions(sock: &Path) -> Value {
    let (code, out, err) = mwctl(sock, &["--json", "san", "partitions"]);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn keys(v: &Value) -> Vec<String> {
    v["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no partitions: {v}"))
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_last_good_partitions_file_stays_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partitions.conf");
    std::fs::write(&file, GOOD).unwrap();
    let [a, b] = free_ports();
    let mut c = common::two_hr_box("parts", dir.path(), [a, b], [&[], &[]]);
    c.management.manager_priority = Some(5);
    c.management.partitions_file = Some(file.clone());
    let cfg = dir.path().join("parts.toml");
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let sock = dir.path().join("mw.sock");
    let log = dir.path().join("stderr");
    let _daemon = common::start(&cfg, &sock, Stdio::from(File::create(&log).unwrap()));
    let name = file.display().to_string();

    // At start: the file's partitions.
    let v = partitions(&sock);
    assert_eq!(keys(&v), ["0x7fff", "0x0010", "0x0020"], "{v}");
    assert_eq!(v["file"], name.as_str(), "{v}");
    assert_eq!(v["loaded_from"], name.as_str(), "{v}");
    assert!(v["refused"].is_null(), "{v}");
    assert_eq!(
        v["partitions"][2]["members"],
        serde_json::json!(["0x0000000000000102=full", "0x0000000000000108=limited"]),
        "{v}"
    );
    let (code, text) = mwctl_all(&sock, &["san", "partitions"]);
    assert_eq!(code, 0, "{text}");
    eprintln!("mwctl san partitions (from the file):\n{text}");
    assert!(
        text.contains(&format!("from the partitions file {name}, read at ")),
        "{text}"
    );

    // A broken file: the reload applies, the file is refused, the
    // partitions in force stay.
    std::fs::write(&file, BROKEN).unwrap();
    // A dry run says so before, the reload when it applies.
    let (code, out) = mwctl_all(&sock, &["reload", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("not taken:") && out.contains("refused (3 errors)") && out.contains("line 2:"),
        "{out}"
    );
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "the reload is not refused: {out}");
    assert!(out.contains("refused (3 errors)"), "{out}");
    let v = partitions(&sock);
    assert_eq!(keys(&v), ["0x7fff", "0x0010", "0x0020"], "{v}");
    assert_eq!(v["loaded_from"], name.as_str(), "{v}");
    let r = &v["refused"];
    assert_eq!(r["file"], name.as_str(), "{v}");
    assert_eq!(r["count"], 3, "{v}");
    let errors: Vec<&str> = r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(errors[0].starts_with("line 2: "), "{errors:?}");
    assert!(errors[1].starts_with("line 3: "), "{errors:?}");
    assert!(errors[2].starts_with("line 4: "), "{errors:?}");
    let (code, text) = mwctl_all(&sock, &["san", "partitions"]);
    assert_eq!(code, 0, "{text}");
    eprintln!("mwctl san partitions (a broken file reloaded):\n{text}");
    assert!(
        text.contains(&format!("partitions file {name} refused at "))
            && text.contains(": 3 errors; the partitions in force did not change:\n  line 2: "),
        "{text}"
    );
    assert!(text.contains("tenant_b"), "{text}");
    // One log line for the refusal.
    let logged = std::fs::read_to_string(&log).unwrap();
    let refusals: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("partitions file refused"))
        .collect();
    assert_eq!(refusals.len(), 1, "{logged}");
    assert!(refusals[0].contains("line 2: "), "{logged}");

    // Fixed: the next reload (the configuration unchanged) takes it.
    std::fs::write(&file, FIXED).unwrap();
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}");
    let v = partitions(&sock);
    assert_eq!(keys(&v), ["0x7fff", "0x0030"], "{v}");
    assert!(v["refused"].is_null(), "{v}");
    assert_eq!(
        v["partitions"][1]["members"],
        serde_json::json!(["0x0000000000000100=full", "0x000000000000010a=limited"]),
        "{v}"
    );
    let (_, text) = mwctl_all(&sock, &["san", "partitions"]);
    eprintln!("mwctl san partitions (fixed and reloaded):\n{text}");
    assert!(!text.contains("refused"), "{text}");
}

#[test]
fn mwrouterd_check_names_every_error_of_the_partitions_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partitions.conf");
    let [a, b] = free_ports();
    let mut c = common::two_hr_box("parts", dir.path(), [a, b], [&[], &[]]);
    c.management.manager_priority = Some(5);
    c.management.partitions_file = Some(file.clone());
    let cfg = dir.path().join("parts.toml");
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let check = || {
        std::process::Command::new(common::mwrouterd())
            .args(["--check", "--config"])
            .arg(&cfg)
            .output()
            .unwrap()
    };
    std::fs::write(&file, GOOD).unwrap();
    let out = check();
    assert!(out.status.success(), "{out:?}");
    std::fs::write(&file, BROKEN).unwrap();
    let out = check();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for line in ["line 2:", "line 3:", "line 4:"] {
        assert!(
            err.contains(&format!(
                "management.partitions_file: {}: {line}",
                file.display()
            )),
            "{err}"
        );
    }
}

#[test]
fn a_standby_without_a_file_holds_the_masters_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partitions.conf");
    std::fs::write(&file, GOOD).unwrap();
    let [pa, pb, la, lb] = free_ports();
    // Two boxes on SAN 0x0601: a's manager (priority 7) has the file, b's
    // (priority 5) none.
    let mut a = common::chained_box(
        dir.path(),
        "a",
        (0x0511, 0x0601, pa, &[pb]),
        (0x0512, 0x0602, la, &[]),
    );
    a.management.manager_priority = Some(7);
    a.management.manager_hrs = vec![rrp::Address(0x0511)];
    a.management.partitions_file = Some(file.clone());
    let mut b = common::chained_box(
        dir.path(),
        "b",
        (0x0521, 0x0601, pb, &[pa]),
        (0x0522, 0x0603, lb, &[]),
    );
    b.management.manager_priority = Some(5);
    b.management.manager_hrs = vec![rrp::Address(0x0521)];
    let (_a, sa) = common::start_named(dir.path(), "a", &a);
    let (_b, sb) = common::start_named(dir.path(), "b", &b);
    common::wait_for("b's copy of a's partitions", 20, || {
        partitions(&sb)["copies"][0]["master"] == "0x0511"
    });
    let v = partitions(&sb);
    // b's own: the default; its manager's: a's file.
    assert_eq!(keys(&v), ["0x7fff"], "{v}");
    let c = &v["copies"][0];
    assert_eq!(c["same_as_own"], false, "{v}");
    let copied: Vec<&str> = c["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(copied, ["0x7fff", "0x0010", "0x0020"], "{v}");
    // a, the master, gives its own file and holds no copy.
    assert!(partitions(&sa)["copies"].is_null(), "{}", partitions(&sa));
    let (code, text) = mwctl_all(&sb, &["san", "partitions"]);
    assert_eq!(code, 0, "{text}");
    eprintln!("mwctl san partitions (a standby without a file):\n{text}");
    assert!(
        text.contains("gives the partitions copied from the master 0x0511 at ")
            && text.contains("tenant_b"),
        "{text}"
    );
}

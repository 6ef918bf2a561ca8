//! Replays the checked-in corpus of the cargo-fuzz target `config`
//! (`fuzz/corpus/config/*`) through `control::config::fuzzing::config`, so
//! that the stable test suite runs the same checks as the fuzz target,
//! crash reproducers included.
//!
//! The seeds are the example files (`examples/*.toml`: mwrouterd's
//! configurations and, as more TOML, the simulator's topologies), a file with
//! every section and one with its keys in key files (which the fuzz body
//! reads through `fuzzing::FileNameKeys`: no file is read), each
//! configuration as `Config::to_toml` spells it out, and a few refused
//! files. The ignored test `write_seed_corpus` (re)writes them and leaves
//! any other file (a minimised crash, what `fuzz/run-all` merged) alone:
//! `cargo test -p control --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use control::config::Config;
use control::config::fuzzing::{self, FileNameKeys};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> PathBuf {
    workspace().join("fuzz/corpus/config")
}

/// What to run when a seed is missing or out of date.
const REGENERATE: &str =
    "run `cargo test -p control --test fuzz_corpus -- --ignored write_seed_corpus`";

/// A configuration with every section and most keys set.
const FULL: &str = r#"[router]
name = "fuzz"
router_cost = 2
k = 3
sn_seed = 7

[workers]
count = 2
owners = [0, 1]
idle = "busy-poll"

[timers]
sweep_ms = 5000

[rates]
notice_per_s = 500

[rates.punt]
management = { per_s = 1000, burst = 64 }

[admin]
socket = "/tmp/mw.sock"
mode = 0o600
readonly_group = "mwread"
prometheus_listen = "127.0.0.1:9461"

[log]
level = "debug"
format = "json"

[management]
identity = "0x0123456789abcdef"
description = "rack 4"
mkey = "0x1122334455667788"
protect = 2
lease_s = 60
manager = 0x0120
drop_threshold = 1000
traps_per_s = 5
manager_priority = 3
manager_hrs = [0x0101]
address_pools = [{ hr = 0x0101, first = 0x0140, last = 0x0150 }]
partitions_file = "/etc/mwrouter/partitions.conf"

[[hr]]
name = "a"
address = 0x0101
san_id = 0x0201
mtu = 1500
cost = 1
[hr.port]
backend = "udp"
bind = "127.0.0.1:35001"
members = ["127.0.0.1:35002"]
[[hr.static]]
address = 0x0103
native = "127.0.0.1:35003"
name = "h3"

[[hr]]
address = 0x0102
san_id = 0x0202
mtu = 9000
[hr.port]
backend = "udp"
bind = "[::1]:35001"
"#;

/// `FULL` with its keys in key files (`fuzzing::FileNameKeys`: a file holds
/// its name), and authentication on its first HR, one key inline and one in a
/// file.
fn key_files() -> String {
    FULL.replace(
        "mkey = \"0x1122334455667788\"",
        "mkey_file = \"/etc/mwrouter/keys/0x1122334455667788\"\nsm_key_file = \"/etc/mwrouter/keys/4660\"",
    )
    .replace(
        "members = [\"127.0.0.1:35002\"]\n",
        "members = [\"127.0.0.1:35002\"]\n[hr.auth]\nsend_key = 2\nkeys = [{ id = 1, secret = \"00112233445566778899aabbccddeeff\" }, { id = 2, secret_file = \"/etc/mwrouter/keys/ffeeddccbbaa99887766554433221100\" }]\n",
    )
}

/// The seeds: (file name, text).
fn seeds() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut texts = Vec::new();
    for p in testkit::corpus::files(&workspace().join("examples")) {
        if p.extension().is_some_and(|e| e == "toml") {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let text = fs::read_to_string(&p).expect("readable example");
            texts.push((name.clone(), text.clone()));
            out.push((format!("example-{name}"), text));
        }
    }
    texts.push(("full.toml".into(), FULL.into()));
    out.push(("full.toml".into(), FULL.into()));
    texts.push(("key-files.toml".into(), key_files()));
    out.push(("key-files.toml".into(), key_files()));
    for (name, text) in &texts {
        if let Ok(c) = Config::from_toml_with(text, &FileNameKeys) {
            out.push((format!("emitted-{name}"), c.to_toml()));
        }
    }
    // Refused files: a syntax error, an unknown key, a bad value, a key
    // file named by a relative path.
    out.push(("bad-syntax.toml".into(), "[router\nname = \"x\"\n".into()));
    out.push((
        "bad-unknown-key.toml".into(),
        "[router]\nname = \"x\"\nnmae = 1\n".into(),
    ));
    out.push((
        "bad-value.toml".into(),
        FULL.replace("mtu = 9000", "mtu = 12"),
    ));
    out.push((
        "bad-key-file.toml".into(),
        key_files().replace("/etc/mwrouter/keys/4660", "keys/4660"),
    ));
    out
}

#[test]
fn replay_corpus() {
    testkit::corpus::replay("config", &corpus(), fuzzing::config);
}

#[test]
fn seeds_are_on_disk() {
    let full = Config::from_toml(FULL).unwrap_or_else(|e| panic!("FULL is refused: {e}"));
    assert_eq!(full.hrs.len(), 2);
    // The key-file seed is accepted, its keys read from the files' names.
    let keyed = Config::from_toml_with(&key_files(), &FileNameKeys)
        .unwrap_or_else(|e| panic!("key-files.toml is refused: {e}"));
    assert_eq!(keyed.management.mkey, 0x1122_3344_5566_7788);
    assert_eq!(keyed.management.sm_key, 4660);
    assert_eq!(keyed.hrs[0].key_files.len(), 1);
    let emitted = keyed.to_toml();
    assert!(emitted.contains("mkey_file = "), "{emitted}");
    assert!(emitted.contains("secret_file = "), "{emitted}");
    assert!(
        Config::from_toml_with(
            &key_files().replace("/etc/mwrouter/keys/4660", "keys/4660"),
            &FileNameKeys
        )
        .is_err()
    );
    for (name, text) in seeds() {
        fuzzing::config(text.as_bytes());
        let on_disk = fs::read_to_string(corpus().join(&name))
            .unwrap_or_else(|e| panic!("fuzz/corpus/config/{name}: {e}; {REGENERATE}"));
        // Byte for byte, the emitted forms included: a change of
        // `Config::to_toml` (a new key) is written to the corpus with it.
        assert!(
            on_disk == text,
            "fuzz/corpus/config/{name} differs from what it is made from; {REGENERATE}"
        );
    }
}

#[test]
#[ignore = "writes fuzz/corpus/config/"]
fn write_seed_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).expect("corpus directory");
    for (name, text) in seeds() {
        fs::write(dir.join(name), text).expect("seed written");
    }
}

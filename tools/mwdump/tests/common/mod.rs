//! Helpers shared by the end-to-end tests: run the mwdump binary.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

/// What a run of mwdump gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout lines parsed as JSON objects.
    pub fn json(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\nstderr: {}", self.stderr));
                assert!(v.is_object(), "not an object: {l}");
                v
            })
            .collect()
    }
}

/// Runs mwdump with `args` and `stdin`.
pub fn mwdump(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mwdump"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mwdump");
    {
        let mut si = child.stdin.take().expect("stdin");
        // The child may exit before reading; a broken pipe is fine.
        let _ = si.write_all(stdin);
    }
    let out = child.wait_with_output().expect("wait for mwdump");
    let run = Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "mwdump panicked: {}",
        run.stderr
    );
    run
}

/// `mwdump --json --hex HEX` (plus `extra` arguments first).
pub fn json_hex(extra: &[&str], hex: &str) -> Run {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--hex", hex]);
    mwdump(&args, b"")
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A scratch file in the temporary directory, unique to this test process
/// and `name`, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// The path.
    pub fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A scratch file path (see [`Scratch`]).
pub fn scratch(name: &str) -> Scratch {
    Scratch(std::env::temp_dir().join(format!("mwdump-test-{}-{name}", std::process::id())))
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The top-level keys every decoded packet's JSON object has (docs/mwdump.md).
pub const PACKET_KEYS: &[&str] = &[
    "index",
    "timestamp",
    "linktype",
    "link",
    "frame_len",
    "orig_len",
    "encap",
    "packet_offset",
    "packet_len",
    "padding_len",
    "kind",
    "l2rhs",
    "header",
    "data_len",
    "data_hex",
    "data_truncated",
    "ei",
    "ei_hex",
    "message",
    "mad",
];

/// The keys of `header`.
pub const HEADER_KEYS: &[&str] = &[
    "offset",
    "dst",
    "dst_class",
    "priority",
    "version",
    "packet_type",
    "packet_class",
    "type_ext",
    "type_name",
    "e",
    "little_endian",
    "swap_bits",
    "pad_len",
    "data_words",
    "src",
    "src_class",
    "free",
];

/// Asserts that `v` is a decoded packet with exactly the documented keys.
pub fn assert_packet_shape(v: &Value) {
    let obj = v.as_object().expect("object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    let mut want = PACKET_KEYS.to_vec();
    let mut got = keys.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want, "top-level keys of {v}");
    let h = v["header"].as_object().expect("header object");
    let mut hk: Vec<&str> = h.keys().map(String::as_str).collect();
    let mut hw = HEADER_KEYS.to_vec();
    hk.sort_unstable();
    hw.sort_unstable();
    assert_eq!(hk, hw, "header keys");
    for k in [
        "index",
        "frame_len",
        "packet_offset",
        "packet_len",
        "padding_len",
        "data_len",
        "ei",
    ] {
        assert!(v[k].is_u64(), "{k} is a plain number in {v}");
    }
    for k in [
        "dst",
        "src",
        "packet_type",
        "type_ext",
        "free",
        "data_words",
    ] {
        assert!(v["header"][k].is_u64(), "header.{k} is a plain number");
    }
    if let Some(m) = v["message"].as_object() {
        for k in ["kind", "description", "records", "rt_part", "enclosed"] {
            assert!(m.contains_key(k), "message.{k} in {v}");
        }
        for r in m["records"].as_array().expect("records") {
            for k in ["offset", "rtyp", "type", "pl", "rl", "role", "node"] {
                assert!(r.get(k).is_some(), "record.{k} in {r}");
            }
        }
    }
}

//! Every draft vector in rrp/tests/vectors decodes (Appendix C, Part-3).
//! The `.as-printed.hex` variants keep the draft's slips and are not
//! required to decode; part1-l2rh.hex is a bare L2RH, not a packet.

mod common;

use std::path::PathBuf;

use common::*;

fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rrp/tests/vectors")
}

fn vectors() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(vector_dir())
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "hex"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn name(p: &std::path::Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn appendix_c_vectors_are_present() {
    let names: Vec<String> = vectors().iter().map(|p| name(p)).collect();
    for i in 1..=9 {
        let want = format!("appc-{i}.hex");
        assert!(
            names.contains(&want),
            "{want} missing from {}",
            vector_dir().display()
        );
    }
}

#[test]
fn every_vector_decodes() {
    let all = vectors();
    let mut decoded = 0;
    for path in &all {
        let n = name(path);
        if n.contains(".as-printed.") {
            // Kept as printed; they may or may not decode, but never panic.
            let text = std::fs::read_to_string(path).unwrap();
            let run = json_hex(&[], &text);
            assert!(run.code == 0 || run.code == 1, "{n}: exit {}", run.code);
            run.json();
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let run = json_hex(&[], &text);
        if n == "part1-l2rh.hex" {
            // A bare L2RH: no EEP header follows it.
            assert_eq!(run.code, 1, "{n}");
            let v = run.json();
            assert_eq!(v[0]["error"]["field"], "packet");
            assert_eq!(v[0]["error"]["offset"], 16);
            continue;
        }
        assert_eq!(run.code, 0, "{n}: {}", run.stderr);
        let v = run.json();
        assert_eq!(v.len(), 1, "{n}");
        let v = &v[0];
        assert_packet_shape(v);
        assert_eq!(v["padding_len"], 0, "{n}: the vector is exactly one packet");
        let kind = v["kind"].as_str().unwrap();
        if n == "appc-9.hex" {
            // The L2 data packet: one L2RH {3,0,3,0}, little-endian 64-bit data.
            assert_eq!(kind, "USER");
            assert_eq!(v["l2rhs"].as_array().unwrap().len(), 1);
            assert_eq!(v["l2rhs"][0]["content_hex"], "03000300");
            assert_eq!(v["l2rhs"][0]["hop"], serde_json::Value::Null);
            assert_eq!(v["header"]["little_endian"], true);
            assert_eq!(v["header"]["swap_bits"], 64);
        } else if n.starts_with("appc-") || n.starts_with("part3-rrp") {
            assert!(kind.starts_with("RRP#"), "{n}: {kind}");
        } else if n.starts_with("part3-err") {
            assert!(kind.starts_with("ERR "), "{n}: {kind}");
        }
        // The text view decodes it too.
        let t = mwdump(&["--hex", &text], b"");
        assert_eq!(t.code, 0, "{n}");
        assert!(t.stdout.contains(kind));
        decoded += 1;
    }
    // Appendix C steps (1)..(8) are RRP messages; check their kinds.
    let expect = [
        "RRP#4", "RRP#5", "RRP#6", "RRP#3", "RRP#4", "RRP#5", "RRP#1", "RRP#2",
    ];
    for (i, k) in expect.iter().enumerate() {
        let p = vector_dir().join(format!("appc-{}.hex", i + 1));
        if let Ok(text) = std::fs::read_to_string(&p) {
            assert_eq!(json_hex(&[], &text).json()[0]["kind"], *k, "appc-{}", i + 1);
        }
    }
    assert!(decoded > 0 || all.is_empty());
}

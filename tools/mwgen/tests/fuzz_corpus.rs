//! Replays the checked-in corpus of mwgen's fuzz targets (`fuzz/corpus/probe`,
//! `fuzz/corpus/mwgen_pcap`) through the same checks, so that the stable test
//! suite keeps what fuzzing found.

use std::path::Path;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut v: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(!v.is_empty(), "{} is empty", dir.display());
    v.sort();
    v
}

#[test]
fn probe_corpus() {
    for d in corpus("probe") {
        assert_eq!(
            mwgen::probe::read(&d),
            mwgen::probe::read_slow(&d),
            "{d:02x?}"
        );
    }
}

#[test]
fn pcap_corpus() {
    for d in corpus("mwgen_pcap") {
        if let Ok(t) = mwgen::pcap::read(&d, rrp::LinkKind::Ethernet) {
            for t in t {
                assert!(t.frame_len >= t.bytes.len());
                if let Some(h) = t.hdr {
                    let mut b = t.bytes.clone();
                    mwgen::probe::patch(&mut b, h, 1, 2);
                    assert!(matches!(
                        mwgen::probe::read(&b),
                        mwgen::probe::Received::Probe(_)
                    ));
                }
            }
        }
    }
}

//! Replays the checked-in corpus of the cargo-fuzz target `mgmt_station`
//! (`fuzz/corpus/mgmt_station/*`) through `mgmt::fuzzing::station`, so that
//! the stable test suite runs the same checks as the fuzz target, crash
//! reproducers included.
//!
//! The seeds: time passing alone (the manager's discovery), answers of
//! zeros to what the station sent, and the vectors of
//! `mgmt/tests/vectors/*.hex` as MADs from a member and as answers. The
//! ignored test `write_seed_corpus` (re)writes them and leaves any other
//! file alone:
//! `cargo test -p mgmt --test fuzz_corpus_station -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use mgmt::fuzzing;
use mgmt::wire::MAD_LEN;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> PathBuf {
    manifest().join("../fuzz/corpus/mgmt_station")
}

/// Bytes of a `.hex` vector: hex digits, whitespace, `#` comments.
fn hex_file(p: &Path) -> Vec<u8> {
    let text = fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let digits: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .collect();
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex"))
        .collect()
}

/// One record: the control byte and a MAD cut or padded to 256 bytes.
fn record(ctl: u8, mad: &[u8]) -> Vec<u8> {
    let mut r = vec![ctl];
    r.extend_from_slice(&mad[..mad.len().min(MAD_LEN)]);
    r.resize(MAD_LEN + 1, 0);
    r
}

/// The seeds: (file name, bytes). The first byte: manager priority 15,
/// protect level 1.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let zeros = [0u8; MAD_LEN];
    let mut out = Vec::new();
    let mut time = vec![0xF1];
    for _ in 0..8 {
        time.extend(record(7, &zeros));
    }
    out.push(("time".to_string(), time));
    let mut answers = vec![0xF1];
    for i in 0..8u8 {
        answers.extend(record(7, &zeros));
        answers.extend(record(0x08 | (i << 4), &zeros));
    }
    out.push(("answers-of-zeros".to_string(), answers));
    for p in testkit::corpus::files(&manifest().join("tests/vectors")) {
        let name = p.file_stem().expect("name").to_string_lossy().into_owned();
        let mad = hex_file(&p);
        // A packet vector carries its MAD after the EEP header.
        let mad = if name.starts_with("packet-") {
            mad.get(16..).unwrap_or_default().to_vec()
        } else {
            mad
        };
        let mut v = vec![0x31];
        v.extend(record(3, &mad));
        v.extend(record(0x0B, &mad));
        v.extend(record(0x1F, &mad));
        out.push((format!("vector-{name}"), v));
    }
    out
}

#[test]
fn replay_corpus() {
    testkit::corpus::replay("mgmt_station", &corpus(), fuzzing::station);
}

#[test]
fn seeds_are_on_disk() {
    for (name, bytes) in seeds() {
        fuzzing::station(&bytes);
        let on_disk = fs::read(corpus().join(&name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}; run `cargo test -p mgmt --test fuzz_corpus_station -- --ignored write_seed_corpus`"
            )
        });
        assert!(on_disk == bytes, "{name} differs from its source");
    }
}

#[test]
#[ignore = "writes fuzz/corpus/mgmt_station/"]
fn write_seed_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).expect("corpus directory");
    for (name, bytes) in seeds() {
        fs::write(dir.join(name), bytes).expect("seed written");
    }
}

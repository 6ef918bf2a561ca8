//! Replays the checked-in fuzz corpus through `mgmt::fuzzing::mad`,
//! `mgmt::fuzzing::agent`, `mgmt::fuzzing::groups` and
//! `mgmt::fuzzing::subscriptions`, so that the stable test suite runs the
//! same checks as the cargo-fuzz targets `mad`, `mgmt_agent`,
//! `mcast_groups` and `mgmt_subscriptions`, crash reproducers included. Every directory of `fuzz/corpus/` is
//! replayed (the other targets' inputs are packets and records: more
//! arbitrary bytes for the MAD parsers); `fuzz/corpus/mad/` must exist and
//! hold the seeds.
//!
//! The seeds are the byte-exact vectors of `mgmt/tests/vectors/*.hex` as
//! binary files (`vector-<name>`), plus regressions written here. The
//! ignored test `write_seed_corpus` (re)writes them:
//! `cargo test -p mgmt --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use mgmt::fuzzing;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_root() -> PathBuf {
    manifest().join("../fuzz/corpus")
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

/// The seeds: (file name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in testkit::corpus::files(&manifest().join("tests/vectors")) {
        let name = p.file_stem().expect("name").to_string_lossy().into_owned();
        out.push((format!("vector-{name}"), hex_file(&p)));
    }
    let dr = hex_file(&manifest().join("tests/vectors/dr-getresp-port-info-returning.hex"));
    // Regression: a ReturnPath whose last entry read is all zero, with
    // bytes after it (found by proptest; the entry is padding).
    let mut r = dr.clone();
    r[192..256].fill(0);
    r[192..194].copy_from_slice(&[0x01, 0x11]);
    r[255] = 0xAA;
    out.push(("regress-return-path-zero-entry".to_string(), r));
    // HopCount 8 with 18-byte natives: the InitialPath overruns its area.
    let mut o = dr;
    o[7] = 8;
    for e in 0..3 {
        o[128 + 21 * e + 2] = 18;
    }
    out.push(("dr-initial-path-overrun".to_string(), o));
    out
}

#[test]
fn replay_corpus() {
    let root = corpus_root();
    let mad = root.join("mad");
    assert!(
        !testkit::corpus::files(&mad).is_empty(),
        "no seeds in {}",
        mad.display()
    );
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("fuzz corpus {}: {e}", root.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut files = 0;
    let mut failures = Vec::new();
    for dir in &dirs {
        for path in testkit::corpus::files(dir) {
            let data = fs::read(&path).expect("readable corpus file");
            files += 1;
            if catch_unwind(AssertUnwindSafe(|| fuzzing::mad(&data))).is_err() {
                failures.push(format!("mad: {}", path.display()));
            }
            if catch_unwind(AssertUnwindSafe(|| fuzzing::agent(&data))).is_err() {
                failures.push(format!("agent: {}", path.display()));
            }
            if catch_unwind(AssertUnwindSafe(|| fuzzing::groups(&data))).is_err() {
                failures.push(format!("groups: {}", path.display()));
            }
            if catch_unwind(AssertUnwindSafe(|| fuzzing::subscriptions(&data))).is_err() {
                failures.push(format!("subscriptions: {}", path.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "mgmt::fuzzing failed on {} of {files} inputs:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The agent's seeds: each vector behind each protect level, and all the
/// vectors in a row behind protect 1 and 2.
fn agent_seeds() -> Vec<(String, Vec<u8>)> {
    let vectors = seeds();
    let mut out = Vec::new();
    for (name, bytes) in vectors.iter().filter(|(n, _)| n.starts_with("vector-")) {
        for protect in 0..4u8 {
            let mut b = vec![protect];
            b.extend_from_slice(bytes);
            out.push((format!("{name}-protect{protect}"), b));
        }
    }
    for protect in [1u8, 2] {
        let mut b = vec![protect];
        for (_, bytes) in vectors.iter().filter(|(n, _)| n.starts_with("vector-")) {
            let mut mad = bytes.clone();
            // The EEP-packet vector is not a bare MAD: its last 256 bytes are.
            if mad.len() > 256 {
                mad.drain(..mad.len() - 256);
            }
            b.extend_from_slice(&mad);
        }
        out.push((format!("all-vectors-protect{protect}"), b));
    }
    out.push(("partition-table-sets".to_string(), partition_table_sets()));
    out
}

/// PartitionTable Sets with the fuzz agent's key (`mgmt::fuzzing::agent`,
/// protect 1): block 0 taken, a block 1 holding a key of block 0 refused,
/// block 1 taken, a block 2 refused, block 0 read back.
fn partition_table_sets() -> Vec<u8> {
    use mgmt::attr::PartitionTable;
    use mgmt::partition::{Membership, PartitionKey};
    use mgmt::wire::{MadRepr, Method, MgmtClass};
    let block = |keys: &[u16]| {
        let entries: Vec<_> = keys
            .iter()
            .map(|k| (PartitionKey::new(*k).unwrap(), Membership::Full))
            .collect();
        let mut data = vec![0; 64];
        PartitionTable::from_entries(&entries)
            .unwrap()
            .emit(&mut data)
            .unwrap();
        data
    };
    let mut b = vec![1u8];
    for (i, (method, modifier, data)) in [
        (Method::SET, 0, block(&[0x7FFF, 0x10])),
        (Method::SET, 1, block(&[0x10])),
        (Method::SET, 1, block(&[0x20])),
        (Method::SET, 2, block(&[0x30])),
        (Method::GET, 0, Vec::new()),
    ]
    .into_iter()
    .enumerate()
    {
        let mut m = MadRepr::new(
            MgmtClass::SUBN,
            method,
            i as u64 + 1,
            PartitionTable::ID,
            modifier,
        );
        m.mkey = 0x5EC2E7;
        if !data.is_empty() {
            m.data = data;
        }
        b.extend_from_slice(&m.to_bytes().unwrap()[..]);
    }
    b
}

/// The seed files on disk are what `seeds()` makes: the vectors and the
/// regressions cannot drift apart from the corpus silently.
#[test]
fn seeds_are_on_disk() {
    let dir = corpus_root().join("mad");
    for (name, bytes) in seeds() {
        fuzzing::mad(&bytes);
        let on_disk = fs::read(dir.join(&name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}; run `cargo test -p mgmt --test fuzz_corpus -- --ignored write_seed_corpus`"
            )
        });
        assert!(on_disk == bytes, "{name} differs from its source");
    }
    let dir = corpus_root().join("mgmt_agent");
    for (name, bytes) in agent_seeds() {
        fuzzing::agent(&bytes);
        let on_disk = fs::read(dir.join(&name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}; run `cargo test -p mgmt --test fuzz_corpus -- --ignored write_seed_corpus`"
            )
        });
        assert!(on_disk == bytes, "{name} differs from its source");
    }
}

#[test]
#[ignore = "writes fuzz/corpus/mad/ and mgmt_agent/; run by hand when the vectors change"]
fn write_seed_corpus() {
    let dir = corpus_root().join("mad");
    fs::create_dir_all(&dir).expect("create corpus directory");
    for (name, bytes) in seeds() {
        fs::write(dir.join(name), bytes).expect("write seed");
    }
    let dir = corpus_root().join("mgmt_agent");
    fs::create_dir_all(&dir).expect("create corpus directory");
    for (name, bytes) in agent_seeds() {
        fs::write(dir.join(name), bytes).expect("write seed");
    }
}

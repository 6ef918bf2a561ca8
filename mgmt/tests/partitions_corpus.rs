//! Replays the checked-in corpus of the cargo-fuzz target `partitions`
//! (`fuzz/corpus/partitions/*`) through `mgmt::fuzzing::partitions`, so
//! that the stable test suite runs the same checks, crash reproducers
//! included. The seeds are OpenSM's own examples as a MessageWay file
//! takes them, two tenants, and refused files; the ignored test
//! `write_seed_corpus` (re)writes them and leaves other files alone:
//! `cargo test -p mgmt --test partitions_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/partitions")
}

const SEEDS: &[(&str, &str)] = &[
    (
        "opensm-style.conf",
        "# as OpenSM writes them\n\
         Default=0x7fff : ALL, SELF=full ;\n\
         ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;\n\
         ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;\n\
         ShareIO = 0x80 , defmember=limited : 0x123456, 0x123457, 0x123458=full;\n",
    ),
    (
        "two-tenants.conf",
        "Default=0x7fff : ALL_ROUTERS=full, SELF=full ;\n\
         tenant_a=0x0010, defmember=full : 0x0000000000000100, 0x0000000000000104 ;\n\
         tenant_b=0x0020 : 0x0000000000000102=full, 0x0000000000000108=limited ;\n",
    ),
    ("empty.conf", ""),
    (
        "refused.conf",
        "nokey : ALL ;\nbig=0x8000 : ALL ;\nt=0x11, ipoib : mgid=ff12::1 ;\nx=0x15 : ALL",
    ),
];

#[test]
fn seeds_are_on_disk() {
    for (name, text) in SEEDS {
        let on_disk = fs::read_to_string(corpus().join(name)).unwrap_or_default();
        assert_eq!(
            &on_disk, text,
            "fuzz/corpus/partitions/{name} is missing or out of date: run `cargo test -p mgmt --test partitions_corpus -- --ignored write_seed_corpus`"
        );
    }
}

#[test]
fn the_corpus_replays_without_a_failure() {
    let mut n = 0;
    for e in fs::read_dir(corpus()).expect("the corpus") {
        mgmt::fuzzing::partitions(&fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= SEEDS.len());
    assert!(mgmt::partition::parse(SEEDS[3].1).is_err());
    assert!(mgmt::partition::parse(SEEDS[1].1).is_ok());
}

#[test]
#[ignore = "writes the seed corpus"]
fn write_seed_corpus() {
    fs::create_dir_all(corpus()).unwrap();
    for (name, text) in SEEDS {
        fs::write(corpus().join(name), text).unwrap();
    }
}

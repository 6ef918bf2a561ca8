//! Replays the checked-in corpus of the cargo-fuzz target `history_file`
//! (`fuzz/corpus/history_file/*`) through
//! `control::daemon::history::fuzz`, so that the stable test suite runs the
//! same checks as the fuzz target, crash reproducers included.
//!
//! The seeds: a history of three configurations as the daemon writes it
//! (the full example configuration among them), an empty one, another
//! format, a configuration that no longer parses, and a cut file. The
//! ignored test `write_seed_corpus` (re)writes them and leaves any other
//! file alone: `cargo test -p control --test history_corpus -- --ignored
//! write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use admin::proto::{HistoryEntry, Requester};
use control::config::Config;
use control::daemon::history::{self, History};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/history_file")
}

/// The named seeds and their bytes.
fn seeds() -> Vec<(&'static str, String)> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/router-udp.toml");
    let udp = Config::load(&example).expect("the example configuration");
    let mut h = History::new(10);
    for (g, (how, hold)) in [
        ("start", 90_000),
        ("reload", 120_000),
        ("rollback to generation 0", 90_000),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = udp.clone();
        c.timers.hold_ms = hold;
        h.push(
            c,
            HistoryEntry {
                generation: g as u64,
                back: 0,
                applied_unix_s: 1_795_000_000 + g as u64,
                how: how.into(),
                by: Requester {
                    uid: Some(1000),
                    pid: Some(4242),
                },
                changes: vec![format!("timers.hold_ms: -> {hold}")],
                pending: g == 1,
            },
        );
    }
    let three = h.to_json();
    let cut = three[..three.len() / 2].to_string();
    vec![
        ("three-configurations.json", three.clone()),
        ("empty.json", r#"{"format": 1, "kept": []}"#.to_string()),
        (
            "other-format.json",
            r#"{"format": 2, "kept": []}"#.to_string(),
        ),
        (
            "bad-configuration.json",
            three.replacen("[router]", "[router", 1),
        ),
        ("cut.json", cut),
    ]
}

#[test]
fn seeds_are_on_disk() {
    for (name, text) in seeds() {
        let on_disk = fs::read_to_string(corpus().join(name)).unwrap_or_default();
        assert_eq!(
            on_disk, text,
            "fuzz/corpus/history_file/{name} is missing or out of date: run `cargo test -p control --test history_corpus -- --ignored write_seed_corpus`"
        );
    }
}

#[test]
fn the_seeds_parse_as_expected() {
    let s = seeds();
    assert_eq!(history::parse(&s[0].1).unwrap().len(), 3);
    assert!(history::parse(&s[1].1).unwrap().is_empty());
    for (name, text) in &s[2..] {
        assert!(history::parse(text).is_err(), "{name}");
    }
}

#[test]
fn the_corpus_replays_without_a_failure() {
    let mut n = 0;
    for e in fs::read_dir(corpus()).expect("the corpus") {
        let p = e.unwrap().path();
        history::fuzz(&fs::read(&p).unwrap());
        n += 1;
    }
    assert!(n >= seeds().len());
}

#[test]
#[ignore = "writes the seed corpus"]
fn write_seed_corpus() {
    fs::create_dir_all(corpus()).unwrap();
    for (name, text) in seeds() {
        fs::write(corpus().join(name), text).unwrap();
    }
}

//! Segments shared through the file system, and the seqlock under a
//! publisher that never pauses.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use shm::{Segment, seqlock};

#[test]
fn a_reader_sees_what_the_publisher_stores() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seg");
    let w = Segment::create(&path, &[0, 7, 8], 0o644).unwrap();
    let r = Segment::open(&path).unwrap();
    assert_eq!(r.words()[1].load(Ordering::Relaxed), 7);
    seqlock::publish(w.words(), 0, |words| seqlock::store(words, 1, &[70, 80]));
    let mut out = [0u64; 3];
    assert_eq!(seqlock::read(r.words(), 0, &mut out), Some(2));
    assert_eq!(out, [2, 70, 80]);
    // No temporary file is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_replaced_segment_stays_valid_for_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seg");
    let _old_writer = Segment::create(&path, &[0, 1], 0o644).unwrap();
    let old = Segment::open(&path).unwrap();
    let _new = Segment::create(&path, &[0, 2, 3], 0o644).unwrap();
    assert_eq!(old.words()[1].load(Ordering::Relaxed), 1);
    assert_eq!(Segment::open(&path).unwrap().words().len(), 3);
}

#[test]
fn bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert!(Segment::open(&empty).is_err());
    let odd = dir.path().join("odd");
    std::fs::write(&odd, [0u8; 12]).unwrap();
    assert!(Segment::open(&odd).is_err());
    assert!(Segment::create(dir.path(), &[0], 0o644).is_err());
    assert!(Segment::create(&dir.path().join("x"), &[], 0o644).is_err());
}

/// Every word of a publication holds the publication's number: a reader
/// that ever gets a mixed copy has seen a torn read.
#[test]
fn torn_reads_are_never_returned() {
    const WORDS: usize = 512;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seg");
    let w = Segment::create(&path, &[0; WORDS], 0o644).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let r = Segment::open(&path).unwrap();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut out = [0u64; WORDS];
                let (mut good, mut retried) = (0u64, 0u64);
                while !stop.load(Ordering::Relaxed) || good == 0 {
                    match seqlock::read(r.words(), 0, &mut out) {
                        Some(g) => {
                            let n = out[1];
                            assert!(out[1..].iter().all(|v| *v == n), "torn read");
                            assert_eq!(g, 2 * n);
                            good += 1;
                        }
                        None => retried += 1,
                    }
                }
                (good, retried)
            })
        })
        .collect();
    for n in 1..=20_000u64 {
        seqlock::publish(w.words(), 0, |words| {
            seqlock::store(words, 1, &[n; WORDS - 1]);
        });
        if n % 64 == 0 {
            std::thread::yield_now();
        }
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        let (good, _retried) = r.join().unwrap();
        assert!(good > 0);
    }
}

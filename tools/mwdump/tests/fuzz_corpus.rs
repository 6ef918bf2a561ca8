//! Replays the checked-in corpus of the cargo-fuzz target `mwdump_pcap`
//! (`fuzz/corpus/mwdump_pcap/*`) through `mwdump::fuzzing::pcap`, so that
//! the stable test suite runs the same checks as the fuzz target, crash
//! reproducers included.
//!
//! The seeds are examples/sample.pcap, the same frames as a big-endian
//! nanosecond pcap and as pcapng files of both byte orders (two interfaces,
//! EPBs, an SPB, a skipped block), damaged files, single raw frames and a
//! frame as hex text. The ignored test `write_seed_corpus` (re)writes them
//! and leaves any other file (a minimised crash, what `fuzz/run-all`
//! merged) alone:
//! `cargo test -p mwdump --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use mwdump::{capture, fuzzing, hex, sample};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> PathBuf {
    workspace().join("fuzz/corpus/mwdump_pcap")
}

/// A 32- or 16-bit value in the file's byte order.
fn w32(big: bool, v: u32) -> [u8; 4] {
    if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

fn w16(big: bool, v: u16) -> [u8; 2] {
    if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

/// A classic pcap of `frames`, big-endian, nanosecond timestamps.
fn pcap_be_nano(linktype: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&capture::PCAP_MAGIC_NANO.to_be_bytes());
    f.extend_from_slice(&2u16.to_be_bytes());
    f.extend_from_slice(&4u16.to_be_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65_535u32.to_be_bytes());
    f.extend_from_slice(&linktype.to_be_bytes());
    for (i, d) in frames.iter().enumerate() {
        f.extend_from_slice(&(1_700_000_000 + i as u32).to_be_bytes());
        f.extend_from_slice(&(i as u32 * 1_000_001).to_be_bytes());
        f.extend_from_slice(&(d.len() as u32).to_be_bytes());
        f.extend_from_slice(&(d.len() as u32 + 4).to_be_bytes());
        f.extend_from_slice(d);
    }
    f
}

/// A pcapng block.
fn block(big: bool, t: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
    let len = (body.len() + 12) as u32;
    let mut b = w32(big, t).to_vec();
    b.extend_from_slice(&w32(big, len));
    b.extend_from_slice(&body);
    b.extend_from_slice(&w32(big, len));
    b
}

/// A pcapng file: an Ethernet interface (microseconds), a USER0 interface
/// (nanoseconds, an offset), a name resolution block, the Ethernet frames
/// as EPBs, one as an SPB.
fn pcapng(big: bool, eth: &[Vec<u8>], raw: &[u8]) -> Vec<u8> {
    let mut shb = w32(big, capture::PCAPNG_BYTE_ORDER_MAGIC).to_vec();
    shb.extend_from_slice(&w16(big, 1));
    shb.extend_from_slice(&w16(big, 0));
    shb.extend_from_slice(&[0xFF; 8]);
    let mut f = block(big, capture::PCAPNG_SHB, &shb);
    let mut idb0 = w16(big, 1).to_vec();
    idb0.extend_from_slice(&[0, 0]);
    idb0.extend_from_slice(&w32(big, 0));
    f.extend(block(big, 1, &idb0));
    let mut idb1 = w16(big, 147).to_vec();
    idb1.extend_from_slice(&[0, 0]);
    idb1.extend_from_slice(&w32(big, 0));
    idb1.extend_from_slice(&w16(big, 9)); // if_tsresol: nanoseconds
    idb1.extend_from_slice(&w16(big, 1));
    idb1.extend_from_slice(&[9, 0, 0, 0]);
    idb1.extend_from_slice(&w16(big, 14)); // if_tsoffset
    idb1.extend_from_slice(&w16(big, 8));
    idb1.extend_from_slice(
        &(if big {
            60u64.to_be_bytes()
        } else {
            60u64.to_le_bytes()
        }),
    );
    idb1.extend_from_slice(&[0, 0, 0, 0]);
    f.extend(block(big, 1, &idb1));
    f.extend(block(big, 4, &[0, 0, 0, 0]));
    let epb = |iface: u32, ts: u64, data: &[u8]| {
        let mut e = w32(big, iface).to_vec();
        e.extend_from_slice(&w32(big, (ts >> 32) as u32));
        e.extend_from_slice(&w32(big, ts as u32));
        e.extend_from_slice(&w32(big, data.len() as u32));
        e.extend_from_slice(&w32(big, data.len() as u32));
        e.extend_from_slice(data);
        block(big, 6, &e)
    };
    for (i, d) in eth.iter().enumerate() {
        f.extend(epb(0, 1_700_000_000_000_000 + i as u64 * 1_000_000, d));
    }
    f.extend(epb(1, 1_700_000_000_000_000_123, raw));
    if let Some(d) = eth.first() {
        let mut spb = w32(big, d.len() as u32).to_vec();
        spb.extend_from_slice(d);
        f.extend(block(big, 3, &spb));
    }
    f
}

/// The bare MessageWay packet of the first untagged Ethernet II frame
/// with EtherType 0x88B5.
fn first_packet(frames: &[Vec<u8>]) -> Vec<u8> {
    frames
        .iter()
        .find(|f| f.get(12..14) == Some(&[0x88, 0xB5][..]))
        .expect("a frame of EtherType 0x88B5")[14..]
        .to_vec()
}

/// The seeds: (file name, bytes).
fn seeds() -> Vec<(String, Vec<u8>)> {
    let sample_pcap = fs::read(workspace().join("examples/sample.pcap")).expect("sample.pcap");
    let frames: Vec<Vec<u8>> = sample::sample_frames()
        .into_iter()
        .map(|f| f.frame)
        .collect();
    let few: Vec<Vec<u8>> = frames.iter().take(4).cloned().collect();
    let raw = first_packet(&frames);
    let mut out = vec![
        ("sample.pcap".to_string(), sample_pcap.clone()),
        ("sample-be-nano.pcap".into(), pcap_be_nano(1, &few)),
        (
            "raw-be-nano.pcap".into(),
            pcap_be_nano(147, std::slice::from_ref(&raw)),
        ),
        ("sample-le.pcapng".into(), pcapng(false, &few, &raw)),
        ("sample-be.pcapng".into(), pcapng(true, &few[..2], &raw)),
        (
            "truncated.pcap".into(),
            sample_pcap[..sample_pcap.len() - 10].to_vec(),
        ),
        ("frame-eth".into(), frames[0].clone()),
        ("frame-raw".into(), raw.clone()),
        ("frame-hex".into(), hex::spaced(&frames[1]).into_bytes()),
    ];
    let mut bad_block = pcapng(false, &few[..1], &raw);
    let n = bad_block.len();
    bad_block[n - 1] ^= 0x40;
    out.push(("damaged.pcapng".into(), bad_block));
    out
}

#[test]
fn replay_corpus() {
    testkit::corpus::replay("mwdump_pcap", &corpus(), fuzzing::pcap);
}

#[test]
fn seeds_are_on_disk() {
    for (name, bytes) in seeds() {
        if name.ends_with("pcap") || name.ends_with("pcapng") {
            let cap = capture::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!cap.frames.is_empty(), "{name}: no frames");
            assert_eq!(
                cap.error.is_some(),
                name.starts_with("truncated") || name.starts_with("damaged"),
                "{name}: {:?}",
                cap.error
            );
        }
        fuzzing::pcap(&bytes);
        let on_disk = fs::read(corpus().join(&name)).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}; run `cargo test -p mwdump --test fuzz_corpus -- --ignored write_seed_corpus`"
            )
        });
        assert!(on_disk == bytes, "{name} differs from its source");
    }
}

#[test]
#[ignore = "writes fuzz/corpus/mwdump_pcap/"]
fn write_seed_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).expect("corpus directory");
    for (name, bytes) in seeds() {
        fs::write(dir.join(name), bytes).expect("seed written");
    }
}

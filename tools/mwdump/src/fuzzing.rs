//! The fuzz body of the cargo-fuzz target `mwdump_pcap` (under `fuzz/`),
//! shared with the test that replays the checked-in corpus
//! (`tools/mwdump/tests/fuzz_corpus.rs`), so that the stable test suite
//! runs the same checks.
//!
//! Arbitrary bytes are a file given to mwdump: the whole program
//! ([`cli::run`], reading the file from standard input) decodes it as
//! JSON Lines and as text, over each link of a raw frame; it ends with
//! exit code 0 or 1 and every JSON line parses. The capture reader
//! ([`capture::read`]) on its own: a file that is not a capture is refused
//! with an error inside the file; a capture's frames and its damage lie
//! inside the file, and its frames written again with [`PcapWriter`] read
//! back the same. The bytes as `--hex` text read as hex digits or give an
//! error, and the bytes a hex text gives print as hex that reads back.

use std::path::PathBuf;

use crate::capture::{self, Format, PcapWriter, Resolution};
use crate::cli::{self, Args, LinkArg};
use crate::hex;

/// mwdump on `data` as standard input: exit code 0 or 1, every JSON line
/// parses.
fn run(data: &[u8], link: LinkArg, json: bool) {
    let args = Args {
        json,
        link,
        hex: None,
        file: Some(PathBuf::from("-")),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = cli::run(&args, &mut &data[..], &mut out, &mut err);
    assert!(
        code == cli::EXIT_OK || code == cli::EXIT_BAD,
        "exit code {code}"
    );
    let out = String::from_utf8(out).expect("mwdump writes UTF-8");
    if json {
        for line in out.lines() {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(line) {
                panic!("a JSON line that does not parse ({e}): {line}");
            }
        }
    }
    String::from_utf8(err).expect("mwdump's errors are UTF-8");
}

/// The capture reader on its own.
fn read(data: &[u8]) {
    let cap = match capture::read(data) {
        Ok(cap) => cap,
        Err(e) => {
            assert!(e.offset <= data.len(), "error outside the file: {e}");
            assert!(!e.message.is_empty());
            return;
        }
    };
    assert_eq!(capture::detect(data), Some(cap.format));
    if let Some(e) = &cap.error {
        assert!(e.offset <= data.len(), "damage outside the file: {e}");
        assert!(!e.message.is_empty());
    }
    let total: usize = cap.frames.iter().map(|f| f.data.len()).sum();
    assert!(total <= data.len(), "frames larger than the file");
    for f in &cap.frames {
        if let Some(t) = f.timestamp {
            assert!(t.nsec < 1_000_000_000, "nanoseconds {}", t.nsec);
            let _ = t.utc();
        }
        // Written again (nanosecond pcap, no snap length), read back.
        let mut w = PcapWriter::new(Vec::new(), f.linktype, u32::MAX, Resolution::Nano)
            .expect("writing to memory");
        let ts = match (cap.format, f.timestamp) {
            (Format::Pcap, Some(t)) => {
                u64::try_from(t.sec).expect("a pcap second is a u32") * 1_000_000_000
                    + u64::from(t.nsec)
            }
            _ => 0,
        };
        let orig = u32::try_from(f.orig_len).unwrap_or(u32::MAX);
        w.write(ts, orig, &f.data).expect("writing to memory");
        let back = capture::read(&w.into_inner()).expect("a written pcap reads");
        assert_eq!(back.error, None);
        assert_eq!(back.frames.len(), 1);
        let b = &back.frames[0];
        assert_eq!(b.data, f.data);
        assert_eq!(b.linktype, f.linktype & 0xFFFF);
        if cap.format == Format::Pcap {
            assert_eq!(b.timestamp, f.timestamp);
        }
    }
}

/// The bytes as `--hex` text.
fn hex_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match hex::parse(&text) {
        Ok(bytes) => {
            assert_eq!(hex::parse(&hex::encode(&bytes)), Ok(bytes.clone()));
            assert_eq!(hex::parse(&hex::spaced(&bytes)), Ok(bytes));
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// The body: `data` as a file given to mwdump.
pub fn pcap(data: &[u8]) {
    read(data);
    run(data, LinkArg::Raw, true);
    run(data, LinkArg::Eth, false);
    if capture::detect(data).is_none() {
        // A raw frame: the link is the command line's.
        run(data, LinkArg::Eth, true);
        run(data, LinkArg::Udp, true);
        run(data, LinkArg::Udp, false);
        run(data, LinkArg::Raw, false);
    }
    hex_text(data);
}

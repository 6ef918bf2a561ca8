//! mwgen's `--pcap` reader: any file gives templates or an error, never a
//! panic, and every template it gives is a packet mwgen can send.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = mwgen::pcap::read(data, rrp::LinkKind::Ethernet) {
        for t in t {
            assert!(t.frame_len >= t.bytes.len());
            if let Some(h) = t.hdr {
                let mut b = t.bytes.clone();
                mwgen::probe::patch(&mut b, h, 1, 2);
            }
        }
    }
});

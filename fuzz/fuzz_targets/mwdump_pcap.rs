//! mwdump on any file: pcap/pcapng reader, every frame decoded, JSON and
//! text output; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mwdump::fuzzing::pcap(data));

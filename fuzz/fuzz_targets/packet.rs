//! Packets: leading L2RHs, EEP header, data, trailer; view vs owned, emit-then-parse.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrp::fuzzing::packet(data));

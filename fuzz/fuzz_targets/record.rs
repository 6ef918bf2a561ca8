//! Records R1-R8, record sequences, L2RHs and router hops.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrp::fuzzing::record(data));

//! RRP/ERR messages in whole packets, and records over the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrp::fuzzing::message(data));

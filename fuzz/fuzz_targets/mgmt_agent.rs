//! The management agent fed arbitrary MADs: nothing panics, every packet
//! is counted, whatever it sends parses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::agent(data));

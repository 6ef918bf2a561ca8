//! The SAN manager's multicast group and member records fed arbitrary
//! requests: nothing panics, the tables stay bounded, answers parse.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::groups(data));

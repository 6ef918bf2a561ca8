//! A router's management station (agent, client, SAN manager) fed
//! arbitrary MADs, some made answers to what it sent: nothing panics,
//! whatever it sends parses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::station(data));

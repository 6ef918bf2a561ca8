//! mwrouterd's configuration file: parsed and validated without a panic;
//! an accepted file emits and parses back equal, errors carry a message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| control::config::fuzzing::config(data));

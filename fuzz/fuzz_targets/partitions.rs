//! A SAN manager's partitions file: parsed without a panic, every error on
//! a line of the text, an accepted file read back the same from its text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::partitions(data));

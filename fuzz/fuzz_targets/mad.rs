//! MADs (PT 0x0006): the view and MadRepr, the EEP packet around a MAD,
//! every attribute; emit-then-parse, errors inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::mad(data));

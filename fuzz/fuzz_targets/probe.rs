//! mwgen's probe reader: its fast path agrees with the full walk on every
//! input, and neither panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert_eq!(mwgen::probe::read(data), mwgen::probe::read_slow(data));
});

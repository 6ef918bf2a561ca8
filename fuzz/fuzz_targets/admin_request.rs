//! What a client writes to the admin socket: each line read as a request,
//! round-tripped, and answered by the dispatcher over the sample box.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| admin::fuzzing::request(data));

//! The SAN manager's event subscriptions fed arbitrary requests: nothing
//! panics, the table stays bounded, answers parse, Reports go to
//! subscribers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mgmt::fuzzing::subscriptions(data));

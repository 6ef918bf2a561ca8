//! mwrouterd's configuration history file (`admin.history_file`): parsed
//! without a panic; a file that parses writes back a text that parses to the
//! same configurations.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| control::daemon::history::fuzz(data));

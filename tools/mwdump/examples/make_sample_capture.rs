//! Writes the sample capture: `cargo run -p mwdump --example
//! make_sample_capture -- examples/sample.pcap` (the default path is the
//! workspace's `examples/sample.pcap`).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/sample.pcap"),
        PathBuf::from,
    );
    let bytes = mwdump::sample::sample_capture();
    match std::fs::write(&path, &bytes) {
        Ok(()) => {
            println!(
                "wrote {} ({} frames, {} bytes)",
                path.display(),
                mwdump::sample::sample_frames().len(),
                bytes.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("make_sample_capture: cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}

//! The `mwctl` command; see docs/admin-protocol.md and `mwctl --help`.

use std::io::{self, BufWriter};
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // clap prints help and version to stdout (exit 0) and usage errors to
    // stderr (exit 2).
    let cli = mwctl::Cli::try_parse().unwrap_or_else(|e| e.exit());
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let code = mwctl::run(&cli, &mut out, &mut io::stderr().lock());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

//! The `mwdump` command; see docs/mwdump.md.

use std::io::{self, BufWriter};
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = mwdump::cli::Args::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let code = mwdump::cli::run(
        &args,
        &mut io::stdin().lock(),
        &mut out,
        &mut io::stderr().lock(),
    );
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

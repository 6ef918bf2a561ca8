//! The `mwctl` command; see docs/admin-protocol.md and `mwctl --help`.

use std::io::{self, BufWriter, IsTerminal};
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    // clap prints help and version to stdout (exit 0) and usage errors to
    // stderr (exit 2).
    let cli = match mwctl::Cli::try_parse() {
        Ok(c) => c,
        // No command on a terminal: the interactive shell, with the
        // global options given (parsed as if a command followed).
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) && io::stdin().is_terminal() =>
        {
            let args = std::env::args_os().chain([std::ffi::OsString::from("version")]);
            let cli = mwctl::Cli::try_parse_from(args).unwrap_or_else(|_| e.exit());
            let code = mwctl::shell::run(
                mwctl::shell::Globals::of(&cli),
                &mut io::stdout(),
                &mut io::stderr(),
            );
            return ExitCode::from(u8::try_from(code).unwrap_or(1));
        }
        Err(e) => e.exit(),
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let code = mwctl::run(&cli, &mut out, &mut io::stderr().lock());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

//! mwtrace: trace and validate the path to a destination (docs/mwtrace.md;
//! the `mwctl::mwtrace` library).

use clap::Parser;
use mwctl::mwtrace::{self, Cli};
use mwctl::trace::EXIT_USAGE;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let code = mwtrace::run(&cli, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}

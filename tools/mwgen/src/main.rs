//! mwgen: the MessageWay packet generator (see the `mwgen` library).

use clap::Parser;

fn main() {
    let args = mwgen::cli::Args::parse();
    if let Err(f) = mwgen::cli::main_with(args) {
        eprintln!("mwgen: {}", f.message);
        std::process::exit(f.code);
    }
}

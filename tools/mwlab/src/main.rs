//! mwlab: a whole MessageWay on one machine (see the `mwlab` library).

use clap::Parser;

fn main() {
    let args = mwlab::cli::Args::parse();
    std::process::exit(mwlab::cli::main_with(args));
}

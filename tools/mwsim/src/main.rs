//! `mwsim`: runs a MessageWay topology in the deterministic simulator.
fn main() {
    std::process::exit(mwsim::cli::main());
}

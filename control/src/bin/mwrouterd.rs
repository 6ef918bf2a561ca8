//! `mwrouterd --config router.toml`: the mwrouter daemon (control::daemon).
fn main() {
    std::process::exit(control::daemon::main());
}

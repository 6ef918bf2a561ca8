//! With the `dpdk` feature, mwrouterd exports its `munmap`
//! (`ports::dpdk::unmap`) so that the DPDK drivers EAL loads at run time
//! bind to it: what they unmap on EAL's interrupt thread then waits until
//! no worker can be reading it (docs/reliability.md "Default mode").

fn main() {
    if std::env::var_os("CARGO_FEATURE_DPDK").is_some() {
        println!("cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol=munmap");
    }
}

//! With the `dpdk` feature, stops the build with one clear message when
//! dpdk-sys was built empty (no libdpdk found), instead of letting the DPDK
//! backend fail on dozens of missing bindings; and has the tests'
//! executables export this crate's `munmap` (`dpdk::unmap`).

fn main() {
    println!("cargo::rerun-if-env-changed=DEP_DPDK_FOUND");
    // The tests' executables export this crate's `munmap` as mwrouterd's
    // does (control/build.rs), so that the drivers EAL loads bind to it.
    if std::env::var_os("CARGO_FEATURE_DPDK").is_some() {
        println!("cargo::rustc-link-arg-tests=-Wl,--export-dynamic-symbol=munmap");
    }
    if std::env::var_os("CARGO_FEATURE_DPDK").is_some()
        && std::env::var("DEP_DPDK_FOUND").as_deref() != Ok("1")
    {
        eprintln!(
            "error: the `dpdk` feature needs DPDK 22.11 or later: install Debian's \
             libdpdk-dev, dpdk-dev and libclang-dev (pkg-config libdpdk must succeed), \
             or build without --features dpdk"
        );
        std::process::exit(1);
    }
}

//! Build script of `dpdk-sys`.
//!
//! 1. Probe `pkg-config libdpdk` (>= 22.11). When it is absent, or when
//!    `MWROUTER_DPDK=off`, build the crate empty: a `cargo:warning`, no cfg
//!    `dpdk`, and `DPDK_FOUND = false` in the library.
//! 2. Run bindgen over `shim/wrapper.h` with the full `pkg-config --cflags`
//!    (they carry `-include rte_config.h -march=corei7`).
//! 3. Compile `shim/mw_shim.c` (static-inline functions, macros and TLS that
//!    bindgen cannot link) with the same flags, and link the DPDK libraries
//!    that `pkg-config --libs libdpdk` names.

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// Oldest DPDK whose API the shim and the bindings are written against.
const MIN_DPDK: &str = "22.11";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dpdk)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=shim/wrapper.h");
    println!("cargo::rerun-if-changed=shim/mw_shim.h");
    println!("cargo::rerun-if-changed=shim/mw_shim.c");
    println!("cargo::rerun-if-env-changed=MWROUTER_DPDK");
    println!("cargo::rerun-if-env-changed=MWROUTER_DPDK_LAYOUT_TESTS");

    let mode = env::var("MWROUTER_DPDK").unwrap_or_default();
    let mode = mode.trim().to_ascii_lowercase();
    if matches!(mode.as_str(), "off" | "0" | "no" | "false") {
        println!("cargo:warning=MWROUTER_DPDK=off: dpdk-sys is built empty");
        println!("cargo::metadata=found=0");
        return;
    }

    // Probe: the version check and the link flags. The flags are printed
    // after the shim's (see `emit_link_flags`).
    let lib = match pkg_config::Config::new()
        .atleast_version(MIN_DPDK)
        .cargo_metadata(false)
        .probe("libdpdk")
    {
        Ok(lib) => lib,
        Err(e) => {
            // Keep pkg-config's own words: they say whether the package is
            // missing or too old.
            // ("Package libdpdk was not found ..." / "Requested 'libdpdk >=
            // 22.11' but version of DPDK is ...").
            let text = e.to_string();
            let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
            let why = lines()
                .find(|l| l.starts_with("Package") || l.starts_with("Requested"))
                .or_else(|| lines().next())
                .unwrap_or("pkg-config failed");
            empty(&format!("libdpdk >= {MIN_DPDK}: {why}"));
            watch_pkg_config_dirs();
            return;
        }
    };

    let cflags = pkg_config_cflags();
    println!("cargo::metadata=found=1");
    println!("cargo::metadata=version={}", lib.version);
    println!("cargo::metadata=cflags={}", cflags.join(" "));
    println!("cargo::rustc-cfg=dpdk");
    println!("cargo::rustc-env=MW_DPDK_VERSION={}", lib.version);

    generate_bindings(&cflags);
    compile_shim(&cflags);
    emit_link_flags(&lib);
}

/// Links the DPDK libraries, after the shim's static library so that
/// `--as-needed` (rustc's default) keeps the ones the shim uses.
fn emit_link_flags(lib: &pkg_config::Library) {
    for dir in &lib.link_paths {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    for name in &lib.libs {
        println!("cargo:rustc-link-lib={name}");
    }
    // rte_vdev_init lives in the vdev bus driver, which `--libs` does not
    // name. Debian installs librte_bus_vdev.so as a symlink into the PMD
    // directory, so EAL's own dlopen() of that directory finds the same file
    // (glibc compares inodes) and does not load it twice.
    println!("cargo:rustc-link-lib=rte_bus_vdev");
    // rte_eth_from_rings (rte_eth_ring.h) lives in the ring PMD, which
    // `--libs` does not name either; like the vdev bus, Debian's
    // librte_net_ring.so is a symlink into the PMD directory, so EAL's
    // plugin loading finds the already-loaded copy. `--as-needed` drops it
    // from binaries that do not call it.
    println!("cargo:rustc-link-lib=rte_net_ring");
}

/// Builds the crate empty and says why.
fn empty(why: &str) {
    println!(
        "cargo:warning=libdpdk not found (pkg-config libdpdk): dpdk-sys is built empty ({why})"
    );
    println!("cargo::metadata=found=0");
}

/// Reruns this script when a `.pc` file appears in pkg-config's search path,
/// so that installing libdpdk-dev after an empty build is noticed. Only
/// existing directories are watched: cargo reruns a script on every build for
/// a path that does not exist.
fn watch_pkg_config_dirs() {
    let mut dirs: Vec<String> = Vec::new();
    for var in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        if let Ok(v) = env::var(var) {
            dirs.extend(v.split(':').map(str::to_owned));
        }
    }
    if env::var_os("PKG_CONFIG_LIBDIR").is_none() {
        let exe = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_owned());
        if let Ok(out) = Command::new(exe)
            .args(["--variable", "pc_path", "pkg-config"])
            .output()
        {
            let path = String::from_utf8_lossy(&out.stdout);
            dirs.extend(path.trim().split(':').map(str::to_owned));
        }
    }
    for d in dirs {
        if !d.is_empty() && std::path::Path::new(&d).is_dir() {
            println!("cargo::rerun-if-changed={d}");
        }
    }
}

/// The full `pkg-config --cflags libdpdk` output, split into arguments.
///
/// The `pkg-config` crate keeps only `-I` and `-D`; DPDK also needs
/// `-include rte_config.h` and `-march=...`.
fn pkg_config_cflags() -> Vec<String> {
    let exe = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_owned());
    let out = Command::new(&exe)
        .args(["--cflags", "libdpdk"])
        .output()
        .unwrap_or_else(|e| panic!("running {exe} --cflags libdpdk: {e}"));
    assert!(
        out.status.success(),
        "{exe} --cflags libdpdk failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("pkg-config output is UTF-8")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn generate_bindings(cflags: &[String]) {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    // Layout tests are compile-time `const` assertions (size, alignment and
    // field offsets as clang sees them) in this bindgen: they cost well under
    // a second per clean build, so they are on unless
    // MWROUTER_DPDK_LAYOUT_TESTS=0.
    let layout_tests = env::var("MWROUTER_DPDK_LAYOUT_TESTS").map_or(true, |v| v.trim() != "0");

    let builder = bindgen::Builder::default()
        .header("shim/wrapper.h")
        .clang_args(cflags)
        .rust_target(bindgen::RustTarget::stable(85, 0).expect("known Rust target"))
        .rust_edition(bindgen::RustEdition::Edition2024)
        .use_core()
        .allowlist_function("rte_.*")
        .allowlist_type("rte_.*")
        .allowlist_var("rte_.*|RTE_.*|SOCKET_ID_ANY|LCORE_ID_ANY")
        // Packed structs containing aligned members (Rust refuses them) and a
        // bitfield union without Debug: opaque blobs of the right size.
        .opaque_type("rte_l2tpv2_combined_msg_hdr")
        .opaque_type("rte_gtp_psc_generic_hdr")
        // Plain Rust enums for C enums are unsound for values the C side may
        // add later: use integer constants (`rte_foo_RTE_FOO_X`).
        .default_enum_style(bindgen::EnumVariation::Consts)
        .derive_default(true)
        .derive_debug(true)
        .impl_debug(false)
        .generate_comments(false)
        .layout_tests(layout_tests)
        .merge_extern_blocks(true)
        .size_t_is_usize(true)
        .formatter(bindgen::Formatter::None)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));

    let bindings = builder.generate().unwrap_or_else(|e| {
        panic!(
            "bindgen over DPDK's headers failed: {e}\n\
             (bindgen needs libclang: apt-get install libclang-dev; \
             set MWROUTER_DPDK=off to build dpdk-sys empty)"
        )
    });
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));

    // The shim's C prototypes as bindgen reads them (mw_shim.h alone: cheap).
    // src/lib.rs checks the handwritten declarations of src/shim.rs against
    // them at compile time.
    let sigs = PathBuf::from(env::var("OUT_DIR").unwrap()).join("shim_sigs.rs");
    bindgen::Builder::default()
        .header("shim/mw_shim.h")
        .rust_target(bindgen::RustTarget::stable(85, 0).expect("known Rust target"))
        .rust_edition(bindgen::RustEdition::Edition2024)
        .use_core()
        .allowlist_function("mw_.*")
        .blocklist_type("rte_mbuf|rte_mempool")
        .generate_comments(false)
        .layout_tests(false)
        .formatter(bindgen::Formatter::None)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen over shim/mw_shim.h failed: {e}"))
        .write_to_file(&sigs)
        .unwrap_or_else(|e| panic!("writing {}: {e}", sigs.display()));
}

fn compile_shim(cflags: &[String]) {
    let mut build = cc::Build::new();
    build.file("shim/mw_shim.c").include("shim");
    for f in cflags {
        build.flag(f);
    }
    // DPDK's headers are not warning-clean under -Wextra; the shim itself is
    // checked with -Wall.
    build.warnings(false).flag("-Wall");
    build.compile("mw_dpdk_shim");
}

#!/usr/bin/env bash
# mwrouter's whole test suite: the one command README.md gives and .ci/run runs.
#
# Phases (each timed): prerequisites, format, lint, tests, fuzz-target check.
# As root it installs what is missing (Debian packages, cargo tools); as
# another user it says what to install and runs what it can.
#
# Parts that need DPDK or root are enabled by probing for them and skipped
# with a visible summary otherwise. MWROUTER_REQUIRE_ALL=1 (set by .ci/run)
# turns every such skip into a failure, so that CI can never pass by skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
REQUIRE_ALL=${MWROUTER_REQUIRE_ALL:-0}
export MWROUTER_REQUIRE_ALL=$REQUIRE_ALL
# Tests that skip append a line here; the summary at the end prints them.
export MWROUTER_SKIP_LOG="$PWD/target/skips.log"
mkdir -p target && : >"$MWROUTER_SKIP_LOG"

T0=$(date +%s)
PHASE_START=$T0
PHASES=()
phase() {
    local now
    now=$(date +%s)
    if [ -n "${PHASE_NAME:-}" ]; then
        PHASES+=("$(printf '%-14s %4ss' "$PHASE_NAME" $((now - PHASE_START)))")
    fi
    PHASE_NAME=$1
    PHASE_START=$now
    echo
    echo "=== [$(date -u +%H:%M:%S)] phase: $1"
}
summary() {
    phase done
    echo "=== phase times"
    printf '  %s\n' "${PHASES[@]}"
    echo "  total          $(( $(date +%s) - T0 ))s"
}
trap summary EXIT

need_fail=()
fail_or_skip() { # $1 = what is missing, $2 = what is skipped
    if [ "$REQUIRE_ALL" = 1 ]; then
        need_fail+=("$1 ($2)")
    else
        echo "SKIP: $2: $1" | tee -a "$MWROUTER_SKIP_LOG"
    fi
}

phase prerequisites
# dpkg-dev, debhelper and lintian build and check the Debian package
# (scripts/package; its install test in control/tests/debian_package.rs).
APT_PACKAGES=(pkg-config libclang-dev libpcap-dev libdpdk-dev dpdk-dev dpdk dpdk-doc patch iproute2 systemd prometheus tshark chromium dpkg-dev debhelper lintian)
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "missing Debian packages: ${missing[*]} (install them as root: apt-get install ${missing[*]})"
    fi
fi
if ! cargo nextest --version >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] || [ -w "$HOME/.cargo/bin" ]; then
        cargo install --locked cargo-nextest
    fi
fi
rustup component add clippy rustfmt >/dev/null 2>&1 || true

FEATURES=()
if pkg-config --exists libdpdk 2>/dev/null; then
    echo "DPDK $(pkg-config --modversion libdpdk) found: building the dpdk feature"
    FEATURES=(--features dpdk)
else
    fail_or_skip "libdpdk not found (apt-get install libdpdk-dev dpdk-dev)" "DPDK backend and its tests"
fi
if [ "$(id -u)" != 0 ]; then
    fail_or_skip "not root" "network-namespace and AF_PACKET tests"
fi
if [ ${#need_fail[@]} -gt 0 ]; then
    printf 'FAIL: MWROUTER_REQUIRE_ALL=1 and missing: %s\n' "${need_fail[@]}"
    exit 1
fi

phase format
cargo fmt --all -- --check

phase lint
cargo clippy --workspace --all-targets "${FEATURES[@]}" --profile ci -- -D warnings

phase tests
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace "${FEATURES[@]}" --cargo-profile ci --no-fail-fast
    cargo test --workspace --doc "${FEATURES[@]}" --profile ci
else
    echo "cargo-nextest not installed: using cargo test"
    cargo test --workspace "${FEATURES[@]}" --profile ci --no-fail-fast
fi

phase fuzz-check
# The fuzz targets build with cargo-fuzz (see fuzz/README.md); here only
# check that they still compile against the current rrp API.
cargo check --manifest-path fuzz/Cargo.toml --quiet

phase skips
if [ -s "$MWROUTER_SKIP_LOG" ]; then
    echo "skipped (run as root with DPDK installed to enable):"
    sort -u "$MWROUTER_SKIP_LOG" | sed 's/^/  /'
else
    echo "nothing skipped"
fi

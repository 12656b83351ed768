#!/usr/bin/env bash
# Build the core crate (crates/wordsplit) for aarch64 Linux and run its tests under emulation:
# the NEON paths (the block scanners' classifier, BERT's ASCII blocks, the prefetch hint) and
# every path that is portable on this x86-64 machine, compiled and run as an aarch64 CPU runs
# them.
#
#   bash tools/check_aarch64.sh            the library's tests and the integration tests
#   bash tools/check_aarch64.sh --lib      the library's tests only
#   bash tools/check_aarch64.sh --build    compile the library and its tests, run nothing
#   bash tools/check_aarch64.sh --check    type-check the library, its tests, examples and
#                                          benches (`cargo check`: no code generated, no
#                                          linker or qemu needed; the CI runs this one)
#
# The toolchain is Debian's, as for the WebAssembly module (wasm/build.sh): rustc-web (rustc
# and cargo under /usr/bin, with std's sources; std for aarch64 is compiled from them by
# -Zbuild-std, allowed on a stable rustc by RUSTC_BOOTSTRAP=1), the GNU cross linker and
# qemu-user, which runs each test binary (`qemu-aarch64`, with the aarch64 C library of
# libc6-dev-arm64-cross). Missing packages are installed with apt-get (as root).
#
# Its own target dir, target/aarch64/ (another rustc than the host build's, and std built for
# aarch64): the first run compiles std and the dependencies, later runs only what changed.
# Optimized (opt-level 2) with debug assertions and overflow checks kept: unoptimized code is
# about ten times slower, and emulation multiplies that. Every warning is an error, since
# clippy does not run for this target. Times under qemu say nothing of speed on real hardware.
set -euo pipefail

mode=all
case "${1:-}" in
    "") ;;
    --lib) mode=lib ;;
    --build) mode=build ;;
    --check) mode=check ;;
    *) echo "usage: bash tools/check_aarch64.sh [--lib | --build | --check]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

need=()
[ -x /usr/bin/rustc ] && /usr/bin/rustc --print sysroot >/dev/null 2>&1 || need+=(rustc-web)
[ -x /usr/bin/cargo ] || need+=(cargo-web)
ls -d /usr/src/rustc-*/library/std >/dev/null 2>&1 || need+=(rust-web-src)
if [ "$mode" != check ]; then
    command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
    command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
    [ -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || need+=(libc6-dev-arm64-cross)
fi
if [ "${#need[@]}" -gt 0 ]; then
    echo "tools/check_aarch64.sh: installing ${need[*]}" >&2
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
        "${need[@]}" >/dev/null
fi

export CARGO_TARGET_DIR="$root/target/aarch64"
export RUSTC=/usr/bin/rustc
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_PROFILE_DEV_OPT_LEVEL=2
export CARGO_PROFILE_DEV_DEBUG=0
args=(-p wordsplit --target aarch64-unknown-linux-gnu -Zbuild-std=std,panic_abort
      -Zwarnings --config 'build.warnings="deny"')
cd "$root"
case "$mode" in
    check) /usr/bin/cargo check "${args[@]}" --all-targets ;;
    build) /usr/bin/cargo test "${args[@]}" --no-run ;;
    lib) /usr/bin/cargo test "${args[@]}" --lib ;;
    all) /usr/bin/cargo test "${args[@]}" --lib --tests ;;
esac

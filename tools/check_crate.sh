#!/usr/bin/env bash
# Check the core crate as crates.io would take it and as a user gets it:
#
#   1. `cargo publish --dry-run -p wordsplit`: the metadata crates.io requires, the package's
#      files (Cargo.toml's `exclude`; data/vocabs, LICENSE, licenses and the linked test files
#      packaged as the files they link to), its size, and a build of the packaged crate;
#   2. `cargo test` inside the unpacked .crate, away from the repository: the library's tests,
#      the integration tests it ships, the examples and the doctests, on its own files only.
#
#   bash tools/check_crate.sh [--allow-dirty]     (--allow-dirty: uncommitted changes too)
#
# It needs crates.io (or the crates already in Cargo's cache: CARGO_NET_OFFLINE=true) and
# takes a few minutes (a debug build of the crate and its tests, in target/crate-check/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

cargo publish --dry-run -p wordsplit "$@"
# The same package again, into target/package/ (the dry run keeps its .crate to itself); it was
# built just above, so not again.
cargo package -p wordsplit --no-verify "$@"
version=$(cargo pkgid -p wordsplit | sed 's/.*[#@]//')
crate=$root/target/package/wordsplit-$version.crate
size=$(stat -c %s "$crate")
echo "== $(basename "$crate"): $((size / 1024)) KiB (crates.io takes up to 10 MiB)"
[ "$size" -lt $((10 * 1024 * 1024)) ]

# Unpacked outside the repository (inside, Cargo would take it for a member of the workspace),
# in one place with each file touched: the .crate's files all carry one fixed time, and Cargo
# decides by times which files changed since the last check.
unpacked=${TMPDIR:-/tmp}/wordsplit-crate-check-$(id -u)
rm -rf "$unpacked"
mkdir -p "$unpacked"
tar -xzf "$crate" -C "$unpacked"
find "$unpacked" -type f -exec touch {} +
echo "== cargo test in the unpacked crate ($unpacked/wordsplit-$version)"
cd "$unpacked/wordsplit-$version"
CARGO_TARGET_DIR=$root/target/crate-check cargo test --locked --no-fail-fast

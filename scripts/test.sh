#!/usr/bin/env bash
# Runs txpace's whole test suite, installing what it needs first (the Debian packages, the
# `solana-test-validator` and `txpace-localnet` binaries, each skipped when present):
# formatting, lints of every package of the workspace (the benchmark against Agave's clients
# included, so the README's comparison comes from code that builds), unit and simulator tests,
# UI snapshot tests, and the end-to-end tests on a real local validator and on a 3-node cluster
# (the `localnet` package is formatted here and exercised through that cluster test). Ends with
# `tests: N passed, N failed` over every test binary, and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

cargo fmt --all --check
cargo fmt --manifest-path localnet/Cargo.toml --check
# --workspace: the bench package is not a default member, so a plain `cargo clippy` skips it.
cargo clippy --workspace --all-targets --locked -- -D warnings
scripts/cargo-test-summary.sh --locked "$@"

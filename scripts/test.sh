#!/usr/bin/env bash
# Runs txpace's whole test suite, installing what it needs first (the Debian packages and the
# `solana-test-validator` binary, both skipped when present): formatting, lints, unit and
# simulator tests, UI snapshot tests and the end-to-end tests on a real local validator.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked "$@"

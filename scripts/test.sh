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
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --locked "$@" 2>&1 | tee "$log"
# One closing line over every test binary (cargo's last line is the doc tests' own).
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$log"

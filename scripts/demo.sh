#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages, `solana-test-validator`, both skipped when present)
# and runs `txpace demo`: a local validator, 5,000 generated self-transfers and the live
# dashboard sending them at 100 tx/s. Extra arguments go to `txpace demo` (try `--help`).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
cargo run --release --locked -- demo "$@"

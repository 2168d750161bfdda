#!/usr/bin/env bash
# Runs txpace's whole test suite, installing what it needs first (the Debian packages, the
# `solana-test-validator` and `txpace-localnet` binaries, each skipped when present):
# formatting, lints of every package of the workspace (the benchmark against Agave's clients
# included, so the published comparison in docs/performance.md comes from code that builds),
# unit and simulator tests, UI snapshot tests, and the end-to-end tests on a real local
# validator and on a 3-node cluster (the `localnet` package is formatted here and exercised
# through that cluster test; its relay crate, which has no Agave inside, is linted and tested
# here on its own, before the summary). Prints `tests: N passed, N failed` over every test
# binary of txpace's workspace (the bench package's included), then checks the run's test
# executables (at most 6 integration-test binaries, at most 1 GB on disk together;
# scripts/check-test-binaries.sh), and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

cargo fmt --all --check
# --all: the relay crate too (localnet/relay, a member of the localnet workspace).
cargo fmt --manifest-path localnet/Cargo.toml --all --check
# The relay's link model and its tests through real UDP sockets under a paused clock: that crate
# has no Agave inside, so this builds and runs in seconds.
cargo clippy --manifest-path localnet/Cargo.toml -p txpace-relay --all-targets --locked -- -D warnings
cargo test --manifest-path localnet/Cargo.toml -p txpace-relay --locked
# --workspace: the bench package is not a default member, so a plain `cargo clippy` skips it.
cargo clippy --workspace --all-targets --locked -- -D warnings

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
# One test at a time in every test binary: the transport's tests put real QUIC through a far,
# lossy relay in real time (`engine::quic::wan_tests`), and beside the other unit tests on 2
# cores a stream's credit came over a second late and the test failed. The end-to-end tests
# take the whole machine each anyway (tests/e2e/machine.rs); the rest cost some 40 s more.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-1}"
# --workspace: the bench package's own tests (its parsers, its goals' arithmetic) too; it is
# not a default member, so a plain `cargo test` skipped them.
scripts/cargo-test-summary.sh --locked --workspace "$@" | tee "$log" || status=$?
scripts/check-test-binaries.sh "$log" || status=1
exit "$status"

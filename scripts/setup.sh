#!/usr/bin/env bash
# Installs what txpace's demo, tests and benchmarks need on a fresh Debian machine: the tools
# the tests run (`script` of util-linux, Debian package bsdutils, for the pseudo-terminal tests;
# python3 for the independent encoder of the input-format tests; procps `kill`; groff, zsh and
# fish to check the man pages and completion scripts txpace generates), the Debian
# build dependencies of Agave, Agave's `solana-test-validator` and this repository's
# `txpace-localnet` (several validators in one process, the `localnet` package), both into
# cargo's bin directory. Each step is skipped when done.
#
# Both binaries come out of one cargo build of the `localnet` workspace: its lock is
# agave-validator 4.0.0's own plus the cluster crate and clap 4, and it depends on
# agave-validator, so Agave is resolved and compiled once, with one feature set, for both. The
# build runs in `$TXPACE_AGAVE_TARGET` (kept between runs). Its flags remap cargo's registry
# path to a relative one: Agave's local cluster names each node's ledger after its own source
# file (`file!()`), which is absolute for a registry crate and would put the ledgers inside
# cargo's registry instead of the cluster's directory.
set -euo pipefail

AGAVE_VERSION="${AGAVE_VERSION:-4.0.0}"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
AGAVE_TARGET="${TXPACE_AGAVE_TARGET:-$HOME/.cache/txpace/agave-target}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
# Written next to txpace-localnet once it is installed: the digest of the sources it was built
# from, so a changed `localnet` package is rebuilt and an unchanged one is not.
LOCALNET_STAMP="$CARGO_BIN/.txpace-localnet.source"
AGAVE_RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/registry/src/=registry/"
# What the tests run; a test that misses one fails and names its package.
TEST_DEBS=(bsdutils python3 procps groff-base zsh fish)
# What building agave-validator needs.
DEBS=(clang libclang-dev protobuf-compiler libudev-dev pkg-config libssl-dev cmake)

# Installs the Debian packages among its arguments that are not installed yet.
install_debs() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "setup: installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

have_validator() {
  local bin
  bin="$(command -v solana-test-validator || true)"
  [ -n "$bin" ] || bin="$CARGO_BIN/solana-test-validator"
  [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $AGAVE_VERSION"
}

# The package and the relay crate it includes (localnet/relay, a member of its workspace).
localnet_source() {
  (cd "$REPO/localnet" && cat Cargo.toml Cargo.lock relay/Cargo.toml \
    $(find src relay/src -name '*.rs' | sort)) | sha256sum | cut -d' ' -f1
}

have_localnet() {
  [ -x "$CARGO_BIN/txpace-localnet" ] && [ -f "$LOCALNET_STAMP" ] &&
    [ "$(cat "$LOCALNET_STAMP")" = "$(localnet_source)" ]
}

install_debs "${TEST_DEBS[@]}"

if have_validator && have_localnet; then
  echo "setup: solana-test-validator $AGAVE_VERSION and txpace-localnet already installed"
else
  install_debs "${DEBS[@]}"
  echo "setup: building solana-test-validator $AGAVE_VERSION and txpace-localnet in one build" \
    "(30 to 45 minutes on 2 cores, once)"
  RUSTFLAGS="$AGAVE_RUSTFLAGS" PROTOC=/usr/bin/protoc cargo build --release --locked \
    --manifest-path "$REPO/localnet/Cargo.toml" --target-dir "$AGAVE_TARGET" \
    -p txpace-localnet -p agave-validator --bin txpace-localnet --bin solana-test-validator
  mkdir -p "$CARGO_BIN"
  install -m 755 "$AGAVE_TARGET/release/solana-test-validator" "$AGAVE_TARGET/release/txpace-localnet" \
    "$CARGO_BIN/"
  localnet_source > "$LOCALNET_STAMP"
  have_validator
  echo "setup: solana-test-validator and txpace-localnet installed in $CARGO_BIN"
fi

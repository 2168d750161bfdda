#!/usr/bin/env bash
# Installs what txpace's demo, tests and benchmarks need on a fresh Debian machine: the tools
# the tests run (`script` of util-linux, Debian package bsdutils, for the pseudo-terminal tests;
# python3 for the independent encoder of the input-format tests; procps `kill`; groff, zsh and
# fish to check the man pages and completion scripts txpace generates), the Debian
# build dependencies of agave-validator, and the `solana-test-validator` binary itself (into
# cargo's home, so later runs skip the ~25 minute build). Each step is skipped when done.
set -euo pipefail

AGAVE_VERSION="${AGAVE_VERSION:-4.0.0}"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
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

install_debs "${TEST_DEBS[@]}"

if have_validator; then
  echo "setup: solana-test-validator $AGAVE_VERSION already installed"
  exit 0
fi

install_debs "${DEBS[@]}"

echo "setup: building solana-test-validator $AGAVE_VERSION (about 25 minutes on 2 cores, once)"
PROTOC=/usr/bin/protoc cargo install agave-validator --version "$AGAVE_VERSION" --locked \
  --bin solana-test-validator
have_validator
echo "setup: solana-test-validator installed in $CARGO_BIN"

#!/usr/bin/env bash
# Installs what txpace's demo, tests and benchmarks need on a fresh Debian machine:
# the Debian build dependencies of agave-validator and the `solana-test-validator`
# binary itself (into cargo's home, so later runs skip the ~25 minute build).
set -euo pipefail

AGAVE_VERSION="${AGAVE_VERSION:-4.0.0}"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
DEBS=(clang libclang-dev protobuf-compiler libudev-dev pkg-config libssl-dev cmake)

have_validator() {
  local bin
  bin="$(command -v solana-test-validator || true)"
  [ -n "$bin" ] || bin="$CARGO_BIN/solana-test-validator"
  [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $AGAVE_VERSION"
}

if have_validator; then
  echo "setup: solana-test-validator $AGAVE_VERSION already installed"
  exit 0
fi

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

echo "setup: building solana-test-validator $AGAVE_VERSION (about 25 minutes on 2 cores, once)"
PROTOC=/usr/bin/protoc cargo install agave-validator --version "$AGAVE_VERSION" --locked \
  --bin solana-test-validator
have_validator
echo "setup: solana-test-validator installed in $CARGO_BIN"

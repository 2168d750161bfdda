#!/usr/bin/env bash
# Fetches real SBF programs for txpace's deploy tests and benchmark from a crates.io package,
# through cargo, without building it: litesvm ships the SPL programs' .so files in its source.
# Nothing fetched here is committed; the files land in the cache directory printed at the end.
#
#   scripts/fetch-programs.sh            # -> ${CARGO_TARGET_DIR:-target}/programs/
#   PROGRAMS_DIR=/tmp/p scripts/fetch-programs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LITESVM_VERSION="0.17.0"
# name in the cache | file inside the crate | sha256 (checked: the tests trust these bytes)
PROGRAMS=(
  "spl_token_2022.so|src/programs/elf/spl_token_2022-11.0.0.so|495e9d7680dd555cb126a6a8e5464af5be9b01f02f2cd70634352722d22e3cad"
  "spl_memo.so|src/programs/elf/spl_memo-4.0.0.so|0c92063c6838d9ad8af50aaefea9a166b5bb41a2bfa2bc6327d7db320849bc78"
)
OUT="${PROGRAMS_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/programs}"
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
CRATE="litesvm-$LITESVM_VERSION"

have_all() {
  local entry name
  for entry in "${PROGRAMS[@]}"; do
    name="${entry%%|*}"
    [ -s "$OUT/$name" ] || return 1
  done
}

if have_all; then
  echo "fetch-programs: already in $OUT"
  exit 0
fi

find_crate() {
  local f
  for f in "$CARGO_HOME"/registry/cache/*/"$CRATE.crate"; do
    [ -f "$f" ] && echo "$f" && return 0
  done
  return 0
}

crate_file="$(find_crate)"
if [ -z "$crate_file" ]; then
  # Cargo downloads the package to read its manifest; that is all we need from it.
  echo "fetch-programs: downloading $CRATE through cargo"
  cargo info --quiet "litesvm@$LITESVM_VERSION" >/dev/null 2>&1 || true
  crate_file="$(find_crate)"
fi
if [ -z "$crate_file" ]; then
  # The documented way: a throwaway project that depends on the crate, and `cargo fetch`
  # (which downloads its whole dependency tree too, so it is the fallback).
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src"
  printf '[package]\nname = "fetch-programs"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nlitesvm = "=%s"\n' \
    "$LITESVM_VERSION" >"$tmp/Cargo.toml"
  : >"$tmp/src/lib.rs"
  echo "fetch-programs: cargo fetch of a throwaway project depending on $CRATE"
  (cd "$tmp" && cargo fetch --quiet)
  crate_file="$(find_crate)"
fi
if [ -z "$crate_file" ]; then
  echo "fetch-programs: could not get $CRATE from crates.io through cargo" >&2
  exit 1
fi

mkdir -p "$OUT"
work="$(mktemp -d)"
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r name inner sum <<<"$entry"
  tar -xzf "$crate_file" -C "$work" "$CRATE/$inner"
  if [ -n "$sum" ] && ! echo "$sum  $work/$CRATE/$inner" | sha256sum --check --quiet -; then
    echo "fetch-programs: $inner in $crate_file does not have the expected sha256" >&2
    rm -rf "$work"
    exit 1
  fi
  cp "$work/$CRATE/$inner" "$OUT/$name.tmp"
  mv "$OUT/$name.tmp" "$OUT/$name"
  echo "fetch-programs: $OUT/$name ($(stat -c %s "$OUT/$name") bytes, from $CRATE/$inner)"
done
rm -rf "$work"

#!/usr/bin/env bash
# Checks the test executables of one `cargo test` run, from that run's output (a file): at most
# 6 integration-test binaries (`Running tests/...` lines), and the executables the run started
# (its `Running` lines: unit-test and integration-test binaries) at most 1 GB (10^9 bytes) on
# disk together. Only this run's executables are counted: the target directory also keeps
# earlier builds' copies, under other hashes. Prints one line with the figures, and the reason
# when a bound is exceeded; exits non-zero then.
#
# Kept apart from scripts/test.sh so that tests/fast/scripts.rs can run it on a made-up output.
set -euo pipefail
log="${1:?usage: check-test-binaries.sh CARGO_TEST_OUTPUT}"
max_binaries=6
max_bytes=1000000000

# `     Running tests/fast/main.rs (/target/debug/deps/fast-0123abcd)`: the path is in the
# parentheses, relative to the directory cargo ran in (this one) unless absolute.
integration=0
total=0
count=0
while IFS= read -r line; do
  exe="${line##*(}"
  exe="${exe%)}"
  case "$line" in
    *" Running tests/"*) integration=$((integration + 1)) ;;
  esac
  if [ ! -f "$exe" ]; then
    echo "test binaries: $exe, named by the run, is not on disk" >&2
    exit 1
  fi
  total=$((total + $(stat -c %s "$exe")))
  count=$((count + 1))
done < <(grep -E '^ +Running .*\(.*\)$' "$log" || true)

mb=$(((total + 500000) / 1000000))
echo "test binaries: $integration integration (at most $max_binaries), $count in all, $mb MB on disk (at most $((max_bytes / 1000000)) MB)"
status=0
if [ "$integration" -gt "$max_binaries" ]; then
  echo "test binaries: $integration integration-test binaries, more than $max_binaries: put new tests in a harness (tests/fast, tests/e2e), not in a file of their own under tests/" >&2
  status=1
fi
if [ "$total" -gt "$max_bytes" ]; then
  echo "test binaries: $total bytes on disk, more than $max_bytes: look at debug info (Cargo.toml's [profile.dev]) and at the number of binaries" >&2
  status=1
fi
exit "$status"

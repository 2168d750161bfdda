#!/usr/bin/env bash
# Runs `cargo test --no-fail-fast` with the given arguments, shows its output, and closes with
# one line over every test binary: `tests: N passed, N failed`. A test binary that ends without
# its `test result:` line (it crashed, or was killed) counts as one failed test, and so does a
# failing cargo whose output shows no failed test (a build error): the line never says
# "0 failed" of a run that failed. Exits non-zero whenever anything failed.
#
# Kept apart from scripts/test.sh so that tests/fast/scripts.rs can run it against a stand-in cargo.
set -uo pipefail

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# --no-fail-fast: without it cargo stops at the first failing test binary, and the count would
# miss every binary after it.
cargo test --no-fail-fast "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# `Running`/`Doc-tests` start a test binary; `test result:` ends one.
awk -v status="$status" '
  /^     Running |^   Doc-tests / { started++ }
  /^test result:/ { ended++; passed += $4; failed += $6 }
  END {
    crashed = started - ended
    if (crashed > 0) failed += crashed
    if (status != 0 && failed == 0) failed = 1
    printf "tests: %d passed, %d failed", passed, failed
    if (crashed > 0) printf " (%d test binaries ended without a result, counted as failed)", crashed
    if (status != 0 && started == 0) printf " (cargo test exited %d before running any test)", status
    printf "\n"
    exit failed > 0 ? 1 : 0
  }' "$log"
summary=$?
if [ "$status" -ne 0 ]; then
  exit "$status"
fi
exit "$summary"

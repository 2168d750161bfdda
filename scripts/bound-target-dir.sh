#!/usr/bin/env bash
# Keeps a long-lived cargo target directory bounded: when it holds more than
# TXPACE_TARGET_LIMIT_GB (default 20) gigabytes — old test executables pile up there, one per
# change of the sources — it is emptied, and the next build starts cold. Below the limit it is
# kept, so consecutive runs reuse compiled dependencies.
set -euo pipefail
dir="${1:?usage: bound-target-dir.sh TARGET_DIR}"
limit_gb="${TXPACE_TARGET_LIMIT_GB:-20}"
[ -d "$dir" ] || exit 0
used_kb=$(du -sk "$dir" | cut -f1)
if [ "$used_kb" -gt $((limit_gb * 1024 * 1024)) ]; then
  echo "ci: $dir holds $((used_kb / 1024 / 1024)) GB, over the ${limit_gb} GB bound: emptying it"
  rm -rf "$dir"
else
  echo "ci: $dir holds $((used_kb / 1024)) MB (bound ${limit_gb} GB): kept"
fi

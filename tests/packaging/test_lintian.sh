#!/usr/bin/env bash
# lintian on the .deb: no errors allowed (warnings and info are printed, not fatal).
#   test_lintian.sh OUT_DIR
set -euo pipefail
out=$1
if ! command -v lintian >/dev/null; then
  echo "SKIP: lintian is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
deb=$(ls "$out"/brook_*.deb)
rc=0
lintian --fail-on error --display-info --tag-display-limit 0 "$deb" >"$out/lintian.txt" 2>&1 || rc=$?
cat "$out/lintian.txt"
if grep -q '^E: ' "$out/lintian.txt" || [ "$rc" -ne 0 ]; then
  echo "FAIL: lintian reported errors (exit $rc)"
  exit 1
fi
echo "ok: lintian found no errors in $(basename "$deb")"

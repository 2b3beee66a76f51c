#!/usr/bin/env bash
# The second README command (and what CI runs): installs what is missing, builds, runs every
# test with CTest. Tests labelled `cuda` skip themselves when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900 -j "$(nproc)" "$@"

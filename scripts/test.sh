#!/usr/bin/env bash
# The second README command (and what CI runs): installs what is missing, builds, runs every
# test with CTest. Tests labelled `cuda` skip themselves when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# The OpenAI SDK test needs the `openai` npm package (tests/server/openai_sdk); without npm it skips.
if command -v npm >/dev/null 2>&1; then
  npm ci --prefix tests/server/openai_sdk --no-audit --no-fund --loglevel=error \
    || echo "warning: npm ci failed; the openai_sdk test will be skipped"
fi
ctest --test-dir build --output-on-failure --timeout 900 -j "$(nproc)" "$@"

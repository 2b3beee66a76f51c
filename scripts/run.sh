#!/usr/bin/env bash
# The first README command: installs what is missing, builds Brook (Release) and answers one
# chat message with the model folder given: scripts/run.sh MODEL_DIR ["your message"]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: scripts/run.sh MODEL_DIR [\"message\"]" >&2
  echo "  MODEL_DIR: a Hugging Face folder of baidu/ERNIE-4.5-0.3B-PT (config.json, model.safetensors, tokenizer.model)" >&2
  echo "  no model at hand? build/bin/brook-make-test-model /tmp/tiny-ernie writes a random-weight one" >&2
  exit 2
fi
model="$1"
message="${2:-Hello! Who are you?}"
bash scripts/install-deps.sh
bash scripts/build.sh
exec build/bin/brook-run --model "$model" --chat "$message" --max-tokens 256

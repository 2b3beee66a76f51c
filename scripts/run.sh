#!/usr/bin/env bash
# The first README command: installs what is missing, builds Brook (Release) and starts it on a
# model: scripts/run.sh [MODEL] ["message"]
#   MODEL: a model folder or a Hugging Face id (default baidu/ERNIE-4.5-0.3B-PT, downloaded into
#          the Hugging Face cache once; HF_ENDPOINT selects a mirror).
#   With a message, or without a display, brook-run answers it in the terminal; otherwise the
#   desktop app opens on the model.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-baidu/ERNIE-4.5-0.3B-PT}"
message="${2:-}"
bash scripts/install-deps.sh
bash scripts/build.sh
if [ -z "$message" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } && [ -x build/bin/brook ]; then
  if [ ! -d "$model" ]; then
    # The app opens folders; fetch the id into the cache first (brook-run resolves and downloads).
    build/bin/brook-run --model "$model" --prompt-token-ids 1 --max-tokens 1 >/dev/null
    model="$(ls -d "${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}/models--${model//\//--}"/snapshots/* | head -n 1)"
  fi
  exec build/bin/brook --model "$model"
fi
exec build/bin/brook-run --model "$model" --chat "${message:-你好！请介绍一下你自己。}" --max-tokens 256

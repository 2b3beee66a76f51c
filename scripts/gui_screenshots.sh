#!/usr/bin/env bash
# Retakes docs/screenshot-en.png and docs/screenshot-zh.png: the desktop app under Xvfb on the
# random-weight test model, with the demo conversations of docs/demo/ imported (the test model
# itself talks nonsense). Needs xvfb and imagemagick: scripts/gui_screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
work="$(mktemp -d)"
trap 'kill "${app:-0}" "${xvfb:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$build/bin/brook-make-test-model" "$work/tiny-ernie" >/dev/null
display=":$((90 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x820x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
shoot() {  # language, output, conversations...
  local language="$1" out="$2"
  shift 2
  local imports=()
  for c in "$@"; do imports+=(--import "$c"); done
  DISPLAY="$display" "$build/bin/brook" --data-dir "$work/data-$language" --language "$language" --theme light \
    --model "$work/tiny-ernie" "${imports[@]}" >/dev/null 2>&1 &
  app=$!
  sleep 8  # load, warm up, settle the status bar
  DISPLAY="$display" import -window root "$out"
  kill "$app"
  wait "$app" 2>/dev/null || true
}
shoot en docs/screenshot-en.png docs/demo/conversation-en.json
shoot zh_CN docs/screenshot-zh.png docs/demo/conversation-en.json docs/demo/conversation-zh.json
echo "wrote docs/screenshot-en.png and docs/screenshot-zh.png"

#!/usr/bin/env bash
# Retakes docs/dashboard-*.png: the performance window (View → Performance…) under Xvfb, on the
# random-weight test model, under load from its own load generator (the same code as
# `brook-bench serve`) for about a minute. The window is driven by test_performance_window's
# screenshotsUnderLoad: scripts/dashboard_screenshots.sh [BUILD_DIR] (needs Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
trap 'kill "${xvfb:-0}" 2>/dev/null || true' EXIT
display=":$((80 + RANDOM % 9))"
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
DISPLAY="$display" QT_QPA_PLATFORM=xcb BROOK_SCREENSHOT_DIR="$PWD/docs" \
  "$build/bin/test_performance_window" screenshotsUnderLoad >/dev/null
echo "wrote docs/dashboard-load.png, dashboard-requests.png, dashboard-serving.png, dashboard-results.png, dashboard-results-zh.png"

#!/usr/bin/env bash
# The Windows installer, end to end (label `windows`): packaging/windows/cross-build.sh builds Brook
# for Windows with mingw-w64 and packs the NSIS installer into OUT_DIR, then
# packaging/windows/wine-smoke.sh installs it into a fresh Wine prefix and uses it.
# Cross-building Qt takes about 21 minutes on 2 cores (more on a busy machine), which does not fit
# in CI beside everything else: without the cached Qt (~/.cache/brook-mingw) the test is skipped
# and says how to make the cache; the machine keeps it for later runs.
#   test_windows_installer.sh SOURCE_DIR OUT_DIR
set -euo pipefail
src=$1 out=$2
cache=${BROOK_MINGW_CACHE:-$HOME/.cache/brook-mingw}
if [ ! -f "$cache/qt-6.4.2/.brook-stamps/qtbase.done" ]; then
  echo "SKIP: no cross-built Qt in $cache (about 21 minutes on 2 cores, once per machine):"
  echo "      bash $src/packaging/windows/mingw-qt.sh"
  exit 77
fi
for tool in makensis wine64 Xvfb xdotool import curl x86_64-w64-mingw32-g++-posix; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is missing (bash $src/packaging/windows/mingw-qt.sh installs the packages)"
    exit 77
  fi
done
t0=$(date +%s)
bash "$src/packaging/windows/cross-build.sh" "$out"
setup=$(ls "$out"/brook-*-win64-setup.exe)
bash "$src/packaging/windows/wine-smoke.sh" "$setup" "$out/wine-smoke"
echo "cross build + wine smoke test: $(( $(date +%s) - t0 ))s"

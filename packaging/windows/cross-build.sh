#!/usr/bin/env bash
# cross-build.sh - builds Brook for Windows x86-64 on Debian 12 and packs the NSIS installer
# build-win/brook-<version>-win64-setup.exe, from a fresh clone:
#   1. Qt 6 (qtbase) for Windows with mingw-w64 (mingw-qt.sh; about 21 min on 2 cores the first
#      time, cached in ~/.cache/brook-mingw; it installs the Debian packages it needs);
#   2. sentencepiece and yaml-cpp for Windows (mingw-deps.sh; cached beside Qt);
#   3. Brook: the CPU backend, the app (without Qt Charts: BROOK_WITH_CHARTS=OFF), brook-serve,
#      brook-run, brook-bench, brook-quantize, brook-make-test-model;
#   4. the staged tree with Qt's DLLs and plugins and the MinGW runtime (deploy-dlls.sh);
#   5. the installer (installer.nsi), 64-bit.
# Prints how long each part took. What is verified where: docs/packaging.md.
#
#   packaging/windows/cross-build.sh [BUILD_DIR]        # default build-win
#
# Environment: BROOK_MINGW_CACHE (~/.cache/brook-mingw), BROOK_MINGW_JOBS (nproc),
#              BROOK_MINGW_SKIP_APT=1 (do not run apt-get; the packages must be there).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/packaging/windows
BUILD=$(mkdir -p "${1:-$ROOT/build-win}" && cd "${1:-$ROOT/build-win}" && pwd)
export BROOK_MINGW_CACHE=${BROOK_MINGW_CACHE:-$HOME/.cache/brook-mingw}
JOBS=${BROOK_MINGW_JOBS:-$(nproc)}
T0=$(date +%s)
TIMINGS=()

log() { printf '\n=== [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
timed() {  # timed <label> <command...>
  local label=$1 t=$(date +%s); shift
  "$@"
  TIMINGS+=("$(printf '%-24s %6ss' "$label" $(( $(date +%s) - t )))")
}

# Brook's own Linux build dependencies (header-only libraries are copied from /usr/include).
if [ "${BROOK_MINGW_SKIP_APT:-0}" != 1 ] && ! dpkg-query -W -f='${Status}' libspdlog-dev 2>/dev/null | grep -q 'ok installed'; then
  timed "brook's packages" bash "$ROOT/scripts/install-deps.sh"
fi

log "Qt for Windows"
timed "qt (mingw-qt.sh)" env BROOK_MINGW_PREFIX="$BROOK_MINGW_CACHE/qt-6.4.2" bash "$HERE/mingw-qt.sh"
QT=$BROOK_MINGW_CACHE/qt-6.4.2
TOOLCHAIN=$QT-toolchain.cmake
[ -f "$TOOLCHAIN" ] || die "mingw-qt.sh left no $TOOLCHAIN"

log "sentencepiece, yaml-cpp, cpp-httplib for Windows"
timed "libraries (mingw-deps)" bash "$HERE/mingw-deps.sh" "$TOOLCHAIN"
DEPS=$BROOK_MINGW_CACHE/deps

log "Brook for Windows in $BUILD"
configure() {
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_FIND_ROOT_PATH="$DEPS" -DCMAKE_PREFIX_PATH="$DEPS" \
    -DBROOK_HEADER_ONLY_DEPS=ON -DBROOK_WITH_CUDA=OFF -DBROOK_WITH_CHARTS=OFF -DBROOK_BUILD_TESTS=OFF \
    -DBROOK_WITH_GUI=ON >"$BUILD/configure.log" 2>&1 || { tail -n 30 "$BUILD/configure.log"; die "configure failed"; }
}
timed "brook configure" configure
timed "brook build" ninja -C "$BUILD" -j"$JOBS"

log "staging and deploying"
stage() {
  rm -rf "$BUILD/stage" "$BUILD/nsis"
  cmake --install "$BUILD" --prefix "$BUILD/stage" >"$BUILD/install.log"
  bash "$HERE/deploy-dlls.sh" "$BUILD/stage" "$QT"
  bash "$HERE/nsis-file-lists.sh" "$BUILD/stage" "$BUILD/nsis"
}
timed "stage + deploy" stage

VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
SETUP=$BUILD/brook-$VERSION-win64-setup.exe
log "installer $SETUP"
timed "installer (makensis)" makensis -V2 -DSTAGE="$BUILD/stage" -DVERSION="$VERSION" -DOUTFILE="$SETUP" \
  -DFILELIST="$BUILD/nsis" "$HERE/installer.nsi"

log "done in $(( $(date +%s) - T0 ))s"
printf '%s\n' "${TIMINGS[@]}"
echo "installer: $SETUP ($(du -h "$SETUP" | cut -f1))"

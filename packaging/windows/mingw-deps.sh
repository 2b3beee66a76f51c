#!/usr/bin/env bash
# mingw-deps.sh - cross-builds the libraries Brook links for Windows x86-64 that Debian ships only
# for Linux, from Debian's own source packages, into one prefix cached beside the cross-built Qt:
#   sentencepiece (static, its bundled protobuf-lite), yaml-cpp (static), and cpp-httplib's
#   single header (Debian's -dev package ships a split header whose definitions live in a Linux
#   .so; the source package has the whole header-only library).
# Header-only libraries (spdlog, fmt, nlohmann-json, CLI11) are used from Debian's /usr/include.
# Idempotent: a stamp per library, so a re-run takes seconds.
#
#   bash packaging/windows/mingw-deps.sh TOOLCHAIN_FILE    # prints the prefix on its last line
#
# Environment: BROOK_MINGW_CACHE (default ~/.cache/brook-mingw), BROOK_MINGW_JOBS (default nproc).
set -euo pipefail

TOOLCHAIN=${1:?usage: mingw-deps.sh TOOLCHAIN_FILE}
CACHE=${BROOK_MINGW_CACHE:-$HOME/.cache/brook-mingw}
JOBS=${BROOK_MINGW_JOBS:-$(nproc)}
PREFIX=$CACHE/deps
WORK=$CACHE/deps-work
mkdir -p "$PREFIX/include" "$WORK/src" "$WORK/logs" "$PREFIX/.brook-stamps"

log() { printf '=== [%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
run_logged() {
  local logf=$1; shift
  if ! "$@" >"$logf" 2>&1; then tail -n 30 "$logf" >&2; die "failed (log: $logf): $*"; fi
}

# source_dir <package> <glob>: `apt-get source` once (deb-src entries: mingw-qt.sh adds them).
source_dir() {
  local pkg=$1 glob=$2 dir
  dir=$(cd "$WORK/src" && ls -d $glob 2>/dev/null | head -n1 || true); dir=${dir%/}
  if [ -z "$dir" ] || [ ! -f "$WORK/src/$dir/.brook-extracted" ]; then
    [ -n "$dir" ] && rm -rf "${WORK:?}/src/$dir"
    (cd "$WORK/src" && apt-get source "$pkg") >"$WORK/logs/source-$pkg.log" 2>&1 ||
      die "apt-get source $pkg failed: $WORK/logs/source-$pkg.log"
    dir=$(cd "$WORK/src" && ls -d $glob | head -n1); dir=${dir%/}
    touch "$WORK/src/$dir/.brook-extracted"
  fi
  echo "$WORK/src/$dir"
}

# cmake_library <name> <source dir> <cmake options...>
cmake_library() {
  local name=$1 src=$2; shift 2
  [ -f "$PREFIX/.brook-stamps/$name" ] && { log "$name: cached"; return; }
  log "$name: building from $(basename "$src")"
  local build=$WORK/build-$name
  rm -rf "$build"
  run_logged "$WORK/logs/$name-configure.log" cmake -G Ninja -S "$src" -B "$build" \
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" "$@"
  run_logged "$WORK/logs/$name-build.log" ninja -C "$build" -j"$JOBS"
  run_logged "$WORK/logs/$name-install.log" ninja -C "$build" install
  rm -rf "$build"
  date -u +%FT%TZ >"$PREFIX/.brook-stamps/$name"
}

SPM=$(source_dir sentencepiece 'sentencepiece-*/')
# Debian's patch drops the static targets; static libraries mean no extra DLLs to ship, so the
# patch is reversed in this private copy of the source.
if [ ! -f "$SPM/.brook-static" ]; then
  (cd "$SPM" && patch -R -p1 --quiet <debian/patches/disable-static-library.patch) ||
    die "could not restore sentencepiece's static libraries"
  touch "$SPM/.brook-static"
fi
cmake_library sentencepiece "$SPM" -DSPM_ENABLE_SHARED=OFF -DSPM_ENABLE_TCMALLOC=OFF \
  -DSPM_USE_BUILTIN_PROTOBUF=ON -DSPM_BUILD_TEST=OFF

YAML=$(source_dir yaml-cpp 'yaml-cpp-*/')
cmake_library yaml-cpp "$YAML" -DYAML_BUILD_SHARED_LIBS=OFF -DYAML_CPP_BUILD_TESTS=OFF \
  -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=OFF

if [ ! -f "$PREFIX/.brook-stamps/cpp-httplib" ]; then
  HTTPLIB=$(source_dir cpp-httplib 'cpp-httplib-*/')
  cp "$HTTPLIB/httplib.h" "$PREFIX/include/httplib.h"
  date -u +%FT%TZ >"$PREFIX/.brook-stamps/cpp-httplib"
fi
# Debian's header-only libraries, copied so the cross build never puts /usr/include (glibc's
# headers) on its include path. CMake: -DBROOK_HEADER_ONLY_DEPS=ON.
for dir in spdlog fmt nlohmann CLI; do
  [ -d "/usr/include/$dir" ] || die "/usr/include/$dir is missing: run scripts/install-deps.sh"
  rm -rf "${PREFIX:?}/include/$dir"
  cp -r "/usr/include/$dir" "$PREFIX/include/$dir"
done
echo "$PREFIX"

#!/usr/bin/env bash
# Configures (when needed) and builds Brook in build/ (Release). A fresh configure on a machine
# without a GPU compiles CUDA for one architecture only (sm_90); with a GPU, for the GPU present.
# Set BROOK_CUDA_ARCHITECTURES to override (the release preset builds 75;80;86;87;89;90).
set -euo pipefail
cd "$(dirname "$0")/.."

# A configure that failed or was interrupted leaves CMakeCache.txt without build.ninja: configure
# again (keeping the cache's answers) until the generator's output exists.
if [ ! -f build/CMakeCache.txt ] || [ ! -f build/build.ninja ]; then
  archs="${BROOK_CUDA_ARCHITECTURES:-}"
  if [ -z "$archs" ]; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then archs=native; else archs=90; fi
  fi
  if ! cmake --preset release -DCMAKE_CUDA_ARCHITECTURES="$archs"; then
    # A cache from a failed run can hold a wrong answer (a library not found then, installed now):
    # start over once from an empty cache before giving up.
    echo "build.sh: configure failed; retrying from a clean cache" >&2
    rm -rf build/CMakeCache.txt build/CMakeFiles
    cmake --preset release -DCMAKE_CUDA_ARCHITECTURES="$archs"
  fi
fi
cmake --build build --parallel "$(nproc)"

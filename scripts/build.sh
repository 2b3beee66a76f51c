#!/usr/bin/env bash
# Configures (once) and builds Brook in build/ (Release). A fresh configure on a machine
# without a GPU compiles CUDA for one architecture only (sm_90); with a GPU, for the GPU present.
# Set BROOK_CUDA_ARCHITECTURES to override (the release preset builds 75;80;86;87;89;90).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build/CMakeCache.txt ]; then
  archs="${BROOK_CUDA_ARCHITECTURES:-}"
  if [ -z "$archs" ]; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then archs=native; else archs=90; fi
  fi
  cmake --preset release -DCMAKE_CUDA_ARCHITECTURES="$archs"
fi
cmake --build build --parallel "$(nproc)"

#!/bin/bash
# llama.cpp's source for the comparisons in this folder, from the npm registry: the node-llama-cpp
# package, which desktop apps embed, carries the llama.cpp release it builds as a git bundle.
# Clones it to WORK/src, and packs the part a build needs (7 MB) as WORK/llama.cpp-src.tar.xz for
# machines without npm (the GPU machine: gpu_compare.sh).
# Usage: bench/llamacpp/fetch.sh [WORK]
set -euo pipefail
WORK=${1:-/tmp/llamacpp}
NODE_LLAMA_CPP=3.22.1 # its bundle is llama.cpp de3ff81 (2026-09-28)
mkdir -p "$WORK"
if [ ! -d "$WORK/src/.git" ]; then
    (cd "$WORK" && npm pack --silent "node-llama-cpp@$NODE_LLAMA_CPP" >/dev/null &&
        mkdir -p pkg && tar xzf "node-llama-cpp-$NODE_LLAMA_CPP.tgz" -C pkg)
    rm -rf "$WORK/src"
    git clone --quiet "$WORK/pkg/package/llama/gitRelease.bundle" "$WORK/src"
fi
[ -f "$WORK/llama.cpp-src.tar.xz" ] ||
    git -C "$WORK/src" archive --format=tar HEAD CMakeLists.txt cmake common ggml include src tools vendor \
        licenses LICENSE | xz -6 >"$WORK/llama.cpp-src.tar.xz"
echo "llama.cpp $(git -C "$WORK/src" rev-parse --short HEAD) in $WORK/src"

# Source THERE (the GPU machine, in the repository root): unpacks .devdebs/ into /tmp/brook-deps
# once and exports what CMake and the programs need to find those libraries.
deps=/tmp/brook-deps
if [ ! -d "$deps/usr" ]; then
  mkdir -p "$deps"
  for f in .devdebs/*.deb; do dpkg-deb -x "$f" "$deps"; done
fi
export CMAKE_PREFIX_PATH="$deps/usr"
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:$deps/usr/lib/x86_64-linux-gnu/openblas-pthread:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
export QT_QPA_PLATFORM=offscreen
brook_gpu_configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DBROOK_WITH_GUI=OFF -DBROOK_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DBROOK_CUDA_LINEINFO=ON -DCMAKE_PREFIX_PATH="$deps/usr" "$@"
}

# Source THERE (the GPU machine, in the repository root): unpacks .devdebs/ into /tmp/brook-deps
# once and exports what CMake and the programs need to find those libraries.
deps=/tmp/brook-deps
if [ ! -d "$deps/usr" ]; then
  mkdir -p "$deps"
  for f in .devdebs/*.deb; do dpkg-deb -x "$f" "$deps"; done
fi
export CMAKE_PREFIX_PATH="$deps/usr"
export BROOK_DEPS_PREFIX="$deps"  # scripts/install-deps.sh: the packages are here, not from apt
# Some Debian packages (libdbus-1-3, libkeyutils1, ...) still install into /lib, not /usr/lib.
libdirs="$deps/usr/lib/x86_64-linux-gnu:$deps/lib/x86_64-linux-gnu:$deps/usr/lib/x86_64-linux-gnu/openblas-pthread"
export LD_LIBRARY_PATH="$libdirs:${LD_LIBRARY_PATH:-}"
# The linker resolves the Debian Qt libraries' own dependencies here first: the machine's older
# libdbus lacks the versioned symbols libQt6DBus needs, and a GUI build linked against it fails.
# CMake reads LDFLAGS once, when it configures a fresh build directory.
export LDFLAGS="-Wl,-rpath-link,$libdirs ${LDFLAGS:-}"
export PATH="/usr/local/cuda/bin:$PATH"
export QT_QPA_PLATFORM=offscreen
export QT_PLUGIN_PATH="$deps/usr/lib/x86_64-linux-gnu/qt6/plugins"
# Fonts for the app's offscreen screenshots: the unpacked ones (the machine may have none).
if [ -d "$deps/usr/share/fonts" ] && [ ! -f "$deps/fonts.conf" ]; then
  printf '<?xml version="1.0"?>\n<fontconfig><dir>%s</dir><cachedir>/tmp/brook-fontconfig</cachedir></fontconfig>\n' \
    "$deps/usr/share/fonts" > "$deps/fonts.conf"
fi
[ -f "$deps/fonts.conf" ] && export FONTCONFIG_FILE="$deps/fonts.conf"
brook_gpu_configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DBROOK_WITH_GUI=OFF -DBROOK_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DBROOK_CUDA_LINEINFO=ON -DCMAKE_PREFIX_PATH="$deps/usr" "$@"
}

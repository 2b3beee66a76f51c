#!/usr/bin/env bash
# Installs the Debian 12 / Ubuntu 24.04 packages Brook builds against, if any is missing.
# Uses sudo when not root. CUDA is optional: the CUDA backend builds when /usr/local/cuda/bin/nvcc exists.
# On a system without apt (or where apt does not know a package) it names what Brook needs and
# stops, so the build never starts half-equipped.
set -euo pipefail

# Each group says why it is needed; the failure message repeats these reasons.
declare -A why=(
  [toolchain]="C++20 compiler, CMake, Ninja"
  [qt]="the desktop app and the Qt Test suites (Qt 6 Widgets, Charts, Sql, Linguist)"
  [libs]="the engine and server (logging, tokenizer, JSON, HTTP, YAML, flags, BLAS)"
  [fonts]="Chinese text in the desktop app (its zh_CN interface and chats; boxes without a CJK font)"
  [packaging]="the packaging tests (tests/packaging) and the fresh-root tests (tests/fresh)"
  [node]="the OpenAI SDK server test (tests/server/openai_sdk)"
)
declare -A groups=(
  [toolchain]="build-essential cmake ninja-build pkg-config git"
  # libqt6opengl6-dev is only a Recommends of qt6-base-dev, but Qt6Charts' CMake package needs it.
  [qt]="qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libqt6sql6-sqlite qt6-translations-l10n"
  [libs]="libspdlog-dev libsentencepiece-dev nlohmann-json3-dev libcpp-httplib-dev libyaml-cpp-dev libcli11-dev libopenblas-dev libpcre2-dev libutf8proc-dev"
  [fonts]="fonts-noto-cjk"
  [packaging]="file lintian desktop-file-utils appstream dpkg-dev binutils debootstrap"
  [node]="nodejs npm"
)
order=(toolchain qt libs fonts packaging)
# A machine that already has npm from elsewhere (NodeSource's nodejs ships its own npm) must not
# get Debian's npm on top.
command -v npm >/dev/null 2>&1 || order+=(node)

explain() {  # $1: the reason it stops
  echo "install-deps.sh: $1" >&2
  echo "Brook needs these packages (Debian 12 / Ubuntu 24.04 names):" >&2
  for g in "${order[@]}"; do echo "  ${groups[$g]}  -- ${why[$g]}" >&2; done
  echo "CUDA 13 at /usr/local/cuda is optional (the GPU backend)." >&2
  exit 1
}

# BROOK_DEPS_PREFIX: the packages were unpacked into that folder instead (a machine that cannot
# reach apt, such as the GPU machine of scripts/gpu/, which sets it with CMAKE_PREFIX_PATH and
# LD_LIBRARY_PATH): nothing to install.
if [ -n "${BROOK_DEPS_PREFIX:-}" ]; then
  [ -d "$BROOK_DEPS_PREFIX/usr" ] || explain "BROOK_DEPS_PREFIX=$BROOK_DEPS_PREFIX has no usr/ folder of unpacked packages"
  echo "install-deps.sh: using the packages unpacked in $BROOK_DEPS_PREFIX"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  explain "this system has no apt-get/dpkg; install the equivalents with your package manager"
fi

packages=()
for g in "${order[@]}"; do packages+=(${groups[$g]}); done
# BROOK_DEPS_EXTRA: more package names (tests/fresh checks the unknown-name message with it).
packages+=(${BROOK_DEPS_EXTRA:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || explain "not root and no sudo: run as root, or install: ${missing[*]}"
  sudo="sudo"
fi
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq || explain "apt-get update failed (network or sources.list?)"
# apt-get install fails as a whole on one unknown name; find which ones apt does not know first.
unknown=()
for p in "${missing[@]}"; do
  apt-cache show "$p" >/dev/null 2>&1 || unknown+=("$p")
done
[ ${#unknown[@]} -eq 0 ] || explain "apt does not know: ${unknown[*]} (not Debian 12 / Ubuntu 24.04, or a source is missing)"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" \
  || explain "apt-get install failed for: ${missing[*]}"

#!/usr/bin/env bash
# Installs the Debian 12 / Ubuntu 24.04 packages Brook builds against, if any is missing.
# Uses sudo when not root. CUDA is optional: the CUDA backend builds when /usr/local/cuda/bin/nvcc exists.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-charts-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libqt6sql6-sqlite
  libspdlog-dev libsentencepiece-dev nlohmann-json3-dev libcpp-httplib-dev libyaml-cpp-dev
  libcli11-dev libopenblas-dev
  file lintian desktop-file-utils appstream qt6-translations-l10n)  # packaging tests (tests/packaging)
# Node.js and npm run the OpenAI SDK server test (tests/server/openai_sdk). A machine that already
# has them from elsewhere (NodeSource's nodejs ships its own npm) must not get Debian's npm on top.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

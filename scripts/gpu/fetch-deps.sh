#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with apt): downloads the .deb files the Qt-free targets and the
# Qt Test based tests need into .devdebs/ (ignored by git), for a GPU machine without apt access.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devdebs && cd .devdebs
apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libsentencepiece-dev libsentencepiece0 \
  nlohmann-json3-dev libcpp-httplib-dev libcpp-httplib0.11 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev \
  libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libgfortran5 libgomp1 \
  libqt6core6 libqt6test6 qt6-base-dev qt6-base-dev-tools libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 \
  libqt6network6 libqt6concurrent6 libqt6dbus6 libqt6sql6 libqt6gui6 libqt6widgets6 libqt6opengl6 libqt6xml6 \
  libqt6openglwidgets6 libqt6printsupport6 qmake6 qmake6-bin libglib2.0-0 libffi8 libssl-dev libssl3 libbrotli-dev libbrotli1 zlib1g-dev \
  libpcre2-dev libpcre2-8-0 libpcre2-32-0 libpcre2-posix3 libutf8proc-dev libutf8proc2
# The desktop app (scripts/gpu/smoke.sh builds the README's build, GUI included, and takes the
# app's screenshot offscreen): Qt Charts, Sql, Linguist tools, their libraries and a font.
apt-get download qt6-charts-dev libqt6charts6 qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools \
  libqt6sql6-sqlite libqt6opengl6-dev libgl-dev libglx-dev libopengl-dev libegl-dev libvulkan-dev libxkbcommon-dev libmd4c-dev \
  libqt6network6 libproxy1v5 libmd4c0 libxkbcommon0 libegl1 libglvnd0 libglx0 libopengl0 libgl1 \
  libfontconfig1 fontconfig-config fonts-dejavu-core libfreetype6 libpng16-16 libharfbuzz0b libgraphite2-3 \
  libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libsqlite3-0 libdbus-1-3 \
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libkeyutils1 libcom-err2
du -sh .

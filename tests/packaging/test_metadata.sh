#!/usr/bin/env bash
# The desktop metadata as packaged: the .desktop file (desktop-file-validate), the AppStream
# metainfo (appstreamcli validate), the systemd user unit, the icon sizes, and that the metainfo's
# newest release and the Debian changelog carry the project's version.
#   test_metadata.sh OUT_DIR VERSION APP_ID
set -euo pipefail
out=$1 version=$2 app_id=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$(ls "$out"/brook_*.deb)" "$work/deb"
share=$work/deb/usr/share
fail=0
check() { if "$@"; then echo "ok: $*"; else echo "FAIL: $*"; fail=1; fi; }

changelog_version=$(zcat "$share/doc/brook/changelog.gz" | head -n 1 | sed -n 's/^brook (\([^)]*\)).*/\1/p')
check test "$changelog_version" = "$version"
unit=$work/deb/usr/lib/systemd/user/brook-serve.service
check grep -q '^ExecStart=/usr/bin/brook-serve ' "$unit"
check grep -q '^WantedBy=default.target$' "$unit"

if [ -f "$share/applications/$app_id.desktop" ]; then
  # Without a CJK font the zh_CN interface is empty boxes on a minimal install: apt must bring one.
  recommends=$(dpkg-deb -f "$(ls "$out"/brook_*.deb)" Recommends)
  check grep -Eq '(^|, )fonts-noto-cjk \| fonts-wqy-microhei' <<<"$recommends"
  metainfo=$share/metainfo/$app_id.metainfo.xml
  release=$(grep -o '<release version="[^"]*"' "$metainfo" | head -n 1 | cut -d'"' -f2)
  check test "$release" = "$version"
  check grep -q "^Icon=$app_id\$" "$share/applications/$app_id.desktop"
  if command -v desktop-file-validate >/dev/null; then
    check desktop-file-validate "$share/applications/$app_id.desktop"
  else
    echo "note: desktop-file-validate missing (desktop-file-utils); not validated"
  fi
  if command -v appstreamcli >/dev/null; then
    check appstreamcli validate --no-net --explain "$metainfo"
  else
    echo "note: appstreamcli missing (appstream); not validated"
  fi
  check test -f "$share/icons/hicolor/scalable/apps/$app_id.svg"
  for size in 16 22 24 32 48 64 128 256 512; do
    png=$share/icons/hicolor/${size}x${size}/apps/$app_id.png
    check grep -q "PNG image data, $size x $size," <<<"$(file "$png")"
  done
fi

[ "$fail" -eq 0 ] || exit 1
echo "ok: packaged metadata is valid"

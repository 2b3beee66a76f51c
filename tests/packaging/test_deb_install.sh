#!/usr/bin/env bash
# Installs the .deb on this machine (dpkg -i, then apt-get -f install if a dependency is missing),
# checks the installed tree, runs the installed brook-serve --version and one completion against
# the test model, starts the installed GUI offscreen, then purges the package again.
#   test_deb_install.sh OUT_DIR VERSION APP_ID
set -euo pipefail
out=$1 version=$2 app_id=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/serve_completion.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: installing a .deb needs root (CI runs as root)"
  exit 77
fi
if dpkg-query -W -f='${Status}' brook 2>/dev/null | grep -q "ok installed"; then
  echo "SKIP: a brook package is already installed on this machine; not replacing it"
  exit 77
fi
deb=$(ls "$out"/brook_*.deb)
work=$(mktemp -d)
cleanup() {
  dpkg --purge brook >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! dpkg -i "$deb"; then
  echo "dpkg -i left dependencies missing; asking apt for them"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq
fi
dpkg-query -W -f='${Status}\n' brook | grep -q "install ok installed" \
  || { echo "FAIL: brook is not installed"; exit 1; }
echo "Depends: $(dpkg-query -W -f='${Depends}' brook)"

fail=0
check() { if "$@"; then echo "ok: $*"; else echo "FAIL: $*"; fail=1; fi; }
check test -x /usr/bin/brook-serve
check test -x /usr/bin/brook-run
check test -x /usr/bin/brook-bench
check test -f /usr/lib/systemd/user/brook-serve.service
check grep -q '^ExecStart=/usr/bin/brook-serve --config %E/brook/serve.yaml$' /usr/lib/systemd/user/brook-serve.service
check test -f /usr/share/doc/brook/copyright
check test -f /usr/share/doc/brook/changelog.gz
check test -f /usr/share/doc/brook/examples/serve.example.yaml
if command -v systemd-analyze >/dev/null; then
  # Any complaint (even one systemd would only warn about) fails the check.
  mkdir -m 700 "$work/xdg"
  verify=$(XDG_RUNTIME_DIR="$work/xdg" systemd-analyze --user verify /usr/lib/systemd/user/brook-serve.service 2>&1) \
    && [ -z "$verify" ] && echo "ok: systemd-analyze --user verify brook-serve.service" \
    || { echo "FAIL: systemd-analyze --user verify: $verify"; fail=1; }
fi

served=$(/usr/bin/brook-serve --version)
echo "$served"
check test "$served" = "brook-serve $version"

if [ -x /usr/bin/brook ]; then
  check test -f "/usr/share/applications/$app_id.desktop"
  check test -f "/usr/share/metainfo/$app_id.metainfo.xml"
  check test -f "/usr/share/icons/hicolor/scalable/apps/$app_id.svg"
  check test -f "/usr/share/icons/hicolor/48x48/apps/$app_id.png"
  gui=$(QT_QPA_PLATFORM=offscreen /usr/bin/brook --version 2>&1)
  echo "$gui"
  check grep -q "$version" <<<"$gui"
fi

serve_one_completion /usr/bin/brook-serve "$out/tiny-model" "$work/serve.log" || fail=1
if run_out=$(/usr/bin/brook-run --model "$out/tiny-model" --prompt "Hello" --max-tokens 4 --ignore-eos --json \
               --device cpu 2>"$work/run.log") && grep -q '"finish_reason":"length"' <<<"$run_out"; then
  echo "ok: brook-run: $run_out"
else
  echo "FAIL: brook-run: $run_out"; cat "$work/run.log"; fail=1
fi

[ "$fail" -eq 0 ] || exit 1
echo "ok: the installed .deb runs"

#!/usr/bin/env bash
# scripts/install-deps.sh on systems it cannot serve: it must stop with a message that names the
# packages Brook needs and why, never half-install. (1) No apt-get/dpkg-query on PATH: a sandbox
# PATH holding only the plain tools the script uses. (2) A package name apt does not know:
# BROOK_DEPS_EXTRA adds one, and a fake apt-get/apt-cache/dpkg-query pair (nothing installed,
# apt knows everything but that name) stands in for apt, so nothing on this machine changes.
#   test_install_deps_messages.sh SOURCE_DIR
set -euo pipefail
script="$1/scripts/install-deps.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
for tool in bash env id grep cat echo; do ln -s "$(command -v "$tool")" "$work/bin/$tool"; done

fail=0
expect() {  # name, exit code wanted, output, patterns...
  local name=$1 want=$2 rc=$3 out=$4; shift 4
  [ "$rc" -eq "$want" ] || { echo "FAIL: $name: exit $rc, wanted $want"; echo "$out"; fail=1; return; }
  for pattern in "$@"; do
    grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no '$pattern' in:"; echo "$out"; fail=1; return; }
  done
  echo "ok: $name"
}

rc=0; out=$(PATH="$work/bin" bash "$script" 2>&1) || rc=$?
expect "no apt" 1 "$rc" "$out" "has no apt-get" "qt6-base-dev" "libqt6opengl6-dev" "libspdlog-dev" "desktop app" "fonts-noto-cjk"

cat >"$work/bin/dpkg-query" <<'FAKE'
#!/bin/bash
exit 1
FAKE
cat >"$work/bin/apt-cache" <<'FAKE'
#!/bin/bash
[ "$2" != "brook-no-such-package" ]
FAKE
cat >"$work/bin/apt-get" <<'FAKE'
#!/bin/bash
[ "$1" = update ] && exit 0
echo "fake apt-get must not install: $*"; exit 3
FAKE
chmod +x "$work/bin/dpkg-query" "$work/bin/apt-cache" "$work/bin/apt-get"
rc=0; out=$(PATH="$work/bin" BROOK_DEPS_EXTRA=brook-no-such-package bash "$script" 2>&1) || rc=$?
expect "unknown package" 1 "$rc" "$out" "apt does not know: brook-no-such-package" "libcpp-httplib-dev"
if grep -q "must not install" <<<"$out"; then echo "FAIL: it installed despite an unknown name"; fail=1; fi
exit $fail

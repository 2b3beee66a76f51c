#!/usr/bin/env bash
# The .deb on a machine that has never seen Brook's source: a brand-new Debian 12 root gets the
# package through apt as a user installs it (dependencies and recommended packages), and nothing
# else of this build. There: a CJK font came with it (the zh_CN interface needs one),
# brook-make-test-model writes a model, brook-run answers, brook-serve gives one completion,
# brook-bench throughput --random-weights tiny runs, and the app starts offscreen and saves a
# screenshot of its window with the model loaded.
#   test_fresh_deb.sh OUT_DIR (the packaging fixture's folder: brook_*.deb)
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/fresh_root.sh"
fresh_root_check

work=$(mktemp -d /var/tmp/brook-fresh-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
fresh_root_make "$work/root"
deb=$(ls "$out"/brook_*.deb)
cp "$deb" "$work/root/tmp/"
cp "$here/../packaging/serve_completion.sh" "$work/root/tmp/"

start=$SECONDS
fresh_root_run "$work/root" '
  set -euo pipefail
  apt-get update -qq
  apt-get install -y -qq /tmp/brook_*.deb >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; exit 1; }
  echo "installed: $(dpkg-query -W -f="\${Package} \${Version}" brook)"
  fail=0
  check() { if "$@"; then echo "ok: $*"; else echo "FAIL: $*"; fail=1; fi; }
  # dpkg-query fails for the names that are not installed: only the grep decides.
  cjk_font_installed() {
    { dpkg-query -W -f="\${Status}\n" fonts-noto-cjk fonts-wqy-microhei fonts-wqy-zenhei 2>/dev/null || true; } |
      grep -q "ok installed"
  }
  check cjk_font_installed
  cd /tmp
  check brook-make-test-model /tmp/model --shape tiny --seed 7
  out=$(brook-run --model /tmp/model --prompt Hello --max-tokens 4 --ignore-eos --json --device cpu 2>/tmp/run.log) || true
  grep -q "\"finish_reason\":\"length\"" <<<"$out" && echo "ok: brook-run: $out" || { echo "FAIL: brook-run: $out"; cat /tmp/run.log; fail=1; }
  source /tmp/serve_completion.sh
  serve_one_completion /usr/bin/brook-serve /tmp/model /tmp/serve.log || fail=1
  bench=$(brook-bench throughput --random-weights tiny --device cpu --num-prompts 4 --input-len 16 --output-len 8 2>&1) \
    && grep -qi "tok" <<<"$bench" && echo "ok: brook-bench throughput: $(grep -i "tok/s" <<<"$bench" | head -n 1)" \
    || { echo "FAIL: brook-bench throughput --random-weights tiny:"; echo "$bench"; fail=1; }
  if [ -x /usr/bin/brook ]; then
    QT_QPA_PLATFORM=offscreen timeout 120 brook --data-dir /tmp/gui --model /tmp/model --screenshot /tmp/window.png \
      >/tmp/gui.log 2>&1 && test -s /tmp/window.png \
      && echo "ok: brook started offscreen and showed its window ($(stat -c %s /tmp/window.png) bytes of PNG)" \
      || { echo "FAIL: brook --screenshot"; cat /tmp/gui.log; fail=1; }
  fi
  exit $fail
'
echo "ok: the .deb installs and runs in a fresh Debian 12 root ($((SECONDS - start)) s)"

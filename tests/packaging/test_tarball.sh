#!/usr/bin/env bash
# The relocatable tarball is self-contained: unpacked in a clean folder, its programs run in a
# private mount namespace where every system copy of Qt (libraries, plugins, translations) and of
# each library the bundle carries is hidden (bind-mounted over with /dev/null), with
# LD_LIBRARY_PATH empty. A build-tree binary, which uses the system's libraries, must fail there:
# that proves the hiding works. Then: brook-serve --version, a completion through brook-serve and
# brook-run, and the GUI offscreen, whose loaded Qt libraries and plugins must all be the bundle's.
#   test_tarball.sh OUT_DIR BUILD_BIN_DIR VERSION QT_PLUGIN_DIR
set -euo pipefail
out=$1 build_bin=$2 version=$3 qt_plugins=$4
here=$(cd "$(dirname "$0")" && pwd)

if [ "${BROOK_IN_NAMESPACE:-}" != 1 ]; then
  tarball=$(ls "$out"/brook-*.tar.gz)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/clean"
  tar -xzf "$tarball" -C "$work/clean"
  root=$(echo "$work"/clean/*)
  echo "unpacked $(basename "$tarball") ($(du -sh "$root" | cut -f1)) into $root"

  # Static checks: RPATH (not RUNPATH) of $ORIGIN/../lib on every program; Qt's files in place.
  fail=0
  for program in "$root"/bin/*; do
    [ "$program" = "$root/bin/qt.conf" ] && continue
    dyn=$(readelf -d "$program")
    if ! grep -q 'Library rpath: \[\$ORIGIN/\.\./lib' <<<"$dyn"; then
      echo "FAIL: $program has no RPATH \$ORIGIN/../lib:"; grep -i path <<<"$dyn" || true; fail=1
    fi
  done
  if [ -x "$root/bin/brook" ]; then
    for f in bin/qt.conf lib/libQt6Core.so.6 lib/libQt6Widgets.so.6 lib/qt6/plugins/platforms/libqxcb.so \
             lib/qt6/plugins/platforms/libqoffscreen.so lib/qt6/plugins/sqldrivers/libqsqlite.so; do
      [ -f "$root/$f" ] || { echo "FAIL: $f is missing from the tarball"; fail=1; }
    done
  fi
  [ "$fail" -eq 0 ] || exit 1

  # What to hide: every system Qt library, and every non-base library (packaging/linux/
  # base-libraries.txt) that the build tree's programs or the bundled plugins' system originals
  # load, plus the system copy of anything the bundle carries. A library the bundle forgot is then
  # missing, as on a machine without it. Only what this script's own tools (grep, mount, ...) load
  # stays visible, or they could not run.
  hide_list="$work/hide.txt"
  grep -v '^#' "$here/../../packaging/linux/base-libraries.txt" >"$work/base.txt"
  tool_libs=$(for tool in bash mount grep sed awk sleep seq head tail cat sort timeout mkdir chmod dirname; do
                ldd "$(command -v "$tool")" | awk '$2 == "=>" && $3 ~ /^\// {print $1}'
              done | sort -u)
  {
    for program in "$build_bin"/brook "$build_bin"/brook-serve "$build_bin"/brook-run "$build_bin"/brook-bench; do
      if [ -x "$program" ]; then ldd "$program"; fi
    done
    for plugin in "$root"/lib/qt6/plugins/*/*.so; do
      original="$qt_plugins/${plugin#"$root/lib/qt6/plugins/"}"
      if [ -f "$original" ]; then ldd "$original"; fi
    done
  } | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u >"$work/needed.txt"
  {
    ldconfig -p | awk '$1 ~ /^libQt6/ {print $NF}'
    for lib in "$root"/lib/*.so*; do
      name=$(basename "$lib")
      ldconfig -p | awk -v n="$name" '$1 == n {print $NF}'
    done
    grep -vEf "$work/base.txt" "$work/needed.txt" | awk '{print $2}'
  } | while read -r path; do
    [ -e "$path" ] || continue
    grep -qx "$(basename "$path")" <<<"$tool_libs" && continue
    realpath "$path"
  done | sort -u >"$hide_list"
  echo "hiding $(wc -l <"$hide_list") system libraries; left visible for the shell tools:" \
    $(grep -vEf "$work/base.txt" <<<"$tool_libs")

  unshare_args=(--mount --propagation private)
  [ "$(id -u)" -eq 0 ] || unshare_args=(--map-root-user "${unshare_args[@]}")
  if ! unshare "${unshare_args[@]}" true 2>/dev/null; then
    echo "SKIP: cannot create a mount namespace here (unshare ${unshare_args[*]}), so Qt cannot be hidden"
    exit 77
  fi
  BROOK_IN_NAMESPACE=1 ROOT="$root" WORK="$work" HIDE_LIST="$hide_list" \
    unshare "${unshare_args[@]}" bash "$0" "$@"
  exit $?
fi

# ---- inside the namespace -------------------------------------------------------------------
source "$here/serve_completion.sh"
root=$ROOT work=$WORK
while read -r path; do mount --bind /dev/null "$path"; done <"$HIDE_LIST"
[ -d "$qt_plugins" ] && mount -t tmpfs none "$qt_plugins"
[ -d /usr/share/qt6 ] && mount -t tmpfs none /usr/share/qt6
export LD_LIBRARY_PATH= QT_PLUGIN_PATH= QT_QPA_PLATFORM_PLUGIN_PATH=
unset LD_PRELOAD QT_PLUGIN_PATH QT_QPA_PLATFORM_PLUGIN_PATH
export HOME="$work/home" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fail=0

# The system's Qt is gone: its libraries read as empty files, its plugin folder is empty.
qt_libs=$(ldconfig -p | awk '$1 ~ /^libQt6/ {print $NF}' | sort -u)
qt_readable=$(for lib in $qt_libs; do [ -n "$(head -c 4 "$lib")" ] && echo "$lib"; done || true)
if [ -z "$qt_libs" ] || [ -n "$qt_readable" ] || [ -n "$(ls -A "$qt_plugins" 2>/dev/null)" ]; then
  echo "FAIL: the system's Qt is not hidden: ${qt_readable:-no libQt6 in ldconfig}"; fail=1
else
  echo "ok: the system's $(wc -w <<<"$qt_libs") libQt6 libraries and its Qt plugins are hidden"
fi

# The control: a build-tree program (system libraries) cannot start with them hidden.
control="$build_bin/brook-serve"
[ -x "$build_bin/brook" ] && control="$build_bin/brook"
if QT_QPA_PLATFORM=offscreen "$control" --version >"$work/control.log" 2>&1; then
  echo "FAIL: $control still starts, so the system libraries are not hidden"; fail=1
else
  echo "ok: control $control cannot start here: $(head -n 1 "$work/control.log")"
fi

served=$("$root/bin/brook-serve" --version) || { echo "FAIL: the bundled brook-serve does not start"; exit 1; }
[ "$served" = "brook-serve $version" ] && echo "ok: $served" || { echo "FAIL: --version said '$served'"; fail=1; }

serve_one_completion "$root/bin/brook-serve" "$out/tiny-model" "$work/serve.log" || fail=1
if run=$("$root/bin/brook-run" --model "$out/tiny-model" --prompt "Hello" --max-tokens 4 --ignore-eos --json \
           --device cpu 2>"$work/run.log") && grep -q '"finish_reason":"length"' <<<"$run"; then
  echo "ok: brook-run: $run"
else
  echo "FAIL: the bundled brook-run"; cat "$work/run.log"; fail=1
fi

if [ -x "$root/bin/brook" ]; then
  # The GUI offscreen, in Chinese (Qt's own catalogue comes from the bundle too), for a few seconds.
  QT_QPA_PLATFORM=offscreen "$root/bin/brook" --data-dir "$work/data" --language zh_CN >"$work/gui.log" 2>&1 &
  gui=$!
  for _ in $(seq 1 200); do
    [ -f "$work/data/history.sqlite" ] && break
    kill -0 "$gui" 2>/dev/null || break
    sleep 0.1
  done
  sleep 1
  if kill -0 "$gui" 2>/dev/null; then
    maps=$(awk '$6 ~ /^\// {print $6}' "/proc/$gui/maps" | sort -u)
    kill "$gui"; wait "$gui" 2>/dev/null || true
    outside=$(grep -E 'libQt6|/qt6/' <<<"$maps" | grep -v "^$root/" || true)
    [ -z "$outside" ] || { echo "FAIL: the GUI loaded Qt files from outside the bundle:"; echo "$outside"; fail=1; }
    for want in lib/libQt6Widgets.so.6 lib/qt6/plugins/platforms/libqoffscreen.so lib/qt6/plugins/sqldrivers/libqsqlite.so; do
      grep -qx "$root/$want" <<<"$maps" && echo "ok: the GUI uses the bundled $want" \
        || { echo "FAIL: the GUI did not load $root/$want"; fail=1; }
    done
    if [ -f "$root/share/qt6/translations/qtbase_zh_CN.qm" ]; then
      grep -qx "$root/share/qt6/translations/qtbase_zh_CN.qm" <<<"$maps" && echo "ok: Qt's zh_CN strings from the bundle" \
        || { echo "FAIL: the GUI did not load the bundled qtbase_zh_CN.qm"; fail=1; }
    fi
    [ -f "$work/data/history.sqlite" ] && echo "ok: the GUI opened its SQLite history" \
      || { echo "FAIL: no history.sqlite"; fail=1; }
  else
    echo "FAIL: the bundled GUI exited early:"; cat "$work/gui.log"; fail=1
  fi

  # xcb: with no X server the plugin must load (its libraries are bundled) and then find no display.
  # (Qt aborts when no platform plugin starts: the subshell keeps bash's "Aborted" out of the log.)
  (QT_QPA_PLATFORM=xcb DISPLAY=:97 QT_DEBUG_PLUGINS=1 "$root/bin/brook" --version >"$work/xcb.log" 2>&1 || true) 2>/dev/null
  if grep -qF "\"$root/lib/qt6/plugins/platforms/libqxcb.so\" loaded library" "$work/xcb.log" \
     && grep -q "could not connect to display" "$work/xcb.log"; then
    echo "ok: the bundled xcb plugin loads (no display to connect to here)"
  else
    echo "FAIL: the xcb plugin did not load:"; grep -iE "xcb|cannot|error" "$work/xcb.log" | head -n 20; fail=1
  fi
fi

[ "$fail" -eq 0 ] || exit 1
echo "ok: the tarball runs with the system's Qt hidden"

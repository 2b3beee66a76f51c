#!/usr/bin/env bash
# deploy-dlls.sh STAGE QT_PREFIX [EXTRA_DLL_DIR...] - windeployqt for a cross build: makes the
# staged install tree STAGE (bin\*.exe) run on a bare Windows.
#   - Qt plugins the app loads at run time (objdump cannot see them): platforms\qwindows,
#     styles\qwindowsvistastyle, sqldrivers\qsqlite, imageformats\*, with a qt.conf naming them;
#   - Qt's own translations for English and Simplified Chinese, where the Qt prefix has them;
#   - every DLL the programs and plugins import, found in the Qt prefix's bin\, the MinGW runtime
#     folders or EXTRA_DLL_DIRs, recursively; names found in none of them are Windows' own;
#   - strip: about 60 MB of DLLs become about 26 MB.
set -euo pipefail
STAGE=${1:?usage: deploy-dlls.sh STAGE QT_PREFIX [DLL_DIR...]}
QT=${2:?usage: deploy-dlls.sh STAGE QT_PREFIX [DLL_DIR...]}
shift 2
MINGW=x86_64-w64-mingw32
BIN=$STAGE/bin
SEARCH=("$QT/bin" "$(dirname "$($MINGW-g++-posix -print-file-name=libstdc++-6.dll)")" "/usr/$MINGW/lib" "$@")

die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
[ -d "$BIN" ] || die "$BIN is missing: run cmake --install first"

# Plugins, in the layout qt.conf names (Plugins = plugins, relative to bin\).
for plugin in platforms/qwindows.dll styles/qwindowsvistastyle.dll sqldrivers/qsqlite.dll; do
  [ -f "$QT/plugins/$plugin" ] || die "Qt plugin $plugin is missing from $QT/plugins"
  mkdir -p "$BIN/plugins/$(dirname "$plugin")"
  cp "$QT/plugins/$plugin" "$BIN/plugins/$plugin"
done
if [ -d "$QT/plugins/imageformats" ]; then
  mkdir -p "$BIN/plugins/imageformats"
  cp "$QT"/plugins/imageformats/*.dll "$BIN/plugins/imageformats/"
fi
printf '[Paths]\nPlugins = plugins\nTranslations = translations\n' >"$BIN/qt.conf"
if compgen -G "$QT/translations/qtbase_zh_CN.qm" >/dev/null; then
  mkdir -p "$BIN/translations"
  cp "$QT"/translations/qtbase_{en,zh_CN}.qm "$BIN/translations/" 2>/dev/null || true
fi

imports() { $MINGW-objdump -p "$1" | sed -n 's/^\s*DLL Name: //p'; }
find_dll() {
  local name=$1 dir hit
  for dir in "${SEARCH[@]}"; do
    hit=$(find "$dir" -maxdepth 1 -iname "$name" -print -quit 2>/dev/null || true)
    [ -n "$hit" ] && { echo "$hit"; return 0; }
  done
  return 1
}

declare -A seen=()
queue=()
while IFS= read -r -d '' f; do queue+=("$f"); done < <(find "$BIN" -type f \( -iname '*.exe' -o -iname '*.dll' \) -print0)
while [ ${#queue[@]} -gt 0 ]; do
  file=${queue[0]}; queue=("${queue[@]:1}")
  while read -r dll; do
    key=${dll,,}
    [ -n "$key" ] && [ -z "${seen[$key]:-}" ] || continue
    seen[$key]=1
    if src=$(find_dll "$dll"); then
      cp "$src" "$BIN/"
      queue+=("$BIN/$(basename "$src")")
    fi
  done < <(imports "$file")
done

find "$BIN" -type f \( -iname '*.dll' -o -iname '*.exe' \) -exec $MINGW-strip --strip-unneeded {} +
echo "deployed: $(find "$BIN" -maxdepth 1 -iname '*.dll' | wc -l) DLLs beside the programs, $(du -sh "$STAGE" | cut -f1) in all"

#!/usr/bin/env bash
# wine-smoke.sh SETUP.exe [WORK_DIR] - installs Brook's Windows installer into a fresh 64-bit Wine
# prefix and uses it as a Windows user would, checking files and answers, never exit codes (a
# 32-bit NSIS installer under a 64-bit-only Wine does nothing and still exits 0):
#   1. the installer is a 64-bit (amd64-unicode) NSIS installer;
#   2. silent install (/S): programs, Qt plugins, shortcuts, the "Add/Remove Programs" entry;
#   3. brook-make-test-model.exe writes a tiny model into a folder with a Chinese name, and
#      brook-run.exe --chat 你好 answers from it in UTF-8;
#   4. brook-serve.exe with an API key answers one chat completion to Linux curl on 127.0.0.1,
#      and refuses a request without the key;
#   5. brook.exe opens its main window in 简体中文 under Xvfb; the screenshot is WORK_DIR/brook-window.png
#      (docs/screenshot-windows.png is a copy of one that was looked at);
#   6. settings and history are under %APPDATA%, nothing is written beside the program;
#   7. the silent uninstall removes the program files and keeps the user's data.
# Needs wine64, xvfb, xdotool, imagemagick, fonts-noto-cjk, fonts-wine, curl (mingw-qt.sh installs them).
set -euo pipefail
SETUP=$(readlink -f "${1:?usage: wine-smoke.sh SETUP.exe [WORK_DIR]}")
WORK=$(mkdir -p "${2:-$(dirname "$SETUP")/wine-smoke}" && cd "${2:-$(dirname "$SETUP")/wine-smoke}" && pwd)
export WINEPREFIX=$WORK/prefix WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export LANG=C.UTF-8 LC_ALL=C.UTF-8
WINE=$(command -v wine64 || command -v wine)
T0=$(date +%s)
fail=0
step() { printf '\n=== [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
check() { if "$@"; then echo "ok: $*"; else echo "FAIL: $*"; fail=1; fi; }
die() { echo "FAIL: $*"; exit 1; }

SERVE_PID="" XVFB_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
  wineserver -k 2>/dev/null || true
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
}
trap cleanup EXIT

step "1. the installer is 64-bit"
check bash -c "x86_64-w64-mingw32-objdump -f '$SETUP' | grep -q 'pei-x86-64'"

step "fresh prefix $WINEPREFIX"
wineserver -k 2>/dev/null || true
rm -rf "$WINEPREFIX"
"$WINE" wineboot -i >/dev/null 2>&1 || true
wineserver -w
# Qt asks for Microsoft YaHei / SimSun for Chinese; Wine finds Noto CJK by these names.
cat >"$WORK/fonts.reg" <<'EOF'
REGEDIT4

[HKEY_CURRENT_USER\Software\Wine\Fonts\Replacements]
"Microsoft YaHei"="Noto Sans CJK SC"
"Microsoft YaHei UI"="Noto Sans CJK SC"
"SimSun"="Noto Sans CJK SC"
"SimHei"="Noto Sans CJK SC"
"MS UI Gothic"="Noto Sans CJK SC"
EOF
"$WINE" regedit /S "$WORK/fonts.reg"
wineserver -w
C=$WINEPREFIX/drive_c
WINUSER=$(ls "$C/users" | grep -v -x -e Public -e crossover | head -n1)
APPDATA_DIR=$C/users/$WINUSER/AppData/Roaming
LOCALAPPDATA_DIR=$C/users/$WINUSER/AppData/Local

step "2. silent install"
t=$(date +%s)
"$WINE" "$SETUP" /S
wineserver -w
echo "install took $(( $(date +%s) - t ))s"
DIR="$C/Program Files/Brook"
for f in brook.exe brook-run.exe brook-serve.exe brook-bench.exe brook-quantize.exe brook-make-test-model.exe \
         Qt6Core.dll Qt6Widgets.dll Qt6Sql.dll libstdc++-6.dll libwinpthread-1.dll qt.conf \
         plugins/platforms/qwindows.dll plugins/sqldrivers/qsqlite.dll plugins/styles/qwindowsvistastyle.dll; do
  check test -f "$DIR/bin/$f"
done
check test -f "$DIR/share/brook/test-corpus/zh.txt"
check test -f "$DIR/uninstall.exe"
check test ! -e "$C/Program Files (x86)/Brook"
check test -f "$C/ProgramData/Microsoft/Windows/Start Menu/Programs/Brook/Brook.lnk"
check test -f "$C/users/Public/Desktop/Brook.lnk"
check bash -c "'$WINE' reg query 'HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\Brook' /v DisplayVersion 2>/dev/null | grep -q DisplayVersion"
find "$DIR" -type f | sed "s|^$C/||" | LC_ALL=C sort >"$WORK/installed-files.txt"

step "3. brook-run answers from a model in a folder with a Chinese name"
MODEL_UNIX="$C/users/$WINUSER/模型/tiny-ernie"
MODEL_WIN='C:\users\'"$WINUSER"'\模型\tiny-ernie'
t=$(date +%s)
"$WINE" "$DIR/bin/brook-make-test-model.exe" "$MODEL_WIN" --shape tiny >"$WORK/make-model.log" 2>&1 || true
echo "brook-make-test-model took $(( $(date +%s) - t ))s"
# Paths come from UTF-8 text through engine/utf8_path.h: the Chinese folder name must arrive intact
# (mingw's libstdc++ would otherwise convert byte by byte and write a mojibake folder).
check test -f "$MODEL_UNIX/config.json"
check test -f "$MODEL_UNIX/model.safetensors"
check test -f "$MODEL_UNIX/tokenizer.model"
"$WINE" "$DIR/bin/brook-run.exe" --model "$MODEL_WIN" --chat 你好 --device cpu --max-tokens 16 --temperature 0 --json \
  >"$WORK/run.json" 2>"$WORK/run.log" || true
echo "brook-run: $(head -c 300 "$WORK/run.json")"
check python3 -c "
import json, sys
reply = json.load(open('$WORK/run.json'))
assert len(reply['token_ids']) > 0, 'no tokens'
assert reply['text'], 'empty text'
# The tiny model's tokenizer is trained on Chinese and English text: its random replies hold Han
# characters, and the UTF-8 must arrive whole (no U+FFFD from a broken conversion).
assert '\ufffd' not in reply['text'], 'replacement characters in the reply'
"
"$WINE" "$DIR/bin/brook-run.exe" --model "$MODEL_WIN" --chat 你好 --device cpu --max-tokens 8 --temperature 0 \
  >"$WORK/run.txt" 2>>"$WORK/run.log" || true
check python3 -c "open('$WORK/run.txt', encoding='utf-8', errors='strict').read()"

step "4. brook-serve answers curl with an API key"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$WINE" "$DIR/bin/brook-serve.exe" "$MODEL_WIN" --served-model-name tiny-ernie --host 127.0.0.1 --port "$PORT" \
  --api-key smoke-key --device cpu \
  >"$WORK/serve.log" 2>&1 &
SERVE_PID=$!
ready=0
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then ready=1; break; fi
  sleep 1
done
check test "$ready" = 1
BODY='{"model": "tiny-ernie", "messages": [{"role": "user", "content": "你好"}], "max_tokens": 8, "temperature": 0}'
curl -sS -o "$WORK/chat.json" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/chat/completions" \
  -H "Authorization: Bearer smoke-key" -H "Content-Type: application/json" -d "$BODY" >"$WORK/chat.status" || true
echo "chat completion: HTTP $(cat "$WORK/chat.status"): $(head -c 300 "$WORK/chat.json")"
check grep -qx 200 "$WORK/chat.status"
check python3 -c "
import json
reply = json.load(open('$WORK/chat.json'))
assert reply['object'] == 'chat.completion'
assert reply['choices'][0]['message']['role'] == 'assistant'
assert reply['usage']['completion_tokens'] > 0
"
check bash -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/v1/chat/completions -H 'Content-Type: application/json' -d '$BODY' | grep -qx 401"
kill "$SERVE_PID" 2>/dev/null || true
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=""
wineserver -w

step "5. brook.exe opens its window (简体中文) under Xvfb"
DISPLAY_NUM=$((90 + RANDOM % 100))
Xvfb ":$DISPLAY_NUM" -screen 0 1366x768x24 -nolisten tcp >/dev/null 2>&1 &
XVFB_PID=$!
export DISPLAY=":$DISPLAY_NUM"
sleep 2
# Chinese UI: the language the app's settings name (View → Language writes the same key).
mkdir -p "$APPDATA_DIR/Brook"
printf '[ui]\nlanguage=zh_CN\n' >"$APPDATA_DIR/Brook/Brook.ini"
"$WINE" "$DIR/bin/brook.exe" --model "$MODEL_WIN" >"$WORK/gui.log" 2>&1 &
GUI_PID=$!
window=""
for _ in $(seq 1 90); do
  window=$(xdotool search --name 'Brook' 2>/dev/null | head -n1 || true)
  [ -n "$window" ] && break
  sleep 1
done
check test -n "$window"
sleep 12  # the model loads and the window settles
import -window root "$WORK/brook-window.png"
check test -s "$WORK/brook-window.png"
echo "screenshot: $WORK/brook-window.png"
kill "$GUI_PID" 2>/dev/null || true
wineserver -k 2>/dev/null || true
wineserver -w 2>/dev/null || true

step "6. user data under %APPDATA%, nothing beside the program"
check test -f "$APPDATA_DIR/Brook/Brook.ini"
check bash -c "ls '$APPDATA_DIR/Brook/Brook' '$LOCALAPPDATA_DIR/Brook/Brook' 2>/dev/null | grep -q ."
find "$DIR" -type f | sed "s|^$C/||" | LC_ALL=C sort >"$WORK/files-after-use.txt"
check diff -u "$WORK/installed-files.txt" "$WORK/files-after-use.txt"

step "7. silent uninstall"
"$WINE" "$DIR/uninstall.exe" /S
wineserver -w; sleep 2; wineserver -w  # the uninstaller re-runs itself from %TEMP%
check test ! -e "$DIR/bin/brook.exe"
check test ! -e "$DIR"
check test ! -e "$C/ProgramData/Microsoft/Windows/Start Menu/Programs/Brook"
check test ! -e "$C/users/Public/Desktop/Brook.lnk"
check bash -c "! '$WINE' reg query 'HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\Brook' >/dev/null 2>&1"
check test -f "$APPDATA_DIR/Brook/Brook.ini"
check test -f "$MODEL_UNIX/config.json"

echo
echo "wine smoke test: $([ $fail = 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - T0 ))s"
exit $fail

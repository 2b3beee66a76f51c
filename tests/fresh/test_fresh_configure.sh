#!/usr/bin/env bash
# In a brand-new Debian 12 root: scripts/install-deps.sh, then the CMake configure of the README's
# build (with CUDA when this machine has /usr/local/cuda). A package that install-deps.sh forgets
# fails here even on a machine that already has it. Only the tracked files of the source tree are
# copied in, as a fresh clone would have them.
#   test_fresh_configure.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/fresh_root.sh"
fresh_root_check

work=$(mktemp -d /var/tmp/brook-fresh-configure.XXXXXX)
trap 'rm -rf "$work"' EXIT
fresh_root_make "$work/root"
mkdir -p "$work/root/home/user/brook"
if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # tracked files as they are in the working tree (committed or not)
  git -C "$source_dir" ls-files -z | (cd "$source_dir" && tar --null -T - -cf -) | tar -C "$work/root/home/user/brook" -xf -
else
  tar -C "$source_dir" --exclude='./build*' -cf - . | tar -C "$work/root/home/user/brook" -xf -
fi

start=$SECONDS
FRESH_CUDA=1 fresh_root_run "$work/root" '
  cd /home/user/brook
  bash scripts/install-deps.sh >/tmp/install-deps.log 2>&1 || { tail -n 30 /tmp/install-deps.log; exit 1; }
  echo "install-deps.sh: ok"
  cmake --preset release -DCMAKE_CUDA_ARCHITECTURES=90 >/tmp/configure.log 2>&1 || { cat /tmp/configure.log; exit 1; }
  grep -E "^-- (Configuring|Generating) done|CUDA compiler identification" /tmp/configure.log
  test -f build/build.ninja
'
echo "ok: install-deps.sh and the configure pass in a fresh Debian 12 root ($((SECONDS - start)) s)"

#!/usr/bin/env bash
# Installed programs must not reach into the tree they were built from: no source or build path
# may be compiled into anything the .deb installs (the resources they need are found beside the
# executable, src/platform/resource_path.h). Checked with `strings` on the unpacked package.
#   test_no_build_paths.sh OUT_DIR SOURCE_DIR BUILD_DIR
set -euo pipefail
out=$1 source_dir=$2 build_dir=$3
command -v strings >/dev/null || { echo "FAIL: strings is missing (binutils; scripts/install-deps.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$(ls "$out"/brook_*.deb)" "$work"
fail=0
checked=0
while IFS= read -r -d '' file; do
  file -b "$file" | grep -q '^ELF' || continue
  checked=$((checked + 1))
  for path in "$source_dir" "$build_dir"; do
    if hits=$(strings -a "$file" | grep -F "$path"); then
      echo "FAIL: ${file#"$work"} contains $path:"; head -n 5 <<<"$hits"; fail=1
    fi
  done
done < <(find "$work" -type f -print0)
[ "$checked" -gt 0 ] || { echo "FAIL: no ELF files in the package"; exit 1; }
[ "$fail" -eq 0 ] || exit 1
echo "ok: $checked installed ELF files carry no path of $source_dir or $build_dir"

#!/usr/bin/env bash
# Packaging test fixture: builds the .deb and the relocatable tarball from the existing build tree
# with CPack (no rebuild), into OUT_DIR, and writes a tiny test model there for the other tests.
#   build_packages.sh BUILD_DIR OUT_DIR BIN_DIR
set -euo pipefail
build=$1 out=$2 bin=$3

rm -rf "$out"
mkdir -p "$out"
for tool in cpack dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh installs it)"; exit 1; }
done
start=$SECONDS
cpack --config "$build/CPackConfig.cmake" -B "$out" -G "DEB;TGZ"
rm -rf "$out/_CPack_Packages"  # the staging trees: ~200 MB, not needed once packed
echo "cpack took $((SECONDS - start)) s"

debs=("$out"/brook_*.deb)
tars=("$out"/brook-*.tar.gz)
[ -f "${debs[0]}" ] || { echo "FAIL: no .deb in $out"; ls -la "$out"; exit 1; }
[ -f "${tars[0]}" ] || { echo "FAIL: no tarball in $out"; ls -la "$out"; exit 1; }
ls -la "$out"
dpkg-deb --info "${debs[0]}"

"$bin/brook-make-test-model" "$out/tiny-model" --shape tiny --seed 7 >/dev/null
echo "ok: packages and test model in $out"

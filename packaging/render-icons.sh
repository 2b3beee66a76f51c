#!/usr/bin/env bash
# Renders the app icon's PNG sizes and the Windows .ico from resources/icons/brook.svg. The outputs
# are committed (the build needs no SVG renderer); run this again after changing the SVG.
# Needs rsvg-convert (librsvg2-bin) and ImageMagick's convert (imagemagick).
set -euo pipefail
cd "$(dirname "$0")/.."

svg=resources/icons/brook.svg
sizes=(16 22 24 32 48 64 128 256 512)
mkdir -p resources/icons/png
for n in "${sizes[@]}"; do
  rsvg-convert --width "$n" --height "$n" "$svg" --output "resources/icons/png/brook-$n.png"
done
# Windows wants 16, 24, 32, 48 and 256 in one .ico (256 stored as PNG inside).
convert resources/icons/png/brook-{16,24,32,48,64,256}.png packaging/windows/brook.ico
echo "rendered ${#sizes[@]} PNGs and packaging/windows/brook.ico"

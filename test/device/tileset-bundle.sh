#!/bin/bash
# Here, not on the GPU machine (it reaches no package registry): pack what test/device/mesh_tileset.sh needs
# beyond the repository into DIR/tileset.tar.xz: meshoptimizer (Debian's libmeshoptimizer-dev and
# libmeshoptimizer2d, unpacked: include/meshoptimizer.h and lib/libmeshoptimizer.so*), the CPU simplifier
# the benchmark runs over the same tiles.  Needs apt-get (the packages are downloaded, not installed).
#
#   test/device/tileset-bundle.sh [DIR]        (from the repository root; DIR defaults to .device)
set -euo pipefail
dir=${1:-.device}
mkdir -p "$dir"
if [ -f "$dir/tileset.tar.xz" ] && [ -z "${REBUILD:-}" ]; then
	echo "tileset-bundle: $dir/tileset.tar.xz exists (REBUILD=1 to remake it)"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 777 "$tmp"
(cd "$tmp" && apt-get download libmeshoptimizer-dev libmeshoptimizer2d >/dev/null)
mkdir -p "$tmp/tileset/meshopt/include" "$tmp/tileset/meshopt/lib" "$tmp/x"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/x"; done
cp "$tmp/x/usr/include/meshoptimizer.h" "$tmp/tileset/meshopt/include/"
cp -a "$tmp"/x/usr/lib/*/libmeshoptimizer.so* "$tmp/tileset/meshopt/lib/"
cp "$tmp"/x/usr/share/doc/libmeshoptimizer-dev/copyright "$tmp/tileset/meshopt/"
XZ_OPT=-9e tar -C "$tmp" -cJf "$dir/tileset.tar.xz" tileset
echo "tileset-bundle: wrote $dir/tileset.tar.xz ($(stat -c %s "$dir/tileset.tar.xz") bytes)"

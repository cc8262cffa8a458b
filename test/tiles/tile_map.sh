#!/bin/bash
# A web map of a snapshot in a real browser: the demo's AIS tracks (test/demo.sql) made a snapshot in EPSG:3857,
# served as density tiles by test/tiles/tile_server.js to a Leaflet page, opened in headless Chromium (Debian's
# chromium, driven by npm playwright-core) over the New York harbour: test/tiles/tile_map.js checks that every
# tile loads and that the screenshot shows heat over the tracks, not a blank map.  PG* name a server with geoacc
# preloaded and the GPU service on (snapshots live there).  Skips, with a line saying why, without chromium,
# node or npm, or when npm cannot fetch its packages (installed once into GEOACC_CACHE, default ~/.cache/geoacc).
#
#   test/tiles/tile_map.sh [PNG]      (from the repository root; PNG: where the screenshot goes)
set -uo pipefail
cache=${GEOACC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/geoacc}
# playwright-core 1.60 is the last that runs on Debian 12's Node.js 18 (later ones want 20)
packages="playwright-core@1.60 leaflet@1.9"
modules=$cache/tile-map-playwright-1.60
chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
	echo "tile map: SKIPPED: Debian's chromium is not installed (apt-get install chromium): no web map check"; exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "tile map: SKIPPED: node or npm is not installed (Debian: apt-get install nodejs npm): no web map check"; exit 0
fi
if [ ! -f "$modules/node_modules/leaflet/dist/leaflet.js" ] \
	|| [ ! -f "$modules/node_modules/playwright-core/package.json" ]; then
	mkdir -p "$modules"
	if ! npm install --prefix "$modules" --no-audit --no-fund --loglevel=error $packages > "$modules/npm.log" 2>&1; then
		tail -3 "$modules/npm.log"
		echo "tile map: SKIPPED: npm could not install playwright-core and leaflet into $modules: no web map check"
		exit 0
	fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"; dropdb --if-exists geoacc_tile_map 2>/dev/null' EXIT
png=${1:-$work/tile_map.png}

dropdb --if-exists geoacc_tile_map && createdb geoacc_tile_map || exit 1
export PGDATABASE=geoacc_tile_map
psql -X -q -v ON_ERROR_STOP=1 -f test/demo.sql > /dev/null || exit 1
psql -X -q -v ON_ERROR_STOP=1 -c "SELECT geoacc_snapshot_create('ais', 'SELECT id, ST_Transform(traj, 3857) AS geom FROM ais_tracks')" \
	> /dev/null || exit 1
# the New York harbour tracks' extent in degrees: the heat must lie within it
read -r west south east north < <(psql -X -At -F ' ' -c "
	SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)
	FROM (SELECT ST_Extent(ST_Transform(traj, 4326)) AS e FROM ais_tracks WHERE source LIKE 'ny_harbor%') x")
echo "tile map: the New York harbour tracks lie within $west $south $east $north"
CHROMIUM=$chromium node test/tiles/tile_map.js "$modules" ais 40.62 -74.08 11 "$west" "$south" "$east" "$north" "$png"

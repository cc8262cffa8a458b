#!/bin/bash
# Checks and benchmark of gpu_mesh_clip, run from the repository root after geoacc is built (CUDA_ARCHS=90)
# and installed and PostgreSQL is running with PG* set (test/device/run.sh does that).
#
#   1. The mesh clip core tests (GPU against the CPU twin bit for bit, chunks under small memory caps,
#      cancellation) and the mesh_clip regress test with geoacc.device = gpu.
#   2. Core level (test/bench/mesh_clip_bench, no server): CGAL's b9 urban scan (10,174 triangles) as it is,
#      and tiled into 32 x 32 copies side by side (10,418,176 triangles, a 2.9 x 3.6 km scene at UTM
#      coordinates): one clip by the middle quarter, LOD passes of 4 x 4 x 1 and 8 x 8 x 2 tiles; GPU
#      (upload, kernel, download) against the CPU twin, triangles per second; both must agree to the bit.
#   3. End to end in PostgreSQL: b9 as one TIN Z, and b9 tiled 10 x 10 (1,017,400 triangles, ~107 MB) as
#      one TIN Z; the table-of-tiles pattern (100 rows of b9 copies, each cut by one 8 x 8 x 2 grid into
#      a table); GPU path and CPU path of the same query, and that both return the same bytes.
#   4. Cancellation: statement_timeout = 1s on the CPU path of a long clip; SFCGAL's ST_3DIntersection with
#      a box solid on 1,000 triangles of b9 (the route a PostGIS user has today), where postgis_sfcgal
#      is installed.
#
# Prints markdown; logs of the checks go to $OUT (or /tmp/geoacc-out).
set -euo pipefail
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
db=${BENCH_DB:-geoacc_mesh_bench}
export PGDATABASE=$db
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s test/core/geoacc_core_tests test/bench/mesh_clip_bench
echo "mesh_clip: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

echo
echo "## mesh_clip: checks"
echo
status=0
test/core/geoacc_core_tests mesh_clip > "$OUT/mesh_clip_core_tests.log" 2>&1 || status=1
grep -E '^(FAIL|skip|[0-9]+ passed)|cap ' "$OUT/mesh_clip_core_tests.log" || true
PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup mesh_clip" > "$OUT/mesh_clip_installcheck_gpu.log" 2>&1 \
	|| { status=1; cp regression.diffs "$OUT/mesh_clip_regression.diffs" 2>/dev/null || true; }
grep -E 'tests passed|failed' "$OUT/mesh_clip_installcheck_gpu.log" || true

echo
echo "## mesh_clip: core level (whole core call)"
echo
gzip -dc data/meshes/b9_mesh.off.gz > "$work/b9.off"
timeout 300 test/bench/mesh_clip_bench "$work/b9.off" 1 1 || echo "(failed)"
echo
timeout 600 test/bench/mesh_clip_bench "$work/b9.off" 32 32 2e9 || echo "(failed)"

echo
echo "## mesh_clip: data"
dropdb --if-exists "$db" >/dev/null
createdb "$db"
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE"
# b9 as TIN Z WKT at UTM coordinates (zone 33N), copies COPIES x COPIES side by side
off_to_tin() {		# off_to_tin FILE COPIES
	awk -v copies="$2" '
		/^#/ || NF == 0 { next }
		stage == 0 { stage = 1; next }						# OFF
		stage == 1 { nv = $1; nf = $2; stage = 2; next }
		stage == 2 { x[n] = $1; y[n] = $2; z[n] = $3
			if (n == 0 || $1 < x0) x0 = $1; if (n == 0 || $1 > x1) x1 = $1
			if (n == 0 || $2 < y0) y0 = $2; if (n == 0 || $2 > y1) y1 = $2
			if (++n == nv) stage = 3; next }
		stage == 3 { for (j = 3; j < 1 + $1; j++) { a[m] = $2; b[m] = $(j); c[m] = $(j + 1); m++ } }
		END {
			printf "TIN Z ("
			sep = ""
			for (i = 0; i < copies; i++) for (k = 0; k < copies; k++) for (f = 0; f < m; f++) {
				dx = 500000 - x0 + i * (x1 - x0); dy = 4000000 - y0 + k * (y1 - y0)
				printf "%s((%.17g %.17g %.17g,%.17g %.17g %.17g,%.17g %.17g %.17g,%.17g %.17g %.17g))", sep,
					x[a[f]] + dx, y[a[f]] + dy, z[a[f]], x[b[f]] + dx, y[b[f]] + dy, z[b[f]],
					x[c[f]] + dx, y[c[f]] + dy, z[c[f]], x[a[f]] + dx, y[a[f]] + dy, z[a[f]]
				sep = ","
			}
			printf ")\n"
		}' "$1"
}
off_to_tin "$work/b9.off" 1 > "$work/b9.wkt"
off_to_tin "$work/b9.off" 10 > "$work/b9x10.wkt"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE wkt (name text, wkt text);
\copy wkt FROM PROGRAM 'for f in b9 b9x10; do printf "%s\t" \$f; cat $work/\$f.wkt; done'
CREATE TABLE meshes AS SELECT name, ST_GeomFromText(wkt, 32633) AS mesh FROM wkt;
DROP TABLE wkt;
-- 100 rows of b9 copies: the table-of-tiles pattern for models over PostgreSQL's 1 GB value limit
CREATE TABLE b9_rows AS
SELECT i * 10 + k AS id, ST_Translate(mesh, i * (ST_XMax(mesh) - ST_XMin(mesh)), k * (ST_YMax(mesh) - ST_YMin(mesh))) AS mesh
FROM meshes, generate_series(0, 9) i, generate_series(0, 9) k WHERE name = 'b9';
CREATE TABLE grids AS
SELECT name, (SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(ST_3DExtent(mesh), 8, 8, 2)) AS g8,
	(SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(ST_3DExtent(mesh), 4, 4, 1)) AS g4
FROM meshes GROUP BY name, mesh;
INSERT INTO grids SELECT 'b9_rows', (SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(e, 8, 8, 2)),
	(SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(e, 4, 4, 1))
FROM (SELECT ST_3DExtent(mesh) AS e FROM b9_rows) s;
SQL
psql -X -At -c "SELECT name || ': ' || ST_NumGeometries(mesh) || ' triangles, ' || pg_column_size(mesh) || ' bytes' FROM meshes ORDER BY 1" \
	-c "SELECT 'b9_rows: ' || count(*) || ' rows, ' || sum(ST_NumGeometries(mesh)) || ' triangles' FROM b9_rows"

# run DEVICE QUERY: "result|milliseconds|core_milliseconds"; a small call first starts the device
run() {
	local out
	out=$(PGOPTIONS="-c statement_timeout=300s" psql -X -q -At -v ON_ERROR_STOP=1 \
		-c "SET geoacc.device = $1" -c "SET max_parallel_workers_per_gather = 0" \
		-c "SELECT ST_IsEmpty(gpu_mesh_clip('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d))" \
		-c "SELECT geoacc_stats_reset()" -c '\timing on' -c "$2" \
		-c '\timing off' -c "SELECT coalesce(round(sum(total_ms)::numeric), 0) FROM geoacc_stats()" 2>&1) \
		|| { echo "$out" | tail -3 >&2; echo "failed||"; return 0; }
	awk '/^Time:/ {ms = $2; next} {lines[n++] = $0} END {printf "%s|%.0f|%s", lines[n - 2], ms, lines[n - 1]}' \
		<<< "$out"
}

row() {		# row LABEL TRIANGLES_X_BOXES QUERY
	local gr gms gcore cr cms ccore
	IFS='|' read -r gr gms gcore <<< "$(run gpu "$3")"
	IFS='|' read -r cr cms ccore <<< "$(run cpu "$3")"
	printf '| %s | %s | %s ms (core %s) | %s ms (core %s) | %s | %s |\n' "$1" "$2" "$gms" "$gcore" "$cms" "$ccore" \
		"$(awk -v g="$gms" -v c="$cms" 'BEGIN { if (g > 0) printf "%.1fx", c / g; else print "-" }')" \
		"$([ "$gr" = "$cr" ] && [ "$gr" != failed ] && echo yes || echo "NO ($gr / $cr)")"
}

echo
echo "## mesh_clip: end to end in PostgreSQL (one backend; results written with CREATE TABLE AS)"
echo
echo "| query | triangles x boxes | GPU path | CPU path | speed-up | same result |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
for name in b9 b9x10; do
	n=$(psql -X -At -c "SELECT ST_NumGeometries(mesh) FROM meshes WHERE name = '$name'")
	row "$name: one clip (middle quarter)" "$n" "CREATE TEMP TABLE r AS SELECT gpu_mesh_clip(mesh,
		ST_3DMakeBox(ST_MakePoint((3 * ST_XMin(mesh) + ST_XMax(mesh)) / 4, (3 * ST_YMin(mesh) + ST_YMax(mesh)) / 4, ST_ZMin(mesh)),
			ST_MakePoint((ST_XMin(mesh) + 3 * ST_XMax(mesh)) / 4, (ST_YMin(mesh) + 3 * ST_YMax(mesh)) / 4, ST_ZMax(mesh)))) AS m
		FROM meshes WHERE name = '$name'; SELECT md5(string_agg(m::bytea::text, '')) FROM r"
	row "$name: 4 x 4 x 1 tiles, one call" "$((n * 16))" "CREATE TEMP TABLE r AS SELECT c.* FROM meshes, grids,
		gpu_mesh_clip(mesh, g4) c WHERE meshes.name = '$name' AND grids.name = '$name';
		SELECT md5(string_agg(mesh::bytea::text, '' ORDER BY box_index)) FROM r"
	row "$name: 8 x 8 x 2 tiles, one call" "$((n * 128))" "CREATE TEMP TABLE r AS SELECT c.* FROM meshes, grids,
		gpu_mesh_clip(mesh, g8) c WHERE meshes.name = '$name' AND grids.name = '$name';
		SELECT md5(string_agg(mesh::bytea::text, '' ORDER BY box_index)) FROM r"
	row "$name: 8 x 8 x 2 tiles, a call per tile" "$((n * 128))" "CREATE TEMP TABLE r AS SELECT i, gpu_mesh_clip(mesh, g8[i]) AS m
		FROM meshes, grids, generate_series(1, 128) i WHERE meshes.name = '$name' AND grids.name = '$name';
		SELECT md5(string_agg(m::bytea::text, '' ORDER BY i)) FROM r"
done
row "b9_rows (100 rows): 8 x 8 x 2 tiles per row" "$((10174 * 100 * 128))" "CREATE TEMP TABLE r AS
	SELECT id, c.* FROM b9_rows, grids, gpu_mesh_clip(mesh, g8) c WHERE grids.name = 'b9_rows';
	SELECT md5(string_agg(mesh::bytea::text, '' ORDER BY id, box_index)) FROM r"

echo
echo "## mesh_clip: cancellation and the PostGIS route"
echo
out=$(psql -X -q -At -c "SET geoacc.device = cpu" -c "SET statement_timeout = '1s'" -c '\timing on' \
	-c "SELECT count(*) FROM meshes, grids, gpu_mesh_clip(mesh, g8 || g8 || g8 || g8) c
		WHERE meshes.name = 'b9x10' AND grids.name = 'b9x10'" 2>&1 || true)
echo "- cpu, statement_timeout = 1s on b9x10 x 512 boxes: $(grep -o 'ERROR: .*' <<< "$out" | head -1), after $(awk '/^Time:/ {print $2 " ms"}' <<< "$out")"
if psql -X -q -c "CREATE EXTENSION IF NOT EXISTS postgis_sfcgal" 2>/dev/null; then
	out=$(psql -X -q -At -c "SET statement_timeout = '300s'" -c '\timing on' -c "
		WITH m AS (SELECT ST_GeomFromText('TIN Z (' || string_agg(substr(ST_AsText(g.geom), 12), ',') || ')', 32633) AS t
			FROM (SELECT (ST_Dump(mesh)).geom FROM meshes WHERE name = 'b9' LIMIT 1000) g),
		b AS (SELECT ST_MakeSolid(ST_Extrude(ST_MakeEnvelope(ST_XMin(t) + 10, ST_YMin(t) + 10, ST_XMax(t) - 10, ST_YMax(t) - 10, 32633),
			0, 0, 1000)) AS solid, ST_ZMin(t) AS z FROM m)
		SELECT ST_NPoints(ST_3DIntersection(t, ST_Translate(solid, 0, 0, z - 500))) FROM m, b" 2>&1 || true)
	echo "- SFCGAL ST_3DIntersection, 1,000 triangles of b9 with a box solid: $(tail -2 <<< "$out" | tr '\n' ' ')"
	out=$(psql -X -q -At -c "SET statement_timeout = '300s'" -c '\timing on' -c "
		WITH m AS (SELECT ST_GeomFromText('TIN Z (' || string_agg(substr(ST_AsText(g.geom), 12), ',') || ')', 32633) AS t
			FROM (SELECT (ST_Dump(mesh)).geom FROM meshes WHERE name = 'b9' LIMIT 1000) g)
		SELECT ST_NumGeometries(gpu_mesh_clip(t, ST_3DMakeBox(ST_MakePoint(ST_XMin(t) + 10, ST_YMin(t) + 10, ST_ZMin(t) - 500),
			ST_MakePoint(ST_XMax(t) - 10, ST_YMax(t) - 10, ST_ZMin(t) + 500)))) FROM m" 2>&1 || true)
	echo "- gpu_mesh_clip, the same 1,000 triangles and box: $(tail -2 <<< "$out" | tr '\n' ' ')"
else
	echo "- postgis_sfcgal is not installed here: the SFCGAL route was not timed"
fi
exit $status

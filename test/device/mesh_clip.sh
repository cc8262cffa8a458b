#!/bin/bash
# Checks and benchmark of gpu_mesh_clip on the GPU machine, from the repository root.  Runs after
# test/device/run.sh (geoacc built and installed, PostgreSQL running, PG* set) or on its own: without a
# server it starts the bundled one (.device/pg-start.sh) and builds and installs geoacc first.
# .device/mesh.tar.xz (test/device/mesh-bundle.sh) brings CGAL's clipper and the full Stanford dragon;
# without it those parts are left out.  MESH_PARTS picks the parts (default: all four):
#
#   checks  the mesh clip core tests (GPU against the CPU twin bit for bit, chunks under small memory
#           caps, cancellation) and the mesh_clip and mesh_ply regress tests with geoacc.device = gpu.
#   core    the models, made from the small real files by `mesh_clip_bench model`: CGAL's b9 urban scan
#           (10,174 triangles) at UTM coordinates, the full Stanford dragon (871,414 triangles) as it
#           is, and b9 in 32 x 32 copies side by side (10,418,176 triangles, a 2.9 x 3.6 km scene); then
#           per model one clip by the middle quarter and LOD passes of 4 x 4 x 1 and 8 x 8 x 2 tiles in
#           the core (mesh_clip_bench run): GPU (upload, kernels, download) against the CPU twin, the
#           same bits, triangles and area inside the boxes.
#   cgal    the same jobs with CGAL's Polygon_mesh_processing::clip by an Iso_cuboid_3, a box at a time
#           (cgal_clip_bench: the whole mesh per box, and the faces near the box), each job cut off after
#           MESH_CGAL_BUDGET seconds (default 20; the rest extrapolated and marked so); then a table of
#           geoacc against CGAL: times, triangle counts and the largest difference of a box's area.
#   sql     end to end in PostgreSQL, each query as CREATE TABLE ... AS (the results written), in a
#           fresh session, on the GPU and on the CPU, the same bytes required: b9 x 10 (1,017,400
#           triangles) and the dragon as TIN Z (geometry) and as PLY (bytea), b9 x 32 as PLY (as a TIN
#           it is over PostgreSQL's 1 GB value limit), and the table-of-tiles pattern (1,024 rows of
#           b9 copies, 10^7 triangles, against one grid); where the time went, from gpu_mesh_clip's
#           DEBUG1 lines: detoast, read (decode and weld), clip (upload / kernels / download), output
#           (the result values), and the rest of the statement (writing the table: TOAST compression,
#           WAL); pglz against lz4 compression; statement_timeout on a long CPU clip.
#
# MESH_LARGE (default 32) sets the copies of b9 along x and y in the large model (3 for a quick run here).
# Prints markdown; logs and the per-box areas go to $OUT (default /tmp/geoacc-out), the per-box areas and tables
# of the core and cgal parts also to MESH_STATE (default /tmp/geoacc-mesh), where a later call finds them.  On the H200 machine run
# it in three calls, MESH_PARTS="checks core", "cgal" and "sql" (each expected to take well under 10 minutes;
# the first builds geoacc).
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
parts=" ${MESH_PARTS:-checks core cgal sql} "
budget=${MESH_CGAL_BUDGET:-20}
large=${MESH_LARGE:-32}
big=b9x$large
db=${BENCH_DB:-geoacc_mesh_bench}
# the results of the core and cgal parts, kept between calls (the cgal part compares with the core's)
state=${MESH_STATE:-/tmp/geoacc-mesh}
mkdir -p "$state"
work=$(mktemp -d)
chmod 755 "$work"		# the server reads the models from here
trap 'cp "$state"/mesh_* "$OUT"/ 2>/dev/null; rm -rf "$work"' EXIT
status=0
has() { [[ $parts == *" $1 "* ]]; }

# a server and an installed geoacc, unless run.sh left them
command -v psql >/dev/null 2>&1 || export PATH=/usr/lib/postgresql/15/bin:$PATH
export PGHOST=${PGHOST:-/tmp} PGUSER=${PGUSER:-postgres} PGPORT=${PGPORT:-5432}
export CUDA_ARCHS=${CUDA_ARCHS:-90} MAKEFLAGS=${MAKEFLAGS:-with_llvm=no}
if ! psql -XAtc "SELECT 1" postgres >/dev/null 2>&1; then
	. .device/pg-start.sh || exit 1
fi
{ make -s -j"$(nproc)" && make -s install && make -s test/core/geoacc_core_tests test/bench/mesh_clip_bench; } \
	> "$OUT/mesh_build.log" 2>&1 || { tail -30 "$OUT/mesh_build.log"; exit 1; }
bench=test/bench/mesh_clip_bench
bundle=""
if [ -f .device/mesh.tar.xz ]; then
	tar -C "$work" -xJf .device/mesh.tar.xz && bundle=$work/mesh
	python3 test/device/mesh_pack.py unpack "$bundle/dragon_vrip" "$bundle/dragon_vrip.ply" \
		&& [ "$(sha256sum "$bundle/dragon_vrip.ply" | cut -d' ' -f1)" = "$(cat "$bundle/dragon_vrip.sha256")" ] \
		|| { echo "mesh_clip: the dragon in .device/mesh.tar.xz does not unpack to its sha256"; exit 1; }
fi

echo "mesh_clip: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), parts:$parts"

if has checks; then
	echo
	echo "## mesh_clip: checks"
	echo
	test/core/geoacc_core_tests mesh_clip > "$OUT/mesh_clip_core_tests.log" 2>&1 || status=1
	grep -E '^(FAIL|skip|[0-9]+ passed)|cap ' "$OUT/mesh_clip_core_tests.log" || true
	PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup mesh_clip mesh_ply" \
		> "$OUT/mesh_clip_installcheck_gpu.log" 2>&1 \
		|| { status=1; cp regression.diffs "$OUT/mesh_clip_regression.diffs" 2>/dev/null || true; }
	grep -E 'tests passed|failed' "$OUT/mesh_clip_installcheck_gpu.log" || true
fi

# ------------------------------------------------------------------ the models
models="b9 $big"
if has core || has cgal || has sql; then
	for copies in 1 10 $large; do
		$bench model data/meshes/b9_mesh.off.gz $copies $copies "$work/b9$([ $copies = 1 ] || echo x$copies).ply" \
			500000 4000000 > /dev/null || exit 1
	done
	if [ -n "$bundle" ]; then
		$bench model "$bundle/dragon_vrip.ply" 1 1 "$work/dragon.ply" > /dev/null || exit 1
		models="b9 dragon $big"
	fi
	chmod 644 "$work"/*.ply
fi

if has core; then
	rm -f "$state"/mesh_boxes_*.tsv
	echo
	echo "## mesh_clip: core level (one core call per job; triangles x boxes per second)"
	for m in $models; do
		echo
		timeout 600 $bench run "$work/$m.ply" 2e9 "$state/mesh_boxes_$m.tsv" | tee "$state/mesh_core_$m.md" \
			|| { echo "(failed)"; status=1; }
	done
fi

if has cgal; then
	echo
	echo "## mesh_clip: CGAL's clipper, a box at a time"
	if [ -z "$bundle" ]; then
		echo
		echo "(.device/mesh.tar.xz is missing: run test/device/mesh-bundle.sh where CGAL is installed)"
	else
		for m in $models; do
			[ -f "$state/mesh_boxes_$m.tsv" ] && sed -i '/^cgal/d' "$state/mesh_boxes_$m.tsv"
			echo
			timeout 900 "$bundle/cgal_clip_bench" "$work/$m.ply" "$budget" "$state/mesh_boxes_$m.tsv" \
				| tee "$state/mesh_cgal_$m.md" || { echo "(failed)"; status=1; }
		done
		echo
		echo "## mesh_clip: geoacc against CGAL (the same triangles and boxes)"
		echo
		echo "| model | job | boxes | geoacc GPU ms | CPU twin ms | CGAL, whole mesh per box, ms | CGAL, faces near the box, ms" \
			"| GPU vs CPU twin | GPU vs CGAL (near faces) | output triangles geoacc / CGAL | area: largest relative difference of a box |"
		echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		for m in $models; do
			[ -f "$state/mesh_core_$m.md" ] && [ -f "$state/mesh_cgal_$m.md" ] || continue
			# table rows of both programs (markdown cells split on |) and the per-box lines
			awk -F'|' -v model="$m" -v boxes="$state/mesh_boxes_$m.tsv" '
				function trim(s) { gsub(/^ +| +$/, "", s); return s }
				function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.1fx", b / a) : "-" }
				BEGIN {
					while ((getline line < boxes) > 0) {
						split(line, f, "\t"); key = f[2] " " f[3]
						if (f[1] == "geoacc") { area[key] = f[5]; tris[key] = f[4] }
						else { cgal_area[f[1] " " key] = f[5]; cgal_tris[f[1] " " key] = f[4] }
					}
				}
				FILENAME ~ /core/ && /^\| (one|LOD)/ {
					job = trim($2); order[++n] = job; nboxes[job] = trim($4)
					split(trim($7), g, " "); gpu[job] = g[1]; twin[job] = trim($10)
				}
				FILENAME ~ /cgal/ && /^\| (one|LOD)/ {
					job = trim($2); v = trim($3) ~ /whole/ ? "whole" : "near"
					ms[job, v] = trim($10)
				}
				END {
					for (j = 1; j <= n; j++) {
						job = order[j]; worst = 0; geo_n = 0; cgal_n = 0; done = 0
						for (k in cgal_area) {
							split(k, p, " "); if (p[2] != j - 1) continue
							a = area[p[2] " " p[3]]; d = cgal_area[k] - a; if (d < 0) d = -d
							r = a > 0 ? d / a : d; if (r > worst) worst = r
							if (p[1] == "cgal_near") { geo_n += tris[p[2] " " p[3]]; cgal_n += cgal_tris[k]; done++ }
						}
						counts = geo_n " / " cgal_n (done < nboxes[job] + 0 ? " (" done " boxes)" : "")
						split(ms[job, "near"], near, " "); split(ms[job, "whole"], whole, " ")
						printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1e |\n", model, job, nboxes[job],
							gpu[job], twin[job], ms[job, "whole"], ms[job, "near"], ratio(gpu[job], twin[job]),
							ratio(gpu[job], near[1]), counts, worst
					}
				}' "$state/mesh_core_$m.md" "$state/mesh_cgal_$m.md"
		done
	fi
fi

has sql || exit $status

# ------------------------------------------------------------------ end to end in SQL
echo
echo "## mesh_clip: data"
echo
dropdb --if-exists "$db" >/dev/null 2>&1
createdb "$db"
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE"
sql_models="b9 b9x10 $big"
[ -n "$bundle" ] && sql_models="b9 b9x10 dragon $big"
psql -X -q -c "CREATE TABLE plys (name text PRIMARY KEY, ply bytea)" || exit 1
for m in $sql_models; do
	psql -X -q -v ON_ERROR_STOP=1 -c "INSERT INTO plys VALUES ('$m', pg_read_binary_file('$work/$m.ply'))" || exit 1
done
psql -X -q -v ON_ERROR_STOP=1 <<SQL || exit 1
-- TIN Z of the models a geometry value can hold (b9 x 32, 1.08 GB as a TIN, cannot)
CREATE TABLE tins AS
SELECT name, geoacc_mesh_from_ply(ply, CASE WHEN name LIKE 'b9%' THEN 32633 ELSE 0 END) AS mesh
FROM plys WHERE name <> '$big';
-- the same, stored with lz4 instead of the default pglz
CREATE TABLE tins_lz4 (name text, mesh geometry COMPRESSION lz4);
INSERT INTO tins_lz4 SELECT name, mesh::bytea::geometry FROM tins WHERE name = 'b9x10';
-- the large model as a table of pieces (the README's pattern for models over the 1 GB limit): a row per b9
CREATE TABLE b9_rows AS
SELECT i * $large + k AS id, ST_Translate(mesh, i * (ST_XMax(mesh) - ST_XMin(mesh)), k * (ST_YMax(mesh) - ST_YMin(mesh))) AS mesh
FROM tins, generate_series(0, $large - 1) i, generate_series(0, $large - 1) k WHERE name = 'b9';
-- the boxes, computed once: the middle quarter in x and y, grids of 4 x 4 x 1 and 8 x 8 x 2
CREATE TABLE extents AS
SELECT name, ST_3DExtent(mesh) AS e FROM tins GROUP BY name
UNION ALL SELECT '$big', ST_3DExtent(mesh) FROM b9_rows;
-- the middle quarter spans tiles (1, 1) to (2, 2) of the 4 x 4 grid: planes 1/4 and 3/4, as in mesh_bench.h
CREATE TABLE boxes AS
SELECT name,
	(SELECT ST_3DMakeBox(ST_MakePoint(ST_XMin(a.box), ST_YMin(a.box), ST_ZMin(a.box)),
			ST_MakePoint(ST_XMax(b.box), ST_YMax(b.box), ST_ZMax(b.box)))
		FROM geoacc_tile_grid(e, 4, 4, 1) a, geoacc_tile_grid(e, 4, 4, 1) b
		WHERE a.ix = 1 AND a.iy = 1 AND b.ix = 2 AND b.iy = 2) AS quarter,
	(SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(e, 4, 4, 1)) AS g4,
	(SELECT array_agg(box ORDER BY ix, iy, iz) FROM geoacc_tile_grid(e, 8, 8, 2)) AS g8
FROM extents;
ANALYZE;
SQL
psql -X -At -c "SELECT name || ' as PLY: ' || length(ply) || ' bytes, ' || pg_column_size(ply) || ' stored'
		FROM plys ORDER BY 1" \
	-c "SELECT name || ' as TIN Z: ' || ST_NumGeometries(mesh) || ' triangles, ' || pg_column_size(mesh)
		|| ' bytes stored (pglz)' FROM tins ORDER BY 1" \
	-c "SELECT 'b9x10 as TIN Z stored with lz4: ' || pg_column_size(mesh) || ' bytes' FROM tins_lz4" \
	-c "SELECT 'b9_rows: ' || count(*) || ' rows, ' || sum(ST_NumGeometries(mesh)) || ' triangles' FROM b9_rows"

# sql_run DEVICE SETTINGS QUERY CHECK: the QUERY (CREATE TABLE r AS ...) in a fresh session after SETTINGS,
# on the GPU after a warm-up call; prints "ms|detoast|read|clip|upload|kernels|download|output|check",
# the stages summed over gpu_mesh_clip's DEBUG1 lines, CHECK's value read after the timing
sql_run() {
	local out
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 -c "SET geoacc.device = $1" -c "SET max_parallel_workers_per_gather = 0" \
		-c "SELECT ST_IsEmpty(gpu_mesh_clip('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d))" \
		-c "DROP TABLE IF EXISTS r" -c "SET statement_timeout = '300s'" ${2:+-c "$2"} \
		-c "SET client_min_messages = debug1" -c '\timing on' -c "$3" -c '\timing off' \
		-c "SET client_min_messages = notice" -c "$4" -c "DROP TABLE r" 2>&1) \
		|| { echo "$out" | grep -E 'ERROR' | head -2 >&2; echo "failed||||||||"; return 0; }
	awk '
		function stage(line, name,    s) {
			if (match(line, name " [0-9.]+")) { s = substr(line, RSTART, RLENGTH); sub(/^[a-z]+ /, "", s); return s }
			return 0
		}
		/^Time:/ && ms == "" { ms = $2; next }
		/gpu_mesh_clip: / {
			detoast += stage($0, "detoast"); read += stage($0, "read"); clip += stage($0, "clip")
			upload += stage($0, "upload"); kernels += stage($0, "kernels"); download += stage($0, "download")
			output += stage($0, "output"); next
		}
		/^DEBUG:/ || /^Time:/ || /^t$|^f$/ { next }
		{ check = $0 }
		END { printf "%s|%.0f|%.0f|%.0f|%.1f|%.1f|%.1f|%.0f|%s\n", ms, detoast, read, clip, upload, kernels, download,
				output, check }' <<< "$out"
}

# sql_row LABEL TRIANGLES_X_BOXES QUERY CHECK [SETTINGS]: a table row for each device
sql_row() {
	local g c
	g=$(sql_run gpu "${5:-}" "$3" "$4")
	c=$(sql_run cpu "${5:-}" "$3" "$4")
	awk -F'|' -v label="$1" -v work="$2" -v g="$g" -v c="$c" 'BEGIN {
		split(g, a, "|"); split(c, b, "|")
		same = (a[9] == b[9] && a[9] != "") ? "yes" : "NO"
		speedup = (a[1] + 0 > 0 && b[1] + 0 > 0) ? sprintf("%.1fx", b[1] / a[1]) : "-"
		for (i = 0; i < 2; i++) {
			if (i == 0) { split(g, x, "|"); path = "GPU" } else { split(c, x, "|"); path = "CPU" }
			if (x[1] == "failed") { printf "| %s | %s | %s | failed | | | | | | |\n", label, work, path; continue }
			rest = x[1] - x[2] - x[3] - x[4] - x[8]
			kernel = (x[6] > 0) ? sprintf("%.2g", work / (x[6] / 1000)) : "-"
			printf "| %s | %s | %s | %.0f | %s | %s | %s (%s / %s / %s) | %s | %.0f | %s | %s |\n", label, work, path, x[1],
				x[2], x[3], x[4], x[5], x[6], x[7], x[8], rest, i == 0 ? kernel : "-",
				i == 0 ? speedup : same
		}
	}'
}

tin_check="SELECT md5(string_agg(md5(mesh::bytea), ',' ORDER BY box_index)) FROM r"
ply_check="SELECT md5(string_agg(md5(ply), ',' ORDER BY box_index)) FROM r"
echo
echo "## mesh_clip: end to end in PostgreSQL (a fresh session per query; CREATE TABLE r AS ...)"
echo
echo "Milliseconds: the statement, then from gpu_mesh_clip's DEBUG1 lines detoast (reading the value out of"
echo "its TOAST storage), read (decoding and welding), clip (upload / kernels / download), output (the result"
echo "values), and the rest (writing the table: TOAST compression of the results, WAL). The GPU row's last"
echo "columns: kernel throughput in triangles x boxes per second, and the speed-up over the CPU path; the"
echo "CPU row's: whether both returned the same bytes."
echo
echo "| query | triangles x boxes | path | statement | detoast | read | clip (upload / kernels / download) | output | rest | kernels tri x box/s | speed-up / same |"
echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
ntri() { psql -X -At -c "$1"; }
for m in b9x10 dragon; do
	[ "$(ntri "SELECT count(*) FROM tins WHERE name = '$m'")" = 1 ] || continue
	n=$(ntri "SELECT ST_NumGeometries(mesh) FROM tins WHERE name = '$m'")
	sql_row "$m TIN: one clip" "$n" "CREATE TABLE r AS SELECT 1 AS box_index, gpu_mesh_clip(t.mesh, b.quarter) AS mesh
		FROM tins t JOIN boxes b USING (name) WHERE name = '$m'" "$tin_check"
	sql_row "$m TIN: 4 x 4 x 1 tiles, one call" "$((n * 16))" "CREATE TABLE r AS SELECT c.* FROM tins t JOIN boxes b
		USING (name), gpu_mesh_clip(t.mesh, b.g4) c WHERE name = '$m'" "$tin_check"
	sql_row "$m TIN: 8 x 8 x 2 tiles, one call" "$((n * 128))" "CREATE TABLE r AS SELECT c.* FROM tins t JOIN boxes b
		USING (name), gpu_mesh_clip(t.mesh, b.g8) c WHERE name = '$m'" "$tin_check"
	if [ "$m" = b9x10 ]; then
		sql_row "$m TIN: 4 x 4 x 1 tiles, a call per tile" "$((n * 16))" "CREATE TABLE r AS SELECT i AS box_index,
			gpu_mesh_clip(t.mesh, b.g4[i]) AS mesh FROM tins t JOIN boxes b USING (name), generate_series(1, 16) i
			WHERE name = '$m'" "$tin_check"
		sql_row "$m TIN, lz4 (stored and written): one clip" "$n" "CREATE TABLE r AS SELECT 1 AS box_index,
			gpu_mesh_clip(t.mesh, b.quarter) AS mesh FROM tins_lz4 t JOIN boxes b USING (name) WHERE name = '$m'" \
			"$tin_check" "SET default_toast_compression = lz4"
		sql_row "$m TIN, lz4 (stored and written): 8 x 8 x 2 tiles" "$((n * 128))" "CREATE TABLE r AS SELECT c.*
			FROM tins_lz4 t JOIN boxes b USING (name), gpu_mesh_clip(t.mesh, b.g8) c WHERE name = '$m'" \
			"$tin_check" "SET default_toast_compression = lz4"
	fi
done
for m in b9x10 dragon $big; do
	[ "$(ntri "SELECT count(*) FROM plys WHERE name = '$m'")" = 1 ] || continue
	n=$(ntri "SELECT sum(ST_NumGeometries(mesh)) FROM (SELECT mesh FROM tins WHERE name = '$m'
		UNION ALL SELECT mesh FROM b9_rows WHERE '$m' = '$big') s")
	sql_row "$m PLY: one clip" "$n" "CREATE TABLE r AS SELECT 1 AS box_index, gpu_mesh_clip(p.ply, b.quarter) AS ply
		FROM plys p JOIN boxes b USING (name) WHERE name = '$m'" "$ply_check"
	sql_row "$m PLY: 4 x 4 x 1 tiles, one call" "$((n * 16))" "CREATE TABLE r AS SELECT c.* FROM plys p JOIN boxes b
		USING (name), gpu_mesh_clip(p.ply, b.g4) c WHERE name = '$m'" "$ply_check"
	sql_row "$m PLY: 8 x 8 x 2 tiles, one call" "$((n * 128))" "CREATE TABLE r AS SELECT c.* FROM plys p JOIN boxes b
		USING (name), gpu_mesh_clip(p.ply, b.g8) c WHERE name = '$m'" "$ply_check"
done
rows_check="SELECT md5(string_agg(md5(mesh::bytea), ',' ORDER BY id, box_index)) FROM r"
for g in g4 g8; do
	k=$([ $g = g4 ] && echo 16 || echo 128)
	sql_row "b9_rows ($((large * large)) rows of b9): $([ $g = g4 ] && echo '4 x 4 x 1' || echo '8 x 8 x 2') grid, non-empty tiles" \
		"$((10174 * large * large * k))" "CREATE TABLE r AS SELECT p.id, c.box_index, c.mesh FROM b9_rows p, boxes b,
		gpu_mesh_clip(p.mesh, b.$g) c WHERE b.name = '$big' AND NOT ST_IsEmpty(c.mesh)" "$rows_check"
done

echo
echo "## mesh_clip: cancellation"
echo
out=$(psql -X -q -At -c "SET geoacc.device = cpu" -c "SET statement_timeout = '1s'" -c '\timing on' \
	-c "SELECT count(*) FROM plys p, boxes b, gpu_mesh_clip(p.ply, b.g8 || b.g8 || b.g8 || b.g8) c
		WHERE p.name = '$big' AND b.name = '$big'" 2>&1 || true)
echo "- CPU path, statement_timeout = 1s on b9 x $large (PLY) x 512 boxes: $(grep -o 'ERROR: .*' <<< "$out" | head -1), after $(awk '/^Time:/ {print $2 " ms"}' <<< "$out")"
exit $status

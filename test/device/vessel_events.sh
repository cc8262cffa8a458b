#!/bin/bash
# Tests and benchmark of the vessel events (gpu_encounters, gpu_stops, gpu_zone_visits) on the GPU machine,
# from the repository root after geoacc is built (CUDA_ARCHS=90) and installed and PostgreSQL is running with
# PG* set (test/device/run.sh does that).
#
#   1. The core tests of the events, GPU against CPU to the bit (fresh seed, printed), and the events regress
#      test with geoacc.device = gpu (the same expected file as on the CPU).
#   2. Encounters, self-join at 500 m, max_gap 10 minutes, as CREATE TABLE ... AS: the GPU at each size of
#      EVENTS_ENCOUNTER_SIZES segments (default 10^5, 10^6, 10^7, 10^8: the issue's target is 10^8 in at most
#      60 s), the CPU up to EVENTS_CPU_MAX, the same number of encounters on both; and the SQL way at the sizes
#      of EVENTS_SQL_SIZES (default 10^5, 10^6): one row per segment with a GiST index, ST_DWithin then
#      ST_CPAWithin, then gaps-and-islands over the pairs' intervals, parallel workers allowed, cut off after
#      EVENTS_SQL_TIMEOUT; the ratio, and the GPU call's DEBUG1 line (where its time went).
#   3. Stops over EVENTS_STOP_SIZES fixes (default 10^6, 10^7, 10^8: target 10^8 in at most 30 s) at 200 m and
#      30 minutes, GPU and CPU, and the plain reference of the regress test (PL/pgSQL) at 10^5 fixes.
#   4. Zone visits of EVENTS_ZONE_SIZES segments (default 10^6, 10^7: target 10^7 against 10^4 port polygons in
#      at most 10 s) against EVENTS_ZONES polygons (default 10^4) of EVENTS_ZONE_SHAPE: "ports" (default), apart
#      like ports, one in each cell of a square grid over the tracks' extent, of 8 to 32 sides and a radius of 10%
#      to 40% of the cell, or "fixes", circles of 100 m to 1 km around fixes of the tracks (which lie in three
#      harbours, so these zones overlap each other much more than ports do),
#      GPU and CPU; the PostGIS way (ST_Intersection of each segment with the zones it meets, by a GiST index;
#      its pieces, not yet merged) at 10^5 segments.
#
# EVENTS_REGION_COPIES=K spreads the scaled traffic over regions 1,000 km apart, K copies of the harbour's
# tracks in each (test/data/scale_tracks.c), so that it grows in area as a day of global AIS does, not in
# density; unset, every copy lies in the one harbour, whose encounters then grow faster than its segments.
# A size list set empty (EVENTS_STOP_SIZES=) leaves that part out. EVENTS_CHECKS=0 leaves out part 1; EVENTS_DEVICE=cpu runs the "GPU" columns on the CPU (a smoke test of the
# script on a machine without a GPU, with small sizes).  Prints markdown tables; logs go to $OUT (default
# /tmp/geoacc-out).  First run on an H100 on 2026-12-06 (test/device/RESULTS.md).
set -uo pipefail
db=${EVENTS_DB:-geoacc_bench}
encounter_sizes=${EVENTS_ENCOUNTER_SIZES-100000 1000000 10000000 100000000}
sql_sizes=${EVENTS_SQL_SIZES-100000 1000000}
stop_sizes=${EVENTS_STOP_SIZES-1000000 10000000 100000000}
zone_sizes=${EVENTS_ZONE_SIZES-1000000 10000000}
zones=${EVENTS_ZONES:-10000}
zone_shape=${EVENTS_ZONE_SHAPE:-ports}
cpu_max=${EVENTS_CPU_MAX:-1000000}
timeout=${EVENTS_TIMEOUT:-600s}
checks=${EVENTS_CHECKS:-1}
gpu=${EVENTS_DEVICE:-gpu}
sql_timeout=${EVENTS_SQL_TIMEOUT:-300s}
region_copies=${EVENTS_REGION_COPIES:-}
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
status=0

echo "vessel_events: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown),"\
	"$([ -n "$region_copies" ] && echo "traffic in regions of $region_copies copies of the harbour" || echo "every copy of the traffic in the one harbour")"

if [ "$checks" = 1 ]; then
	echo
	echo "## vessel events: core tests (GPU against CPU) and the regress test with geoacc.device = gpu"
	make -s test/core/geoacc_core_tests || exit 1
	test/core/geoacc_core_tests events > "$OUT/events_core_tests.log" 2>&1 || status=1
	grep -E '^(geoacc core tests|FAIL|[0-9]+ passed)' "$OUT/events_core_tests.log"
	PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup ais events" \
		> "$OUT/events_installcheck_gpu.log" 2>&1 || { status=1; head -60 regression.diffs 2>/dev/null; }
	grep -E 'tests passed|failed' "$OUT/events_installcheck_gpu.log"
fi

psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb "$db"
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -qAt -c "SELECT to_regclass('ais_tracks') IS NOT NULL")" != t ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql
fi

# run DEVICE SQL [TIMEOUT]: "milliseconds|rows|DEBUG1 line" of SQL in a fresh session; a small call first starts
# the device, so CUDA start-up is not timed; ev_result is dropped untimed
run() {
	{ psql -X -v ON_ERROR_STOP=1 -c "SET work_mem = '1GB'" -c "SET geoacc.device = $1" \
		-c "SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM ais_tracks WHERE id < 20', NULL, 100)" \
		-c "DROP TABLE IF EXISTS ev_result" \
		-c "SET statement_timeout = '${3:-$timeout}'" -c "SET client_min_messages = debug1" \
		-c '\timing on' -c "$2" 2>&1 || true; } |
		awk '/^Time:/ { ms = $2 } /gpu_(encounters|stops|zone_visits):/ { sub(/^.*DEBUG: */, ""); debug = $0 }
			/^SELECT [0-9]+/ { rows = $2 } /^ERROR:/ { ms = "failed"; debug = $0 }
			/canceling statement due to statement timeout/ { ms = "timeout" }
			END { printf "%s|%s|%s\n", ms, rows, debug }'
}
field() { echo "$1" | cut -d'|' -f"$2"; }
seconds() {
	case $1 in
		timeout) echo "> $2" ;;
		'') echo "-" ;;			# not run at this size
		failed) echo failed ;;
		*) awk -v ms="$1" 'BEGIN { if (ms < 1000) printf "%.1f ms", ms; else printf "%.2f s", ms / 1000 }' ;;
	esac
}
ratio() {
	awk -v g="$1" -v p="$2" -v t="${3%s}" 'BEGIN {
		if (g !~ /^[0-9.]+$/) print "-"; else if (p == "timeout") printf "> %.0fx", t * 1000 / g;
		else if (p ~ /^[0-9.]+$/) printf "%.0fx", p / g; else print "-" }'
}
# tracks N: a table of about N segments (the scaled tracks hold about 120 points each), its copies of the
# harbour's traffic spread over regions of EVENTS_REGION_COPIES copies each when that is set
tracks() {
	local table=events_tracks_$1${region_copies:+_r$region_copies}
	if [ "$(psql -X -qAt -c "SELECT to_regclass('$table') IS NOT NULL")" != t ]; then
		REGION_COPIES=$region_copies test/data/scale_tracks.sh "$table" $(($1 + $1 / 120)) 7 \
			>> "$OUT/events_data.log" 2>&1 || return 1
	fi
	echo "$table"
}

rows=()
echo
echo "## encounters: self-join at 500 m, max_gap 10 minutes"
for size in $encounter_sizes; do
	table=$(tracks "$size") || { status=1; continue; }
	segments=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj) - 1) FROM $table")
	sql="CREATE TABLE ev_result AS SELECT * FROM gpu_encounters('SELECT id, traj FROM $table', NULL, 500,
		max_gap => '10 minutes')"
	g=$(run "$gpu" "$sql")
	c=""
	[ "$segments" -le "$cpu_max" ] && c=$(run cpu "$sql")
	p=""
	if [[ " $sql_sizes " == *" $size "* ]]; then
		psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS ${table}_segments" \
			-c "CREATE UNLOGGED TABLE ${table}_segments AS
				SELECT id, k, ST_MakeLine(ST_PointN(traj, k), ST_PointN(traj, k + 1)) AS seg
				FROM $table, generate_series(1, ST_NPoints(traj) - 1) k" \
			-c "CREATE INDEX ON ${table}_segments USING gist (seg)" -c "ANALYZE ${table}_segments" \
			>> "$OUT/events_data.log" 2>&1
		p=$(run cpu "SET max_parallel_workers_per_gather = $(nproc); SET parallel_setup_cost = 0;
			CREATE TABLE ev_result AS
			WITH pairs AS (
				SELECT a.id AS a_id, b.id AS b_id,
					greatest(ST_M(ST_StartPoint(a.seg)), ST_M(ST_StartPoint(b.seg))) AS t0,
					least(ST_M(ST_EndPoint(a.seg)), ST_M(ST_EndPoint(b.seg))) AS t1,
					ST_DistanceCPA(a.seg, b.seg) AS d
				FROM ${table}_segments a JOIN ${table}_segments b ON a.id < b.id AND ST_DWithin(a.seg, b.seg, 500)
				WHERE ST_CPAWithin(a.seg, b.seg, 500)
			), s AS (
				SELECT *, max(t1) OVER (PARTITION BY a_id, b_id ORDER BY t0 ROWS BETWEEN UNBOUNDED PRECEDING
					AND 1 PRECEDING) AS latest FROM pairs
			), f AS (
				SELECT *, sum(CASE WHEN latest IS NULL OR t0 > latest + 600 THEN 1 ELSE 0 END)
					OVER (PARTITION BY a_id, b_id ORDER BY t0 ROWS UNBOUNDED PRECEDING) AS encounter FROM s
			)
			SELECT a_id, b_id, encounter, min(t0) AS t_start, max(t1) AS t_end, min(d) AS min_distance
			FROM f GROUP BY a_id, b_id, encounter" "$sql_timeout")
	fi
	same="-"
	[ -n "$c" ] && { [ "$(field "$g" 2)" = "$(field "$c" 2)" ] && same=yes || { same=NO; status=1; }; }
	rows+=("| $segments | $(field "$g" 2) | $(seconds "$(field "$g" 1)" "$timeout") | $(seconds "$(field "$c" 1)" "$timeout") | $same | $(seconds "$(field "$p" 1)" "$sql_timeout") | $(ratio "$(field "$g" 1)" "$(field "$p" 1)" "$sql_timeout") | $(field "$g" 3) |")
	echo "${rows[-1]}" >> "$OUT/events_encounters.md"
done
echo "| segments | encounters | GPU | CPU | same | SQL (GiST, ST_CPAWithin, gaps-and-islands) | SQL / GPU | GPU stages |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"

rows=()
echo
echo "## stops at 200 m for 30 minutes"
for size in $stop_sizes; do
	table=$(tracks "$size") || { status=1; continue; }
	fixes=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj)) FROM $table")
	sql="CREATE TABLE ev_result AS SELECT * FROM gpu_stops('SELECT id, traj FROM $table', 200, '30 minutes')"
	g=$(run "$gpu" "$sql")
	c=""
	[ "$fixes" -le "$cpu_max" ] && c=$(run cpu "$sql")
	same="-"
	[ -n "$c" ] && { [ "$(field "$g" 2)" = "$(field "$c" 2)" ] && same=yes || { same=NO; status=1; }; }
	rows+=("| $fixes | $(field "$g" 2) | $(seconds "$(field "$g" 1)" "$timeout") | $(seconds "$(field "$c" 1)" "$timeout") | $same | $(field "$g" 3) |")
	echo "${rows[-1]}" >> "$OUT/events_stops.md"
done
echo "| fixes | stops | GPU | CPU | same | GPU stages |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
# the plain reference of the regress test (sql/events.sql's stops_reference) at about 10^5 fixes
table=$(tracks 100000) || exit 1
psql -X -q -c "DROP FUNCTION IF EXISTS stops_reference(float8[], float8[], float8[], float8, float8)"
sed -n '/^CREATE FUNCTION stops_reference/,/^\$\$;/p' sql/events.sql | psql -X -q
r=$(run cpu "CREATE TABLE ev_result AS SELECT t.id, s.* FROM (SELECT id,
		array_agg(ST_X(geom) ORDER BY path) AS xs, array_agg(ST_Y(geom) ORDER BY path) AS ys,
		array_agg(ST_M(geom) ORDER BY path) AS ms FROM $table, ST_DumpPoints(traj) GROUP BY id) t,
	stops_reference(t.xs, t.ys, t.ms, 200, 1800) s" "$sql_timeout")
g=$(run "$gpu" "CREATE TABLE ev_result AS SELECT * FROM gpu_stops('SELECT id, traj FROM $table', 200, '30 minutes')")
echo
echo "stops at about 10^5 fixes: PL/pgSQL reference $(seconds "$(field "$r" 1)" "$sql_timeout") ($(field "$r" 2) stops),"\
	"GPU $(seconds "$(field "$g" 1)" "$timeout") ($(field "$g" 2)), $(ratio "$(field "$g" 1)" "$(field "$r" 1)" "$sql_timeout")"

rows=()
echo
echo "## zone visits against $zones polygons ($zone_shape)"
psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS events_zones" -c "SELECT setseed(0.5)" \
	-c "CREATE UNLOGGED TABLE events_zones AS
		SELECT row_number() OVER () AS id, polygon FROM (
		SELECT ST_Buffer(ST_PointN(traj, 1 + (random() * (ST_NPoints(traj) - 1))::int), 100 + random() * 900,
				2 + (random() * 6)::int) AS polygon
		FROM (SELECT traj FROM ais_tracks, generate_series(1, 1 + $zones / 477) ORDER BY random() LIMIT $zones) t
		WHERE '$zone_shape' = 'fixes'
		UNION ALL
		SELECT ST_Buffer(ST_SetSRID(ST_MakePoint(x0 + (i + 0.5 + (0.5 - f) * (random() - 0.5)) * w,
												 y0 + (j + 0.5 + (0.5 - f) * (random() - 0.5)) * h), srid),
						 f * least(w, h), 2 + (random() * 6)::int)
		FROM (SELECT ST_XMin(e) AS x0, ST_YMin(e) AS y0, (ST_XMax(e) - ST_XMin(e)) / n AS w,
					 (ST_YMax(e) - ST_YMin(e)) / n AS h, n, srid
			  FROM (SELECT ST_Extent(traj)::geometry AS e, max(ST_SRID(traj)) AS srid,
						   ceil(sqrt($zones))::int AS n FROM ais_tracks) x) g,
			 generate_series(0, n - 1) i, generate_series(0, n - 1) j, LATERAL (SELECT 0.1 + random() * 0.3 AS f) r
		WHERE '$zone_shape' = 'ports' LIMIT $zones) z" \
	-c "CREATE INDEX ON events_zones USING gist (polygon)" >> "$OUT/events_data.log" 2>&1
for size in $zone_sizes; do
	table=$(tracks "$size") || { status=1; continue; }
	segments=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj) - 1) FROM $table")
	sql="CREATE TABLE ev_result AS SELECT * FROM gpu_zone_visits('SELECT id, traj FROM $table',
		'SELECT id, polygon FROM events_zones')"
	g=$(run "$gpu" "$sql")
	c=""
	[ "$segments" -le "$cpu_max" ] && c=$(run cpu "$sql")
	same="-"
	[ -n "$c" ] && { [ "$(field "$g" 2)" = "$(field "$c" 2)" ] && same=yes || { same=NO; status=1; }; }
	rows+=("| $segments | $(field "$g" 2) | $(seconds "$(field "$g" 1)" "$timeout") | $(seconds "$(field "$c" 1)" "$timeout") | $same | $(field "$g" 3) |")
	echo "${rows[-1]}" >> "$OUT/events_zone_visits.md"
done
echo "| segments | visits | GPU | CPU | same | GPU stages |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
table=$(tracks 100000)
r=$(run cpu "SET max_parallel_workers_per_gather = $(nproc); SET parallel_setup_cost = 0;
	CREATE TABLE ev_result AS
	SELECT t.id, z.id AS zone_id, ST_InterpolatePoint(s.geom, ST_StartPoint(p.geom)) AS t0,
		ST_InterpolatePoint(s.geom, ST_EndPoint(p.geom)) AS t1
	FROM $table t, ST_DumpSegments(t.traj) s JOIN events_zones z ON ST_Intersects(s.geom, z.polygon),
		ST_Dump(ST_Intersection(s.geom, z.polygon)) p
	WHERE GeometryType(p.geom) = 'LINESTRING'" "$sql_timeout")
g=$(run "$gpu" "CREATE TABLE ev_result AS SELECT * FROM gpu_zone_visits('SELECT id, traj FROM $table',
	'SELECT id, polygon FROM events_zones')")
echo
echo "zone visits at about 10^5 segments: PostGIS pieces (before merging) $(seconds "$(field "$r" 1)" "$sql_timeout"),"\
	"GPU $(seconds "$(field "$g" 1)" "$timeout"), $(ratio "$(field "$g" 1)" "$(field "$r" 1)" "$sql_timeout")"
psql -X -q -c "DROP TABLE IF EXISTS ev_result"
exit $status

#!/bin/bash
# One GPU shared by many sessions, on the GPU machine (PG* set, geoacc installed; test/device/run.sh does
# that).  SESSIONS (default 16) sessions run every geoacc function at once with geoacc.device = auto and
# geoacc.gpu_threshold = 0, and every result must equal the CPU's, with no session failing:
#
#   A. a GPU mostly taken: one more session holds all but HEADROOM_MB of the free device memory, so the
#      others' CUDA contexts and allocations run out of memory: their calls must move to the CPU
#      (geoacc_stats().fallbacks) or start there;
#   B. the whole GPU: the sessions' automatic caps (90% of what each saw free) add up to far more than
#      the device has.
#
# Prints, per phase, the sessions that failed, the calls on each device and the fallbacks.
set -uo pipefail
sessions=${SESSIONS:-16}
headroom_mb=${HEADROOM_MB:-6144}
db=geoacc_sessions
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null' EXIT
dropdb --if-exists $db >/dev/null 2>&1
createdb $db
export PGDATABASE=$db

psql -X -q -v ON_ERROR_STOP=1 > "$OUT/many_sessions_setup.log" 2>&1 <<'SQL' || { cat "$OUT/many_sessions_setup.log"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION geoacc CASCADE;
CREATE FUNCTION geoacc_test_hold_device_memory(bigint) RETURNS void AS '$libdir/geoacc' LANGUAGE C STRICT;
\i test/data/load_ais.sql
CREATE TABLE uci_lines (id int, line text);
\copy uci_lines FROM PROGRAM 'cat -n data/twed/uci_synthetic_control.data'
CREATE TABLE uci AS SELECT id, regexp_split_to_array(trim(line), '\s+')::float8[] AS vals FROM uci_lines;
-- a terrain of 2 x 300 x 300 triangles at UTM coordinates
CREATE TABLE mesh AS
SELECT ST_SetSRID(('TIN Z (' || string_agg(format('((%1$s %2$s %5$s,%3$s %2$s %6$s,%3$s %4$s %7$s,%1$s %2$s %5$s)),'
		'((%1$s %2$s %5$s,%3$s %4$s %7$s,%1$s %4$s %8$s,%1$s %2$s %5$s))',
		x0, y0, x1, y1, z00, z10, z11, z01), ',') || ')')::geometry, 32633) AS mesh
FROM (SELECT x0, y0, x1, y1,
		sin(x0 / 20.0) * 5 + cos(y0 / 30.0) * 3 AS z00, sin(x1 / 20.0) * 5 + cos(y0 / 30.0) * 3 AS z10,
		sin(x1 / 20.0) * 5 + cos(y1 / 30.0) * 3 AS z11, sin(x0 / 20.0) * 5 + cos(y1 / 30.0) * 3 AS z01
	FROM (SELECT 500000 + i AS x0, 4000000 + j AS y0, 500001 + i AS x1, 4000001 + j AS y1
		FROM generate_series(0, 299) i, generate_series(0, 299) j) g) c;
SQL

# the jobs of one session, results into tables suffixed _$1
jobs() {
	cat <<SQL
SET geoacc.device = auto;
SET geoacc.gpu_threshold = 0;
SELECT geoacc_stats_reset();
CREATE TABLE simplify_$1 AS SELECT id, gpu_dp_simplify(traj, 10) OVER () AS g FROM ais_tracks;
CREATE TABLE density_$1 AS
SELECT gpu_density_raster(traj, (SELECT ST_Extent(traj) FROM ais_tracks)::box2d, 2048, 2048) AS r FROM ais_tracks;
CREATE TABLE twed_$1 AS SELECT * FROM gpu_twed_matrix('SELECT id, vals FROM uci', NULL, 1, 1);
CREATE TABLE join_$1 AS SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks', NULL, 100);
CREATE TABLE mesh_$1 AS
SELECT c.* FROM mesh, gpu_mesh_clip(mesh, (SELECT array_agg(box ORDER BY ix, iy) FROM geoacc_tile_grid(
	'BOX3D(500000 4000000 -100, 500300 4000300 100)'::box3d, 4, 4))) c;
CREATE TABLE stats_$1 AS SELECT * FROM geoacc_stats();
SQL
}

# the same on the CPU: the reference
{ echo "SET geoacc.device = cpu;"; jobs ref | grep -v 'geoacc.device = auto'; } > "$work/ref.sql"
psql -X -q -v ON_ERROR_STOP=1 -f "$work/ref.sql" > "$OUT/many_sessions_ref.log" 2>&1 || { cat "$OUT/many_sessions_ref.log"; exit 1; }

compare() {		# compare PHASE: one line per kind of result, and the devices the calls ran on
	local phase=$1
	for kind in simplify density twed join mesh; do
		differing=0
		for s in $(seq "$sessions"); do
			n=$(psql -X -qAt -c "SELECT count(*) FROM ((TABLE ${kind}_${phase}_$s EXCEPT ALL TABLE ${kind}_ref)
				UNION ALL (TABLE ${kind}_ref EXCEPT ALL TABLE ${kind}_${phase}_$s)) d" 2>/dev/null || echo missing)
			[ "$n" = 0 ] || differing=$((differing + 1))
		done
		echo "phase $phase: $kind: $differing of $sessions sessions differ from the CPU"
	done
	psql -X -qAt -F ' ' -c "SELECT 'phase $phase: ' || device || ' calls ' || sum(calls) || ', fallbacks ' || sum(fallbacks)
		FROM ($(for s in $(seq "$sessions"); do printf 'SELECT * FROM stats_%s_%s UNION ALL ' "$phase" "$s"; done)
			SELECT * FROM stats_ref WHERE false) x GROUP BY device ORDER BY device"
}

run_phase() {		# run_phase PHASE: every session at once; failures counted
	local phase=$1 failed=0 pids=()
	for s in $(seq "$sessions"); do
		jobs "${phase}_$s" > "$work/$phase.$s.sql"
		psql -X -q -v ON_ERROR_STOP=1 -f "$work/$phase.$s.sql" > "$work/$phase.$s.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	cat "$work"/$phase.*.log > "$OUT/many_sessions_$phase.log"
	echo "phase $phase: $failed of $sessions sessions failed"
	compare "$phase"
}

echo "## many sessions: $sessions at once, $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
# A: a holder takes all but the headroom, then waits until the phase is over
psql -X -q -c "SET geoacc.gpu_memory_limit = '1000GB'" -c "SELECT geoacc_status()" \
	-c "SELECT geoacc_test_hold_device_memory(free_memory - $headroom_mb::bigint * 1048576) FROM geoacc_devices() WHERE ordinal = 0" \
	-c "SELECT pg_sleep(3600)" > "$OUT/many_sessions_holder.log" 2>&1 &
holder=$!
sleep 5
echo "phase A: free device memory left to the sessions: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader | head -1)"
run_phase A
kill "$holder" 2>/dev/null
psql -X -qAt -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()" >/dev/null
sleep 2
echo "phase B: free device memory: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader | head -1)"
run_phase B

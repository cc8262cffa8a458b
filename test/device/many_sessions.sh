#!/bin/bash
# One GPU shared by many sessions, on the GPU machine (PG* set, geoacc installed; test/device/run.sh does
# that).  SESSIONS (default 16) sessions run the geoacc functions at once (simplification, the density
# raster, the TWED matrix and TWED pairs, the segment join, the mesh clip, trajectories from fixes) with
# geoacc.gpu_threshold = 0, and every result must equal the CPU's, with no session failing.  On the server
# run.sh started (geoacc not preloaded: each backend caps itself):
#
#   A. a GPU mostly taken: one more session holds all but HEADROOM_MB of the free device memory, so the
#      others' CUDA contexts and allocations run out of memory: their calls must move to the CPU
#      (geoacc_stats().fallbacks) or start there;
#   B. the whole GPU: the sessions' automatic caps (90% of what each saw free) add up to far more than
#      the device has;
#
# and on a second server (port PRELOADED_PORT, default 5446) with geoacc in shared_preload_libraries, whose
# sessions share each GPU's memory budget (geoacc.gpu_memory_total, changed by ALTER SYSTEM and a reload):
#
#   C. a budget of BUDGET_MB (default 1024) that the sessions' calls together exceed many times over, under
#      geoacc.device = auto: calls the budget cannot serve run on the CPU (fallbacks);
#   D. the same budget under geoacc.device = gpu: such calls wait for memory (waits), none gives up;
#   E. the automatic budget (3/4 of the device) under auto;
#   F. a GPU call cancelled, and one whose backend is terminated, while they hold budget.
#
# After each of C-F nothing may stay reserved (geoacc_gpu_budget().gpu_memory_reserved = 0).  Prints, per
# phase, the sessions that failed, the results that differ from the CPU's, the calls on each device with
# their fallbacks and waits, and for C-F the budget's counters; the last line says whether every check held.
set -uo pipefail
sessions=${SESSIONS:-16}
headroom_mb=${HEADROOM_MB:-6144}
budget_mb=${BUDGET_MB:-1024}
preloaded_port=${PRELOADED_PORT:-5446}
db=geoacc_sessions
OUT=${OUT:-/tmp/geoacc-out}
PGBIN=$(dirname "$(readlink -f "$(command -v postgres || echo /usr/lib/postgresql/15/bin/postgres)")")
mkdir -p "$OUT"
work=$(mktemp -d)
problems=0
problem() { echo "many_sessions: FAILED: $*"; problems=$((problems + 1)); }
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null' EXIT

setup_db() {		# the data every session reads, in $db of the server PGPORT names
	dropdb --if-exists $db >/dev/null 2>&1
	createdb $db || return 1
	psql -X -q -d $db -v ON_ERROR_STOP=1 > "$OUT/many_sessions_setup_$PGPORT.log" 2>&1 <<'SQL' \
		|| { cat "$OUT/many_sessions_setup_$PGPORT.log"; return 1; }
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
}

# the jobs of one session, results into tables suffixed _$1, on device $2 (auto or gpu)
jobs() {
	cat <<SQL
SET geoacc.device = ${2:-auto};
SET geoacc.gpu_threshold = 0;
SET geoacc.gpu_memory_wait = '10min';
SELECT geoacc_stats_reset();
CREATE TABLE simplify_$1 AS SELECT id, gpu_dp_simplify(traj, 10) OVER () AS g FROM ais_tracks;
CREATE TABLE density_$1 AS
SELECT gpu_density_raster(traj, (SELECT ST_Extent(traj) FROM ais_tracks)::box2d, 2048, 2048) AS r FROM ais_tracks;
CREATE TABLE twed_$1 AS SELECT * FROM gpu_twed_matrix('SELECT id, vals FROM uci', NULL, 1, 1);
CREATE TABLE join_$1 AS SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks', NULL, 100);
CREATE TABLE mesh_$1 AS
SELECT c.* FROM mesh, gpu_mesh_clip(mesh, (SELECT array_agg(box ORDER BY ix, iy) FROM geoacc_tile_grid(
	'BOX3D(500000 4000000 -100, 500300 4000300 100)'::box3d, 4, 4))) c;
CREATE TABLE tracks_$1 AS SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 5);
CREATE TABLE pairs_$1 AS SELECT x.id AS a, y.id AS b, gpu_twed_pairs(x.traj, y.traj) OVER () AS d
FROM ais_tracks x JOIN ais_tracks y ON y.id BETWEEN x.id + 1 AND x.id + 20;
CREATE TABLE stats_$1 AS SELECT * FROM geoacc_stats();
SQL
}

reference() {		# the same on the CPU: the reference
	{ echo "SET geoacc.device = cpu;"; jobs ref | grep -v 'geoacc.device = auto'; } > "$work/ref.sql"
	psql -X -q -d $db -v ON_ERROR_STOP=1 -f "$work/ref.sql" > "$OUT/many_sessions_ref_$PGPORT.log" 2>&1 \
		|| { cat "$OUT/many_sessions_ref_$PGPORT.log"; return 1; }
}

compare() {		# compare PHASE: one line per kind of result, and the devices the calls ran on
	local phase=$1
	for kind in simplify density twed join mesh tracks pairs; do
		differing=0
		for s in $(seq "$sessions"); do
			n=$(psql -X -qAt -d $db -c "SELECT count(*) FROM ((TABLE ${kind}_${phase}_$s EXCEPT ALL TABLE ${kind}_ref)
				UNION ALL (TABLE ${kind}_ref EXCEPT ALL TABLE ${kind}_${phase}_$s)) d" 2>/dev/null || echo missing)
			[ "$n" = 0 ] || differing=$((differing + 1))
		done
		echo "phase $phase: $kind: $differing of $sessions sessions differ from the CPU"
		[ "$differing" = 0 ] || problem "phase $phase: $kind differs from the CPU in $differing sessions"
	done
	psql -X -qAt -d $db -F ' ' -c "SELECT 'phase $phase: ' || device || ' calls ' || sum(calls) || ', fallbacks '
			|| sum(fallbacks) || ', waits ' || sum(waits) || ' (' || round(sum(wait_ms)) || ' ms)'
		FROM ($(for s in $(seq "$sessions"); do printf 'SELECT * FROM stats_%s_%s UNION ALL ' "$phase" "$s"; done)
			SELECT * FROM stats_ref WHERE false) x GROUP BY device ORDER BY device"
}

run_phase() {		# run_phase PHASE [DEVICE]: every session at once; failures counted
	local phase=$1 device=${2:-auto} failed=0 pids=()
	for s in $(seq "$sessions"); do
		jobs "${phase}_$s" "$device" > "$work/$phase.$s.sql"
		psql -X -q -d $db -v ON_ERROR_STOP=1 -f "$work/$phase.$s.sql" > "$work/$phase.$s.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	cat "$work"/$phase.*.log > "$OUT/many_sessions_$phase.log"
	echo "phase $phase: $failed of $sessions sessions failed"
	[ "$failed" = 0 ] || problem "phase $phase: $failed sessions failed (many_sessions_$phase.log)"
	compare "$phase"
}

budget() {		# budget PHASE: the budget's counters since the last call, and nothing may stay reserved
	local phase=$1
	psql -X -qAt -d $db -c "SELECT 'phase $phase: budget of GPU ' || gpu_device || ' ' || pg_size_pretty(gpu_memory_total)
			|| ' (device ' || pg_size_pretty(device_memory) || '): reserved now ' || gpu_memory_reserved
			|| ', calls ' || calls - coalesce(p.c, 0) || ', waits ' || waits - coalesce(p.w, 0)
			|| ', fallbacks ' || fallbacks - coalesce(p.f, 0) || ', timeouts ' || timeouts - coalesce(p.t, 0)
		FROM geoacc_gpu_budget() LEFT JOIN budget_seen p ON p.d = gpu_device ORDER BY gpu_device"
	reserved=$(psql -X -qAt -d $db -c "SELECT sum(gpu_memory_reserved) FROM geoacc_gpu_budget()")
	[ -n "$reserved" ] || problem "phase $phase: geoacc_gpu_budget() shows no GPU"
	[ "${reserved:-0}" = 0 ] || problem "phase $phase: $reserved bytes of the budget stay reserved"
	psql -X -qAt -d $db -c "TRUNCATE budget_seen" \
		-c "INSERT INTO budget_seen SELECT gpu_device, calls, waits, fallbacks, timeouts FROM geoacc_gpu_budget()"
}

set_budget() {		# set_budget SIZE: geoacc.gpu_memory_total by ALTER SYSTEM and a reload
	psql -X -qAt -d $db -c "ALTER SYSTEM SET geoacc.gpu_memory_total = '$1'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 2
	echo "geoacc.gpu_memory_total: $(psql -X -qAt -d $db -c 'SHOW geoacc.gpu_memory_total')"
}

echo "## many sessions: $sessions at once, $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
setup_db || exit 1
reference || exit 1

# A: a holder takes all but the headroom, then waits until the phase is over
psql -X -q -d $db -c "SET geoacc.gpu_memory_limit = '1000GB'" -c "SELECT geoacc_status()" \
	-c "SELECT geoacc_test_hold_device_memory(free_memory - $headroom_mb::bigint * 1048576) FROM geoacc_devices() WHERE ordinal = 0" \
	-c "SELECT pg_sleep(3600)" > "$OUT/many_sessions_holder.log" 2>&1 &
holder=$!
sleep 5
echo "phase A: free device memory left to the sessions: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader | head -1)"
run_phase A
kill "$holder" 2>/dev/null
psql -X -qAt -d $db -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()" >/dev/null
sleep 2
echo "phase B: free device memory: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader | head -1)"
run_phase B

# ------------------------------------------- a server with geoacc preloaded
pdata=/tmp/many-sessions-preloaded
id pgrun >/dev/null 2>&1 || useradd -m pgrun
[ -f "$pdata/postmaster.pid" ] && su pgrun -c "$PGBIN/pg_ctl -D $pdata -m immediate stop" >/dev/null 2>&1
rm -rf "$pdata" && mkdir -p "$pdata" && chown pgrun "$pdata"
su pgrun -c "$PGBIN/initdb -D $pdata -A trust -U postgres" >/dev/null || exit 1
cat >> "$pdata/postgresql.conf" <<CONF
port = $preloaded_port
unix_socket_directories = '/tmp'
listen_addresses = ''
shared_preload_libraries = 'geoacc'
max_connections = 100
CONF
su pgrun -c "$PGBIN/pg_ctl -D $pdata -l /tmp/many-sessions-preloaded.log -w start" >/dev/null \
	|| { tail -20 /tmp/many-sessions-preloaded.log; exit 1; }
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null; su pgrun -c "$PGBIN/pg_ctl -D $pdata -m fast stop" >/dev/null 2>&1' EXIT
export PGPORT=$preloaded_port
echo
echo "## with geoacc preloaded (port $PGPORT): the memory budget"
setup_db || exit 1
reference || exit 1
psql -X -qAt -d $db -c "CREATE TABLE budget_seen (d int, c bigint, w bigint, f bigint, t bigint)"

set_budget "${budget_mb}MB"
run_phase C auto
budget C
[ "$(psql -X -qAt -d $db -c "SELECT sum(fallbacks) FROM ($(for s in $(seq "$sessions"); do printf 'SELECT * FROM stats_C_%s UNION ALL ' "$s"; done) SELECT * FROM stats_ref WHERE false) x")" -gt 0 ] \
	|| problem "phase C: no call fell back to the CPU: the budget was not exceeded"

run_phase D gpu
budget D
[ "$(psql -X -qAt -d $db -c "SELECT sum(waits) FROM ($(for s in $(seq "$sessions"); do printf 'SELECT * FROM stats_D_%s UNION ALL ' "$s"; done) SELECT * FROM stats_ref WHERE false) x")" -gt 0 ] \
	|| problem "phase D: no call waited: the budget was not exceeded"

set_budget -1
run_phase E auto
budget E

# F: a long GPU call (the TWED of two series of a million points, a 10^12-cell long pair) cancelled,
# then one whose backend is terminated, while it holds budget; then no reservation may stay
for how in cancel terminate; do
	psql -X -q -d $db -c "SET geoacc.device = gpu" -c "SELECT gpu_twed(a, ta, b, tb) FROM (SELECT
			array_agg(sin(i / 100.0)) AS a, array_agg(i::float8) AS ta, array_agg(cos(i / 70.0)) AS b,
			array_agg(i::float8) AS tb FROM generate_series(1, 1000000) i) s" \
		> "$OUT/many_sessions_F_$how.log" 2>&1 &
	victim=$!
	held=0
	for i in $(seq 300); do		# until the call holds budget (30 s at most)
		held=$(psql -X -qAt -d $db -c "SELECT coalesce(sum(gpu_memory_reserved), 0) FROM geoacc_backends()")
		[ "$held" -gt 0 ] && break
		sleep 0.1
	done
	sleep 1
	psql -X -qAt -d $db -c "SELECT pg_${how}_backend(pid) FROM geoacc_backends() WHERE gpu_memory_reserved > 0" \
		>/dev/null 2>&1
	wait "$victim"
	sleep 1
	echo "phase F: $how while holding $held bytes: $(tail -1 "$OUT/many_sessions_F_$how.log")"
	[ "$held" -gt 0 ] || echo "phase F: (the call ended before it was seen holding budget)"
	budget "F ($how)"
done

psql -X -d $db -c "SELECT pid, gpu_device, gpu_calls, cpu_calls, fallbacks, waits, gpu_memory_reserved FROM geoacc_backends() ORDER BY pid" \
	> "$OUT/many_sessions_backends.txt" 2>&1
echo
[ "$problems" = 0 ] && echo "many_sessions: all checks held" || echo "many_sessions: $problems checks FAILED"
exit $((problems > 0))

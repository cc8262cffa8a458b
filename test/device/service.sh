#!/bin/bash
# The GPU service against the per-backend path, on the GPU machine (geoacc built and installed, PG* set:
# test/device/run.sh service does that), in one run.  Two servers with geoacc preloaded, on the same data:
# "backends" (geoacc.service = off: a CUDA context per backend) and "service" (geoacc.service = gpu).
#
#   0. make installcheck-service: the pg_regress suites under geoacc.device = gpu through the service;
#   1. SESSIONS_HELD (default 64) sessions that each made a GPU call stay connected: the GPU memory of each
#      server's processes (nvidia-smi), and the number of processes with a context (the service: its 2 device
#      processes);
#   2. the first GPU call of a fresh session against the next one in the same session (median of 10);
#   3. gpu_density_raster over DENSITY_POINTS (default 10^7) points, 1024 x 1024 gaussian 7 and 4096 x 4096
#      gaussian 31, parallel workers allowed (8): the GPU against the CPU on each server, under pglz and lz4,
#      beside what reading the rows and writing the raster take without any raster made;
#   4. 16 sessions at once, each running every function under geoacc.device = gpu: results equal to the CPU's;
#   5. one warm session, each function at a benchmark size, on each server: the table before (backends) and
#      after (service).
#
# SERVICE_PARTS picks the parts (default "0 1 2 3 4 5"; the data are made whichever run).
# SERVICE_MODE=cpu runs the same on a machine without a GPU (the service in its cpu mode; the GPU columns are
# then the CPU's): a check of this script, not a measurement.  Prints markdown; the last line says whether
# every check held.
set -uo pipefail
mode=${SERVICE_MODE:-gpu}
held=${SESSIONS_HELD:-64}
parts=" ${SERVICE_PARTS:-0 1 2 3 4 5} "
has() { [[ $parts == *" $1 "* ]]; }
points=${DENSITY_POINTS:-10000000}
PGBIN=$(dirname "$(readlink -f "$(command -v postgres || echo /usr/lib/postgresql/15/bin/postgres)")")
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
db=geoacc_service
problems=0
problem() { echo "service: FAILED: $*"; problems=$((problems + 1)); }
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	user=pgrun
	id pgrun >/dev/null 2>&1 || useradd -m pgrun
fi
as_user() { if [ "$(id -u)" = 0 ]; then su "$user" -c "$*"; else sh -c "$*"; fi; }

# server NAME PORT SERVICE: a fresh server with geoacc preloaded and geoacc.service = SERVICE
server() {
	local data=/tmp/geoacc-service-$1
	[ -f "$data/postmaster.pid" ] && as_user "$PGBIN/pg_ctl -D $data -m immediate stop" >/dev/null 2>&1
	rm -rf "$data" && mkdir -p "$data" && chown "$user" "$data"
	as_user "$PGBIN/initdb -D $data -A trust -U postgres" >/dev/null || return 1
	cat >> "$data/postgresql.conf" <<CONF
port = $2
unix_socket_directories = '/tmp'
listen_addresses = ''
shared_preload_libraries = 'geoacc'
geoacc.service = $3
max_connections = $((held + 40))
max_worker_processes = 32
max_parallel_workers = 16
shared_buffers = '4GB'
CONF
	as_user "$PGBIN/pg_ctl -D $data -l /tmp/geoacc-service-$1.log -w start" >/dev/null \
		|| { tail -20 "/tmp/geoacc-service-$1.log"; return 1; }
}
stop_servers() {
	for name in backends service; do
		as_user "$PGBIN/pg_ctl -D /tmp/geoacc-service-$name -m fast stop" >/dev/null 2>&1
	done
}
trap 'kill $(jobs -p) 2>/dev/null; stop_servers' EXIT

server backends 5450 off || exit 1
server service 5451 "$mode" || exit 1
export PGUSER=postgres PGHOST=/tmp PGDATABASE=$db
for port in 5450 5451; do
	PGPORT=$port createdb $db || exit 1
	PGPORT=$port psql -X -q -v ON_ERROR_STOP=1 > "$OUT/service_setup_$port.log" 2>&1 <<SQL || { tail "$OUT/service_setup_$port.log"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION geoacc CASCADE;
\i test/data/load_ais.sql
SQL
	PGPORT=$port test/data/scale_tracks.sh "tracks_$points" "$points" > /dev/null || exit 1
	PGPORT=$port test/data/scale_tracks.sh tracks_1000000 1000000 > /dev/null || exit 1
done
echo "## the GPU service ($mode) against a CUDA context per backend"
echo
# gpu_memory PORT: "processes MiB" of the server's processes on the GPU
gpu_memory() {
	local pids
	command -v nvidia-smi >/dev/null || { echo "- -"; return; }
	pids=$(PGPORT=$1 psql -X -At -c "SELECT string_agg(pid::text, '|') FROM (SELECT pid FROM pg_stat_activity
		UNION SELECT unnest(pids) FROM geoacc_service()) p")
	nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits \
		| awk -F', ' -v re="^($pids)\$" '$1 ~ re {n++; m += $2} END {printf "%d %d", n, m}'
}

extent="'BOX(367000 3982000,649000 4528000)'::box2d"
suite_failures=0

if has 0; then
echo "### 0. the pg_regress suites with every call sent to the service (make installcheck-service)"
# without postgis_raster (not carried: test/device/raster-bundle.sh) the suites that need it are left out
service_regress=()
if ! PGPORT=5451 psql -XAtc "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis_raster'" postgres | grep -q 1; then
	service_regress=(SERVICE_REGRESS="$(make -s print-regress-gpu | tr ' ' '\n' | grep -vxE 'device|budget' | tr '\n' ' ') snapshot")
fi
PGPORT=5451 PGDATABASE= make -s installcheck-service "${service_regress[@]}" > "$OUT/service_installcheck.log" 2>&1 \
	|| { tail -20 "$OUT/service_installcheck.log"; problem "make installcheck-service"; }
grep -E "tests (passed|failed)" "$OUT/service_installcheck.log"
# the suites' calls that fail on purpose (bad input found in the core), apart from the later phases'
suite_failures=$(PGPORT=5451 psql -X -At -c "SELECT failed_calls FROM geoacc_service()")
echo "calls of the suites that failed (their tests of bad input): $suite_failures"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1
PGPORT=5451 psql -X -At -c "SELECT 'service: pids ' || pids::text || ', GPU ' || gpu || ', memory ' || pg_size_pretty(memory_size) FROM geoacc_service()"

fi
if has 1; then
echo
echo "### 1. $held connected sessions that each made a GPU call"
echo "| server | processes on the GPU | their GPU memory (MiB) |"
echo "| --- | --- | --- |"
for port in 5450 5451; do
	for s in $(seq "$held"); do
		PGPORT=$port psql -X -q -c "SET geoacc.device = gpu" \
			-c "SELECT gpu_twed(ARRAY[1, 2, 3]::float8[], NULL, ARRAY[1, 3, 2]::float8[], NULL, 1, 1)" \
			-c "SELECT pg_sleep(600)" > /dev/null 2>&1 &
	done
	sleep 20
	read -r n mib <<< "$(gpu_memory $port)"
	echo "| $([ $port = 5450 ] && echo backends || echo service) | $n | $mib |"
	[ $port = 5451 ] && [ "$mode" = gpu ] && [ "$n" != 2 ] && problem "$n processes of the service server hold a context (2 device processes expected)"
	PGPORT=$port psql -X -q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%'
		AND pid <> pg_backend_pid()" > /dev/null
	wait 2>/dev/null
done

fi
if has 2; then
echo
echo "### 2. the first GPU call of a fresh session (median of 10, ms)"
echo "| server | first call | second call | difference |"
echo "| --- | --- | --- | --- |"
call="SELECT gpu_twed(ARRAY[1, 2, 3]::float8[], NULL, ARRAY[1, 3, 2]::float8[], NULL, 1, 1)"
for port in 5450 5451; do
	for i in $(seq 10); do
		PGPORT=$port psql -X -q -At -c "SET geoacc.device = gpu" -c '\timing on' -c "$call" -c "$call" 2>&1 \
			| awk '/^Time:/ {printf "%s ", $2} END {print ""}'
	done > "$OUT/service_first_$port.txt"
	read -r first second <<< "$(sort -n -k1,1 "$OUT/service_first_$port.txt" | sed -n 5p | awk '{print $1}') $(sort -n -k2,2 "$OUT/service_first_$port.txt" | sed -n 5p | awk '{print $2}')"
	echo "| $([ $port = 5450 ] && echo backends || echo service) | $first | $second | $(awk -v a="$first" -v b="$second" 'BEGIN {printf "%.1f", a - b}') |"
	[ $port = 5451 ] && awk -v a="$first" -v b="$second" 'BEGIN {exit !(a - b > 10)}' \
		&& problem "the first call of a fresh session costs more than 10 ms more than the next"
done

fi
if has 3; then
echo
echo "### 3. gpu_density_raster over $points points, parallel workers allowed (ms, CREATE TABLE AS, the better of 2)"
echo "(under each default_toast_compression; CPU: geoacc.cpu_threads = 1, the default; CPU, N threads: every core"
echo "for the convolution; scan: the same rows read and detoasted with the same parallelism,"
echo "sum(ST_NPoints(traj)); write: the same raster, uncompressed, written again (CREATE TABLE AS from a copy kept"
echo "with STORAGE EXTERNAL: read, compressed, stored); (scan + write) / CPU is the best GPU / CPU any device could"
echo "reach while the rows are read through the executor and the raster is written; each device's partial states"
echo "and final step from their DEBUG1 lines)"
echo "| server | raster | compression | GPU | CPU | GPU / CPU | CPU, $(nproc) threads | scan | write | (scan + write) / CPU |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
: > "$OUT/service_density_final.txt"
for port in 5450 5451; do
	server=$([ $port = 5450 ] && echo backends || echo service)
	scan=$(PGPORT=$port psql -X -q -At -c "SET max_parallel_workers_per_gather = 8" -c '\timing on' \
		-c "SELECT sum(ST_NPoints(traj)) FROM tracks_$points" -c "SELECT sum(ST_NPoints(traj)) FROM tracks_$points" 2>&1 \
		| awk '/^Time:/ {print $2}' | sort -g | head -1)
	for shape in "1024 7" "4096 31"; do
		read -r side k <<< "$shape"
		raster="gpu_density_raster(traj, $extent, $side, $side, 'gaussian', $k)"
		PGPORT=$port psql -X -q -c "DROP TABLE IF EXISTS r, r_plain" -c "CREATE TABLE r AS SELECT $raster FROM tracks_$points" \
			-c "CREATE TABLE r_plain (r bytea)" -c "ALTER TABLE r_plain ALTER COLUMN r SET STORAGE EXTERNAL" \
			-c "INSERT INTO r_plain SELECT gpu_density_raster || ''::bytea FROM r" > /dev/null
		for compression in pglz lz4; do
			t=()
			# the CPU with geoacc.cpu_threads = 1 (the default) and = every core (its convolution on threads)
			for config in "gpu 1" "cpu 1" "cpu $(nproc)"; do
				read -r device threads <<< "$config"
				t+=("$(PGPORT=$port psql -X -q -At -c "SET geoacc.device = $device" -c "SET max_parallel_workers_per_gather = 8" \
					-c "SET geoacc.cpu_threads = $threads" \
					-c "SET default_toast_compression = $compression" -c "DROP TABLE IF EXISTS r2" -c '\timing on' \
					-c "CREATE TABLE r2 AS SELECT $raster FROM tracks_$points" -c "DROP TABLE r2" \
					-c "CREATE TABLE r2 AS SELECT $raster FROM tracks_$points" -c "DROP TABLE r2" 2>&1 \
					| awk '/^Time:/ {if (++n % 2) print $2}' | sort -g | head -1)")
			done
			write=$(PGPORT=$port psql -X -q -At -c "SET default_toast_compression = $compression" -c '\timing on' \
				-c "CREATE TABLE r2 AS TABLE r_plain" -c "DROP TABLE r2" -c "CREATE TABLE r2 AS TABLE r_plain" -c "DROP TABLE r2" 2>&1 \
				| awk '/^Time:/ {if (++n % 2) print $2}' | sort -g | head -1)
			echo "| $server | ${side}^2, $k | $compression | ${t[0]} | ${t[1]} | $(awk -v a="${t[0]}" -v b="${t[1]}" 'BEGIN {printf "%.2f", a / b}') | ${t[2]} | $scan | $write | $(awk -v a="$scan" -v w="$write" -v b="${t[1]}" 'BEGIN {printf "%.2f", (a + w) / b}') |"
		done
		for device in gpu cpu; do
			echo "$server, ${side}^2, $k, $device:" >> "$OUT/service_density_final.txt"
			PGPORT=$port psql -X -q -At -c "SET geoacc.device = $device" -c "SET max_parallel_workers_per_gather = 8" \
				-c "SET client_min_messages = debug1" -c "CREATE TABLE r2 AS SELECT $raster FROM tracks_$points" -c "DROP TABLE r2" 2>&1 \
				| grep -E '^DEBUG: +gpu_density_raster:' | sed 's/^DEBUG: */  /' >> "$OUT/service_density_final.txt"
		done
	done
done
cat "$OUT/service_density_final.txt"

fi
if has 4; then
echo
echo "### 4. 16 sessions at once, every function under geoacc.device = gpu, on the service"
session_sql() {	# session_sql SUFFIX DEVICE
	cat <<SQL
SET geoacc.device = $2;
SET geoacc.gpu_threshold = 0;
CREATE TABLE simplify_$1 AS SELECT id, gpu_dp_simplify(traj, 10) OVER () AS g FROM ais_tracks;
CREATE TABLE density_$1 AS SELECT gpu_density_raster(traj, $extent, 2048, 2048) AS r FROM tracks_1000000;
CREATE TABLE twed_$1 AS SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks WHERE id % 4 = 0', NULL, 0.001, 1);
CREATE TABLE join_$1 AS SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks', NULL, 100);
CREATE TABLE tracks_$1 AS SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 5);
SQL
}
export PGPORT=5451
session_sql ref cpu | psql -X -q -v ON_ERROR_STOP=1 > "$OUT/service_ref.log" 2>&1 || problem "the CPU reference failed"
pids=()
for s in $(seq 16); do
	session_sql "s$s" gpu | psql -X -q -v ON_ERROR_STOP=1 > "$OUT/service_session_$s.log" 2>&1 &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
[ "$failed" = 0 ] || problem "$failed of 16 sessions failed (service_session_*.log)"
for kind in simplify density twed join tracks; do
	differing=0
	for s in $(seq 16); do
		n=$(psql -X -qAt -c "SELECT count(*) FROM ((TABLE ${kind}_s$s EXCEPT ALL TABLE ${kind}_ref)
			UNION ALL (TABLE ${kind}_ref EXCEPT ALL TABLE ${kind}_s$s)) d" 2>/dev/null || echo missing)
		[ "$n" = 0 ] || differing=$((differing + 1))
	done
	echo "- $kind: $differing of 16 sessions differ from the CPU"
	[ "$differing" = 0 ] || problem "$kind differs from the CPU in $differing sessions"
done
psql -X -At -c "SELECT '- the service: ' || calls || ' calls, ' || failed_calls || ' failed (' || $suite_failures
	|| ' of them in the suites), ' || lost_calls || ' lost, memory in use ' || memory_used || ', peak '
	|| pg_size_pretty(memory_peak) FROM geoacc_service()"

fi
if has 5; then
echo
echo "### 5. one warm session, geoacc.device = gpu (ms, CREATE TABLE AS; the better of 3)"
: > "$OUT/service_stages.txt"
echo "| function | backends | service | service / backends |"
echo "| --- | --- | --- | --- |"
bench() {	# bench NAME SQL: once to warm up, then the best of 3
	local t=()
	for port in 5450 5451; do
		t+=("$(PGPORT=$port psql -X -q -At -c "SET geoacc.device = gpu" -c "CREATE TABLE b AS $2" -c "DROP TABLE b" \
			-c '\timing on' -c "CREATE TABLE b AS $2" -c "DROP TABLE b" -c "CREATE TABLE b AS $2" -c "DROP TABLE b" \
			-c "CREATE TABLE b AS $2" -c "DROP TABLE b" 2>&1 | awk '/^Time:/ {print $2}' | awk 'NR % 2 == 1' \
			| sort -n | head -1)")
	done
	echo "| $1 | ${t[0]} | ${t[1]} | $(awk -v a="${t[0]}" -v b="${t[1]}" 'BEGIN {printf "%.2f", b / a}') |"
	# where the time went, once more on each server (the DEBUG1 stages), printed after the table
	for port in 5450 5451; do
		echo "$1, $([ $port = 5450 ] && echo backends || echo service):"
		PGPORT=$port psql -X -q -At -c "SET geoacc.device = gpu" -c "SET client_min_messages = debug1" \
			-c "CREATE TABLE b AS $2" -c "DROP TABLE b" 2>&1 | grep -E '^DEBUG: +gpu_' | sed 's/^DEBUG: */  /'
	done >> "$OUT/service_stages.txt"
}
bench "gpu_dp_simplify, 10^6 points" "SELECT id, gpu_dp_simplify(traj, 10) OVER () FROM tracks_1000000"
bench "gpu_density_raster, 10^6 points, 1024^2" "SELECT gpu_density_raster(traj, $extent, 1024, 1024) FROM tracks_1000000"
bench "gpu_twed_matrix, AIS tracks" "SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks', NULL, 0.001, 1)"
bench "gpu_segment_join, 10^6 points at 100 m" "SELECT * FROM gpu_segment_join('SELECT id, traj FROM tracks_1000000', NULL, 100)"
bench "gpu_make_trajectories, AIS fixes" "SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 5)"

echo
echo "where the time went (DEBUG1, one more run each):"
cat "$OUT/service_stages.txt"
fi
echo
[ "$problems" = 0 ] && echo "service: every check held" || echo "service: $problems checks failed"
[ "$problems" = 0 ]

#!/bin/bash
# Benchmark of gpu_dp_simplify on the GPU machine (from the repository root,
# PG* variables set, geoacc installed; see test/device/README.md).
#
# Scaled real AIS tracks (test/data/scale_tracks.sh) of 10^6, 10^7 and, if
# the smaller sizes left time, 10^8 points (SIMPLIFY_MAX_POINTS=100000000
# forces it, a smaller value skips it); tolerances 1 m and 10 m.  For each:
#   - decode-only, sum(ST_NPoints(traj)): with PostgreSQL's parallel workers
#     and in one process;
#   - PostGIS: sum(ST_NPoints(ST_Simplify(traj, tol))), parallel workers on;
#   - gpu_dp_simplify(traj, tol) OVER () with geoacc.device = cpu and = gpu
#     (a window function runs in one process);
#   - compute-only time: what gpu_dp_simplify reports at DEBUG1 (GPU: the
#     kernels and the host turnarounds between rounds, no transfers; CPU:
#     the CPU twin), and the points per second it means.
# The CPU path is skipped at 10^8 points.  Prints a markdown table.
# SIMPLIFY_SIZES and SIMPLIFY_DB override the sizes and the database.
set -euo pipefail
db=${SIMPLIFY_DB:-geoacc_bench}
sizes=${SIMPLIFY_SIZES:-1000000 10000000 100000000}
budget_s=${SIMPLIFY_BUDGET_S:-90}
max_points=${SIMPLIFY_MAX_POINTS:-}
timeout=${SIMPLIFY_TIMEOUT:-120s}
start=$SECONDS

psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb $db
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -qAt -c "SELECT to_regclass('ais_tracks') IS NOT NULL")" != t ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql
fi

# run DEVICE SQL: "milliseconds|result|DEBUG1 line" of SQL in a fresh
# session (on the GPU after a warm-up call, so CUDA start-up is not timed)
run() {
	local device=$1 sql=$2 warmup="SELECT 1"
	[ "$device" = gpu ] && warmup="SELECT count(s) FROM (SELECT gpu_dp_simplify(traj, 1) OVER () AS s FROM ais_tracks LIMIT 3) w"
	{ psql -X -v ON_ERROR_STOP=1 -c "SET work_mem = '1GB'" -c "SET geoacc.device = $device" \
		-c "SET statement_timeout = '$timeout'" -c "$warmup" -c "SET client_min_messages = debug1" \
		-c '\timing on' -c "$sql" 2>&1 || true; } |
		awk '/^Time:/ { ms = $2 } /gpu_dp_simplify:/ { sub(/^.*gpu_dp_simplify: /, ""); debug = $0 }
			/^ *[0-9]+ *$/ { result = $1 } /^ERROR:/ { ms = "failed"; debug = $0 }
			/canceling statement due to statement timeout/ { ms = "timeout" }
			END { printf "%s|%s|%s\n", ms, result, debug }'
}
field() { echo "$1" | cut -d'|' -f"$2"; }
seconds() {
	case $1 in
		timeout) echo "> $timeout" ;;
		skipped | failed) echo "$1" ;;
		'') echo failed ;;
		*) awk -v ms="$1" 'BEGIN { if (ms < 1000) printf "%.1f ms", ms; else printf "%.2f s", ms / 1000 }' ;;
	esac
}
compute_ms() { field "$1" 3 | sed -n 's/.*: compute \([0-9.]*\) ms.*/\1/p'; }
rate() { awk -v n="$1" -v ms="$2" 'BEGIN { if (ms > 0) printf "%.2e", n / ms * 1000; else printf "-" }'; }

rows=()
for points in $sizes; do
	if [ "$points" = 100000000 ]; then
		if [ -n "$max_points" ] && [ "$max_points" -lt "$points" ]; then
			echo "10^8 points skipped (SIMPLIFY_MAX_POINTS=$max_points)"
			break
		elif [ -z "$max_points" ] && [ $((SECONDS - start)) -gt "$budget_s" ]; then
			echo "10^8 points skipped: the smaller sizes took $((SECONDS - start)) s (budget $budget_s s)"
			break
		fi
	fi
	table=simplify_bench_$points
	test/data/scale_tracks.sh $table $points 7
	n=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj)) FROM $table")

	run cpu "SELECT sum(ST_NPoints(traj)) FROM $table" > /dev/null	# warm the cache
	decode=$(run cpu "SELECT sum(ST_NPoints(traj)) FROM $table")
	decode1=$(run cpu "SET max_parallel_workers_per_gather = 0; SELECT sum(ST_NPoints(traj)) FROM $table")
	for tol in 1 10; do
		simplify="SELECT sum(ST_NPoints(s)) FROM (SELECT gpu_dp_simplify(traj, $tol) OVER () AS s FROM $table) x"
		postgis=$(run cpu "SELECT sum(ST_NPoints(ST_Simplify(traj, $tol))) FROM $table")
		cpu="skipped||"
		[ "$points" -lt 100000000 ] && cpu=$(run cpu "$simplify")
		gpu=$(run gpu "$simplify")
		echo "$n points, tolerance $tol: decode $decode; decode, 1 process $decode1; ST_Simplify $postgis; CPU $cpu; GPU $gpu"
		cpu_ms=$(compute_ms "$cpu")
		gpu_ms=$(compute_ms "$gpu")
		rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |' \
			"$n" "$tol" "$(seconds "$(field "$decode" 1)")" "$(seconds "$(field "$decode1" 1)")" \
			"$(seconds "$(field "$postgis" 1)")" "$(seconds "$(field "$cpu" 1)")" "$(seconds "$(field "$gpu" 1)")" \
			"${cpu_ms:--}" "$(rate "$n" "${cpu_ms:-0}")" "${gpu_ms:--}" "$(rate "$n" "${gpu_ms:-0}")" \
			"$(field "$postgis" 2)" "$(field "$gpu" 2)")")
	done
	psql -X -q -c "DROP TABLE $table"
done

echo
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
echo "gpu_dp_simplify: ${gpu_name:-no GPU}, $(nproc) CPU cores," \
	"$(date -u +%Y-%m-%d), $((SECONDS - start)) s in all"
echo
echo "| points | tolerance (m) | decode-only, parallel | decode-only, 1 process | ST_Simplify, parallel | gpu_dp_simplify, CPU | gpu_dp_simplify, GPU | CPU twin compute (ms) | CPU twin points/s | GPU compute (ms) | GPU kernel points/s | points after: ST_Simplify / gpu_dp_simplify |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for r in "${rows[@]}"; do echo "$r"; done
echo
echo "(ST_Simplify returns NULL where a track collapses to two vertices with the same XY; gpu_dp_simplify keeps"
echo "those two, so its point count is higher by 2 per such track.)"

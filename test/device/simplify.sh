#!/bin/bash
# Benchmark of gpu_dp_simplify on the GPU machine (from the repository root, PG* variables set, geoacc
# installed; see test/device/README.md), on the job a user runs: every simplified track written,
# CREATE UNLOGGED TABLE ... AS SELECT id, <simplify> FROM tracks (so parallel workers cannot skip moving
# the results, as a sum(ST_NPoints(...)) lets them).
#
# Scaled real AIS tracks (test/data/scale_tracks.sh) of 10^7 points (SIMPLIFY_SIZES, e.g. "10000000
# 100000000"), tolerance 10 m (SIMPLIFY_TOLERANCE), one run each:
#   - ST_Simplify in one process, with the default parallel settings, and with 8 workers;
#   - gpu_dp_simplify(traj, tol) OVER () with geoacc.device = gpu and = cpu (a window function runs in
#     one process), and the compute-only time it reports at DEBUG1 (GPU: the kernels and the host
#     turnarounds between rounds, no transfers; CPU: the CPU twin), with the rest of its DEBUG1 line: rows
#     fetched from the window, detoasted, parsed and copied, results built, and all the time spent in the
#     function (the statement's time less that is the window's machinery and writing the table);
#   - the results compared: rows, points and NULL (collapsed) tracks.
# Prints a markdown table.  SIMPLIFY_DB names the database.
set -uo pipefail
db=${SIMPLIFY_DB:-geoacc_bench}
sizes=${SIMPLIFY_SIZES:-10000000}
tol=${SIMPLIFY_TOLERANCE:-10}
timeout=${SIMPLIFY_TIMEOUT:-300s}
status=0
start=$SECONDS

psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb $db
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -qAt -c "SELECT to_regclass('ais_tracks') IS NOT NULL")" != t ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql
fi

# run DEVICE SETTINGS SQL: "milliseconds|DEBUG1 line" of SQL in a fresh session (on the GPU after a
# warm-up call, so CUDA start-up is not timed)
run() {
	local warmup="SELECT 1"
	[ "$1" = gpu ] && warmup="SELECT count(s) FROM (SELECT gpu_dp_simplify(traj, 1) OVER () AS s FROM ais_tracks LIMIT 3) w"
	{ psql -X -v ON_ERROR_STOP=1 -c "SET work_mem = '1GB'" -c "SET geoacc.device = $1" -c "$warmup" -c "$2" \
		-c "SET statement_timeout = '$timeout'" -c "SET client_min_messages = debug1" -c '\timing on' \
		-c "$3" 2>&1 || true; } |
		awk '/^Time:/ { ms = $2 } /gpu_dp_simplify:/ { sub(/^.*gpu_dp_simplify: /, ""); debug = $0 }
			/^ERROR:/ { ms = "failed"; debug = $0 }
			/canceling statement due to statement timeout/ { ms = "timeout" }
			END { printf "%s|%s\n", ms, debug }'
}
field() { echo "$1" | cut -d'|' -f"$2"; }
seconds() {
	case $1 in
		timeout) echo "> $timeout" ;;
		failed | '') echo failed ;;
		*) awk -v ms="$1" 'BEGIN { printf "%.2f s", ms / 1000 }' ;;
	esac
}
compute_ms() { field "$1" 2 | sed -n 's/.*: compute \([0-9.]*\) ms.*/\1/p'; }
# the window function's stages (DEBUG1): fetch / detoast / parse / compute / transfers / results / in the function
stages() { field "$1" 2 | sed -n 's/.*compute \([0-9.]*\) ms, transfers \([0-9.]*\) ms; fetch \([0-9.]*\) ms, detoast \([0-9.]*\) ms, parse \([0-9.]*\) ms, results \([0-9.]*\) ms, in the function \([0-9.]*\) ms.*/\3 \/ \4 \/ \5 \/ \1 \/ \2 \/ \6 \/ \7/p'; }
summary() {		# summary RUN: "-" when the run failed
	echo "$(field "$1" 1)" | grep -qE '^[0-9.]+$' || { echo "-"; return; }
	psql -X -qAt -c "SELECT count(*) || ' rows, ' || coalesce(sum(ST_NPoints(traj)), 0) || ' points, '
		|| count(*) FILTER (WHERE traj IS NULL) || ' NULL' FROM simplify_result" 2>/dev/null || echo "-"
}

rows=()
for points in $sizes; do
	table=simplify_bench_$points
	test/data/scale_tracks.sh $table $points 7
	n=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj)) FROM $table")
	psql -X -q -c "SELECT count(*) FROM $table" > /dev/null		# warm the cache
	ctas="DROP TABLE IF EXISTS simplify_result; CREATE UNLOGGED TABLE simplify_result AS SELECT id,"
	reference=""
	for form in "ST_Simplify, one process|cpu|SET max_parallel_workers_per_gather = 0|ST_Simplify(traj, $tol) AS traj FROM $table" \
		"ST_Simplify, default parallel settings|cpu|SELECT 1|ST_Simplify(traj, $tol) AS traj FROM $table" \
		"ST_Simplify, 8 workers|cpu|SET max_parallel_workers_per_gather = 8; SET max_parallel_workers = 8; ALTER TABLE $table SET (parallel_workers = 8)|ST_Simplify(traj, $tol) AS traj FROM $table" \
		"gpu_dp_simplify ... OVER (), GPU|gpu|SELECT 1|gpu_dp_simplify(traj, $tol) OVER () AS traj FROM $table" \
		"gpu_dp_simplify ... OVER (), CPU twin|cpu|SELECT 1|gpu_dp_simplify(traj, $tol) OVER () AS traj FROM $table"; do
		IFS='|' read -r name device settings select <<< "$form"
		r=$(run "$device" "$settings" "$ctas $select")
		psql -X -q -c "ALTER TABLE $table RESET (parallel_workers)"
		result=$(summary "$r")
		[ -z "$reference" ] && [ "$result" != "-" ] && reference=$result
		[ "$result" = "$reference" ] || [ "$result" = "-" ] || { status=1; echo "DIFFERENT: $name gives $result, first $reference"; }
		ms=$(compute_ms "$r")
		st=$(stages "$r")
		rows+=("| $n | $tol | $name | $(seconds "$(field "$r" 1)") | ${ms:--} | ${st:--} | $result |")
		echo "$n points, $name: $r ($result)"
	done
	psql -X -q -c "DROP TABLE IF EXISTS simplify_result, $table"
done

echo
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
echo "gpu_dp_simplify as CTAS: ${gpu_name:-no GPU}, $(nproc) CPU cores, $(date -u +%Y-%m-%d), $((SECONDS - start)) s in all"
echo
echo "| points | tolerance (m) | CREATE UNLOGGED TABLE ... AS SELECT id, ... | time | compute inside (DEBUG1, ms) | the window function, ms: fetch / detoast / parse / compute / transfers / results / all in it | result |"
echo "| ---: | ---: | --- | ---: | ---: | --- | --- |"
for r in "${rows[@]}"; do echo "$r"; done
exit $status

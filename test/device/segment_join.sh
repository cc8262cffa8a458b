#!/bin/bash
# Tests and benchmark of gpu_segment_join on the GPU machine, from the repository root after geoacc is built
# (CUDA_ARCHS=90) and installed and PostgreSQL is running with PG* set (test/device/run.sh does that; it
# also runs the whole regress suite with geoacc.device = gpu and every core test):
#
#   1. Core tests of the segment join, GPU against CPU to the bit (fresh seed, printed), and the
#      segment_join regress test again with geoacc.device = gpu.
#   2. Data: the real AIS tracks replicated by test/data/scale_tracks.sh to about 10^5, 10^6 and 10^7
#      segments (SEGMENT_JOIN_SIZES), self-joined (the same number of segments a side).
#   3. Core level (test/bench/segment_join_bench, no server): every method on the GPU and the CPU twin
#      (the CPU up to 10^6 segments) at 10 m, 100 m and 1 km: index build, candidate search, exact test,
#      output, rows and candidates per second; every run of a distance must return the same rows.
#   4. End to end in PostgreSQL: CREATE TABLE ... AS SELECT * FROM gpu_segment_join(...) with
#      geoacc.device = gpu for every method, = cpu for auto (up to 10^6 segments), each the median of
#      SEGMENT_JOIN_REPEAT runs in fresh sessions; and what a PostGIS user writes today: one row per segment
#      as a 2-point LINESTRING M with a GiST index, ST_DWithin then ST_CPAWithin, parallel workers allowed,
#      at the sizes where it finishes within SEGMENT_JOIN_POSTGIS_TIMEOUT (larger sizes are skipped once it
#      did not).
#   5. Against PostGIS: for each size and distance, the GPU call (`auto`, else the first GPU run) end to end,
#      the PostGIS query of the same run, their ratio, and where the GPU call's time went (its DEBUG1 line:
#      reading the inner query, ordering, segments, planning, device memory, upload, index, search, test,
#      output, tuples, release; the rest of the statement is writing the table), with its device
#      allocations and waits.
#
# Knobs: SEGMENT_JOIN_METHODS (core level, comma-separated), SEGMENT_JOIN_SQL_RUNS (end to end, device:method
# words), SEGMENT_JOIN_REPEAT (runs of each, default 3), SEGMENT_JOIN_POSTGIS=0 (no PostGIS query),
# SEGMENT_JOIN_CPU_MAX (larger sizes skip the CPU).  The 500x target at 10^5 segments:
#   SEGMENT_JOIN_SIZES=100000 SEGMENT_JOIN_REPEAT=5 SEGMENT_JOIN_POSTGIS_TIMEOUT=150s test/device/segment_join.sh
#
# Prints markdown tables; logs of each part go to $OUT (default /tmp/geoacc-out).
set -uo pipefail
db=${SEGMENT_JOIN_DB:-geoacc_bench}
sizes=${SEGMENT_JOIN_SIZES:-100000 1000000 10000000}
distances=${SEGMENT_JOIN_DISTANCES:-10 100 1000}
timeout=${SEGMENT_JOIN_TIMEOUT:-120s}
postgis_timeout=${SEGMENT_JOIN_POSTGIS_TIMEOUT:-120s}
cpu_max=${SEGMENT_JOIN_CPU_MAX:-1000000}
core=${SEGMENT_JOIN_CORE:-1}	# 0: leave out the core-level runs
core_methods=${SEGMENT_JOIN_METHODS:-spatial,temporal,spatiotemporal,auto}
sql_runs=${SEGMENT_JOIN_SQL_RUNS:-gpu:spatial gpu:temporal gpu:spatiotemporal gpu:auto cpu:auto}
postgis=${SEGMENT_JOIN_POSTGIS:-1}	# 0: leave out the PostGIS query
repeat=${SEGMENT_JOIN_REPEAT:-3}
export SEGMENT_JOIN_RUN_LIMIT_S=${SEGMENT_JOIN_RUN_LIMIT_S:-60}
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

echo "segment_join: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

echo
echo "## segment_join: core tests (GPU against CPU) and the regress test with geoacc.device = gpu"
make -s test/core/geoacc_core_tests test/bench/segment_join_bench || exit 1
test/core/geoacc_core_tests segment_join > "$OUT/segment_join_core_tests.log" 2>&1 || status=1
grep -E '^(geoacc core tests|FAIL|[0-9]+ passed)' "$OUT/segment_join_core_tests.log"
PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup ais segment_join" \
	> "$OUT/segment_join_installcheck_gpu.log" 2>&1 || { status=1; cat regression.diffs 2>/dev/null | head -60; }
grep -E 'tests passed|failed' "$OUT/segment_join_installcheck_gpu.log"

psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb "$db"
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -qAt -c "SELECT to_regclass('ais_tracks') IS NOT NULL")" != t ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql
fi

# run DEVICE SQL [TIMEOUT]: "milliseconds|rows|DEBUG1 line" of SQL in a fresh session; a small join first
# starts the device, so CUDA start-up is not timed, and the result tables of earlier runs are dropped untimed
run() {
	{ psql -X -v ON_ERROR_STOP=1 -c "SET work_mem = '1GB'" -c "SET geoacc.device = $1" \
		-c "SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM ais_tracks WHERE id < 20', NULL, 100)" \
		-c "DROP TABLE IF EXISTS sj_result, pg_result" \
		-c "SET statement_timeout = '${3:-$timeout}'" -c "SET client_min_messages = debug1" \
		-c '\timing on' -c "$2" 2>&1 || true; } |
		awk '/^Time:/ { ms = $2 } /gpu_segment_join:/ { sub(/^.*gpu_segment_join: /, ""); debug = $0 }
			/^SELECT [0-9]+/ { rows = $2 } /^ERROR:/ { ms = "failed"; debug = $0 }
			/canceling statement due to statement timeout/ { ms = "timeout" }
			END { printf "%s|%s|%s\n", ms, rows, debug }'
}
# median DEVICE SQL [TIMEOUT]: run() `repeat` times; the run of the median time (a failed one if any failed)
median() {
	local runs=() k r
	for ((k = 0; k < repeat; k++)); do runs+=("$(run "$@")"); done
	for r in "${runs[@]}"; do
		[[ $(field "$r" 1) =~ ^[0-9.]+$ ]] || { echo "$r"; return; }
	done
	printf '%s\n' "${runs[@]}" | sort -t'|' -k1,1g | sed -n "$(((repeat + 1) / 2))p"
}
field() { echo "$1" | cut -d'|' -f"$2"; }
# stages DEBUG: the stage times of a DEBUG1 line as table cells, then its device allocations and waits
stages() {
	echo "$1" | awk '{
		n = split("read prepare segments plan device_memory upload index search refine output tuples release total", names, " ")
		line = $0; gsub(/device memory/, "device_memory", line)
		out = ""
		for (i = 1; i <= n; i++) {
			v = ""
			if (match(line, names[i] " [0-9.]+ ms")) { split(substr(line, RSTART, RLENGTH), f, " "); v = f[2] }
			out = out v " | "
		}
		a = s = ""
		if (match(line, /[0-9]+ device allocations/)) { split(substr(line, RSTART, RLENGTH), f, " "); a = f[1] }
		if (match(line, /[0-9]+ syncs/)) { split(substr(line, RSTART, RLENGTH), f, " "); s = f[1] }
		printf "%s%s | %s", out, a, s }'
}
seconds() {
	case $1 in
		timeout) echo "> $2" ;;
		failed | '') echo failed ;;
		*) awk -v ms="$1" 'BEGIN { if (ms < 1000) printf "%.1f ms", ms; else printf "%.2f s", ms / 1000 }' ;;
	esac
}

core_rows=()
sql_rows=()
target_rows=()
postgis_done=yes
for size in $sizes; do
	table=segment_join_$size
	# about `size` segments: the scaled tracks hold about 120 points each
	points=$((size + size / 120))
	test/data/scale_tracks.sh "$table" "$points" 7 >> "$OUT/segment_join_data.log" 2>&1 || { status=1; continue; }
	segments=$(psql -X -qAt -c "SELECT sum(ST_NPoints(traj) - 1) FROM $table")
	echo "$table: $segments segments" >> "$OUT/segment_join_data.log"

	# core level
	if [ "$core" = 1 ]; then
		psql -X -q -c "COPY (SELECT id, ST_X(g), ST_Y(g), ST_M(g) FROM $table, ST_DumpPoints(traj) d(path, g)
			ORDER BY id, path) TO STDOUT" > "$work/points.tsv"
		timeout 900 test/bench/segment_join_bench "$work/points.tsv" "$(echo $distances | tr ' ' ,)" \
			"$core_methods" gpu,cpu "$cpu_max" > "$work/core.md" 2>> "$OUT/segment_join_core.log" \
			|| status=1
		cat "$work/core.md" >> "$OUT/segment_join_core.log"
		core_rows+=("$(tail -n +3 "$work/core.md")")
	fi

	# end to end
	for d in $distances; do
		reference=""
		target=""
		for device_method in $sql_runs; do
			device=${device_method%%:*}
			method=${device_method#*:}
			if [ "$device" = cpu ] && [ "$segments" -gt "$cpu_max" ]; then
				sql_rows+=("| $segments | $d | $device | $method | skipped | | | |")
				continue
			fi
			r=$(median "$device" "CREATE TABLE sj_result AS
				SELECT * FROM gpu_segment_join('SELECT id, traj FROM $table', NULL, $d, '$method')")
			if [ "$device" = gpu ] && { [ -z "$target" ] || [ "$method" = auto ]; }; then
				target=$r
			fi
			rows=$(field "$r" 2)
			if [ -z "$rows" ]; then
				same="-"
				status=1
			else
				[ -z "$reference" ] && reference=$rows
				same=$([ "$rows" = "$reference" ] && echo yes || echo NO)
				[ "$same" = NO ] && status=1
			fi
			sql_rows+=("| $segments | $d | $device | $method | $(seconds "$(field "$r" 1)" "$timeout") | $rows | $same | $(field "$r" 3) |")
			echo "${sql_rows[-1]}" >> "$OUT/segment_join_sql.md"	# as it goes: a run cut short keeps its rows
		done

		# PostGIS: one row per segment, GiST, ST_DWithin then ST_CPAWithin, parallel workers allowed
		if [ "$postgis" = 0 ]; then
			:
		elif [ "$postgis_done" = yes ]; then
			if [ "$(psql -X -qAt -c "SELECT to_regclass('${table}_segments') IS NOT NULL")" != t ]; then
				psql -X -q -v ON_ERROR_STOP=1 -c "CREATE UNLOGGED TABLE ${table}_segments AS
					SELECT id, k, ST_MakeLine(ST_PointN(traj, k), ST_PointN(traj, k + 1)) AS seg
					FROM $table, generate_series(1, ST_NPoints(traj) - 1) k" \
					-c "CREATE INDEX ON ${table}_segments USING gist (seg)" -c "ANALYZE ${table}_segments" \
					>> "$OUT/segment_join_data.log" 2>&1
			fi
			r=$(run cpu "SET max_parallel_workers_per_gather = $(nproc); SET parallel_setup_cost = 0;
				CREATE TABLE pg_result AS
				SELECT a.id AS a_id, a.k AS a_seg, b.id AS b_id, b.k AS b_seg, ST_DistanceCPA(a.seg, b.seg) AS cpa_distance
				FROM ${table}_segments a JOIN ${table}_segments b ON a.id < b.id AND ST_DWithin(a.seg, b.seg, $d)
				WHERE ST_CPAWithin(a.seg, b.seg, $d)" "$postgis_timeout")
			ms=$(field "$r" 1)
			sql_rows+=("| $segments | $d | PostGIS | GiST, ST_DWithin, ST_CPAWithin | $(seconds "$ms" "$postgis_timeout") | $(field "$r" 2) | $([ -n "$reference" ] && [ "$(field "$r" 2)" = "$reference" ] && echo yes || echo "-") | |")
			echo "${sql_rows[-1]}" >> "$OUT/segment_join_sql.md"
			[ "$ms" = timeout ] && postgis_done=no
			if [ -n "$target" ]; then
				gpu_ms=$(field "$target" 1)
				ratio=$(awk -v g="$gpu_ms" -v p="$ms" -v t="${postgis_timeout%s}" 'BEGIN {
					if (g !~ /^[0-9.]+$/) print "-"; else if (p == "timeout") printf "> %.0fx", t * 1000 / g;
					else if (p ~ /^[0-9.]+$/) printf "%.0fx", p / g; else print "-" }')
				target_rows+=("| $segments | $d | $(field "$target" 2) | $(seconds "$gpu_ms" "$timeout") | $(seconds "$ms" "$postgis_timeout") | $ratio | $(stages "$(field "$target" 3)") |")
				echo "${target_rows[-1]}" >> "$OUT/segment_join_target.md"
			fi
		else
			sql_rows+=("| $segments | $d | PostGIS | GiST, ST_DWithin, ST_CPAWithin | skipped (timed out at a smaller size) | | | |")
		fi
	done
	psql -X -q -c "DROP TABLE IF EXISTS sj_result, pg_result"
done

echo
echo "## segment_join: core level (self-join; the same rows from every run of a distance)"
echo
head -2 "$work/core.md" 2>/dev/null
for r in "${core_rows[@]}"; do echo "$r"; done
echo
echo "## segment_join: end to end in PostgreSQL (CREATE TABLE ... AS, one backend; PostGIS with parallel workers)"
echo
echo "| segments | distance | device | method | time | rows | same rows | inside (DEBUG1) |"
echo "| ---: | ---: | --- | --- | ---: | ---: | --- | --- |"
for r in "${sql_rows[@]}"; do echo "$r"; done
if [ "${#target_rows[@]}" -gt 0 ]; then
	echo
	echo "## segment_join: the GPU call against PostGIS end to end, and where the call's time went (ms)"
	echo
	echo "| segments | distance | rows | GPU | PostGIS | PostGIS / GPU | read | prepare | segments | plan | device memory | upload | index | search | test | output | tuples | release | in the function | device allocations | syncs |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in "${target_rows[@]}"; do echo "$r"; done
fi
exit $status

#!/bin/bash
# Tests and benchmark of gpu_make_trajectories on the GPU machine, from the repository root after geoacc is
# built (CUDA_ARCHS=90) and installed and PostgreSQL is running with PG* set (test/device/run.sh does that;
# it also runs the whole regress suite with geoacc.device = gpu and every core test):
#
#   1. Core tests of make_trajectories, GPU against CPU to the bit (fresh seed, printed), and the
#      make_trajectories regress test again with geoacc.device = gpu (the SQL pipeline's rows to the bit,
#      the whole-US day, a 1 MB and a 3 MB device memory cap: sorted runs merged on the host).
#   2. Data: the real raw AIS fixes of test/data/load_ais.sql replicated by test/data/scale_fixes.sh to
#      10^7 fixes (MAKE_TRAJECTORIES_SIZES; 10^8 as well with MAKE_TRAJECTORIES_1E8=1, about 5 more
#      minutes): (object_id bigint, t timestamptz, geom geometry(Point, 32618)), replicas of the feed in
#      time order, so the rows are sorted neither by vessel nor by time.
#   3. One run each, as CREATE UNLOGGED TABLE ... AS, gap 30 minutes, tolerance 10 m, work_mem 1GB:
#      the SQL pipeline a user writes (DISTINCT ON, lag() and a running sum over windows, ST_MakeLine
#      ... ORDER BY, ST_Simplify) with the default parallel settings and with 8 workers, each cut off
#      at MAKE_TRAJECTORIES_SQL_TIMEOUT (then the table says "> timeout"; MAKE_TRAJECTORIES_SQL_RUNS="8"
#      runs only the second, MAKE_TRAJECTORIES_CPU=0 leaves out the CPU twin, MAKE_TRAJECTORIES_CHECKS=0
#      step 1); gpu_make_trajectories with
#      geoacc.device = gpu and = cpu, on the GPU also with parallel_setup_cost = parallel_tuple_cost = 0
#      (the inner query's scan then runs in parallel workers), and where its time went (its DEBUG1 line);
#      the results compared (rows, points, NULL trajectories).
#   4. The simplify benchmark as CTAS at 10^7 points (test/device/simplify.sh), unless
#      MAKE_TRAJECTORIES_SIMPLIFY=0.
#
# Prints markdown tables; logs go to $OUT (default /tmp/geoacc-out).  About 4 minutes at 10^7 fixes.
set -uo pipefail
db=${MAKE_TRAJECTORIES_DB:-geoacc_bench}
sizes=${MAKE_TRAJECTORIES_SIZES:-10000000}
[ "${MAKE_TRAJECTORIES_1E8:-0}" = 1 ] && sizes="$sizes 100000000"
sql_timeout=${MAKE_TRAJECTORIES_SQL_TIMEOUT:-300s}
sql_runs=${MAKE_TRAJECTORIES_SQL_RUNS:-"default 8"}	# which SQL pipelines: default parallel settings, 8 workers
checks=${MAKE_TRAJECTORIES_CHECKS:-1}	# 0: leave out the core and regress tests (step 1)
cpu_runs=${MAKE_TRAJECTORIES_CPU:-1}	# 0: leave out the CPU twin
timeout=${MAKE_TRAJECTORIES_TIMEOUT:-300s}
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
status=0
start=$SECONDS

echo "make_trajectories: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 ||
	echo 'no GPU'), $(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

make -s test/core/geoacc_core_tests test/data/scale_fixes || exit 1
if [ "$checks" = 1 ]; then
	echo
	echo "## make_trajectories: core tests (GPU against CPU) and the regress test with geoacc.device = gpu"
	test/core/geoacc_core_tests make_trajectories > "$OUT/make_trajectories_core_tests.log" 2>&1 || status=1
	grep -E '^(geoacc core tests|FAIL|skip|[0-9]+ passed)' "$OUT/make_trajectories_core_tests.log"
	PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup ais make_trajectories" \
		> "$OUT/make_trajectories_installcheck_gpu.log" 2>&1 || { status=1; head -80 regression.diffs 2>/dev/null; }
	grep -E 'tests passed|failed' "$OUT/make_trajectories_installcheck_gpu.log"
fi

psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb "$db"
export PGDATABASE=$db
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -qAt -c "SELECT to_regclass('ais_fixes') IS NOT NULL")" != t ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql
fi

# run DEVICE SETTINGS SQL TIMEOUT: "milliseconds|DEBUG1 line" of SQL in a fresh session; on the GPU a small
# call first starts the device, so CUDA start-up is not timed
run() {
	local warmup="SELECT 1"
	[ "$1" = gpu ] && warmup="SELECT count(*) FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes
		WHERE object_id < 5', '30 minutes', 10)"
	{ psql -X -v ON_ERROR_STOP=1 -c "SET work_mem = '1GB'" -c "SET geoacc.device = $1" -c "$warmup" \
		-c "$2" -c "SET statement_timeout = '$4'" -c "SET client_min_messages = debug1" -c '\timing on' \
		-c "$3" 2>&1 || true; } |
		awk '/^Time:/ { ms = $2 } /gpu_make_trajectories:/ { sub(/^.*gpu_make_trajectories: /, ""); debug = $0 }
			/^ERROR:/ { ms = "failed"; debug = $0 }
			/canceling statement due to statement timeout/ { ms = "timeout"; debug = "" }
			END { printf "%s|%s\n", ms, debug }'
}
field() { echo "$1" | cut -d'|' -f"$2"; }
seconds() {
	case $1 in
		timeout) echo "> $2" ;;
		"not run") echo "not run" ;;
		failed | '') echo failed ;;
		*) awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }' ;;
	esac
}
# summary TABLE RUN: the result's rows, points and NULL trajectories, to compare; "-" when the run failed
summary() {
	echo "$(field "$2" 1)" | grep -qE '^[0-9.]+$' || { echo "-"; return; }
	psql -X -qAt -c "SELECT count(*) || ' rows, ' || coalesce(sum(ST_NPoints(trajectory)), 0) || ' points, '
		|| count(*) FILTER (WHERE trajectory IS NULL) || ' NULL' FROM $1" 2>/dev/null || echo "-"
}

pipeline() {	# the SQL pipeline over table $1 into table $2
	cat <<SQL
DROP TABLE IF EXISTS $2;
CREATE UNLOGGED TABLE $2 AS
WITH firsts AS (		-- one fix per vessel and time: the smallest X, then Y
	SELECT DISTINCT ON (object_id, t) object_id, t, geom FROM $1 ORDER BY object_id, t, ST_X(geom), ST_Y(geom)
), gaps AS (			-- a new part after a gap of more than 30 minutes
	SELECT *, CASE WHEN t - lag(t) OVER w > interval '30 minutes' THEN 1 ELSE 0 END AS starts
	FROM firsts WINDOW w AS (PARTITION BY object_id ORDER BY t)
), parts AS (
	SELECT *, sum(starts) OVER (PARTITION BY object_id ORDER BY t) + 1 AS part FROM gaps
)
SELECT object_id, part::int AS part, ST_Simplify(ST_SetSRID(ST_MakeLine(
		ST_MakePointM(ST_X(geom), ST_Y(geom), extract(epoch FROM t)::float8) ORDER BY t), 32618), 10) AS trajectory
FROM parts GROUP BY object_id, part HAVING count(*) >= 2
SQL
}

rows=()
breakdown=()
for fixes in $sizes; do
	table=make_trajectories_$fixes
	data_start=$SECONDS
	test/data/scale_fixes.sh "$table" "$fixes" 7 >> "$OUT/make_trajectories_data.log" 2>&1 || { status=1; continue; }
	data_s=$((SECONDS - data_start))
	psql -X -q -c "SELECT count(*) FROM $table" > /dev/null		# warm the cache

	call="DROP TABLE IF EXISTS mt_gpu; CREATE UNLOGGED TABLE mt_gpu AS SELECT * FROM
		gpu_make_trajectories('SELECT object_id, t, geom FROM $table', '30 minutes', 10)"
	gpu=$(run gpu "SELECT 1" "$call" "$timeout")
	gpu_result=$(summary mt_gpu "$gpu")
	# the same with the inner query's scan in parallel workers (the planner keeps a plain scan in one process)
	gpu_workers=$(run gpu "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0" "${call//mt_gpu/mt_gpu_workers}" \
		"$timeout")
	gpu_workers_result=$(summary mt_gpu_workers "$gpu_workers")
	cpu="not run|" sql2="not run|" sql8="not run|" cpu_result="-" sql2_result="-" sql8_result="-"
	if [ "$cpu_runs" = 1 ]; then
		cpu=$(run cpu "SELECT 1" "${call//mt_gpu/mt_cpu}" "$timeout")
		cpu_result=$(summary mt_cpu "$cpu")
	fi
	if [[ " $sql_runs " == *" default "* ]]; then
		sql2=$(run cpu "SELECT 1" "$(pipeline "$table" mt_sql)" "$sql_timeout")
		sql2_result=$(summary mt_sql "$sql2")
	fi
	if [[ " $sql_runs " == *" 8 "* ]]; then
		sql8=$(run cpu "SET max_parallel_workers_per_gather = 8; SET max_parallel_workers = 8;
			ALTER TABLE $table SET (parallel_workers = 8)" "$(pipeline "$table" mt_sql)" "$sql_timeout")
		psql -X -q -c "ALTER TABLE $table RESET (parallel_workers)"
		sql8_result=$(summary mt_sql "$sql8")
	fi
	reference=""
	for r in "$gpu_result" "$gpu_workers_result" "$cpu_result" "$sql2_result" "$sql8_result"; do	# "-": failed or timed out
		[ "$r" = "-" ] && continue
		[ -z "$reference" ] && reference=$r
		[ "$r" = "$reference" ] || { status=1; echo "DIFFERENT: $r against $reference"; }
	done
	gpu_ms=$(field "$gpu" 1)
	best=$(printf '%s\n%s\n' "$(field "$sql2" 1)" "$(field "$sql8" 1)" | grep -E '^[0-9.]+$' | sort -g | head -1)
	if ! echo "$gpu_ms" | grep -qE '^[0-9.]+$'; then
		speedup="-"
	elif [ -n "$best" ]; then
		speedup=$(awk -v s="$best" -v g="$gpu_ms" 'BEGIN { printf "%.1fx", s / g }')
	else
		speedup="> $(awk -v t="${sql_timeout%s}" -v g="$gpu_ms" 'BEGIN { printf "%.1fx", t * 1000 / g }')"
	fi
	rows+=("| $fixes | $(seconds "$(field "$sql2" 1)" "$sql_timeout") | $(seconds "$(field "$sql8" 1)" "$sql_timeout") | $(seconds "$gpu_ms" "$timeout") | $(seconds "$(field "$gpu_workers" 1)" "$timeout") | $(seconds "$(field "$cpu" 1)" "$timeout") | $speedup | ${reference:--} |")
	breakdown+=("| $fixes | GPU | $(field "$gpu" 2) |" "| $fixes | GPU, scan in workers | $(field "$gpu_workers" 2) |"
		"| $fixes | CPU | $(field "$cpu" 2) |")
	echo "$fixes fixes (made in $data_s s): SQL default $sql2 ($sql2_result); SQL 8 workers $sql8 ($sql8_result);" \
		"GPU $gpu ($gpu_result); GPU, scan in workers $gpu_workers ($gpu_workers_result); CPU $cpu ($cpu_result)" \
		>> "$OUT/make_trajectories_runs.log"
	psql -X -q -c "DROP TABLE IF EXISTS mt_gpu, mt_gpu_workers, mt_cpu, mt_sql, $table"
done

echo
echo "## make_trajectories: raw fixes to simplified tracks, CREATE UNLOGGED TABLE ... AS (gap 30 min, tolerance 10 m)"
echo
echo "| fixes | SQL pipeline, default parallel settings | SQL pipeline, 8 workers | gpu_make_trajectories, GPU | the same, scan in parallel workers | gpu_make_trajectories, CPU twin | GPU against the faster SQL | result (the same in every run) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for r in "${rows[@]}"; do echo "$r"; done
echo
echo "| fixes | device | where gpu_make_trajectories' time went (DEBUG1) |"
echo "| ---: | --- | --- |"
for r in "${breakdown[@]}"; do echo "$r"; done
echo
echo "make_trajectories: $((SECONDS - start)) s"

if [ "${MAKE_TRAJECTORIES_SIMPLIFY:-1}" = 1 ]; then
	echo
	SIMPLIFY_DB=$db SIMPLIFY_SIZES=10000000 test/device/simplify.sh || status=1
fi
exit $status

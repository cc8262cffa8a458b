#!/bin/bash
# Per-row cost of the gpu_density_raster aggregate on the CPU path: the
# best of RUNS timings of each query (wall time, and for a serial plan the
# backend's CPU time, which other load on the machine disturbs less),
# serial and with parallel workers, on
# tables that stress the per-row work (2 million single points, 1 million
# two-point lines) and on the real AIS tracks 20 times over (1.15 million
# points in 9,540 rows).  Used to compare the aggregate before and after a
# change of its state; prints one line per query and setting.
#
#   PGDATABASE=bench test/bench/density_raster_rows.sh [RUNS]   (from the repository root)
#
# The tables are made once (density_bench_*); geoacc and PostGIS must be installed.
set -euo pipefail
RUNS=${1:-5}

psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS geoacc CASCADE;
SELECT setseed(0.25) \g /dev/null
CREATE TABLE IF NOT EXISTS density_bench_points AS
	SELECT ST_SetSRID(ST_MakePoint(580000 + random() * 40000, 4060000 + random() * 40000), 32618) AS geom
	FROM generate_series(1, 2000000);
CREATE TABLE IF NOT EXISTS density_bench_segments AS
	SELECT ST_SetSRID(ST_MakeLine(ST_MakePointM(x, y, 1.6e9), ST_MakePointM(x + 50, y + 30, 1.6e9 + 60)), 32618) AS geom
	FROM (SELECT 580000 + random() * 40000 AS x, 4060000 + random() * 40000 AS y FROM generate_series(1, 1000000)) s;
EOF
if ! psql -X -At -c "SELECT to_regclass('density_bench_ais') IS NOT NULL" | grep -q t; then
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f test/data/load_ais.sql \
		-c "CREATE TABLE density_bench_ais AS SELECT a.* FROM ais_tracks a, generate_series(1, 20)" \
		-c "DROP TABLE ais_tracks"
fi
psql -X -q -c "VACUUM ANALYZE density_bench_points" -c "VACUUM ANALYZE density_bench_segments" \
	-c "VACUUM ANALYZE density_bench_ais"

run() {		# run LABEL WORKERS QUERY: the best of RUNS, wall and (serial) backend CPU time, in ms
	local label=$1 workers=$2 query=$3
	local out wall cpu
	# log_statement_stats reports the backend's user and system CPU time of each statement
	out=$(for i in $(seq "$RUNS"); do echo "$query"; done \
		| psql -X -q -At -v ON_ERROR_STOP=1 -c "SET geoacc.device = cpu" \
			-c "SET max_parallel_workers_per_gather = $workers" -c "SET parallel_setup_cost = 0" \
			-c "SET parallel_tuple_cost = 0" -c "SET client_min_messages = log" \
			-c "SET log_statement_stats = on" -c '\timing on' -f - 2>&1)
	wall=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<< "$out" | sort -g | head -1)
	cpu=$(sed -n 's/^!\s*\([0-9.]*\) s user, \([0-9.]*\) s system.*/\1 \2/p' <<< "$out" \
		| awk '{printf "%.1f\n", 1000 * ($1 + $2)}' | sort -g | head -1)
	if [ "$workers" = 0 ]; then
		printf '%-34s workers %d  %10s ms wall  %8s ms CPU\n' "$label" "$workers" "$wall" "$cpu"
	else
		printf '%-34s workers %d  %10s ms wall\n' "$label" "$workers" "$wall"
	fi
}

box="'BOX(580000 4060000,620000 4100000)'::box2d"
ais="'BOX(369800 3984900,646500 4525900)'::box2d"
for workers in 0 2; do
	run "2M points, 512 x 512" $workers \
		"SELECT length(gpu_density_raster(geom, $box, 512, 512)) FROM density_bench_points;"
	run "2M weighted points, 512 x 512" $workers \
		"SELECT length(gpu_density_raster(geom, $box, 512, 512, 'gaussian', 7, true, 'count', 2.5)) FROM density_bench_points;"
	run "1M two-point lines, 512 x 512" $workers \
		"SELECT length(gpu_density_raster(geom, $box, 512, 512)) FROM density_bench_segments;"
	run "AIS x 20, 2048 x 4096" $workers \
		"SELECT length(gpu_density_raster(traj, $ais, 2048, 4096)) FROM density_bench_ais;"
done

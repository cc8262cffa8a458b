#!/bin/bash
# gpu_density_raster over 10^8 points before and after a change of its core (the margins of seamless
# tiles, the fixed-point sums), in one run on the GPU machine, so that both trees meet the same data,
# server and GPU.  Run from the repository root after test/device/run.sh has built, installed and started
# PostgreSQL (PG* set), with the earlier tree unpacked beside it, made here before the copy:
#
#   mkdir -p .device/density-before && git archive 5b67cdf | tar -x -C .device/density-before \
#     && echo 5b67cdf > .device/density-before/COMMIT
#   bash test/device/run.sh && test/device/density_raster_before_after.sh
#
# Each tree in turn is built (CUDA_ARCHS=90), installed and its extension re-created; the same queries
# run twice in alternation (before, after, before, after) and each time is printed: the GPU path at
# 1024^2 with k = 7 and at 4096^2 with k = 31, one backend and 8 parallel workers, and the CPU path at
# 4096^2, k = 31.  The data is the AIS tracks scaled to BENCH_POINTS (10^8) points by
# test/data/scale_tracks.sh, made once.  Prints a markdown table.
set -euo pipefail
before=${BEFORE_DIR:-.device/density-before}
after=$(pwd)
db=${BENCH_DB:-geoacc_bench}
n=${BENCH_POINTS:-100000000}
extent="'BOX(367000 3982000,649000 4528000)'::box2d"
export PGDATABASE=$db
export MAKEFLAGS="with_llvm=no"
[ -f "$before/Makefile" ] || { echo "before_after: $before has no tree (see the header)" >&2; exit 1; }

if ! psql -X -At -c "SELECT 1" >/dev/null 2>&1; then
	createdb "$db"
fi
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE"
if [ "$(psql -X -At -c "SELECT to_regclass('tracks_$n') IS NOT NULL")" != t ]; then
	psql -X -q -f test/data/load_ais.sql >/dev/null
	test/data/scale_tracks.sh "tracks_$n" "$n"
fi

install_tree() {	# install_tree DIR: build and install that tree's geoacc, then re-create the extension
	(cd "$1" && make -s -j16 CUDA_ARCHS=90 >/dev/null && make -s install >/dev/null)
	psql -X -q -c "SET client_min_messages = warning" -c "DROP EXTENSION IF EXISTS geoacc_raster" \
		-c "DROP EXTENSION geoacc CASCADE" -c "CREATE EXTENSION geoacc"
}
run() {	# run SETTINGS QUERY: milliseconds of QUERY in one session after SETTINGS (a warm-up GPU call first)
	psql -X -q -At -v ON_ERROR_STOP=1 -c "$1" \
		-c "SELECT length(gpu_density_raster('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'BOX(0 0,2 2)'::box2d, 2, 2))" \
		-c '\timing on' -c "$2" 2>&1 | awk '/^Time:/ {ms = $2} END {printf "%.0f", ms}'
}
query() {	# query SIDE K
	echo "SELECT md5(gpu_density_raster(traj, $extent, $1, $1, 'gaussian', $2)) FROM tracks_$n"
}
serial="SET max_parallel_workers_per_gather = 0"
parallel="SET max_parallel_workers_per_gather = 8; SET max_parallel_workers = 8"

echo "## density_raster: before ($(cat "$before/COMMIT" 2>/dev/null || echo "$before")) and after ($(git log -1 --format=%h 2>/dev/null || echo "$after")), $n points (ms)"
echo
echo "| round | tree | GPU 1024^2 k=7 | GPU 4096^2 k=31 | GPU 8 workers 4096^2 k=31 | CPU 4096^2 k=31 |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
for round in 1 2; do
	for tree in before after; do
		dir=$before
		[ "$tree" = after ] && dir=$after
		install_tree "$dir"
		a=$(run "$serial; SET geoacc.device = gpu" "$(query 1024 7)")
		b=$(run "$serial; SET geoacc.device = gpu" "$(query 4096 31)")
		c=$(run "$parallel; SET geoacc.device = gpu" "$(query 4096 31)")
		d=$(run "$serial; SET geoacc.device = cpu" "$(query 4096 31)")
		echo "| $round | $tree | $a | $b | $c | $d |"
	done
done
# leave the tree under test installed

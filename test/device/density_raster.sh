#!/bin/bash
# Benchmark of gpu_density_raster, run from the repository root after geoacc is built (CUDA_ARCHS=90)
# and installed and PostgreSQL is running with PG* set (test/device/run.sh does that).
#
#   1. Kernel-only throughput: test/device/density_raster_bench.cu times the projection and convolution
#      kernels on data already on the device, against the measured copy bandwidth.
#   2. End to end in PostgreSQL, on the real AIS tracks scaled by test/data/scale_tracks.sh to 10^6,
#      10^7 and 10^8 points, rasters of 1024^2 and 4096^2 cells, gaussian kernels of 7 and 31 cells:
#      the GPU path and the CPU path of the same query (one backend, no parallel workers), the time of a
#      plain scan of the same rows, and at 10^8 points the same with 8 parallel workers.
#   3. The PostGIS pipeline a user writes without geoacc, at 10^6 points, 1024^2, 7 x 7 cells:
#      with postgis_raster (ST_AsRaster per track, ST_Union(..., 'SUM'), ST_MapAlgebra with st_sum4ma
#      over a 7 x 7 box) where that extension exists, and always the same density with PostGIS geometry
#      functions and SQL (ST_Segmentize to the cell size, ST_DumpPoints, counts per cell, a join with
#      the 7 x 7 gaussian weights).
#
# Prints markdown tables.  BENCH_MAX_POINTS (default 100000000) caps the sizes; about 4 minutes on an
# H200 with 16 cores at the default.
set -euo pipefail
db=${BENCH_DB:-geoacc_bench}
max_points=${BENCH_MAX_POINTS:-100000000}
extent="'BOX(367000 3982000,649000 4528000)'::box2d"	# the scaled tracks: AIS extent +- 2 km
export PGDATABASE=$db

echo "## density_raster: kernel-only throughput"
if command -v nvcc >/dev/null && [ -f cuda/build-gpu/libgeoacc_core.a ]; then
	nvcc -std=c++17 -O3 --fmad=false -arch=sm_90 -Icuda test/device/density_raster_bench.cu \
		cuda/build-gpu/libgeoacc_core.a -o /tmp/density_raster_bench
	/tmp/density_raster_bench "$((max_points > 10000000 ? max_points : 10000000))" || echo "(kernel benchmark failed)"
else
	echo "(skipped: needs nvcc and cuda/build-gpu/libgeoacc_core.a)"
fi

echo
echo "## density_raster: data"
dropdb --if-exists "$db" >/dev/null
createdb "$db"
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE"
psql -X -q -f test/data/load_ais.sql >/dev/null
sizes=""
for n in 1000000 10000000 100000000; do
	[ "$n" -le "$max_points" ] || continue
	start=$SECONDS
	test/data/scale_tracks.sh "tracks_$n" "$n"
	echo "(made in $((SECONDS - start)) s)"
	sizes="$sizes $n"
done
has_gpu=$(psql -X -At -c "SELECT count(*) > 0 FROM geoacc_devices()")
has_raster=$(psql -X -At -c "SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'postgis_raster'")

# run SETTINGS QUERY: "milliseconds core_milliseconds" of QUERY in one session after SETTINGS, where
# core_milliseconds is the time geoacc_stats() counts in the compute core ("failed -" on an error)
run() {
	local out
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 -c "$1" -c "SELECT geoacc_stats_reset()" -c '\timing on' -c "$2" \
		-c '\timing off' -c "SELECT coalesce(round(sum(total_ms)::numeric, 1), 0) FROM geoacc_stats()" 2>&1) \
		|| { echo "$out" | tail -3 >&2; echo "failed -"; return 0; }
	awk '/^Time:/ {ms = $2} END {printf "%.0f %s", ms, $0}' <<< "$out"
}
raster() {	# raster N SIDE K: the query for one configuration
	echo "SELECT length(gpu_density_raster(traj, $extent, $2, $2, 'gaussian', $3)) FROM tracks_$1"
}
serial="SET max_parallel_workers_per_gather = 0"
# a small GPU call first, so that CUDA start-up in the session is not timed
gpu_warmup="SELECT length(gpu_density_raster('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'BOX(0 0,2 2)'::box2d, 2, 2))"

echo
echo "## density_raster: end to end (one backend; times in ms; core = time inside the compute core)"
echo
echo "| points | raster | k | scan only | GPU path | GPU core | CPU path | CPU core | CPU path / GPU path |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in $sizes; do
	read -r scan _ <<< "$(run "$serial" "SELECT sum(ST_NPoints(traj)) FROM tracks_$n")"
	configs="1024:7 1024:31 4096:7 4096:31"
	[ "$n" = 1000000 ] && configs="1024:7"
	for c in $configs; do
		side=${c%:*}
		k=${c#*:}
		gpu="-"; gpu_core="-"; ratio="-"
		if [ "$has_gpu" = t ]; then
			read -r gpu gpu_core <<< "$(run "$serial; SET geoacc.device = gpu; $gpu_warmup" "$(raster "$n" "$side" "$k")")"
		fi
		read -r cpu cpu_core <<< "$(run "$serial; SET geoacc.device = cpu" "$(raster "$n" "$side" "$k")")"
		[ "$gpu" != "-" ] && ratio=$(awk -v a="$cpu" -v b="$gpu" 'BEGIN {printf "%.1fx", a / b}')
		echo "| $n | ${side}^2 | $k | $scan | $gpu | $gpu_core | $cpu | $cpu_core | $ratio |"
	done
done

largest=${sizes##* }
if [ "$largest" = 100000000 ]; then
	echo
	echo "8 parallel workers, 10^8 points, 4096^2, k = 31 (ms):"
	echo
	echo "| path | end to end |"
	echo "| --- | ---: |"
	parallel="SET max_parallel_workers_per_gather = 8; SET max_parallel_workers = 8"
	for device in gpu cpu; do
		[ "$device" = gpu ] && [ "$has_gpu" != t ] && continue
		read -r ms _ <<< "$(run "$parallel; SET geoacc.device = $device; $gpu_warmup" "$(raster "$largest" 4096 31)")"
		echo "| $device, 8 workers | $ms |"
	done
fi

if [ "$has_gpu" = t ] && [ -n "$sizes" ]; then
	n=$largest
	case " $sizes " in *" 10000000 "*) n=10000000 ;; esac
	echo
	echo -n "GPU and CPU rasters identical ($n points, 4096^2, k = 31): "
	psql -X -q -At <<SQL
$serial;
SET geoacc.device = gpu;
SELECT md5(gpu_density_raster(traj, $extent, 4096, 4096, 'gaussian', 31)) AS gpu_md5 FROM tracks_$n \gset
SET geoacc.device = cpu;
SELECT md5(gpu_density_raster(traj, $extent, 4096, 4096, 'gaussian', 31)) = :'gpu_md5' FROM tracks_$n;
SQL
fi

echo
echo "## density_raster: the PostGIS pipeline without geoacc (10^6 points, 1024^2, 7 x 7 cells; ms)"
echo
echo "| pipeline | end to end |"
echo "| --- | ---: |"
if [ "$has_raster" = t ]; then
	psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS postgis_raster"
	read -r ms _ <<< "$(run "$serial" "
		WITH ref AS (
			SELECT ST_MakeEmptyRaster(1024, 1024, ST_XMin($extent), ST_YMax($extent),
				(ST_XMax($extent) - ST_XMin($extent)) / 1024, -(ST_YMax($extent) - ST_YMin($extent)) / 1024,
				0, 0, 32618) AS r
		), counts AS (
			SELECT ST_Union(ST_AsRaster(traj, ref.r, '32BUI', 1, 0, true), 'SUM') AS rast FROM tracks_1000000, ref
		)
		SELECT length(ST_AsBinary(ST_MapAlgebra(rast, 1, 'st_sum4ma(double precision[], integer[], text[])'::regprocedure,
			'64BF', 'FIRST', NULL, 3, 3))) FROM counts")"
	echo "| postgis_raster: ST_AsRaster per track, ST_Union SUM, ST_MapAlgebra st_sum4ma 7 x 7 | $ms |"
else
	echo "| postgis_raster: ST_AsRaster, ST_Union, ST_MapAlgebra | not installed here |"
fi
read -r ms _ <<< "$(run "$serial" "
	WITH grid AS (
		SELECT ST_XMin($extent) AS x0, ST_YMax($extent) AS y1,
			(ST_XMax($extent) - ST_XMin($extent)) / 1024 AS sx, (ST_YMax($extent) - ST_YMin($extent)) / 1024 AS sy
	), cells AS (
		SELECT floor((ST_X(d.geom) - x0) / sx)::int AS c, floor((y1 - ST_Y(d.geom)) / sy)::int AS r, count(*) AS n
		FROM tracks_1000000, grid, ST_DumpPoints(ST_Segmentize(traj, least(sx, sy))) d
		WHERE ST_Intersects(traj, ST_SetSRID($extent::geometry, 32618))
		GROUP BY 1, 2
	), kernel AS (
		SELECT i, j, w / sum(w) OVER () AS w
		FROM generate_series(-3, 3) i, generate_series(-3, 3) j, LATERAL (SELECT exp(-4.5 * (i * i + j * j) / 16.0) AS w) e
	)
	SELECT count(*), sum(v) FROM (
		SELECT cells.r + i AS r, cells.c + j AS c, sum(n * w) AS v FROM cells, kernel GROUP BY 1, 2) x
	WHERE r BETWEEN 0 AND 1023 AND c BETWEEN 0 AND 1023")"
echo "| PostGIS geometry + SQL: ST_Segmentize, ST_DumpPoints, counts per cell, join with 7 x 7 gaussian | $ms |"

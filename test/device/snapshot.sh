#!/bin/bash
# Density tiles from a snapshot against the same tiles over the table, on the GPU machine (geoacc built and
# installed: test/device/run.sh snapshot does that), in one run, on a server of its own with geoacc preloaded and
# geoacc.service = SNAPSHOT_SERVICE (default gpu; cpu checks this script on a machine without a GPU):
#
#   1. the scaled AIS tracks (test/data/scale_tracks.sh) of SNAPSHOT_POINTS points (default 10^8), in EPSG:3857
#      with a GiST index for the per-tile query; geoacc_snapshot_create over them against a plain scan of the
#      same rows (ST_Transform to 3857 and ST_NPoints of every row), and the snapshot's bytes;
#   2. TILES (default 100) random XYZ tiles at zooms 8 to 12 over the tracks: the snapshot's PNG (under gpu: from
#      the copy of its points the device processes keep) and the per-tile query's (geoacc_raster_png of
#      gpu_density_raster over the rows the tile's envelope meets) must be the same bytes; the median and 90th percentile milliseconds of each from one session, under
#      geoacc.device = auto, gpu and cpu;
#   3. pgbench, 16 clients for 15 s each, a random tile of those each transaction: tiles a second from the
#      snapshot and from the table; then from the snapshot, 10 s each, the tiles of zoom 8 alone and of zoom 12
#      alone, the rasters without their PNG, and an empty tile;
#   4. the segment join of new tracks (about 10^4 segments) against a snapshot of trajectories of JOIN_POINTS
#      points (default 10^7) at 100 m, written with CREATE TABLE AS, against gpu_segment_join with the same rows
#      as b_sql, on the GPU and on the CPU: the same rows;
#   5. pgbench over the snapshot again with each of SNAPSHOT_PROCESSES (default "2 4 8") device processes.
#
# SNAPSHOT_PARTS picks parts 2 to 5 (default "2 3 4 5"; part 1 always runs, the others need its snapshot).
# SNAPSHOT_DEVICES (default "auto gpu cpu") picks the settings of part 2; JOIN_POINTS=0 leaves part 4 out.
# SNAPSHOT_REGION_COPIES=K spreads the tracks of part 1 over regions 1,000 km apart, K copies of the harbour each
# (SNAPSHOT_REGION_COLUMNS, default 12, to a row: 5 rows keep every region inside UTM 18N's projection domain), as
# a day of AIS grows in area rather than in density; unset, every copy lies in the one harbour.
#
# Prints markdown; the last line says whether every check held.
set -uo pipefail
mode=${SNAPSHOT_SERVICE:-gpu}
points=${SNAPSHOT_POINTS:-100000000}
tiles=${TILES:-100}
parts=" ${SNAPSHOT_PARTS:-2 3 4 5} "
has() { [[ $parts == *" $1 "* ]]; }
PGBIN=$(dirname "$(readlink -f "$(command -v postgres || echo /usr/lib/postgresql/15/bin/postgres)")")
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
problems=0
problem() { echo "snapshot: FAILED: $*"; problems=$((problems + 1)); }
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	user=pgrun
	id pgrun >/dev/null 2>&1 || useradd -m pgrun
fi
as_user() { if [ "$(id -u)" = 0 ]; then su "$user" -c "$*"; else sh -c "$*"; fi; }
data=/tmp/geoacc-snapshot-server
[ -f "$data/postmaster.pid" ] && as_user "$PGBIN/pg_ctl -D $data -m immediate stop" >/dev/null 2>&1
rm -rf "$data" && mkdir -p "$data" && chown "$user" "$data"
as_user "$PGBIN/initdb -D $data -A trust -U postgres" >/dev/null || exit 1
cat >> "$data/postgresql.conf" <<CONF
port = 5452
unix_socket_directories = '/tmp'
listen_addresses = ''
shared_preload_libraries = 'geoacc'
geoacc.service = $mode
geoacc.service_memory = '48GB'
max_connections = 60
shared_buffers = '8GB'
max_parallel_workers_per_gather = 0
CONF
as_user "$PGBIN/pg_ctl -D $data -l /tmp/geoacc-snapshot-server.log -w start" >/dev/null \
	|| { tail -20 /tmp/geoacc-snapshot-server.log; exit 1; }
trap 'as_user "$PGBIN/pg_ctl -D $data -m fast stop" >/dev/null 2>&1' EXIT
export PGUSER=postgres PGHOST=/tmp PGPORT=5452 PGDATABASE=geoacc_snapshot
createdb geoacc_snapshot || exit 1
psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE" \
	-f test/data/load_ais.sql > "$OUT/snapshot_setup.log" 2>&1 || { tail "$OUT/snapshot_setup.log"; exit 1; }
start=$SECONDS
REGION_COPIES=${SNAPSHOT_REGION_COPIES:-} REGION_COLUMNS=${SNAPSHOT_REGION_COLUMNS:-12} \
	test/data/scale_tracks.sh tracks "$points" > /dev/null || exit 1
psql -X -q -v ON_ERROR_STOP=1 >> "$OUT/snapshot_setup.log" 2>&1 <<'SQL' || { tail "$OUT/snapshot_setup.log"; exit 1; }
CREATE TABLE tracks_3857 AS SELECT id, ST_Transform(traj, 3857) AS geom FROM tracks;
CREATE INDEX ON tracks_3857 USING gist (geom);
VACUUM ANALYZE tracks_3857;
-- random tiles at zooms 8 to 12 whose envelope meets the tracks
CREATE FUNCTION tile_of(lon float8, lat float8, z int, OUT x int, OUT y int) LANGUAGE sql IMMUTABLE AS $$
	SELECT floor((lon + 180) / 360 * 2 ^ z)::int,
		floor((1 - ln(tan(radians(lat)) + 1 / cos(radians(lat))) / pi()) / 2 * 2 ^ z)::int $$;
SQL
psql -X -q -v ON_ERROR_STOP=1 -c "SELECT setseed(0.5)" -c "
	CREATE TABLE tiles AS
	SELECT row_number() OVER () AS k, z, (t).x, (t).y FROM (
		SELECT z, tile_of(ST_X(p), ST_Y(p), z) AS t
		FROM (SELECT 8 + (n % 5)::int AS z, p FROM (
			-- the zoom from the points' numbers: a random() beside ORDER BY random() is that same value
			SELECT row_number() OVER () AS n, ST_Transform(geom, 4326) AS p
			FROM (SELECT (ST_DumpPoints(geom)).geom FROM tracks_3857 TABLESAMPLE SYSTEM (1)) d
			ORDER BY random() LIMIT $tiles) s) q) r" >> "$OUT/snapshot_setup.log" 2>&1 || exit 1
echo "## snapshot: density tiles ($mode service), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'), $(nproc) CPU cores"
echo
echo "data: $(psql -X -At -c "SELECT count(*) || ' tracks, ' || sum(ST_NPoints(traj)) || ' points' FROM tracks"), made in $((SECONDS - start)) s; $tiles tiles${SNAPSHOT_REGION_COPIES:+; regions of $SNAPSHOT_REGION_COPIES copies of the harbour, ${SNAPSHOT_REGION_COLUMNS:-12} to a row}"

# tile_script Q: Q once per tile, its %s the tile's number
tile_script() { for k in $(seq 1 "$tiles"); do printf "$1\n" "$k"; done; }
# pgbench_tiles SCRIPT LOG [SECONDS]: 16 clients for 15 s; sets tps (empty when pgbench failed) and failed
pgbench_tiles() {
	"$PGBIN/pgbench" -n -c 16 -j 16 -T "${3:-15}" -f "$1" > "$2" 2>&1
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$2" | head -1)
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$2")
}
# ms SQL...: the milliseconds of the last statement, in one session
ms() { psql -X -q -At -v ON_ERROR_STOP=1 -c '\timing on' "$@" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }
echo
echo "### 1. creating the snapshot"
echo
echo "| what | ms |"
echo "| --- | --- |"
scan=$(ms -c "SELECT sum(ST_NPoints(ST_Transform(traj, 3857))) FROM tracks")
echo "| plain scan: sum(ST_NPoints(ST_Transform(traj, 3857))) | $scan |"
create=$(ms -c "SELECT geoacc_snapshot_create('tracks', 'SELECT id, ST_Transform(traj, 3857) AS geom FROM tracks')")
echo "| geoacc_snapshot_create | $create |"
psql -X -At -F ' | ' -c "SELECT '| snapshot: ' || rows || ' rows, ' || points || ' points, ' || pg_size_pretty(bytes) || ' |' FROM geoacc_snapshots()"
[ -n "$create" ] || problem "the snapshot was not made"

if has 2; then
echo
echo "### 2. one session: the same tiles from the snapshot and over the table"
echo
same=$(PGOPTIONS="-c geoacc.device=gpu" psql -X -At -c "SELECT count(*) FILTER (WHERE geoacc_density_tile('tracks', z, x, y, vmax => 50) =
	(SELECT geoacc_raster_png(gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 256, 256), 'viridis', 'log', 0, 50, true)
	 FROM tracks_3857 WHERE geom && ST_TileEnvelope(z, x, y, margin => 4.0 / 256))) || ' of ' || count(*) FROM tiles" 2>&1)
echo "the same PNG bytes (the snapshot's under geoacc.device = gpu, from the points the device processes keep): $same tiles"
psql -X -At -c "SELECT 'kept by ' || device_copies || ' device processes, ' || pg_size_pretty(device_bytes) || ' of device memory' FROM geoacc_snapshots() WHERE name = 'tracks'"
[ "$same" = "$tiles of $tiles" ] || problem "tiles differ: $same"
echo
echo "| device | from | median ms | p90 ms |"
echo "| --- | --- | --- | --- |"
for device in ${SNAPSHOT_DEVICES:-auto gpu cpu}; do
	for from in snapshot table; do
		if [ $from = snapshot ]; then
			q="SELECT length(geoacc_density_tile('tracks', z, x, y, vmax => 50)) FROM tiles WHERE k = %s;"
		else
			q="SELECT length(geoacc_raster_png(gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 256, 256), 'viridis', 'log', 0, 50, true)) FROM tiles, tracks_3857 WHERE k = %s AND geom && ST_TileEnvelope(z, x, y, margin => 4.0 / 256) GROUP BY z, x, y;"
		fi
		psql -X -q -At -c "SET geoacc.device = $device" -c '\timing on' -f <(tile_script "$q") > "$OUT/snapshot_${device}_$from.log" 2>&1
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$OUT/snapshot_${device}_$from.log" | sort -g > "$OUT/snapshot_${device}_$from.ms"
		n=$(wc -l < "$OUT/snapshot_${device}_$from.ms")
		median=$(sed -n "$(( (n + 1) / 2 ))p" "$OUT/snapshot_${device}_$from.ms")
		p90=$(sed -n "$(( (n * 9 + 9) / 10 ))p" "$OUT/snapshot_${device}_$from.ms")
		echo "| $device | $from | $median | $p90 |"
		grep -q ERROR "$OUT/snapshot_${device}_$from.log" && problem "$device $from: $(grep -m1 ERROR "$OUT/snapshot_${device}_$from.log")"
	done
done

# a tile's parts under gpu, by zoom: the PNG, the raster alone (no colouring, no PNG), and an empty tile (the cost
# of a tile outside its projection and convolution)
zooms=$(psql -X -At -c "SELECT z FROM tiles ORDER BY k")
by_zoom() {	# by_zoom Q: median ms of Q (%s: the tile's number) per zoom over the tiles, in one session
	psql -X -q -At -c "SET geoacc.device = gpu" -c '\timing on' -f <(tile_script "$1") 2>&1 \
		| sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | paste - <(echo "$zooms") \
		| sort -k2,2n -k1,1g | awk 'function out() {printf "%s %s %d\n", z, v[int((n + 1) / 2)], n}
			NR > 1 && $2 != z {out()} $2 != z {z = $2; n = 0} {v[++n] = $1} END {if (NR) out()}'
}
by_zoom "SELECT length(geoacc_density_tile('tracks', z, x, y, vmax => 50)) FROM tiles WHERE k = %s;" > "$OUT/snapshot_parts_png.txt"
by_zoom "SELECT length(geoacc_density_tile_raster('tracks', z, x, y)) FROM tiles WHERE k = %s;" > "$OUT/snapshot_parts_raster.txt"
by_zoom "SELECT length(geoacc_density_tile('tracks', 12, 0, 0, vmax => 50)) FROM tiles WHERE k = %s;" > "$OUT/snapshot_parts_empty.txt"
echo
echo "| zoom (tiles) | PNG tile, median ms | its raster alone | an empty tile (12/0/0) |"
echo "| --- | --- | --- | --- |"
paste -d ' ' "$OUT/snapshot_parts_png.txt" "$OUT/snapshot_parts_raster.txt" "$OUT/snapshot_parts_empty.txt" \
	| awk '{printf "| %s (%s) | %s | %s | %s |\n", $1, $3, $2, $5, $8}'
fi

# the pgbench script of random tiles from the snapshot (parts 3 and 5)
printf '\\set k random(1, %s)\n%s\n' "$tiles" \
	"SELECT length(geoacc_density_tile('tracks', z, x, y, vmax => 50)) FROM tiles WHERE k = :k;" \
	> "$OUT/snapshot_pgbench_snapshot.sql"
if has 3; then
echo
echo "### 3. pgbench: 16 clients, 15 s, a random tile of those each transaction"
echo
echo "| from | tiles/s | failed |"
echo "| --- | --- | --- |"
for from in snapshot table; do
	if [ $from = table ]; then
		q="SELECT length(geoacc_raster_png(gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 256, 256), 'viridis', 'log', 0, 50, true)) FROM tiles, tracks_3857 WHERE k = :k AND geom && ST_TileEnvelope(z, x, y, margin => 4.0 / 256) GROUP BY z, x, y;"
		printf '\\set k random(1, %s)\n%s\n' "$tiles" "$q" > "$OUT/snapshot_pgbench_$from.sql"
	fi
	pgbench_tiles "$OUT/snapshot_pgbench_$from.sql" "$OUT/snapshot_pgbench_$from.log"
	echo "| $from | ${tps:-failed} | ${failed:-?} |"
	[ -n "$tps" ] || problem "pgbench $from: $(tail -2 "$OUT/snapshot_pgbench_$from.log")"
done
# the same from the snapshot, 10 s each, by what a tile holds: the tiles of the lowest and highest zoom (the most
# and the fewest points to project), the rasters without their PNG, and an empty tile (no call on any device)
psql -X -q -c "DROP TABLE IF EXISTS tiles_by_zoom" \
	-c "CREATE TABLE tiles_by_zoom AS SELECT row_number() OVER (PARTITION BY z ORDER BY k) AS i, z, x, y FROM tiles"
for part in "zoom 8" "zoom 12" "rasters alone" "empty"; do
	case $part in
		zoom*) n=$(psql -X -At -c "SELECT count(*) FROM tiles_by_zoom WHERE z = ${part#zoom }")
			q="SELECT length(geoacc_density_tile('tracks', z, x, y, vmax => 50)) FROM tiles_by_zoom WHERE z = ${part#zoom } AND i = :k;" ;;
		rasters*) n=$tiles; q="SELECT length(geoacc_density_tile_raster('tracks', z, x, y)) FROM tiles WHERE k = :k;" ;;
		empty) n=1; q="SELECT length(geoacc_density_tile('tracks', 12, 0, 0, vmax => 50));" ;;
	esac
	[ "$n" -gt 0 ] || continue
	printf '\\set k random(1, %s)\n%s\n' "$n" "$q" > "$OUT/snapshot_pgbench_part.sql"
	pgbench_tiles "$OUT/snapshot_pgbench_part.sql" "$OUT/snapshot_pgbench_part.log" 10
	echo "| snapshot, $part ($n tiles) | ${tps:-failed} | ${failed:-?} |"
	[ -n "$tps" ] || problem "pgbench $part: $(tail -2 "$OUT/snapshot_pgbench_part.log")"
done
fi
join_points=${JOIN_POINTS:-10000000}
has 4 || join_points=0
if [ "$join_points" -gt 0 ]; then
echo
echo "### 4. segment join: new tracks of about 10^4 segments against a snapshot of JOIN_POINTS (default 10^7) points, 100 m"
echo
test/data/scale_tracks.sh traffic "$join_points" 2 > /dev/null || exit 1
test/data/scale_tracks.sh new_tracks 12000 3 > /dev/null || exit 1
psql -X -q -c "SELECT geoacc_snapshot_create('traffic', 'SELECT id, traj FROM traffic')" > /dev/null \
	|| problem "the trajectories snapshot was not made"
echo "new tracks: $(psql -X -At -c "SELECT count(*) || ' tracks, ' || sum(ST_NPoints(traj) - 1) || ' segments' FROM new_tracks"); traffic: $(psql -X -At -c "SELECT count(*) || ' tracks, ' || sum(ST_NPoints(traj) - 1) || ' segments' FROM traffic")"
echo
echo "| device | from | run | ms (CREATE TABLE AS) | rows |"
echo "| --- | --- | --- | --- | --- |"
for device in gpu cpu; do
	for from in snapshot query; do
		if [ $from = snapshot ]; then
			q="SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM new_tracks', 'traffic', 100)"
		else
			q="SELECT * FROM gpu_segment_join('SELECT id, traj FROM new_tracks', 'SELECT id, traj FROM traffic', 100)"
		fi
		for run in 1 2 3; do
			t=$(ms -c "SET geoacc.device = $device" -c "DROP TABLE IF EXISTS j_${device}_$from" -c "CREATE TABLE j_${device}_$from AS $q")
			echo "| $device | $from | $run | $t | $(psql -X -At -c "SELECT count(*) FROM j_${device}_$from") |"
		done
	done
done
# where a kept join's time goes: its stages, and what the same rows cost without the join (written from a table,
# and the join's rows counted without writing them)
psql -X -q -c "SET geoacc.device = gpu" -c "SET client_min_messages = debug1" -c "DROP TABLE IF EXISTS j_stages" \
	-c "CREATE TABLE j_stages AS SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM new_tracks', 'traffic', 100)" \
	2>&1 | sed -n 's/^.*DEBUG: *\(gpu_segment_join: .*\)$/\1/p' | tee "$OUT/snapshot_join_stages.log"
for run in 1 2 3; do
	w=$(ms -c "DROP TABLE IF EXISTS j_write" -c "CREATE TABLE j_write AS TABLE j_gpu_snapshot")
	c=$(ms -c "SET geoacc.device = gpu" -c "SELECT count(*) FROM gpu_segment_join_snapshot('SELECT id, traj FROM new_tracks', 'traffic', 100)")
	echo "the same rows written from a table (CREATE TABLE AS TABLE): $w ms; the kept join counted, not written: $c ms"
done
differ=$(psql -X -At -c "SELECT count(*) FROM ((TABLE j_gpu_snapshot EXCEPT ALL TABLE j_cpu_query) UNION ALL (TABLE j_cpu_query EXCEPT ALL TABLE j_gpu_snapshot)) d")
echo
echo "rows of the GPU snapshot join unlike the CPU query join's: $differ"
[ "$differ" = 0 ] || problem "the joins differ ($differ rows)"
fi
psql -X -At -c "SELECT 'service: ' || calls || ' calls, ' || failed_calls || ' failed, memory used ' || pg_size_pretty(memory_used) || ', peak ' || pg_size_pretty(memory_peak) FROM geoacc_service()"

# tiles a second against the number of device processes (geoacc.service_processes): whether the GPU or the work
# around it in each process bounds them
if has 5; then
echo
echo "### 5. pgbench over the snapshot against geoacc.service_processes (16 clients, 5 s to warm up, then 15 s)"
echo
echo "| device processes | keeping the points | tiles/s | failed |"
echo "| --- | --- | --- | --- |"
for n in ${SNAPSHOT_PROCESSES:-2 4 8}; do
	as_user "$PGBIN/pg_ctl -D $data -l /tmp/geoacc-snapshot-server.log -w restart -o '-c geoacc.service_processes=$n'" \
		> /dev/null || { problem "restart with $n device processes"; break; }
	"$PGBIN/pgbench" -n -c 16 -j 16 -T 5 -f "$OUT/snapshot_pgbench_snapshot.sql" > /dev/null 2>&1
	pgbench_tiles "$OUT/snapshot_pgbench_snapshot.sql" "$OUT/snapshot_pgbench_$n.log"
	echo "| $n | $(psql -X -At -c "SELECT device_copies FROM geoacc_snapshots() WHERE name = 'tracks'") | ${tps:-failed} | ${failed:-?} |"
	[ -n "$tps" ] || problem "pgbench with $n device processes: $(tail -2 "$OUT/snapshot_pgbench_$n.log")"
done
fi
echo
[ $problems = 0 ] && echo "snapshot: every check held" || echo "snapshot: $problems checks failed"
exit $((problems > 0))

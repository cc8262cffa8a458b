#!/bin/bash
# gpu_density_raster on Citus against the same rows in a plain table of the coordinator, on a running
# cluster (scripts/citus.sh with GEOACC_CITUS_KEEP=1), from the repository root:
#
#   GEOACC_CITUS_PORTS="9700 9701 9702" test/bench/density_citus.sh [POINTS [RUNS]]
#
# Makes tracks_local (the AIS tracks scaled to POINTS points, default 2,000,000, test/data/scale_tracks.sh)
# and tracks (the same rows distributed by a bucket of 64, 16 shards), then times RUNS times (default 5),
# by turns, the density raster of the multi-GPU benchmark (4096 x 4096, BOX(367000 3982000, 649000
# 4528000), kernel 1 and the default gaussian 7) over each, each in a fresh session, with
# geoacc.device = $DEVICE (default cpu); then each shard's aggregate alone on its worker (the partial
# state, flattened for the coordinator: length() of it), and the size of the states.  Prints the best
# times in ms and checks that both give the same raster (md5).
set -euo pipefail
points=${1:-2000000}
runs=${2:-5}
device=${DEVICE:-cpu}
read -r coord w1 w2 <<<"${GEOACC_CITUS_PORTS:-9700 9701 9702}"
sock=${GEOACC_CITUS_BASE:-/tmp/geoacc-citus}-sock
db=geoacc_citus
q() { local port=$1; shift; psql -X -qAt -h "$sock" -p "$port" -U postgres -d "$db" "$@"; }

if [ "$(q "$coord" -c "SELECT count(*) FROM pg_class WHERE relname IN ('tracks_local', 'tracks')")" != 2 ] ||
	[ "$(q "$coord" -c "SELECT coalesce(sum(ST_NPoints(traj)), 0) >= $points FROM tracks_local")" != t ]; then
	q "$coord" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS tracks, tracks_local, ais_tracks CASCADE"
	PGHOST=$sock PGPORT=$coord PGUSER=postgres PGDATABASE=$db psql -X -q -f test/data/load_ais.sql >/dev/null
	PGHOST=$sock PGPORT=$coord PGUSER=postgres PGDATABASE=$db test/data/scale_tracks.sh tracks_local "$points" >/dev/null
	q "$coord" -c "CREATE TABLE tracks AS SELECT id, source_id, traj, (id % 64)::int AS bucket FROM tracks_local" \
		-c "SELECT create_distributed_table('tracks', 'bucket', shard_count => 16)" \
		-c "SELECT truncate_local_data_after_distributing_table('tracks')" -c "VACUUM ANALYZE tracks" >/dev/null
fi
echo "density_citus: $(q "$coord" -c "SELECT count(*) || ' tracks, ' || sum(ST_NPoints(traj)) || ' points' FROM tracks_local"),"\
	"16 shards on 2 workers, geoacc.device = $device, $(nproc) cores, commit $(git rev-parse --short HEAD)"

box="'BOX(367000 3982000,649000 4528000)'::box2d"
best() {	# best PORT SQL: the best of $runs wall times, ms
	local b=""
	for i in $(seq "$runs"); do
		local t0 t1 ms
		t0=$(date +%s%N)
		q "$1" -c "SET geoacc.device = $device" -c "$2" >/dev/null
		t1=$(date +%s%N)
		ms=$(((t1 - t0) / 1000000))
		[ -z "$b" ] || [ "$ms" -lt "$b" ] && b=$ms
	done
	echo "$b"
}
for kernel in "'gaussian', 1" "'gaussian', 7"; do
	raster="gpu_density_raster(traj, $box, 4096, 4096, $kernel)"
	local_ms=$(best "$coord" "SELECT md5($raster) FROM tracks_local")
	citus_ms=$(best "$coord" "SELECT md5($raster) FROM tracks")
	same=$([ "$(q "$coord" -c "SET geoacc.device = $device" -c "SELECT md5($raster) FROM tracks_local")" = \
		"$(q "$coord" -c "SET geoacc.device = $device" -c "SELECT md5($raster) FROM tracks")" ] && echo yes || echo NO)
	echo "kernel $kernel: plain table $local_ms ms, Citus $citus_ms ms, the same raster: $same"
	[ "$same" = yes ] || exit 1
done

# each shard's partial state alone on its worker, as Citus asks for it (worker_partial_agg gives the state's
# text form): its time, and the size of that text
total=0
for port in "$w1" "$w2"; do
	for shard in $(q "$coord" -c "SELECT shard_name FROM citus_shards WHERE table_name = 'tracks'::regclass
			AND nodeport = $port ORDER BY 1"); do
		t0=$(date +%s%N)
		bytes=$(q "$port" -c "SET geoacc.device = $device" -c "SELECT length(pg_catalog.worker_partial_agg(
			'gpu_density_raster(geometry, box2d, integer, integer, text, integer)'::regprocedure,
			ROW(traj, $box, 4096, 4096, 'gaussian'::text, 7))::text) FROM $shard")
		t1=$(date +%s%N)
		total=$((total + (t1 - t0) / 1000000))
		echo "  $shard on $port: $(((t1 - t0) / 1000000)) ms, $bytes bytes of state"
	done
done
echo "shards one after another: $total ms"

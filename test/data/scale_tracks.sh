#!/bin/bash
# Make a benchmark table of about POINTS points from the real AIS tracks.
# Usage (from the repository root, PG* variables set, ais_tracks loaded):
#   test/data/scale_tracks.sh TABLE POINTS [SEED]
# Creates the UNLOGGED table TABLE(id bigint primary key, source_id int,
# traj geometry(LineStringM, 32618)); see scale_tracks.c for the rule.
# Loads with PARTS parallel COPY streams (default: number of CPUs, at most 8).
set -euo pipefail
table=$1
points=$2
seed=${3:-1}
parts=${PARTS:-$(nproc)}
[ "$parts" -gt 8 ] && parts=8
make -s test/data/scale_tracks
psql -X -q -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS $table;
CREATE UNLOGGED TABLE $table (id bigint, source_id int, traj geometry(LineStringM, 32618));
ALTER TABLE $table ALTER COLUMN traj SET STORAGE EXTERNAL;
SQL
points_file=$(mktemp)
trap 'rm -f "$points_file"' EXIT
psql -X -q -v ON_ERROR_STOP=1 -c "COPY (SELECT id, ST_X(g), ST_Y(g), ST_M(g)
	FROM ais_tracks, ST_DumpPoints(traj) d(path, g) ORDER BY id, path) TO STDOUT" > "$points_file"
pids=""
for ((k = 0; k < parts; k++)); do
	test/data/scale_tracks "$points" "$seed" 32618 $k "$parts" < "$points_file" \
		| psql -X -q -v ON_ERROR_STOP=1 -c "COPY $table FROM STDIN (FORMAT binary)" &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
psql -X -q -v ON_ERROR_STOP=1 -c "ALTER TABLE $table ADD PRIMARY KEY (id); ANALYZE $table;"
psql -X -At -c "SELECT format('scale_tracks: %s rows, %s points in $table', count(*), sum(ST_NPoints(traj))) FROM $table"

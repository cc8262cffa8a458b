#!/bin/bash
# Make a benchmark table of FIXES raw AIS fixes from the real ones.
# Usage (from the repository root, PG* variables set, ais_fixes loaded by
# test/data/load_ais.sql):
#   test/data/scale_fixes.sh TABLE FIXES [SEED]
# Creates the UNLOGGED table TABLE(object_id bigint, t timestamptz,
# geom geometry(Point, 32618)); see scale_fixes.c for the rule (replicas of
# the feed, shifted and jittered, each in time order across vessels).
# Loads with PARTS parallel COPY streams (default: number of CPUs, at most 8).
set -euo pipefail
table=$1
fixes=$2
seed=${3:-1}
parts=${PARTS:-$(nproc)}
[ "$parts" -gt 8 ] && parts=8
make -s test/data/scale_fixes
psql -X -q -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS $table;
CREATE UNLOGGED TABLE $table (object_id bigint, t timestamptz, geom geometry(Point, 32618));
SQL
base_file=$(mktemp)
trap 'rm -f "$base_file"' EXIT
psql -X -q -v ON_ERROR_STOP=1 -c "COPY (SELECT object_id, extract(epoch FROM t), ST_X(geom), ST_Y(geom)
	FROM ais_fixes ORDER BY t, seq) TO STDOUT" > "$base_file"
pids=""
for ((k = 0; k < parts; k++)); do
	test/data/scale_fixes "$fixes" "$seed" 32618 $k "$parts" < "$base_file" \
		| psql -X -q -v ON_ERROR_STOP=1 -c "COPY $table FROM STDIN (FORMAT binary)" &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
psql -X -q -v ON_ERROR_STOP=1 -c "ANALYZE $table;"
psql -X -At -c "SELECT format('scale_fixes: %s fixes in $table', count(*)) FROM $table"

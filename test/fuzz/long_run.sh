#!/bin/bash
# The long fuzz run: test/fuzz/fuzz.py over every function family with one seed, 100,000 cases for each
# family that costs about 10 ms a case or less, 10,000 for the costlier ones (100 minutes on one core of a
# busy two-core machine), on the CPU path unless SETTINGS says otherwise; nice'd, logged.
#
#   test/fuzz/long_run.sh [SEED]        PG* environment variables name the server; the database
#                                       FUZZ_DB (default geoacc_fuzz_long) is made afresh
#
# CASES_CHEAP and CASES_COSTLY change the two counts; SETTINGS is passed to fuzz.py --settings (for
# example "SET geoacc.device = 'gpu'"); LOG (default fuzz_long.log) gets the output.  Ends with fuzz.py's
# "fuzz: N passed, N failed" line for each group and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seed=${1:-$(python3 -c 'import random; print(random.SystemRandom().randrange(2 ** 31))')}
db=${FUZZ_DB:-geoacc_fuzz_long}
log=${LOG:-fuzz_long.log}
cheap="twed_matrix,compression_stats,raster_png,segment_join,density_raster,twed_pairs"
costly="simplify,simplify_geography,twed,twed_float32,density_state,mesh_clip,make_trajectories"

dropdb --if-exists "$db" && createdb "$db" || exit 2
{
	status=0
	echo "fuzz long run: seed $seed, $(date -u '+%Y-%m-%d %H:%M UTC'), geoacc $(psql -X -At -d "$db" \
		-c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE" -c "SELECT geoacc_version()" 2>/dev/null | tail -1)"
	nice python3 test/fuzz/fuzz.py --database "$db" --seed "$seed" --cases "${CASES_CHEAP:-100000}" \
		--functions "$cheap" --settings "${SETTINGS:-}" || status=1
	nice python3 test/fuzz/fuzz.py --database "$db" --seed "$seed" --cases "${CASES_COSTLY:-10000}" \
		--functions "$costly" --settings "${SETTINGS:-}" || status=1
	exit $status
} 2>&1 | tee "$log"
status=$?
dropdb --if-exists "$db"
exit $status

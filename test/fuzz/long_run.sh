#!/bin/bash
# The long fuzz run: test/fuzz/fuzz.py over every function family with one seed, 100,000 cases each
# (CASES), on the CPU path unless SETTINGS says otherwise; nice'd, logged.  The families run in three
# streams side by side, each about an hour and a half to two hours on a two-core machine: the cheap families
# (about 10 ms a case or less) in one, the costlier ones split over two.  Of the families the later fixes
# brought, 100,000 cases take about 80 s (ply_counts), 85 s (mesh_clip_scaled), 140 s (mesh_clip_grid),
# 210 s (segment_join_scaled), about 200 s (events: 10,000 cases took 20 s), 430 s (make_trajectories_us) and 30 minutes (hostile: its cancelled tile
# grids wait for a statement_timeout of 1 s each).
#
#   test/fuzz/long_run.sh [SEED]        PG* environment variables name the server; the database
#                                       FUZZ_DB (default geoacc_fuzz_long) is made afresh
#
# SETTINGS is passed to fuzz.py --settings (for example "SET geoacc.device = 'gpu'"); LOG (default
# fuzz_long.log) gets the output of the three streams, one after the other.  Ends with fuzz.py's
# "fuzz: N passed, N failed" line for each stream and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seed=${1:-$(python3 -c 'import random; print(random.SystemRandom().randrange(2 ** 31))')}
db=${FUZZ_DB:-geoacc_fuzz_long}
log=${LOG:-fuzz_long.log}
streams=("twed_matrix,compression_stats,raster_png,segment_join,density_raster,twed_pairs,ply_counts,mesh_clip_grid,mesh_clip_scaled,segment_join_scaled,events"
	"simplify,twed,mesh_clip,density_state,hostile"
	"simplify_geography,twed_float32,make_trajectories,make_trajectories_us")

dropdb --if-exists "$db" && createdb "$db" || exit 2
work=$(mktemp -d)
echo "fuzz long run: seed $seed, $(date -u '+%Y-%m-%d %H:%M UTC'), $(psql -X -At -d "$db" \
	-c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE" -c "SELECT geoacc_version()" 2>/dev/null | tail -1)" | tee "$log"
pids=()
for k in "${!streams[@]}"; do
	# each session's results go to a table of its own: the streams do not mix
	nice python3 test/fuzz/fuzz.py --database "$db" --seed "$seed" --cases "${CASES:-100000}" \
		--functions "${streams[$k]}" --settings "${SETTINGS:-}" > "$work/$k.log" 2>&1 &
	pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$work"/*.log | tee -a "$log"
rm -rf "$work"
dropdb --if-exists "$db"
exit $status

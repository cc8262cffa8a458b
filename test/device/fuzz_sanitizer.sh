#!/bin/bash
# The fuzz harness with its GPU calls checked by compute-sanitizer memcheck, on the GPU machine, from the
# repository root, after test/device/run.sh has built and installed geoacc (PostgreSQL from .device/ at
# /usr/lib/postgresql/15):
#
#   bash test/device/fuzz_sanitizer.sh       (CASES per family, default 200; logs in $OUT)
#
# What the core tests under the sanitizer (run.sh) do not reach, the fuzz harness does: hostile and edge
# inputs decoded by the SQL layer, then the GPU path with geoacc.device = gpu.  A server's backends are
# forked from the postmaster without an exec, and compute-sanitizer does not follow them (a server started
# under it with --target-processes all left no log of a backend that had run GPU calls).  So each batch of
# cases runs in a single-user backend (postgres --single, test/fuzz/fuzz.py --single) started by the
# sanitizer: a process of its own, whose log the sanitizer writes (%p).  The database is set up first
# through a normal server, which is then stopped.  The summary counts the logs (one per batch, at least)
# and adds up their "ERROR SUMMARY" lines; it fails on any fuzz failure, any memcheck error, or fewer logs
# than batches.
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
CASES=${CASES:-200}
port=${PORT:-5447}
data=/tmp/fuzz-sanitizer
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
SANITIZER=${SANITIZER_BIN:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
# the server and the sanitized backends run as pgrun, who may not reach $OUT: they write to $logs, copied at the end
logs=/tmp/fuzz-sanitizer-logs
mkdir -p "$OUT"
rm -rf "$logs" && mkdir -p "$logs" && chmod 777 "$logs"

[ -x "$PGBIN/postgres" ] || { echo "fuzz_sanitizer: PostgreSQL is not unpacked (run test/device/run.sh first)"; exit 1; }
[ -x "$SANITIZER" ] || { echo "fuzz_sanitizer: compute-sanitizer not found"; exit 1; }
id pgrun >/dev/null 2>&1 || useradd -m pgrun
as_pgrun() { su pgrun -c "PATH=$PGBIN:\$PATH $*"; }
[ -f "$data/postmaster.pid" ] && as_pgrun "pg_ctl -D $data -m immediate stop" >/dev/null 2>&1
rm -rf "$data" && mkdir -p "$data" && chown pgrun "$data"
as_pgrun "initdb -D $data -A trust -U postgres" >/dev/null || exit 1

# the database, the extension and the harness's functions, through a normal server
as_pgrun "pg_ctl -D $data -l $logs/fuzz_sanitizer_server.log -w start -o \"-p $port -k /tmp -c listen_addresses=''\"" \
	>/dev/null || { tail -20 "$logs/fuzz_sanitizer_server.log"; exit 1; }
export PGHOST=/tmp PGPORT=$port PGUSER=postgres
"$PGBIN/createdb" geoacc_fuzz
"$PGBIN/psql" -X -q -d geoacc_fuzz -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE" \
	-c "SET geoacc.device = gpu" -c "SELECT gpu_usable, gpu_unusable_reason FROM geoacc_status()"
PATH=$PGBIN:$PATH python3 test/fuzz/fuzz.py --database geoacc_fuzz --cases 0 > /dev/null || exit 1
as_pgrun "pg_ctl -D $data -m fast stop" >/dev/null

status=0
# the harness where that user can read it (the repository may sit in a home it cannot enter)
harness=$(mktemp -d)
cp -r test/fuzz "$harness/" && chmod -R a+rX "$harness"
# the families that reach the GPU: compression_stats never makes a CUDA call (the sanitizer then logs no
# summary, only "terminated before first instrumented API call", and exits with 255)
functions=$(python3 -c "import sys; sys.path.insert(0, 'test/fuzz'); import fuzz
print(','.join(f for f in fuzz.FUNCTIONS if f != 'compression_stats'))")
as_pgrun "timeout ${FUZZ_TIMEOUT:-1500} python3 $harness/fuzz/fuzz.py --database geoacc_fuzz --cases $CASES \
	--functions $functions \
	--settings \"SET geoacc.device = 'gpu'\" --single $data \
	--wrap '$SANITIZER --tool memcheck --leak-check full --print-limit 50 --log-file $logs/fuzz_sanitizer.%p.log'" \
	> "$OUT/fuzz_sanitizer_fuzz.log" 2>&1 || status=1
grep -E '^fuzz: |^FAIL' "$OUT/fuzz_sanitizer_fuzz.log" | tail -20
rm -rf "$harness"
cp "$logs"/* "$OUT/" 2>/dev/null

families=$(grep -c '^fuzz: .* cases, ' "$OUT/fuzz_sanitizer_fuzz.log")
batches=$((families * ((CASES + 199) / 200)))
followed=$(grep -l 'ERROR SUMMARY' "$logs"/fuzz_sanitizer.*.log 2>/dev/null | wc -l)
errors=$(grep -h 'ERROR SUMMARY' "$logs"/fuzz_sanitizer.*.log 2>/dev/null | awk '{ n += $4 } END { print n + 0 }')
echo "fuzz_sanitizer: $batches batches in single-user backends, $followed sanitizer logs; ERROR SUMMARY total: $errors errors"
grep -h -B2 -A12 'Invalid\|Leaked\|Program hit' "$logs"/fuzz_sanitizer.*.log 2>/dev/null | head -60
[ "$batches" -gt 0 ] && [ "$followed" -ge "$batches" ] \
	|| { echo "fuzz_sanitizer: FAILED: fewer sanitizer logs than batches"; status=1; }
[ "$errors" = 0 ] || { echo "fuzz_sanitizer: FAILED: memcheck reported errors"; status=1; }
[ $status = 0 ] && echo "fuzz_sanitizer: all checks held"
exit $status

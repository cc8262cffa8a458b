#!/bin/bash
# Several GPUs, on a machine with two (nvidia-h200-x2), from the repository root, with .device/ carried:
# the PostgreSQL bundle (../shared/device/pg-bundle.sh .device) and Citus (test/device/citus-bundle.sh .device).
#
#   bash test/device/multi_gpu.sh            (POINTS=100000000 by default; logs and results in $OUT)
#
# It unpacks PostgreSQL and Citus, builds and installs geoacc (CUDA_ARCHS=90; SKIP_BUILD=1 when that is
# done already), starts four servers as user pgrun with geoacc (and on the Citus nodes citus) in
# shared_preload_libraries, each with its own CUDA_VISIBLE_DEVICES:
#   both   port 5440, both GPUs visible                      (1: sessions over GPUs)
#   single port 5441, GPU 0 only                             (2: the one-GPU node)
#   coord  port 5442, GPU 0; w1 port 5443, GPU 0; w2 port 5444, GPU 1   (2: Citus, a GPU per worker)
# and checks or measures:
#   1. sessions spread over the GPUs: 8 concurrent sessions each run a GPU call; geoacc_status() gives
#      each one's GPU (both must appear, 4 each: backend slots alternate), and so does geoacc_backends()
#      from another session; nvidia-smi lists the backends' process ids on both GPUs; with
#      geoacc.gpu_devices = '1' every session is on GPU 1; geoacc.gpu_devices = '7' gives the error;
#   2. throughput, the same data (the AIS tracks scaled to POINTS points by test/data/scale_tracks.sh,
#      a bucket of 64 as the distribution key, 16 shards) on the one-GPU node (parallel workers up to
#      8) and on Citus with a GPU per worker: gpu_density_raster at 4096 x 4096 cells (gaussian, 7), and
#      gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) written into a table (on Citus a co-located
#      one); best of RUNS (3); equal results on both; the ratio (target: at least 1.8 on two GPUs);
#      and TWED (gpu_twed_pairs) and the segment join (its array form on Citus) of slices of it against
#      a reference table of query tracks;
#   3. the density raster's plan on the one-GPU node, and each shard's aggregate alone on its worker;
#   4. geoacc_backends() of every node, asked in the session of a GPU query: which backend used which GPU.
# Prints a summary; exits non-zero when a check fails.
#
# On a machine with one GPU, MG_ONE_GPU=1 puts both workers on GPU 0 and leaves out part 1 and the check
# of worker 2's GPU; MG_JOBS (default "density simplify twed join") picks the jobs of part 2; MG_SERVICE=gpu
# runs every server with the GPU service (geoacc.service; default off: a CUDA context per backend), so that
# each node's shard tasks hand their GPU work to its device processes.
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
POINTS=${POINTS:-100000000}
RUNS=${RUNS:-3}
mkdir -p "$OUT"
status=0
fail() { echo "multi_gpu: FAILED: $*"; status=1; }
PGBIN=/usr/lib/postgresql/15/bin

# ------------------------------------------------------------- software
nvidia-smi -L
one_gpu=${MG_ONE_GPU:-0}
jobs=" ${MG_JOBS:-density simplify twed join} "
[ "$one_gpu" = 1 ] || [ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] || { echo "multi_gpu: needs two GPUs"; exit 1; }
[ -f .device/citus.tar.xz ] || { echo "multi_gpu: .device/citus.tar.xz is missing (test/device/citus-bundle.sh .device, here)"; exit 1; }
if [ ! -x $PGBIN/postgres ]; then
	. .device/pg-start.sh || exit 1		# unpacks PostgreSQL and starts a server on 5432 (unused here)
fi
tar -C / -xJf .device/citus.tar.xz
export PATH=$PGBIN:$PATH PGHOST=/tmp PGUSER=postgres
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	export CUDA_ARCHS=${CUDA_ARCHS:-90} MAKEFLAGS="with_llvm=no"
	make -j16 >"$OUT/multi_gpu_build.log" 2>&1 && make install >>"$OUT/multi_gpu_build.log" 2>&1 \
		|| { tail -30 "$OUT/multi_gpu_build.log"; exit 1; }
fi
id pgrun >/dev/null 2>&1 || useradd -m pgrun

# start NAME PORT GPUS PRELOAD: a fresh server in /tmp/mg-NAME whose backends see the GPUs GPUS
start() {
	local name=$1 port=$2 gpus=$3 preload=$4 d=/tmp/mg-$1
	[ -f "$d/postmaster.pid" ] && su pgrun -c "$PGBIN/pg_ctl -D $d -m immediate stop" >/dev/null 2>&1
	rm -rf "$d" && mkdir -p "$d" && chown pgrun "$d"
	su pgrun -c "$PGBIN/initdb -D $d -A trust -U postgres" >/dev/null || return 1
	cat >>"$d/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '/tmp'
listen_addresses = '127.0.0.1'
shared_preload_libraries = '$preload'
max_connections = 300
max_prepared_transactions = 100
shared_buffers = 8GB
work_mem = 256MB
max_worker_processes = 64
max_parallel_workers = 32
max_parallel_workers_per_gather = 8
geoacc.device = gpu
geoacc.service = ${MG_SERVICE:-off}
CONF
	su pgrun -c "CUDA_VISIBLE_DEVICES=$gpus $PGBIN/pg_ctl -D $d -l /tmp/mg-$name.log -w start" >/dev/null \
		|| { tail -20 "/tmp/mg-$name.log"; return 1; }
}
q() { local port=$1; shift; psql -X -q -At -p "$port" -v ON_ERROR_STOP=1 "$@"; }

start both 5440 0,1 geoacc || exit 1
start single 5441 0 geoacc || exit 1
start coord 5442 0 citus,geoacc || exit 1
start w1 5443 0 citus,geoacc || exit 1
start w2 5444 $([ "$one_gpu" = 1 ] && echo 0 || echo 1) citus,geoacc || exit 1

# -------------------------------------------------- 1. sessions over GPUs
if [ "$one_gpu" != 1 ]; then
echo
echo "## 1. sessions over the GPUs (port 5440, both visible)"
q 5440 -c "CREATE EXTENSION geoacc CASCADE" 2>/dev/null
rm -f "$OUT"/mg_session_*.txt
for i in $(seq 8); do
	# a GPU call (a small density raster), then the session's GPU, then a pause so that all 8 overlap
	q 5440 -c "SELECT length(gpu_density_raster(ST_MakeLine(ST_MakePointM(0, 0, 1), ST_MakePointM(1, 1, 2)), \
		'BOX(0 0,2 2)'::box2d, 64, 64))" -c "SELECT pid || ' ' || gpu_device FROM geoacc_status()" \
		-c "SELECT pg_sleep(10)" > "$OUT/mg_session_$i.txt" 2>&1 &
done
sleep 6		# every session has its CUDA context by then
nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader > "$OUT/mg_nvidia_smi.txt"
nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader > "$OUT/mg_gpus.txt"
q 5440 -c "SELECT pid, gpu_device, gpu_calls FROM geoacc_backends() ORDER BY pid" > "$OUT/mg_backends.txt"
wait
grep -h -E '^[0-9]+ [0-9]+$' "$OUT"/mg_session_*.txt | sort > "$OUT/mg_sessions.txt"
cat "$OUT/mg_sessions.txt" | sed 's/^/  session pid, GPU: /'
echo "  geoacc_backends() from another session:"; sed 's/^/    /' "$OUT/mg_backends.txt"
echo "  nvidia-smi (pid, bus id, memory):"; sed 's/^/    /' "$OUT/mg_nvidia_smi.txt"
on0=$(awk '$2 == 0' "$OUT/mg_sessions.txt" | wc -l)
on1=$(awk '$2 == 1' "$OUT/mg_sessions.txt" | wc -l)
echo "  sessions on GPU 0: $on0, on GPU 1: $on1"
[ "$on0" -ge 3 ] && [ "$on1" -ge 3 ] && [ $((on0 + on1)) = 8 ] || fail "sessions did not spread over both GPUs"
# every session's pid is on the GPU it reports, as nvidia-smi sees it (when it sees the processes at all:
# in a container of its own it may not)
if [ -s "$OUT/mg_nvidia_smi.txt" ] && ! grep -q 'No running' "$OUT/mg_nvidia_smi.txt"; then
	while read -r pid gpu; do
		bus=$(awk -F', ' -v p="$pid" '$1 == p {print $2}' "$OUT/mg_nvidia_smi.txt")
		index=$(awk -F', ' -v b="$bus" '$2 == b {print $1}' "$OUT/mg_gpus.txt")
		[ "$index" = "$gpu" ] || fail "session $pid reports GPU $gpu, nvidia-smi shows it on GPU '${index}'"
	done < "$OUT/mg_sessions.txt"
else
	echo "  (nvidia-smi lists no processes here: that check is left out)"
fi
fixed=$(for i in $(seq 4); do q 5440 -c "SET geoacc.gpu_devices = '1'" \
	-c "SELECT gpu_device FROM geoacc_status()" & done; wait)
echo "  with geoacc.gpu_devices = '1': $(echo $fixed)"
[ "$(echo "$fixed" | sort -u)" = 1 ] || fail "geoacc.gpu_devices = '1' did not fix the GPU"
bad=$(q 5440 -c "SET geoacc.gpu_devices = '7'" -c "SELECT gpu_usable, gpu_unusable_reason FROM geoacc_status()" 2>&1)
echo "  with geoacc.gpu_devices = '7': $bad"
echo "$bad" | grep -q 'device 7 was asked for' || fail "geoacc.gpu_devices = '7' did not say why"
fi

# ----------------------------------------------------------- 2. throughput
echo
echo "## 2. one node with one GPU against Citus with a GPU per worker, $POINTS points"
q 5441 -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE" || fail "geoacc on 5441"
for port in 5443 5444 5442; do
	q $port -c "SET client_min_messages = warning" -c "CREATE EXTENSION citus" || fail "citus on $port"
done
q 5442 -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE" || fail "geoacc on the Citus nodes"
q 5442 -c "SELECT citus_set_coordinator_host('127.0.0.1', 5442)" -c "SELECT citus_add_node('127.0.0.1', 5443)" \
	-c "SELECT citus_add_node('127.0.0.1', 5444)" >/dev/null || fail "Citus cluster"
start_s=$SECONDS
PGPORT=5441 psql -X -q -f test/data/load_ais.sql >/dev/null
PGPORT=5441 test/data/scale_tracks.sh tracks "$POINTS" >"$OUT/mg_data.log" 2>&1 || { cat "$OUT/mg_data.log"; exit 1; }
# the distribution key: a bucket of 64 (id modulo 64); the one-GPU node partitions by the same expression
q 5442 -c "CREATE TABLE tracks (id bigint, source_id int, traj geometry(LineStringM, 32618), bucket int)" \
	-c "SELECT create_distributed_table('tracks', 'bucket', shard_count => 16)" >/dev/null
for k in $(seq 0 7); do
	q 5441 -c "COPY (SELECT id, source_id, traj, (id % 64)::int FROM tracks WHERE id % 8 = $k) TO STDOUT (FORMAT binary)" \
		| q 5442 -c "COPY tracks FROM STDIN (FORMAT binary)" &
done
wait
q 5442 -c "VACUUM ANALYZE tracks"
echo "  data: $(q 5441 -c "SELECT count(*) || ' rows, ' || sum(ST_NPoints(traj)) || ' points' FROM tracks") on both;" \
	"Citus: $(q 5442 -c "SELECT count(*) FROM tracks") rows; loaded in $((SECONDS - start_s)) s"

timed() {		# timed PORT SQL: the best of RUNS wall times of SQL, in ms
	local port=$1 sql=$2 best=""
	for i in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s%N)
		q "$port" -c "$sql" >/dev/null || { echo "failed"; return; }
		t1=$(date +%s%N)
		local ms=$(( (t1 - t0) / 1000000 ))
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
	done
	echo "$best"
}
# warm PORT SQL: the best of RUNS wall times of SQL in one session after a first run, the session's worker
# connections kept between runs (citus.max_cached_conns_per_worker; a placeholder setting on the one node),
# so that Citus's worker backends keep their CUDA contexts; on the one node the leader keeps its own, and
# the parallel workers are new processes each time, as PostgreSQL makes them
warm() {
	local port=$1 sql=$2
	{ echo "SET citus.max_cached_conns_per_worker = 16;"; echo "$sql;"
		for i in $(seq "$RUNS"); do
			echo "SELECT 'start ' || extract(epoch FROM clock_timestamp());"
			echo "$sql;"
			echo "SELECT 'end ' || extract(epoch FROM clock_timestamp());"
		done; } |
		psql -X -q -At -p "$port" -v ON_ERROR_STOP=1 2>&1 |
		awk '/^start / { t = $2 } /^end / { ms = ($2 - t) * 1000; if (best == "" || ms < best) best = ms }
			END { if (best == "") print "failed"; else printf "%d", best }'
}
density="SELECT md5(gpu_density_raster(traj, 'BOX(367000 3982000,649000 4528000)'::box2d, 4096, 4096)) FROM tracks"
# the simplified tracks written to a table (emptied before each run), next to their source on Citus
q 5441 -c "CREATE TABLE simplified (bucket int, id bigint, simplified geometry)"
q 5442 -c "CREATE TABLE simplified (bucket int, id bigint, simplified geometry)" \
	-c "SELECT create_distributed_table('simplified', 'bucket', colocate_with => 'tracks')" >/dev/null
simplify1="TRUNCATE simplified; INSERT INTO simplified
	SELECT id % 64, id, gpu_dp_simplify(traj, 5) OVER (PARTITION BY id % 64) FROM tracks"
simplify2="TRUNCATE simplified; INSERT INTO simplified
	SELECT bucket, id, gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) FROM tracks"
d1=- d2=- s1=- s2=- dw1=- dw2=- sw1=- sw2=- w1=- w2=- j1=- j2=- same_density=- same_simplify=- same_twed=- same_join=- twed_pairs=- join_segments=- join_rows=-
if [[ $jobs == *" density "* ]]; then
	d1=$(timed 5441 "$density")
	d2=$(timed 5442 "$density")
	dw1=$(warm 5441 "$density")
	dw2=$(warm 5442 "$density")
	same_density=$([ "$(q 5441 -c "$density")" = "$(q 5442 -c "$density")" ] && echo yes || echo NO)
	[ "$same_density" = yes ] || fail "density rasters differ"
fi
if [[ $jobs == *" simplify "* ]]; then
	s1=$(timed 5441 "$simplify1")
	s2=$(timed 5442 "$simplify2")
	sw1=$(warm 5441 "$simplify1")
	sw2=$(warm 5442 "$simplify2")
	digest="SELECT md5(string_agg(md5(ST_AsEWKB(simplified)::text), ',' ORDER BY id)) FROM simplified"
	same_simplify=$([ "$(q 5441 -c "$digest")" = "$(q 5442 -c "$digest")" ] && echo yes || echo NO)
	[ "$same_simplify" = yes ] || fail "simplified tracks differ"
fi
# TWED of every track of a slice (id % TWED_SLICE = 0) against 16 query tracks of a reference table, and
# the segment join of a slice (id % JOIN_SLICE = 0) against 64 query tracks within 100 m: on the one-GPU node
# the single-node forms, on Citus the forms that run on the workers (README, Scaling out); results written
for port in 5441 5442; do
	q $port -c "CREATE TABLE queries AS SELECT id, traj FROM tracks WHERE id % 997 = 3 AND ST_NPoints(traj) BETWEEN 20 AND 400 ORDER BY id LIMIT 64"
done
q 5442 -c "SELECT create_reference_table('queries')" >/dev/null
twed1="DROP TABLE IF EXISTS twed_out; CREATE TABLE twed_out AS
	SELECT q.id AS q_id, t.id AS t_id, gpu_twed_pairs(t.traj, q.traj) OVER (PARTITION BY t.id % 64) AS d
	FROM tracks t CROSS JOIN (SELECT * FROM queries ORDER BY id LIMIT 16) q WHERE t.id % ${TWED_SLICE:-8} = 0"
twed2="DROP TABLE IF EXISTS twed_out; CREATE TABLE twed_out AS
	SELECT q.id AS q_id, t.id AS t_id, gpu_twed_pairs(t.traj, q.traj) OVER (PARTITION BY t.bucket) AS d
	FROM tracks t CROSS JOIN (SELECT * FROM queries ORDER BY id LIMIT 16) q WHERE t.id % ${TWED_SLICE:-8} = 0"
join1="DROP TABLE IF EXISTS join_out; CREATE TABLE join_out AS SELECT * FROM gpu_segment_join(
	'SELECT id, traj FROM tracks WHERE id % ${JOIN_SLICE:-5} = 0', 'SELECT id, traj FROM queries', 100)"
join2="DROP TABLE IF EXISTS join_out; CREATE TABLE join_out AS SELECT j.*
	FROM (SELECT array_agg(id) AS ids, array_agg(traj) AS trajs FROM queries) q,
		(SELECT bucket, array_agg(id) AS ids, array_agg(traj) AS trajs FROM tracks WHERE id % ${JOIN_SLICE:-5} = 0 GROUP BY bucket) t,
		LATERAL gpu_segment_join(t.ids, t.trajs, q.ids, q.trajs, 100) j"
if [[ $jobs == *" twed "* ]]; then
w1=$(timed 5441 "$twed1")
w2=$(timed 5442 "$twed2")
twed_digest="SELECT count(*) || ' ' || md5(string_agg(q_id || ':' || t_id || ':' || d, ',' ORDER BY q_id, t_id)) FROM twed_out"
same_twed=$([ "$(q 5441 -c "$twed_digest")" = "$(q 5442 -c "$twed_digest")" ] && echo yes || echo NO)
twed_pairs=$(q 5441 -c "SELECT count(*) FROM twed_out")
[ "$same_twed" = yes ] || fail "TWED distances differ"
fi
if [[ $jobs == *" join "* ]]; then
j1=$(timed 5441 "$join1")
j2=$(timed 5442 "$join2")
join_digest="SELECT count(*) || ' ' || md5(string_agg(concat_ws(':', a_id, a_seg, b_id, b_seg, t_start, t_end, cpa_time, cpa_distance),
	',' ORDER BY a_id, a_seg, b_id, b_seg)) FROM join_out"
same_join=$([ "$(q 5441 -c "$join_digest")" = "$(q 5442 -c "$join_digest")" ] && echo yes || echo NO)
join_segments=$(q 5441 -c "SELECT sum(ST_NPoints(traj) - 1) FROM tracks WHERE id % ${JOIN_SLICE:-5} = 0")
join_rows=$(q 5441 -c "SELECT count(*) FROM join_out")
[ "$same_join" = yes ] || fail "segment joins differ"
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
{
	echo
	echo "| job ($POINTS points) | one node, one GPU | Citus, 2 workers $([ "$one_gpu" = 1 ] && echo "on one GPU" || echo "x 1 GPU") | speed-up | same result |"
	echo "| --- | ---: | ---: | ---: | --- |"
	echo "| gpu_density_raster 4096 x 4096, gaussian 7 | $d1 ms | $d2 ms | $(ratio "$d1" "$d2") | $same_density |"
	echo "| the same, in one session, worker connections kept | $dw1 ms | $dw2 ms | $(ratio "$dw1" "$dw2") | |"
	echo "| INSERT ... SELECT gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) | $s1 ms | $s2 ms | $(ratio "$s1" "$s2") | $same_simplify |"
	echo "| the same, in one session, worker connections kept | $sw1 ms | $sw2 ms | $(ratio "$sw1" "$sw2") | |"
	echo "| CREATE TABLE AS gpu_twed_pairs, $twed_pairs pairs (16 queries) | $w1 ms | $w2 ms | $(ratio "$w1" "$w2") | $same_twed |"
	echo "| CREATE TABLE AS gpu_segment_join, $join_segments segments x 64 queries at 100 m, $join_rows rows | $j1 ms | $j2 ms | $(ratio "$j1" "$j2") | $same_join |"
} | tee "$OUT/mg_throughput.md"

# ------------------------------------------ 3. where the time goes, and who used which GPU, per node
echo
echo "## 3. where the density raster's time goes: the one-GPU node's plan, and each shard alone on its worker"
# (Citus's EXPLAIN ANALYZE cannot wrap worker_partial_agg, whose result is a cstring: "column field_0 has
# pseudo-type cstring"; so each shard's partial aggregate, the command Citus sends, is timed by itself, one
# after another, in a fresh session (a CUDA context started), with the size of the state it hands over)
q 5441 -c "EXPLAIN (ANALYZE, VERBOSE) $density" | tee "$OUT/mg_explain_single.txt" \
	| grep -E 'Execution Time|Workers|Aggregate +\(|Gather'
q 5442 -c "SELECT nodeport, shard_name('tracks', shardid) FROM pg_dist_shard JOIN pg_dist_placement USING (shardid)
	JOIN pg_dist_node USING (groupid) WHERE logicalrelid = 'tracks'::regclass ORDER BY nodeport, shardid" \
	| while IFS='|' read -r port shard; do
		t0=$(date +%s%N)
		bytes=$(q "$port" -c "SELECT length(pg_catalog.worker_partial_agg(
			'gpu_density_raster(geometry, box2d, integer, integer)'::regprocedure,
			ROW(traj, 'BOX(367000 3982000,649000 4528000)'::box2d, 4096, 4096))::text) FROM $shard")
		echo "  $port $shard: $(( ($(date +%s%N) - t0) / 1000000 )) ms, a state of $bytes bytes of text"
	done | tee "$OUT/mg_density_shards.txt"
# a fresh coordinator session opens fresh worker backends, each starting its own CUDA context; kept
# connections (citus.max_cached_conns_per_worker) keep the backends, and their contexts, for the next query
echo "  in one coordinator session, the worker connections kept between runs:"
q 5442 -c "SET citus.max_cached_conns_per_worker = 16" -c '\timing on' -c "$density" -c "$density" -c "$density" \
	| grep -E '^Time' | sed 's/^/    /' | tee "$OUT/mg_density_warm.txt"
# geoacc_backends() lists live backends only, and Citus closes all but one cached connection per worker
# when a session ends: so ask in the same session as a GPU query, whose cached connections are still open
echo
echo "## 4. geoacc_backends() of every node, in the session that ran the density raster"
q 5442 -c "$density" -c "SELECT nodeport || ': ' || result FROM run_command_on_all_nodes(
	\$\$SELECT coalesce(string_agg(format('pid %s GPU %s: %s GPU calls %s ms, %s CPU calls', pid, gpu_device, gpu_calls,
		round(gpu_ms::numeric), cpu_calls), '; '), 'none') FROM geoacc_backends()\$\$) JOIN pg_dist_node USING (nodeid)
	ORDER BY nodeport" | tail -n +2 | tee "$OUT/mg_cluster_backends.txt"
echo "single (5441): $(q 5441 -c "$density" -c "SELECT string_agg(format('pid %s GPU %s: %s GPU calls', pid, gpu_device,
	gpu_calls), '; ') FROM geoacc_backends()" | tail -n +2)"
# w2 (5444) sees GPU 1 only, as its ordinal 0: a backend of it with GPU calls used GPU 1
[ "$one_gpu" = 1 ] || grep -Eq '^5444: pid [0-9]+ GPU 0: [1-9]' "$OUT/mg_cluster_backends.txt" \
	|| fail "no backend of worker 2 (GPU 1) made a GPU call"

for n in both single coord w1 w2; do su pgrun -c "$PGBIN/pg_ctl -D /tmp/mg-$n -m fast stop" >/dev/null 2>&1; done
echo
[ $status = 0 ] && echo "multi_gpu: all checks passed" || echo "multi_gpu: FAILED"
exit $status

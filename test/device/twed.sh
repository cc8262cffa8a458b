#!/bin/bash
# Benchmark of gpu_twed and gpu_twed_matrix, run from the repository root after geoacc is built
# (CUDA_ARCHS=90) and installed and PostgreSQL is running with PG* set (test/device/run.sh does that).
#
#   1. Core level (test/bench/twed_bench, no server): one pair of 1-D random walks of n = 2^10 .. 2^20
#      points (nu = 0.001, lambda = 1) on the GPU in float64 and float32, on the CPU twin and in a plain
#      C implementation of the recurrence, up to n = 2^15 on the CPU (larger CPU runs are skipped, not
#      extrapolated); all 179,700 pairs of the UCI synthetic control set; 10,000 x 10,000 MNIST digits
#      (28 steps in R^28, times 0..27, nu = lambda = 1) on the GPU, 300 x 300 of them on the CPU; all pairs
#      of 2,000 trajectories in UTM coordinates and epoch seconds, far apart (float32 far from the
#      origin). Cell updates per second in float64 and float32; GPU and CPU twin must agree to the bit in
#      both; float32 against float64 as a relative difference and as a fraction of the README's bound.
#   1b. float32: the core tests of float32 (the README's error bound on 2,000 random sets on the CPU
#      twin) and every TWED GPU core test (GPU = CPU twin bit for bit, float32 far from the origin and
#      the bound on the GPU's results included).
#   2. End to end in PostgreSQL: gpu_twed on single pairs, gpu_twed_matrix on the UCI set, on all pairs
#      of the real AIS tracks and one against many MNIST digits, the nearest neighbours of an AIS
#      track; the GPU path and the CPU path of the same query, and that both return the same.
#   3. Cancellation: statement_timeout = 1s on a pair of 2^20 points (about 10^12 cells).
#
# Prints markdown tables; about 5 minutes on an H200 with 16 cores.
set -euo pipefail
db=${BENCH_DB:-geoacc_bench}
export PGDATABASE=$db
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s test/bench/twed_bench test/core/geoacc_core_tests
zcat data/twed/mnist_10k.u8.gz > "$work/mnist.u8"

echo "twed benchmark: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo
echo "## twed: core level (whole core call: preparation, copies, kernels)"
echo
echo "### one pair of random walks, n = m"
echo
timeout 300 test/bench/twed_bench pairs 10 20 15 40 || echo "(failed)"
echo
echo "### all pairs of sets (nu = lambda = 1, degree 2)"
echo
timeout 120 test/bench/twed_bench uci data/twed/uci_synthetic_control.data || echo "(failed)"
echo
timeout 180 test/bench/twed_bench mnist "$work/mnist.u8" 10000 300 || echo "(failed)"
echo
timeout 180 test/bench/twed_bench far 2000 400 100 || echo "(failed)"
echo
echo "## twed: float32 core tests (the README's bound; GPU = CPU twin)"
echo
GEOACC_TWED_FLOAT32_SETS=2000 timeout 300 test/core/geoacc_core_tests twed_float32 || echo "(failed)"
timeout 300 test/core/geoacc_core_tests twed_gpu || echo "(failed)"

echo
echo "## twed: data"
dropdb --if-exists "$db" >/dev/null
createdb "$db"
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE"
psql -X -q -f test/data/load_ais.sql >/dev/null
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE uci_lines (id int, line text);
\copy uci_lines FROM PROGRAM 'cat -n data/twed/uci_synthetic_control.data'
CREATE TABLE uci AS SELECT id, regexp_split_to_array(trim(line), '\s+')::float8[] AS vals FROM uci_lines;
-- random walks of 2^k points, two per size
CREATE TABLE walks AS
SELECT k, array(SELECT sum(random() - 0.5) OVER (ORDER BY i) FROM generate_series(1, (2 ^ k)::int) i) AS a,
	array(SELECT sum(random() - 0.5) OVER (ORDER BY i) FROM generate_series(1, (2 ^ k)::int) i) AS b
FROM unnest(ARRAY[14, 16, 18, 20]) k;
CREATE TABLE mnist (id int, label int, vals float8[]);
SQL
# MNIST digits as 28 x 28 arrays of pixel values 0..255, one row per digit
od -An -v -tu1 -w785 "$work/mnist.u8" | awk '{
	printf "%d\t%d\t{", NR, $1
	for (r = 0; r < 28; r++) {
		printf "%s{", r ? "," : ""
		for (c = 0; c < 28; c++) printf "%s%s", c ? "," : "", $(2 + r * 28 + c)
		printf "}"
	}
	printf "}\n"
}' > "$work/mnist.tsv"
psql -X -q -c "\\copy mnist FROM '$work/mnist.tsv'"
psql -X -At -c "SELECT 'uci: ' || count(*) || ' series' FROM uci" \
	-c "SELECT 'mnist: ' || count(*) || ' digits' FROM mnist" \
	-c "SELECT 'ais_tracks: ' || count(*) || ' tracks, ' || sum(ST_NPoints(traj)) || ' points' FROM ais_tracks"

# run DEVICE QUERY: "result|milliseconds|core_milliseconds", core = the time geoacc_stats() counts
# inside the compute core; "failed||" on an error.  A small call first starts the device in the
# session, so CUDA start-up is not timed.
run() {
	local out
	out=$(PGOPTIONS="-c statement_timeout=120s" psql -X -q -At -v ON_ERROR_STOP=1 \
		-c "SET geoacc.device = $1" -c "SELECT gpu_twed(ARRAY[1.0, 2.0], NULL, ARRAY[3.0], NULL, 1, 1) > 0" \
		-c "SELECT geoacc_stats_reset()" -c '\timing on' -c "$2" \
		-c '\timing off' -c "SELECT coalesce(round(sum(total_ms)::numeric), 0) FROM geoacc_stats()" 2>&1) \
		|| { echo "$out" | tail -3 >&2; echo "failed||"; return 0; }
	awk '/^Time:/ {ms = $2; next} {lines[n++] = $0} END {printf "%s|%.0f|%s", lines[n - 2], ms, lines[n - 1]}' \
		<<< "$out"
}

# row LABEL CELLS QUERY [cpu]: one table row, the CPU path only when the last argument is "cpu"
row() {
	local gpu cpu gr gms gcore cr="" cms ccore same
	gpu=$(run gpu "$3")
	IFS='|' read -r gr gms gcore <<< "$gpu"
	if [ "${4:-}" = cpu ]; then
		cpu=$(run cpu "$3")
		IFS='|' read -r cr cms ccore <<< "$cpu"
		same=$([ "$gr" = "$cr" ] && echo yes || echo "NO ($gr / $cr)")
	else
		cms="skipped"; ccore="-"; same="-"
	fi
	[ "$gr" = failed ] && gms="failed"
	[ "${cr:-}" = failed ] && cms="failed"
	printf '| %s | %s | %s ms (core %s) | %s | %s ms (core %s) | %s |\n' "$1" "$2" "$gms" "$gcore" \
		"$(awk -v c="$2" -v ms="$gms" 'BEGIN { if (ms > 0 && c + 0 > 0) printf "%.3g/s", c / (ms / 1000); else print "-" }')" \
		"$cms" "$ccore" "$same"
}

echo
echo "## twed: end to end in PostgreSQL (one backend; core = time inside the compute core)"
echo
echo "| query | cells | GPU path | GPU cells/s | CPU path | same result |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
for k in 14 16 18 20; do
	cells=$(awk -v k=$k 'BEGIN { printf "%.0f", 2 ^ (2 * k) }')
	row "gpu_twed, one pair of 2^$k points" "$cells" \
		"SELECT gpu_twed(a, NULL, b, NULL, 0.001, 1)::text FROM walks WHERE k = $k" \
		"$([ $k = 14 ] && echo cpu)"
done
row "gpu_twed_matrix, UCI all 179,700 pairs" 646920000 \
	"SELECT count(*) || ' ' || sum(distance) FROM gpu_twed_matrix('SELECT id, vals FROM uci', NULL, 1, 1)" cpu
ais_cells=$(psql -X -At -c "SELECT ((sum(n)::float8 ^ 2 - sum(n::float8 ^ 2)) / 2)::bigint
	FROM (SELECT ST_NPoints(traj) AS n FROM ais_tracks) t")
row "gpu_twed_matrix, AIS all pairs of tracks" "$ais_cells" \
	"SELECT count(*) || ' ' || sum(distance) FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks', NULL, 0.001, 1)" cpu
row "gpu_twed_matrix, AIS all pairs of tracks, float32" "$ais_cells" \
	"SELECT count(*) || ' ' || sum(distance) FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks', NULL, 0.001, 1,
		float32 => true)" cpu
row "gpu_twed_matrix, MNIST 1,000 x 10,000 (10^7 rows)" 7840000000 \
	"SELECT count(*) || ' ' || sum(distance) FROM gpu_twed_matrix('SELECT id, vals FROM mnist WHERE id <= 1000',
		'SELECT id, vals FROM mnist', 1, 1)"
row "gpu_twed_matrix, MNIST 30 x 10,000" 235200000 \
	"SELECT count(*) || ' ' || sum(distance) FROM gpu_twed_matrix('SELECT id, vals FROM mnist WHERE id <= 30',
		'SELECT id, vals FROM mnist', 1, 1)" cpu
longest=$(psql -X -At -c "SELECT id FROM ais_tracks ORDER BY ST_NPoints(traj) DESC, id LIMIT 1")
row "nearest 5 AIS tracks of the longest one" - \
	"SELECT string_agg(b_id::text, ' ' ORDER BY distance, b_id) FROM (SELECT * FROM gpu_twed_matrix(
		'SELECT id, traj FROM ais_tracks WHERE id = $longest', 'SELECT id, traj FROM ais_tracks WHERE id <> $longest',
		0.001, 1) ORDER BY distance, b_id LIMIT 5) nn" cpu

echo
echo "## twed: cancellation (statement_timeout = 1s on one pair of 2^20 points)"
echo
for device in gpu cpu; do
	out=$(psql -X -q -At -c "SET geoacc.device = $device" -c "SET statement_timeout = '1s'" -c '\timing on' \
		-c "SELECT gpu_twed(a, NULL, b, NULL, 0.001, 1) FROM walks WHERE k = 20" 2>&1 || true)
	echo "- $device: $(grep -o 'ERROR: .*' <<< "$out" | head -1), after $(awk '/^Time:/ {print $2 " ms"}' <<< "$out")"
done
psql -X -At -c "SET geoacc.device = gpu" -c "SELECT '- the backend works after a cancel: ' || round(gpu_twed(a, NULL, b, NULL, 0.001, 1))
	FROM walks WHERE k = 14"

#!/bin/bash
# The targets of gpu_mesh_tileset on the GPU machine, from the repository root.  Runs after
# test/device/run.sh (geoacc built and installed, PostgreSQL running, PG* set) or on its own: without a
# server it starts the bundled one (.device/pg-start.sh) and builds and installs geoacc first.
# .device/tileset.tar.xz (test/device/tileset-bundle.sh) brings meshoptimizer; without it the baseline is
# left out.  TILESET_PARTS picks the parts (default: all three):
#
#   checks  the tileset core tests (clustering, distance and whole tilesets on the GPU against the CPU
#           twin, byte for byte; the crack and error-bound checks) and the mesh_tileset regress test with
#           geoacc.device = gpu.
#   core    the models made by `mesh_clip_bench model`: b9 at UTM coordinates and b9 in 32 x 32 copies
#           (10,418,176 triangles); per model mesh_tileset_bench: each parent level's clustering on the GPU
#           (kernels only: the target is 10^9 triangles/s or more) and on the CPU twin, the same bits; the
#           whole 5-level tileset on both devices, the same files, its stages; meshoptimizer's
#           meshopt_simplify over the same tiles (border locked), one core, with its error next to geoacc's.
#   sql     end to end in PostgreSQL: the large model as PLY to a 5-level tileset written as rows
#           (CREATE TABLE ... AS, a fresh session each), on the GPU and on the CPU (one thread, then
#           geoacc.cpu_threads = every core), the same rows required;
#           the target is 3 s or less on the GPU.  gpu_mesh_tileset's DEBUG1 lines say where the time went.
#
# TILESET_LARGE (default 32) sets the copies of b9 along x and y in the large model; TILESET_CELLS (64) the
# cells a tile.  Prints markdown; logs go to $OUT (default /tmp/geoacc-out).
#
# Its checks and sql parts first ran on an H100 on 2026-12-06 (test/device/RESULTS.md); core has not run yet.
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
parts=" ${TILESET_PARTS:-checks core sql} "
large=${TILESET_LARGE:-32}
cells=${TILESET_CELLS:-64}
big=b9x$large
db=${BENCH_DB:-geoacc_tileset_bench}
work=$(mktemp -d)
chmod 755 "$work"		# the server reads the models from here
trap 'rm -rf "$work"' EXIT
status=0
has() { [[ $parts == *" $1 "* ]]; }

command -v psql >/dev/null 2>&1 || export PATH=/usr/lib/postgresql/15/bin:$PATH
export PGHOST=${PGHOST:-/tmp} PGUSER=${PGUSER:-postgres} PGPORT=${PGPORT:-5432}
export CUDA_ARCHS=${CUDA_ARCHS:-90} MAKEFLAGS=${MAKEFLAGS:-with_llvm=no}
if ! psql -XAtc "SELECT 1" postgres >/dev/null 2>&1; then
	. .device/pg-start.sh || exit 1
fi
meshopt=""
if [ -f .device/tileset.tar.xz ]; then
	tar -C "$work" -xJf .device/tileset.tar.xz && meshopt=$work/tileset/meshopt
fi
{ make -s -j"$(nproc)" && make -s install && make -s test/core/geoacc_core_tests test/bench/mesh_clip_bench \
	&& rm -f test/bench/mesh_tileset_bench && make -s test/bench/mesh_tileset_bench MESHOPT_DIR="$meshopt"; } \
	> "$OUT/tileset_build.log" 2>&1 || { tail -30 "$OUT/tileset_build.log"; exit 1; }

echo "mesh_tileset: $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU'),"\
	"$(nproc) CPU cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), parts:$parts"

if has checks; then
	echo
	echo "## mesh_tileset: checks"
	echo
	test/core/geoacc_core_tests mesh_cluster,mesh_distance,mesh_tileset > "$OUT/tileset_core_tests.log" 2>&1 || status=1
	grep -E '^(FAIL|skip|[0-9]+ passed)' "$OUT/tileset_core_tests.log" || true
	PGOPTIONS='-c geoacc.device=gpu' make -s installcheck REGRESS="setup mesh_tileset" \
		> "$OUT/tileset_installcheck_gpu.log" 2>&1 \
		|| { status=1; cp regression.diffs "$OUT/tileset_regression.diffs" 2>/dev/null || true; }
	tail -3 "$OUT/tileset_installcheck_gpu.log"
fi

# the models: b9 at UTM coordinates, and b9 in large x large copies
test/bench/mesh_clip_bench model data/meshes/b9_mesh.off.gz 1 1 "$work/b9.ply" 583000 4507000 > /dev/null || exit 1
test/bench/mesh_clip_bench model data/meshes/b9_mesh.off.gz "$large" "$large" "$work/$big.ply" 583000 4507000 \
	> /dev/null || exit 1

if has core; then
	for m in b9 $big; do
		echo
		echo "## mesh_tileset: core, $m, 5 levels, $cells cells a tile"
		echo
		test/bench/mesh_tileset_bench "$work/$m.ply" 5 "$cells" 2> "$OUT/tileset_bench_$m.err" \
			| tee "$OUT/tileset_bench_$m.md" || status=1
	done
fi

if has sql; then
	echo
	echo "## mesh_tileset: end to end in SQL, $big as PLY, 5 levels"
	echo
	dropdb --if-exists "$db" && createdb "$db" || exit 1
	export PGDATABASE=$db
	psql -X -q -c "CREATE EXTENSION geoacc CASCADE" -c "CREATE TABLE plys (name text PRIMARY KEY, ply bytea)" || exit 1
	psql -X -q -v ON_ERROR_STOP=1 -c "INSERT INTO plys VALUES ('$big', pg_read_binary_file('$work/$big.ply'))" || exit 1
	# the CPU twin on one thread and on every core (geoacc.cpu_threads: its error measurement splits)
	echo "| device | CPU threads | run | statement ms | rows | bytes |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for config in "gpu 1" "cpu 1" "cpu $(nproc)"; do
		read -r device threads <<< "$config"
		for run in $(seq "$([ $device = cpu ] && echo "${TILESET_CPU_RUNS:-2}" || echo 2)"); do
			ms=$(psql -X -q -At -c "SET geoacc.device = $device" -c "SET geoacc.cpu_threads = $threads" \
				-c "SET client_min_messages = debug1" -c "DROP TABLE IF EXISTS tiles_$device" -c '\timing on' \
				-c "CREATE TABLE tiles_$device AS SELECT t.* FROM plys, gpu_mesh_tileset(ply, 5, 32618, $cells) t WHERE name = '$big'" \
				2> "$OUT/tileset_sql_${device}_${threads}_$run.log" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
			read -r rows bytes < <(psql -X -At -F ' ' -c "SELECT count(*), sum(length(content)) FROM tiles_$device")
			echo "| $device | $threads | $run | $ms | $rows | $bytes |"
		done
	done
	grep -h "gpu_mesh_tileset:" "$OUT"/tileset_sql_gpu_1_2.log "$OUT"/tileset_sql_cpu_*_1.log | sed 's/^/    /'
	same=$(psql -X -At -c "SELECT count(*) = (SELECT count(*) FROM tiles_cpu) AND bool_and(g.content = c.content)
		FROM tiles_gpu g JOIN tiles_cpu c USING (path)")
	echo
	echo "GPU and CPU rows the same: $same"
	[ "$same" = t ] || status=1
	# what PostgreSQL's own reading and writing cost: the PLY detoasted alone, the same rows written again (from a
	# copy kept uncompressed with STORAGE EXTERNAL, so that they are compressed again as a new tileset's are), and
	# the GPU statement with the PLY stored uncompressed and the rows compressed with lz4 (default_toast_compression)
	# in place of pglz
	psql -X -q -c "CREATE TABLE plys_plain (name text PRIMARY KEY, ply bytea)" \
		-c "ALTER TABLE plys_plain ALTER COLUMN ply SET STORAGE EXTERNAL" \
		-c "INSERT INTO plys_plain SELECT name, ply || ''::bytea FROM plys" \
		-c "CREATE TABLE tiles_plain (path text, content bytea)" \
		-c "ALTER TABLE tiles_plain ALTER COLUMN content SET STORAGE EXTERNAL" \
		-c "INSERT INTO tiles_plain SELECT path, content || ''::bytea FROM tiles_gpu" || exit 1
	echo
	echo "| what (GPU, the better of 2) | ms |"
	echo "| --- | --- |"
	best() { psql -X -q -At -c '\timing on' "$@" 2>&1 | awk '/^Time:/ {print $2}' | sort -g | head -1; }
	echo "| the PLY detoasted alone (pglz) | $(best -c "SELECT length(ply || ''::bytea) FROM plys" -c "SELECT length(ply || ''::bytea) FROM plys") |"
	echo "| the PLY detoasted alone (stored uncompressed) | $(best -c "SELECT length(ply || ''::bytea) FROM plys_plain" -c "SELECT length(ply || ''::bytea) FROM plys_plain") |"
	for compression in pglz lz4; do
		echo "| the same rows written again, $compression | $(PGOPTIONS="-c default_toast_compression=$compression" \
			best -c "CREATE TABLE w1 AS TABLE tiles_plain" -c "CREATE TABLE w2 AS TABLE tiles_plain") |"
		psql -X -q -c "DROP TABLE w1, w2"
	done
	for run in 1 2; do
		ms=$(psql -X -q -At -c "SET geoacc.device = gpu" -c "SET default_toast_compression = lz4" -c "DROP TABLE IF EXISTS tiles_lz4" \
			-c '\timing on' -c "CREATE TABLE tiles_lz4 AS SELECT t.* FROM plys_plain, gpu_mesh_tileset(ply, 5, 32618, $cells) t WHERE name = '$big'" \
			2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
		echo "| the tileset statement, PLY uncompressed, rows lz4 (run $run) | $ms |"
	done
	dropdb "$db"
fi
exit $status

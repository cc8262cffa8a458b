#!/bin/bash
# Set up (packages, build, install, throwaway cluster) and run every test:
#   1. the core tests (make check-core) and pg_regress (make installcheck,
#      which runs both; two steps here so that each reports), among them
#      the upgrade check (sql/upgrade.sql: 0.1.0 installed and updated has
#      the catalog of the current version installed directly), then
#      make installcheck-preloaded (the memory budget, with the cluster
#      restarted with geoacc in shared_preload_libraries); then
#      docs/reference.md against the installed extension
#      (scripts/check_reference.py: an entry per function, type and setting,
#      summaries equal to the COMMENT ON texts, examples that run, errors
#      that the sources raise), and the include check of the PostgreSQL
#      glue (scripts/check_includes.sh: every header a file uses included);
#   2. the fuzz harness on a short budget (GEOACC_FUZZ_CASES cases per
#      function, default 300, a fresh seed each run, printed);
#   3. the benchmark-data generator on a small size (valid trajectories, size);
#   4. where node and npm are present, the Khronos glTF validator (npm
#      gltf-validator) on GLB files written by geoacc_mesh_to_glb;
#   5. the Citus suite (scripts/citus.sh: a coordinator and two workers on
#      this machine, make installcheck-citus) when Citus is installed for
#      this PostgreSQL or its source is beside the repository
#      (../shared/citus); otherwise a line says why it was skipped;
#   6. when the build used CUDA, the same two suites again on a CPU-only build
#      (NVCC=), which must pass too; the CUDA build is installed again last.
# Exits non-zero if anything fails.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

status=0
fail() { echo "test: FAILED: $*"; status=1; }

restart_cluster() {	# restart_cluster [SERVER OPTIONS...]: the throwaway cluster again, with these options too
	as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" -l "$GEOACC_PGDATA/server.log" -w restart \
		-o "-p $GEOACC_PGPORT -k /tmp -c listen_addresses='' ${GEOACC_PG_OPTS:-} $*" >/dev/null
}

run_suites() {		# run_suites LABEL [make variables...]
	local label=$1; shift
	echo "test: make check-core ($label)"
	make -s check-core "$@" || fail "check-core ($label)"
	echo "test: make installcheck ($label)"
	make -s installcheck REGRESS_PREP= "$@" || { fail "installcheck ($label)"; head -200 regression.diffs 2>/dev/null || true; }
	echo "test: make installcheck-preloaded ($label)"
	restart_cluster -c shared_preload_libraries=geoacc
	make -s installcheck-preloaded "$@" \
		|| { fail "installcheck-preloaded ($label)"; head -200 regression.diffs 2>/dev/null || true; }
	restart_cluster
}

run_suites "$(command -v nvcc >/dev/null && echo "CUDA build" || echo "CPU-only build")"

echo "test: reference (docs/reference.md)"
python3 scripts/check_reference.py || fail "reference check"
echo "test: includes (scripts/check_includes.sh)"
scripts/check_includes.sh || fail "include check"

echo "test: fuzz harness"
dropdb --if-exists geoacc_fuzz
createdb geoacc_fuzz
PGDATABASE=geoacc_fuzz python3 test/fuzz/fuzz.py --cases "${GEOACC_FUZZ_CASES:-300}" || fail "fuzz harness"
dropdb --if-exists geoacc_fuzz

echo "test: benchmark data generator"
dropdb --if-exists geoacc_datacheck
createdb geoacc_datacheck
if PGDATABASE=geoacc_datacheck psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION geoacc CASCADE" -f test/data/load_ais.sql \
	&& PGDATABASE=geoacc_datacheck test/data/scale_tracks.sh scaled 300000 7 \
	&& PGDATABASE=geoacc_datacheck test/data/scale_fixes.sh scaled_fixes 300000 7; then
	check=$(psql -X -At -d geoacc_datacheck -c "SELECT bool_and(ST_IsValidTrajectory(traj))
		AND sum(ST_NPoints(traj)) BETWEEN 300000 AND 300000 + max(ST_NPoints(traj))
		AND count(DISTINCT source_id) = (SELECT count(*) FROM ais_tracks) FROM scaled")
	[ "$check" = t ] || fail "scaled tracks are not valid trajectories of the asked size"
	check=$(psql -X -At -d geoacc_datacheck -c "SELECT count(*) = 300000 AND count(DISTINCT object_id) > 458
		AND bool_and(ST_GeometryType(geom) = 'ST_Point' AND ST_SRID(geom) = 32618) FROM scaled_fixes")
	[ "$check" = t ] || fail "scaled fixes are not points of the asked number"
else
	fail "data generator"
fi
dropdb --if-exists geoacc_datacheck

echo "test: glTF validator on the GLB writer's output"
if command -v node >/dev/null && command -v npm >/dev/null; then
	glb_dir=$(mktemp -d)
	dropdb --if-exists geoacc_glb
	createdb geoacc_glb
	# the Khronos validator from npm (one self-contained package, unpacked, not installed)
	if (cd "$glb_dir" && npm pack --silent gltf-validator@2.0.0-dev.3.10 >/dev/null 2>&1 && tar xzf gltf-validator-*.tgz); then
		psql -X -d geoacc_glb -f test/glb/glbs.sql | while read -r name data; do
			echo "$data" | base64 -d > "$glb_dir/$name"
		done
		node test/glb/validate.js "$glb_dir/package" "$glb_dir"/*.glb || fail "glTF validator"
	else
		echo "test: npm could not fetch gltf-validator: GLB validation skipped"
	fi
	dropdb --if-exists geoacc_glb
	rm -rf "$glb_dir"
else
	echo "test: node is not installed: GLB validation skipped"
fi

echo "test: Citus suite"
scripts/citus.sh || fail "Citus suite"

if command -v nvcc >/dev/null; then
	make -s NVCC= install
	run_suites "CPU-only build" NVCC=
	make -s install
fi

[ $status = 0 ] && echo "test: all passed" || echo "test: FAILED"
exit $status

#!/bin/bash
# Set up (packages, build, install, a cluster of the tests' own) and run every test:
#   1. the core tests (make check-core) and pg_regress (make installcheck,
#      which runs both; two steps here so that each reports), among them
#      the upgrade check (sql/upgrade.sql: 0.1.0 installed and updated has
#      the catalog of the current version installed directly), then
#      make installcheck-preloaded (the memory budget, with the cluster
#      restarted with geoacc in shared_preload_libraries), make
#      installcheck-service (the suites again with every call sent to the
#      GPU service in its cpu mode: geoacc preloaded, geoacc.service = cpu,
#      geoacc.device = gpu), on that server the reference's examples that
#      need the service, a web map of a snapshot in headless Chromium
#      (test/tiles/tile_map.sh; skipped, with a line saying so, without
#      chromium or npm) and the fuzz harness's snapshot family, and make
#      check-service (the service's TAP test on
#      a server of its own: hand-off, cancel, the death of a caller and of the
#      service, 16 sessions at once, parallel workers); then
#      docs/reference.md against the installed extension
#      (scripts/check_reference.py: an entry per function, type and setting,
#      summaries equal to the COMMENT ON texts, examples that run, errors
#      that the sources raise), the pages' examples (scripts/check_pages.py,
#      on a database loaded by test/demo.sql, when that script is there), and
#      the include check of the PostgreSQL glue (scripts/check_includes.sh:
#      every header a file uses included);
#   2. the fuzz harness on a short budget (GEOACC_FUZZ_CASES cases per
#      function, default 300, a fresh seed each run, printed);
#   3. the benchmark-data generator on a small size (valid trajectories, size);
#   4. the Khronos glTF validator (npm gltf-validator, installed once into
#      GEOACC_CACHE, default ~/.cache/geoacc) on GLB files written by
#      geoacc_mesh_to_glb; skipped, with a line saying so, without node or
#      when npm cannot fetch it;
#   5. 3D Tiles: tilesets written by gpu_mesh_tileset (test/tiles/tilesets.sql)
#      against the 3D Tiles 1.1 JSON schema and the specification's tile rules
#      (test/tiles/check_tileset.py, Python's jsonschema), and their GLB files
#      through the glTF validator; then a tileset of CGAL's b9 at UTM
#      coordinates in CesiumJS in headless Chromium (test/tiles/cesium_check.sh:
#      placed where PostGIS puts it, on screen); each part skipped, with a line
#      saying so, without jsonschema, the validator, chromium or npm;
#   6. the Citus suite (scripts/citus.sh: a coordinator and two workers on
#      this machine, make installcheck-citus) when Citus is installed for
#      this PostgreSQL or its source is beside the repository
#      (../shared/citus), its nodes beside the test cluster
#      ($GEOACC_PGDATA-citus-*, unless GEOACC_CITUS_BASE says otherwise);
#      otherwise a line says why it was skipped;
#   7. when the build used CUDA, the same two suites again on a CPU-only build
#      (NVCC=), which must pass too; the CUDA build is installed again last.
# The cluster: GEOACC_PGDATA (default /tmp/geoacc-test) on GEOACC_PGPORT
# (default 5498), made afresh each run and stopped at the end (its log stays
# in it); the demo's cluster (scripts/demo.sh) is another and is not touched.
# See scripts/setup.sh.  Exits non-zero if anything fails.
set -euo pipefail
GEOACC_CLUSTER=test GEOACC_FRESH=1
# iwyu: the include check; libipc-run-perl: the service's TAP test; nodejs and npm: the glTF validator, wanted
# only where no node and npm are found (a Node.js from another source, with its own npm, conflicts with Debian's npm package)
GEOACC_EXTRA_PACKAGES="iwyu libipc-run-perl ${GEOACC_EXTRA_PACKAGES:-}"
# python3-jsonschema: the 3D Tiles schema check; chromium: the CesiumJS check
GEOACC_OPTIONAL_PACKAGES="python3-jsonschema chromium ${GEOACC_OPTIONAL_PACKAGES:-}"
command -v node >/dev/null && command -v npm >/dev/null || GEOACC_OPTIONAL_PACKAGES="nodejs npm ${GEOACC_OPTIONAL_PACKAGES:-}"
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
trap 'stop_cluster; echo "test: the test cluster is stopped (data and server.log in $GEOACC_PGDATA)"' EXIT
setup_s=$SECONDS

status=0
fail() { echo "test: FAILED: $*"; status=1; }

run_suites() {		# run_suites LABEL [make variables...]
	local label=$1; shift
	echo "test: make check-core ($label)"
	make -s check-core "$@" || fail "check-core ($label)"
	echo "test: make installcheck ($label)"
	make -s installcheck REGRESS_PREP= "$@" || { fail "installcheck ($label)"; head -200 regression.diffs 2>/dev/null || true; }
	echo "test: make installcheck-preloaded ($label)"
	start_cluster -c shared_preload_libraries=geoacc
	make -s installcheck-preloaded "$@" \
		|| { fail "installcheck-preloaded ($label)"; head -200 regression.diffs 2>/dev/null || true; }
	echo "test: make installcheck-service ($label: every call through the GPU service in its cpu mode)"
	start_cluster -c shared_preload_libraries=geoacc -c geoacc.service=cpu -c geoacc.service_memory=2GB
	make -s installcheck-service "$@" \
		|| { fail "installcheck-service ($label)"; head -200 regression.diffs 2>/dev/null || true; }
	echo "test: reference examples that need the service, and a web map of a snapshot ($label)"
	python3 scripts/check_reference.py | tail -1; [ "${PIPESTATUS[0]}" = 0 ] || fail "reference check with the service ($label)"
	test/tiles/tile_map.sh || fail "web map of a snapshot ($label)"
	dropdb --if-exists geoacc_fuzz_service && createdb geoacc_fuzz_service \
		&& PGDATABASE=geoacc_fuzz_service python3 test/fuzz/fuzz.py --functions snapshot --cases "${GEOACC_FUZZ_CASES:-300}" \
			--settings "SET geoacc.device = 'gpu'" \
		|| fail "fuzz harness, snapshots ($label)"
	dropdb --if-exists geoacc_fuzz_service
	start_cluster
	echo "test: make check-service ($label: the service's TAP test, a server of its own)"
	if [ "$(id -u)" = 0 ]; then
		make -s check-service SERVICE_AS="runuser -u geoacc --" "$@" || fail "check-service ($label)"
	else
		make -s check-service "$@" || fail "check-service ($label)"
	fi
}

run_suites "$(command -v nvcc >/dev/null && echo "CUDA build" || echo "CPU-only build")"

echo "test: reference (docs/reference.md)"
python3 scripts/check_reference.py || fail "reference check"
if [ -f scripts/check_pages.py ]; then
	echo "test: pages (scripts/check_pages.py)"
	dropdb --if-exists geoacc_pages
	createdb geoacc_pages && psql -X -q -v ON_ERROR_STOP=1 -d geoacc_pages -f test/demo.sql >/dev/null \
		&& PGDATABASE=geoacc_pages python3 scripts/check_pages.py || fail "page check"
	dropdb --if-exists geoacc_pages
fi
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
# the Khronos validator from npm (one self-contained package), installed once into the cache
validator=${GEOACC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/geoacc}/gltf-validator-2.0.0-dev.3.10
if ! command -v node >/dev/null; then
	echo "test: SKIPPED: node is not installed (Debian: apt-get install nodejs npm): GLB validation left out"
elif [ ! -f "$validator/node_modules/gltf-validator/package.json" ] && ! command -v npm >/dev/null; then
	echo "test: SKIPPED: npm is not installed (Debian: apt-get install npm): GLB validation left out"
elif [ ! -f "$validator/node_modules/gltf-validator/package.json" ] \
	&& ! { mkdir -p "$validator" && npm install --prefix "$validator" --no-audit --no-fund --loglevel=error \
		gltf-validator@2.0.0-dev.3.10 >"$validator/npm.log" 2>&1; }; then
	tail -5 "$validator/npm.log" 2>/dev/null || true
	echo "test: SKIPPED: npm could not install gltf-validator into $validator: GLB validation left out"
else
	glb_dir=$(mktemp -d)
	dropdb --if-exists geoacc_glb
	createdb geoacc_glb
	psql -X -d geoacc_glb -f test/glb/glbs.sql | while read -r name data; do
		echo "$data" | base64 -d > "$glb_dir/$name"
	done
	node test/glb/validate.js "$validator/node_modules/gltf-validator" "$glb_dir"/*.glb || fail "glTF validator"
	dropdb --if-exists geoacc_glb
	rm -rf "$glb_dir"
fi

echo "test: 3D Tiles: tilesets against the 3D Tiles 1.1 schema, their GLB files through the glTF validator"
tiles_dir=$(mktemp -d)
dropdb --if-exists geoacc_tiles
createdb geoacc_tiles
psql -X -d geoacc_tiles -f test/tiles/tilesets.sql | while read -r name path data; do
	mkdir -p "$tiles_dir/$name/$(dirname "$path")"
	echo "$data" | base64 -d > "$tiles_dir/$name/$path"
done
tiles_rc=0
python3 test/tiles/check_tileset.py "$tiles_dir"/*/tileset.json || tiles_rc=$?
# 2: no jsonschema, which the script has said
[ "$tiles_rc" -eq 0 ] || [ "$tiles_rc" -eq 2 ] || fail "3D Tiles schema"
if [ -f "$validator/node_modules/gltf-validator/package.json" ] && command -v node >/dev/null; then
	node test/glb/validate.js "$validator/node_modules/gltf-validator" $(find "$tiles_dir" -name '*.glb') \
		| grep -v ': 0 errors, 0 warnings' || true
	node test/glb/validate.js "$validator/node_modules/gltf-validator" $(find "$tiles_dir" -name '*.glb') >/dev/null \
		&& echo "test: glTF validator: $(find "$tiles_dir" -name '*.glb' | wc -l) tile GLB files, no error, no warning" \
		|| fail "glTF validator on tileset GLB files"
else
	echo "test: SKIPPED: no glTF validator (above): the tilesets' GLB files are not validated"
fi
dropdb --if-exists geoacc_tiles
rm -rf "$tiles_dir"
test/tiles/cesium_check.sh || fail "CesiumJS check of a tileset"

echo "test: Citus suite"
GEOACC_CITUS_BASE=${GEOACC_CITUS_BASE:-$GEOACC_PGDATA-citus} scripts/citus.sh || fail "Citus suite"

if command -v nvcc >/dev/null; then
	make -s NVCC= install
	run_suites "CPU-only build" NVCC=
	make -s install
fi

echo "test: $SECONDS s in all, of which $setup_s s of set-up (packages, build, cluster)"
[ $status = 0 ] && echo "test: all passed" || echo "test: FAILED"
exit $status

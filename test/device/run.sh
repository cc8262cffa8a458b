#!/bin/bash
# On the GPU machine, from the repository root, with .device/ carried (see
# test/device/README.md): build for sm_90 plus PTX, install, start
# PostgreSQL, then run
#   1. make installcheck with geoacc.device = gpu (the same expected files),
#      and the examples of docs/reference.md with it (scripts/check_reference.py),
#   2. the core tests, GPU cases included, and again under compute-sanitizer,
#   3. the device-layer measurements (test/device/device_layer.sh),
#   4. each feature script named on the command line (test/device/NAME.sh).
# Logs go to $OUT (or /tmp/geoacc-out); a summary is printed last.  SANITIZER=0 and DEVICE_LAYER=0 leave
# out steps 2's compute-sanitizer run and 3, CORE_TESTS=0 step 2 entirely; SANITIZER_FILTER picks the
# sanitizer's tests (comma-separated words).
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
summary=()
step() {		# step NAME COMMAND...: run with a time limit, log to $OUT/NAME.log, remember the outcome
	local name=$1; shift
	local start=$SECONDS
	timeout "${STEP_TIMEOUT:-300}" "$@" > "$OUT/$name.log" 2>&1
	local rc=$?
	summary+=("$(printf '%-28s %s (%ds)' "$name" "$([ $rc = 0 ] && echo ok || echo "FAILED rc=$rc")" $((SECONDS - start)))")
	return $rc
}

nvidia-smi -L
nvcc --version | tail -1
# a warm machine may still run the server of an earlier call
pkill -9 -x postgres && sleep 1
rm -f /tmp/.s.PGSQL.5432 /tmp/.s.PGSQL.5432.lock
. .device/pg-start.sh || exit 1
# postgis_raster with GDAL, where test/device/raster-bundle.sh packed it
if [ -f .device/raster.tar.xz ]; then
	tar -C /tmp -xJf .device/raster.tar.xz && cp -a /tmp/pgraster/usr/. /usr/ \
		&& cp -a /tmp/pgraster/libs/. /opt/pgbase-libs/ && ldconfig
fi
export CUDA_ARCHS=${CUDA_ARCHS:-90}
# the GPU machine has no clang: no LLVM bitcode for JIT inlining
export MAKEFLAGS="with_llvm=no"
step build sh -c 'make -j16 && make install && make test/core/geoacc_core_tests' || { tail -50 "$OUT/build.log"; exit 1; }
psql -XAt -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE" -c "SELECT geoacc_version()" \
	-c "SELECT * FROM geoacc_devices()" postgres

if psql -XAtc "SELECT count(*) = 0 FROM pg_available_extensions WHERE name = 'postgis_raster'" postgres | grep -q t; then
	REGRESS_GPU=$(make -s print-regress-gpu)
else
	REGRESS_GPU=$(make -s print-regress)
fi
step installcheck_gpu env PGOPTIONS='-c geoacc.device=gpu' make installcheck REGRESS="$REGRESS_GPU"
[ -f regression.diffs ] && cp regression.diffs "$OUT/" && tail -40 regression.diffs
step reference_gpu env PGOPTIONS='-c geoacc.device=gpu' python3 scripts/check_reference.py
[ "${CORE_TESTS:-1}" = 1 ] && step core_tests test/core/geoacc_core_tests
if [ "${CORE_TESTS:-1}" = 1 ] && [ "${SANITIZER:-1}" = 1 ]; then
	STEP_TIMEOUT=${SANITIZER_TIMEOUT:-300} step core_tests_sanitizer compute-sanitizer --tool memcheck --leak-check full \
		--error-exitcode 1 test/core/geoacc_core_tests "${SANITIZER_FILTER:-}"
fi
[ "${DEVICE_LAYER:-1}" = 1 ] && step device_layer test/device/device_layer.sh
for feature in "$@"; do
	step "$feature" "test/device/$feature.sh"
done

echo
for s in "${summary[@]}"; do echo "$s"; done
grep -h -E '^[0-9]+ passed' "$OUT/core_tests.log" "$OUT/core_tests_sanitizer.log" 2>/dev/null
grep -h -E 'ERROR SUMMARY' "$OUT/core_tests_sanitizer.log" 2>/dev/null
grep -h -E 'tests passed|failed \(ignoring|tests failed' "$OUT/installcheck_gpu.log" 2>/dev/null

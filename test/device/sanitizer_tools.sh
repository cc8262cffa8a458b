#!/bin/bash
# compute-sanitizer's racecheck, synccheck and initcheck on the GPU machine (memcheck runs in run.sh), from the
# repository root: the core tests rebuilt with -lineinfo (through NVCC_PREPEND_FLAGS, so the Makefile's flags
# stay as they are; the objects are rebuilt with -B), then each tool on one test of each kernel family.
# racecheck is slow (the banded convolution alone takes about 90 s under it): STEP_TIMEOUT (default 300 s)
# bounds each tool.  Logs go to $OUT (sanitizer_<tool>.log); exits non-zero when a tool reports an error or
# does not finish.
set -uo pipefail
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
tests=${SANITIZER_TOOLS_TESTS:-gpu_density_tiles_equal,gpu_density_convolution_in_bands,mesh_clip_gpu_edge,mesh_ply_gpu_equals,gpu_scan_matches,gpu_select_matches,segment_join_gpu_one_device,gpu_simplify_warp,twed_gpu_matches_cpu_on_mixed,gpu_make_trajectories_one_object,gpu_argmax}
NVCC_PREPEND_FLAGS=-lineinfo CUDA_ARCHS=${CUDA_ARCHS:-90} make -s -B -j"$(nproc)" test/core/geoacc_core_tests \
	> "$OUT/sanitizer_build.log" 2>&1 || { tail -20 "$OUT/sanitizer_build.log"; exit 1; }
status=0
for tool in racecheck synccheck initcheck; do
	timeout "${STEP_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 1 \
		test/core/geoacc_core_tests "$tests" > "$OUT/sanitizer_$tool.log" 2>&1
	rc=$?
	echo "$tool: rc=$rc; $(grep -E '^[0-9]+ passed' "$OUT/sanitizer_$tool.log"); $(grep -E 'SUMMARY' "$OUT/sanitizer_$tool.log" | tr -s ' =' ' ')"
	[ $rc = 0 ] || status=1
done
exit $status

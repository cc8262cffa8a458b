#!/bin/bash
# What a CUDA context costs a process that uses geoacc without the GPU service (a context per backend, the
# fallback when geoacc is not preloaded), and what the runtime's limits change: each variant is a fresh process
# (test/bench/context_cost) that starts its context through geoacc_gpu_init(), makes one small GPU call
# (TWED: its kernels are loaded then, under lazy module loading), and holds on while nvidia-smi reads its device
# memory.  RUNS (default 3) processes per variant; prints a markdown table of medians.  From the repository root
# of a GPU build (CUDA_ARCHS=90).
set -uo pipefail
runs=${RUNS:-3}
OUT=${OUT:-/tmp/geoacc-out}
mkdir -p "$OUT"
make -s test/bench/context_cost > "$OUT/context_cost_build.log" 2>&1 || { tail "$OUT/context_cost_build.log"; exit 1; }
echo "context_cost: $(date -u +%F), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1),"\
	"commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo
echo "| variant | device memory of the process (MiB) | start (ms) | first call (ms) | limits after (stack, heap, fifo bytes) |"
echo "| --- | --- | --- | --- | --- |"
variant() {	# variant NAME ENV ARGS...
	local name=$1 env=$2 mems=() inits=() calls=() limits=""
	shift 2
	for r in $(seq "$runs"); do
		local log="$OUT/context_cost_${name// /_}_$r.log"
		env $env test/bench/context_cost "$@" --pause 4 > "$log" 2>&1 &
		local pid=$!
		for _ in $(seq 100); do grep -q '^ready' "$log" && break; sleep 0.1; done
		sleep 0.5
		mems+=("$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits \
			| awk -F', ' -v p=$pid '$1 == p {print $2}')")
		wait $pid || { echo "| $name | failed: $(tail -1 "$log") | | | |"; return; }
		inits+=("$(sed -n 's/.*init_ms=\([0-9.]*\).*/\1/p' "$log")")
		calls+=("$(sed -n 's/.*call_ms=\([0-9.]*\).*/\1/p' "$log")")
		limits=$(sed -n 's/.*stack=\([0-9]*\) heap=\([0-9]*\) fifo=\([0-9]*\).*/\1, \2, \3/p' "$log")
	done
	median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
	echo "| $name | $(median "${mems[@]}") | $(median "${inits[@]}") | $(median "${calls[@]}") | $limits |"
}
variant "geoacc (lazy loading, stack 256 B), no call" ""
variant "geoacc (lazy loading, stack 256 B)" "" --call
variant "stack 1 KiB (CUDA's default)" "" --stack 1024 --call
variant "stack 64 B" "" --stack 64 --call
variant "eager module loading" "CUDA_MODULE_LOADING=EAGER" --call
variant "device heap 0" "" --heap 0 --call
variant "printf FIFO 4 KiB" "" --fifo 4096 --call

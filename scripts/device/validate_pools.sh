#!/bin/bash
# Private pools on the real allocator, and replay against check, in one command on the device
# machine (run from the repo root, carrying .device-data):
#   1. build `reservoir` and `gpu_replay_tests` with LibTorch (Release), while torch records
#      small pool traces (scripts/device/pool_workloads.py: a MemPool training loop, the same
#      with expandable segments, a CUDA graph, CUDA graphs and a MemPool released before the dump,
#      and a MemPool and a CUDA graph that keep no segment to the dump);
#   2. `reservoir replay X --backend torch --json` and `reservoir check X --json` on the
#      recorded traces, the pool traces of tests/data/traces, every shared trace and, when
#      .device-data/real.tar.xz is there, issue 28's recordings;
#   3. the GPU tests (ctest -L gpu), then the table (pool_summary.py).
# Everything goes into ONE tar, $OUT/pools.tar.gz: summary.txt, build.log, runs/ (every JSON
# and error output), rec/ (the recorded traces with their X.json).
# .device-data: scripts/device/make-device-data.sh, then (optional) issue 28's recordings:
#   tar -C /work/notes/real -cJf .device-data/real.tar.xz $(cd /work/notes/real && ls *.pickle *.json)
# DEADLINE (seconds, default 420): later steps are skipped past it. POOLS_ONLY=1: only the pool
# traces (the recorded ones and tests/data's), no shared traces and no GPU tests.
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
DEADLINE=${DEADLINE:-420}
W=/tmp/rvpools
mkdir -p "$OUT" "$W/runs" "$W/rec"
S="$W/summary.txt"
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$S"; }
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
finish() {
  python3 scripts/device/pool_summary.py "$W/runs" > "$W/table.txt" 2>&1
  cat "$W/table.txt" >> "$S"
  tail -n 4 "$W/table.txt"
  log "done"
  tar -C "$W" -czf "$OUT/pools.tar.gz" summary.txt table.txt build.log runs rec 2>/dev/null
}
trap finish EXIT

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset PYTORCH_CUDA_ALLOC_CONF
tar -C .device-data -xJf .device-data/deps.tar.xz
mkdir -p "$W/shared" && tar -C "$W/shared" -xJf .device-data/traces.tar.xz
TR="$W/shared/traces"
if [ -f .device-data/real.tar.xz ]; then mkdir -p "$W/real" && tar -C "$W/real" -xJf .device-data/real.tar.xz; fi

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  nproc; } 2>&1 | tee -a "$S"
TP=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
TD=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
log "the pool API in this LibTorch's CUDACachingAllocator.h:"
grep -n -E "inline .*(createOrIncrefPool|beginAllocateToPool|endAllocateToPool|releasePool)\(" \
  "$TD/include/c10/cuda/CUDACachingAllocator.h" 2>&1 | tee -a "$S"

log "configure and build (in the background), record the pool traces meanwhile"
( cmake -S . -B "$W/build" -G Ninja -C .device-data/deps.cmake -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$TP" -DRESERVOIR_TORCH_DIR="$TD" -DRESERVOIR_BUILD_GUI=OFF -DRESERVOIR_BUILD_BENCHMARKS=OFF \
    -DRESERVOIR_BUILD_TESTS=ON -DRESERVOIR_SHARED_TRACES="$TR" && \
  ninja -C "$W/build" -k 0 reservoir gpu_replay_tests ) > "$W/build.log" 2>&1 &
BUILD=$!
record() {  # record(tag, workload, settings)
  PYTORCH_CUDA_ALLOC_CONF="$3" timeout 120 python3 scripts/device/pool_workloads.py --out "$W/rec" \
    --workload "$2" --tag "$1" >> "$W/rec/record.log" 2>&1 || log "recording $1 FAILED (rec/record.log)"
}
record pool-mempool mempool ""
record pool-mempool-expandable mempool "expandable_segments:True"
record pool-graph graph ""
record pool-graph-released graph-released ""
record pool-graph-released-mid graph-released-mid ""
record pool-mempool-released mempool-released ""
record pool-mempool-gone mempool-gone ""
record pool-graph-gone graph-gone ""
tail -n 8 "$W/rec/record.log" | tee -a "$S"
wait $BUILD || log "build FAILED"
grep -E "error|FAILED" "$W/build.log" | head -20 | tee -a "$S"
R="$W/build/replay/cli/reservoir"
[ -x "$R" ] || { log "no reservoir binary"; exit 1; }
ls "$W/build/replay/cli/" | grep backend | tee -a "$S"

# The traces, pool ones first: "path name" per line.
LIST="$W/list.txt"
: > "$LIST"
name() { echo "$1" | sed -e "s#^$W/##" -e "s#^$PWD/tests/data/traces/#data_#" -e 's#^shared/traces/#shared_#' \
  -e 's#\.pickle\(\.zst\)\?$##' -e 's#/#_#g'; }
add() { [ -f "$1" ] && echo "$1 $(name "$1")" >> "$LIST"; }
for t in "$W"/rec/*.pickle; do add "$t"; done
for t in mempool-s7 mempool-expandable-s8 mempool-oom-expandable-s3 ring-expandable-mempool-s6 graph-pool/graph-pool \
  pools-released/pool-graph-released pools-released/pool-graph-released-mid \
  pools-released/pool-graph-released-expandable pools-released/pool-mempool-released \
  pools-released/pool-mempool-gone pools-released/pool-graph-gone; do
  add "$PWD/tests/data/traces/$t.pickle.zst"
done
if [ "${POOLS_ONLY:-0}" != 1 ]; then  # POOLS_ONLY=1: the pool traces alone, no GPU tests
  for t in $(find "$TR" -name '*.pickle' | sort); do add "$t"; done
  for t in "$W"/real/*.pickle; do add "$t"; done
fi
log "$(wc -l < "$LIST") traces"

log "check on every trace (CPU, 6 at a time, in the background)"
R="$R" RUNS="$W/runs" xargs -P 6 -L 1 bash -c \
  'timeout 120 "$R" check "$0" --json > "$RUNS/$1.check.json" 2> "$RUNS/$1.check.err"' < "$LIST" &
CHECKS=$!

log "replay --backend torch on every trace (one at a time: one GPU)"
while read -r t n; do
  if [ "$(left)" -lt 20 ]; then log "SKIPPED replay of $n (deadline)"; continue; fi
  timeout 90 "$R" replay "$t" --backend "${BACKEND:-torch}" --json > "$W/runs/$n.replay.json" 2> "$W/runs/$n.replay.err" < /dev/null \
    || echo "$n: replay rc=$?" >> "$S"
done < "$LIST"
for t in "$W"/rec/pool-mempool.pickle "$W"/rec/pool-graph.pickle; do
  [ -f "$t" ] && timeout 90 "$R" replay "$t" --backend torch > "$W/runs/$(name "$t").replay.txt" 2>&1
done
wait $CHECKS

log "GPU tests (ctest -L gpu)"
if [ "$(left)" -gt 30 ] && [ "${POOLS_ONLY:-0}" != 1 ]; then
  timeout $(( $(left) - 10 )) ctest --test-dir "$W/build" -L gpu --output-on-failure > "$W/runs/ctest_gpu.txt" 2>&1
  tail -n 15 "$W/runs/ctest_gpu.txt" | tee -a "$S"
fi

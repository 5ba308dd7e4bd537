#!/bin/bash
# The whole GPU validation in one command on the device machine (run from the repo root):
# build (LibTorch + CUDA backends), the real allocator on every shared trace, the what-if
# cleanups on resume-main, the million-event synthetic trace under several settings, the GPU
# tests. Results under $OUT: summary.txt, build.log, runs.tar.gz (every JSON and text output).
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
DEADLINE=${DEADLINE:-560}   # seconds: later steps are skipped past this
W=/tmp/rv
mkdir -p "$OUT" "$W/runs"
S="$OUT/summary.txt"
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$S"; }
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
finish() {
  tar -C "$W" -czf "$OUT/runs.tar.gz" runs 2>/dev/null
  log "done"
}
trap finish EXIT

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
unset PYTORCH_CUDA_ALLOC_CONF
tar -C .device-data -xJf .device-data/deps.tar.xz
mkdir -p "$W/shared" && tar -C "$W/shared" -xJf .device-data/traces.tar.xz
TR="$W/shared/traces"

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  cmake --version | head -1; c++ --version | head -1; nproc; } 2>&1 | tee -a "$S"

TP=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
TD=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
log "configure"; echo "building..."
cmake -S . -B "$W/build" -G Ninja -C .device-data/deps.cmake -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TP" -DRESERVOIR_TORCH_DIR="$TD" -DRESERVOIR_BUILD_GUI=OFF -DRESERVOIR_BUILD_BENCHMARKS=OFF \
  -DRESERVOIR_BUILD_TESTS=ON -DRESERVOIR_SHARED_TRACES="$TR" > "$OUT/build.log" 2>&1 || log "configure FAILED"
grep -E "Replay|Torch|CUDA" "$OUT/build.log" | head -12 | tee -a "$S"
log "build"
( time ninja -C "$W/build" -k 0 reservoir gpu_replay_tests ) >> "$OUT/build.log" 2>&1 || log "build had errors (see build.log)"
grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$S"
R="$W/build/replay/cli/reservoir"
if [ ! -x "$R" ]; then
  log "no reservoir binary: building again without the torch backend"
  cmake "$W/build" -DRESERVOIR_BUILD_TORCH_REPLAY=OFF >> "$OUT/build.log" 2>&1
  ninja -C "$W/build" -k 0 reservoir gpu_replay_tests >> "$OUT/build.log" 2>&1
  [ -x "$R" ] || { log "no reservoir binary"; exit 1; }
fi

one() {  # one(name, timeout, args...): a run, its JSON in runs/name.json, a line in the summary
  local name=$1 t=$2; shift 2
  if [ "$(left)" -lt 15 ]; then log "SKIPPED $name (deadline)"; return; fi
  [ "$t" -gt "$(left)" ] && t=$(left)
  local t1=$(date +%s%N)
  timeout "$t" "$R" replay "$@" --json > "$W/runs/$name.json" 2> "$W/runs/$name.err"
  local rc=$? t2=$(date +%s%N)
  python3 .device-data/summarize.py "$W/runs/$name.json" "$name" "$rc" "$(( (t2 - t1) / 1000000 ))" >> "$S" 2>&1 \
    || { echo "$name rc=$rc: $(tail -c 400 "$W/runs/$name.err")" >> "$S"; }
}

log "1. the real allocator on every shared trace (settings recorded, fraction from the capture JSON)"
for t in $(cd "$TR" && find . -name '*.pickle' | sort); do
  n=$(echo "$t" | sed 's#^\./##; s#/#_#g; s#\.pickle$##')
  one "trace_$n" 60 "$TR/$t" --backend torch
done
log "1b. the same with the driver-like address model (top-down placement) for the prediction"
for t in resume-tiny/fresh.rank0 resume-tiny/resume-main.rank0 resume-tiny/resume-postload.rank0 synth/default-s1 synth/roundup-s4 synth/maxsplit-s3; do
  one "driveraddr_$(echo $t | tr / _)" 60 "$TR/$t.pickle" --backend torch --address-model driver
done

log "2. the what-if cleanups on resume-main, real allocator and driver"
for set in resume-tiny resume-expandable; do
  for rank in 0 1; do
    one "whatif_${set}_r${rank}_postload" 60 "$TR/$set/resume-main.rank$rank.pickle" --backend torch,cuda \
      --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load
    one "whatif_${set}_r${rank}_prebroadcast" 60 "$TR/$set/resume-main.rank$rank.pickle" --backend torch,cuda \
      --cleanup before:broadcast_weights --probe after:state_dict_loader.py:load
  done
done
one "whatif_resume-tiny_r0_postload_driveraddr" 60 "$TR/resume-tiny/resume-main.rank0.pickle" --backend torch \
  --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load --address-model driver
timeout 60 "$R" replay "$TR/resume-expandable/resume-main.rank0.pickle" --backend torch,cuda \
  --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load > "$W/runs/whatif_text_expandable.txt" 2>&1
timeout 60 "$R" replay "$TR/resume-tiny/resume-main.rank0.pickle" --backend torch,cuda \
  --cleanup before:broadcast_weights --probe after:state_dict_loader.py:load > "$W/runs/whatif_text_tiny.txt" 2>&1

log "3. a synthetic trace of 1.1 million events, two streams, five settings: recorded by the real allocator, then replayed"
"$R" synth "$W/synth1m.pickle" --events 1100000 --seed 42 --budget 12GiB --empty-cache-every 40000 2>&1 | tee -a "$S"
synth() {  # synth(name, backends of the replay, settings args...)
  local name=$1 backends=$2; shift 2
  one "synthrec_$name" 150 "$W/synth1m.pickle" --backend torch "$@" --save-snapshot "$W/real_$name.pickle"
  [ -f "$W/real_$name.pickle" ] && one "synth_$name" 150 "$W/real_$name.pickle" --backend "$backends"
  ls -la "$W/real_$name.pickle" >> "$S" 2>&1
}
synth default torch,cuda
synth expandable torch --set expandable_segments:True
synth maxsplit torch --set max_split_size_mb:128 --fraction 0.25
synth roundup torch --set roundup_power2_divisions:4
synth gc torch --set garbage_collection_threshold:0.6 --fraction 0.15
cp "$W/real_default.json" "$W/runs/real_default.capture.json" 2>/dev/null

log "4. GPU tests (ctest -L gpu)"
if [ "$(left)" -gt 40 ]; then
  timeout $(( $(left) - 10 )) ctest --test-dir "$W/build" -L gpu --output-on-failure > "$W/runs/ctest_gpu.txt" 2>&1
  tail -n 15 "$W/runs/ctest_gpu.txt" | tee -a "$S"
fi

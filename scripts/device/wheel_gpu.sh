#!/bin/bash
# The wheel in the GPU machine's own torch environment (issue: install where PyTorch runs), and
# the GPU plugins built there. Carry .device-run/ (the cp312 wheel) and .device-data/ (deps for
# the build: scripts/device/make-device-data.sh). Writes $OUT/wheel_gpu.txt.
#  1. pip install --no-deps --target DIR the cp312 wheel into the torch environment (no compiler);
#     in one process with torch: reservoir.load(torch.cuda.memory._snapshot()).whatif(...), both
#     import orders; the capture kit (python -m reservoir.capture) on the example FSDP script, and
#     `reservoir check` on its capture; the console script.
#  2. the build with LibTorch and CUDA: the plugins, their NEEDED lists, gpu_replay_tests, and a
#     replay through each backend plugin (WHEEL_GPU_BUILD=0 skips this part).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S="$OUT/wheel_gpu.txt"
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$S"; }
run() { log "\$ $*"; "$@" >> "$S" 2>&1; log "exit $?"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset PYTHONPATH PYTORCH_CUDA_ALLOC_CONF
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 --version
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; ldd --version | head -1
  which cc gcc g++ 2>&1 | head -3; } >> "$S" 2>&1
W=/tmp/rw; rm -rf $W; mkdir -p $W
WHEEL=$(ls .device-run/reservoir-*-cp312-*.whl | head -1)
log "1. $WHEEL"
run python3 -m pip install --no-deps --no-index --target $W/site "$WHEEL"
export PYTHONPATH=$W/site
run $W/site/bin/reservoir --version
run python3 scripts/device/wheel_probe.py torch-first
run python3 scripts/device/wheel_probe.py reservoir-first
run python3 -m reservoir.capture --help
run python3 -m reservoir.capture --world-size 8 --rank 0 --out $W/cap --tag fsdp -- python/examples/train_fsdp.py --ckpt $W/ck --steps 3
ls -la $W/cap >> "$S" 2>&1
run python3 -m reservoir check $W/cap/fsdp.w8.rank0.pickle
run $W/site/bin/reservoir whatif $W/cap/fsdp.w8.rank0.pickle --cleanup "after:train_fsdp.py:step#1" --probe "after:train_fsdp.py:step#1"
unset PYTHONPATH
if [ "${WHEEL_GPU_BUILD:-1}" = 0 ]; then log "done (WHEEL_GPU_BUILD=0: no GPU build)"; exit 0; fi

log "2. the build with the GPU plugins"
tar -C .device-data -xJf .device-data/deps.tar.xz
TP=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
TD=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
cmake -S . -B $W/build -G Ninja -C .device-data/deps.cmake -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TP" \
  -DRESERVOIR_TORCH_DIR="$TD" -DRESERVOIR_BUILD_GUI=OFF -DRESERVOIR_BUILD_BENCHMARKS=OFF -DRESERVOIR_BUILD_PYTHON=OFF \
  -DRESERVOIR_BUILD_TESTS=ON > $OUT/build.log 2>&1 || log "configure FAILED"
grep -E "Replay|Torch|CUDA" $OUT/build.log | head -8 >> "$S"
( time timeout 330 ninja -C $W/build -k 0 reservoir gpu_replay_tests ) >> $OUT/build.log 2>&1 || log "build had errors (build.log)"
grep -E "error|FAILED" $OUT/build.log | head -20 >> "$S"
R=$W/build/replay/cli/reservoir
for f in $R $W/build/replay/cli/*.so; do echo "$f NEEDED: $(readelf -d $f | grep -o 'library: \[[^]]*\]' | tr '\n' ' ')" >> "$S"; done
run $W/build/tests/gpu/gpu_replay_tests --gtest_brief=1
TR=traces/samples/resume-tiny/resume-main.rank0.pickle
run $R replay $TR --backend torch,cuda --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load
run $R replay traces/samples/resume-expandable/resume-main.rank0.pickle --backend torch
log "done"

#!/bin/bash
# Issue 13's device batch: the settings probe and small reproductions of the two
# divergences (an oom inside a MemPool with expandable segments and a memory fraction; a
# ring-buffer window that starts with expandable segments mapped). Run from the worktree
# root with synth.py (from ../shared/capture) copied into .device-run/.
set -x
W=/tmp/cap13; mkdir -p $W
export PYTHONUNBUFFERED=1
python3 scripts/device/probe_2026.py $OUT/probe_2026.json 2>&1 | tail -3
S=.device-run/synth.py
for seed in 1 2 3; do
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 60 python3 $S --out $W --tag mempool-exp-f03-s$seed \
    --seed $seed --events 2500 --fraction 0.03 --mempool 2>&1 | tail -2
done
for seed in 4 5; do
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 60 python3 $S --out $W --tag ring-exp-s$seed \
    --seed $seed --events 3000 --max-entries 1500 2>&1 | tail -2
done
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 60 python3 $S --out $W --tag ring-exp-mempool-s6 \
  --seed 6 --events 3000 --max-entries 1500 --mempool 2>&1 | tail -2
ls -la $W
(cd $W && tar cf - . | xz -6 -T8 > $OUT/traces.tar.xz)
ls -la $OUT

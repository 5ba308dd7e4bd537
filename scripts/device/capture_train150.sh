#!/bin/bash
# The ~900,000-event FSDP training trace of docs/performance.md (train150): 150 steps, 24 layers,
# sequence 4096, full stacks. Run from a carried folder holding this script and
# ../shared/capture/resume.py. Leaves the pickle xz-compressed in 15 MB parts and the sidecar in $OUT.
set -x
cd "$(dirname "$0")"
W=/tmp/cap; mkdir -p $W/big
export PYTHONUNBUFFERED=1
time torchrun --nproc-per-node 1 resume.py base --out $W/big --tag train150 --steps 150 --layers 24 --seq 4096 \
  --no-save --max-entries 3000000 2>&1 | tail -5
ls -la $W/big
xz -3 -T4 -c $W/big/train150.rank0.pickle | split -b 15M - $OUT/train150.rank0.pickle.xz.part
cp $W/big/train150.rank0.json $OUT/

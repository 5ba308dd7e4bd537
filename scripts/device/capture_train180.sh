#!/bin/bash
# A training trace of more than a million events, for the sweep benchmark (docs/performance.md).
set -x
cd "$(dirname "$0")"
W=/tmp/cap; mkdir -p $W/big
export PYTHONUNBUFFERED=1
time torchrun --nproc-per-node 1 resume.py base --out $W/big --tag train180 --steps 180 --layers 24 --seq 4096 --ckpt /tmp/ck180 --max-entries 3000000 2>&1 | tail -5
ls -la $W/big
xz -6 -T8 -c $W/big/train180.rank0.pickle | split -b 15M - $OUT/train180.rank0.pickle.xz.part
cp $W/big/train180.rank0.json $OUT/
ls -la $OUT

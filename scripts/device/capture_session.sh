#!/bin/bash
# One device batch for the offload gate traces, the CUDA-graph pool reproduction and a
# ~90 MB FSDP training trace for the info benchmark. Run from a carried folder holding this
# script, offload.py, graph_pool.py and ../shared/capture/resume.py.
set -x
cd "$(dirname "$0")"
W=/tmp/cap; mkdir -p $W/small $W/big
export PYTHONUNBUFFERED=1
python3 offload.py --out $W/small --tag offload-main
python3 offload.py --out $W/small --tag offload-cleanup --cleanup
python3 graph_pool.py --out $W/small --tag graph-pool
ls -la $W/small
(cd $W && tar cf - small | xz -6 -T4 > $OUT/small.tar.xz)
time torchrun --nproc-per-node 1 resume.py base --out $W/big --tag train150 --steps 150 --layers 24 --seq 4096 --no-save --max-entries 3000000 2>&1 | tail -5
ls -la $W/big
xz -3 -T16 -c $W/big/train150.rank0.pickle | split -b 15M - $OUT/train150.rank0.pickle.xz.part
cp $W/big/train150.rank0.json $OUT/
ls -la $OUT

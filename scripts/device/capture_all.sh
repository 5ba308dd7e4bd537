#!/bin/bash
# One device batch: config probe, new conformance traces, big traces for benchmarks/GUI.
set -x
cd "$(dirname "$0")"
W=/tmp/cap; mkdir -p $W/small $W/big
export PYTHONUNBUFFERED=1
python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0), torch.utils.cmake_prefix_path)'
python3 probe_config.py $W/small/probe_config.json
# MemPool coverage, no-stacks coverage, mixed settings
python3 synth.py --out $W/small --tag mempool-s7 --seed 7 --mempool
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 synth.py --out $W/small --tag mempool-expandable-s8 --seed 8 --mempool
python3 synth.py --out $W/small --tag nostacks-s9 --seed 9 --no-stacks --events 5000
PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:200,garbage_collection_threshold:0.7,roundup_power2_divisions:[256:1,512:2,>:8]" python3 synth.py --out $W/small --tag mixed-s10 --seed 10 --fraction 0.04
PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" python3 synth.py --out $W/small --tag expandable-fraction-s11 --seed 11 --fraction 0.03
# big synthetic trace for the parser benchmark (>= 50 MB)
python3 synth.py --out $W/big --tag big-default-s12 --seed 12 --events 400000
# long training trace for the GUI bar (~900k events)
torchrun --nproc-per-node 1 resume.py base --out $W/big --tag train150 --steps 150 --layers 24 --seq 4096 --ckpt /tmp/ck150 --max-entries 3000000 2>&1 | tail -5
ls -la $W/small $W/big
(cd $W && tar cf - small | xz -6 -T4 > $OUT/small.tar.xz)
xz -6 -T8 -c $W/big/big-default-s12.pickle > $OUT/big-default-s12.pickle.xz
cp $W/big/big-default-s12.json $OUT/
xz -6 -T8 -c $W/big/train150.rank0.pickle | split -b 15M - $OUT/train150.rank0.pickle.xz.part
cp $W/big/train150.rank0.json $OUT/
ls -la $OUT

#!/bin/bash
# Real-library recordings for the what-if evidence (docs/whatif.md): each workload of
# scripts/device/real_libs.py as a source run and its re-runs with the edit made for real (a
# cleanup in the code, other settings, a memory fraction), alone and with neighbour processes on
# the GPU, through the capture kit (the sidecar X.json: settings, fraction, device total, stats).
# Writes $OUT/real.tar (<tag>.w1.rank0.pickle.xz, .json and .log of each run, log.txt). DEADLINE (s) stops new runs;
# ONLY (an extended regex on WORKLOAD-VARIANT, e.g. 'resnet-|-nb$') records only the runs it matches.
set -u
OUT=${OUT:-/tmp/out}; DEADLINE=${DEADLINE:-540}; ONLY=${ONLY:-.}
T0=$(date +%s); W=/tmp/real; mkdir -p $W
LOG=$W/log.txt
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
unset PYTORCH_CUDA_ALLOC_CONF RESERVOIR_FRACTION
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
rec() {  # rec WORKLOAD VARIANT [ENV=VALUE...]
  local w=$1 v=$2; shift 2
  [[ "$w-$v" =~ $ONLY ]] || return 0
  if [ "$(left)" -lt 30 ]; then echo "SKIPPED $w-$v (deadline)" >> $LOG; return; fi
  local t=$SECONDS
  # Fresh compiler caches per run: a re-run that found the source run's compiled kernels would
  # skip the compilation's own allocations and not be the same program.
  env TORCHINDUCTOR_CACHE_DIR=$W/cache/$w-$v/inductor TRITON_CACHE_DIR=$W/cache/$w-$v/triton "$@" timeout $(left) python3 -m reservoir.capture --out $W --tag $w-$v -- scripts/device/real_libs.py $w $v \
    > $W/$w-$v.log 2>&1
  echo "$w-$v: exit $?, $((SECONDS - t)) s, $* :: $(grep -E "^$w $v:" $W/$w-$v.log | tail -1)" >> $LOG
  grep -iE "error|Traceback" $W/$w-$v.log | grep -v -i warn | tail -3 >> $LOG
}
peak() { python3 -c "import json,sys; d=json.load(open('$W/$1.w1.rank0.json')); m=d['memory_stats']; print(m['reserved_bytes.all.peak'], m['allocated_bytes.all.peak'], d['device_total'])"; }
{ nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
  python3 -c 'import torch, transformers, peft, lightning, timm, torchvision; print("torch", torch.__version__, "transformers", transformers.__version__, "peft", peft.__version__, "lightning", lightning.__version__, "timm", timm.__version__, "torchvision", torchvision.__version__)'; } >> $LOG 2>&1
# 1. llama: the cleanup between training and generation, settings, a fraction
rec llama base
rec llama cleanup
rec llama roundup4 PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4
rec llama expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
rec llama maxsplit PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64
if [ -f $W/llama-base.w1.rank0.json ]; then
  # a fraction between peak allocated and peak reserved: cudaMalloc fails, the cache is freed and retried
  F=$(peak llama-base | awk '{printf "%.6f", ($2 + ($1 - $2) * 0.5) / $3}')
  rec llama fraction RESERVOIR_FRACTION=$F
  rec llama gcthresh RESERVOIR_FRACTION=$F PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6
fi
# 2. other libraries: source and cleanup re-run, one settings re-run
for w in lora lightning vit resnet trainer; do
  rec $w base
  rec $w cleanup
  rec $w roundup4 PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4
done
# 3. with neighbour processes on the GPU (the source, a cleanup and a settings re-run, each beside
# two processes allocating and freeing at random)
if [[ llama-base-nb =~ $ONLY || llama-cleanup-nb =~ $ONLY || llama-roundup4-nb =~ $ONLY ]]; then
python3 scripts/device/neighbour.py --seconds 200 --max-gib 30 > $W/nb1.log 2>&1 &
N1=$!
python3 scripts/device/neighbour.py --seconds 200 --max-gib 20 > $W/nb2.log 2>&1 &
N2=$!
sleep 4
rec llama base-nb
rec llama cleanup-nb
rec llama roundup4-nb PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4
kill $N1 $N2 2> /dev/null; wait $N1 $N2 2> /dev/null
fi
# 4. torch.compile with CUDA graphs (private pools)
rec compile base
rec compile cleanup
rec compile roundup4 PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4
echo "total $(( $(date +%s) - T0 )) s" >> $LOG
# One archive: what comes back from the device machine is limited in files, not only in bytes.
for f in $W/*.pickle; do xz -6 -T16 -c "$f" > "$f.xz"; done
ls -la $W >> $LOG
(cd $W && tar -cf $OUT/real.tar *.json *.log *.pickle.xz)
cat $LOG

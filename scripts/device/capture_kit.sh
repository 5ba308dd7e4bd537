#!/bin/bash
# The capture kit on the GPU machine (docs/capture.md): resume.py (../shared/capture, carried in
# .device-run/) recorded as rank 0 of an 8- and a 64-rank job, checkpoint save and load
# included, the kit's example script, and one small capture for tests/data/traces/capture.
# Run from the repository root; writes xz'd captures and a log under $OUT.
# Usage: scripts/device/capture_kit.sh [probe|scale|example|small|all]...
set -u
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
W=/tmp/kit; mkdir -p $W/own $OUT/kit
RESUME=$PWD/.device-run/resume.py
SCALE="--layers 8 --dim 1024 --heads 8 --vocab 16000 --seq 4096 --batch 2"
kit() {  # kit WORLD TAG PARAMS... -- SCRIPT ARGS
  local world=$1 tag=$2; shift 2
  local t0=$SECONDS
  python3 -m reservoir.capture --world-size $world --rank 0 --out $W/kit --tag $tag "$@" > $W/$tag.log 2>&1
  echo "== $tag: exit $?, $((SECONDS - t0)) s"; grep -v -i warn $W/$tag.log | tail -12
}
probe() { python3 scripts/device/capture_kit_probe.py 2>&1 | tail -20; }
scale() {
  for world in 8 64; do
    kit $world resume-w$world-base --param world=$world --param mode=base -- \
      $RESUME base --out $W/own --tag w$world-base --ckpt $W/ck$world $SCALE
    kit $world resume-w$world-main --param world=$world --param mode=resume -- \
      $RESUME resume --out $W/own --tag w$world-main --ckpt $W/ck$world $SCALE
  done
}
example() {
  kit 16 train-fsdp-w16-base -- python/examples/train_fsdp.py --ckpt $W/ex16
  kit 16 train-fsdp-w16-resume -- python/examples/train_fsdp.py --ckpt $W/ex16 --resume
}
small() {
  local tiny="--layers 2 --dim 256 --heads 4 --vocab 4096 --seq 512 --batch 1"
  kit 8 tiny-w8-base -- $RESUME base --out $W/own --tag tiny-base --ckpt $W/cktiny $tiny
  kit 8 tiny-w8-resume --param layers=2 --param dim=256 --param seq=512 -- \
    $RESUME resume --out $W/own --tag tiny-resume --ckpt $W/cktiny $tiny
}
oom() {
  python3 scripts/device/capture_kit_oom.py $W/kit/oom-caught 2>&1 | grep -v -i warn | tail -5
  kit 1 oom-uncaught -- scripts/device/capture_kit_oom.py --uncaught
}
for what in "${@:-all}"; do
  if [ "$what" = all ]; then probe; scale; example; small; oom; else $what; fi
done
ls -la $W/kit
cp $W/kit/*.json $OUT/kit/ 2>/dev/null; cp $W/own/*.json $OUT/kit/ 2>/dev/null
for f in $W/kit/*.pickle; do xz -6 -T16 -c "$f" > $OUT/kit/$(basename "$f").xz; done
ls -la $OUT/kit
